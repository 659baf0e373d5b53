"""The sentences of the measuring notes: :data:`TEMPLATES`, one row per kind of note."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model.notes import Note
from ...model.shown import register
from ...model.stats.units import counted, fmt_bytes
from . import helpers as h
from .helpers import NO_CALL as NO_CALL

#: Each kind of note's sentence: a template of its fields, or a function of the note.
TEMPLATES: dict[str, str | Callable[[Any], str]] = {
    # a comparison's warnings (Warned)
    "cache_switched_off": "your persistent compilation cache was switched off for the measurement "
                          "and switched back on after",
    "cache_served": "a compile was served from JAX's persistent cache: compile times may be too "
                    "low",
    "waited": "this measurement waited {seconds:.2g} s for another thread's to finish: jitmagic "
              "measures one call at a time per process (each swaps the process's own helpers)",
    "part_moved": "--{option} not measured: it needs JAX's private {name}, which JAX {version} "
                  "does not have (pip install -U jitmagic for a release made for this JAX); the "
                  "rest was measured",
    "one_example": "flat/nested measured on one example: index 0 of the batch along each mapped "
                   "axis (--in-axes); the orderings on the whole batch",
    "staged_run": "{variant}: JAX reported no trace, lowering or compile event inside the first "
                  "call, so the stages were timed in a separate staged run (trace, lower, "
                  "compile): they do not add up to the first call",
    "effort_flat_failed": "XLA's effort was not measured: the flat variant failed",
    "advice_flat_failed": "no attribution or advice: they trace the flat variant, which failed",
    "advice_stopped": "no attribution or advice: {reason}",
    "no_second_start": "no second start: every variant failed in the comparison",
    "part_not_measured": lambda n: f"the {h.part(n)} was not measured: {n.error}",
    "one_process_only": lambda n: (f"the {h.part(n)} were not measured: that part runs in "
                                   f"one process only, and {n.processes} processes share "
                                   "this measurement"),
    "no_stage_event": lambda n: (f"{n.variant}: JAX reported no {n.phase[:-2]} event for "
                                 f"`{n.entry}` (was it served from a cache?)"),
    "clock_disagrees": lambda n: (f"{n.variant}: {n.phase[:-2]} measured {n.ours_s * 1e3:.1f} ms "
                                  f"but JAX's own event says {n.theirs_s * 1e3:.1f} ms "
                                  f"({abs(n.ours_s - n.theirs_s) / n.ours_s:.0%} apart)"),
    "ordering_failed": "{ordering} failed:\n{traceback}",
    "sweep_unchanged": "`{name}` did not change the program: every value built {eqns} jaxpr "
                       "equations (flat), so the growth is not fitted; is `{name}` read by the "
                       "code as a global?",
    # outputs that differ (Differs)
    "leaf_differs": h.leaf_differs,
    "outputs_differ": lambda n: f"outputs of {n.reference} and {n.other} differ at "
                                f"{h.leaf_differs(n)}",
    "outputs_uncompared": "outputs of {reference} and {other} could not be compared ({error})",
    "compare_raised": lambda n: f"{n.error}: {n.message}"[:200],
    # a --target record's notes (Placed)
    "target_replicated": "an argument sharded over {sharded} devices was replicated: the target "
                         "has {devices}",
    "target_shardings_unmatched": "your jit's in_shardings did not match the arguments' {what}",
    "target_setting_refused": "`{setting}` left out: libtpu refused it ({why})",
    # how a variant took its entry and helpers (Taken)
    "scalars_held_static": "{arguments} of `{entry}`: a Python scalar used as a Python value "
                           "(tracing it raised {error}), so it is held static, as "
                           "`jax.jit({short}, {spelled})` would",
    "leaves_held_static": "Python scalars inside the arguments of `{entry}` ({leaves}) are used "
                          "as Python values (tracing them raised {error}), so every non-array "
                          "leaf is held static, as `eqx.filter_jit` would",
    "equinox_modules": "the arguments of `{entry}` hold Equinox modules: their arrays are traced "
                       "and every other field is held static, as `eqx.filter_jit` takes them",
    "donates": "`{entry}` donates its arguments ({donation}): jitmagic measures it without "
               "donation, so that your arrays are never deleted (donation saves memory and "
               "copies, not compile time)",
    "inline_holds_arrays": "`{helper}` stays inline for calls on a `{type_name}` holding arrays "
                           "that is not a pytree (a static argument cannot carry arrays, so jit "
                           "cannot take it)",
    "inline_unhashable": "`{helper}` stays inline for calls with a `{type_name}` argument that "
                         "holds no array and is not hashable (it can be neither traced nor static)",
    "helper_scalars_static": "`{helper}` takes its Python scalar arguments static: traced, one of "
                             "them is used as a Python value (tracing it raised {error})",
    "not_nested": h.not_nested,
    "held_by": h.held_by,
    "kernel_body": "`{helper}` is a Pallas kernel body: its jit runs inside the kernel "
                   "`pallas_call` traces (in interpret mode as a jit call; Pallas's Triton and "
                   "Mosaic lowerings emit a jit inside a kernel inline, into the kernel's own "
                   "code)",
    "backward_passes": lambda n: (
        "under autodiff each jit call of a helper leaves its backward pass as a jit of its own, "
        "made from the same trace: the row of nested jit calls counts those too ("
        + ", ".join(f"{c} of `{f}`" for f, c in zip(n.helpers, n.counts, strict=True))
        + f"; {sum(n.counts)} in all), a helper's jit calls do not"),
    "same_as_flat": "nothing to nest: the nested program would be the flat one, so it was "
                    "measured once",
    "stays_inline": "`{helper}` stays inline: {why}",
    # why a helper stays inline (Inline)
    "inline_rules_only": h.rules_only,
    "inline_recreated": "it is re-created on every call of `{outer}`, so the function a jit would "
                        "wrap is not the one called",
    "inline_linen_made_before": "it is a Flax linen module made before the call: `apply` runs a "
                                "clone of that `{class_name}` instance, which `Module.clone` "
                                "makes from the instance's own class, not from a name, so "
                                "`nn.jit({class_name})` bound where `{class_name}` is looked up "
                                "(how jitmagic nests linen submodules) never reaches it",
    "inline_linen_method": "it is a method of a Flax linen module other than `__call__`: linen "
                           "lifts whole modules (`nn.jit(Block)`), so jitmagic nests only "
                           "`__call__`",
    "inline_self_holds_arrays": "its `self`, a `{type_name}`, holds arrays but is not a pytree, "
                                "and a static argument cannot carry arrays, so `self` cannot be "
                                "passed through `jax.jit`. To nest it, register `{type_name}` as "
                                "a pytree (`jax.tree_util.register_dataclass` or "
                                "`register_pytree_node_class`), or make it an `eqx.Module`",
    "inline_no_function": "no live function object holds its code (it was made during the trace "
                          "and is gone), so there is nothing to put a jit on",
    "inline_custom_vjp": "it is a custom_vjp function, whose rules must see it unjitted",
    "inline_classmethod": "it is a classmethod",
    "inline_linen_unnamed": "it is a Flax linen module, which is nested by lifting its class "
                            "(`nn.jit(Block)`) where its parent looks the class up, and no name "
                            "or closure holds the class",
    "inline_flax_jit": "it is a Flax module's method, jitted by Flax's own lifted jit, which "
                       "jitmagic cannot call out of line",
    "inline_trace_fails": "under a jit of its own its trace fails where the flat program traces "
                          "({error}: {first_line}), so it runs inline",
    "inline_leaks": h.leaks,
    "inline_differentiated": "it is differentiated through (under jax.grad or jax.jvp): Equinox's "
                             "noinline would compile another program for its tangent and another "
                             "for its transpose, so it would not be the helper compiled once",
    "inline_no_noinline": f"{h.NOT_MEASURED}: it needs Equinox's `equinox.internal.noinline` (pip "
                          "install equinox), which could not be imported",
    "inline_cannot_nest": "it cannot be nested",
    # how a helper's own jit leaks traced values (Leak)
    "leak_static_held": h.static_held,
    "leak_not_passed": lambda n: (f"{h.NOT_PASSED.get(n.library, h.NOT_PASSED[None])}, so "
                                  "its jit holds them as constants, and JAX's cache of those "
                                  "constants keeps them after the caller's trace"),
    "leak_static_output": lambda n: ("it returns them inside the static part of its output ("
                                     + (f"a `{n.type_name}`" if n.type_name is not None else
                                        "an object")
                                     + ", not a pytree), which its jit can pass out only as "
                                     "a Python value"),
    "leak_handler_stack": "it records them on an effect handler's stack (`{name}`), as a numpyro "
                          "model under its handlers does",
    "leak_global": "it stores them in a global (`{name}`), where they outlive its trace",
    "leak_closure": "it stores them in `{variable}`, which `{function}` closes over, where they "
                    "outlive its trace",
    "leak_elsewhere": "it keeps them outside what it returns (in a global or a list, or an effect "
                      "handler's stack, as a numpyro model does)",
    # the parts' notes (Parts)
    "setting_already_on": "`{setting}` left out: your jit already compiles with it",
    "setting_refused": "`{setting}` left out: this backend ({backend}) refused it ({why})",
    "out_of_line_no_helper": f"{h.NOT_MEASURED}: the comparison nests no helper",
    "out_of_line_no_nested": f"{h.NOT_MEASURED}: the comparison has no nested variant",
    "out_of_line_raised": f"{h.NOT_MEASURED}: tracing it raised {{error}}: {{message}}",
    "out_of_line_none_kept": lambda n: (
        f"{h.NOT_MEASURED}: no helper could be kept out of line ("
        + ("; ".join(f"`{r.helper}` {r.why}" for r in n.refused if r.kind == "stays_inline")
           or "no call of a helper") + ")"),
    "xla_variant_failed": "not measured: the {variant} variant failed in the comparison",
    "xla_raised": "not measured: {error}: {message}",
    "other_threads_cached": lambda n: (
        f"{n.compiles} compile{'s' * (n.compiles != 1)} of another thread used JAX's persistent "
        "cache while the second start measured: JAX's cache folder is the process's, so "
        f"{'it' if n.compiles == 1 else 'they'} went to jitmagic's folder (removed after), not "
        "to your own cache"),
    "no_line_hook": lambda n: ("hits, calls and time per line not measured: "
                               + h.NO_HOOK[n.why].format(n.python)),
    # the big constants passed as arguments (Constants)
    "captured_not_array": lambda n: (
        f"the program captures {h.NOT_ARRAY.get(n.what, f'a `{n.type_name}` object')}, which is "
        "not an array of numbers: it is left captured and not measured as an argument"),
    "constant_stuck": lambda n: (f"a constant of {fmt_bytes(n.nbytes)} is read inside a "
                                 f"`{n.stuck_in}` (through a jit call there): left captured"),
    "small_constants": lambda n: (f"{fmt_bytes(n.small)} of the {fmt_bytes(n.total)} of "
                                  f"constants are in constants under {fmt_bytes(n.lift)} "
                                  "each: those stay captured"),
    "constants_unmatched": "{variant}: its inputs could not be matched to the call's arguments",
    "no_constant_passed": "{variant}: no constant could be passed as an argument",
    "constants_still_captured": "{variant}: the passed program still captures {count} constants "
                                "({nbytes:,} bytes), not the {expected} left after passing the "
                                "others",
    # what running the cell adds (Ran)
    "x64_narrow": "jax_enable_x64 is on, but every floating argument is 32-bit or narrower: the "
                  "measured program computes in that precision, not float64 (an array made before "
                  "x64 was turned on stays float32; make it again to measure float64)",
    "put_back_held": "Ctrl-C came while jitmagic put back what the cell changed: it waited until "
                     "everything was put back (the measurement had finished, and is whole)",
    "printed": lambda n: (f"your code printed {counted(n.lines, 'line')} while it was "
                          "measured: Python code (print included) runs each time JAX traces "
                          f"it, at least {n.traces} times here (once to find the helpers, "
                          "then once per cold run of each variant), and jax.debug.print "
                          "prints on every call"),
    "cell_ran": "the {source} ran {times} times (once per sweep value): anything it does besides "
                "defining (printing, writing files, counting) happened {times} times",
    "sweep_name_unread": "--sweep {name}: the code never reads `{name}`, so every value measures "
                         "the same program",
    "sweep_name_assigned": "--sweep {name}: the cell assigns `{name}` (line {line}) before reading "
                           "it, so the swept values never reach the code: delete that assignment",
    "late_settings": h.late_settings,
    # what the cell changed, put back or left (PutBack)
    "figures_closed": lambda n: (f"the cell opened {counted(n.count, 'matplotlib figure')} "
                                 "while measuring (code that draws runs once per trace): "
                                 "closed now"),
    "rc_put_back": lambda n: h.said(f"changed matplotlib's rcParams {', '.join(n.keys)}"),
    "listeners_put_back": lambda n: h.said(h.listed(
        [f"registered {counted(n.added, 'jax.monitoring listener')}"] * bool(n.added)
        + [f"unregistered {counted(n.removed, 'jax.monitoring listener')}"] * bool(n.removed))),
    "filters_put_back": lambda n: h.said(h.listed(["changed the warnings filters"] * n.filters
                                                  + ["replaced warnings.showwarning"]
                                                  * n.showwarning)),
    "logging_put_back": lambda n: h.said(h.listed(["called logging.disable"] * n.disable + [
        f"changed {h.logger(k)} (its level or handlers)" for k in n.loggers])),
    "numpy_put_back": lambda n: h.said(
        f"changed numpy's {'error handling' if n.call == 'np.seterr' else 'print options'} ("
        + n.call + "(" + ", ".join(f"{k}={v}" for k, v in zip(n.settings, n.values, strict=True))
        + "))"),
    "decimal_put_back": lambda n: h.said(  # "replaced decimal's context (…; prec=6, it was 28)"
        f"{'replaced' if n.replaced else 'changed'} decimal's context ("
        + "; ".join(["decimal.setcontext"] * n.replaced + [f"{k}={v}, it was {w}" for k, v, w
                                                          in zip(n.settings, n.values, n.was,
                                                                 strict=True)]) + ")"),
    "setting_put_back": h.setting,
    "signals_put_back": lambda n: h.said(f"set the handler of {h.listed(list(n.signals))} "
                                         "(signal.signal)"),
    "environ_put_back": lambda n: h.said(f"changed environment variables {h.then_added(n)}"),
    "jax_environ_put_back": h.jax_environ,
    "cwd_put_back": lambda n: h.said(f"changed the working directory to {n.now!r} (it was "
                                     f"{n.was!r})"),
    "sys_list_put_back": lambda n: h.said(f"changed sys.{n.name}"),
    "hooks_put_back": lambda n: h.said(f"changed {', '.join(h.HOOKS.get(k, k) for k in n.hooks)}"),
    "streams_put_back": h.streams,
    "config_put_back": lambda n: ("the cell" if n.sure else "the cell, or another thread while "
                                  "it ran,") + (f" changed JAX's config {n.option} to {n.value}"
                                                f": it applied while measuring and is back "
                                                f"to {n.was} now"),
    "config_left": "another thread changed JAX's config {option} to {value} while the cell ran: "
                   "jitmagic left it as it is",
    "library_name_put_back": "the cell patched the library name {module}.{name}: it applied while "
                             "measuring and is now restored",
    "own_names_put_back": lambda n: ("the cell, or the code it ran, changed names of your own "
                                     f"modules and classes: {h.marked(n.names, n.added)}. "
                                     "They applied while measuring and are put back now; a "
                                     "count a helper keeps there counted traces, not your "
                                     "calls (lists and dicts changed in place are not put "
                                     "back)"),
    "globals_put_back": lambda n: (f"the code measured changed your globals {h.then_added(n)}: "
                                   "it applied while measuring and they are put back now; a "
                                   "count a helper keeps there counted traces, not your calls"),
    "not_put_back": "the cell changed something jitmagic could not put back ({error}: {message})",
    "left_as_is": h.left,
}


def say(note: Note) -> str:
    """The sentence of ``note``: its kind's row of :data:`TEMPLATES`, filled."""
    row = TEMPLATES[note.kind]
    return row(note) if callable(row) else row.format(**note.facts())


def register_notes() -> None:
    """Say every note (of every family) by :func:`say` (``str(note)``)."""
    register("text", Note, say)
