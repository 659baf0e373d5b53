"""Saved reports: jitmagic.load returns the result, shows the same, equals what was saved."""

from __future__ import annotations

import json

import pytest
from IPython.display import display
from IPython.utils.capture import capture_output
from support import FAST, SMALL_CELL, comparison, variant

import jitmagic
from jitmagic import Comparison, ReportSchemaError
from jitmagic.model.sweep import Sweep


def test_load_round_trips_and_shows_the_same(run_magic, ip, tmp_path):
    path = tmp_path / "r.json"
    result, cap = run_magic(f"-o {FAST} --save {path}", SMALL_CELL)
    loaded = jitmagic.load(path)
    assert isinstance(loaded, Comparison)
    assert loaded.to_dict() == json.loads(path.read_text())
    assert loaded.to_dict() == json.loads(json.dumps(result.to_dict()))
    # Displayed as itself, a loaded report is the bundle the magic showed, chart and all.
    with capture_output() as again:
        display(loaded)
    (shown_output,) = again.outputs
    shown = shown_output.data
    assert shown["text/html"] == cap.outputs[0].data["text/html"]
    assert shown["text/plain"] == cap.outputs[0].data["text/plain"]
    assert 'src="data:image/png;base64,' in shown["text/html"]


def test_sweeps_round_trip(tmp_path):
    d = json.loads(json.dumps(_minimal()))
    failed = _minimal()
    failed["variants"]["nested"]["error"] = "the nested variant failed: boom"
    failed = Comparison.from_dict(failed).to_dict()  # its verdict is derived from the error
    d["sweep"] = {"name": "n", "values": [1, 2], "points": [_minimal(), failed], "wall_s": 1.0,
                  "stopped": None}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(d))
    loaded = jitmagic.load(path)  # written before 0.3: a sweep inside its last comparison
    assert isinstance(loaded, Sweep) and loaded.values == (1, 2)
    assert Sweep.from_dict(loaded.to_dict()).to_dict() == loaded.to_dict()
    assert "~ n^" in str(loaded)  # a loaded sweep renders as a sweep
    assert "error (n=2): the nested variant failed: boom" in str(loaded)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"schema": "jitmagic.comparison/99"}, "schema 'jitmagic.comparison/99'"),
        ({"entry": "f"}, "not a jitmagic report \\(it has no \"schema\" field\\): give a file"),
        ([1, 2], "not a jitmagic report \\(it has no \"schema\" field\\)"),
        ({"schema": "jitmagic.comparison/1"}, "entry: missing"),
    ],
)
def test_unknown_schema_fails_naming_it(tmp_path, content, message):
    path = tmp_path / "old.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ReportSchemaError, match=message) as info:
        jitmagic.load(path)
    assert str(path) in str(info.value)


def test_not_json_fails_clearly(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text("flat was faster\n")
    with pytest.raises(ReportSchemaError, match="not a jitmagic report: it is not JSON"):
        jitmagic.load(path)


def test_env_says_where_the_numbers_came_from(tmp_path):
    from jitmagic.measure.sampling.stages import environment

    env = environment()
    for key in ("jax", "jaxlib", "backend", "devices", "device_count", "python", "platform",
                "cpu_count", "xla_flags"):
        assert key in env
    assert env["devices"] and env["device_count"] >= 1


#: Notes whose sentence reads a text as a key of its own table, or tuples side by side, as
#: no report jitmagic wrote holds them (issue 59 item 6): each is refused as it loads,
#: naming the field, where ``str()`` of the loaded report would raise.
UNSAYABLE = [
    ({"kind": "left_as_is", "rows": ["environ", "nowhere"], "keys": ["A", "B"]},
     r"warnings\[0\]\.rows\[1\]: expected 'figures' or .* got 'nowhere'"),
    ({"kind": "no_line_hook", "why": "asleep", "python": "3.11"},
     r"warnings\[0\]\.why: expected 'not_asked' or 'no_tool_id' or 'no_monitoring', got 'asleep'"),
    ({"kind": "part_not_measured", "part": "everything", "error": "disk full"},
     r"warnings\[0\]\.part: expected 'orderings' or .* got 'everything'"),
    ({"kind": "one_process_only", "part": "everything", "processes": 2},
     r"warnings\[0\]\.part: expected 'orderings' or .* got 'everything'"),
    ({"kind": "filters_put_back", "filters": False, "showwarning": False},
     r"warnings\[0\]: a 'filters_put_back' note says what changed, but filters and "
     r"showwarning say nothing"),
    ({"kind": "left_as_is", "rows": ["environ", "cwd"], "keys": ["A"]},
     r"warnings\[0\]: rows and keys are read side by side, so they must be of one length; "
     r"got \[2, 1\]"),
    ({"kind": "late_settings", "file": "a.py", "settings": ["jax_enable_x64", "x"],
      "values": ["True"], "imported_by": "before", "line": 0},
     r"warnings\[0\]: settings and values are read side by side"),
    ({"kind": "backward_passes", "helpers": ["f"], "counts": [1, 2]},
     r"warnings\[0\]: helpers and counts are read side by side"),
    ({"kind": "outputs_differ", "path": "w", "structure": "node", "worst": 0.0,
      "nonfinite": False, "others": 0, "nodes": ["Linear"], "dtypes": ["", ""],
      "shapes": [[], []], "statics": ["", ""], "reference": "flat", "other": "nested"},
     r"warnings\[0\]\.nodes: expected 2 items \(as the note's other fields say\), got 1"),
    ({"kind": "stays_inline", "helper": "f", "why": {
        "kind": "inline_rules_only", "rule": "custom_vjp", "rules": ["fwd"], "equations": None,
        "sites": 1, "caller": "g"}},
     r"warnings\[0\]\.why\.rules: expected 2 items"),
]


@pytest.mark.parametrize(("note", "message"), UNSAYABLE, ids=lambda x: x.get("kind", "")
                         if isinstance(x, dict) else "")
def test_a_note_its_sentence_cannot_say_is_refused_as_it_loads(tmp_path, note, message):
    d = _minimal() | {"warnings": [note]}
    path = tmp_path / "crafted.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ReportSchemaError, match=message):
        jitmagic.load(path)
    fixed = _minimal() | {"warnings": [{"kind": "waited", "seconds": 1.0}]}
    path.write_text(json.dumps(fixed))
    assert "waited 1 s for another thread's" in jitmagic.load(path).report(verbose=True)


def _minimal() -> dict:
    """One run a side, every phase 0.1 s, nothing nested."""
    return comparison(*(variant(name, every=0.1, execute_loops=1, helpers=())
                        for name in ("flat", "nested")), entry="f").to_dict()
