"""agentopt.registry."""
