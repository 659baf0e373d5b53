"""The command's exit statuses, which its launcher (``--processes``) reads too.

Every status the front ends return is named here (``EXIT_CODES`` in
:mod:`~jitmagic.frontends.command` and docs/report-format.md list them for users).
"""

from __future__ import annotations

import signal

#: Measured, and every report written.
MEASURED = 0
#: Your code raised (or called ``sys.exit``) before or while it was measured; with
#: several processes also one that fell out of step (another failed or hung, the message
#: names it) or ended before it had measured.
RAISED = 1
#: Usage: bad options or environment variables, reports naming one file, a file that does
#: not compile or is not a cell-shaped script.
USAGE = 2
#: ``jitmagic diff`` with a gate: NEW failed it (a stage slower, a figure larger, or
#: nothing measured).
REGRESSED = 1
#: A report cannot be written (``--save``, ``--html``): checked before measuring.
CANNOT_WRITE = 3
#: A measurement that stopped early (Ctrl-C once, ``--timeout``): what it measured is
#: shown and saved, marked PARTIAL, and a CI job can tell it from a whole one.
PARTIAL = 4
#: A measurement abandoned by Ctrl-C (128 + SIGINT, as shells use).
INTERRUPTED = 128 + signal.SIGINT
#: What the command says of a Ctrl-C before it could handle one (its modules loading).
STARTING = "interrupted by Ctrl-C as it started; nothing was run"
#: The statuses of a process that ended well: measured, whole or in part.
ENDED_WELL = (MEASURED, PARTIAL)


def killed_by(number: int) -> int:
    """The status a shell gives a process killed by signal ``number``: 128 + it."""
    return 128 + number
