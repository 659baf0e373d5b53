"""The command's measurement as a child's entry: ``python -m jitmagic FILE.py`` (or
``demo``) measured in a fresh interpreter, its result returned as the saved report's
dict (``Comparison.to_dict()``, what ``--save`` writes and ``jitmagic.load`` reads).

Why: a cell under another JAX release must be measured in that release's Python
(``--jax``, :mod:`.releases`), and a cold sample in a fresh process
(issue 60: every compile cache of the process cold, on a TPU too) needs the same: both
call :func:`measure` through the one runner of children
(``run_child(Entry("jitmagic.frontends.script.child", "measure"), {"argv": [...]},
python=...)``, :mod:`jitmagic.measure.children`), which says how the child ended where
it returned nothing (a timeout, a crash in a stage). The cell and its arguments are
rebuilt from the file's source there, exactly as the command does
(:func:`jitmagic.frontends.command.run`): its leading lines before ``import jax``, then
the rest as the cell's setup. It lives with the command, not in ``measure``, because it
is the command's whole measurement (the cell's preparation is above ``measure``).
"""

from __future__ import annotations

from typing import Any


def measure(inputs: dict[str, Any]) -> dict[str, Any]:
    """Measure as ``python -m jitmagic *inputs["argv"]`` does, in this process; the
    result's dict. Reports are left to the parent (``--save``, ``--html`` and ``--jax``
    are dropped), nothing is drawn (``--quiet``: where the measurement is still goes to
    the stage file), and a ``--sweep`` is refused (one comparison is returned)."""
    from ..command import build_parser
    from ..command import run_isolated

    argv = list(inputs["argv"])
    script_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = build_parser().parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.save = args.html = args.jax = None
    args.quiet = True
    if args.sweep:
        raise ValueError("a child measures one comparison: leave --sweep out")
    return run_isolated(args, script_args).to_dict()
