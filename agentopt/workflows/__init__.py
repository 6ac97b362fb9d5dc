"""agentopt.workflows."""
