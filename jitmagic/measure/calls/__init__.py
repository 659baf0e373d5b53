"""How ``jax.jit`` sees a call: which arguments are traced and which static."""
