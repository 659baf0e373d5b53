"""What ``jitmagic-watch.pth`` runs at every Python start where ``JITMAGIC_WATCH`` is set.

Standard library only, installed beside the ``.pth`` (a data file of the wheel, copied
by an editable install too), so that it works where jitmagic itself cannot be imported
(an editable checkout moved or deleted) and costs next to nothing in a process that never
imports JAX (pip): it marks the first process (:data:`TOP`), notes the folder the
program started in, and loads the watch (:mod:`jitmagic.frontends.watch.hook`) only once
the program has imported ``jax``. Where jitmagic cannot be imported it says so in one
line at start; a program that goes on to import JAX then ends with status 2 and the
reason, at exit: it must not pass a gate it was given that was never applied.
"""

import atexit
import importlib.abc
import importlib.util
import os
import sys

VARIABLE, TOP = "JITMAGIC_WATCH", "JITMAGIC_WATCH_TOP"
#: The folder the program started in: ``save=ledger.json`` is read against it.
START_DIR = os.getcwd()
#: How a program ends whose watch was asked and could not be applied (a usage error).
NOT_APPLIED = 2
#: What to do where jitmagic cannot be imported.
FIX = ("reinstall jitmagic (pip install jitmagic, or pip install -e CHECKOUT where the "
       "checkout now is), or unset JITMAGIC_WATCH")


def say(message):
    """One line on stderr naming the variable (a stderr gone changes nothing)."""
    try:
        sys.stderr.write(f"jitmagic: {VARIABLE}={os.environ.get(VARIABLE, '')!r}: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def end(status):
    """End the process with ``status`` from an exit handler, through the interpreter's
    own shutdown as ``sys.exit`` would (an exit handler's ``sys.exit`` is ignored):
    CPython's ``Py_Exit``, the other exit handlers cleared; ``os._exit`` elsewhere."""
    atexit._clear()
    try:
        import ctypes

        ctypes.pythonapi.Py_Exit(ctypes.c_int(status))
    except Exception:  # no CPython API: end at once
        pass
    os._exit(status)


def fail_at_exit(why, status=NOT_APPLIED):
    """At exit, a program that imported JAX ends with ``status``, in one line saying why
    (what to write instead); one that never did (pip) is left alone."""
    atexit.register(_not_applied, why, status)


def _not_applied(why, status):
    if "jax" in sys.modules:
        say(f"the watch (and any gate) asked for could not be applied: {why}")
        end(status)


def _watch():
    """Load the watch (JAX has just been imported): it starts at once."""
    try:
        import jitmagic.frontends.watch.hook  # noqa: F401
    except Exception as exc:  # a broken install: the program runs on, and fails at exit
        why = f"jitmagic cannot be imported ({type(exc).__name__}: {exc}): {FIX}"
        say(f"{why}; the program runs unwatched, and ends with status {NOT_APPLIED}")
        fail_at_exit(why)


class AfterJax:
    """First on ``sys.meta_path`` until ``jax`` is found: its loader then runs ``then``
    (:func:`_watch`) once ``jax`` has run (``jax``'s own ``__loader__`` is kept)."""

    def __init__(self, then=None):
        self.then = then or _watch

    def find_spec(self, name, path=None, target=None):
        if name != "jax":
            return None
        if self in sys.meta_path:  # another thread's import of jax may have found it
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _Then(spec.loader, self.then)
        return spec


class _Then(importlib.abc.Loader):
    def __init__(self, loader, then):
        self.loader, self.then = loader, then

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.then()


_BEGUN: list[bool] = []


def begin():
    """Mark the first process, then watch once ``jax`` is imported (now, where it is).
    Once a process: ``site`` reads a folder twice where ``lib64`` links to ``lib``."""
    if _BEGUN:
        return
    _BEGUN.append(True)
    os.environ.setdefault(TOP, str(os.getpid()))
    if importlib.util.find_spec("jitmagic") is None:
        why = ("jitmagic cannot be imported (no module named 'jitmagic': an editable "
               f"checkout moved or deleted?): {FIX}")
        say(f"{why}; a program that imports JAX runs unwatched, and ends with status "
            f"{NOT_APPLIED}")
        fail_at_exit(why)
    elif "jax" in sys.modules:
        _watch()
    else:
        sys.meta_path.insert(0, AfterJax())
