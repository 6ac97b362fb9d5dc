"""agentopt.models."""
