"""``python -m jitmagic``: the command-line front end (:mod:`jitmagic.frontends.command`)."""

from .frontends.command import entry

if __name__ == "__main__":
    entry()
