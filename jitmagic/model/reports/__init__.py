"""Whole reports, at the top of the records: saving and loading every kind, and the one
door to a diff of two of them (:mod:`.storage`); several JAX releases (:mod:`.releases`)."""
