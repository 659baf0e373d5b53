"""Every private name jitmagic reaches in another library, each behind a named function here and
nowhere else, so an upgrade is a one-file change (``tests/test_packaging.py`` checks them). Nothing
here imports JAX at import time."""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import CodeType, FrameType, ModuleType
from typing import Any

# --- JAX -------------------------------------------------------------------------------

SOURCE_INFO, COMPILATION_CACHE = "jax._src.source_info_util", "jax._src.compilation_cache"
XLA_BRIDGE, MONITORING = "jax._src.xla_bridge", "jax._src.monitoring"
PROFILER = "jax._src.profiler"
#: The logger of JAX's tracing-cache miss explanations (JAX 0.10).
CACHE_MISS_LOGGER = "jax._src.interpreters.partial_eval"
#: The function, in JAX's dispatch module, that compiles an eager operation.
EAGER_DISPATCH = ("jax/_src/dispatch.py", "apply_primitive")
MONITORING_LISTS = ("_event_listeners", "_event_duration_secs_listeners",
                    "_event_time_span_listeners", "_scalar_listeners")


def frame_line(code: CodeType, lasti: int) -> int:
    """The source line of a raw traceback frame (code object, last instruction)."""
    from jax._src import source_info_util

    return source_info_util.raw_frame_to_frame(code, lasti).start_line


def bind_equation(eqn: Any, invals: list[Any]) -> list[Any]:
    """Bind one jaxpr equation as ``eval_jaxpr`` does, under its own source information."""
    from jax._src import source_info_util

    params = eqn.primitive.get_bind_params(eqn.params)
    subfuns, params = params if isinstance(params, tuple) else ((), params)  # JAX 0.7–0.9
    name_stack = source_info_util.current_name_stack() + eqn.source_info.name_stack
    with (source_info_util.user_context(eqn.source_info.traceback, name_stack=name_stack),
          eqn.ctx.manager):
        out = eqn.primitive.bind(*subfuns, *invals, **params)
    return list(out) if eqn.primitive.multiple_results else [out]


def is_dropped(var: Any) -> bool:
    """Whether a jaxpr output variable is ``_`` (a ``DropVar``)."""
    from jax._src import core

    return isinstance(var, core.DropVar)


def unregister(kind: str) -> Callable[[Callable], None]:
    """``jax.monitoring.unregister_{kind}``, or older releases' private one."""
    import jax.monitoring
    from jax._src import monitoring

    public = getattr(jax.monitoring, f"unregister_{kind}", None)
    return public or getattr(monitoring, f"_unregister_{kind}_by_callback")


def reset_persistent_cache() -> None:
    """Forget whether JAX's persistent cache is in use, so a switch of it counts."""
    from jax._src import compilation_cache

    compilation_cache.reset_cache()


def persistent_cache_folder() -> str | None:
    """The folder JAX's persistent compilation cache uses (None: none made yet)."""
    from jax._src import compilation_cache

    path = getattr(compilation_cache._cache, "_path", None)  # a checking cache's: its base's
    return None if path is None else str(path)


def distributed_client() -> Any:
    """``jax.distributed``'s client (None: not joined), read without starting JAX's backend."""
    from jax._src import distributed

    return distributed.global_state.client


def backend_started() -> bool:
    """Whether JAX has started a backend (True where it cannot tell), without importing JAX."""
    bridge = sys.modules.get(XLA_BRIDGE)
    started = getattr(bridge, "backends_are_initialized", None)
    return bool(started()) if callable(started) else True


def monitoring_lists() -> tuple[ModuleType | None, dict[str, list]]:
    """JAX's private monitoring module (None: not imported) and its listener lists, by name."""
    mod = sys.modules.get(MONITORING)
    lists = {name: getattr(mod, name, None) for name in MONITORING_LISTS}
    return mod, {name: got for name, got in lists.items() if isinstance(got, list)}


def profiler_running() -> bool:
    """Whether a ``jax.profiler`` session runs in this process, read without touching it."""
    profiler = sys.modules.get(PROFILER)
    state = getattr(profiler, "_profile_state", None)
    return getattr(state, "profile_session", None) is not None


def jit_info(obj: Any) -> Any:
    return getattr(obj, "_jit_info", None)


#: JAX's private config module, where its effort levels (``O0``–``O3``) are an enum.
CONFIG = "jax._src.config"


def effort_level(name: str) -> int | None:
    """The number XLA takes for JAX's effort level ``name`` (None: no such level)."""
    levels = getattr(sys.modules.get(CONFIG), "EffortLevel", None)
    member = getattr(levels, name, None)
    return None if member is None else int(member.value)


#: The function of JAX's jit that traces a function, with its ``DebugInfo`` as ``dbg``.
TRACE_FOR_JIT = ("jax/_src/pjit.py", "_trace_for_jit")


