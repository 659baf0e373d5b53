"""The two kinds of failure a user sees, and how their own code's errors are shown."""

from __future__ import annotations

import builtins
import difflib
import re
import sys
import traceback
from collections.abc import Iterable

from .usercode import user_file


class InputError(ValueError):
    """Bad input to jitmagic (cell shape, entry, options); the message says what to write."""


class UserCodeError(RuntimeError):
    """The user's own code raised; ``str()`` is their traceback lines, not jitmagic's."""


class RaisedElsewhere(Exception):
    """The user's exception as another process showed it (a fresh child that took a cold
    sample): :func:`innermost_function` and :func:`user_traceback` there, which this
    process shows as its own."""

    def __init__(self, function: str | None, shown: str):
        super().__init__(shown)
        self.function, self.shown = function, shown


def user_traceback(exc: BaseException, nest_hint: bool = True) -> str:
    """``exc`` with only the user's frames, and a hint where one fits."""
    if isinstance(exc, RaisedElsewhere):
        return exc.shown
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if user_file(f.filename)]
    lines = traceback.format_list(frames)
    head = "Traceback (your code):\n" if frames else ""
    said = "".join(traceback.format_exception_only(type(exc), exc))
    for note in getattr(exc, "__notes__", ()):  # JAX's on the frames it hid: moot here
        said = said.replace(f"{note}\n", "") if "JAX_TRACEBACK_FILTERING" in note else said
    text = head + "".join(lines) + _yours_only(said)
    hint = _hint(exc, nest_hint)
    return text + (f"\nHint: {hint}" if hint else "")


#: A frame of a traceback as text: Python's (``  File "x.py", line 3, in f``), written into
#: an exception's message (JAX's for a host callback), or ``faulthandler``'s (no comma).
_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line \d+')


def user_frame(line: str) -> bool | None:
    """Whether a line of a traceback's text is a frame of the user's (None: no frame)."""
    frame = _FRAME.match(line)
    return None if frame is None else user_file(frame["file"])


def _yours_only(message: str) -> str:
    """``message`` without the frames (and their code lines) of a traceback written into it
    that are not the user's: a callback's error through JAX names every frame above it."""
    kept, dropping = [], False
    for line in message.splitlines(keepends=True):
        yours = user_frame(line)
        if yours is not None:
            dropping = not yours
        elif not line.startswith("    "):
            dropping = False
        if not dropping:
            kept.append(line)
    return "".join(kept)


def did_you_mean(name: str, known: Iterable[str]) -> str | None:
    """``did you mean `model`?`` for a misspelt ``name`` among ``known``, or None."""
    close = difflib.get_close_matches(name, [k for k in known if not k.startswith("_")],
                                      n=1, cutoff=0.75)
    return f"did you mean `{close[0]}`?" if close else None


def _misspelt(exc: NameError) -> str | None:
    """For a ``NameError``, the close names the innermost of the user's frames could see."""
    name = getattr(exc, "name", None)
    seen = [f for f, _ in traceback.walk_tb(exc.__traceback__) if user_file(f.f_code.co_filename)]
    if not name or not seen:
        return None
    return did_you_mean(name, {*seen[-1].f_locals, *seen[-1].f_globals, *dir(builtins)})


def innermost_function(exc: BaseException) -> str | None:
    """The name of the user's function in which ``exc`` was raised."""
    if isinstance(exc, RaisedElsewhere):
        return exc.function
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if user_file(f.filename)]
    return frames[-1].name if frames else None


def _hint(exc: BaseException, nest_hint: bool) -> str | None:
    if isinstance(exc, NameError):
        return _misspelt(exc)
    # looked up, not imported: a script's first lines may set what jax reads
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    if isinstance(exc, jax.errors.ConcretizationTypeError | jax.errors.TracerBoolConversionError
                  | jax.errors.TracerIntegerConversionError):
        nest = ", or leave that helper out with `--nest`" if nest_hint else ""
        return ("a helper uses the Python value of a traced argument. Pass that argument as a "
                "Python value (it is then made static), or mark it static in your own "
                f"`jax.jit(..., static_argnums=...)`{nest}.")
    return None


# A ``sys.exit`` in the user's code, said for each moment it can come.

def exit_before_call(code: object, file: bool) -> str:
    """A script's (``file``) or a cell's ``sys.exit(code)`` before its call to measure (argparse's
    ``--help`` exits: a script's own arguments go after ``--``)."""
    if file:
        return (f"your script exited (sys.exit({code!r})) before the call to measure: "
                "nothing was measured (script arguments go after `--`, e.g. "
                "`python -m jitmagic FILE.py -- --steps 4`)")
    return (f"your code called sys.exit({code!r}) before its final call: end the cell "
            "with the call to measure instead")


def exit_while_measured(exc: SystemExit) -> str:
    """The measured code's ``sys.exit``, naming the user's function it came from."""
    where = innermost_function(exc)
    who = f"your function `{where}`" if where else "your code"
    return (f"{who} called sys.exit({exc.code!r}) while it was measured: nothing was "
            "measured. The code JAX traces must return a value: raise an exception to "
            "stop it, or leave the exit out of the measured function")


def exit_after_measuring(code: object) -> str:
    """A script's ``sys.exit(code)`` anywhere else while the command ran it."""
    return (f"your script called sys.exit({code!r}) while it was measured: end it with "
            "the call to measure instead")


class CannotWriteError(Exception):
    """A report cannot be written where asked (``--save``, ``--html``); exit status 3."""


class RecompiledError(AssertionError):
    """A watched run compiled more than its gate allowed (an ``AssertionError``, as tests fail)."""

    def __init__(self, sentences: str, ledger: str = "") -> None:
        super().__init__(f"{sentences}\n\n{ledger}" if ledger else sentences)
        #: The gate's sentences alone (the magic shows the ledger above them).
        self.sentences = sentences
