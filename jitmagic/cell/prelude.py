"""The top of a script, run before jax is imported, as ``python FILE.py`` runs it: the file's
leading statements up to the one that imports jax run one by one in its own namespace (so what they
set for JAX counts), stopping before one that defines a function or names a swept global; the rest
runs as a cell. Nothing here imports jax."""

from __future__ import annotations
import __future__

import ast
import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._compat import backend_started
from ..errors import InputError, UserCodeError, exit_before_call, user_traceback
from ..model.notes import Ran

#: Environment variables JAX or XLA read once, as jax is imported or its backend starts.
JAX_ENVIRONMENT = ("JAX_", "XLA_", "TF_CPP_", "TPU_", "CUDA_VISIBLE_DEVICES",
                   "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")

_DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp)


@dataclass
class Prelude:
    """What ran here, who imported jax (``"file"``, ``"jitmagic"``, ``"before"``) and what it
    saw."""

    ran: set[tuple[int, int]] = field(default_factory=set)
    imported_by: str = "jitmagic"
    #: JAX's environment variables when jax was imported (see :func:`jax_environment`).
    seen_by_jax: dict[str, str] = field(default_factory=dict)
    backend_started: bool = False  # whether XLA's backend had started by then
    stopped_at: int | None = None  # the line of the statement the run stopped before

    def rest(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """``body`` without the statements that ran here (``from __future__`` imports kept)."""
        return [s for s in body if _position(s) not in self.ran
                or isinstance(s, ast.ImportFrom) and s.module == "__future__"]

    def imported(self, by: str) -> None:
        """Note that jax has just been imported ``by`` someone (see ``imported_by``)."""
        self.imported_by, self.seen_by_jax = by, jax_environment()
        self.backend_started = backend_started()


def jax_environment() -> dict[str, str]:
    """The environment variables of :data:`JAX_ENVIRONMENT` now set."""
    return {k: v for k, v in os.environ.items() if k.startswith(JAX_ENVIRONMENT)}


def run_prelude(source: str, filename: str, namespace: dict[str, Any],
                swept: str | None = None) -> Prelude:
    """Run the file's leading statements in ``namespace`` until one has imported jax."""
    done = Prelude()
    if "jax" in sys.modules:
        done.imported("before")
        return done
    try:
        body = unguarded(ast.parse(source, filename).body)
    except (SyntaxError, ValueError):
        return done
    if not ends_in_call(body):
        return done
    flags = 0
    for stmt in body[:-1]:
        if any(isinstance(node, _DEFINES) or isinstance(node, ast.Name) and node.id == swept
               for node in ast.walk(stmt)):  # it defines something, or names the swept global
            done.stopped_at = stmt.lineno
            break
        code = compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec",
                       flags=flags, dont_inherit=True)
        with user_raised("the file raised before its final call"):
            exec(code, namespace)
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:  # what it turns on holds for the statements after it
                flags |= getattr(getattr(__future__, alias.name, None), "compiler_flag", 0)
        done.ran.add(_position(stmt))
        if "jax" in sys.modules:
            done.imported("file")
            break
    return done


def late_settings(prelude: Prelude, filename: str) -> Ran | None:
    """One line naming the JAX variables the file set too late for this run (None: none)."""
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


@contextlib.contextmanager
def user_raised(what: str, file: bool = True) -> Iterator[None]:
    """The user's exception as ``UserCodeError`` saying ``what`` raised, their frames only."""
    try:
        yield
    except InputError:
        raise
    except SystemExit as exc:
        raise UserCodeError(exit_before_call(exc.code, file)) from None
    except Exception as exc:
        raise UserCodeError(f"{what}:\n" + user_traceback(exc)) from None


def ends_in_call(body: list[ast.stmt]) -> bool:
    """Whether the last of ``body`` is an expression that calls."""
    return bool(body) and isinstance(body[-1], ast.Expr) and isinstance(body[-1].value, ast.Call)


def unguarded(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements as they run as ``__main__``: a final ``if __name__ == "__main__":``
    block's body (either way round) last."""
    guard = body[-1] if body else None
    if isinstance(guard, ast.If) and isinstance(test := guard.test, ast.Compare) \
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) \
            and {ast.unparse(test.left), ast.unparse(test.comparators[0])} \
            == {"__name__", "'__main__'"}:
        return [*body[:-1], *guard.body]
    return body


def _position(stmt: ast.stmt) -> tuple[int, int]:
    return stmt.lineno, stmt.col_offset
