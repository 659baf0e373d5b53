"""What a result says when Ctrl-C came while jitmagic put back what the cell changed
(:data:`HELD`). The hold itself is :class:`~jitmagic.interrupts.CtrlCHeld`, the one
mechanism every hold uses."""

from __future__ import annotations

#: The warning of a result whose side effects were put back as Ctrl-C came.
HELD = ("Ctrl-C came while jitmagic put back what the cell changed: it waited until "
        "everything was put back (the measurement had finished, and is whole)")
