"""--jax: one cell under several JAX releases. The side-by-side records and their
judging by the one rule, the wording, the cached environments (a second run installs
nothing), and a hang or a crash under a release as a finding, with no process left."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jax.numpy as jnp
import psutil
import pytest
from support import comparison

import jitmagic
from jitmagic.measure import environments
from jitmagic.measure.environments import READY, environment
from jitmagic.model.diff import diff
from jitmagic.model.progress import Crashed, TimedOut
from jitmagic.model.reports.releases import NotInstalled, ReleaseResult, Releases, bisect
from jitmagic.model.rows import PHASES
from jitmagic.model.stats.rule import SLOWER
from jitmagic.model.stats.units import fmt_s
from jitmagic.render.charts.releases import releases_figure
from jitmagic.render.format import PHASE_LABELS
from jitmagic.render.releases import finding, html_document, text
from jitmagic.render.releases.trace import trace_json


def _layer(x):
    return jnp.tanh(x @ x.T)


def _model(x):
    return _layer(_layer(x))


@pytest.fixture(scope="module")
def measured():
    """A real comparison (a real run's samples), the stand-in of one release."""
    return jitmagic.compare(_model, jnp.ones((32, 32)), repeat=3, quiet=True)


def _slower_compile(c, factor: float):
    """``c`` with its flat XLA compile ``factor`` times slower: another release's."""
    flat = c.flat
    samples = {key: [t * factor for t in runs] if key.startswith("compile") else runs
               for key, runs in flat.samples.items()}  # on the wall and CPU clocks
    return dataclasses.replace(c, variants={**c.variants,
                                            "flat": dataclasses.replace(flat, samples=samples)})


def test_a_compile_three_times_slower_is_judged_and_worded_by_the_one_rule(measured):
    found = Releases((ReleaseResult("0.9.0", measured),
                      ReleaseResult("0.10.2", _slower_compile(measured, 3.0))), "/cache")
    [change] = found.changes
    compile_stage = change.diff.stage("flat", "compile_s")
    assert compile_stage.kind == SLOWER and compile_stage.new_over_old == pytest.approx(3.0)
    said = text(found).splitlines()
    clock = "more CPU time" if compile_stage.clock == "CPU" else "slower"  # a busy machine's
    assert said[0].startswith(f"XLA compile 3.00× {clock} in 0.10.2 than in 0.9.0 (")
    medians = f"; {fmt_s(compile_stage.old_s)} → {fmt_s(compile_stage.new_s)}"
    assert said[0].endswith(medians + (" CPU time)" if clock != "slower" else ")"))
    assert said[1].split() == ["flat,", "wall", "time", "0.9.0", "0.10.2"]  # its clock said
    assert said[-1] == "environments: /cache (made once, reused)"
    assert len(said) <= 12
    verbose = text(found, verbose=True)
    [stages] = [line for line in verbose.splitlines() if "each stage:" in line]
    low = float(stages.split(f"XLA compile 3.00× {clock} (")[1].split("×")[0])
    assert low > 1  # the interval turned as the ratio is: "slower" reads as NEW/OLD
    assert f"0.9.0: {measured.verdict.headline}" in verbose


def test_the_same_samples_under_two_releases_differ_in_nothing(measured):
    found = Releases((ReleaseResult("0.9.0", measured), ReleaseResult("0.10.2", measured)),
                     "/cache")
    assert not found.changes[0].diff.regressions(1.0)
    said = text(found, verbose=True).splitlines()
    assert said[0] in ("no stage differs by the rule between jax 0.9.0, 0.10.2 (-v: each stage)",
                       "the rule called no stage faster or slower between jax 0.9.0, 0.10.2: "
                       "some are inconclusive, where more runs (-r 9) may tell (-v: each stage)")
    [stages] = [line for line in said if "each stage:" in line]
    assert stages.startswith("  0.9.0 → 0.10.2, each stage: trace ")
    assert stages.count(";") == 4 and "slower" not in stages and "faster" not in stages


def test_a_hang_a_crash_and_a_missing_release_are_findings_beside_a_measured_one(measured):
    found = Releases((
        ReleaseResult("0.9.1", TimedOut(20.0, "jitcompare g: flat 1/3 · XLA compile")),
        ReleaseResult("0.9.2", Crashed(11, "jitcompare g: nested 2/3 · XLA compile")),
        ReleaseResult("0.1.0", NotInstalled("0.1.0", "ERROR: No matching distribution")),
        ReleaseResult("0.10.2", measured)), "/cache")
    said = text(found, verbose=True).splitlines()
    assert said[0] == "did not finish in 20 s under jax 0.9.1 (in XLA compile, flat 1/3)"
    assert "  XLA compile crashed (SIGSEGV) under jax 0.9.2" in said
    assert finding(found.results[2]) == ("jax 0.1.0 could not be installed: ERROR: No "
                                         "matching distribution")
    assert said[1].split()[-2:] == ["(none)", "0.10.2"] and found.changes == ()
    short = text(found).splitlines()
    assert short[-2] == "  -v shows 2 more lines of changes and findings" and len(short) <= 12


def test_a_ready_environment_is_reused_without_any_install(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "jitmagic" / "jax-0.9.0"
    (folder / "bin").mkdir(parents=True)
    (folder / READY).write_text("0.9.0\n")
    monkeypatch.setattr(environments.subprocess, "run", _no_install)
    assert environments.ready("0.9.0") and not environments.ready("0.8.0")
    env = environment("0.9.0")
    assert env.folder == str(folder) and env.python == str(folder / "bin" / "python")
    assert environment("current").python is None  # the user's own, untouched


def _no_install(*args, **kwargs):
    raise AssertionError(f"an install ran: {args}")


def test_an_install_cut_short_is_made_again_and_a_failure_names_pips_reason(
        tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "jitmagic" / "jax-0.8.0" / "bin").mkdir(parents=True)  # no READY file
    calls = []

    def failing(argv, **kwargs):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 1, "", "Collecting jax==0.8.0\nERROR: No "
                                           "matching distribution found for jax==0.8.0\n")

    monkeypatch.setattr(environments.subprocess, "run", failing)
    monkeypatch.setattr(environments.shutil, "which", lambda name: None)  # venv and pip
    got = environment("0.8.0")
    assert got == NotInstalled("0.8.0", "ERROR: No matching distribution found for jax==0.8.0")
    assert calls[0][1:3] == ["-m", "venv"] and not (tmp_path / "jitmagic" / "jax-0.8.0").exists()


def _command(tmp_path, source, *argv, timeout=120):
    (tmp_path / "cell.py").write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "jitmagic", "cell.py", *argv],
                          capture_output=True, text=True, cwd=tmp_path, timeout=timeout)


