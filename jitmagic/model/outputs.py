"""How a record's outputs compared, the fields a comparison and its orderings share
(``docs/outputs.md``): ``outputs_kind`` is "exact", "rounding" (within the rounding of
``outputs_dtype``, the largest difference at ``outputs_leaf``), "mismatch" (the first
leaf that differs), "uncompared" or None (nothing compared, or an older report)."""

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


OUTPUT_FIELDS: tuple[schema.Field, ...] = (
    ("outputs_kind", "outputs_kind", schema.optional(output_kind), None),
    ("outputs_leaf", "outputs_leaf", schema.optional(schema.text), None),
    ("outputs_dtype", "outputs_dtype", schema.optional(schema.text), None),
)


def check_outputs(got: dict[str, Any], where: str) -> dict[str, Any]:
    """``got`` after checking that ``outputs_kind`` agrees with ``outputs_match``."""
    kind = got.get("outputs_kind")
    if kind is not None and got.get("outputs_match") is not OUTPUT_KINDS[kind]:
        at = f"{where}.outputs_kind" if where else "outputs_kind"
        expected = {True: "true", False: "false", None: "null"}[OUTPUT_KINDS[kind]]
        fail(at, f"a kind that agrees with outputs_match ({kind!r} goes with {expected})",
             kind)
    return got


def without_outputs(d: dict[str, Any], record: Any) -> dict[str, Any]:
    """``d`` without the three where nothing was compared (as an older report wrote it)."""
    if record.outputs_kind is not None:
        return d
    return {k: v for k, v in d.items() if k not in {key for key, *_ in OUTPUT_FIELDS}}
