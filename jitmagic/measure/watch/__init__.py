"""Watching the user's code run as written: every trace, lowering and compile JAX makes,
each with JAX's own reason and seconds, into a :class:`~jitmagic.model.ledger.Ledger`."""