def _none_left(marker: str) -> bool:
    return not [p for p in psutil.process_iter(["cmdline"])
                if any(marker in part for part in p.info["cmdline"] or ())]


@pytest.mark.slow
def test_a_hang_under_a_release_is_said_within_the_timeout_and_nothing_is_left(tmp_path):
    start = time.monotonic()
    done = _command(tmp_path, """\
        import time
        import jax.numpy as jnp

        def stuck_in_trace(x):
            time.sleep(1000)
            return x + 1

        stuck_in_trace(jnp.ones(3))
        """, "--jax", "current", "--timeout", "3", "-q")
    assert time.monotonic() - start < 3 + 10
    assert done.returncode == 4, done.stderr
    assert done.stdout.startswith("did not finish in 3 s under jax ")
    assert _none_left(str(tmp_path))


@pytest.mark.slow
def test_a_crash_under_a_release_is_said_with_its_signal_and_stage(tmp_path):
    done = _command(tmp_path, """\
        import os, signal
        import jax.numpy as jnp

        def dies(x):
            os.kill(os.getpid(), signal.SIGSEGV)
            return x

        dies(jnp.ones(3))
        """, "--jax", "current", "-q")
    assert done.returncode == 4, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("finding helpers crashed (SIGSEGV) under jax "), first
    assert _none_left(str(tmp_path))


