"""The two kinds of failure a user sees, and how their own code's errors are shown."""

from __future__ import annotations

import sys
import traceback

from .usercode import user_file


class InputError(ValueError):
    """Bad input to jitmagic (cell shape, entry, options); the message says what to write."""


class UserCodeError(RuntimeError):
    """The user's own code raised; ``str()`` is their traceback lines, not jitmagic's."""


def user_traceback(exc: BaseException) -> str:
    """``exc`` formatted with only the user's frames (no JAX, no jitmagic internals)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if user_file(f.filename)]
    lines = traceback.format_list(frames)
    head = "Traceback (your code):\n" if frames else ""
    text = head + "".join(lines) + "".join(traceback.format_exception_only(type(exc), exc))
    hint = _hint(exc)
    return text + (f"\nHint: {hint}" if hint else "")


def innermost_function(exc: BaseException) -> str | None:
    """The name of the user's function in which ``exc`` was raised."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if user_file(f.filename)]
    return frames[-1].name if frames else None


def _hint(exc: BaseException) -> str | None:
    # jax is looked up, not imported: `python -m jitmagic FILE.py` imports this before the
    # file's first lines run, which may set JAX_PLATFORMS or XLA_FLAGS for jax to read.
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    if isinstance(exc, jax.errors.ConcretizationTypeError | jax.errors.TracerBoolConversionError
                  | jax.errors.TracerIntegerConversionError):
        return ("a helper uses the Python value of a traced argument. Pass that argument as a "
                "Python value (it is then made static), mark it static in your own "
                "`jax.jit(..., static_argnums=...)`, or leave that helper out with `--nest`.")
    return None


class CannotWriteError(Exception):
    """A report cannot be written where asked (``--save``, ``--html``); the message
    says why and what to give instead. The command exits with status 3 on it."""
