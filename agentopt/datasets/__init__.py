"""agentopt.datasets."""
