"""The parts measured after flat against nested, one module each, as the table of parts
(:data:`jitmagic.model.parts.PARTS`) names them, beside :mod:`.run`, which runs them in
the table's order: orderings and their batches (``--vmap``), attribution and advice,
the big constants passed as arguments, the second start (``--cache``), XLA's passes
(``--xla``, read from the profile by :mod:`.xplane`) and XLA's effort (``--effort``).
Mirrors ``model/causes/`` and ``render/causes/``, the records and sections of the same
parts."""
