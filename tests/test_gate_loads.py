"""The timing gate across loads: a baseline and a run measured under materially different
loads are not judged on time (and say why), so unchanged code never fails for the load;
at alike loads a real slowdown still fails.

Crafted reports only (nothing timed here): their CPU times are shaped as
benchmarks/cpu_across_loads.py measured them, OLD's threads waiting 60% of the time
they were ready to run (two spinners on 2 cores) and NEW's 17% (none), the same code
taking 1.5× the CPU seconds at the quieter load, as the pytest gate met it (1.35–1.53×).
"""

from __future__ import annotations

import pytest
from support import comparison

import jitmagic
from jitmagic.frontends.command import main
from jitmagic.frontends.pytest_plugin import report_name
from jitmagic.model.diff import NOT_JUDGED
from jitmagic.model.reports.storage import save
from jitmagic.model.stats.witness import loads_differ
from jitmagic.render.diff import gate_notes

pytest_plugins = ["pytester"]


def measured(cpu_s: float, waited: float):
    """A report whose every cold first call took ``cpu_s`` CPU seconds (tight runs) while
    its threads waited for a CPU a share ``waited`` of the time they were ready to run."""
    cpu = [cpu_s * k for k in (1.0, 1.01, 0.99, 1.005, 0.995)]
    wait = [c * waited / (1 - waited) for c in cpu]
    row = {"first_call_s": [c + w for c, w in zip(cpu, wait, strict=True)],
           "first_call_cpu_s": cpu, "wait_s": wait}
    return comparison(row, row, every=0.01, env={"jax": "0.10.2"})


#: The baseline: two spinners beside it.
BUSY_OLD = measured(0.20, 0.60)
#: The same code on a quieter machine: more CPU seconds, by the load alone.
QUIETER_SAME_CODE = measured(0.30, 0.17)
#: Code made 1.5× slower, measured at the baseline's load.
SLOWER_SAME_LOAD = measured(0.30, 0.60)


def test_the_measured_loads_differ_and_alike_ones_do_not():
    assert loads_differ(0.60, 0.17) and loads_differ(0.17, 0.60)
    assert not loads_differ(0.60, 0.67)  # two spinners against four: alike
    assert not loads_differ(0.0, 0.1) and not loads_differ(None, 0.9)
    assert BUSY_OLD.busy and QUIETER_SAME_CODE.busy  # both judged on CPU time, until now


def test_unchanged_code_at_another_load_is_not_judged_and_says_why():
    d = jitmagic.diff(BUSY_OLD, QUIETER_SAME_CODE)
    first = d.stage("flat", "first_call_s")
    assert first.judged.kind == "slower" and first.new_over_old == pytest.approx(1.5)
    assert first.kind == NOT_JUDGED and not first.significant and d.regressions(1.2) == []
    why = ("the loads differ (OLD's runs waited for a CPU 60% of the time they were ready "
           "to run, NEW's 17%)")
    assert first.not_judged == why
    assert d.loads_line().startswith(why + ": the timing stages are not judged")
    assert gate_notes(d, 1.2) == [d.loads_line()] and gate_notes(d, None) == []
    shown = str(d)
    assert "not judged: the loads differ" in shown and why in shown
    assert "judged on CPU time" not in shown and "slower" not in shown.split("\n")[1]
    assert d.to_dict()["stages"][0]["not_judged"] == first.not_judged


def test_a_real_slowdown_at_the_same_load_still_fails():
    d = jitmagic.diff(BUSY_OLD, SLOWER_SAME_LOAD)
    assert d.loads_line() is None and gate_notes(d, 1.2) == []
    assert {s.label for s in d.regressions(1.2)} == {"first call, CPU time"}


def test_the_command_passes_unchanged_code_across_loads_and_fails_a_slowdown(tmp_path,
                                                                              capsys):
    old, same, slower = (str(tmp_path / n) for n in ("old.json", "same.json", "slow.json"))
    save(BUSY_OLD, old), save(QUIETER_SAME_CODE, same), save(SLOWER_SAME_LOAD, slower)
    assert main(["diff", old, same, "--fail-on-slower"]) == 0
    err = capsys.readouterr().err
    assert "jitmagic diff: the loads differ (OLD's runs waited" in err
    assert "regression" not in err
    assert main(["diff", old, slower, "--fail-on-slower"]) == 1
    assert "regression: flat first call, CPU time: NEW 1.50× slower" in capsys.readouterr().err


#: One test measuring ``model``, its report the crafted one named by ``JITMAGIC_NEW``.
CRAFTED = """
import os
import jitmagic
import jitmagic.frontends.pytest_plugin as plugin

def test_model(jitcompare, monkeypatch):
    crafted = jitmagic.load(os.environ["JITMAGIC_NEW"])
    monkeypatch.setattr(plugin, "measure", lambda fn, *a, **k: crafted)
    assert jitcompare(len, [1]) is crafted
"""


@pytest.mark.parametrize("new, fails", [(QUIETER_SAME_CODE, False), (SLOWER_SAME_LOAD, True)],
                         ids=["unchanged-other-load", "slower-same-load"])
def test_the_pytest_gate(pytester, tmp_path, monkeypatch, new, fails):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_crafted=CRAFTED)
    base = tmp_path / "base"
    base.mkdir()
    save(BUSY_OLD, base / report_name("test_crafted.py::test_model"))
    save(new, tmp_path / "new.json")
    monkeypatch.setenv("JITMAGIC_NEW", str(tmp_path / "new.json"))
    result = pytester.runpytest_inprocess("-p", "jitmagic.frontends.pytest_plugin", "-p",
                                          "no:cacheprovider", f"--jitmagic-compare={base}",
                                          "--jitmagic-fail-on-slower")
    result.assert_outcomes(failed=int(fails), passed=int(not fails))
    out = result.stdout.str()
    if fails:
        assert "REGRESSION test_crafted.py::test_model: flat first call, CPU time 1.50× " \
            "slower" in out
    else:
        result.stdout.fnmatch_lines(["*test_model * flat first call, CPU time * 1.50× * "
                                     "not judged: the loads differ*",
                                     "NOT JUDGED test_crafted.py::test_model: the loads differ "
                                     "(OLD's runs waited for a CPU 60% * NEW's 17%): the "
                                     "timing stages are not judged*"])
        assert "REGRESSION" not in out
