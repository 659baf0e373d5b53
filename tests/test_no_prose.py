"""Records hold facts; sentences are made in ``jitmagic/render/`` alone (issue 53).

The rule, read from the source (no measuring). A string literal of a module of
``jitmagic/model/`` (the literal parts of an f-string included) is a **user-facing
sentence** where it holds a run of three or more lowercase words, each after the first
joined to the one before by a space (punctuation such as ``,;:()`` may stand before the
space): ``"no measurable difference"``, ``"the cache was not read"``,
``" of wall time, "``. Not counted, since they are not what a report says:

* docstrings (of a module, class or function) and a property's ``doc=``;
* the message of a raised exception (anything under a ``raise``, a name assigned in the
  same function and read there under a ``raise``, and the words of a call to the schema's
  ``fail``, which raises): a programming error, or a refused input said where it is
  refused (a report that does not load), as are the words of ``model/saved/`` (schema
  and safe reads: what a refused file was expected to be, ``expected a finite
  number``), which exist to be raised;
* dictionary keys, and the values of an :class:`enum.Enum` or a ``Literal[...]`` (a kind
  or a name, saved by value: ``"most pairs"``);
* a part's name, its ``Part(...)``'s label (``"constants passed as arguments"``): the name
  progress and a stop call it by, as an enum's value is a name.

Format specs and single words never match. ``model/ledger/`` is another record's house,
moved onto the shared layers on its own (issue 53, item 1), and is not read here.

The records' fields are checked too: a comparison's saved report holds no sentence
outside the fields that keep what the user wrote or what the measuring said as it ran
(its source, options, environment, warnings, notes, errors, why it stopped).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest
from support import comparison

import jitmagic
from jitmagic.model.notes import Differs, Inline, Leak, Parts, Taken, Warned, read_noted

MODEL = Path(jitmagic.__file__).parent / "model"

#: Three or more lowercase words in a row, a space before each after the first.
SENTENCE = re.compile(r"\b[a-z][a-z']*(?:[,;:()]? \(?[a-z][a-z']*\b){2,}")

#: Folders of model/ whose words are not a report's (see the docstring).
NOT_READ = ("ledger", "saved")


def _ignored(tree: ast.AST) -> set[int]:
    """The ids of the nodes whose strings are not a report's words: docstrings, raised
    messages, ``doc=``, dictionary keys, enum values, ``Literal[...]`` arguments."""
    skip: list[ast.AST] = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) \
                and body and isinstance(body[0], ast.Expr):
            skip.append(body[0])
        if isinstance(node, ast.Raise) and node.exc is not None:
            skip.append(node.exc)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "fail":
            skip += node.args
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            skip += _raised_names(node)
        elif isinstance(node, ast.keyword) and node.arg == "doc":
            skip.append(node.value)
        elif isinstance(node, ast.Dict):
            skip += [k for k in node.keys if k is not None]
        elif isinstance(node, ast.ClassDef) and any(
                "Enum" in ast.unparse(base) for base in node.bases):
            skip += node.body
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Literal"):
            skip.append(node.slice)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "Part" \
                and len(node.args) > 1:
            skip.append(node.args[1])
    return {id(inner) for outer in skip for inner in ast.walk(outer)}


def _raised_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The values assigned, in ``fn``, to the names its ``raise`` statements read: a
    message built in steps before it is raised."""
    raised = {n.id for r in ast.walk(fn) if isinstance(r, ast.Raise)
              for n in ast.walk(r) if isinstance(n, ast.Name)}
    return [a.value for a in ast.walk(fn) if isinstance(a, ast.Assign)
            and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
            and a.targets[0].id in raised]


