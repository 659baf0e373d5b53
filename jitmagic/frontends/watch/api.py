"""``jitmagic.watch()``: the code runs once, as written and in place, and every compile it
causes is recorded in a :class:`~jitmagic.model.ledger.Ledger`. What the watch set is put
back on every path out; the code's own exception is raised as it was, after the ledger."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import InputError, RecompiledError
from ...measure.sampling.stops import first_line
from ...measure.watch.recorder import Recorder
from ...model.ledger import Gate, Ledger
from ...model.ledger.compiles import Compile
from ...model.saved.schema import printable
from ...render.ledger import gate_failures, text
from ..cell_names import with_cell_names
from ..saving import check_endings, checked_path, distinct, write_outputs
from .live import Live


class Watch:
    """What ``with jitmagic.watch() as w:`` gives: ``w.ledger`` once the block ended."""

    def __init__(self) -> None:
        self.ledger: Ledger | None = None

    def __str__(self) -> str:
        return str(self.ledger) if self.ledger is not None else "<Watch: still running>"

    def __repr__(self) -> str:
        return self.ledger.summary() if self.ledger is not None else "<Watch: still running>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if self.ledger is None:
            return {"text/plain": str(self)}
        return self.ledger._repr_mimebundle_(include, exclude)


def gate_of(fail_after_warmup: int | None, max_compiles: int | None) -> Gate:
    """The gate of the two limits, each checked: a whole number from 0, or None."""
    for name, value in (("fail_after_warmup", fail_after_warmup),
                        ("max_compiles", max_compiles)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise InputError(f"{name} is a number of compiles, a whole number from 0 "
                             f"(got {value!r}): e.g. {name}=1")
    return Gate(fail_after_warmup, max_compiles)


def checked(fail_after_warmup: int | None, max_compiles: int | None,
            paths: dict[str, str | None], others: dict[str, str] | None = None,
            ) -> tuple[Gate, dict[str, str | None]]:
    """The gate and the report ``paths``, checked as every front door checks them (made
    absolute; ``others``: files they must not name)."""
    gate = gate_of(fail_after_warmup, max_compiles)
    check_endings(paths, "ledger")
    distinct({**(others or {}), **paths})
    return gate, {flag: checked_path(path, flag) for flag, path in paths.items()}


@contextmanager
def watch(*, fail_after_warmup: int | None = None, max_compiles: int | None = None,
          source: str = "the block", live: bool = True) -> Iterator[Watch]:
    """Record every trace, lowering and compile the block causes (``w.ledger``, shown by
    ``print(w)`` or as a cell's value). ``fail_after_warmup=N`` fails (``RecompiledError``) when
    a function compiles more than N times, ``max_compiles=N`` when the block does in all;
    ``live``: each recompile said on stderr as it happens."""
    __tracebackhide__ = True  # pytest shows the failing test's lines, not these
    gate = gate_of(fail_after_warmup, max_compiles)
    w = Watch()
    made: list[Ledger] = []
    try:
        said = Live(name=lambda c: named_compile(c, _shell())) if live else None
        with watched(gate, source, on_again=said) as made:
            yield w
    finally:  # after an error or Ctrl-C too: the ledger of what ran before it
        if made:
            w.ledger = with_cell_names(made[0], _shell())
    assert w.ledger is not None
    check_gate(w.ledger)


def _shell() -> Any:
    """The IPython shell running this process's code (None: none)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    return get() if callable(get) else None


def named_compile(c: Compile, shell: Any, source_file: str | None = None) -> Compile:
    """One compile with its places named as :func:`with_cell_names` names a ledger's."""
    return with_cell_names(Ledger((c,), 0.0, source_file=source_file), shell).compiles[0]


@contextmanager
def watched(gate: Gate, source: str, source_file: str | None = None, *,
            on_again: Callable[[Compile], None] | None = None) -> Iterator[list[Ledger]]:
    """Within, compiles are recorded; after (an error or Ctrl-C too), the list holds the ledger."""
    recorder = Recorder(on_again=on_again)
    made: list[Ledger] = []
    error, stopped = None, False
    recorder.start()
    try:
        yield made
    except KeyboardInterrupt:
        stopped = True
        raise
    except SystemExit as exc:  # ``sys.exit(main())``: a script's ordinary end where it is 0
        error = None if exc.code in (0, None) else first_line(exc, named=True)
        raise
    except BaseException as exc:
        error = first_line(exc, named=True)
        raise
    finally:
        recorder.stop()
        made.append(recorder.ledger(source=source, source_file=source_file, error=error,
                                    stopped=stopped, gate=gate))


def check_gate(ledger: Ledger) -> None:
    """Raise ``RecompiledError`` where the ledger broke its gate."""
    __tracebackhide__ = True
    broken = gate_failures(ledger)
    if broken:
        raise RecompiledError("jitwatch gate failed: " + "; ".join(broken), text(ledger))


def wrote(option: str, path: str) -> str:
    """The line that says the watch wrote a report: ``jitwatch: --save wrote l.json``."""
    return f"jitwatch: {option} wrote {printable(path)}"


def write_ledger(ledger: Ledger, save: str | None, html: str | None,
                 ) -> tuple[list[str], list[str]]:
    """Write ``ledger`` to ``--save`` and ``--html``: (lines written, lines of failures)."""
    return write_outputs(ledger, argparse.Namespace(save=save, html=html), said=wrote)
