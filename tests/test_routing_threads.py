"""Safe beside threads, interrupts and other code that reads a helper: a measurement
changes what the measuring thread's calls of a helper reach, and nothing else.

* another thread calling a helper during a measurement runs the helper's own code;
* a Ctrl-C landing while the helpers' ``__code__`` is put back waits until every one
  is put back, then reaches the caller;
* two threads' measurements run one after the other (the second says it waited),
  never flat against flat;
* the routed helper keeps its signature (``inspect.signature``, ``co_argcount``), and
  an error nesting causes says so;
* an entry that shares its code with a helper is not itself routed.

Every test measures real JAX code shaped like users' (methods, closures, ``jax.grad``
of a loss); none asserts a timing.
"""

from __future__ import annotations

import inspect
import signal
import sys
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jitmagic
from jitmagic.measure.variants import trampoline
from jitmagic.measure.variants.build import build_variant
from jitmagic.measure.variants.entry import plan_entry
from jitmagic.render.notes import NO_CALL

ONCE = {"repeat": 1, "number": 1, "quiet": True}


def dense(x, w, scale=1.0):
    """A layer as libraries write one: NumPy in, NumPy out; JAX in, JAX out."""
    xp = np if isinstance(x, np.ndarray) else jnp
    return xp.tanh(x @ w) * scale


DENSE_CODE = dense.__code__


