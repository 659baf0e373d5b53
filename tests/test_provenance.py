"""Provenance in every report (source, options, created, env.jitmagic) and --baseline in
each front end: crafted records first, then one small measurement per front end."""

from __future__ import annotations

import copy
import dataclasses
import json
import re

import pytest
from support import SMALL_CELL, comparison
from test_records import point

import jitmagic
from jitmagic import Comparison
from jitmagic.cell.provenance import entry_source, read_baseline, spell, stamp, with_baseline
from jitmagic.errors import InputError
from jitmagic.frontends.command import main
from jitmagic.model.reports.storage import save
from jitmagic.model.sweep import Sweep
from jitmagic.options import Options
from jitmagic.render.bundle import text as report_text

CREATED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
#: The fewest repeats that give the rule a spread, and the fewest calls.
TINY = ("-r", "3", "-n", "2")


def stamped(**changes) -> Comparison:
    c = stamp(point(), source="def f(x):\n    return x < 1 and '<b>'\nf(1)\n",
              options="-r 3 --nest layer")
    assert isinstance(c, Comparison)
    return dataclasses.replace(c, **changes)


def test_stamp_records_source_options_time_and_version():
    c = stamped()
    assert c.options == "-r 3 --nest layer" and c.source.startswith("def f(x):")
    assert CREATED.match(c.created) and c.env["jitmagic"] == jitmagic.__version__
    assert c.env["jax"] == "0.10.2"  # the measured environment is kept


def test_provenance_round_trips_and_older_reports_load_without_it(tmp_path):
    c = stamped(file="/home/me/train.py")
    path = tmp_path / "r.json"
    save(c, path)
    data = json.loads(path.read_text())
    assert {k: data[k] for k in ("source", "file", "options", "created")} == {
        "source": c.source, "file": "/home/me/train.py", "options": c.options,
        "created": c.created}
    assert jitmagic.load(path).to_dict() == c.to_dict()
    old = copy.deepcopy(data)
    for key in ("source", "file", "options", "created"):
        del old[key]
    del old["env"]["jitmagic"]
    for schema in ("jitmagic.comparison/2", "jitmagic.comparison/3"):
        loaded = Comparison.from_dict(dict(old, schema=schema))
        assert (loaded.source, loaded.options, loaded.created) == (None, None, None)
        assert "made " not in str(loaded)  # nothing recorded: no made-line


def test_a_provenance_field_of_the_wrong_kind_is_refused():
    data = stamped().to_dict()
    with pytest.raises(jitmagic.ReportSchemaError, match="options: expected"):
        Comparison.from_dict(dict(data, options=3))


def test_the_text_shows_one_made_line():
    c = stamped(created="2026-12-01T12:30:00Z")
    full = c.report(verbose=True)  # the glance leaves it to -v
    assert f"made 2026-12-01T12:30:00Z by jitmagic {jitmagic.__version__} with -r 3 " \
           "--nest layer" in full and full.count("made 20") == 1
    assert "return x < 1" not in full  # the source is the HTML's, collapsed
    assert "with the default options" in \
        dataclasses.replace(c, options="").report(verbose=True)


def test_the_html_shows_the_source_escaped_and_collapsed_and_the_options():
    page = stamped()._repr_mimebundle_()["text/html"]
    assert "<details><summary>source (3 lines)</summary><pre>def f(x):" in page
    assert "return x &lt; 1 and &#x27;&lt;b&gt;&#x27;" in page and "'<b>'" not in page
    assert "with <code>-r 3 --nest layer</code>" in page


@pytest.mark.parametrize(("options", "spelled"), [
    (Options(), ""),
    (Options(repeat=3, nest=("layer",)), "-r 3 --nest layer"),
    (Options(repeat=1, number=2, vmap=True, batch=8, in_axes=(0, None)),
     "-r 1 -n 2 --vmap --batch 8 --in-axes 0,None"),
    (Options(sweep=("n", (1, 2))), "--sweep n=1,2"),
    (Options(timeout=2.5, lines=True, quiet=True), "--timeout 2.5 --lines -q"),
])
def test_keywords_are_spelled_as_options(options, spelled):
    assert spell(options) == spelled


def test_spelled_options_quote_what_the_shell_would_split():
    assert spell(Options(), baseline="my reports/old.json") == "--baseline 'my reports/old.json'"


