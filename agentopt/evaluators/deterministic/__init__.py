"""Evaluators that need no model: string, regex, citation, schema, retrieval and run-metric
checks, plus embedding similarity (a local model, no judge). RetrievalResult asks an
entailment judge only for items it cannot find verbatim, and only when a judge is set."""