def _running(function: tuple[str, ...], frame: FrameType | None) -> FrameType | None:
    """The frame of JAX's ``function`` (file ending, name, other names) from ``frame`` up, or
    None."""
    while frame is not None:
        code = frame.f_code
        if code.co_name in function[1:] and code.co_filename.endswith(function[0]):
            return frame
        frame = frame.f_back
    return None


def traced_file(frame: FrameType | None) -> str | None:
    """The file of the function JAX's jit is tracing on this stack, or None."""
    found = _running(TRACE_FOR_JIT, frame)
    return None if found is None else getattr(found.f_locals.get("dbg"), "func_filename", None)


#: The functions of JAX's jit (0.10) a call enters to trace, lower or compile.
JIT_FILE = "jax/_src/pjit.py"
JIT_MISS, JIT_EQUATION, JIT_AHEAD = "cache_miss", "call_impl_cache_miss", ("jit_trace",
                                                                           "jit_lower")
#: JAX's wrapper of its public functions' calls, between a jit and its caller.
API_BOUNDARY = "jax/_src/traceback_util.py"


@dataclass(frozen=True, slots=True)
class JitEntry:
    """What the jit compiling on a stack was called with: by whom, on what, and what it is."""

    kind: str
    caller: str | None
    source: str | None
    of_a_jit: bool = False
    jax_decorated: bool = False
    #: The function the jit wraps (None where the entry has none: a jit equation's).
    fun: Any = field(default=None, compare=False)
    #: Its positional arguments (``equinox.filter_jit`` passes the user's function there).
    args: tuple[Any, ...] = field(default=(), compare=False)


def jit_entry(frame: FrameType | None) -> JitEntry | None:
    """The innermost jit entry on this stack from ``frame`` up, or None."""
    frame = _running((JIT_FILE, JIT_MISS, JIT_EQUATION, *JIT_AHEAD), frame)
    if frame is None:
        return None
    name = frame.f_code.co_name
    caller = frame.f_back
    while caller is not None and caller.f_code.co_filename.endswith(API_BOUNDARY):
        caller = caller.f_back
    called_from = None if caller is None else caller.f_code.co_filename
    try:
        if name == JIT_EQUATION:  # its jaxpr is in the frame that made it: _pjit_call_impl
            jaxpr = getattr(frame.f_back, "f_locals", {}).get("jaxpr")
            dbg = getattr(getattr(jaxpr, "jaxpr", None), "debug_info", None)
            return JitEntry(name, called_from, getattr(dbg, "func_filename", None))
        local = frame.f_locals
        if name in JIT_AHEAD:
            jitted = local.get("jit_func")
            fun, info = getattr(jitted, "_fun", None), jit_info(jitted)
        else:
            fun, info = local.get("fun"), local.get("jit_info")
        public = getattr(sys.modules.get(str(getattr(fun, "__module__", ""))),
                         str(getattr(fun, "__name__", "")), None)
        return JitEntry(name, called_from, _source_of(fun), jit_info(fun) is not None,
                        info is not None and jit_info(public) is info, fun,
                        tuple(local.get("args", ())))
    except Exception:  # noqa: BLE001 (a frame this JAX lays out otherwise: not known)
        return None


def _source_of(fun: Any) -> str | None:
    """The file of the function ``fun`` wraps (through ``__wrapped__`` and ``partial``)."""
    for _ in range(32):
        inner = fun.func if isinstance(fun, functools.partial) else \
            getattr(fun, "__wrapped__", None)
        if inner is None or inner is fun:
            break
        fun = inner
    code = getattr(fun, "__code__", None)
    return getattr(code, "co_filename", None)


#: The function of ``jax._src.interpreters.partial_eval`` that logs a miss's explanation.
EXPLAIN = ("jax/_src/interpreters/partial_eval.py", "explain")
#: Where JAX's explanation says which earlier key it compares the miss with.
CLOSEST = "  all previously seen cache keys differ. For the closest previous key:"


def closest_explanation(message: str) -> str:
    """``message``, JAX's tracing-cache miss explanation, compared with the earlier key that
    differs least (JAX picks by kind first)."""
    head, found, _ = message.partition("\n" + CLOSEST + "\n")
    if not found:
        return message
    frame = _running(EXPLAIN, sys._getframe(1))
    if frame is None:
        return message
    try:
        best = closest_differences(frame.f_locals["key"], frame.f_locals["keys"])
    except Exception:  # noqa: BLE001 (JAX's own explanation stands)
        return message
    return "\n".join((head, CLOSEST, *("  " + d for d in best))) if best else message


def closest_differences(key: Any, keys: Iterable[Any]) -> list[str]:
    """JAX's sentences for the key of ``keys`` closest to ``key``, ties broken as JAX does."""
    return min((_differences(key, k) for k in keys),
               key=lambda d: (d[0], "\n".join(d[1])))[1]


