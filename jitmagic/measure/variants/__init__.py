"""Flat and nested variants of one entry: the entry as ``jax.jit`` sees it, the plan,
the jit each helper gets, the nesting at the function object, the untimed check that a
nested program runs, a variant as a row of the sampler, and the jit calls that say which
helpers its program really nests."""
