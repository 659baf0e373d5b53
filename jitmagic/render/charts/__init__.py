"""Charts of a result, built on matplotlib's ``Figure`` (no pyplot state)."""
