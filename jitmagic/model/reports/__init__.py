"""Whole reports: saving, loading and diffing (:mod:`.storage`), JAX releases (:mod:`.releases`)."""
