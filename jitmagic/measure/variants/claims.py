"""Which helpers a traced program really nests: its jit calls, each matched to the helper
whose code it runs (a helper is claimed nested only with a jit call of it).

A jit equation is matched by what it holds: of the frames each inner equation was traced
under (``source_info.traceback``), those of the jit's own call site are left out, and the
outermost user frame left is the function called inside the jit. Where the inner
equations agree on one such helper, the jit is its call whatever it is named (quax
re-wraps it as ``qfun``); else the name decides (:attr:`~.plan.Helper.jit_names`).

A helper's jit inside another of the same helper (``jax.jit(jax.jit(f))``) counts once,
unless called from inside the helper itself (recursion). Under ``grad`` each call's
backward pass is a jit of its own (``transpose(jvp())`` scope): it and the jits inside
it are counted apart, as backward passes (:func:`jit_calls_and_backward`).
"""

from __future__ import annotations

import types
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..discovery.found import UserFunctions
from ..sampling.structure import distinct_jaxprs
from ..sampling.structure import sub_jaxprs
from ..sampling.structure import traceback_codes
from .plan import Helper

JIT_PRIMITIVES = ("jit", "pjit")
#: The name-stack scope of a jit call's backward pass under ``grad``: its other half.
BACKWARD = "transpose("


def helper_jit_calls(jaxpr: Any, helpers: dict[str, Helper],
                     counted: Iterable[str] | None = None) -> Counter:
    """Each helper's jit calls in ``jaxpr``, every call as it happens (sub-jaxprs too), by
    name; ``counted`` limits the names counted."""
    return _read(jaxpr, helpers, counted).calls


def jit_calls_and_backward(jaxpr: Any, helpers: dict[str, Helper],
                           counted: Iterable[str] | None = None) -> tuple[Counter, Counter]:
    """:func:`helper_jit_calls`, and each helper's backward passes under ``grad``."""
    reader = _read(jaxpr, helpers, counted)
    return reader.calls, reader.backward


def _read(jaxpr: Any, helpers: dict[str, Helper], counted: Iterable[str] | None) -> _Claims:
    reader = _Claims(helpers, set(helpers if counted is None else counted))
    reader.walk(getattr(jaxpr, "jaxpr", jaxpr), frozenset())
    return reader


def called_inside(jaxpr: Any, helpers: dict[str, Helper], name: str) -> tuple[str, ...]:
    """The user's functions (qualified names, first seen first) that the jit calls of
    helper ``name`` ran: the frames below the helper's own inside its jits."""
    reader, code = _Claims(helpers, {name}), helpers[name].code
    found: dict[str, None] = {}
    for current in distinct_jaxprs(jaxpr):
        for eqn in current.eqns:
            if eqn.primitive.name not in JIT_PRIMITIVES or name not in reader._owners(eqn):
                continue
            body = eqn.params.get("jaxpr")
            for chain in sorted(reader._chains(getattr(body, "jaxpr", body)), key=len):
                below = chain[chain.index(code) + 1:] if code in chain else ()
                found.update((c.co_qualname, None) for c in below if c is not code)
    return tuple(found)


class _Claims:
    def __init__(self, helpers: dict[str, Helper], counted: set[str]):
        self.helpers, self.counted = helpers, counted
        self.by_code = {h.code: n for n, h in helpers.items()}
        #: The code defined inside a counted helper (``jax.checkpoint(lambda ...)`` in its
        #: body: under ``grad`` its jit's equations may show the lambda alone) → that helper.
        self.holders = {inner: n for n in counted for inner in _defined_in(helpers[n].code)}
        self.is_user = UserFunctions()
        self.calls: Counter = Counter()
        self.backward: Counter = Counter()
        #: (id of the jit's jaxpr, its own traceback) → the helpers it is a call of.
        self.owners: dict[tuple[int, Any], frozenset[str]] = {}
        #: A jit equation's traceback → the code on it (where the jit was called from).
        self.frames: dict[Any, frozenset[types.CodeType]] = {}
        #: id of a jit's jaxpr → :meth:`_chains`.
        self.chains: dict[int, set[tuple[types.CodeType, ...]]] = {}

    def walk(self, jaxpr: Any, enclosing: frozenset[str], backward: bool = False) -> None:
        """Count the jit calls in ``jaxpr``, inside jits of the helpers ``enclosing``: as
        calls, or, inside a call's backward half (``backward``), as backward passes."""
        for eqn in jaxpr.eqns:
            inside, back = enclosing, backward
            if eqn.primitive.name in JIT_PRIMITIVES:
                # a counted call's backward half, and its inner calls' halves inside it
                back = backward or BACKWARD in str(eqn.source_info.name_stack)
                owners = self._owners(eqn)
                own = self._own(eqn.source_info.traceback)
                counter = self.backward if back else self.calls
                for n in owners:
                    if n in self.counted and (n not in enclosing or self.helpers[n].code in own):
                        counter[n] += 1
                inside = enclosing | owners
            for sub in sub_jaxprs(eqn):
                self.walk(sub, inside, back)

    def _owners(self, eqn: Any) -> frozenset[str]:
        body = eqn.params.get("jaxpr")
        body = getattr(body, "jaxpr", body)
        key = (id(body), eqn.source_info.traceback)
        owners = self.owners.get(key)
        if owners is None:
            owner = self._runs(body, self._own(eqn.source_info.traceback))
            if owner is not None and owner not in self.counted:  # code a counted helper holds
                owner = self.holders.get(self.helpers[owner].code, owner)
            name = str(eqn.params.get("name", ""))
            owners = frozenset({owner} if owner is not None else
                               {n for n, h in self.helpers.items() if name in h.jit_names})
            self.owners[key] = owners
        return owners

    def _own(self, tb: Any) -> frozenset[types.CodeType]:
        """The code on a jit equation's own traceback: where it was called from."""
        own = self.frames.get(tb)
        if own is None:
            own = self.frames[tb] = frozenset(traceback_codes(tb))
        return own

    def _runs(self, body: Any, own: frozenset[types.CodeType]) -> str | None:
        """The helper the jit's ``body`` runs: the one outermost user function its
        equations agree on (None: none, several, or not a helper)."""
        found = {code for chain in self._chains(body)
                 if (code := next((c for c in chain if c not in own), None)) is not None}
        return self.by_code.get(found.pop()) if len(found) == 1 else None

    def _chains(self, body: Any) -> set[tuple[types.CodeType, ...]]:
        """The helper and user frames of each distinct traceback in ``body``, outermost
        first."""
        chains = self.chains.get(id(body))
        if chains is None:
            chains = self.chains[id(body)] = set()
            for tb in {eqn.source_info.traceback for eqn in getattr(body, "eqns", ())}:
                chains.add(tuple(c for c in reversed(traceback_codes(tb))
                                 if c in self.by_code or self.is_user(c)))
        return chains


def _defined_in(code: types.CodeType) -> Iterable[types.CodeType]:
    """The code objects defined inside ``code``, at any depth."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _defined_in(const)
