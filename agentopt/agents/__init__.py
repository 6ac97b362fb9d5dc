"""agentopt.agents."""
