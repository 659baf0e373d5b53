"""The user's own logging and JAX settings under the watch, as hostile set-ups have them
(issue 51 items 10, 12, 13): explanations the user turns on in the watched code stay on
and reach their handler; a watch inside another, or under ``logging.disable``, reads
JAX's reasons as a lone one does; a static value whose ``__repr__`` raises runs as it
does unwatched."""

from __future__ import annotations

import functools
import logging
import math

import jax
import jax.numpy as jnp
import pytest
from IPython.utils.capture import capture_output

import jitmagic
from jitmagic._compat import CACHE_MISS_LOGGER
from jitmagic.model import ledger as L
from jitmagic.model.ledger import compiles as K

pytest_plugins = ["pytester"]


class Seen(logging.Handler):
    """A user's own handler: every message it is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def misses(self) -> list[str]:
        return [m for m in self.messages if m.startswith("TRACING CACHE MISS")]


@pytest.fixture
def handler():
    seen = Seen()
    logging.getLogger("jax").addHandler(seen)
    try:
        yield seen
    finally:
        logging.getLogger("jax").removeHandler(seen)
        jax.config.update("jax_explain_cache_misses", False)


def again(ledger: L.Ledger, function: str) -> list[K.Compile]:
    return [c for c in ledger.watched if c.function == function and c.reason.kind != K.FIRST]


def test_explanations_turned_on_in_a_block_stay_on_and_reach_the_users_handler(handler):
    @jax.jit
    def scale(x):
        return x * 2

    with jitmagic.watch() as w:
        jax.config.update("jax_explain_cache_misses", True)  # the user's own, to read them
        for n in (2, 3):
            scale(jnp.ones(n))
    assert jax.config.jax_explain_cache_misses is True  # was put back to off
    assert any("for scale defined at" in m for m in handler.misses())  # none reached it
    (shape,) = again(w.ledger, "scale")
    assert shape.reason.kind == K.SHAPE


def test_explanations_turned_on_in_a_cell_stay_on(ip, handler):
    with capture_output():
        ip.run_cell("%%jitwatch --no-plot\nimport jax, jax.numpy as jnp\n"
                    "jax.config.update('jax_explain_cache_misses', True)\n"
                    "jax.jit(lambda x: x - 9)(jnp.ones(2))\n")
    assert jax.config.jax_explain_cache_misses is True
    assert handler.misses()


def test_explanations_turned_off_in_a_block_stay_off(handler):
    jax.config.update("jax_explain_cache_misses", True)
    with jitmagic.watch():
        jax.config.update("jax_explain_cache_misses", False)
        jax.jit(lambda x: x - 10)(jnp.ones(2))
    assert jax.config.jax_explain_cache_misses is False
    assert not handler.misses()  # off: nothing reaches the user


def test_explanations_turned_on_in_a_marked_test_stay_on(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_flag='''
import jax, jax.numpy as jnp
import pytest

@pytest.mark.jitwatch(fail_after_warmup=1)
def test_turns_them_on():
    jax.config.update("jax_explain_cache_misses", True)
    jax.jit(lambda x: x + 11)(jnp.ones(2))

def test_they_are_still_on():
    try:
        assert jax.config.jax_explain_cache_misses is True
    finally:
        jax.config.update("jax_explain_cache_misses", False)
''')
    result = pytester.runpytest_inprocess("-p", "jitmagic.frontends.watch.pytest_plugin",
                                          "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_a_static_value_whose_repr_raises_runs_watched_and_is_said_not_shown():
    class Config:
        def __init__(self, depth):
            self.depth = depth

        def __hash__(self):
            return hash(self.depth)

        def __eq__(self, other):
            return isinstance(other, Config) and other.depth == self.depth

        def __repr__(self):
            raise RuntimeError("a repr that needs a database")

    @functools.partial(jax.jit, static_argnums=1)
    def forward(x, config):
        for _ in range(config.depth):
            x = jnp.tanh(x)
        return x

    with jitmagic.watch() as w:
        outs = [forward(jnp.ones(3), Config(d)) for d in (1, 2, 3)]  # raised when watched
    assert [float(o[0]) for o in outs] == pytest.approx(
        [math.tanh(1.0), math.tanh(math.tanh(1.0)), math.tanh(math.tanh(math.tanh(1.0)))])
    static = again(w.ledger, "forward")
    assert [c.reason.kind for c in static] == [K.STATIC, K.STATIC]
    assert static[0].reason.argument == "config"
    assert static[0].reason.after == "<a Config that could not be shown>"
    assert "static value of `config`: <a Config that could not be shown>" in str(w)


def test_a_watch_inside_another_reads_jaxs_reasons_and_where_it_was_defined():
    @jax.jit
    def inner_step(x):
        return x.sum()

    with jitmagic.watch() as outer, jitmagic.watch() as inner:
        for n in (2, 3):
            inner_step(jnp.ones(n))
    for w in (outer, inner):  # the inner one read "JAX gave no reason", defined at "—"
        (shape,) = again(w.ledger, "inner_step")
        assert shape.reason.kind == K.SHAPE and shape.reason.after == "f32[3]"
        assert shape.defined_at.endswith(__file__.rsplit("/", 1)[-1] + ":" + str(
            inner_step.__wrapped__.__code__.co_firstlineno))


@pytest.mark.parametrize("how", ["logging.disable", "a disabled logger"])
def test_a_watch_under_disabled_logging_reads_jaxs_reasons_and_shows_the_user_none(
        handler, how):
    @jax.jit
    def quiet_step(x):
        return x.mean()

    logger = logging.getLogger(CACHE_MISS_LOGGER)
    jax.config.update("jax_explain_cache_misses", True)  # the user's, but silenced
    if how == "logging.disable":
        logging.disable(logging.CRITICAL)  # as absl and some test set-ups do
    else:
        logger.disabled = True  # as logging.config.dictConfig leaves existing loggers
    try:
        with jitmagic.watch() as w:
            for n in (2, 3):
                quiet_step(jnp.ones(n))
        assert logging.root.manager.disable == (
            logging.CRITICAL if how == "logging.disable" else 0)
        assert logger.disabled is (how != "logging.disable")
        assert "isEnabledFor" not in vars(logger)
    finally:
        logging.disable(logging.NOTSET)
        logger.disabled = False
    (shape,) = again(w.ledger, "quiet_step")
    assert shape.reason.kind == K.SHAPE and shape.defined_at is not None
    assert not handler.misses()  # silenced by the user: it stays silent
