"""What a new user met on real-world code shapes: helper names as written, helpers
found but not nestable, a cell changing the user's own module or class, scalars held
static one by one, checkpointed helpers, framework-jitted entries, one-run ratios."""

from __future__ import annotations

from jitmagic.model.comparison import PHASES, Comparison, VariantResult
from jitmagic.render.comparison import text_table


def _one_run(name: str, first_call: float) -> VariantResult:
    samples = {p: [0.01] for p in PHASES}
    samples["first_call_s"] = [first_call]
    return VariantResult(name, samples, helpers=("layer",) if name == "nested" else ())


def test_a_ratio_from_one_run_a_side_is_marked_as_such():
    c = Comparison("model", {"flat": _one_run("flat", 0.682), "nested": _one_run("nested", 0.1)},
                   True)
    row = next(ln for ln in text_table(c).splitlines() if ln.startswith("first call"))
    assert "6.82× (one run)" in row
