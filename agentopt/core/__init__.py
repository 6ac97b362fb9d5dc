"""agentopt.core."""
