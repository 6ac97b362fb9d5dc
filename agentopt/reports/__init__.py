"""agentopt.reports."""
