"""Typed records: statistics derived from raw samples, exact round trips, old reports,
hostile files, atomic saving."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import comparison, variant

import jitmagic
from jitmagic import Comparison, ReportSchemaError
from jitmagic.model.advice import Advice, Candidate
from jitmagic.model.attribution import Attribution, HelperTime
from jitmagic.model.comparison import Sharding
from jitmagic.model.orderings import ORDERINGS, Orderings
from jitmagic.model.reports.storage import save
from jitmagic.model.rows import PHASES, OrderingRow
from jitmagic.model.saved.files import check_target
from jitmagic.model.sweep import Sweep
from jitmagic.render.bundle import text as report_text
from jitmagic.render.comparison import text_table

NESTED_ERROR = "the nested variant failed:\nTypeError: <module> said no"


def point(scale: float = 1.0, **changes) -> Comparison:
    """A comparison as a measured one looks: both variants, a failure note, a warning."""
    samples = {p: [0.01 * scale * (i + 1) for i in range(3)] for p in PHASES}
    flat = variant("flat", samples, execute_loops=40, jaxpr_eqns=120, nested_calls=0,
                   stablehlo_bytes=9000, stablehlo_calls=0, compiled_calls=0,
                   jaxpr_text="{ lambda ; a:f32[4]. let b = sin a in (b,) }")
    nested = variant("nested", {"trace_s": [0.002 * scale]}, error=NESTED_ERROR,
                     noted=("`step` runs inline",))
    c = comparison(flat, nested, max_abs_diff=0.0, wall_s=2.5 * scale,
                   env={"jax": "0.10.2", "mesh_shape": {"x": 8}, "devices": ["cpu:0"]},
                   warned=("a compile was served from JAX's cache",))
    return dataclasses.replace(c, **changes)


def measured_in_part() -> Comparison:
    """Tracing measured on both sides, steady state on flat only, nothing else."""
    flat = variant("flat", {"trace_s": [0.3, 0.1, 0.2], "execute_s": [1e-5, 2e-5]},
                   execute_loops=100, jaxpr_eqns=3000)
    nested = variant("nested", {"trace_s": [0.02, 0.03, 0.01]})
    return comparison(flat, nested, outputs_match=None, wall_s=1.0, env={"jax": "x"})


def test_statistics_are_derived_from_samples():
    c = measured_in_part()
    assert c.flat.trace_s == 0.2 and c.flat.spread("trace_s") == (0.1, 0.3)
    assert c.ratio("trace_s") == pytest.approx(10.0)
    assert math.isnan(c.flat.compile_s)  # never measured: NaN, not zero
    assert c.measured_s() == pytest.approx(0.6 + 0.06 + (1e-5 + 2e-5) * 100)


def test_text_shows_a_dash_for_what_was_not_measured():
    lines = text_table(measured_in_part()).splitlines()
    compile_row = next(line for line in lines if line.startswith("XLA compile"))
    assert compile_row.split()[2:] == ["—", "—", "—"]
    assert "The first call was not measured: cannot compare cold starts." in lines


def every_record() -> Comparison:
    rows = {n: OrderingRow(n, {"first_call_s": [0.2], "execute_s": [1e-5],
                               "compile_event_s": [0.1]}, execute_loops=5, compile_events=1,
                           jaxpr_eqns=7, same_program=n != "vmap(f)" or None)
            for n in ORDERINGS}
    orderings = Orderings("model", 8, (0, None), False, rows, True, 0.0, ("slow machine",))
    attribution = Attribution("model", 0.5, 0.45, 0.05,
                              (HelperTime("layer", 4, 0.3, 0.2), HelperTime("act", 8, 0.1, 0.1)))
    advice = Advice(0.9, 0.01, (Candidate("layer", 4, 0.3, -1e-6, 0.01, True),
                                Candidate("act", 8, None, None, None, False, "boom")),
                    ("layer",), 0.3, 0.2, ("once",), 3, 4.0)
    sharding = Sharding(("P('x',)",), {"flat": True, "nested": None})
    return point(3, orderings=orderings, attribution=attribution, advice=advice,
                 sharding=sharding)


def a_sweep() -> Sweep:
    return Sweep("n", (1, 2.5, "big"), (point(1), point(2), every_record()), 9.0,
                 warned=("about the whole sweep",))


def test_a_sweep_is_its_own_record_and_round_trips_exactly():
    s = a_sweep()
    d = json.loads(json.dumps(s.to_dict(), allow_nan=False))
    assert d["schema"] == "jitmagic.sweep/3" and d["entry"] == s.entry
    again = Sweep.from_dict(d)
    assert again.to_dict() == d
    assert [p.wall_s for p in again.points] == [2.5, 5.0, 7.5]
    assert again.warnings == ("about the whole sweep",) and again.last.orderings is not None
    assert str(again).startswith("jitcompare sweep: ")  # a sweep renders as a sweep
    assert "~ n^" in report_text(again, verbose=True)


def test_a_sweep_saved_inside_its_last_comparison_still_loads(tmp_path):
    """Before 0.3 a sweep was its last point's comparison holding ``"sweep"``."""
    s = a_sweep()
    old = s.last.to_dict() | {"warnings": [*s.last.warnings, *s.warnings],
                              "sweep": {"name": s.name, "values": list(s.values),
                                        "points": [p.to_dict() for p in s.points],
                                        "wall_s": s.wall_s, "stopped": None}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    loaded = jitmagic.load(path)
    assert isinstance(loaded, Sweep) and loaded.values == s.values
    assert loaded.warnings == s.warnings  # the sweep's own, not its last point's
    assert loaded.to_dict() == s.to_dict()


def test_every_record_round_trips_exactly():
    c = every_record()
    d = json.loads(json.dumps(c.to_dict(), allow_nan=False))  # raises on a NaN
    assert d["variants"]["nested"]["compile_s"] is None  # not measured: null
    assert d["variants"]["nested"]["error"] == NESTED_ERROR
    again = Comparison.from_dict(d)
    assert again.to_dict() == d
    assert again.flat.samples == c.flat.samples  # every raw sample, exactly
    assert again.flat.samples["trace_s"] == pytest.approx([0.03, 0.06, 0.09])
    assert again.orderings.rows["vmap(jit(f))"].compile_s == 0.1
    assert again.orderings.in_axes == (0, None)
    assert again.advice.ranked[1].error == "boom"
    assert again.sharding.kept_input_shardings == {"flat": True, "nested": None}
    assert again.attribution.helpers[0] == HelperTime("layer", 4, 0.3, 0.2)


def test_a_version_1_report_still_loads(tmp_path):
    # Written the way jitmagic 0.1 wrote it: extras at the top level, derived shares included.
    samples = {"trace_s": [0.2], "lower_s": [0.1], "compile_s": [0.3], "first_call_s": [0.7],
               "execute_s": [2e-05]}
    variant = {"trace_s": 0.2, "lower_s": 0.1, "compile_s": 0.3, "first_call_s": 0.7,
               "execute_s": 2e-05, "samples": samples, "execute_loops": 100, "jaxpr_eqns": 40,
               "nested_calls": 0, "stablehlo_bytes": 5000, "stablehlo_calls": 0,
               "compiled_calls": 0, "helpers": [], "jaxpr": "", "error": None, "notes": []}
    old = {"schema": "jitmagic.comparison/1", "entry": "model",
           "variants": {"flat": variant, "nested": dict(variant, helpers=["layer"])},
           "outputs_match": True, "max_abs_diff": None, "wall_s": 3.0,
           "env": {"jax": "0.10.2", "xla_flags": ""}, "warnings": [], "stopped": None,
           "attribution": {"entry": "model", "trace_s": 0.25, "entry_s": 0.125,
                           "entry_own_s": 0.1875, "entry_code_s": 0.0625, "jax_s": 0.125,
                           "entry_share": 0.75,
                           "helpers": [{"helper": "layer", "calls": 4, "inclusive_s": 0.0625,
                                        "own_s": 0.0625, "share": 0.25,
                                        "inclusive_share": 0.25}]}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    loaded = jitmagic.load(path)
    assert loaded.flat.execute_loops == 100 and loaded.nested.helpers == ("layer",)
    assert math.isnan(loaded.max_abs_diff)
    assert loaded.attribution.helpers[0].calls == 4
    new_fields = {"jaxpr_eqns_top": None, "inline": [], "helper_calls": {},
                  "stages_from": None}  # unknown to /1
    variants = {k: v | new_fields for k, v in old["variants"].items()}
    verdict = loaded.verdict.to_dict()  # derived from the samples, written by every save
    assert verdict["first_call"] == "inconclusive"  # one run a side: no spread to judge
    why = loaded.to_dict()["why"]  # derived too: a /1 report counted no constants
    assert next(c for c in why if c["cause"] == "big constants")["measured"] is False
    assert loaded.to_dict() == old | {"schema": "jitmagic.comparison/6", "variants": variants,
                                      "repeats_ended": None, "verdict": verdict, "why": why,
                                      "why_clock": "wall"}


def _bad(d: dict, dotted: str, value) -> dict:
    """``d`` with the field at ``dotted`` (``a.b.c``) replaced by ``value``."""
    d = copy.deepcopy(d)
    *parents, last = dotted.split(".")
    target = d
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    target[last] = value
    return d


@pytest.mark.parametrize(("field", "value", "message"), [
    ("values", [1], "points: expected one point per value"),
    ("points.0.variants.flat.execute_loops", [], r"points\[0\].variants.flat"),
    ("warnings", "one", "warnings: expected a list"),
])
def test_a_wrong_field_of_a_sweep_is_named(tmp_path, field, value, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_bad(a_sweep().to_dict(), field, value)))
    with pytest.raises(ReportSchemaError, match=message):
        jitmagic.load(path)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("schema", "jitmagic.comparison/99", "comparison/99'.*'jitmagic.comparison/6'"),
    ("variants.flat.execute_loops", "x", "variants.flat.execute_loops: expected a count"),
    ("variants.flat.execute_loops", True, "variants.flat.execute_loops: expected a count"),
    ("variants.flat.execute_loops", 10**4000, "execute_loops: .*an integer of about 4000 digits"),
    ("variants.nested.jaxpr_eqns", -1, "variants.nested.jaxpr_eqns: expected a count"),
    ("variants.flat.samples.trace_s", [0.1, "fast"], r"samples.trace_s\[1\]: expected a number"),
    ("variants.flat.notes", "one note", "variants.flat.notes: expected a list"),
    ("variants.flat.jaxpr", 3, "variants.flat.jaxpr: expected a string"),
    ("variants", {"flat": {}}, "variants: expected the variants flat and nested"),
    ("entry", None, "entry: expected a string"),
    ("wall_s", "3 s", "wall_s: expected a number"),
    ("max_abs_diff", 10**400, "max_abs_diff: expected a finite number"),
    ("orderings.batch", 2.5, "orderings.batch: expected a count"),
    ("orderings.rows.vmap(f).same_program", "yes", "same_program: expected true or false"),
    ("advice.flat_cold_s", 0, "advice.flat_cold_s: expected seconds above zero"),
    ("advice.ranked.0.calls", None, r"advice.ranked\[0\].calls: expected a count"),
    ("sharding.kept_input_shardings", {"flat": 1}, "kept_input_shardings.flat: expected true"),
])
def test_a_wrong_field_is_named(tmp_path, field, value, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_bad(every_record().to_dict(), field, value)))
    with pytest.raises(ReportSchemaError, match=message) as info:
        jitmagic.load(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(("content", "message"), [
    (b"{" + b'"a":' * 0 + b"[" * 100_000 + b"]" * 100_000 + b"}", "not JSON"),
    (b'{"schema": ' + b"9" * 5000 + b"}", "not JSON"),
    (b'{"schema": NaN}', "NaN is not a number JSON allows"),
    (b"\x80\x04\x95\x10\x00\x00pickle\x94.", "not JSON"),
    (b"\xef\xbb\xbf[1, 2]", "no \"schema\" field"),  # a byte-order mark is read, then refused
])
def test_hostile_files_raise_the_report_error(tmp_path, content, message):
    path = tmp_path / "hostile.json"
    path.write_bytes(content)
    with pytest.raises(ReportSchemaError, match=message):
        jitmagic.load(path)


def test_a_file_over_64_mib_is_not_read(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(65 * 2**20)
    with pytest.raises(ReportSchemaError, match="65 MiB"):
        jitmagic.load(path)


def _mutations():
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
                     st.just([]), st.just({}), st.just([1, "x"]))
    return st.lists(st.tuples(st.integers(0, 10**6), leaf), min_size=1, max_size=3)


def _paths(d, prefix=()):
    """Every path to a value inside ``d``."""
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
    for k, v in items:
        yield (*prefix, k)
        yield from _paths(v, (*prefix, k))


VALID = json.loads(json.dumps(every_record().to_dict()))
PATHS = list(_paths(VALID))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
def test_a_mutated_report_loads_and_renders_or_is_refused(mutations):
    d = copy.deepcopy(VALID)
    for index, value in mutations:
        *parents, last = PATHS[index % len(PATHS)]
        target = d
        try:
            for key in parents:
                target = target[key]
            target[last] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed this path
    try:
        c = Comparison.from_dict(d)
    except ReportSchemaError:
        return
    assert str(c)
    assert Comparison.from_dict(json.loads(json.dumps(c.to_dict()))).to_dict() == c.to_dict()


def test_save_writes_null_for_non_finite_numbers(tmp_path):
    c = point(wall_s=math.inf)
    path = tmp_path / "r.json"
    save(c, path)
    d = json.loads(path.read_text())
    assert d["wall_s"] is None and d["variants"]["flat"]["compile_s"] == 0.02
    assert d["variants"]["nested"]["compile_s"] is None  # not measured


def test_a_failing_save_leaves_the_old_file_intact(tmp_path):
    path = tmp_path / "r.json"
    save(point(), path)
    before = path.read_bytes()
    broken = point(env={"device": object()})  # JSON cannot write it
    with pytest.raises(TypeError):
        save(broken, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["r.json"]  # no temporary file left behind


def test_save_follows_a_symlink_and_keeps_the_usual_mode(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    save(point(), link)
    assert link.is_symlink() and jitmagic.load(real).entry == "model"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(real.stat().st_mode) == 0o666 & ~mask


def test_check_target(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert check_target("~/r.json") == tmp_path / "r.json"
    monkeypatch.chdir(tmp_path)
    assert check_target("r.json").is_absolute()
    with pytest.raises(ValueError, match="it is a folder"):
        check_target(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        check_target(tmp_path / "nowhere" / "r.json")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    # Root writes anywhere, so the folder's permission bits alone cannot show the refusal:
    # ask the same question the check asks, answered as for an ordinary user.
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: p != locked and real_access(p, mode))
    with pytest.raises(ValueError, match="not writable"):
        check_target(locked / "r.json")