def test_options_a_side_by_side_run_cannot_take_are_refused_before_any_install(tmp_path):
    done = _command(tmp_path, "print(1)\n", "--jax", "0.9.0", "--processes", "2")
    assert done.returncode == 2
    assert "--jax cannot take --processes: each release is measured in one fresh process" \
        in done.stderr
    done = _command(tmp_path, "print(1)\n", "--jax", "0.9.0,latest")
    assert done.returncode == 2 and "`current` (your own), not 'latest'" in done.stderr
    done = _command(tmp_path, "print(1)\n", "--jax", f"current,{environments.installed_version()}")
    assert done.returncode == 2 and "--jax names your own JAX twice" in done.stderr
    done = _command(tmp_path, "def f(x:\n    return x\nf(1)\n", "--jax", "0.9.0,0.8.0")
    assert done.returncode == 2 and done.stderr.count("does not compile") == 1
    assert done.stdout == "" and "installing" not in done.stderr


@pytest.fixture(scope="module")
def release_cache(tmp_path_factory):
    """One cache folder for the tests that really install a release (0.9.0: about 25 s
    with pip's cache), against the JAX these pins were measured with."""
    if environments.installed_version() != "0.10.2":
        pytest.skip("the pins compare 0.9.0 with JAX 0.10.2 installed here")
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("cache"))}


