"""agentopt.cli."""
