"""The top of a script, run before jax is imported, as ``python FILE.py`` runs it.

JAX reads ``JAX_PLATFORMS``, ``JAX_ENABLE_X64`` and the other ``JAX_*`` variables when
it is imported, and ``XLA_FLAGS`` when its first backend starts; JAX's own docs set them
at a script's top, before ``import jax``::

    import os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax

``python -m jitmagic FILE.py`` imports none of jax before this module has run those
lines: the file's leading statements run one by one in the file's own namespace, in
order, up to and including the one that imports jax (``import jax``, ``from flax import
nnx``, a local module that imports it), and the rest of the file runs as the magic runs
a cell. So the environment the file sets before ``import jax`` is the one jax sees, and
nothing runs twice.

The run stops earlier, before a statement that defines a function, class or lambda (the
rest of the file runs in a scratch copy of the namespace, and a function keeps the
namespace it was defined in) or that names a swept global (``--sweep``: it is set only
for the rest). Nothing here imports jax.
"""

from __future__ import annotations
import __future__

import ast
import os
import sys
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from .._compat import backend_started
from ..errors import InputError
from ..errors import UserCodeError
from ..errors import exit_before_measuring
from ..errors import user_traceback
from ..model.notes import Ran

#: Environment variables that JAX or XLA read once, when jax is imported or its backend
#: starts: setting one after that changes nothing for this process.
JAX_ENVIRONMENT = ("JAX_", "XLA_", "TF_CPP_", "TPU_", "CUDA_VISIBLE_DEVICES",
                   "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")

_DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp)


@dataclass
class Prelude:
    """What ran here (statements by position), who imported jax, and the environment it saw.

    ``imported_by`` is "file" when one of the file's statements imported jax (what
    ``python FILE.py`` does), "jitmagic" when the run stopped first (jitmagic imports it
    next, before the rest of the file runs), "before" when jax was already imported
    before the file's first line (``command.main`` called from Python).
    """

    ran: set[tuple[int, int]] = field(default_factory=set)
    imported_by: str = "jitmagic"
    #: JAX's environment variables when jax was imported (see :func:`jax_environment`).
    seen_by_jax: dict[str, str] = field(default_factory=dict)
    backend_started: bool = False  # whether XLA's backend had started by then
    stopped_at: int | None = None  # the line of the statement the run stopped before

    def rest(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """``body`` without the statements that ran here (``from __future__`` imports
        kept: they still govern how the rest compiles)."""
        return [s for s in body if _position(s) not in self.ran or _is_future(s)]

    def imported(self, by: str) -> None:
        """Note that jax has just been imported ``by`` someone (see ``imported_by``)."""
        self.imported_by, self.seen_by_jax = by, jax_environment()
        self.backend_started = backend_started()


def jax_environment() -> dict[str, str]:
    """The environment variables of :data:`JAX_ENVIRONMENT` now set."""
    return {k: v for k, v in os.environ.items() if k.startswith(JAX_ENVIRONMENT)}


def run_prelude(source: str, filename: str, namespace: dict[str, Any],
                swept: str | None = None) -> Prelude:
    """Run the file's leading statements in ``namespace`` until one has imported jax
    (see the module's docstring); a file that does not parse, or whose last statement is
    not a call, runs nothing here (parsing it again says what is wrong). The caller
    calls ``imported("jitmagic")`` on the result unless ``imported_by`` is set already."""
    done = Prelude()
    if "jax" in sys.modules:
        done.imported("before")
        return done
    try:
        body = _unguarded(ast.parse(source, filename).body)
    except (SyntaxError, ValueError):
        return done
    if not body or not (isinstance(body[-1], ast.Expr) and isinstance(body[-1].value, ast.Call)):
        return done
    flags = 0
    for stmt in body[:-1]:
        if _defines(stmt) or (swept is not None and _names(stmt, swept)):
            done.stopped_at = stmt.lineno
            break
        _run(stmt, filename, namespace, flags)
        flags |= _future_flags(stmt)
        done.ran.add(_position(stmt))
        if "jax" in sys.modules:
            done.imported("file")
            break
    return done


def late_settings(prelude: Prelude, filename: str) -> Ran | None:
    """One line naming the JAX environment variables the file set too late for this run
    to use, where ``python FILE.py`` would have used them (None: there are none).

    Only where jitmagic, or an earlier import in the process, imported jax before the
    file did: ``JAX_*`` variables are read when jax is imported, the others
    (``XLA_FLAGS``, device lists) when its backend starts, so those count only if it had
    started.
    """
    if prelude.imported_by == "file":
        return None
    now, seen = jax_environment(), prelude.seen_by_jax
    changed = sorted(k for k in {*now, *seen} if now.get(k) != seen.get(k)
                     and (k.startswith("JAX_") or prelude.backend_started))
    if not changed:
        return None
    values = tuple(repr(now[k]) if k in now else "" for k in changed)
    return Ran("late_settings", os.path.basename(filename), tuple(changed), values,
                        prelude.imported_by, prelude.stopped_at or 0)


def _run(stmt: ast.stmt, filename: str, namespace: dict[str, Any], flags: int) -> None:
    code = compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec",
                   flags=flags, dont_inherit=True)
    try:
        exec(code, namespace)
    except SystemExit as exc:
        raise UserCodeError(exit_before_measuring(exc.code)) from None
    except InputError:
        raise
    except Exception as exc:
        raise UserCodeError("the file raised before its final call:\n"
                            + user_traceback(exc)) from None


def _unguarded(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements in the order they run as ``__main__`` (a final
    ``if __name__ == "__main__":`` block's body after the rest), as the cell parser
    reads them."""
    if body and isinstance(body[-1], ast.If) and _is_main_test(body[-1].test):
        return [*body[:-1], *body[-1].body]
    return body


def _is_main_test(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and {ast.unparse(test.left), ast.unparse(test.comparators[0])}
            == {"__name__", "'__main__'"})


def _defines(stmt: ast.stmt) -> bool:
    return any(isinstance(node, _DEFINES) for node in ast.walk(stmt))


def _names(stmt: ast.stmt, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(stmt))


def _is_future(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"


def _future_flags(stmt: ast.stmt) -> int:
    if not _is_future(stmt):
        return 0
    assert isinstance(stmt, ast.ImportFrom)  # a __future__ import
    flags = 0
    for alias in stmt.names:
        feature = getattr(__future__, alias.name, None)
        flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _position(stmt: ast.stmt) -> tuple[int, int]:
    return stmt.lineno, stmt.col_offset
