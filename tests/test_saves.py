"""Saving and loading that never damage anything and never choke on hostile input:
only regular files are written or read, a file's mode and hard links survive a save,
errors name the target, and a report from someone else shows safely and quickly."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
import threading

import pytest
from IPython.core.error import UsageError
from support import FAST, SMALL_CELL, comparison, variant

import jitmagic
from jitmagic import ReportSchemaError
from jitmagic.frontends.command import main
from jitmagic.frontends.saving import unquoted
from jitmagic.model.attribution import Attribution, HelperTime
from jitmagic.model.reports.storage import save
from jitmagic.model.saved import files
from jitmagic.model.saved.files import check_target
from jitmagic.model.sweep import Sweep
from jitmagic.render.attribution import attribution_lines
from jitmagic.render.bundle import bundle, text
from jitmagic.render.sweep import MAX_POINTS, sweep_text

#: A cell that fails the moment it runs: a message about anything else means it never ran.
EXPLODES = "raise RuntimeError('the cell ran')\n" + SMALL_CELL


def _report() -> dict:
    """One run a side, every phase 0.1 s, nothing nested."""
    return comparison(*(variant(name, every=0.1, execute_loops=1, helpers=())
                        for name in ("flat", "nested")), entry="f").to_dict()


def _loaded(tmp_path, d) -> jitmagic.Comparison | Sweep:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(d))
    return jitmagic.load(path)


def _fifo(tmp_path):
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


def _null_device(tmp_path):
    path = tmp_path / "null.json"
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    return path


# --------------------------------------------------------------------------- where to save


@pytest.mark.parametrize("make, said", [(_fifo, "a FIFO (named pipe)"),
                                        (_null_device, "a character device")])
def test_save_refuses_what_is_not_a_regular_file(tmp_path, make, said):
    path = make(tmp_path)
    with pytest.raises(ValueError, match=re.escape(f"{path}: it is {said}, not a regular file")):
        check_target(path)
    with pytest.raises(ValueError, match=re.escape(said)):
        save(comparison(every=0.1), path)
    assert not stat.S_ISREG(os.stat(path).st_mode)  # still what it was


def test_save_never_replaces_dev_null():
    before = os.stat("/dev/null")
    with pytest.raises(ValueError, match="/dev/null: it is a character device"):
        save(comparison(every=0.1), "/dev/null")
    after = os.stat("/dev/null")
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode,
                                                             before.st_rdev)


@pytest.mark.parametrize("where", ["/dev/null", "{tmp}/pipe.json", "{tmp}/null.json",
                                   "~nosuchuser/r.json"])
def test_magic_refuses_before_measuring(run_magic, tmp_path, where):
    _fifo(tmp_path)
    _null_device(tmp_path)
    path = where.format(tmp=tmp_path)
    with pytest.raises(UsageError, match=path) as info:
        run_magic(f"{FAST} --save {path}", EXPLODES)
    assert "the cell ran" not in str(info.value) and ".tmp" not in str(info.value)


def test_an_unknown_user_is_said_plainly():
    with pytest.raises(ValueError, match="no user named 'nosuchuser'"):
        check_target("~nosuchuser/x.json")


def test_magic_takes_the_quotes_off_a_path(run_magic, tmp_path):
    missing = tmp_path / "no such folder" / "my report.json"
    with pytest.raises(UsageError) as info:  # checked (without the quotes) before measuring
        run_magic(f'{FAST} --save "{missing}"', EXPLODES)
    assert f"{missing.parent} does not exist" in str(info.value)
    assert '"' not in str(info.value).split("does not exist")[0]
    target = tmp_path / "my report.json"
    run_magic(f"{FAST} --save '{target}'", SMALL_CELL)
    assert jitmagic.load(target).entry == "model"
    assert unquoted('"a"') == "a" and unquoted("'a") == "'a" and unquoted('"') == '"'


def test_magic_writes_an_html_page_beside_its_json(run_magic, tmp_path):
    page, report = tmp_path / "my report.html", tmp_path / "r.json"
    result, cap = run_magic(f"{FAST} -o --save {report} --html '{page}'", SMALL_CELL)
    said = "".join(cap.stdout)
    assert f"wrote {report}" in said and f"wrote {page}" in said
    html = page.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html") and "jitcompare: model" in html
    assert "data:image/png;base64," in html  # its charts embedded
    assert "http://" not in html and "https://" not in html  # nothing fetched to open it
    assert jitmagic.load(report).entry == result.entry == "model"


def test_magic_refuses_save_and_html_to_one_file_before_measuring(run_magic, tmp_path):
    path = tmp_path / "r.json"
    with pytest.raises(UsageError, match=f"--save and --html name the same file, {path}"):
        run_magic(f"{FAST} --save {path} --html {path}", EXPLODES)
    assert not path.exists()


def test_html_never_replaces_the_baseline(run_magic, tmp_path, capsys):
    base, script = tmp_path / "base.json", tmp_path / "boom.py"
    run_magic(f"{FAST} --save {base}", SMALL_CELL)
    before = base.read_bytes()
    with pytest.raises(UsageError, match=f"--baseline and --html name the same file, {base}"):
        run_magic(f"{FAST} --baseline {base} --html {base}", SMALL_CELL)
    script.write_text(EXPLODES)
    assert main([str(script), "--baseline", str(base), "--html", str(base)]) == 2
    err = capsys.readouterr().err
    assert f"--baseline and --html name the same file, {base}" in err and "the cell ran" not in err
    assert base.read_bytes() == before


def test_command_refuses_dev_stdout_up_front_naming_it(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text(EXPLODES)
    proc = subprocess.run([sys.executable, "-m", "jitmagic", str(script), "-r", "1", "-n", "1",
                           "--save", "/dev/stdout"], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "/dev/stdout: it is a" in proc.stderr and "not a regular file" in proc.stderr
    assert "/proc/" not in proc.stderr and ".tmp" not in proc.stderr
    assert "the cell ran" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("option", ["--save", "--html"])
def test_command_refuses_a_fifo_or_dev_null_before_measuring(tmp_path, capsys, option):
    script = tmp_path / "boom.py"
    script.write_text(EXPLODES)
    for path in (str(_fifo(tmp_path)), "/dev/null"):
        assert main([str(script), "-r", "1", "-n", "1", option, path]) == 3
        err = capsys.readouterr().err
        assert f"{option} {path}: cannot save to {path}: it is a" in err
        assert "the cell ran" not in err and "Traceback" not in err


def test_command_refuses_save_and_html_to_one_file(tmp_path, capsys):
    script = tmp_path / "boom.py"
    script.write_text(EXPLODES)
    path = str(tmp_path / "r.json")
    assert main([str(script), "--save", path, "--html", path]) == 2
    err = capsys.readouterr().err
    assert f"--save and --html name the same file, {path}" in err and "the cell ran" not in err
    assert main([str(script), "--save", str(script)]) == 2
    assert f"the script and --save name the same file, {script}" in capsys.readouterr().err
    assert script.read_text() == EXPLODES


# --------------------------------------------------------------------------- what a save keeps


def test_save_keeps_the_mode_of_the_file(tmp_path):
    path = tmp_path / "private.json"
    path.write_text("{}")
    path.chmod(0o600)
    save(comparison(every=0.1), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert jitmagic.load(path).entry == "model"


def test_save_writes_through_hard_links(tmp_path):
    path, other = tmp_path / "r.json", tmp_path / "also.json"
    path.write_text("{}")
    os.link(path, other)
    save(comparison(every=0.1), path)
    assert os.path.samefile(path, other) and jitmagic.load(other).entry == "model"
    save(comparison(every=0.1, entry="again"), other)  # shorter or longer: no old tail left
    assert jitmagic.load(path).entry == "again"


def test_a_failed_save_names_the_target_and_leaves_the_file(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as info:
        save(comparison(every=0.1), path)
    assert info.value.filename == str(path) and ".tmp" not in str(info.value)
    assert path.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["r.json"]


def test_a_full_disk_leaves_a_hard_linked_file_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old")
    os.link(path, tmp_path / "also.json")

    def full(fd, offset, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(OSError, match="No space left") as info:
        save(comparison(every=0.1), path)
    assert info.value.filename == str(path) and path.read_text() == "old"


# --------------------------------------------------------------------------- what load opens


def test_load_refuses_a_fifo_without_waiting(tmp_path):
    path = _fifo(tmp_path)
    raised: list[BaseException] = []
    reader = threading.Thread(target=lambda: _catch(raised, jitmagic.load, path), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "load waited on a FIFO"
    assert isinstance(raised[0], ReportSchemaError) and "a FIFO" in str(raised[0])


def _catch(into: list, f, *args) -> None:
    try:
        f(*args)
    except BaseException as exc:
        into.append(exc)


def test_load_refuses_a_device_and_a_huge_file(tmp_path):
    with pytest.raises(ReportSchemaError, match="a character device, not a report"):
        jitmagic.load(_null_device(tmp_path))
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(files.MAX_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(ReportSchemaError, match="64 MiB at most"):
        jitmagic.load(big)


# --------------------------------------------------------------------------- hostile reports


def test_strings_from_a_report_are_printable(tmp_path):
    d = _report()
    d["entry"] = "\x1b[2J\x1b[31mf\x00\ud800"
    d["variants"]["nested"]["helpers"] = ["\ud800h\u202e"]
    d["variants"]["nested"]["helper_calls"] = {"\ud800h\u202e": 1}
    d["variants"]["flat"]["notes"] = ["\x07bell\r"]
    d["warnings"] = ["\x9b31m"]
    d["env"] = {"\x1bkey": "\x1bvalue"}
    loaded = _loaded(tmp_path, d)
    assert loaded.entry == "\\x1b[2J\\x1b[31mf\\x00\\ud800"
    shown, glance = bundle(loaded, verbose=True), bundle(loaded)  # the chart draws them too
    for form in (shown["text/plain"], shown["text/html"], repr(loaded), *glance.values()):
        form.encode("utf-8")
        assert not any(ch in form for ch in "\x1b\x00\x07\r\x9b\u202e")
    assert "\\ud800h\\u202e (1 jit call)" in shown["text/plain"]


@pytest.mark.parametrize("field, value, said", [
    (("variants", "flat", "samples", "first_call_s"), [5e-324], "first_call_s[0]: expected "
     "seconds a clock could measure"),
    (("variants", "flat", "samples", "trace_s"), [1e308], "trace_s[0]: expected seconds"),
    (("wall_s",), 1e308, None),  # shown as it is
    (("max_abs_diff",), 5e-324, None),
])
def test_extreme_numbers_are_refused_or_shown(tmp_path, field, value, said):
    d = _report()
    *parents, last = field
    at = d
    for key in parents:
        at = at[key]
    at[last] = value
    if said:
        with pytest.raises(ReportSchemaError, match=re.escape(said)):
            _loaded(tmp_path, d)
    else:
        text(_loaded(tmp_path, d))


def test_samples_too_far_apart_are_refused_naming_the_phase(tmp_path):
    d = _report()
    d["variants"]["flat"]["samples"]["first_call_s"] = [1e-300, 0.1]
    d["variants"]["nested"]["samples"]["first_call_s"] = [0.1, 1e9]
    with pytest.raises(ReportSchemaError, match="samples.first_call_s: the samples are too far"):
        _loaded(tmp_path, d)


def test_a_report_of_the_previous_schemas_loads_its_sentences_as_they_were(tmp_path):
    """Before notes were facts (comparison /5, sweep /2, lines /1) a report saved each
    warning and note as its sentence: it still loads, and shows them word for word."""
    d = _report() | {"schema": "jitmagic.comparison/5",
                     "warnings": ["the cell printed while it was measured"]}
    d["variants"]["nested"]["notes"] = ["`layer` stays inline: it is a generator"]
    loaded = _loaded(tmp_path, d)
    assert loaded.warnings == ("the cell printed while it was measured",)
    assert loaded.nested.notes == ("`layer` stays inline: it is a generator",)
    shown = text(loaded, verbose=True)
    assert "the cell printed while it was measured" in shown
    assert loaded.to_dict()["schema"] == "jitmagic.comparison/6"
    sweep = {"schema": "jitmagic.sweep/2", "entry": "f", "name": "n", "values": [1],
             "points": [d], "wall_s": 1.0, "warnings": ["about the whole sweep"]}
    assert _loaded(tmp_path, sweep).warnings == ("about the whole sweep",)
    lines = {"schema": "jitmagic.lines/1", "entry": "f", "flat": [],
             "notes": {"flat": ["no line hook ran"]}}
    assert _loaded(tmp_path, lines).flat.notes == ("no line hook ran",)


def test_schema_messages(tmp_path):
    d = _report() | {"schema": "jitmagic.comparison/7"}
    with pytest.raises(ReportSchemaError, match="written by a newer jitmagic") as info:
        _loaded(tmp_path, d)
    assert "writes 'jitmagic.comparison/6' and reads /1, /2, /3, /4, /5, /6" in str(info.value)
    with pytest.raises(ReportSchemaError) as info:
        _loaded(tmp_path, _report() | {"schema": "x" * 2000})
    assert len(str(info.value)) < 500 and "2,000 characters" in str(info.value)


# --------------------------------------------------------------------------- clipped displays


def test_a_thousand_helpers_show_fifty(tmp_path):
    d = _report()
    names = [f"h{i}" for i in range(1000)]
    d["variants"]["nested"]["helpers"] = names
    d["variants"]["flat"]["notes"] = [f"`{n}` was not nested" for n in names]
    shown = text(_loaded(tmp_path, d), verbose=True)
    line = next(ln for ln in shown.splitlines() if ln.startswith("nested helpers:"))
    assert "h49" in line and "h50" not in line and "… 950 more helpers" in line
    assert shown.count("note (flat)") == 50 and "… 950 more notes (of 1,000)" in shown


def _attribution(n: int) -> Attribution:
    return Attribution("f", 1.0, 0.9, 0.1, tuple(HelperTime(f"h{i}", 1, 0.9 / (i + 1), 0.001)
                                                 for i in range(n)))


def test_a_long_attribution_is_clipped_in_the_table_and_the_chart():
    from jitmagic.render.charts.bars import MAX_BARS, attribution_figure

    lines = attribution_lines(_attribution(300))
    assert sum(bool(re.match(r"\s*h\d+ ", ln)) for ln in lines) == 50
    assert any("… 250 more helpers (of 300)" in ln for ln in lines)
    fig = attribution_figure(_attribution(300))
    assert len(fig.axes[0].get_yticks()) == MAX_BARS + 1  # and the entry's own bar
    assert fig.get_size_inches()[1] < 20
    assert "275 more helpers not drawn" in fig.axes[0].get_title()


def test_a_long_sweep_is_clipped_in_the_table_and_the_chart():
    from jitmagic.render.charts.sweep import MAX_TICKS, sweep_figure

    point = comparison(every=0.1)
    s = Sweep("n", tuple(range(1, 2001)), (point,) * 2000, 1.0)
    table = sweep_text(s, verbose=True)  # the table is behind -v
    assert "… 1,800 more values (of 2,000)" in table
    starts = [ln.split()[0] for ln in table.splitlines() if ln.strip()]
    assert starts.count("200") == 2 and "201" not in starts  # flat and nested of each value
    fig = sweep_figure(s)
    ax = fig.axes[0]
    assert all(len(line.get_xdata()) == MAX_POINTS for line in ax.lines)
    assert len(ax.get_xticks()) <= MAX_TICKS


# --------------------------------------------------------------------------- the command's files


@pytest.mark.parametrize("body, said", [
    ("import asyncio\nasync def f():\n    return 1\nprint('ran')\nawait f()\n",
     "'await' outside function"),
    ("print('ran')\nx = (\n", "was never closed"),
    ("print('ran')\nreturn 1\n", "'return' outside function"),
])
def test_command_exits_2_on_a_file_that_does_not_compile(tmp_path, capsys, body, said):
    script = tmp_path / "broken.py"
    script.write_text(body + SMALL_CELL)
    assert main([str(script), "-r", "1", "-n", "1"]) == 2
    out, err = capsys.readouterr()
    assert "does not compile, so nothing in it ran" in err and said in err
    assert "ran" not in out and "Traceback" not in err


def test_load_expands_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    save(comparison(every=0.1), "~/home.json")
    assert jitmagic.load("~/home.json").entry == "model"
    with pytest.raises(ReportSchemaError, match="no user named 'nosuchuser'"):
        jitmagic.load("~nosuchuser/home.json")


def test_a_name_of_megabytes_is_cut_where_it_is_shown(tmp_path):
    from jitmagic.render.bundle import html_document
    from jitmagic.render.charts.phases import phases_figure
    from jitmagic.render.charts.style import MAX_LABEL

    d = _report()
    d["entry"] = "e" * 100_000
    d["variants"]["nested"]["helpers"] = ["h" * 100_000]
    d["env"] = {f"k{i}": "v" for i in range(1000)}
    loaded = _loaded(tmp_path, d)
    assert loaded.entry == "e" * 100_000  # the record keeps it whole
    assert len(text(loaded)) < 10_000
    assert len(phases_figure(loaded).axes[0].get_title()) < MAX_LABEL + 60
    page = html_document(loaded)
    assert "… 950 more entries (of 1,000)" in page and len(page) < 200_000


def test_a_report_built_to_be_slow_to_read_is_refused(tmp_path, monkeypatch):
    from jitmagic.model.reports import storage

    d = _report()
    d["variants"]["flat"]["samples"]["trace_s"] = [0.1] * 10_001
    with pytest.raises(ReportSchemaError, match="trace_s: expected at most 10,000 items"):
        _loaded(tmp_path, d)
    monkeypatch.setattr(storage, "MAX_READ_S", -1.0)  # any record is read too late
    with pytest.raises(ReportSchemaError, match="reading it took too long"):
        _loaded(tmp_path, _report())
