"""The one table of parts: a part added to it and to each layer's table is measured,
saved, loaded, shown and refused under several processes; every real part has its
entries in each layer's table."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jitmagic
from jitmagic.errors import InputError
from jitmagic.measure.parts import MEASURERS
from jitmagic.measure.parts.constants import arguments as constant_arguments
from jitmagic.measure.parts.run import PartRun, in_one_process_only
from jitmagic.measure.sampling.lockstep import Lockstep, SharedCheckpoint, refuse_unshared
from jitmagic.measure.sampling.stops import Checkpoint
from jitmagic.model import parts as table
from jitmagic.model.comparison import Comparison
from jitmagic.model.diff import DIFFERS
from jitmagic.model.stats.verdicts import BUDGET, DECIDED, MOST_ROUNDS
from jitmagic.options import Options
from jitmagic.render.bundle import SECTIONS, text
from jitmagic.render.diff import DIFF_SECTIONS


@dataclasses.dataclass(frozen=True)
class Equations:
    """A dummy part's record: how many equations the flat program the comparison traced
    holds (read off what it built, so a real figure of a real run)."""

    count: int
    stopped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count}

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> Equations:
        if not isinstance(d, dict) or not isinstance(d.get("count"), int):
            raise ValueError(f"{where}: expected {{'count': N}}")
        return cls(d["count"])


def measure_equations(result: Comparison, run: PartRun) -> Comparison:
    traced = run.built["flat"].jaxpr
    jaxpr = getattr(traced, "jaxpr", traced)
    return result.with_part("equations", Equations(len(jaxpr.jaxpr.eqns)))


def show_equations(c: Comparison, plot: bool = True,
                   verbose: bool = False) -> tuple[str, str] | None:
    record = c.part("equations")
    if record is None:
        return None
    said = f"The flat program holds {record.count} equations."
    return said, f"<p>{said}</p>"


DUMMY = table.Part("equations", "equations", ("timeout",), Equations.from_dict, shown=0)


@pytest.fixture
def with_dummy(monkeypatch):
    """The dummy part as a new part is added: one entry in the table of parts, one in
    the measuring layer's table, one in the rendering layer's."""
    monkeypatch.setattr(table, "PARTS", (*table.PARTS, DUMMY))
    monkeypatch.setitem(MEASURERS, DUMMY.name, measure_equations)
    monkeypatch.setitem(SECTIONS, DUMMY.name, show_equations)
    return DUMMY


def _layer(x):
    return jnp.tanh(x) * 2.0


def _model(x):
    return _layer(_layer(x)).sum()


def test_a_part_added_to_the_table_alone_is_measured_saved_loaded_and_shown(with_dummy):
    x = jnp.ones((8,))
    result = jitmagic.compare(_model, x, repeat=1, number=1, timeout=600, progress=False)
    expected = len(jax.make_jaxpr(_model)(x).jaxpr.eqns)
    assert result.part("equations") == Equations(expected)
    assert f"The flat program holds {expected} equations." in text(result)
    saved = json.loads(json.dumps(result.to_dict()))
    assert saved["equations"] == {"count": expected}
    loaded = Comparison.from_dict(saved)
    assert loaded.part("equations") == Equations(expected)
    assert f"The flat program holds {expected} equations." in text(loaded)
    unasked = jitmagic.compare(_model, x, repeat=1, number=1, progress=False)
    assert unasked.part("equations") is None  # no option asked for it: not measured


def test_a_part_added_to_the_table_alone_is_refused_under_several_processes(with_dummy):
    refuse_unshared(Options(timeout=600), 1)  # one process: nothing refused
    with pytest.raises(InputError, match=r"--timeout cannot be measured across 2 processes"):
        refuse_unshared(Options(timeout=600), 2)


def test_a_found_part_of_one_process_is_left_out_with_a_note_under_several():
    shared = SharedCheckpoint(Lockstep(), Checkpoint())
    shared.lockstep.count = 2
    part = table.named("constant_arguments")
    note = in_one_process_only(part, shared)
    assert note and "constants passed as arguments were not measured" in str(note)
    assert "2 processes" in str(note)
    assert in_one_process_only(part, Checkpoint()) is None
    assert in_one_process_only(table.named("xla_passes"), shared) is None  # runs in each
    assert part.label == constant_arguments.PART


def test_every_option_of_one_process_parts_is_refused_and_the_rest_pass():
    for part in table.PARTS:
        for option, flag in zip(part.asked_by, part.flags(), strict=True):
            asked = Options(**{option: True})
            if part.processes == table.ONE_PROCESS:
                with pytest.raises(InputError, match=flag):
                    refuse_unshared(asked, 2)
            elif not any(p.processes == table.ONE_PROCESS and option in p.asked_by
                         for p in table.PARTS):
                refuse_unshared(asked, 2)


@pytest.mark.parametrize("part", table.PARTS, ids=lambda p: p.name)
def test_each_part_has_its_measurer_and_section_in_its_layers_table(part):
    """Each part is measured by the measuring layer's table or with another part asked
    by the same options (the advice, with the attribution), and shown by the rendering
    layer's table or with that part; its record is a field of the comparison."""
    with_other = [p for p in table.PARTS if p is not part and p.name in MEASURERS
                  and set(part.asked_by) <= set(p.asked_by)]
    assert part.name in MEASURERS or with_other, part.name
    assert part.name in SECTIONS or (with_other and with_other[0].shown == part.shown)
    assert part.name in {f.name for f in dataclasses.fields(Comparison)}