def test_a_bad_baseline_fails_before_measuring(tmp_path):
    assert read_baseline(None) is None
    with pytest.raises(InputError, match="--baseline .*missing.json: no report at"):
        read_baseline(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(InputError,
                       match=r'--baseline .*bad.json: .*not a jitmagic report \(it has no "schema'):
        read_baseline(tmp_path / "bad.json")


def test_the_baseline_diff_shows_under_the_verdict_and_is_not_saved():
    flat = {p: [0.01, 0.0101, 0.0102] for p in ("trace_s", "compile_s", "first_call_s")}
    old = comparison(flat, flat)
    new = with_baseline(comparison({k: [3 * x for x in v] for k, v in flat.items()}, flat),
                        old)
    assert isinstance(new, Comparison)
    lines = new.report(verbose=True).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("against the baseline:"))
    # the title, the verdict, then the diff
    assert at == 2 and "NEW slower in flat trace 3.00×" in lines[at]
    glance = str(new).split("\n\n")  # at a glance, the diff follows it
    assert glance[0].splitlines()[-1].startswith("more: -v (")
    assert "NEW slower in flat trace 3.00×" in glance[1]
    assert "baseline" not in new.to_dict()
    assert "against the baseline" in new._repr_mimebundle_()["text/html"]
    sweep = with_baseline(Sweep("n", (1, 2), (old, old), 1.0), old)
    assert "against the baseline: " in str(sweep)  # the last point's


class Callable_:
    def __call__(self, x):
        return x


def test_the_entry_source_is_found_through_wrappers():
    import functools

    import jax

    assert entry_source(jax.jit(tiny)).startswith("def tiny(x):")
    assert entry_source(functools.partial(tiny)).startswith("def tiny(x):")
    assert entry_source(Callable_()).startswith("class Callable_:")
    assert entry_source(len) is None


# --- measured: one tiny function per front end ------------------------------------------


def tiny(x):
    return x * 2 + 1


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """A crafted report of ``tiny`` to compare against."""
    path = tmp_path_factory.mktemp("baseline") / "old.json"
    save(comparison({"trace_s": [0.01] * 3}, {"trace_s": [0.01] * 3}, entry="tiny"), path)
    return str(path)


def test_compare_records_the_entry_source_and_its_keywords(baseline):
    import jax.numpy as jnp

    c = jitmagic.compare(tiny, jnp.ones(4), repeat=3, number=2, baseline=baseline,
                         progress=False)
    assert c.source.startswith("def tiny(x):") and c.options == f"-r 3 -n 2 --baseline {baseline}"
    assert CREATED.match(c.created) and c.env["jitmagic"] == jitmagic.__version__
    assert c.baseline is not None and "against the baseline" in str(c)


def test_the_magic_records_the_cell_and_the_line_as_written(run_magic, baseline):
    result, cap = run_magic(f"-o -r 3 -n 2 --baseline {baseline}", SMALL_CELL)
    assert result.source == SMALL_CELL and result.options == f"-o -r 3 -n 2 --baseline {baseline}"
    assert "against the baseline" in cap.outputs[0].data["text/plain"]


def test_the_magic_refuses_a_missing_baseline_before_measuring(ip, tmp_path):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="--baseline .*nothing.json: no report at"):
        ip.run_cell_magic("jitcompare", f"--baseline {tmp_path / 'nothing.json'}", SMALL_CELL)


def test_the_command_records_the_file_and_takes_a_baseline(tmp_path, capsys, baseline):
    script = tmp_path / "train.py"
    script.write_text(SMALL_CELL)
    out = tmp_path / "r.json"
    assert main([str(script), *TINY, "-v", "--save", str(out), "--baseline", baseline]) == 0
    saved = jitmagic.load(out)
    assert saved.source == SMALL_CELL and saved.file == str(script)
    assert saved.options == f"-r 3 -n 2 --baseline {baseline}"  # what measured: no --save
    printed = capsys.readouterr().out
    assert "against the baseline" in printed and f"made {saved.created}" in printed
    assert main([str(script), "--baseline", str(tmp_path / "none.json")]) == 2


def test_sweep_records_its_values_and_keywords_once_on_the_sweep():
    import jax.numpy as jnp

    s = jitmagic.sweep("k", [1], tiny, jnp.ones(4), repeat=1, number=1, progress=False)
    assert s.options == "-r 1 -n 1 --sweep k=1" and s.source.startswith("def tiny(x):")
    assert CREATED.match(s.created)
    (p,) = s.points
    assert p.options is None and p.env["jitmagic"] == jitmagic.__version__
    full = report_text(s, verbose=True)  # the provenance is with the details
    assert "made " in full and "--sweep k=1" in full