@jax.tree_util.register_pytree_node_class
class MLP:
    def __init__(self, ws):
        self.ws = list(ws)

    def __call__(self, x):
        for w in self.ws:
            x = dense(x, w)
        return x

    def tree_flatten(self):
        return (self.ws,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


MLP_CALL = MLP.__call__.__code__
X_NP, W_NP = np.linspace(-1.0, 1.0, 4), np.eye(4) * 0.5
PARAMS = [jnp.eye(4) * 0.5, jnp.eye(4) * 0.25]


def routed_here() -> bool:
    """Whether the helpers are routed now (this thread is tracing a nested variant)."""
    return dense.__code__ is not DENSE_CODE


# --- 1. another thread calling a helper during a measurement -----------------

class Caller:
    """A thread calling ``dense`` and ``MLP(...)`` on NumPy arrays until stopped."""

    def __init__(self):
        self.calls, self.wrong, self.stop = 0, [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        want_dense, want_mlp = np.tanh(X_NP @ W_NP), np.tanh(np.tanh(X_NP @ W_NP) @ W_NP)
        while not self.stop.is_set():
            for got, want in ((dense(X_NP, W_NP), want_dense),
                              (MLP([W_NP, W_NP])(X_NP), want_mlp)):
                if type(got) is not np.ndarray or not np.array_equal(got, want):
                    self.wrong.append(type(got).__name__)
            self.calls += 1
            time.sleep(0.0005)

    def calls_made_now(self, more: int = 2, within: float = 2.0) -> bool:
        """Wait (here, while the caller's trace holds the helpers routed) until the
        thread has called the helpers ``more`` more times."""
        until, deadline = self.calls + more, time.monotonic() + within
        while self.calls < until and time.monotonic() < deadline:
            time.sleep(0.001)
        return self.calls >= until


CALLER: list[Caller] = []
OVERLAPS: list[bool] = []


def loss(params, x):
    if routed_here() and CALLER:  # the other thread calls while this trace holds the route
        OVERLAPS.append(CALLER[0].calls_made_now())
    return jnp.sum(MLP(params)(x) ** 2)


def test_another_thread_calling_a_helper_gets_its_own_answer():
    """A thread calls ``dense`` and ``MLP.__call__`` on NumPy input throughout a real
    compare of ``jax.grad(loss)``, and also while each nested trace holds them routed:
    every answer is NumPy's, and the nesting is still real."""
    caller = Caller()
    CALLER[:], OVERLAPS[:] = [caller], []
    caller.thread.start()
    try:
        r = jitmagic.compare(jax.grad(loss), PARAMS, jnp.ones(4), repeat=2, number=1,
                             quiet=True)
    finally:
        caller.stop.set()
        caller.thread.join()
        CALLER.clear()
    assert OVERLAPS and all(OVERLAPS), OVERLAPS  # it really called while routed
    assert caller.wrong == [], f"{len(caller.wrong)} of {caller.calls}: {caller.wrong[:5]}"
    assert r.flat.ok and r.nested.ok, (r.flat.error, r.nested.error)
    assert "dense" in r.nested.helpers and r.nested.helper_calls["dense"] >= 1
    assert r.outputs_match
    assert dense.__code__ is DENSE_CODE and MLP.__call__.__code__ is MLP_CALL


# --- 2. Ctrl-C while the helpers' code is put back ---------------------------

def make_block(scale):
    def block(x):
        return jnp.sin(x) * scale
    return block


BLOCKS: list = []
N_BLOCKS = 20_000


def deep(x):
    return BLOCKS[1](x) + BLOCKS[2](x)


@pytest.fixture(scope="module")
def many_closures():
    """20,000 closures of one ``def`` (one code object), and the nested variant of an
    entry calling two of them: all 20,000 are routed while it runs."""
    BLOCKS[:] = [make_block(float(i)) for i in range(N_BLOCKS)]
    code = BLOCKS[0].__code__
    try:
        variant = build_variant("nested", plan_entry(deep, (jnp.ones(3),), {}))
        yield code, variant
    finally:
        BLOCKS.clear()


class PutBack:
    """``CodeOf.set`` with an interrupt at the ``at``-th put-back (counted from 0): a
    real SIGINT (``signal``) or a ``KeyboardInterrupt`` raised right there."""

    def __init__(self, at: int, how: str):
        self.at, self.how, self.seen, self.real = at, how, 0, trampoline.CodeOf.set

    def __get__(self, place, owner=None):  # a method of CodeOf, as the one it replaces
        return lambda code: self.put(place, code)

    def put(self, place, code):
        if code.co_filename != trampoline.TRAMPOLINE_FILE:  # putting the original back
            self.seen += 1
            if self.seen - 1 == self.at:
                if self.how == "signal":
                    signal.raise_signal(signal.SIGINT)  # its handler runs at once, here
                else:
                    raise KeyboardInterrupt
        self.real(place, code)


@pytest.mark.parametrize("how", ["signal", "raised"])
@pytest.mark.parametrize("at", [0, 1, N_BLOCKS // 2, N_BLOCKS - 1])
def test_ctrl_c_during_the_put_back_leaves_nothing_routed(many_closures, monkeypatch, at,
                                                          how):
    code, variant = many_closures
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    put_back = PutBack(at, how)
    monkeypatch.setattr(trampoline.CodeOf, "set", put_back)
    with pytest.raises(KeyboardInterrupt):
        jax.jit(variant.fn).trace(jnp.ones(3))
    monkeypatch.undo()
    left = sum(b.__code__ is not code for b in BLOCKS)
    assert left == 0, f"{left} of {N_BLOCKS} closures left routed"
    assert put_back.seen >= N_BLOCKS
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert deep(jnp.ones(3)).shape == (3,)  # and they run as before


def test_ctrl_c_during_the_put_back_stops_a_real_compare(many_closures, monkeypatch):
    """Inside ``compare`` the held Ctrl-C reaches the measurement's own handler: it
    stops (a partial result), and every closure has its code back."""
    code, _ = many_closures
    monkeypatch.setattr(trampoline.CodeOf, "set", PutBack(0, "signal"))
    r = jitmagic.compare(deep, jnp.ones(3), **ONCE)
    monkeypatch.undo()
    assert r.stopped and "interrupted" in r.stopped, r.stopped
    assert sum(b.__code__ is not code for b in BLOCKS) == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# --- 3. two threads measuring at once ----------------------------------------

def make_model(ws):
    def model(x):
        for w in ws:
            x = dense(x, w) + x
        return jnp.sum(x)
    return model


class Rendezvous:
    """A: holds its first nested trace until B is routed or waits to measure; B: holds
    a nested trace of its own until A's compare is over. Without one measurement at a
    time, A's nested traces then run while B's routes are in place."""

    def __init__(self):
        self.a_routed, self.b_routed, self.a_done = (threading.Event() for _ in range(3))
        self.a_code: list = []
        self.b_thread: threading.Thread | None = None

    def b_waits_to_measure(self) -> bool:
        """B's thread is waiting for the measurement lock."""
        assert self.b_thread is not None
        frame = sys._current_frames().get(self.b_thread.ident)
        while frame is not None:
            if frame.f_code.co_name == "one_measurement":
                return True
            frame = frame.f_back
        return False

    def in_a(self):
        if routed_here() and not self.a_routed.is_set():
            self.a_code.append(dense.__code__)
            self.a_routed.set()
            deadline = time.monotonic() + 20
            while self.b_thread is None and time.monotonic() < deadline:
                time.sleep(0.001)
            while not (self.b_routed.is_set() or self.b_waits_to_measure()) \
                    and time.monotonic() < deadline:
                time.sleep(0.002)

    def in_b(self):
        if routed_here() and dense.__code__ is not self.a_code[0]:
            self.b_routed.set()
            self.a_done.wait(20)


MEET: list[Rendezvous] = []


def loss_a(params, x):
    MEET[0].in_a()
    return jnp.sum(MLP(params)(x) ** 2)


model_b = make_model([jnp.eye(4) * 0.3, jnp.eye(4) * 0.2])


def entry_b(x):
    MEET[0].in_b()
    return model_b(x)


def test_two_threads_measure_one_after_the_other():
    """Two threads compare entries sharing ``dense`` (``jax.grad`` of a loss through a
    method; a closure-made model), the second started while the first's nested trace
    holds ``dense`` routed: it waits, says so, and both nest ``dense`` for real."""
    meet = Rendezvous()
    MEET[:] = [meet]
    results: dict = {}

    def measure(name, fn, *args):
        try:
            results[name] = jitmagic.compare(fn, *args, repeat=2, number=1, quiet=True)
        except BaseException as exc:  # noqa: BLE001 (shown by the assertion below)
            results[name] = exc

    a = threading.Thread(target=measure, args=("a", jax.grad(loss_a), PARAMS, jnp.ones(4)))
    b = threading.Thread(target=measure, args=("b", entry_b, jnp.ones(4)))
    try:
        a.start()
        assert meet.a_routed.wait(60), "A never traced its nested variant"
        meet.b_thread = b
        b.start()
        a.join(120)
        meet.a_done.set()
        b.join(120)
    finally:
        meet.a_done.set()
        MEET.clear()
    for name in "ab":
        r = results[name]
        assert not isinstance(r, BaseException), (name, r)
        assert r.flat.ok and r.nested.ok, (name, r.flat.error, r.nested.error)
        assert "dense" in r.nested.helpers, (name, r.nested.helpers, r.nested.notes)
        assert r.nested.helper_calls["dense"] >= 1, (name, r.nested.helper_calls)
        assert not any(NO_CALL in n for n in r.nested.notes), (name, r.nested.notes)
        assert r.outputs_match, name
    assert any("waited" in w and "another thread" in w for w in results["b"].warnings), \
        results["b"].warnings
    assert not any("another thread" in w for w in results["a"].warnings)
    assert dense.__code__ is DENSE_CODE


def test_ctrl_c_stops_the_wait_for_another_measurement():
    """While another thread measures, a compare on the main thread waits; Ctrl-C there
    stops the wait (a ``KeyboardInterrupt``) and measures nothing."""
    from jitmagic.measure.discovery.bindings import one_measurement

    holding, release = threading.Event(), threading.Event()

    def hold():
        with one_measurement():
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert holding.wait(10)
    main = threading.main_thread().ident
    press = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))
    try:
        press.start()
        with pytest.raises(KeyboardInterrupt):
            jitmagic.compare(model_b, jnp.ones(4), **ONCE)
    finally:
        press.cancel()
        release.set()
        holder.join(10)
    r = jitmagic.compare(model_b, jnp.ones(4), **ONCE)  # the lock is free again
    assert "dense" in r.nested.helpers
    assert not any("another thread" in w for w in r.warnings)


# --- 4. a routed helper keeps its signature -----------------------------------

def dense_opts(x, w, *, bias=0.0, act=jnp.tanh):
    return act(x @ w + bias)


def call_accepting(layer, x, w, **options):
    """Pass a layer the options its signature takes (as config-driven code does)."""
    accepted = inspect.signature(layer).parameters
    return layer(x, w, **{k: v for k, v in options.items() if k in accepted})


def configured(x, ws):
    assert dense_opts.__code__.co_argcount == 2, dense_opts.__code__.co_argcount
    assert dense_opts.__code__.co_varnames[:4] == ("x", "w", "bias", "act")
    for w in ws:
        x = call_accepting(dense_opts, x, w, bias=0.5, dropout=0.1)
    return x


def test_a_routed_helper_keeps_its_signature():
    sig = inspect.signature(dense_opts)
    r = jitmagic.compare(configured, jnp.ones(4), PARAMS, **ONCE)
    assert r.flat.ok and r.nested.ok, r.nested.error
    assert "dense_opts" in r.nested.helpers and r.nested.helper_calls["dense_opts"] == 2
    assert r.outputs_match
    assert inspect.signature(dense_opts) == sig


def reads_the_code_object(x):
    assert dense.__code__ is DENSE_CODE, "this model reads its layer's code object"
    return dense(x, jnp.eye(4)) + dense(x, jnp.eye(4) * 2.0)


def test_an_error_nesting_causes_says_so():
    """Code that reads the helper's code object fails in the nested variant alone; its
    error says that nesting caused it (the flat program traces)."""
    r = jitmagic.compare(reads_the_code_object, jnp.ones(4), **ONCE)
    assert r.flat.ok and not r.nested.ok
    assert "this model reads its layer's code object" in r.nested.error
    assert "nesting caused this error" in r.nested.error, r.nested.error
    assert "`dense`" in r.nested.error and "trampoline" in r.nested.error


def gated(x, training=False, rate=0.5):
    """A Python flag and rate by default, as dropout-style layers take them."""
    if training:
        return x * rate
    return jnp.cos(x) * 2.0


def uses_gated(x):
    return gated(x) + gated(x, training=False) + gated(x, rate=0.25)


def test_defaults_stay_python_values_under_the_jit():
    """The trampoline passes on what the caller passed: a default stays a Python value
    inside the helper's jit (not a traced scalar that ``if training`` cannot read)."""
    r = jitmagic.compare(uses_gated, jnp.ones(4), **ONCE)
    assert r.flat.ok and r.nested.ok, r.nested.error
    assert r.nested.helper_calls == {"gated": 3}
    assert not any("static" in n for n in r.nested.notes), r.nested.notes
    assert r.outputs_match


def every_kind(a, b=2.5, /, c=None, *rest, d, e="same", **kw):
    return ("own code", a, b, c, rest, d, e, kw)


@pytest.mark.parametrize(("call", "passed"), [
    (lambda f: f(1, d=4), ((1,), {"d": 4})),
    (lambda f: f(1, every_kind.__defaults__[0], None, d=4, e="same"), ((1,), {"d": 4})),
    (lambda f: f(1, 7.5, d=4, e="other", z=1), ((1, 7.5), {"d": 4, "e": "other", "z": 1})),
    (lambda f: f(1, every_kind.__defaults__[0], 9, d=4), ((1,), {"c": 9, "d": 4})),
    (lambda f: f(1, 2.5, None, 8, d=4), ((1, 2.5, None, 8), {"d": 4})),
])
def test_the_trampoline_passes_on_what_the_caller_passed(call, passed):
    """Every kind of parameter: the measuring thread's call reaches the target with the
    arguments as given (defaults left out), another thread's runs the function's own
    code; the signature is the function's throughout."""
    got, sig = [], inspect.signature(every_kind)
    place, original, code = trampoline.route(every_kind, lambda *a, **k: got.append((a, k)))
    try:
        place.set(code)
        assert inspect.signature(every_kind) == sig
        call(every_kind)
        elsewhere: list = []
        thread = threading.Thread(target=lambda: elsewhere.append(call(every_kind)))
        thread.start()
        thread.join()
    finally:
        place.set(original)
    assert got == [passed]
    assert elsewhere == [call(every_kind)] and elsewhere[0][0] == "own code"


# --- 5. an entry sharing its code with a helper -------------------------------

def make_stage(scale):
    def stage(x, inner=None):
        y = jnp.sin(x) * scale
        return inner(y) if inner is not None else y
    return stage


inner_stage, outer_stage = make_stage(2.0), make_stage(3.0)


def test_an_entry_sharing_its_code_with_a_helper_is_not_routed():
    """``outer_stage`` (the entry) and ``inner_stage`` (its helper) are closures of one
    ``def``: only the helper runs under a jit of its own."""
    r = jitmagic.compare(outer_stage, jnp.ones(4), inner_stage, **ONCE)
    assert r.nested.ok, r.nested.error
    assert r.nested.helper_calls == {"inner_stage": 1}, r.nested.helper_calls
    assert r.nested.nested_calls - r.flat.nested_calls == 1
    assert r.outputs_match


# --- a large heap: the helpers' function objects are found in one scan -----------------


def _step_a(x):
    return jnp.sin(x) * 2


def _step_b(x):
    return jnp.cos(x) + 1


def _step_c(x):
    return jnp.tanh(x) - 1


def _stepped(x):
    for _ in range(3):
        x = _step_c(_step_b(_step_a(x)))
    return x


def test_the_helpers_function_objects_are_found_in_one_heap_scan_a_variant(monkeypatch):
    # gc.get_referrers scans the whole heap: 0.2 s with three million objects of the
    # user's, once per helper before (3 helpers, 6 scans), now once per variant built
    import gc

    real, scans = gc.get_referrers, []

    def counted(*objs):
        if objs and all(isinstance(o, type(_stepped.__code__)) for o in objs):
            scans.append(len(objs))
        return real(*objs)

    monkeypatch.setattr(gc, "get_referrers", counted)
    result = jitmagic.compare(_stepped, jnp.ones(4), **ONCE)
    assert set(result.nested.helpers) == {"_step_a", "_step_b", "_step_c"}
    routed = [n for n in scans if n == 3]
    assert routed and len(scans) <= 2, scans  # every helper's code in one call
