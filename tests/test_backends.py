"""What jitmagic knows per backend (jitmagic.backends), read by platform name: no device
needed to test what a TPU or GPU gets."""

from __future__ import annotations

import pytest

from jitmagic import backends
from jitmagic.measure.sampling import rounds
from jitmagic.options import Options


def test_platform_names_and_aliases():
    assert backends.named("TPU") is backends.TPU
    assert backends.named("cuda") is backends.GPU
    assert backends.named("cpu") is backends.CPU
    other = backends.named("metal")
    assert other.label == "METAL" and not other.host_clock_times_execution


@pytest.mark.parametrize(("platform", "budget"), [("cpu", 30.0), ("tpu", 75.0), ("gpu", 75.0)])
def test_auto_budget_is_the_backends_unless_given(monkeypatch, platform, budget):
    """On a TPU v5e the seed's cold compiles vary 3.7-5.0 s: 30 s held 3 pairs and left a
    1.5x difference inconclusive; an accelerator's default is long enough for about 8."""
    monkeypatch.setattr(backends, "running", lambda: backends.named(platform))
    assert rounds.rounds_for(Options()).budget_s == budget
    assert rounds.rounds_for(Options(budget=12)).budget_s == 12


def test_on_an_accelerator_cpu_time_never_judges_execution(monkeypatch):
    """The host's CPU time covers tracing, lowering and XLA's compile, which run on the
    host; a TPU's or GPU's execution does not run there: no CPU seconds of the steady
    calls are kept, so a busy host's verdict on execution is on wall time."""
    import jax.numpy as jnp

    import jitmagic

    def f(x):
        return jnp.tanh(x @ x.T).sum()

    monkeypatch.setattr(backends, "running", lambda: backends.TPU)
    result = jitmagic.compare(f, jnp.ones((8, 8)), repeat=2, number=2, quiet=True)
    assert "execute_cpu_s" not in result.flat.samples
    assert len(result.flat.samples["compile_cpu_s"]) == 2  # the host's own work, kept
    assert result.clock_of("execute_s") == "wall"
    monkeypatch.setattr(backends, "running", lambda: backends.CPU)
    on_cpu = jitmagic.compare(f, jnp.ones((8, 8)), repeat=2, number=2, quiet=True)
    assert len(on_cpu.flat.samples["execute_cpu_s"]) == 2
