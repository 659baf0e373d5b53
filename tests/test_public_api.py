"""jitmagic's Python functions take options one way, and any callable as the entry.

``compare``, ``sweep``, ``advise``, ``attribute`` and ``lines`` all split their keywords
with one splitter: an option a function does not use is refused with a sentence, never
passed to the user's function, where it would mean something else.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.errors import InputError


def layer(x, scale=1.0):
    return sum(i * jnp.sin(x) * scale for i in range(6))


def model(x, scale=1.0):
    return sum(layer(x, scale) for _ in range(3))


class Model:
    """A callable instance, as a framework module is."""

    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return model(x, self.scale)


X = jnp.ones(8)


@pytest.mark.parametrize("entry", [functools.partial(model, scale=2.0), Model(2.0)],
                         ids=["partial", "callable instance"])
def test_sweep_takes_any_callable_entry(entry):
    s = jitmagic.sweep("N", [1, 2], entry, X, repeat=1, number=2, progress=False)
    assert len(s.points) == 2 and all(p.flat.ok and p.nested.ok for p in s.points)
    assert all("layer" in p.nested.helpers for p in s.points)  # and `model`, for Model


def test_sweep_takes_a_baseline_and_does_not_pass_it_to_the_function(tmp_path):
    path = tmp_path / "before.json"
    jitmagic.save(jitmagic.compare(model, X, repeat=1, number=2, progress=False), path)
    s = jitmagic.sweep("N", [1], model, X, repeat=1, number=2, progress=False, baseline=path)
    assert s.baseline is not None and "--baseline" in (s.options or "")
    assert s.last.baseline is None and s.last.options is None  # the sweep's, not a point's
    again = jitmagic.load(jitmagic.save(s, tmp_path / "s.json") or tmp_path / "s.json")
    assert again.options == s.options and again.created == s.created
    assert again.to_dict()["schema"] == "jitmagic.sweep/3"


def test_a_version_1_sweep_reads_its_provenance_from_its_points(tmp_path):
    from jitmagic.model.sweep import Sweep

    s = jitmagic.sweep("N", [1, 2], model, X, repeat=1, number=2, progress=False)
    old = s.to_dict()
    old["schema"] = "jitmagic.sweep/1"  # as 0.3 wrote it: provenance on every point
    for key in ("options", "created", "source"):
        for point in old["points"]:
            point[key] = old[key]
        del old[key]
    read = Sweep.from_dict(old)
    assert (read.options, read.created, read.source) == (s.options, s.created, s.source)


def test_advise_takes_its_budget_as_an_option(monkeypatch):
    seen = {}

    def watched(x, **kwargs):
        seen.update(kwargs)
        return model(x)

    advice = jitmagic.advise(watched, X, budget=5, repeat=3, number=2, progress=False)
    assert seen == {} and advice.runs == 3


@pytest.mark.parametrize(("call", "refused"), [
    (lambda: jitmagic.advise(model, X, vmap=True), "`vmap=`"),
    (lambda: jitmagic.attribute(model, X, repeat=3), "`repeat=`"),
    (lambda: jitmagic.lines(model, X, budget=3, nest=("layer",)), "`budget=`, `nest=`"),
    (lambda: jitmagic.sweep("N", [1], model, X, sweep=("M", (1,))), "`sweep=`"),
])
def test_an_option_a_function_does_not_use_is_refused_with_what_to_write(call, refused):
    with pytest.raises(InputError) as caught:
        call()
    message = str(caught.value)
    assert f"not {refused}" in message
    assert "jitmagic.compare(fn, *args," in message and "functools.partial(fn," in message


def test_attribute_and_lines_take_any_callable_entry():
    entry = functools.partial(model, scale=2.0)
    assert [h.helper for h in jitmagic.attribute(entry, X).helpers] == ["layer"]
    assert jitmagic.lines(Model(2.0), X).tables


def test_save_chooses_the_format_by_the_extension(tmp_path):
    c = jitmagic.compare(model, X, repeat=1, number=2, progress=False)
    jitmagic.save(c, tmp_path / "c.json")
    assert jitmagic.load(tmp_path / "c.json").verdict.text == c.verdict.text
    jitmagic.save(c, tmp_path / "c.HTML")
    page = (tmp_path / "c.HTML").read_text()
    assert page.startswith("<!DOCTYPE html>") and "data:image/png;base64," in page
    assert "http://" not in page and "https://" not in page
    for name in ("c.txt", "c"):
        with pytest.raises(InputError, match=r"write `\.json` for .*; `\.html` for"):
            jitmagic.save(c, tmp_path / name)
        assert not (tmp_path / name).exists()


def test_help_of_compare_names_every_keyword():
    """``help(jitmagic.compare)`` is compare's own: every Options field and ``baseline``."""
    import dataclasses
    import pydoc

    said = pydoc.render_doc(jitmagic.compare, renderer=pydoc.plaintext)
    fields = [f.name for f in dataclasses.fields(jitmagic.Options)]
    missing = [k for k in [*fields, "baseline"] if f"``{k}=``" not in said]
    assert not missing, missing
    assert "jitmagic.sweep" in said and "measuring layer" not in said


@pytest.mark.parametrize("call", [
    lambda: jitmagic.advise(model, X, baseline="old.json", progress=False),
    lambda: jitmagic.attribute(model, X, baseline="old.json"),
    lambda: jitmagic.lines(model, X, baseline="old.json"),
])
def test_baseline_is_refused_where_no_report_is_made(call):
    """``baseline=`` never reaches the user's function: refused, saying who takes it."""
    with pytest.raises(InputError, match=r"not `baseline=`.*jitmagic\.compare"):
        call()


def test_compare_orderings_takes_its_options_through_the_one_splitter():
    from jitmagic.measure.parts.orderings import compare_orderings

    with pytest.raises(InputError, match=r"jitmagic\.measure\.orderings\.compare_orderings"
                                         r"` takes .*not `advise=`"):
        compare_orderings(model, X, advise=True)
    with pytest.raises(InputError, match="not `baseline=`"):
        compare_orderings(model, X, baseline="old.json")


def test_an_advice_or_attribution_is_refused_by_save_saying_what_to_save(tmp_path):
    attribution = jitmagic.attribute(model, X)
    path = tmp_path / "a.json"
    with pytest.raises(InputError, match=r"attribute=True.*\.attribution"):
        jitmagic.save(attribution, path)
    assert not path.exists()