def sentences(path: Path) -> list[str]:
    """``line: 'literal'`` for each user-facing sentence of ``path`` (the rule above)."""
    tree = ast.parse(path.read_text(), str(path))
    ignored = _ignored(tree)
    return [f"{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in ignored and SENTENCE.search(node.value)]


def _modules() -> list[Path]:
    return [p for p in sorted(MODEL.rglob("*.py"))
            if p.relative_to(MODEL).parts[0] not in NOT_READ]


def test_the_rule_tells_a_sentence_from_a_name():
    for said in ("no measurable difference", " of wall time, ", "the cache was not read",
                 "keep them inline: their own jit costs more"):
        assert SENTENCE.search(said), said
    for name in ("first_call_s", "CPU", "wall", "{:.2f}", "most pairs", "XLA compile",
                 "jit(vmap(f))", "execute_s", "a b"):
        assert not SENTENCE.search(name), name


def test_no_module_of_the_model_words_a_sentence():
    worded = {str(p.relative_to(MODEL)): found[:3] for p in _modules()
              if (found := sentences(p))}
    assert not worded, f"sentences in model/ (make them in render/): {worded}"


#: Fields of a saved comparison that keep what the user wrote, or what the measuring
#: said as it ran (not words the record makes of its facts).
KEPT_AS_SAID = frozenset({"source", "options", "file", "env", "warnings", "notes", "error",
                          "stopped", "jaxpr", "entry", "helpers", "created"})


def _strings(value, at: str = ""):
    """Every ``(path, string)`` in a JSON-like value, skipping :data:`KEPT_AS_SAID`."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key not in KEPT_AS_SAID:
                yield from _strings(inner, f"{at}.{key}")
    elif isinstance(value, list | tuple):
        for i, inner in enumerate(value):
            yield from _strings(inner, f"{at}[{i}]")
    elif isinstance(value, str):
        yield at, value


@pytest.mark.parametrize("first", [([2.3, 2.4, 2.5], [0.4, 0.45, 0.5]), ([1.0], [0.9])])
def test_a_saved_report_keeps_facts_not_sentences(first):
    c = comparison({"first_call_s": first[0]}, {"first_call_s": first[1]}, every=0.1)
    saved = c.to_dict()
    prose = [(at, s) for at, s in _strings(saved) if SENTENCE.search(s)
             and not at.endswith(".cause")]  # a cause's name ("big constants")
    assert not prose, prose
    assert set(saved["verdict"]) == {"first_call", "ratio", "ratio_low", "ratio_high",
                                     "clock"}
    # the record's own fields hold facts too; its words come from the renderer
    assert {f for f in type(c.verdict).__dataclass_fields__} == {
        "key", "difference", "clock", "subject", "chosen"}
    assert c.verdict.text.startswith("Nested jit on")


def test_a_report_that_saved_sentences_still_loads():
    """Earlier reports saved the verdict's text and each cause's ``said`` and ``fix``:
    they load, their sentences unread, and show what the facts say."""
    c = comparison({"first_call_s": [2.3, 2.4, 2.5]}, {"first_call_s": [0.4, 0.45, 0.5]},
                   every=0.1)
    old = c.to_dict()
    old["verdict"]["text"] = "Nested jit on `layer` makes the first call slower (old words)."
    old["why"] = [{**x, "said": "the old words", "fix": "an old fix"} for x in old["why"]]
    loaded = type(c).from_dict(old)
    assert loaded.to_dict() == c.to_dict() and str(loaded) == str(c)
    assert "old words" not in str(loaded) and loaded.verdict.text == c.verdict.text


# What the measuring notes (issue 53, item 3): a warning of a comparison or a note of a
# variant is a fact (jitmagic.model.notes); its words are made in render/notes.py.

MEASURING = Path(jitmagic.__file__).parent

#: Keywords and list names through which the measuring layer fills a record's notes.
NOTED = frozenset({"warned", "noted", "warnings", "notes", "placement_notes",
                   "effort_notes"})

#: Words of a note: two lowercase words in a row (a note is short: "stays inline: ").
WORDS = re.compile(r"\b[a-z][a-z']*[,;:()]? \(?[a-z][a-z']*\b")


def _into_notes(node: ast.AST) -> list[ast.AST]:
    """What ``node`` hands a record's notes: the arguments of ``notes.append(...)``
    (``extend``) and of a function named for a note (``_note_once``), and what is
    assigned to ``notes`` (``=``, ``+=``) or passed as ``warned=``, ``notes=`` and the like."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("append", "extend") \
            and ast.unparse(node.func.value).split(".")[-1] in NOTED:
        return list(node.args)
    if isinstance(node, ast.Call) and "note" in ast.unparse(node.func).split(".")[-1]:
        return list(node.args)
    if isinstance(node, ast.keyword) and node.arg in NOTED:
        return [node.value]
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
    if any(ast.unparse(t).split(".")[-1] in NOTED for t in targets) and node.value:
        return [node.value]
    return []


def worded_notes(path: Path) -> list[str]:
    """``line: 'literal'`` for each literal of words ``path`` hands a record as a note."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        for value in _into_notes(node):
            found += [f"{inner.lineno}: {inner.value!r}" for inner in ast.walk(value)
                      if isinstance(inner, ast.Constant) and isinstance(inner.value, str)
                      and WORDS.search(inner.value)]
    return found


def test_the_measuring_layer_notes_facts_not_sentences():
    paths = [p for folder in ("measure", "cell")
             for p in sorted((MEASURING / folder).rglob("*.py"))]
    worded = {str(p.relative_to(MEASURING)): found[:3] for p in paths
              if (found := worded_notes(p))}
    assert not worded, f"sentences noted in the measuring layer (make a Note of them): {worded}"


#: The modules whose functions hand back what becomes a note (an undo's notes, a node of
#: two outputs that differ): none returns a sentence of its own.
RETURNS_FACTS = ("cell/effects", "measure/sampling/outputs.py")


def worded_returns(path: Path) -> list[str]:
    """``line: 'literal'`` for each literal of words ``path`` returns (a ``return`` or a
    lambda's body)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        value = node.value if isinstance(node, ast.Return) else \
            node.body if isinstance(node, ast.Lambda) else None
        found += [f"{inner.lineno}: {inner.value!r}" for inner in ast.walk(value or ast.Pass())
                  if isinstance(inner, ast.Constant) and isinstance(inner.value, str)
                  and WORDS.search(inner.value)]
    return found


def test_what_the_cell_put_back_and_outputs_that_differ_are_facts():
    """An undo of :mod:`jitmagic.cell.effects` returns notes, a row's label a (row, key)
    pair, and a node of two outputs that differ its type, dtype and shape: the words are
    made in render/notes."""
    paths = [p for where in RETURNS_FACTS for p in sorted((MEASURING / where).rglob("*.py"))
             or [MEASURING / where]]
    worded = {str(p.relative_to(MEASURING)): found[:3] for p in paths
              if (found := worded_returns(p))}
    assert not worded, f"sentences returned as facts would be (make a Note of them): {worded}"


def test_every_kind_of_note_has_its_words_in_render():
    """One row of the templates per kind of note, and every family said through them."""
    from jitmagic.model.notes import FAMILY
    from jitmagic.model.shown import renderer
    from jitmagic.render.notes import TEMPLATES, say

    assert set(TEMPLATES) == set(FAMILY)
    for family in set(FAMILY.values()):
        assert renderer("text", family.__new__(family)) is say, family


def _noted_comparison():
    """A comparison whose warnings and notes are facts, of several kinds."""
    c = comparison({"first_call_s": [2.3, 2.4, 2.5]}, {"first_call_s": [0.4, 0.45, 0.5]},
                   every=0.1, warned=(Warned("cache_switched_off"), Warned("waited", 1.25),
                           Warned("part_not_measured", "second_start", "disk full")))
    flat = dataclasses.replace(c.flat, noted=(Warned("staged_run", "flat"),))
    return dataclasses.replace(c, variants={**c.variants, "flat": flat})


def test_notes_are_saved_as_facts_and_said_as_before():
    c = _noted_comparison()
    saved = c.to_dict()
    assert saved["warnings"] == [
        {"kind": "cache_switched_off"}, {"kind": "waited", "seconds": 1.25},
        {"kind": "part_not_measured", "part": "second_start", "error": "disk full"}]
    assert saved["variants"]["flat"]["notes"] == [{"kind": "staged_run", "variant": "flat"}]
    assert c.warnings == (
        "your persistent compilation cache was switched off for the measurement and "
        "switched back on after",
        "this measurement waited 1.2 s for another thread's to finish: jitmagic measures "
        "one call at a time per process (each swaps the process's own helpers)",
        "the second start was not measured: disk full")
    loaded = type(c).from_dict(json.loads(json.dumps(saved)))
    assert loaded.warned == c.warned and loaded.flat.noted == c.flat.noted
    full = c.report(verbose=True)
    assert loaded.report(verbose=True) == full and str(loaded) == str(c)
    assert "warning: the second start was not measured" in full


def test_a_report_that_saved_noted_sentences_loads_them_as_they_were():
    """Reports saved before notes were facts hold sentences: each loads as the string it
    was and is shown word for word, beside facts of a newer report."""
    c = _noted_comparison()
    old = c.to_dict()
    old["warnings"] = ["an old warning, as it was worded", *old["warnings"][1:]]
    old["variants"]["flat"]["notes"] = ["an old note of the flat variant"]
    loaded = type(c).from_dict(old)
    assert loaded.warned[0] == "an old warning, as it was worded"
    assert loaded.warnings == ("an old warning, as it was worded", *c.warnings[1:])
    assert loaded.flat.notes == ("an old note of the flat variant",)
    shown = loaded.report(verbose=True)
    assert "warning: an old warning, as it was worded" in shown
    assert "an old note of the flat variant" in shown
    assert loaded.to_dict()["warnings"] == old["warnings"]  # saved again as it was read


@pytest.mark.parametrize("bad", [{"kind": "no such kind"}, {"kind": "waited"},
                                 {"kind": "waited", "seconds": "long"}, 3])
def test_a_note_of_no_known_kind_or_field_is_refused(bad):
    from jitmagic.model.saved.schema import ReportSchemaError

    d = _noted_comparison().to_dict()
    d["warnings"] = [bad]
    with pytest.raises(ReportSchemaError, match=r"^warnings\[0\]"):
        type(_noted_comparison()).from_dict(d)


def test_a_fresh_measurement_saves_its_warnings_as_facts(run_magic, tmp_path):
    import jax
    from support import FAST, SMALL_CELL

    jax.config.update("jax_compilation_cache_dir", str(tmp_path))
    try:
        result, _ = run_magic(f"-o {FAST}", SMALL_CELL)
    finally:
        jax.config.update("jax_compilation_cache_dir", None)
    saved = result.to_dict()
    assert {"kind": "cache_switched_off"} in saved["warnings"]
    worded = [w for w in saved["warnings"] if isinstance(w, str)]
    worded += [n for v in saved["variants"].values() for n in v["notes"] if isinstance(n, str)]
    assert not worded, worded


@pytest.mark.parametrize(("fact", "said"), [
    (Warned("no_stage_event", "flat", "compile_s", "model"),
     "flat: JAX reported no compile event for `model` (was it served from a cache?)"),
    (Warned("clock_disagrees", "nested", "trace_s", 0.2, 0.1),
     "nested: trace measured 200.0 ms but JAX's own event says 100.0 ms (50% apart)"),
    (Warned("sweep_unchanged", "width", 12),
     "`width` did not change the program: every value built 12 jaxpr equations (flat), so "
     "the growth is not fitted; is `width` read by the code as a global?"),
    (Warned("part_moved", "cache", "_cache_used", "0.9"),
     "--cache not measured: it needs JAX's private _cache_used, which JAX 0.9 does not have "
     "(pip install -U jitmagic for a release made for this JAX); the rest was measured"),
    (Differs("outputs_differ", "params[1][1]", None, 0.25, False, 2, (), (), (), (), "flat",
             "nested"),
     "outputs of flat and nested differ at `params[1][1]` (largest difference 0.25); 2 other "
     "leaves differ"),
    (Differs("leaf_differs", "", None, 0.5, True, 1, (), (), (), ()),
     "the whole output (NaN or infinite values in different places; largest finite "
     "difference 0.5); 1 other leaf differs"),
    (Parts("other_threads_cached", 1),
     "1 compile of another thread used JAX's persistent cache while the second start "
     "measured: JAX's cache folder is the process's, so it went to jitmagic's folder "
     "(removed after), not to your own cache"),
    (Parts("no_line_hook", "no_monitoring", "3.11"),
     "hits, calls and time per line not measured: Python 3.11 has no sys.monitoring "
     "(3.12+), and a sys.settrace hook would make the trace 2-5x slower"),
    (Parts("xla_raised", "ValueError", "bad"), "not measured: ValueError: bad"),
], ids=lambda x: x.kind if not isinstance(x, str) else "")
def test_a_note_says_what_the_measuring_said_before(fact, said):
    assert str(fact) == said and fact._repr_mimebundle_()["text/plain"] == said  # IPython
    assert read_noted(json.loads(json.dumps(fact.to_dict())), "note") == fact


def test_why_a_helper_stays_inline_is_a_fact_inside_a_fact():
    """A variant's note that a helper stays inline holds why as a fact of its own: saved
    as a dict inside the note's, read back equal, and said as the measuring wrote it."""
    from jitmagic.model.causes.effort import EffortRow, Setting
    from jitmagic.model.notes import read_noted

    note = Taken("stays_inline", "step",
                 Inline("inline_leaks", None, Leak("leak_global", "CACHE"), "other"))
    d = json.loads(json.dumps(note.to_dict()))
    assert d["why"] == {"kind": "inline_leaks", "held": None, "partner": "other",
                        "mechanism": {"kind": "leak_global", "name": "CACHE"}}
    assert read_noted(d, "notes[0]") == note
    assert str(note) == ("`step` stays inline: under a jit of its own it leaks traced values "
                         "(only with `other` nested too): it stores them in a global "
                         "(`CACHE`), where they outlive its trace, so it runs inline")
    row = EffortRow(Setting("out of line", {}), refused={"step": Inline("inline_classmethod")})
    saved = json.loads(json.dumps(row.to_dict()))
    assert saved["refused"] == {"step": {"kind": "inline_classmethod"}}
    assert EffortRow.from_dict(saved) == row
    old = saved | {"refused": {"step": "it is a classmethod"}}  # as an earlier version saved
    assert str(EffortRow.from_dict(old).refused["step"]) == str(row.refused["step"])


@pytest.mark.parametrize(("held", "said"), [
    (("Chain", True, "partial", "conditioner"), "its result (a `Chain`) holds a "
     "`functools.partial` of `conditioner` with traced arguments in its static part "
     "(pytree aux data)"),
    ((None, False, "function", "f"), "its result holds the function `f`, whose closure "
     "holds traced values as a leaf that is not an array"),
    ((None, False, "object", "Holder"), "its result holds a `Holder` holding traced values "
     "as a leaf that is not an array"),
    (("T", True, "traced", None), "its result (a `T`) holds a traced value in its static "
     "part (pytree aux data)"),
])
def test_what_a_result_holds_in_its_static_part_is_said_as_before(held, said):
    assert str(Leak("leak_static_held", *held)) == said
