"""The scripted benchmark of `bench/optimizer_efficiency.py` and its `dspy.GEPA` peer run."""
