"""Taking samples: the interleaved runner, its rounds, the timed stages, JAX's clock,
the conditions every interval runs under, stops, progress, and the structure, outputs
and shardings read from each run. Knows nothing of helpers or variants."""