def _differences(new: Any, old: Any) -> tuple[tuple[int, int], list[str]]:
    """How far ``old`` lies from ``new`` (differences, then JAX's severity) and JAX's sentences."""
    from jax._src.interpreters import partial_eval as pe

    new_ctx, (new_tree, new_dbg, *_), _ = new
    old_ctx, (old_tree, old_dbg, *_), _ = old
    found = [d for d in (pe.diff_tracing_ctx(new_ctx, old_ctx),
                         pe.diff_trees(new_tree.tree, old_tree.tree),
                         pe.diff_debug(new_dbg, old_dbg),
                         pe.diff_types(new_dbg, new_tree.vals, old_tree.vals)) if d]
    return (sum(d[1] for d in found), min((d[0] for d in found), default=4)), \
        [d[2] for d in found]


#: The config option that makes JAX explain its tracing-cache misses.
EXPLAIN_FLAG = "jax_explain_cache_misses"


def on_config_update(name: str, hook: Callable[[Any], None]) -> Callable[[], None]:
    """Call ``hook(value)`` after each ``jax.config.update(name, ...)``; the undo returned."""
    from jax._src import config

    state = config.config_states[name]
    before = state._update_global_hook

    def chained(value: Any) -> None:
        if before is not None:
            before(value)
        hook(value)

    state._update_global_hook = chained

    def undo() -> None:
        if state._update_global_hook is chained:
            state._update_global_hook = before
    return undo


def guard_tree_differences(fallback: Callable[[Any, Any, Exception], Any],
                           ) -> Callable[[], None]:
    """JAX's ``diff_trees`` falling back on ``fallback`` where it raises, until the undo
    returned."""
    from jax._src.interpreters import partial_eval as pe

    original = pe.diff_trees

    def diff_trees(new_tree: Any, old_tree: Any) -> Any:
        try:
            return original(new_tree, old_tree)
        except Exception as exc:  # noqa: BLE001 (the user's __repr__: said, not raised)
            return fallback(new_tree, old_tree, exc)

    pe.diff_trees = diff_trees

    def undo() -> None:
        if pe.diff_trees is diff_trees:
            pe.diff_trees = original
    return undo


# --- the check of this JAX ---------------------------------------------------------------


@dataclass(frozen=True)
class Needed:
    """One private JAX name jitmagic reads, and the option that needs it (None: all)."""

    module: str
    attribute: str
    option: str | None

    @property
    def name(self) -> str:
        return f"{self.module}.{self.attribute}"


#: The private JAX names above that a part cannot do without (frames read fail soft).
NEEDED = (
    Needed(SOURCE_INFO, "user_context", None),
    Needed(SOURCE_INFO, "current_name_stack", None),
    Needed(COMPILATION_CACHE, "reset_cache", None),
    Needed(SOURCE_INFO, "raw_frame_to_frame", "lines"),
    Needed(COMPILATION_CACHE, "_cache", "cache"),
    Needed(PROFILER, "_profile_state", "xla"),
    Needed(CONFIG, "EffortLevel", "effort"),
)


def missing() -> tuple[Needed, ...]:
    """The names of :data:`NEEDED` this JAX lacks (call once JAX is imported)."""
    return tuple(n for n in NEEDED if not _has(n))


def _has(needed: Needed) -> bool:
    try:
        module = importlib.import_module(needed.module)
    except ImportError:
        return False
    return hasattr(module, needed.attribute)


# --- Equinox, the standard library -------------------------------------------

#: Equinox's private wrapper classes: (module, class) → the transformation's public name.
EQUINOX_WRAPPERS = {("equinox._ad", "_GradWrapper"): "filter_grad",
                    ("equinox._ad", "_ValueAndGradWrapper"): "filter_value_and_grad",
                    ("equinox._ad", "_CheckpointWrapper"): "filter_checkpoint",
                    ("equinox._vmap_pmap", "_VmapWrapper"): "filter_vmap"}


def equinox_transform(obj: Any) -> str | None:
    return EQUINOX_WRAPPERS.get((type(obj).__module__, type(obj).__name__))


#: The jit wrappers of Equinox (``eqx.filter_jit``) and NNX (``nnx.jit``): (module, class).
FRAMEWORK_JITS = (("equinox._jit", "_JitWrapper"),
                  ("flax.nnx.transforms.compilation", "JitWrapped"))


def framework_jit(obj: Any) -> bool:
    return (type(obj).__module__, type(obj).__name__) in FRAMEWORK_JITS


def option_strings(parser: argparse.ArgumentParser) -> Iterable[str]:
    return [f for a in parser._actions if a.help != argparse.SUPPRESS for f in a.option_strings]


def add_filter_hook() -> Callable[..., None] | None:
    """``warnings._add_filter`` (None where this Python has none)."""
    return getattr(warnings, "_add_filter", None)


def set_add_filter_hook(hook: Callable[..., None]) -> None:
    warnings._add_filter = hook  # type: ignore[attr-defined]


def filters_mutated() -> None:
    """Tell ``warnings`` its filters changed in place (where it has the hook)."""
    mutated = getattr(warnings, "_filters_mutated", None)
    if mutated is not None:
        mutated()
