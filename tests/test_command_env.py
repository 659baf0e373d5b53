"""``python -m jitmagic FILE.py`` behaves like ``python FILE.py``: what the file sets
before ``import jax`` reaches jax, reports are written before anything is printed, a
stdout closed early or unable to encode ends quietly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import jitmagic
from jitmagic.cell import prelude
from jitmagic.errors import UserCodeError
from jitmagic.frontends.command import main

#: A file that sets up simulated devices the way JAX's docs do, before importing jax.
DEVICES = """\
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["JAX_ENABLE_X64"] = "1"
import jax
import jax.numpy as jnp

def helper(x):
    return jnp.sin(x) * 2

def model(x):
    return helper(x) + helper(x)

model(jnp.ones(8))
"""

ONCE = ["-r", "1", "-n", "1", "--quiet"]


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would decide the test for the file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(prelude.JAX_ENVIRONMENT)}
    return env | {"JAX_PLATFORMS": "cpu"} | extra


def _command(tmp_path: Path, *args: str, **popen) -> subprocess.Popen:
    script = tmp_path / "devices.py"
    script.write_text(DEVICES)
    return subprocess.Popen([sys.executable, "-m", "jitmagic", str(script), *ONCE, *args],
                            cwd=tmp_path, stderr=subprocess.PIPE, **popen)


@pytest.mark.slow
def test_what_the_file_sets_before_import_jax_reaches_jax(tmp_path):
    env = _clean_env()
    del env["JAX_PLATFORMS"]  # the file's setdefault decides it
    proc = _command(tmp_path, "--save", "r.json", stdout=subprocess.PIPE, env=env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    saved = json.loads((tmp_path / "r.json").read_text())["env"]
    assert saved["device_count"] == 4 and saved["backend"] == "cpu" and saved["x64"] is True
    assert saved["xla_flags"] == "--xla_force_host_platform_device_count=4"
    assert not [w for w in jitmagic.load(tmp_path / "r.json").warnings  # as it says them
                if "after jax was imported" in w or "did not use it" in w]


@pytest.mark.slow
def test_reports_are_written_before_the_table_is_printed(tmp_path):
    proc = _command(tmp_path, "--save", "r.json", "--html", "r.html", stdout=subprocess.PIPE,
                    env=_clean_env())
    first = proc.stdout.readline()  # blocks until the command prints its first line
    assert first.startswith(b"jitcompare: ")
    assert jitmagic.load(tmp_path / "r.json").entry == "model"  # complete by then
    assert (tmp_path / "r.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
    rest = proc.stdout.read()  # what the buffered readline above has not returned yet
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 0, err.decode()
    shown = rest.decode().rstrip()  # the glance names the page; the file saved, last
    assert "· report: r.html" in shown and shown.endswith(f"wrote {tmp_path / 'r.json'}")


@pytest.mark.slow
def test_a_stdout_closed_early_ends_quietly_with_the_report_complete(tmp_path):
    """`python -m jitmagic FILE.py --save r.json | head -1`, with the reader gone before
    the first line (a real `head` may read everything first: no broken pipe then)."""
    read, write = os.pipe()
    proc = _command(tmp_path, "--save", "r.json", stdout=write, env=_clean_env())
    os.close(write)
    os.close(read)  # the reader has gone: every write to stdout fails with EPIPE
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err and b"BrokenPipe" not in err and b"Exception ignored" \
        not in err
    assert jitmagic.load(tmp_path / "r.json").outputs_match is True


@pytest.mark.slow
def test_a_stdout_that_cannot_encode_gets_replacements_and_the_files(tmp_path):
    env = _clean_env(PYTHONIOENCODING="ascii", LC_ALL="C", PYTHONUTF8="0",
                     PYTHONCOERCECLOCALE="0")
    proc = _command(tmp_path, "--save", "r.json", "--html", "r.html", stdout=subprocess.PIPE,
                    env=env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    text = out.decode("ascii")  # nothing but ASCII reached the terminal
    assert re.search(r"\d\?", text)  # a ratio's ×, replaced
    assert "× " in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert jitmagic.load(tmp_path / "r.json").entry == "model"


# --------------------------------------------------------------------------- the prelude


@pytest.fixture
def without_jax(monkeypatch):
    """``sys.modules`` as a fresh ``python -m jitmagic`` sees it when the file starts: no
    jax (imports still use the real table, so nothing is imported twice)."""
    monkeypatch.setattr(sys, "modules", {k: v for k, v in sys.modules.items() if k != "jax"})


def _namespace(tmp_path: Path) -> dict:
    return {"__name__": "__main__", "__file__": str(tmp_path / "f.py")}


def test_the_leading_lines_run_until_the_first_definition(tmp_path, without_jax, monkeypatch):
    monkeypatch.setenv("JITMAGIC_PRELUDE_TEST", "")  # the file sets it: put back after
    monkeypatch.delenv("JITMAGIC_PRELUDE_TEST")
    source = ('"""doc"""\nfrom __future__ import annotations\nimport os\n'
              'os.environ["JITMAGIC_PRELUDE_TEST"] = "1"\n'
              "def f(x):\n    return x\n"
              'os.environ["JITMAGIC_PRELUDE_TEST"] = "2"\nf(1)\n')
    ns = _namespace(tmp_path)
    done = prelude.run_prelude(source, str(tmp_path / "f.py"), ns)
    assert os.environ["JITMAGIC_PRELUDE_TEST"] == "1" and "os" in ns and "f" not in ns
    assert done.stopped_at == 5 and done.imported_by == "jitmagic"
    import ast

    rest = done.rest(ast.parse(source).body)
    assert [type(s).__name__ for s in rest] == ["ImportFrom", "FunctionDef", "Assign", "Expr"]


def test_the_leading_lines_stop_before_a_swept_name(tmp_path, without_jax):
    ns = _namespace(tmp_path)
    done = prelude.run_prelude("import math\nscale = n * 2\nmath.sqrt(scale)\n",
                               str(tmp_path / "f.py"), ns, swept="n")
    assert "math" in ns and "scale" not in ns and done.stopped_at == 2


def test_a_leading_line_that_raises_or_exits_is_the_users_error(tmp_path, without_jax):
    path = tmp_path / "f.py"
    source = "import os\nos.environ['X'] = 1\nprint(1)\n"
    path.write_text(source)
    with pytest.raises(UserCodeError) as raised:
        prelude.run_prelude(source, str(path), _namespace(tmp_path))
    message = str(raised.value)
    assert message.startswith("the file raised before its final call:")
    assert "f.py\", line 2" in message and "str expected, not int" in message
    assert "jitmagic" not in message.split("TypeError")[0].replace(str(tmp_path), "")
    with pytest.raises(UserCodeError, match=r"^your script exited \(sys.exit\(3\)\) before"):
        prelude.run_prelude("import sys\nsys.exit(3)\nprint(1)\n", str(path),
                            _namespace(tmp_path))


def test_settings_too_late_for_this_run_are_named(monkeypatch):
    monkeypatch.delenv("JAX_ENABLE_X64", raising=False)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    early = prelude.Prelude(imported_by="jitmagic", seen_by_jax=prelude.jax_environment(),
                            stopped_at=7)
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    assert str(prelude.late_settings(early, "/tmp/train.py")) == (
        "train.py sets JAX_ENABLE_X64='1', but jitmagic imports jax before line 7 (the first "
        "definition, or a use of the swept name) runs, so this run did not use it: set it "
        "above line 7, or in the shell")  # XLA_FLAGS: read later, when the backend starts
    early.imported_by = "file"  # as `python train.py`: the file's own business
    assert prelude.late_settings(early, "/tmp/train.py") is None


def test_called_in_a_process_that_imported_jax_the_run_says_what_it_missed(tmp_path, capsys,
                                                                           monkeypatch):
    for name in ("JAX_ENABLE_X64", "JITMAGIC_X"):  # the file sets them: put back after
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("JAX_PLATFORMS", os.environ.get("JAX_PLATFORMS", "cpu"))  # setdefault
    script = tmp_path / "x64.py"
    script.write_text(DEVICES.replace('os.environ["XLA_FLAGS"]', 'os.environ["JITMAGIC_X"]'))
    assert main([str(script), *ONCE, "--save", str(tmp_path / "r.json")]) == 0
    warnings = jitmagic.load(tmp_path / "r.json").warnings  # the saved facts, said
    assert ("x64.py sets JAX_ENABLE_X64='1', but jax had been imported before the file ran "
            "(in this process), so this run did not use it: run `python -m jitmagic` in a "
            "fresh process, or set it in the shell") in warnings


def test_a_report_that_fails_to_write_after_measuring_keeps_the_table_and_the_other(
        tmp_path, capsys, monkeypatch):
    from jitmagic.model.reports import storage

    def disk_full(result, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage, "save", disk_full)
    script = tmp_path / "small.py"
    script.write_text(DEVICES[DEVICES.index("import jax\n"):])  # no environment set
    html = tmp_path / "r.html"
    assert main([str(script), *ONCE, "--save", str(tmp_path / "r.json"), "--html", str(html)]) \
        == 3
    out, err = capsys.readouterr()
    # the glance names the HTML written on its last line (wrapped to the terminal)
    assert out.startswith("jitcompare: model — ") and html.is_file()
    assert out.replace("\n    ", " ").rstrip().endswith(f"report: {html}")
    assert err.strip() == (f"jitmagic: cannot write --save {tmp_path / 'r.json'}: "
                           "[Errno 28] No space left on device")
