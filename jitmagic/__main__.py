"""``python -m jitmagic``: the command-line front end (:mod:`jitmagic.frontends.command`)."""

from .frontends.command import main

if __name__ == "__main__":
    raise SystemExit(main())
