"""python -m jitmagic: a file measured like a cell, JSON and self-contained HTML written."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from support import SMALL_CELL

import jitmagic
import jitmagic.frontends.command as cli
from jitmagic.cell.prepare import parse
from jitmagic.frontends.command import main
from jitmagic.frontends.script.loading import load_target
from jitmagic.render.bundle import text


def _file(tmp_path, source: str = SMALL_CELL):
    path = tmp_path / "model.py"
    path.write_text(source)
    return path


def _assert_self_contained(html: str) -> None:
    assert re.search(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}"', html)
    assert "<script" not in html
    assert not re.search(r"https?://", html)


STAGES = ("trace", "lower", "XLA compile", "first call", "execute (per call)")


def test_file_prints_table_and_writes_json_and_html(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # the terminal's width, as the command reads it
    out_json, out_html = tmp_path / "r.json", tmp_path / "r.html"
    code = main([str(_file(tmp_path)), "-r", "3", "-n", "2",
                 "--save", str(out_json), "--html", str(out_html)])
    assert code == 0
    printed = capsys.readouterr().out
    saved = json.loads(out_json.read_text())
    assert saved["variants"]["nested"]["helpers"] == ["layer"]
    loaded = jitmagic.load(out_json)
    assert loaded.to_dict() == saved
    # the answer at a glance: the verdict with its interval, runs and clock, the five
    # stages, in at most 12 lines of at most 100 columns; the HTML named on its last line
    report, written = printed.rstrip("\n").split("\nwrote ")
    lines = report.splitlines()
    assert len(lines) <= 12 and max(map(len, printed.splitlines())) <= 100
    assert lines[0].startswith("jitcompare: model — nested jit on `layer`")
    assert "3 runs each" in report and ("wall time" in report or "CPU time" in report)
    assert re.search(r"\d+\.\d+×–\d+\.\d+×", lines[0] + lines[1])  # its interval
    rows = [ln.split("  ")[1].strip() for ln in lines if ln.startswith("  ")
            and ln.split("  ")[1].strip() in STAGES]
    assert rows == list(STAGES)
    assert report.replace("\n    ", " ").endswith(f" · report: {out_html}")  # wrapped
    assert written == str(out_json)  # the HTML is said once, on the glance's last lines
    assert report == text(loaded, width=100, html_path=str(out_html))
    html = out_html.read_text()
    _assert_self_contained(html)
    assert "jitcompare: <code>model</code>" in html and "<td>jaxlib</td>" in html


def test_verbose_prints_the_full_report(tmp_path, capsys):
    out_json = tmp_path / "r.json"
    code = main([str(_file(tmp_path)), "-r", "1", "-n", "2", "-v", "--save", str(out_json)])
    assert code == 0
    printed = capsys.readouterr().out
    # its prose wrapped to the terminal's width, as the glance's is
    full = jitmagic.load(out_json).report(verbose=True, width=shutil.get_terminal_size().columns)
    assert printed == f"{full}\nwrote {out_json}\n"
    headline = jitmagic.load(out_json).verdict.headline  # the answer first
    assert printed.replace("\n    ", " ").splitlines()[1] == headline
    assert "jitcompare: model" in printed and "jaxpr equations" in printed


def test_file_sweep(tmp_path, capsys):
    source = SMALL_CELL.replace("range(4)", "range(calls)")
    out_json, out_html = tmp_path / "s.json", tmp_path / "s.html"
    code = main([str(_file(tmp_path, source)), "-r", "1", "-n", "2", "--sweep", "calls=1,2",
                 "--save", str(out_json), "--html", str(out_html)])
    assert code == 0
    captured = capsys.readouterr()
    printed, progress = captured.out, captured.err  # not a TTY here: one line per stage
    assert "jitcompare model [calls=1 1/2]: flat 1/1 · first call" in progress
    assert "jitcompare model [calls=2 2/2]: nested 1/1 · steady state" in progress
    assert "~ calls^" in printed
    sweep = json.loads(out_json.read_text())
    assert sweep["schema"] == "jitmagic.sweep/3"
    assert sweep["values"] == [1, 2] and len(sweep["points"]) == 2
    _assert_self_contained(out_html.read_text())


def test_options_reach_the_measurement(tmp_path):
    """What the command line says is what is measured (here: which helper is nested)."""
    source = SMALL_CELL.replace("return sum(layer(x)", "return norm(x) + sum(layer(x)")
    source = source.replace("def model", "def norm(x):\n    return x / 2\ndef model")
    out_json = tmp_path / "r.json"
    assert main([str(_file(tmp_path, source)), "-r", "1", "-n", "1", "--nest", "norm",
                 "--save", str(out_json)]) == 0
    saved = json.loads(out_json.read_text())
    assert saved["variants"]["nested"]["helpers"] == ["norm"]
    assert [len(v["samples"]["trace_s"]) for v in saved["variants"].values()] == [1, 1]


@pytest.mark.parametrize(
    ("source", "args", "message"),
    [
        (None, ["nosuchfile.py"], "no such file"),
        ("x = 1\n", [], "is not a call"),
        ("def f(x)\n", [], "syntax error"),
        (SMALL_CELL, ["--sweep", "calls"], "does not name a variable"),
        (SMALL_CELL, ["-r", "0"], "must be at least 1"),
        (SMALL_CELL, ["-n", "99999999999999999999"], "-n/--number is at most 10,000,000 calls"),
        (SMALL_CELL, ["--html", "x.json"], "--html writes an HTML page file: give it a path "
                                           "ending in .html (got 'x.json')"),
        (SMALL_CELL, ["--save", "x.html"], "--save writes a JSON file"),
        (SMALL_CELL, ["--in-axes", "0,x"], "'x' is not an axis"),
        (SMALL_CELL, ["--nest", "nohelper"], "its helpers are `layer`"),
    ],
)
def test_bad_input_exits_2_with_a_message(tmp_path, capsys, source, args, message):
    target = "nosuchfile.py" if source is None else str(_file(tmp_path, source))
    assert main([target, *[a for a in args if a != "nosuchfile.py"]]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("target", "said"), [("/tmp", "/tmp is a folder; give a Python file"),
                                              ("/dev/null", "/dev/null is not a Python file")])
def test_a_folder_or_a_device_as_the_script_is_named_as_what_it_is(capsys, target, said):
    assert main([target]) == 2
    err = capsys.readouterr().err
    assert said in err and "no such file" not in err


def test_user_error_exits_1(tmp_path, capsys):
    assert main([str(_file(tmp_path, "x = 1 / 0\nf(x)\n"))]) == 1
    assert "ZeroDivisionError" in capsys.readouterr().err


def test_demo_is_the_discussion_example_as_a_file():
    source, namespace = load_target("demo")
    assert source.rstrip().endswith("g(x)") and "range(256)" in source
    assert namespace["__name__"] == "__main__"
    assert parse(source).entry == "g"


def test_demo_writes_its_html_report_by_default(tmp_path, monkeypatch, capsys):
    """`python -m jitmagic demo` goes through the file path; a small source stands in for
    the full example here (the README's command itself takes seconds, not a test's time)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "load_target", lambda target: (SMALL_CELL, {"__name__": "__main__"}))
    assert cli.main(["demo", "-r", "1", "-n", "1"]) == 0
    assert "jitmagic-demo.html" in capsys.readouterr().out
    _assert_self_contained((tmp_path / "jitmagic-demo.html").read_text())
    # where the backend remembers and a part keeps the samples here, the cold command is
    # the demo's own, not a FILE.py there is none of
    monkeypatch.setenv("JITMAGIC_BACKEND_REMEMBERS", "1")
    assert cli.main(["demo", "-r", "1", "-n", "1", "--lines", "-q"]) == 0
    assert "run python -m jitmagic demo -r 1 -n 1 -q (without --lines:" in \
        " ".join(capsys.readouterr().out.split())


