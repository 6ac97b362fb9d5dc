"""Pydantic models and the one loader of each user file format."""
