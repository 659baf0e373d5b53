"""A busy machine: CPU time beside wall time in every run, how busy the machine was, the
clock that decides, the alternating order, the warm-up, and "same compiled work".

The timed claims (a verdict under load) live in benchmarks/busy.py; here the samples are
crafted, or a real run's samples are checked for what they must hold whatever the load.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from support import comparison, variant

import jitmagic
from jitmagic.measure.pipeline import FirstCalls
from jitmagic.measure.sampling import contention
from jitmagic.measure.sampling.monitor import LOWER_EVENT
from jitmagic.measure.sampling.rounds import Rounds
from jitmagic.measure.sampling.runner import ColdSample, Sampler, in_turn
from jitmagic.measure.sampling.stops import Checkpoint
from jitmagic.measure.sampling.structure import ProgramFacts, compiled_work
from jitmagic.model.comparison import Comparison
from jitmagic.model.rows import CPU_PHASES, PHASES, slowest
from jitmagic.model.stats.rule import FASTER, INCONCLUSIVE, MAX_PAIRS, MAX_PAIRS_BUSY, SLOWER
from jitmagic.model.stats.verdicts import MOST_ROUNDS
from jitmagic.model.stats.witness import BUSY_SHARE, CPU, WALL, clock_for, cpu_key, waited_share
from jitmagic.options.values import AUTO

# --- a real run's samples ------------------------------------------------------------


def layer(x):
    for _ in range(4):
        x = jnp.sin(x) + jnp.cos(x)
    return x


def model(x):
    return sum(layer(x) for _ in range(8))


@pytest.fixture(scope="module")
def measured() -> Comparison:
    return jitmagic.compare(model, jnp.ones(64), repeat=3, number=3, progress=False)


def test_every_timed_sample_has_its_cpu_seconds_beside_it(measured):
    for v in measured.variants.values():
        for phase in PHASES:
            assert len(v.samples[cpu_key(phase)]) == len(v.samples[phase]) == 3, phase
            assert all(x >= 0 for x in v.samples[cpu_key(phase)])


def test_stage_cpu_seconds_are_bounded_by_the_first_call_they_are_part_of(measured):
    for v in measured.variants.values():
        for run in range(3):
            stages = sum(v.samples[cpu_key(p)][run] for p in PHASES[:3])
            assert stages <= v.samples[cpu_key("first_call_s")][run] + 1e-3


def test_each_cold_run_says_how_long_its_threads_waited_for_a_cpu(measured):
    for v in measured.variants.values():
        assert len(v.samples["wait_s"]) == 3 and all(w >= 0 for w in v.samples["wait_s"])
        assert len(v.samples["load"]) == 3
    share = measured.waited_share
    assert share is not None and 0 <= share < 1
    assert measured.busy == (share >= BUSY_SHARE)


def test_the_samples_round_trip_through_a_saved_report(measured, tmp_path):
    path = tmp_path / "r.json"
    jitmagic.save(measured, path)
    again = jitmagic.load(path)
    assert again.flat.samples == measured.flat.samples
    assert again.verdict.text == measured.verdict.text
    saved = json.loads(path.read_text())["variants"]["flat"]["samples"]
    assert set(CPU_PHASES) <= set(saved) and "wait_s" in saved


def test_xla_made_the_same_program_of_both_variants(measured):
    # nested jit is inlined by XLA: the same instructions, flops and bytes
    assert measured.same_compiled is True
    flat, nested = measured.flat, measured.nested
    assert flat.compiled_ops == nested.compiled_ops > 0
    assert flat.compiled_flops == nested.compiled_flops > 0
    assert flat.compiled_bytes_accessed == nested.compiled_bytes_accessed > 0
    assert "same compiled program" in str(measured)


def test_a_different_program_is_not_called_the_same():
    from jitmagic.measure.sampling.structure import same_compiled

    def heavier(x):
        return model(x) * jnp.tanh(x)

    def shape(fn) -> ProgramFacts:  # as a row's cold run reads it
        made = ProgramFacts()
        compiled_work(jax.jit(fn).trace(jnp.ones(64)).lower().compile(), made)
        return made

    a, b, again = shape(model), shape(heavier), shape(model)
    assert same_compiled({"flat": a, "nested": b}) is False
    assert same_compiled({"flat": a, "nested": again}) is True
    assert same_compiled({"flat": a}) is None
    assert same_compiled({"flat": a, "nested": ProgramFacts()}) is None  # stopped before XLA


# --- how busy: /proc as it may be -----------------------------------------------------


def test_missing_proc_files_read_as_not_measured(monkeypatch, tmp_path):
    monkeypatch.setattr(contention, "TASKS", tmp_path / "no-such-folder")
    monkeypatch.setattr(contention, "PRESSURE", tmp_path / "no-such-file")
    before, after = contention.read(), contention.read()
    assert before.wait_s is None and before.pressure_s is None
    taken = contention.since(before, after)
    assert "wait_s" not in taken and "pressure_s" not in taken and taken["cpu_s"] >= 0


def test_malformed_proc_files_read_as_not_measured(monkeypatch, tmp_path):
    task = tmp_path / "task" / "1"
    task.mkdir(parents=True)
    (task / "schedstat").write_text("garbage\n")
    (tmp_path / "cpu").write_text("some avg10=x total=notanumber\nfull total=1\n")
    monkeypatch.setattr(contention, "TASKS", tmp_path / "task")
    monkeypatch.setattr(contention, "PRESSURE", tmp_path / "cpu")
    assert contention.read().wait_s is None and contention.read().pressure_s is None


def test_a_counter_that_goes_backwards_is_left_out():
    before = contention.Reading(1.0, 5.0, 9.0)
    after = contention.Reading(1.5, 4.0, 9.5)  # a thread ended between the reads
    taken = contention.since(before, after)
    assert taken["cpu_s"] == 0.5 and "wait_s" not in taken and taken["pressure_s"] == 0.5


def test_this_linux_has_the_counters():
    if not Path("/proc/self/task").exists():
        pytest.skip("no /proc here")
    assert contention.read().wait_s is not None


# --- the clock that decides: crafted samples ----------------------------------------

#: Seen under 3 spinning processes on 2 cores: wall times stretched and scattered,
#: CPU times close together, the threads waiting half the time they could have run.
BUSY_FLAT = {"first_call_s": [0.31, 0.52, 0.26, 0.61, 0.33],
             "first_call_cpu_s": [0.200, 0.204, 0.198, 0.206, 0.201],
             "wait_s": [0.2] * 5}
BUSY_NESTED = {"first_call_s": [0.35, 0.19, 0.41, 0.22, 0.30],
               "first_call_cpu_s": [0.150, 0.148, 0.152, 0.151, 0.149],
               "wait_s": [0.15] * 5}


def _busy(flat=BUSY_FLAT, nested=BUSY_NESTED, **fields) -> Comparison:
    return comparison(flat, nested, every=0.01, **fields)


def test_on_a_busy_machine_cpu_time_decides_and_wall_time_is_shown_beside_it():
    c = _busy()
    assert c.busy and c.clock_of("first_call_s") == CPU
    assert c.difference("first_call_s", WALL).kind == INCONCLUSIVE  # wall cannot tell
    assert c.verdict.kind == FASTER
    line = c.verdict.headline
    assert line.startswith("Nested jit on `layer`: first call 1.34× less CPU time (")
    # the saved verdict and the repr name the clock their ratio is of (a new user took
    # a repr's CPU ratio, '1.09× slower', for the wall one)
    assert c.to_dict()["verdict"]["clock"] == CPU and c.to_dict()["why_clock"] == CPU
    assert repr(c).startswith("<Comparison model: nested first call 1.34× less CPU time (")
    # the wall ratio is no finding: its verdict comes first, as every undecided one's does
    # ("wall 1.10× faster (...), inconclusive" read as a finding, then taken back)
    assert line.endswith("; wall: inconclusive, 1.10× faster (0.42×–4.82×), on a busy machine")
    level = {**BUSY_NESTED, "first_call_s": [0.400, 0.401, 0.399, 0.400, 0.402]}
    same = _busy({**BUSY_FLAT, "first_call_s": [0.400, 0.402, 0.399, 0.401, 0.400]}, level)
    assert same.difference("first_call_s", WALL).kind == "no measurable difference"
    assert same.verdict.headline.endswith(  # said once, not 'no measurable difference (...),
        "; wall: no measurable difference (0.99×–1.01×), on a busy machine")  # no meas...'
    from jitmagic.render.charts.phases import BUSY_NOTE, phases_figure

    cold, steady = phases_figure(c).axes  # the bars are the verdict's CPU time, and say so
    assert "s, CPU time, cold first call" in cold.get_xlabel() and \
        BUSY_NOTE in cold.get_xlabel() and "wall time stretched" in BUSY_NOTE
    # its title gives the verdict's one number; the clock is named once, on the axis
    assert cold.get_title().endswith("flat/nested 1.34×")
    assert steady.get_ylabel().endswith("per call, wall time")  # execute: not judged on CPU
    quiet = comparison({k: v for k, v in BUSY_FLAT.items() if k != "wait_s"},
                       {k: v for k, v in BUSY_NESTED.items() if k != "wait_s"}, every=0.01)
    assert not quiet.busy and BUSY_NOTE not in phases_figure(quiet).axes[0].get_xlabel()
    text = c.report(verbose=True)
    assert "The machine was busy: these runs waited for a CPU 50% of the time" in text
    assert "first call, CPU time" in text  # the full table shows both clocks
    # at a glance: one number on one clock, CPU time in place of wall time in the rows
    head, table, *_ = str(c).split("\n  ")
    assert "first call take 1.34× less CPU time (" in head and "wall" not in head
    assert table.startswith("CPU time ")  # the rows' clock, where each decides on it
    rows = {ln.split("  ")[0]: ln for ln in str(c).split("\n  ")[2:7]}
    assert "first call" in rows and "wall" not in rows["first call"]
    assert "trace (wall time)" in rows  # no CPU time of it measured: its clock is named
    assert "busy machine: CPU time judged (wall time: inconclusive)" in str(c)


def test_no_stage_differing_in_cpu_time_is_said_on_that_clock():
    """A new user read 'No stage (trace, lower, XLA compile) differs measurably' beside a
    wall-time lower row whose interval excluded 1: on a busy machine the stages are
    decided on CPU time, and the sentence now says so."""
    tight = [0.0100, 0.0101, 0.0099, 0.0100, 0.0102]
    stages = {f"{p}{k}": list(tight) for p in ("trace", "lower", "compile")
              for k in ("_s", "_cpu_s")}
    slower_lower = {**stages, "lower_s": [x * 2.3 for x in tight]}
    c = _busy({**BUSY_FLAT, **stages}, {**BUSY_NESTED, **slower_lower})
    assert c.clock_of("lower_s") == CPU
    assert c.difference("lower_s", WALL).kind == "slower"  # the wall row is decided ...
    assert c.difference("lower_s").kind == "no measurable difference"  # ... CPU time not
    assert c.verdict.text.endswith(
        "; no stage (trace, lower, XLA compile) differs measurably in CPU time.")


def test_on_a_quiet_machine_wall_time_decides_and_a_cpu_verdict_the_other_way_is_said():
    flat = {"first_call_s": [0.30, 0.31, 0.30, 0.29, 0.30],
            "first_call_cpu_s": [0.20, 0.20, 0.21, 0.20, 0.20], "wait_s": [0.001] * 5}
    nested = {"first_call_s": [0.20, 0.21, 0.20, 0.20, 0.19],
              "first_call_cpu_s": [0.30, 0.30, 0.31, 0.30, 0.30], "wait_s": [0.001] * 5}
    c = comparison(flat, nested, every=0.01)
    assert not c.busy and c.clock_of("first_call_s") == WALL
    assert c.verdict.kind == FASTER
    assert "CPU time points the other way: 1.50× more CPU time" in c.verdict.headline
    assert "The machine was busy" not in str(c)


def test_without_a_measured_wait_wall_time_decides():
    flat = {k: v for k, v in BUSY_FLAT.items() if k != "wait_s"}
    nested = {k: v for k, v in BUSY_NESTED.items() if k != "wait_s"}
    c = comparison(flat, nested, every=0.01)
    assert c.waited_share is None and c.clock_of("first_call_s") == WALL


def test_cpu_time_decides_only_where_every_run_has_it():
    flat = dict(BUSY_FLAT, first_call_cpu_s=BUSY_FLAT["first_call_cpu_s"][:3])
    assert clock_for([flat, BUSY_NESTED]) == WALL
    assert clock_for([BUSY_FLAT, BUSY_NESTED]) == CPU
    assert clock_for([BUSY_FLAT, BUSY_NESTED], "trace_s") == WALL  # no trace samples


def test_the_share_is_of_the_time_the_threads_could_run():
    # three threads that waited 0.3 s in all beside 0.1 s of CPU: 75%, whatever the wall
    assert waited_share([{"wait_s": [0.3], "first_call_cpu_s": [0.1],
                          "first_call_s": [0.12]}]) == pytest.approx(0.75)
    assert waited_share([{"first_call_s": [0.1]}]) is None


def test_an_older_report_without_cpu_samples_is_judged_on_wall_time_as_before():
    old = comparison({"first_call_s": [0.3, 0.31, 0.3]}, {"first_call_s": [0.1, 0.11, 0.1]},
                     every=0.01)
    again = Comparison.from_dict(old.to_dict())
    assert again.clock_of("first_call_s") == WALL and again.verdict.kind == FASTER
    assert "cpu" not in json.dumps(old.to_dict()["variants"]["flat"]["samples"])


def test_several_processes_merge_a_run_with_its_cpu_seconds_and_wait():
    one = {"first_call_s": [1.0, 2.0], "first_call_cpu_s": [0.9, 1.1], "wait_s": [0.0, 0.5]}
    two = {"first_call_s": [1.5, 1.0], "first_call_cpu_s": [1.0, 0.8], "wait_s": [0.4, 0.0]}
    merged = slowest([one, two])
    assert merged == {"first_call_s": [1.5, 2.0], "first_call_cpu_s": [1.0, 1.1],
                      "wait_s": [0.4, 0.5]}


# --- same compiled work -------------------------------------------------------------


def _executes(flat, nested, same):
    return comparison({"execute_s": flat}, {"execute_s": nested}, every=0.1,
                      same_compiled=same)


def test_an_execute_gap_between_the_same_compiled_program_is_not_a_difference():
    # 1.47× (1.27×–1.69×) per call, between two compilations of one program
    flat, nested = [92e-6, 88e-6, 95e-6, 90e-6, 91e-6], [60e-6, 62e-6, 64e-6, 61e-6, 63e-6]
    c = _executes(flat, nested, same=True)
    assert c.difference("execute_s").kind == INCONCLUSIVE
    assert "same compiled program" in str(c)
    assert _executes(flat, nested, same=False).difference("execute_s").kind == FASTER


def test_a_withheld_gap_says_not_judged_rather_than_inconclusive():
    # the rule alone calls it faster (its interval lies wholly above 1): the table must not
    # print "inconclusive" beside such an interval, as docs/significance.md's rule reads
    flat, nested = [92e-6, 88e-6, 95e-6, 90e-6, 91e-6], [60e-6, 62e-6, 64e-6, 61e-6, 63e-6]
    c = _executes(flat, nested, same=True)
    assert c.withheld("execute_s") and not _executes(flat, nested, same=False).withheld(
        "execute_s")
    (row,) = [line for line in c.report(verbose=True).splitlines()
              if line.startswith("execute")]
    assert "not judged: same compiled program" in row and "inconclusive" not in row
    # at a glance, 91 µs against 62 µs of one program is no difference: said so, no ratio
    (row,) = [line for line in str(c).splitlines() if line.startswith("  execute")]
    assert row.split()[-4:] == ["inconclusive:", "same", "compiled", "program"]
    assert "×" not in row
    unsure = _executes([90e-6, 60e-6, 95e-6], [61e-6, 93e-6, 64e-6], same=True)
    assert not unsure.withheld("execute_s")
    (row,) = [line for line in unsure.report(verbose=True).splitlines()
              if line.startswith("execute")]
    assert "inconclusive, same compiled program" in row


def test_same_compiled_program_far_apart_is_still_said():
    c = _executes([9e-4, 9.1e-4, 9.2e-4, 9e-4, 9.1e-4], [1e-4, 1.01e-4, 1.02e-4, 1e-4, 1.01e-4],
                  same=True)
    assert c.difference("execute_s").kind == FASTER


def test_same_compiled_round_trips_and_older_reports_lack_it():
    c = _executes([1e-4] * 3, [1e-4] * 3, same=True)
    assert Comparison.from_dict(c.to_dict()).same_compiled is True
    assert "same_compiled" not in _executes([1e-4] * 3, [1e-4] * 3, same=None).to_dict()


# --- the order and the warm-up --------------------------------------------------------


def test_rows_alternate_their_order_round_by_round():
    assert [in_turn(["a", "b"], r) for r in range(4)] == [["a", "b"], ["b", "a"]] * 2
    assert in_turn(["a", "b", "c", "d"], 1) == ["d", "c", "b", "a"]


class _Row:
    """A sampler row that records when it ran."""

    args: tuple = ()
    kwargs: dict = {}
    warm_up = False

    def __init__(self, name, log):
        self.name, self.log = name, log

    def cold(self, monitor, check):
        self.log.append(self.name)
        return ColdSample({"first_call_s": 0.001}, lambda: None, None)

    def describe(self, cold):
        return ProgramFacts()


def test_the_sampler_runs_flat_first_then_nested_first_in_turn():
    log: list[str] = []
    runs = Sampler({n: _Row(n, log) for n in ("flat", "nested")}, ("first_call_s", "execute_s"))
    runs.measure(4, 1, None, Checkpoint())  # type: ignore[arg-type]
    assert log == ["flat", "nested", "nested", "flat", "flat", "nested", "nested", "flat"]


def test_the_nested_variant_is_lowered_once_untimed_before_the_timed_runs():
    from jitmagic.measure.variants.build import build_variant
    from jitmagic.measure.variants.entry import plan_entry
    from jitmagic.measure.variants.preflight import checked_nested

    plan = plan_entry(model, (jnp.ones(8),), {})
    nested = build_variant("nested", plan)
    lowered: list[str] = []

    def listen(event, secs, **kw):
        if event == LOWER_EVENT:
            lowered.append(kw.get("fun_name"))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        checked_nested(nested, plan)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert lowered == ["jit(model)"]


def test_a_slower_clock_word_reads_as_more_cpu_time():
    c = _busy(flat=BUSY_NESTED, nested=BUSY_FLAT)
    assert c.verdict.kind == SLOWER
    assert "1.34× more CPU time" in c.verdict.headline


# --- diffs and gates on a busy machine --------------------------------------------

QUIET = {"first_call_s": [0.200, 0.202, 0.199, 0.201, 0.200],
         "first_call_cpu_s": [0.198, 0.200, 0.197, 0.199, 0.198], "wait_s": [0.001] * 5}
#: The same code measured again on a busy machine: wall stretched, CPU time as before.
LOADED = {"first_call_s": [0.41, 0.52, 0.38, 0.61, 0.45],
          "first_call_cpu_s": [0.199, 0.201, 0.198, 0.200, 0.199], "wait_s": [0.2] * 5}


def test_a_diff_against_a_busy_run_is_judged_on_cpu_time():
    old = comparison(QUIET, QUIET, every=0.01)
    new = comparison(LOADED, LOADED, every=0.01)
    d = jitmagic.diff(old, new)
    first = d.stage("flat", "first_call_s")
    assert first.clock == CPU and not first.significant
    assert first.label == "first call, CPU time"
    assert not d.regressions(1.2)  # the load is not a regression of the code
    doubled = dict(LOADED, first_call_cpu_s=[2 * x for x in LOADED["first_call_cpu_s"]])
    worse = jitmagic.diff(old, comparison(doubled, doubled, every=0.01))
    assert [s.label for s in worse.regressions(1.2)] == ["first call, CPU time"] * 2


def test_a_diff_of_two_quiet_runs_is_judged_on_wall_time():
    old = comparison(QUIET, QUIET, every=0.01)
    d = jitmagic.diff(old, comparison(QUIET, QUIET, every=0.01))
    assert d.stage("nested", "first_call_s").clock == WALL


def test_a_diff_says_why_it_judged_on_cpu_time():
    alike = dict(LOADED, wait_s=[0.15] * 5)  # busy too: a load alike NEW's
    old = comparison(alike, alike, every=0.01)
    d = jitmagic.diff(old, comparison(LOADED, LOADED, every=0.01))
    assert d.clock_line() == ("judged on CPU time, not wall time: OLD's runs waited for a CPU "
                              "43% of the time they were ready to run and NEW's runs waited "
                              "for a CPU 50% of the time they were ready to run (wall time on "
                              "a busy machine moves with the load, not with the code)")
    assert "judged on CPU time, not wall time" in str(d) and d.loads_line() is None
    quiet = comparison(QUIET, QUIET, every=0.01)
    assert jitmagic.diff(quiet, quiet).clock_line() is None
    # loads apart: not judged, so no clock is claimed
    assert jitmagic.diff(quiet, comparison(LOADED, LOADED, every=0.01)).clock_line() is None


def test_a_clock_is_named_wall_or_cpu_and_nothing_else():
    c = _busy()
    assert c.difference("first_call_s", "cpu") == c.difference("first_call_s", CPU)
    with pytest.raises(ValueError, match="a clock is 'wall' or 'CPU', not 'bogus'"):
        c.difference("first_call_s", "bogus")


def test_an_interval_end_near_1_shows_which_side_of_1_it_lies():
    from jitmagic.model.stats.rule import Difference
    from jitmagic.render.verdicts import interval

    assert interval(Difference(FASTER, 1.09, True, 9, 1.004, 1.16)) == "(1.004×–1.16×)"
    assert interval(Difference(INCONCLUSIVE, 1.08, True, 9, 0.99996, 1.25)) == \
        "(0.99996×–1.25×)"


# --- how many rounds -r auto takes on a busy machine ----------------------------------


def _rounds_taken(rounds: Rounds) -> int:
    rounds.start()
    done = 0
    while rounds.another(done):
        done += 1
    return done


def test_auto_takes_up_to_twice_the_rounds_once_the_machine_is_busy():
    undecided = {"decided": lambda: False, "budget_s": 1e9}
    assert _rounds_taken(Rounds(AUTO, **undecided)) == MAX_PAIRS == 9
    busy = Rounds(AUTO, busy=lambda: True, **undecided)
    assert _rounds_taken(busy) == MAX_PAIRS_BUSY == 18 and busy.ended == MOST_ROUNDS
    assert _rounds_taken(Rounds(5, busy=lambda: True, **undecided)) == 5  # a fixed -r N


class _Rows:
    """What FirstCalls reads of a sampler: its rows' samples so far."""

    def __init__(self, flat: dict, nested: dict):
        self.samples = {"flat": flat, "nested": nested}
        self.subjects = dict.fromkeys(self.samples)
        self.errors: dict = {}


