"""``python -m jitmagic``: the command-line front end (:mod:`jitmagic.frontends.command`).
A Ctrl-C while its modules load ends it with one line and 130, as one later does."""

import sys

from .frontends.statuses import INTERRUPTED, STARTING

if __name__ == "__main__":
    try:
        from .frontends.command import entry
    except KeyboardInterrupt:
        print(f"jitmagic: {STARTING}", file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None
    entry()
