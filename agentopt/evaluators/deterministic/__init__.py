"""Evaluators that need no model: string, regex, citation, schema and run-metric checks,
plus embedding similarity (a local model, no judge)."""
