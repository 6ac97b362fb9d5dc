"""agentopt.models.providers."""
