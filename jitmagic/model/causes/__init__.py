"""The records of "why is my compile slow", and :mod:`.cause`, which ranks every cause."""