def _freeze() -> str:
    return subprocess.run([sys.executable, "-m", "pip", "freeze"], capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.slow
def test_the_demo_under_an_older_release_and_yours_side_by_side(release_cache):
    """A second run installs nothing, and your own JAX is as it was. Pinned: the demo's
    trace is slower under 0.9.0 than under 0.10.2 (928 ms against 336 ms by hand)."""
    frozen, cache = _freeze(), release_cache["XDG_CACHE_HOME"]
    argv = [sys.executable, "-m", "jitmagic", "demo", "--jax", "0.9.0,current", "-q", "-v"]
    first = subprocess.run(argv, capture_output=True, text=True, env=release_cache, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    ready = Path(cache, "jitmagic", "jax-0.9.0", READY)
    made = ready.stat().st_mtime_ns
    assert f"environments: {cache}/jitmagic (made once, reused)" in first.stdout
    assert re.search(r"^ *trace [\d.]+× (faster|less CPU time) in 0\.10\.2 \(yours\) than in "
                     r"0\.9\.0 \(", first.stdout, re.MULTILINE), first.stdout  # pinned
    again = subprocess.run(argv, capture_output=True, text=True, env=release_cache, timeout=600)
    assert again.returncode == 0 and ready.stat().st_mtime_ns == made
    assert _freeze() == frozen


#: A loop-heavy program whose XLA compile is slower under 0.10.2 than under 0.9.0 (669 ms
#: against 1.09 s, and 634 ms against 993 ms, measured by hand), while its call is faster.
LOOPS = """\
    import jax
    import jax.numpy as jnp

    W = jnp.eye(64) * 0.5

    def step(c, x):
        c = jnp.tanh(c @ W + x)
        return c, jnp.sum(c)

    def body(i, c):
        return jnp.sin(c) * jnp.cos(c) + i

    def model(x):
        c = jax.lax.fori_loop(0, 100, body, x)
        c, ys = jax.lax.scan(step, c, jnp.ones((64, 64)), unroll=16)
        w = jax.lax.while_loop(lambda s: s[0] < 10, lambda s: (s[0] + 1, s[1] * 1.01), (0, c))
        return ys.sum() + w[1].sum()

    model(jnp.ones((64,)))
    """


@pytest.mark.slow
def test_a_loop_heavy_program_compiles_slower_under_0_10_2_than_0_9_0(release_cache, tmp_path):
    (tmp_path / "cell.py").write_text(textwrap.dedent(LOOPS))
    done = subprocess.run([sys.executable, "-m", "jitmagic", "cell.py", "--jax", "0.9.0,current",
                           "-r", "5", "-q", "-v"], capture_output=True, text=True,
                          env=release_cache, cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ *XLA compile [\d.]+× (slower|more CPU time) in 0\.10\.2 \(yours\) "
                     r"than in 0\.9\.0 \(", done.stdout, re.MULTILINE), done.stdout


def test_compare_refuses_jax_and_the_magic_its_line_form_saying_what_to_write(ip):
    with pytest.raises(jitmagic.InputError, match=r"put the code and its call in one cell "
                                                  r"\(`%%jitcompare --jax 0\.9\.0,current`\)"):
        jitmagic.compare(_model, jnp.ones((4, 4)), jax="0.9.0")
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match=r"^%jitcompare --jax measures objects of earlier "
                                         r"cells, which another release's Python does not "
                                         r"have: put the imports, the function and its call"):
        ip.run_line_magic("jitcompare", "--jax 0.9.0 model(x)")
    from jitmagic.options.hints import unknown_option_hint

    hint = unknown_option_hint("unrecognized arguments: --processes 2", ["--xla"])
    assert hint.startswith("--processes is the command's only: measuring in several ")


@pytest.mark.slow
def test_a_cell_under_a_release_holds_all_it_needs_and_a_name_of_an_earlier_cell_is_said(
        ip, capsys):
    cell = textwrap.dedent("""\
        import jax.numpy as jnp

        def layer(x):
            return jnp.tanh(x @ x.T)

        def model(x):
            return layer(layer(x))

        model(jnp.ones((16, 16)))
        """)
    found = ip.run_cell_magic("jitcompare", "--jax current -r 2 -q -o", cell)
    [release] = found.results
    assert release.measured.flat.median("compile_s") > 0 and release.folder is None
    assert capsys.readouterr().out.startswith("measured under jax ")
    ip.run_cell_magic("jitcompare", "--jax current -q", "model(x)")  # objects of earlier cells
    said = capsys.readouterr().out.splitlines()[0]
    assert said.startswith("failed under jax ") and "`model` is not defined" in said
    assert said.endswith("(under --jax the cell or file is all a release's Python has: define "
                         "it, its imports and its arguments there)")


def test_with_xla_the_passes_that_moved_most_are_named(measured):
    profiled = jitmagic.compare(_model, jnp.ones((32, 32)), repeat=2, xla=True, quiet=True)
    flat = profiled.xla_passes.of("flat")
    slowest = flat.passes[-1]  # a pass that took little: now 2 s more
    moved = dataclasses.replace(slowest, seconds=slowest.seconds + 2.0)
    later = dataclasses.replace(flat, passes=(*flat.passes[:-1], moved))
    newer = dataclasses.replace(profiled, xla_passes=dataclasses.replace(
        profiled.xla_passes, compiles={**profiled.xla_passes.compiles, "flat": later}))
    found = Releases((ReleaseResult("0.9.0", profiled), ReleaseResult("0.10.2", newer)), "/c")
    [change] = found.changes
    assert change.passes[0] == (slowest.name, slowest.seconds, slowest.seconds + 2.0)
    assert "XLA's parts that moved most from 0.9.0 to 0.10.2 (one profiled compile each, " \
           f"--xla): {slowest.name} " in text(found, verbose=True)


def test_one_release_alone_and_a_measurement_stopped_early_are_said(measured):
    alone = Releases((ReleaseResult("0.10.2", measured),), "/c")
    assert text(alone).splitlines()[0] == ("measured under jax 0.10.2: name two releases or "
                                           "more to compare them")
    stopped = dataclasses.replace(measured, stopped="stopped by --timeout after XLA compile")
    found = Releases((ReleaseResult("0.9.0", stopped), ReleaseResult("0.10.2", measured)), "/c")
    assert text(found).splitlines()[0] == ("under jax 0.9.0: stopped by --timeout after XLA "
                                           "compile; its column holds what was measured")


def test_releases_that_ran_on_different_backends_are_said_first(measured):
    elsewhere = dataclasses.replace(measured, env={**measured.env, "backend": "tpu"})
    found = Releases((ReleaseResult("0.9.0", measured), ReleaseResult("0.10.2", elsewhere)),
                     "/c")
    assert text(found).splitlines()[0] == (
        "the releases ran on different backends (0.9.0 on cpu, 0.10.2 on tpu): a release's "
        "environment holds jax and jaxlib alone; set JAX_PLATFORMS=cpu to compare like with "
        "like")


def test_uv_makes_the_environment_where_it_is_installed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls = []

    def made(argv, **kwargs):
        calls.append(argv)
        if argv[1] == "venv":  # the folder uv would make
            Path(argv[-1]).mkdir(parents=True)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(environments.subprocess, "run", made)
    monkeypatch.setattr(environments.shutil, "which", lambda name: f"/opt/bin/{name}")
    env = environment("0.9.0")
    folder = tmp_path / "jitmagic" / "jax-0.9.0"
    assert [argv[:2] for argv in calls] == [["/opt/bin/uv", "venv"], ["/opt/bin/uv", "pip"]]
    assert calls[1][-3:] == ["jax==0.9.0", "jaxlib==0.9.0", "psutil"]
    assert env.folder == str(folder) and (folder / READY).read_text() == "0.9.0\n"


#: The releases 0.9.0 to 0.10.2, as the package index serves jax and jaxlib here.
WALKED = ["0.9.0", "0.9.0.1", "0.9.1", "0.9.2", "0.10.0", "0.10.1", "0.10.2"]


def test_bisect_names_the_release_measuring_each_one_names_and_measures_fewer(measured):
    each = {r: ReleaseResult(r, _slower_compile(measured, 3.0) if i >= 4 else measured)
            for i, r in enumerate(WALKED)}
    asked = []

    def measure(release):
        asked.append(release)
        return each[release]

    found = bisect(WALKED, measure, "/c")
    one_by_one = [r for r in WALKED if diff(measured, each[r].measured, force=True).stage(
        "flat", "compile_s").slower_by(1.0)]
    assert found.found == (("compile_s", one_by_one[0]),) and one_by_one[0] == "0.10.0"
    assert sorted(asked, key=WALKED.index) == ["0.9.0", "0.9.2", "0.10.0", "0.10.2"]
    said = text(found).splitlines()
    assert said[0].startswith("first slower in 0.10.0, of 0.9.0 to 0.10.2: XLA compile 3.00× ")
    assert said[1] == ("measured 4 of the 7 releases from 0.9.0 to 0.10.2, by halving: "
                       "0.9.0, 0.9.2, 0.10.0, 0.10.2")
    assert said[2].split() == ["flat,", "wall", "time", "0.9.0", "0.9.2", "0.10.0", "0.10.2"]
    each["0.9.2"] = ReleaseResult("0.9.2", TimedOut(20.0, "jitcompare g: flat 1/3 · XLA compile"))
    hung = bisect(WALKED, each.__getitem__, "/c")  # a hang counts as slower
    assert hung.found == (("compile_s", "0.9.2"),)
    assert text(hung).startswith("first slower in 0.9.2, of 0.9.0 to 0.10.2: did not finish "
                                 "in 20 s under jax 0.9.2 (in XLA compile, flat 1/3)\n")
    same = bisect(WALKED, lambda r: ReleaseResult(r, measured), "/c")
    assert same.found == () and len(same.measured.results) == 2
    nothing, measured_two = text(same).splitlines()[:2]
    assert nothing.startswith("nothing to halve, no stage is slower by the rule: ")
    assert " between jax 0.9.0, 0.10.2" in nothing and nothing.endswith("(-v: each stage)")
    assert measured_two.startswith("measured 2 of the 7 releases from 0.9.0 to 0.10.2")


def test_bisect_walks_the_releases_the_index_serves_of_both_jax_and_jaxlib(monkeypatch):
    listed = {"jax": "0.10.2, 0.10.1, 0.10.0, 0.9.2, 0.9.1, 0.9.0.1, 0.9.0, 0.8.3",
              "jaxlib": "0.10.2, 0.10.0, 0.9.2, 0.9.1, 0.9.0.1, 0.9.0, 0.8.3"}

    def pip(argv, **kwargs):
        return subprocess.CompletedProcess(argv, 0, f"{argv[-1]} (0.10.2)\nAvailable versions: "
                                                    f"{listed[argv[-1]]}\n", "")

    monkeypatch.setattr(environments.subprocess, "run", pip)
    assert environments.served("0.9.0", "0.10.2") == [
        "0.9.0", "0.9.0.1", "0.9.1", "0.9.2", "0.10.0", "0.10.2"]  # no jaxlib 0.10.1
    assert environments.served("0.9.1", "current")[0] == "0.9.1"


def test_bisect_takes_two_releases_the_older_first_and_never_with_jax(tmp_path):
    done = _command(tmp_path, "print(1)\n", "--bisect", "0.9.0-0.10.2")
    assert done.returncode == 2 and "expected two JAX releases as A..B, e.g. 0.9.0..0.10.2 " \
        "or 0.9.0..current (your own), not '0.9.0-0.10.2'" in done.stderr
    done = _command(tmp_path, "print(1)\n", "--bisect", "0.9.0..current", "--jax", "0.9.0")
    assert done.returncode == 2 and "--bisect chooses the releases it measures: leave --jax " \
        "out" in done.stderr
    done = _command(tmp_path, "def f(x):\n    return x\nf(1)\n", "--bisect", "0.10.2..0.9.0")
    assert done.returncode == 2 and "--bisect 0.10.2..0.9.0: name the older release first: " \
        "--bisect 0.9.0..0.10.2" in done.stderr
    for asked in (("--bisect", "0.6.0..current"), ("--jax", "0.6.0,current")):
        done = _command(tmp_path, "def f(x):\n    return x\nf(1)\n", *asked)
        assert done.returncode == 2 and "jitmagic measures under JAX 0.7.0 and later, not " \
            "0.6.0: name 0.7.0 or a later release" in done.stderr  # refused before installing


def _read_trace(path) -> dict[tuple[str, str, str], float]:
    """A reader of the trace-event format, as Perfetto's importer reads it: each complete
    event's seconds summed by (process, thread, name), the names from the metadata
    events; on a thread, events nest or follow one another (a slice never straddles)."""
    events = json.loads(Path(path).read_text())["traceEvents"]
    for e in events:  # in whole nanoseconds, as Perfetto keeps them
        e.update(ts=round(e.get("ts", 0) * 1e3), dur=round(e.get("dur", 0) * 1e3))
    names = {(e["pid"], e["tid"] if e["name"] == "thread_name" else None): e["args"]["name"]
             for e in events if e["ph"] == "M"}
    totals: dict[tuple[str, str, str], float] = {}
    for e in events:
        if e["ph"] != "X":
            continue
        key = (names[e["pid"], None], names[e["pid"], e["tid"]], e["name"])
        totals[key] = totals.get(key, 0.0) + e["dur"] / 1e9
        for other in events:
            if other["ph"] == "X" and (other["pid"], other["tid"]) == (e["pid"], e["tid"]):
                a, b = (e["ts"], e["ts"] + e["dur"]), (other["ts"], other["ts"] + other["dur"])
                assert a[1] <= b[0] or b[1] <= a[0] or (a[0] <= b[0] and b[1] <= a[1]) \
                    or (b[0] <= a[0] and a[1] <= b[1]), (e, other)
    return totals


def _within(traced: float, reported: float) -> bool:
    return abs(traced - reported) <= 0.05 * reported


def test_trace_of_a_plain_comparison_holds_each_stage_as_the_report_does(tmp_path):
    done = _command(tmp_path, """\
        import jax.numpy as jnp

        def layer(x):
            return jnp.tanh(x @ x.T)

        def model(x):
            return layer(layer(x))

        model(jnp.ones((16, 16)))
        """, "-r", "2", "-q", "--xla", "--trace", "trace.json", "--save", "report.json")
    assert done.returncode == 0, done.stderr
    assert f"wrote {tmp_path / 'trace.json'}" in done.stdout.splitlines()
    report, traced = jitmagic.load(tmp_path / "report.json"), _read_trace(tmp_path / "trace.json")
    for variant in ("flat", "nested"):
        for phase in ("trace_s", "lower_s", "compile_s", "first_call_s"):
            label = "XLA compile" if phase == "compile_s" else PHASE_LABELS[phase]
            reported = report.variants[variant].median(phase)
            assert _within(traced["model", variant, label], reported), (variant, phase)
    profiled = report.xla_passes.of("flat")
    passes = {name: s for (_, thread, name), s in traced.items() if thread.startswith("flat: ")}
    assert _within(passes["HLO passes"], profiled.hlo_passes_s)
    assert _within(passes["code generation"], profiled.codegen_s)
    assert passes[profiled.passes[0].name] == pytest.approx(profiled.passes[0].seconds, abs=1e-9)


def test_a_first_call_shorter_than_its_stages_follows_them_without_a_rounding_overlap(
        tmp_path):
    """Stage medians that add up past the first call's: the first call is laid after them,
    and each stage rounds up a nanosecond, so their end is laid from the rounded stages."""
    stages = {"trace_s": [0.1000000006], "lower_s": [0.1000000006],
              "compile_s": [0.1000000006], "first_call_s": [0.25]}
    path = tmp_path / "trace.json"
    path.write_text(trace_json(comparison(stages, stages, every=0.001)))
    traced = _read_trace(path)  # no slice straddles another
    assert traced["model", "flat", "first call"] == 0.25


def test_trace_and_html_of_releases_show_each_release_beside_the_others(measured, tmp_path):
    found = Releases((ReleaseResult("0.9.0", measured),
                      ReleaseResult("0.10.2", _slower_compile(measured, 3.0))), "/cache")
    (tmp_path / "t.json").write_text(trace_json(found))
    traced = _read_trace(tmp_path / "t.json")
    for x in found.results:
        for phase in ("trace_s", "lower_s", "compile_s", "first_call_s"):
            label = "XLA compile" if phase == "compile_s" else PHASE_LABELS[phase]
            assert _within(traced[f"jax {x.release}", "flat", label],
                           x.measured.flat.median(phase))
    page = html_document(found)
    assert "<pre>XLA compile 3.00× " in page and "environments: /cache" in page
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', page)[1])
    assert png.startswith(b"\x89PNG")
    [ax] = releases_figure(found).axes
    heights = [bar.get_height() for bar in ax.patches]  # a group per stage, a bar a release
    assert len(heights) == 2 * len(PHASES)
    old, new = heights[:len(PHASES)], heights[len(PHASES):]
    assert old[2] == pytest.approx(measured.flat.median("compile_s"))
    assert new[2] == pytest.approx(3 * old[2]) and new[0] == old[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0.9.0", "0.10.2"]


@pytest.mark.slow
def test_bisect_walks_real_releases_to_a_boundary_it_measured_on_the_loop_heavy_program(
        release_cache, tmp_path):
    """Real installs, real measurements, end to end: the release named first slower is one
    the halving measured, next to a measured release before it that was not, with the
    stage and the rule's ratio said; the trace holds a process per release measured.
    Which release it names is a timing claim, said in docs/releases.md, not pinned here:
    by hand (-r 5, twice) LOOPS compiles slower by the rule only under 0.10.2
    (1.71×, 1.78×), and 0.9.1 to 0.10.1 about 1.2×, near the rule's bound (a busy CI
    machine has read 0.9.2's 1.28× as slower)."""
    (tmp_path / "cell.py").write_text(textwrap.dedent(LOOPS))
    done = subprocess.run([sys.executable, "-m", "jitmagic", "cell.py", "--bisect",
                           "0.9.0..current", "-r", "5", "-q", "--trace", "t.json"],
                          capture_output=True, text=True, env=release_cache, cwd=tmp_path,
                          timeout=1500)
    assert done.returncode == 0, done.stdout + done.stderr
    named = re.search(r"^first slower in ([\d.]+)(?: \(yours\))?, of 0\.9\.0 to 0\.10\.2: "
                      r"(?:XLA compile|first call) [\d.]+× (?:slower|more CPU time) in \1",
                      done.stdout, re.MULTILINE)
    walk = re.search(r"^measured (\d) of the 7 releases from 0\.9\.0 to 0\.10\.2, by halving: "
                     r"(.*)$", done.stdout, re.MULTILINE)
    assert named and walk, done.stdout
    measured = [r.removesuffix(" (yours)") for r in walk.group(2).split(", ")]
    assert int(walk.group(1)) == len(measured) <= 5 and measured[0] == "0.9.0"
    assert measured[-1] == "0.10.2" and named.group(1) in measured
    assert WALKED[WALKED.index(named.group(1)) - 1] in measured  # the boundary, both sides
    processes = {names[0] for names in _read_trace(tmp_path / "t.json")}
    assert processes == {f"jax {r}" + " (yours)" * (r == "0.10.2") for r in measured}


def test_trace_of_a_sweep_holds_a_process_per_value(tmp_path):
    done = _command(tmp_path, """\
        import jax.numpy as jnp

        def g(x):
            return x * 2

        def f(x):
            return sum(g(x) * i for i in range(n))

        f(jnp.ones(4))
        """, "--sweep", "n=1,2", "-r", "1", "-n", "1", "-q", "--trace", "s.json")
    assert done.returncode == 0, done.stderr
    tracks = {names[:2] for names in _read_trace(tmp_path / "s.json")}
    assert tracks == {(f"n={n}", variant) for n in (1, 2) for variant in ("flat", "nested")}


def test_the_magic_writes_the_trace_of_its_comparison(ip, tmp_path):
    path = tmp_path / "cell trace.json"
    ip.push({"model": _model, "jnp": jnp})
    found = ip.run_cell_magic("jitcompare", f"-r 2 -q -o --no-plot --trace '{path}'",
                              "model(jnp.ones((8, 8)))")
    traced = _read_trace(path)
    assert _within(traced["model", "flat", "XLA compile"], found.flat.median("compile_s"))


def test_ctrl_c_under_a_release_keeps_the_releases_measured_before_it(
        measured, monkeypatch, tmp_path, capsys):
    from jitmagic.frontends.command import build_parser
    from jitmagic.frontends.script import releases as script
    from jitmagic.frontends.statuses import PARTIAL

    def one(release, argv, args, entry):
        if release == "0.9.1":
            raise KeyboardInterrupt  # Ctrl-C while the second release is measured
        return ReleaseResult(release, measured, release, f"/c/jax-{release}")

    monkeypatch.setattr(script, "_one", one)
    path = tmp_path / "cell.py"
    path.write_text("def f(x):\n    return x\nf(1)\n")
    trace = tmp_path / "t.json"
    argv = [str(path), "--jax", "0.9.0,0.9.1,0.9.2", "--trace", str(trace)]
    assert script.show(build_parser().parse_args(argv), argv, None) == PARTIAL
    said = capsys.readouterr().out
    assert "stopped by Ctrl-C: the releases above are those measured before it" in said
    assert "0.9.0" in said and "0.9.2" not in said
    assert json.loads(trace.read_text())["traceEvents"][0]["args"]["name"] == "jax 0.9.0"
