"""How a record's outputs compared: the fields a comparison and its orderings share.

``outputs_match`` and ``max_abs_diff`` are the old fields, kept as they were;
``outputs_kind`` says which way they matched (``docs/outputs.md``):

* ``"exact"``: every leaf equal;
* ``"rounding"``: equal within the rounding of the floating dtype ``outputs_dtype``,
  the largest difference being at the leaf ``outputs_leaf``;
* ``"mismatch"``: ``outputs_leaf`` (the first leaf that differs) differs beyond that;
* ``"uncompared"``: both outputs came, but their values could not be compared (the
  record's warnings say why);
* ``None``: nothing was compared (a variant did not finish), or a report written before
  the kinds existed.
"""

from __future__ import annotations

from typing import Any

from .saved import schema
from .saved.schema import fail

#: ``outputs_kind``'s values, and the ``outputs_match`` each goes with.
OUTPUT_KINDS = {"exact": True, "rounding": True, "mismatch": False, "uncompared": None}


def output_kind(value: Any, where: str) -> str:
    if value not in OUTPUT_KINDS:
        fail(where, f"one of {', '.join(map(repr, OUTPUT_KINDS))}", value)
    return value


#: The rows :func:`~jitmagic.model.saved.schema.fields` reads them with (all optional: a report
#: written before they existed loads with None).
OUTPUT_FIELDS: tuple[schema.Field, ...] = (
    ("outputs_kind", "outputs_kind", schema.optional(output_kind), None),
    ("outputs_leaf", "outputs_leaf", schema.optional(schema.text), None),
    ("outputs_dtype", "outputs_dtype", schema.optional(schema.text), None),
)


def check_outputs(got: dict[str, Any], where: str) -> dict[str, Any]:
    """``got`` (the decoded fields) after checking that ``outputs_kind`` agrees with
    ``outputs_match``: a report cannot say "mismatch" and ``outputs_match: true``."""
    kind = got.get("outputs_kind")
    if kind is not None and got.get("outputs_match") is not OUTPUT_KINDS[kind]:
        at = f"{where}.outputs_kind" if where else "outputs_kind"
        expected = {True: "true", False: "false", None: "null"}[OUTPUT_KINDS[kind]]
        fail(at, f"a kind that agrees with outputs_match ({kind!r} goes with {expected})",
             kind)
    return got


def without_outputs(d: dict[str, Any], record: Any) -> dict[str, Any]:
    """``d`` (a record's saved fields) without the three where nothing was compared, so
    a report read from an older version is written back as it was."""
    if record.outputs_kind is not None:
        return d
    return {k: v for k, v in d.items() if k not in {key for key, *_ in OUTPUT_FIELDS}}
