"""The records of "why is my compile slow": each cause of a slow first call beyond nesting
that a comparison can measure (big constants passed as arguments, XLA's passes, a second
start with a warm persistent cache), and :mod:`.why`, which ranks every measured cause."""
