"""The result object: statistics derived from raw samples, and the JSON report format."""

from __future__ import annotations

import json
import math

import pytest

from jitmagic import Comparison, ReportSchemaError, VariantResult
from jitmagic.render.comparison import text_table


def make(flat_trace=(0.3, 0.1, 0.2), error=None) -> Comparison:
    flat = VariantResult("flat", {"trace_s": list(flat_trace), "execute_s": [1e-5, 2e-5]},
                         execute_loops=100, jaxpr_eqns=3000)
    nested = VariantResult("nested", {"trace_s": [0.02, 0.03, 0.01]}, helpers=("layer",),
                           error=error)
    return Comparison("model", {"flat": flat, "nested": nested}, outputs_match=None,
                      wall_s=1.0, env={"jax": "x"})


def test_statistics_are_derived_from_samples():
    c = make()
    assert c.flat.trace_s == 0.2 and c.flat.spread("trace_s") == (0.1, 0.3)
    assert c.ratio("trace_s") == pytest.approx(10.0)
    assert math.isnan(c.flat.compile_s)  # never measured: NaN, not zero
    assert c.measured_s() == pytest.approx(0.6 + 0.06 + (1e-5 + 2e-5) * 100)


def test_json_round_trip_writes_null_for_unmeasured():
    c = make(error="the nested variant failed")
    text = json.dumps(c.to_dict(), allow_nan=False)  # raises on a NaN
    d = json.loads(text)
    assert d["variants"]["flat"]["compile_s"] is None
    assert d["variants"]["nested"]["error"] == "the nested variant failed"
    again = Comparison.from_dict(d)
    assert again.to_dict() == d
    assert again.flat.samples["trace_s"] == [0.3, 0.1, 0.2]


def test_unknown_schema_fails_clearly():
    d = make().to_dict() | {"schema": "jitmagic.comparison/99"}
    with pytest.raises(ReportSchemaError, match="comparison/99'.*'jitmagic.comparison/2'"):
        Comparison.from_dict(d)


def test_text_shows_a_dash_for_what_was_not_measured():
    lines = text_table(make()).splitlines()
    compile_row = next(line for line in lines if line.startswith("XLA compile"))
    assert compile_row.split()[2:] == ["—", "—", "—"]
    assert "cannot compare" in lines[-2] or any("cannot compare" in x for x in lines)
