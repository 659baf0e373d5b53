"""The pytest plugin beside parametrised ids, reruns, threads, interrupts and CI folders,
in pytest runs of its own (``pytester``, in this process): one report file per test and
call, never overwritten in a session, compared before it is saved, with another
function's baseline not compared, bad folders refused before any test runs, where it
saved said at the end, and a PARTIAL report that measured nothing failing a gate.

Structure, names, files and statuses only: no timing is asserted (a crafted report
stands in for a measurement wherever the test is about what happens to it)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from support import CRAFTED, comparison, variant

import jitmagic
from jitmagic.frontends.pytest_plugin import report_name
from jitmagic.model.reports.storage import save

pytest_plugins = ["pytester"]

PHASES = ("trace_s", "lower_s", "compile_s", "first_call_s", "execute_s")

#: Parametrised ids that escape alike (``a_b``), and two long ones that agree for longer
#: than a name keeps: each test measures a function of its own, so each file says whose
#: it is.
COLLIDING = """
import jax.numpy as jnp
import pytest

def slash(x):
    return x * 2 + 1

def colon(x):
    return x * 3 + 1

def space(x):
    return x * 4 + 1

def long_one(x):
    return x - 1

def long_two(x):
    return x - 2

@pytest.mark.parametrize("fn", [slash, colon, space], ids=["a/b", "a:b", "a b"])
def test_ids_collide(jitcompare, fn):
    jitcompare(fn, jnp.ones(4), repeat=1, number=1)
    jitcompare(fn, jnp.ones(4), repeat=1, number=1)

@pytest.mark.parametrize("fn", [long_one, long_two], ids=["x" * 200 + "1", "x" * 200 + "2"])
def test_long(jitcompare, fn):
    jitcompare(fn, jnp.ones(4), repeat=1, number=1)
"""


#: Two threads of one test calling the fixture at once (both inside ``measure`` together).
THREADS = """
import os
import threading
import jitmagic
import jitmagic.frontends.pytest_plugin as plugin

def test_threads(jitcompare, monkeypatch):
    crafted = jitmagic.load(os.environ["JITMAGIC_REPORT"])
    together = threading.Barrier(2, timeout=30)

    def measured(fn, *args, **options):
        together.wait()  # the other call has started too
        return crafted

    monkeypatch.setattr(plugin, "measure", measured)
    errors = []

    def call():
        try:
            jitcompare(len, [1])
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
"""

#: A test interrupted (Ctrl-C) after its report was made.
INTERRUPTED = CRAFTED + "    raise KeyboardInterrupt\n"


def run(pytester, *args: str):
    """A pytest run with only this plugin loaded (no installed plugin autoloads); a
    Ctrl-C in it ends it, not this session."""
    return pytester.runpytest_inprocess("-p", "jitmagic.frontends.pytest_plugin", "-p",
                                        "no:cacheprovider", *args, no_reraise_ctrlc=True)


@pytest.fixture(autouse=True)
def no_autoload(monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def crafted(scale: float = 1.0, **fields) -> jitmagic.Comparison:
    """A report of fixed, tight runs, every one ``scale`` × as long."""
    samples = {p: [scale * 0.010, scale * 0.0101, scale * 0.0102] for p in PHASES}
    fields.setdefault("entry", "model")
    fields.setdefault("env", {"jax": "0.10.2"})
    return comparison(variant("flat", samples, jaxpr_eqns=10),
                      variant("nested", samples, jaxpr_eqns=10), **fields)


@pytest.fixture
def made(tmp_path, monkeypatch):
    """``made(report)``: ``report`` is what the inner test's fixture call returns."""
    def make(report: jitmagic.Comparison) -> Path:
        path = tmp_path / "new.json"
        save(report, path)
        monkeypatch.setenv("JITMAGIC_REPORT", str(path))
        return path
    return make


MODEL = "test_crafted.py::test_model"


def baseline(tmp_path: Path, report: jitmagic.Comparison, name: str | None = None) -> Path:
    """A baseline folder holding ``report`` as the crafted test's (or as ``name``)."""
    base = tmp_path / "base"
    base.mkdir(exist_ok=True)
    save(report, base / (name or report_name(MODEL)))
    return base


# --- names ---------------------------------------------------------------------------


