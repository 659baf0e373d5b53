"""The command's exit statuses, which its launcher (``--processes``) reads too; ``EXIT_CODES`` in
:mod:`~jitmagic.frontends.command` and docs/report-format.md list them for users."""

from __future__ import annotations

import signal

#: Measured, and every report written.
MEASURED = 0
#: Your code raised (or exited), or (several processes) one fell out of step or ended early.
RAISED = 1
#: Usage: bad options or variables, reports naming one file, a file not cell-shaped.
USAGE = 2
#: ``jitmagic diff`` with a gate: NEW failed it.
REGRESSED = 1
#: A report cannot be written (``--save``, ``--html``): checked before measuring.
CANNOT_WRITE = 3
#: Stopped early (Ctrl-C once, ``--timeout``): what it measured is shown, marked PARTIAL.
PARTIAL = 4
#: Abandoned by Ctrl-C (128 + SIGINT, as shells use).
INTERRUPTED = 128 + signal.SIGINT
#: What the command says of a Ctrl-C before it could handle one (its modules loading).
STARTING = "interrupted by Ctrl-C as it started; nothing was run"
#: The statuses of a process that ended well: measured, whole or in part.
ENDED_WELL = (MEASURED, PARTIAL)


def killed_by(number: int) -> int:
    return 128 + number
