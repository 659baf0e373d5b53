"""The records of "why is my compile slow": each cause of a slow first call beyond nesting
that a comparison can measure, and :mod:`.cause`, which ranks every measured cause."""
