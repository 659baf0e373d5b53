"""How ``jax.jit`` sees a call: which values are arrays, which arguments are traced and
which static."""
