"""Measuring with JAX (no IPython, matplotlib or ipywidgets here)."""