def test_the_first_calls_say_the_machine_is_busy_where_cpu_time_decides():
    busy = FirstCalls(_Rows(BUSY_FLAT, BUSY_NESTED))  # type: ignore[arg-type]
    assert busy.decided() and busy.busy()  # CPU time: 1.34× less, decided
    quiet_flat = {k: v for k, v in BUSY_FLAT.items() if k != "wait_s"}
    quiet_nested = {k: v for k, v in BUSY_NESTED.items() if k != "wait_s"}
    quiet = FirstCalls(_Rows(quiet_flat, quiet_nested))  # type: ignore[arg-type]
    assert not quiet.decided() and not quiet.busy()  # wall time: too scattered to tell


def test_an_undecided_busy_run_says_it_took_the_most_a_busy_machine_allows_once():
    runs = 18
    flat = {"first_call_s": [1.0, 1.5] * (runs // 2), "first_call_cpu_s": [0.20, 0.26] * 9,
            "wait_s": [0.5] * runs}
    nested = {"first_call_s": [1.2, 1.0] * (runs // 2), "first_call_cpu_s": [0.24, 0.19] * 9,
              "wait_s": [0.5] * runs}
    c = comparison(flat, nested, every=0.01, repeats_ended=MOST_ROUNDS)
    assert c.busy and c.verdict.kind == INCONCLUSIVE
    line = c.verdict.headline
    assert ("after 18 runs; 18 runs is the most -r auto takes; wall: inconclusive, 1.14× "
                "faster") in line
    assert line.endswith(" on a busy machine") and line.count("busy machine") == 1


def test_one_program_measured_once_on_a_busy_machine_is_shown_on_cpu_time_as_it_says():
    """A function with no helper is measured once (flat); on a busy machine its causes
    read 'Why the first call takes 54.5 ms (flat)' in wall time, under a line saying the
    process's CPU time decided: the empty nested variant made the clock wall."""
    flat = variant("flat", {"first_call_s": [0.060, 0.055, 0.050],
                            cpu_key("first_call_s"): [0.030, 0.028, 0.025],
                            "wait_s": [0.040, 0.036, 0.033]}, every=0.01)
    flat = dataclasses.replace(flat, samples={**flat.samples,
                                              cpu_key("compile_s"): [0.005] * 3,
                                              cpu_key("trace_s"): [0.002] * 3,
                                              cpu_key("lower_s"): [0.001] * 3})
    nested = variant("nested", {}, helpers=())
    c = comparison(flat, nested)
    assert c.busy and c.clock_of("first_call_s") == CPU
    said = c.report(verbose=True)
    assert "Why the first call takes 28 ms (flat, CPU time: the machine was busy)" in said


#: A ratio said with its interval: ``1.34× more CPU time (1.31×–1.37×``.
SAID = re.compile(r"(\d+\.\d+)× (?:more CPU time|less CPU time|slower|faster)"
                  r"[^(\n]{0,40}\((\d+\.\d+)×–(\d+\.\d+)×")


def test_a_ratio_turned_round_for_its_words_turns_its_interval_with_it():
    """A teacher read "the first call take 1.04× more CPU time (0.90×–0.99×…)": the ratio
    below 1 was turned to say "more", its interval was not. Slower on both clocks here:
    every ratio said with a side lies inside the interval said with it."""
    slower = {**BUSY_FLAT, "first_call_s": [x * 1.5 for x in BUSY_FLAT["first_call_s"]]}
    c = _busy(flat=BUSY_NESTED, nested=slower)
    assert c.difference("first_call_s", CPU).ratio < 1 and \
        c.difference("first_call_s", WALL).ratio < 1
    shown = [str(c), c.verdict.text, c.report(verbose=True)]
    found = [m.groups() for text in shown for m in SAID.finditer(text)]
    assert any(float(r) > 1 for r, _, _ in found) and len(found) >= 3
    for ratio, low, high in found:
        assert float(low) <= float(ratio) <= float(high), (ratio, low, high)


def test_the_chart_draws_the_figures_the_glance_table_shows_on_its_clock():
    """A teacher's busy machine: the headline said 1.09 s → 425 ms of CPU time, the chart's
    bars 7.75 s and 2.77 s of wall time, its legend "trace 23.4×" where the table read
    14.7×. The chart now draws the report's medians on the clock that decides, and the
    table's own ratios."""
    from jitmagic.render.charts.phases import phases_figure

    stages = {"trace_s": [0.09, 0.20, 0.05, 0.30, 0.12], "trace_cpu_s": [0.060] * 5,
              "lower_s": [0.03, 0.07, 0.04, 0.09, 0.05], "lower_cpu_s": [0.020] * 5,
              "compile_s": [0.08, 0.15, 0.09, 0.22, 0.11], "compile_cpu_s": [0.050] * 5}
    halved = {k: [x / 2 for x in xs] for k, xs in stages.items()}
    flat = variant("flat", {**BUSY_FLAT, **stages}, every=0.01, stages_from="events")
    nested = variant("nested", {**BUSY_NESTED, **halved}, every=0.01, stages_from="events")
    c = comparison(flat, nested)
    assert c.clock_of("first_call_s") == c.clock_of("trace_s") == CPU
    rows = {cells[0]: cells for r in str(c).split("\n  ")[1:7]
            if (cells := re.split(r"\s{2,}", r.strip()))}
    cold, _ = phases_figure(c).axes
    labels = [t.get_text() for t in cold.texts]
    assert labels == [f"first call {rows['first call'][1]}", f"first call {rows['first call'][2]}"]
    assert "CPU time" in cold.get_xlabel() and "wall time," not in cold.get_xlabel()
    assert cold.get_title().endswith(f"flat/nested {rows['first call'][-1]}")
    legend = [t.get_text() for t in cold.figure.legends[0].get_texts()]
    for stage in ("trace", "lower", "XLA compile"):
        assert f"{stage} {rows[stage][-1]}" in legend
    # the bars (in ms) end at the CPU-time medians the table shows: the median run's parts
    assert rows["first call"][1:3] == ["201 ms", "150 ms"]
    ends = {round(p.get_x() + p.get_width(), 6) for p in cold.patches}
    assert {201.0, 150.0} <= ends and max(ends) == 201.0