def test_ids_that_escape_alike_save_a_report_each(pytester, tmp_path):
    pytester.makepyfile(test_perf=COLLIDING)
    reports = tmp_path / "reports"
    result = run(pytester, f"--jitmagic-save={reports}")
    result.assert_outcomes(passed=5)
    whose = {**{(f"test_perf.py::test_ids_collide[{i}]", k): fn
                for i, fn in (("a/b", "slash"), ("a:b", "colon"), ("a b", "space"))
                for k in (0, 1)},
             **{(f"test_perf.py::test_long[{'x' * 200}{n}]", 0): fn
                for n, fn in (("1", "long_one"), ("2", "long_two"))}}
    names = {report_name(*key): fn for key, fn in whose.items()}
    assert len(names) == 8  # eight calls, eight names
    assert sorted(p.name for p in reports.iterdir()) == sorted(names)
    for name, fn in names.items():
        assert jitmagic.load(reports / name).entry == fn  # each file its own test's
    assert max(map(len, names)) <= 150
    result.stdout.fnmatch_lines([f"*jitmagic: saved 8 reports in {reports}*"])


def test_a_second_write_of_one_name_is_refused_naming_both(pytester, tmp_path, made):
    made(crafted())
    pytester.makepyfile(test_crafted=CRAFTED)
    reports = tmp_path / "reports"
    # the same file twice: pytest runs test_model twice, under one node id
    result = run(pytester, "--keep-duplicates", f"--jitmagic-save={reports}",
                 "test_crafted.py", "test_crafted.py")
    result.assert_outcomes(passed=1, failed=1)
    path = reports / report_name(MODEL)
    result.stdout.fnmatch_lines([
        f"*CannotWriteError: jitmagic: refusing to save the report of {MODEL} as {path}: "
        f"the report of {MODEL} was saved under that name in this session (the same test "
        "run twice in one session: --keep-duplicates, or a plugin that reruns tests), and "
        "one would overwrite the other",
        f"*jitmagic: saved 1 report in {reports}*"])
    assert [p.name for p in reports.iterdir()] == [path.name]


def test_calls_from_two_threads_at_once_save_a_report_each(pytester, tmp_path, made):
    made(crafted())
    pytester.makepyfile(test_threads=THREADS)
    reports = tmp_path / "reports"
    run(pytester, f"--jitmagic-save={reports}").assert_outcomes(passed=1)
    test = "test_threads.py::test_threads"
    assert sorted(p.name for p in reports.iterdir()) == sorted(
        [report_name(test), report_name(test, 1)])


def test_a_baseline_saved_under_an_old_name_is_not_compared(pytester, tmp_path, made):
    """Names before they held a hash could be several tests': such a file is not read."""
    made(crafted())
    pytester.makepyfile(test_crafted=CRAFTED)
    base = baseline(tmp_path, crafted(0.5), "test_crafted.py_test_model.json")
    result = run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower")
    result.assert_outcomes(passed=1)  # its old name may be another test's: not judged
    result.stdout.fnmatch_lines([f"*not compared: no baseline {base / report_name(MODEL)}"])


# --- comparing -----------------------------------------------------------------------


def test_one_folder_for_save_and_compare_compares_first_then_saves(pytester, tmp_path, made):
    new = made(crafted())
    pytester.makepyfile(test_crafted=CRAFTED)
    base = baseline(tmp_path, crafted(0.5))  # OLD 2× faster
    both = (f"--jitmagic-save={base}", f"--jitmagic-compare={base}")
    result = run(pytester, *both, "--jitmagic-fail-on-slower")
    result.assert_outcomes(failed=1)  # against the old baseline, not the report just made
    result.stdout.fnmatch_lines(["jitmagic: regression: flat trace: NEW 2.00× slower*",
                                 "(its baseline is kept: *",
                                 f"KEPT {MODEL}: its baseline {base / report_name(MODEL)} is "
                                 "kept, not replaced by a report that failed it",
                                 f"*jitmagic: saved 0 reports in {base}*"])
    kept = jitmagic.load(base / report_name(MODEL)).to_dict()
    assert kept == crafted(0.5).to_dict() != jitmagic.load(new).to_dict()
    run(pytester, *both, "--jitmagic-fail-on-slower").assert_outcomes(failed=1)  # again
    shown = run(pytester, *both)  # no gate, nothing fails: compared, then saved over it
    shown.assert_outcomes(passed=1)
    shown.stdout.fnmatch_lines([f"*jitmagic: saved 1 report in {base}*"])
    assert jitmagic.load(base / report_name(MODEL)).to_dict() == jitmagic.load(new).to_dict()
    run(pytester, *both, "--jitmagic-fail-on-slower").assert_outcomes(passed=1)  # itself


