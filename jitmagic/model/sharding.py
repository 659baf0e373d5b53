"""The sharding record: the arguments' partition specs, and whether each variant kept them.

Measured by :mod:`jitmagic.measure.sampling.sharding`; present only where an argument is sharded.
"""

from __future__ import annotations

from dataclasses import dataclass

from .saved import schema


@dataclass(frozen=True)
class Sharding(schema.Saved):
    """``inputs``: each named-sharded argument's spec, in argument order;
    ``kept_input_shardings``: per variant, whether its compiled program takes them as
    they arrived (None: it does not say)."""

    inputs: tuple[str, ...]
    kept_input_shardings: dict[str, bool | None]

    WHERE = "sharding"
    FIELDS = (("inputs", "inputs", schema.items(schema.text), schema.REQUIRED),
              ("kept_input_shardings", "kept_input_shardings",
               schema.mapping(schema.optional(schema.flag)), schema.REQUIRED))
