"""The command's exit statuses that its launcher (``--processes``) reads too."""

from __future__ import annotations

import signal

#: A measurement that stopped early (Ctrl-C once, ``--timeout``): what it measured is
#: shown and saved, marked PARTIAL, and a CI job can tell it from a whole one.
PARTIAL = 4
#: A measurement abandoned by Ctrl-C (128 + SIGINT, as shells use).
INTERRUPTED = 128 + signal.SIGINT
#: The statuses of a process that ended well: measured, whole or in part.
ENDED_WELL = (0, PARTIAL)
