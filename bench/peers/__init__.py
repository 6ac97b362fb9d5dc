"""agentopt beside promptfoo and Inspect AI on one dataset (`python -m bench.peers`)."""
