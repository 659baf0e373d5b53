"""CPU-time samples are judged only where they are ten ticks of the CPU clock or more.

On a TPU v5e host (gVisor, 2026-12-06) the process's CPU clock stepped in 10 ms: a
lowering of 8 ms wall time read 10 ms of CPU time in every run, flat and nested alike, so
the rule called it "no measurable difference" where wall time said 1.49× faster. The
tick is measured once a process, saved with the report, and a cold stage read on CPU time
under ten of them is shown but not judged."""

from __future__ import annotations

import math

import jax.numpy as jnp
from support import comparison

import jitmagic
from jitmagic.measure.sampling.clocks import cpu_tick
from jitmagic.model.comparison import Comparison
from jitmagic.model.stats.witness import WALL, under_ticks
from jitmagic.render.comparison import text_table

#: The TPU host's 24-block MLP, lower and trace stages in its 10 ms CPU time and its wall
#: time (2026-12-06), with the wait that made CPU time the report's clock.
MLP_FLAT = {"trace_s": [0.024, 0.023, 0.022], "trace_cpu_s": [0.02, 0.03, 0.03],
            "lower_s": [0.012, 0.012, 0.013], "lower_cpu_s": [0.01, 0.01, 0.01],
            "first_call_s": [2.4, 2.3, 2.5], "first_call_cpu_s": [3.2, 3.1, 3.3],
            "wait_s": [2.0, 2.0, 2.0]}
MLP_NESTED = {"trace_s": [0.008, 0.008, 0.009], "trace_cpu_s": [0.01, 0.01, 0.01],
              "lower_s": [0.008, 0.008, 0.009], "lower_cpu_s": [0.01, 0.01, 0.01],
              "first_call_s": [2.0, 2.1, 2.0], "first_call_cpu_s": [2.9, 3.0, 2.9],
              "wait_s": [2.0, 2.0, 2.0]}


def test_this_machines_cpu_clock_steps_finely_and_a_report_says_its_step():
    tick = cpu_tick()
    assert 0 < tick < 0.005
    result = jitmagic.compare(lambda x: jnp.sin(x) * 2, jnp.ones(4), repeat=2, number=1,
                              quiet=True)
    assert result.env["cpu_tick_s"] == tick
    assert Comparison.from_dict(result.to_dict()).env["cpu_tick_s"] == tick


def test_a_stage_of_a_few_ticks_is_shown_but_not_judged():
    c = comparison(MLP_FLAT, MLP_NESTED, env={"backend": "tpu", "cpu_tick_s": 0.01})
    assert c.busy and c.coarse("lower_s") and c.coarse("trace_s")
    assert c.difference("lower_s").kind == "inconclusive"  # the rule alone: "the same"
    assert c._ruled("lower_s").kind == "no measurable difference"
    assert not c.coarse("first_call_s")  # 3 s is 300 ticks: judged
    text = text_table(c)
    assert "lower, CPU time" in text
    assert "not judged: the CPU clock ticks in 10 ms" in text
    assert not c.coarse("lower_s", clock=WALL)  # wall time resolves it


def test_a_report_that_does_not_know_its_tick_is_judged_as_before():
    c = comparison(MLP_FLAT, MLP_NESTED, env={"backend": "tpu"})
    assert not c.coarse("lower_s")
    assert c.difference("lower_s").kind == "no measurable difference"
    assert not under_ticks([[0.01], [0.01]], math.nan)
    assert under_ticks([[0.01, 0.02], [0.5]], 0.01) and not under_ticks([[0.1], [0.5]], 0.01)