def test_one_new_folder_for_save_and_compare_starts_a_baseline(pytester, tmp_path, made):
    made(crafted())
    pytester.makepyfile(test_crafted=CRAFTED)
    base = tmp_path / "new-baseline"
    result = run(pytester, f"--jitmagic-save={base}", f"--jitmagic-compare={base}",
                 "--jitmagic-fail-on-slower")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*not compared: no baseline*",
                                 f"*jitmagic: saved 1 report in {base}*"])
    assert (base / report_name(MODEL)).is_file()


def test_a_baseline_of_another_function_is_not_compared(pytester, tmp_path, made):
    made(crafted())
    pytester.makepyfile(test_crafted=CRAFTED)
    base = baseline(tmp_path, crafted(0.5, entry="other"))  # 2× faster, and another's
    result = run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        f"{MODEL} * not compared: the baseline {base / report_name(MODEL)} measured "
        "`other`, this test `model`: another function, so not compared*"])
    assert "REGRESSION" not in result.stdout.str()


def test_a_partial_report_that_measured_nothing_fails_a_gate(pytester, tmp_path, made):
    why = "interrupted by the user during the flat variant's first cold run"
    made(comparison({}, {}, entry="model", env={"jax": "0.10.2"}, stopped=why))
    pytester.makepyfile(test_crafted=CRAFTED)
    base = baseline(tmp_path, crafted())
    result = run(pytester, f"--jitmagic-compare={base}", "--jitmagic-fail-on-slower")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"jitmagic: nothing to judge: NEW measured nothing (NEW is PARTIAL: {why}), so no "
        "gate can pass it",
        f"{MODEL} * nothing to compare: NEW measured nothing",
        f"PARTIAL {MODEL}: NEW is PARTIAL: {why}; compared only what both measured",
        f"UNJUDGED {MODEL}: nothing to judge: NEW measured nothing*"])
    assert "no measurable difference" not in result.stdout.str()
    shown = run(pytester, f"--jitmagic-compare={base}")  # no gate: said, not failed
    shown.assert_outcomes(passed=1)
    shown.stdout.fnmatch_lines([f"{MODEL} * nothing to compare: NEW measured nothing"])


# --- folders, and what the session says at its end -----------------------------------


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    return path


@pytest.mark.parametrize(("option", "where", "said"), [
    ("--jitmagic-save", _file, "it is a file, not a folder"),
    ("--jitmagic-save", lambda t: _file(t) / "reports", "cannot write a report there"),
    ("--jitmagic-compare", _file, "it is a file, not a folder"),
    ("--jitmagic-compare", lambda t: t / "missing", "there is no such folder, so no test "
                                                    "would have a baseline; save one first"),
])
def test_a_bad_folder_is_a_usage_error_before_any_test_runs(pytester, tmp_path, made, option,
                                                            where, said):
    made(crafted())
    pytester.makepyfile(test_crafted=CRAFTED)
    folder = where(tmp_path)
    result = run(pytester, f"{option}={folder}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{option}={folder}: {said}*"])
    assert "passed" not in result.stdout.str() and "Traceback" not in result.stderr.str()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="the superuser writes into a read-only folder")
def test_a_read_only_save_folder_is_a_usage_error(pytester, tmp_path, made):
    made(crafted())
    pytester.makepyfile(test_crafted=CRAFTED)
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = run(pytester, f"--jitmagic-save={folder}")
    finally:
        folder.chmod(0o755)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--jitmagic-save={folder}: *"])


def test_an_interrupted_session_says_where_it_saved(pytester, tmp_path, made):
    made(crafted())
    pytester.makepyfile(test_crafted=INTERRUPTED)
    reports = tmp_path / "reports"
    result = run(pytester, f"--jitmagic-save={reports}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*jitmagic: saved 1 report in {reports}*"])
    saved = jitmagic.load(reports / report_name(MODEL))
    assert dataclasses.asdict(saved.flat) == dataclasses.asdict(crafted().flat)
