"""Watching the user's code run as written (``%%jitwatch``, ``jitmagic.watch``): every
trace, lowering and compile JAX makes meanwhile, each with JAX's own reason and seconds.

:mod:`.reasons` reads JAX's cache-miss explanations into
:class:`~jitmagic.model.ledger.compiles.Reason` records; :mod:`.recorder` listens (JAX's
``jax_explain_cache_misses`` records and its ``jax.monitoring`` compile events) and puts
everything it changed back; the result is a :class:`~jitmagic.model.ledger.Ledger`.
"""
