"""Measuring with JAX: stages, variants, the interleaved runner and the features built on it.

No IPython, matplotlib or ipywidgets here.
"""
