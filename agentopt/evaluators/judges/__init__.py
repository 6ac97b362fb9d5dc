"""LLM-as-judge evaluators: fenced prompts from `templates/judges/`, structured output,
lenient parsing with re-asks, errors instead of guessed scores."""
