"""Helpers under one decorator of the user's (``functools.wraps``, or a closure bound under
the decorated name) are told apart by the function the user wrote, not the shared
wrapper's code: each nested under a jit named after it, each listed in the verdict with
its own calls, ``--nest`` nesting only the one named, ``--attribute`` timing each apart."""

from __future__ import annotations

import re

import decorated_layers as L
import jax.numpy as jnp
import pytest

import jitmagic

X = jnp.ones((4, 4))
ONCE = "--quiet -r 1 -n 1 -o"
THREE = {"attention": 2, "ffn": 2, "layer_norm": 4}


def _jit_names(text: str) -> set[str]:
    return set(re.findall(r"\bname=([\w.]+)", text))


@pytest.fixture
def module_ns(ip):
    ip.user_ns.update(L=L, x=X)
    yield
    for k in ("L", "x"):
        ip.user_ns.pop(k, None)


def test_three_helpers_of_a_module_under_one_decorator_are_each_nested(ip, module_ns):
    r = ip.run_line_magic("jitcompare", f"{ONCE} L.block(x)")
    assert r.nested.helper_calls == THREE and set(r.nested.helpers) == set(THREE)
    assert r.nested.inline == () and r.outputs_match
    assert {"attention", "ffn", "layer_norm"} <= _jit_names(r.nested.jaxpr_text)
    assert r.nested.nested_calls - r.flat.nested_calls == 8  # one jit per call, as by hand
    listed = r.report(verbose=True)
    for name, calls in THREE.items():
        assert f"{name} ({calls} jit calls)" in listed, listed
        assert f"`{name}`" in r.verdict.text, r.verdict.text


def _only_attention(r, name: str = "attention") -> None:
    assert r.nested.helpers == (name,) and r.nested.helper_calls == {name: 2}
    names = _jit_names(r.nested.jaxpr_text)
    assert name in names, names
    assert not {n for n in names if n.endswith(("ffn", "layer_norm"))}, names


def test_nest_names_one_helper_under_a_shared_decorator(ip, module_ns):
    _only_attention(ip.run_line_magic("jitcompare", f"{ONCE} --nest attention L.block(x)"))


def model(x):
    return L.block(x)


def test_nest_names_it_as_the_call_site_writes_it():
    """``L.attention`` names the wrapper the module binds: the helper behind it."""
    r = jitmagic.compare(model, X, nest=["L.attention"], repeat=1, number=1, quiet=True)
    _only_attention(r, "decorated_layers.attention")


def test_attribute_keeps_each_decorated_helpers_calls_apart(ip, module_ns):
    r = ip.run_line_magic("jitcompare", f"{ONCE} --attribute L.block(x)")
    assert {h.helper: h.calls for h in r.attribution.helpers} == THREE


def test_an_entry_under_the_same_decorator_is_not_its_own_helper():
    r = jitmagic.compare(L.decorated_block, X, repeat=1, number=1, quiet=True)
    assert r.nested.helper_calls == {"block": 1, **THREE}, r.nested.helper_calls
    assert r.outputs_match


WRAPS_CELL = """\
import functools
import jax.numpy as jnp

def logged(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper

@logged
def scale(x):
    return jnp.sin(x) * 2.0

@logged
def shift(x):
    return jnp.cos(x) + 1.0

def model(x):
    for _ in range(3):
        x = shift(scale(x))
    return x
"""

#: The same without ``functools.wraps``: each wrapper is bound under its function's name.
CLOSURE_CELL = WRAPS_CELL.replace("    @functools.wraps(f)\n", "")


@pytest.mark.parametrize("cell", [WRAPS_CELL, CLOSURE_CELL], ids=["wraps", "closure"])
def test_two_helpers_of_a_cell_under_one_decorator(ip, cell):
    ip.run_cell(cell)
    try:
        r = ip.run_line_magic("jitcompare", f"{ONCE} model(jnp.ones(3))")
        assert r.nested.helper_calls == {"scale": 3, "shift": 3}, r.nested.helper_calls
        assert {"scale", "shift"} <= _jit_names(r.nested.jaxpr_text)
        r = ip.run_line_magic("jitcompare", f"{ONCE} --nest shift model(jnp.ones(3))")
        assert r.nested.helper_calls == {"shift": 3}
        r = ip.run_line_magic("jitcompare", f"{ONCE} --attribute model(jnp.ones(3))")
        assert {h.helper: h.calls for h in r.attribution.helpers} == {"scale": 3, "shift": 3}
    finally:
        for k in ("logged", "scale", "shift", "model", "functools", "jnp"):
            ip.user_ns.pop(k, None)
