"""agentopt.evaluators."""
