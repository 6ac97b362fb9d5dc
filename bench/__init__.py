"""Performance measurements of agentopt (`python -m bench`). Numbers, not timed tests."""