def test_every_layers_table_names_parts_of_the_table_only():
    names = {p.name for p in table.PARTS}
    for layer in (MEASURERS, SECTIONS, DIFFERS, DIFF_SECTIONS):
        assert set(layer) <= names
        assert all(callable(f) for f in layer.values())
    assert set(DIFFERS) == set(DIFF_SECTIONS)  # a part diffed is shown diffed


def test_the_labels_progress_lists_follow_the_table():
    assert table.later_labels(Options(cache=True, xla=True)) == ("second start", "XLA passes")
    assert table.later_labels(Options(), found=("constant_arguments",)) == (
        "constants passed as arguments",)
    assert table.later_labels(Options(advise=True)) == ("attribution", "advice")


def test_the_distributed_docs_say_what_each_part_does_under_several_processes():
    """docs/distributed.md's table has one row per part, saying what the table of parts
    says: refused (asked for), left out (found) or run in every process."""
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "distributed.md").read_text()
    rows = {line.split("|")[1].strip(): line.split("|")[3].strip()
            for line in doc.splitlines() if line.startswith("| ") and "---" not in line}
    for part in table.PARTS:
        said = rows[part.label]
        if part.processes == table.LOCKSTEP:
            assert said.startswith("in every process"), part.name
        elif part.asked_by:
            assert said == "refused", part.name
        else:
            assert said.startswith("left out"), part.name


#: A 1 MiB table the program captures: the constants passed as arguments are then a part
#: the comparison finds wanted.
TABLE = np.linspace(0.0, 1.0, 1 << 18, dtype=np.float32)


def _lookup(x):
    return x + jnp.take(TABLE, jnp.arange(8))


def _decode(x):
    return _lookup(_lookup(x) * 0.5)


@pytest.mark.parametrize(("asked", "name"), [({"cache": True}, "second_start"),
                                             ({"effort": True}, "effort"),
                                             ({}, "constant_arguments")])
def test_the_budget_stops_every_parts_rounds_and_the_report_says_so_and_saves_it(asked, name):
    """One rule for every part's rounds: -r auto's fewest, then up to the comparison's
    cold runs (4 here) while undecided and within --budget. A budget spent at once stops
    each part after the fewest (unless the rule decided there first: the second start
    decides nothing, so it is the budget); the record keeps the rounds and why they
    ended, the report says which part stopped and after how many rounds, and the saved
    report holds the budget."""
    x = jnp.ones(8)
    spent = jitmagic.compare(_decode, x, repeat=4, number=1, budget=1e-6, progress=False,
                             **asked)
    record = spent.part(name)
    assert record.rounds == 3 and record.rounds_ended in ((BUDGET,) if asked.get("cache")
                                                          else (BUDGET, DECIDED))
    said = f"the {table.named(name).label} part stopped after 3 rounds"
    assert (said in text(spent)) == (record.rounds_ended == BUDGET)
    saved = json.loads(json.dumps(spent.to_dict()))
    assert saved["budget_s"] == 1e-6 and saved[name]["rounds"] == 3
    loaded = Comparison.from_dict(saved)
    assert loaded.budget_s == 1e-6 and loaded.part(name) == record
    assert (said in text(loaded)) == (record.rounds_ended == BUDGET)
    if asked.get("cache"):  # the default budget: the cap, the comparison's 4 runs
        roomy = jitmagic.compare(_decode, x, repeat=4, number=1, progress=False, **asked)
        assert (roomy.second_start.rounds, roomy.second_start.rounds_ended) == (4, MOST_ROUNDS)
        assert roomy.budget_s == 30 and said not in text(roomy)


def test_a_report_saved_before_the_budget_reads_as_not_recorded():
    saved = jitmagic.compare(_model, jnp.ones((8,)), repeat=1, number=1, cache=True,
                             progress=False).to_dict()
    del saved["budget_s"], saved["second_start"]["rounds"], saved["second_start"]["rounds_ended"]
    old = Comparison.from_dict(saved)
    assert math.isnan(old.budget_s) and old.second_start.rounds == 0
    assert old.second_start.rounds_ended is None and "--budget" not in text(old)
