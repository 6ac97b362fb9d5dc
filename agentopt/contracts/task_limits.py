"""The task model's limits, apart from the model: what a loader checks a record against
without importing pydantic (`eval validate` of a task file builds no model, issue 37)."""

from __future__ import annotations

MAX_TURNS = 20
"""A task has at most this many turns, scripted or played by a simulated user (files.md §4)."""
