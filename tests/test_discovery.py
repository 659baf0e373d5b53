"""Discovery reads the helpers from one plain trace's program: no profile hook, the
entry traced once, the same helpers, bindings and ``self`` the profiled trace found."""

from __future__ import annotations

import importlib.util
import sys

import jax
import jax.numpy as jnp
import pytest

from jitmagic.measure.discovery.discover import discover, profiled_discovery
from jitmagic.measure.variants.entry import plan_entry

X = jnp.ones(4)
NO_STATIC = {"static_argnums": (), "static_argnames": ()}
TRACES: list[str] = []


def f(x):
    return sum(i * x for i in range(8))


def g(x):
    TRACES.append("g")
    return sum(f(x) for _ in range(4))


def test_no_profile_hook_and_one_trace(monkeypatch):
    set_to = []
    monkeypatch.setattr(sys, "setprofile", set_to.append)
    TRACES.clear()
    found = discover(g, (3.14,), {}, NO_STATIC)
    assert set_to == [] and TRACES == ["g"]  # one plain trace, no hook
    assert list(found.helpers) == ["f"] and found.traces == 1 and not found.profiled
    (binding,) = found.helpers["f"].bindings
    assert binding.owner is globals() and binding.key == "f"
    # the program it read is kept: the flat variant's own
    flat = jax.jit(g).trace(3.14).jaxpr
    assert len(found.jaxpr.eqns) == len(flat.eqns)


def _records(found):
    return [(n, h.bindings, h.self_type, h.self_holds_arrays) for n, h in found.helpers.items()]


class Layer:
    """An ordinary object holding an array: not a pytree."""

    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return jnp.tanh(x * self.w)


LAYER = Layer(jnp.ones(4))


@jax.checkpoint
def remat(x):
    return jnp.sin(x) * jnp.cos(x)


def leaf(x):
    return x * 2.0


jitted_leaf = jax.jit(leaf)


def cases(x):
    y = LAYER.apply(x) + remat(x) + remat(2 * x)
    y = y + jitted_leaf(y) + jitted_leaf(2 * y)  # one trace, two call sites
    return jax.lax.scan(lambda c, _: (leaf(c), None), y, None, length=2)[0].sum()


@pytest.mark.parametrize("entry", [cases, jax.grad(cases)])
def test_the_same_records_as_the_profiled_trace(entry):
    plain = discover(entry, (X,), {}, NO_STATIC)
    profiled = profiled_discovery(entry, (X,), {}, NO_STATIC)
    assert _records(plain) == _records(profiled)
    # Call sites in the program: a cached trace called from two sites is two (Python ran
    # the function once), and `grad`'s copies of the equations are no more.
    sites = {n: h.call_sites for n, h in plain.helpers.items()}
    assert sites == {"Layer.apply": 1, "remat": 2, "jitted_leaf": 3, "<lambda>": 1}
    assert plain.helpers["Layer.apply"].self_holds_arrays  # LAYER, a global it looks up


class Scaled:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return x * self.w


def makes_its_object(x):
    return Scaled(x * 2).apply(x)  # `self` made during the trace, holding a tracer


def test_a_self_made_during_the_trace_is_seen_by_a_second_trace():
    found = discover(makes_its_object, (X,), {}, NO_STATIC)
    helper = found.helpers["Scaled.apply"]
    assert found.traces == 2 and helper.self_type is Scaled and helper.self_holds_arrays
    assert Scaled.apply.__qualname__ == "Scaled.apply"  # the class is put back
    assert "apply" in vars(Scaled) and vars(Scaled)["apply"].__code__ is helper.code


def broken(x):
    return leaf(x) + jnp.ones(3)  # (4,) + (3,): the trace raises


def test_a_trace_that_raises_is_profiled_for_what_it_called():
    assert discover(broken, (X,), {}, NO_STATIC).helpers == {}
    plan = plan_entry(broken, (X,), {})
    assert not plan.flat_traces and list(plan.helpers) == ["leaf"]


EXECUTED = '''
import jax.numpy as jnp

def layer(x, w):
    return jnp.tanh(x * w)

class Net:
    def __init__(self, depth):
        self.depth = depth

    def __call__(self, x):
        def block(y):
            return layer(y, 2.0) + 1.0
        for _ in range(self.depth):
            x = block(x)
        return x

def loss(x):
    return Net(3)(x).sum()
'''


@pytest.mark.parametrize("how", [discover, profiled_discovery])
def test_code_run_by_exec_is_the_users_in_its_own_namespace(how):
    # as `python -c`, `exec(open("train.py").read())` or a runner that execs a script
    namespace: dict = {"__name__": "__main__"}
    exec(compile(EXECUTED, "<string>", "exec"), namespace)
    found = how(namespace["loss"], (X,), {}, NO_STATIC)
    assert set(found.helpers) >= {"layer", "Net.__call__", "block"}
    (binding,) = found.helpers["layer"].bindings
    assert binding.owner is namespace and binding.key == "layer"
    # an entry with a file of its own adopts no exec'd code: whose it is, is unknown
    assert "layer" not in how(_calls_exec, (X,), {}, NO_STATIC).helpers


def _calls_exec(x):
    namespace: dict = {}
    exec(compile(EXECUTED, "<string>", "exec"), namespace)
    return namespace["layer"](x, 3.0).sum()


SCRIPTED = '''
import jax.numpy as jnp

exec("def wave(x):\\n    return jnp.sin(x) * jnp.cos(x)\\n", globals())

def model(x):
    for _ in range(3):
        x = wave(x)
    return x.sum()

def hidden(x):
    namespace = {"jnp": jnp}
    exec("def ripple(x):\\n    return jnp.tanh(x) + 1.0\\n", namespace)
    return namespace["ripple"](namespace["ripple"](x)).sum()
'''


def test_discovery_and_lines_agree_on_code_made_by_exec(tmp_path, monkeypatch):
    # one rule for both: exec'd into a user module's globals it is the user's (it was
    # nested by neither before, though --lines counted its lines); exec'd into a bare
    # dict nobody named it is not, for either
    import jitmagic

    scripted = _module(tmp_path, monkeypatch, "scripted", SCRIPTED)
    for how in (discover, profiled_discovery):
        assert "wave" in how(scripted.model, (X,), {}, NO_STATIC).helpers
        assert "ripple" not in how(scripted.hidden, (X,), {}, NO_STATIC).helpers
    # exec'd into another module of the user's, called from the entry's
    layers = _module(tmp_path, monkeypatch, "execd_layers", EXECD_LAYERS)
    caller = _module(tmp_path, monkeypatch, "execd_caller", EXECD_CALLER)
    assert layers.swish.__code__.co_filename == "<string>"
    for how in (discover, profiled_discovery):
        assert "execd_layers.swish" in how(caller.model, (X,), {}, NO_STATIC).helpers
    flat = jitmagic.lines(scripted.model, X).flat
    assert flat.row("<string>", 2).eqns_own == 9  # sin, cos, mul of `wave`, 3 calls
    hidden = jitmagic.lines(scripted.hidden, X).flat
    assert not [row for row in hidden.rows if row.file == "<string>"]


EXECD_LAYERS = ('import jax\n'
                'exec("def swish(x):\\n    return x * jax.nn.sigmoid(x)\\n", globals())\n')
EXECD_CALLER = """
import execd_layers as L

def model(x):
    for _ in range(3):
        x = L.swish(x) + 1.0
    return x.sum()
"""


def _module(tmp_path, monkeypatch, name: str, source: str):
    """``source`` imported as module ``name`` from a file of the user's."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module
