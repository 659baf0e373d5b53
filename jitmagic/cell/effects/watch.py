"""Whose change it was: the measured code's, or another thread's (:class:`Watch`)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ...model.notes import Note, PutBack
from ...model.progress import Draw, Progress

#: What a row's ``label`` makes of one of its keys: (the row, the key's name).
Label = Callable[[Any], tuple[str, str]]
#: The stages in which the cell's code does not run: a change across one is another thread's.
NOT_THE_CELLS = frozenset({"steady state", "XLA compile"})
#: The stage of the discovery trace: the one after it begins once the cell ran once.
FINDING_HELPERS = "finding helpers"
_MISSING = object()


class Watch:
    """Which changes the measured code made and which another thread made meanwhile: a key changed
    only in windows where the cell's code could not run (:data:`NOT_THE_CELLS`) is another
    thread's, left and named."""

    def __init__(self) -> None:
        self._views: dict[str, tuple[Callable[[], dict], Label, bool]] = {}
        self._first: dict[str, dict] = {}
        self._seen: dict[str, dict] = {}
        #: per view, the keys that changed in a window where the cell's code could run
        self._cells_changed: dict[str, set[Any]] = {}
        self._cells = True  # the window open now: the cell's code may run in it
        self._settles: list[Callable[[], None]] = []
        self._finding = False

    def add(self, name: str, view: Callable[[], dict], label: Label,
            identity: bool = False) -> None:
        """Watch ``view`` (by ``is`` where ``identity``) from now; ``label`` names a key."""
        seen = _viewed(view, {})
        self._views[name] = (view, label, identity)
        self._first[name], self._seen[name], self._cells_changed[name] = seen, seen, set()

    def mark(self, cells: bool) -> None:
        """A boundary between stages; the next may run the cell's code (``cells``) or not."""
        for name, (view, _, identity) in self._views.items():
            was = self._seen[name]
            now = _viewed(view, was)
            if self._cells and not _same_view(was, now, identity):  # else only the view
                moved = [key for key in was.keys() | now.keys()
                         if was.get(key, _MISSING) is not now.get(key, _MISSING)]
                self._cells_changed[name].update(
                    key for key in moved
                    if _changed(was.get(key, _MISSING), now.get(key, _MISSING), identity))
            self._seen[name] = now
        self._cells = cells

    def once_traced(self, settle: Callable[[], None]) -> None:
        """Call ``settle`` once the cell's setup and its first (discovery) trace have run."""
        self._settles.append(settle)

    def drawing(self, draw: Draw | None) -> Draw:
        """A progress ``draw`` that first marks each stage's start."""
        def marked(p: Progress) -> None:
            if self._finding and p.stage != FINDING_HELPERS:
                settles, self._settles = self._settles, []
                for settle in settles:
                    settle()
            self._finding = p.stage == FINDING_HELPERS
            self.mark(p.stage not in NOT_THE_CELLS)
            if draw is not None:
                draw(p)
        return marked

    def theirs(self, name: str) -> frozenset[Any]:
        """The keys of ``name`` changed only in windows where the cell's code could not run."""
        if name not in self._views:
            return frozenset()
        identity, mine = self._views[name][2], self._cells_changed[name]
        first, now = self._first[name], self._seen[name]
        return frozenset(k for k in first.keys() | now.keys() if k not in mine
                         and _changed(first.get(k, _MISSING), now.get(k, _MISSING), identity))

    def left(self) -> list[Note]:
        """One note naming what another thread changed, or none."""
        things = list(dict.fromkeys(self._views[name][1](key) for name in self._views
                                    for key in sorted(self.theirs(name), key=repr)))
        return [PutBack("left_as_is", tuple(row for row, _ in things),
                        tuple(key for _, key in things))] if things else []


def _viewed(view: Callable[[], dict], otherwise: dict) -> dict:
    try:
        return view()
    except Exception:  # noqa: BLE001 (a state that cannot be read now is not compared)
        return otherwise


def _same_view(was: dict, now: dict, identity: bool) -> bool:
    """Whether nothing in a view changed (quick, in C; False: look key by key)."""
    try:
        if identity:
            return was.keys() == now.keys() and all(map(operator.is_, was.values(),
                                                        now.values()))
        return bool(was == now)
    except Exception:  # noqa: BLE001 (a value that cannot say: look key by key)
        return False


def _changed(was: Any, now: Any, identity: bool) -> bool:
    if was is now:
        return False
    if identity or was is _MISSING or now is _MISSING:
        return True
    return differs(was, now)


def differs(a: Any, b: Any) -> bool:
    """``a != b``; for a value that cannot say (an array), whether they are two objects."""
    try:
        return bool(a != b)
    except Exception:  # noqa: BLE001 (an array-valued setting: by identity)
        return a is not b


# --- wrappers that note who calls a function while a cell is measured, removable wherever
# they stand in a chain (two measurements on two threads may each wrap one function) ---


class Noting:
    """``inner`` (the function wrapped), then ``note`` with the same arguments."""

    def __init__(self, inner: Callable[..., Any], note: Callable[..., None]) -> None:
        self.inner, self.note = inner, note

    def __call__(self, *args: Any) -> Any:
        got = self.inner(*args)
        self.note(*args)
        return got

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        """As a class attribute (``os.environ``'s ``__setitem__``): bound, as a function is."""
        return self if obj is None else (lambda *args: self(obj, *args))


def unwrap(current: Any, mine: Noting, put_back: Callable[[Any], None]) -> None:
    """Take ``mine`` out of the chain of wrappers that begins at ``current``."""
    if current is mine:
        put_back(mine.inner)
        return
    while isinstance(current, Noting):
        if current.inner is mine:
            current.inner = mine.inner
            return
        current = current.inner