def test_a_ctrl_c_before_there_is_a_result_says_so(tmp_path, capsys, monkeypatch):
    # a bare KeyboardInterrupt (Ctrl-C as the file's own lines ran) has no message of its own
    def interrupted(args, script_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_isolated", interrupted)
    script = tmp_path / "f.py"
    script.write_text(SMALL_CELL)
    assert main([str(script)]) == cli.INTERRUPTED
    assert capsys.readouterr().err == "jitmagic: interrupted before there was a result to show\n"


def test_a_misspelt_option_gets_did_you_mean_as_in_the_magic(tmp_path, capsys):
    script = tmp_path / "f.py"
    script.write_text(SMALL_CELL)
    with pytest.raises(SystemExit) as exit_:
        main([str(script), "--lnies"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Did you mean --lines (not --lnies)?" in err
    assert "--repeat" in err and "--json" not in err  # the old spelling of --save is gone
    with pytest.raises(SystemExit):
        main([str(script), "--timeout", "soon"])
    assert "--timeout: expected a number of seconds (e.g. 30 or 2.5), not 'soon'" \
        in capsys.readouterr().err


@pytest.mark.slow  # measures twice
def test_a_measurement_stopped_by_timeout_exits_4_with_its_report_written(tmp_path, capsys):
    script = tmp_path / "f.py"
    script.write_text(SMALL_CELL)
    status = main([str(script), "-r", "3", "--timeout", "0.001", "--save",
                   str(tmp_path / "r.json")])
    assert status == cli.PARTIAL == 4
    saved = json.loads((tmp_path / "r.json").read_text())
    assert "--timeout" in saved["stopped"]
    assert "PARTIAL" in capsys.readouterr().out.upper()
    assert main([str(script), "-r", "1"]) == 0  # a whole measurement


def test_the_help_writes_the_watchs_gate_before_the_script(capsys):
    """Written after the script, a gate option goes to the script's own arguments (the
    watch refuses that): the help must not show it there."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "python -m jitmagic watch [--fail-after-warmup N] FILE.py [ARGS...]" in out
    assert "FILE.py [--fail-after-warmup" not in out
