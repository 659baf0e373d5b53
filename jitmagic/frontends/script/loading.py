"""The command's script before it runs: read, given its namespace, and checked (exit status 2)."""

from __future__ import annotations

import ast
import builtins
import contextlib
import sys
import tokenize
import traceback
import warnings
from pathlib import Path
from typing import Any

from ...cell.prelude import ends_in_call, unguarded
from ...errors import InputError


def load_target(target: str) -> tuple[str, dict[str, Any]]:
    """(source, base namespace) for a file or the demo, as ``python FILE.py`` has."""
    if target == "demo":
        path = Path(__file__).parent.parent / "demo.py"  # read, not imported: it builds an array
        source = path.read_text(encoding="utf-8") + "\ng(x)\n"
    else:
        path = script_path(target)
        source = read_source(path)
        sys.path.insert(0, str(path.resolve().parent))
    namespace = {"__name__": "__main__", "__file__": str(path), "__builtins__": builtins}
    return source, namespace


def script_path(target: str) -> Path:
    path = Path(target)
    if not path.is_file():
        said = " is a folder" if path.is_dir() else " is not a Python file" \
            if path.exists() else ": no such file"
        raise InputError(f"{target}{said}; give a Python file whose last statement "
                         "calls the function to measure, or `demo`")
    return path


def read_source(path: Path) -> str:
    """The file's text in its declared encoding (PEP 263, else UTF-8)."""
    try:
        with tokenize.open(path) as f:
            return f.read()
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it as Python source ({exc}); save it as "
                         "UTF-8 or declare its encoding, e.g. `# -*- coding: latin-1 -*-`"
                         ) from None


def check_shape(source: str, filename: str) -> None:
    """``InputError`` for a file that does not compile or end in a call."""
    check_compiles(source, filename)
    if ends_in_call(unguarded(ast.parse(source).body)):
        return
    from ...cell.prepare import parse

    parse(source, filename)  # raises, saying what is wrong


#: What to write instead, for the compile errors a script meant as a cell runs into.
COMPILE_HINTS = (("'await' outside", "a file runs as a script, where `await` needs an async "
                  "function: call it with `asyncio.run(main())`"),
                 ("'return' outside", "end the file with the call to measure, e.g. `model(x)`"))


def check_compiles(source: str, filename: str) -> None:
    """``InputError`` for a file Python would refuse to run, before any of it runs."""
    try:
        with warnings.catch_warnings():  # a SyntaxWarning is shown when the file runs
            warnings.simplefilter("ignore")
            compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        hint = next((h for start, h in COMPILE_HINTS if start in str(exc.msg)), None)
        raise InputError(f"syntax error in the file: {filename} does not compile, so nothing "
                         "in it ran:\n"
                         + "".join(traceback.format_exception_only(exc)).rstrip()
                         + (f"\nHint: {hint}" if hint else "")) from None
    except ValueError as exc:  # a null byte in the source
        raise InputError(f"{filename} does not compile, so nothing in it ran: {exc}") from None


def source_of(script: str | None) -> str | None:
    """The file's text to check before starting processes (None: the demo, or unreadable)."""
    if script is None:
        return None
    with contextlib.suppress(OSError, InputError):
        return read_source(Path(script))
    return None
