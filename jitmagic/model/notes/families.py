"""The families of :class:`~jitmagic.model.notes.Note`, one per kind of thing the
measuring notes, each with its kinds and their fields (``name:type``, :class:`~.note.Field`);
their sentences: :data:`jitmagic.render.notes.TEMPLATES`, one row per kind. Values of
the user's code are held as their ``repr``; an error as its type's name (``error``) and
its message or first line."""

from __future__ import annotations

from .note import Note


class Warned(Note):
    """A comparison's warnings (``Comparison.warned``; a sweep's, the orderings').
    ``part``: a name of :data:`jitmagic.model.parts.PARTS`; ``phase``: a stage's field
    ("compile_s"); ``part_moved``'s ``option`` as the command line writes it, ``name`` the
    private name of JAX its ``version`` lacks; ``eqns``: None, not counted."""

    KINDS = {
        "cache_switched_off": "", "cache_served": "", "waited": "seconds:float",
        "part_moved": "option:str name:str version:str", "one_example": "",
        "staged_run": "variant:str", "effort_flat_failed": "", "advice_flat_failed": "",
        "advice_stopped": "reason:str", "no_second_start": "",
        "part_not_measured": "part:part error:str", "one_process_only": "part:part processes:int",
        "no_stage_event": "variant:str phase:str entry:str",
        "clock_disagrees": "variant:str phase:str ours_s:float theirs_s:float",
        "ordering_failed": "ordering:str traceback:str", "sweep_unchanged": "name:str eqns:int?",
    }


#: The fields of the first leaf where two outputs differ: ``path`` (dotted; "" the whole
#: output); ``structure`` where the structures differ there ("shape": two leaves of
#: ``shapes``; "node": two nodes of types ``nodes`` ("" a leaf, of ``dtypes`` and
#: ``shapes``) and static data ``statics``), else None and the largest difference
#: ``worst`` (``nonfinite``: NaN or infinities in different places); ``others``: how
#: many other leaves differ. Each tuple: the reference's side, then the other's.
_LEAF = ("path:str structure:structure? worst:float nonfinite:bool others:int nodes:str* "
         "dtypes:str* shapes:shape* statics:str*")


def _sides(got: dict[str, object]) -> dict[str, int]:
    """The tuples that hold two sides, by the structure that differs."""
    return {"shape": {"shapes": 2}, "node": dict.fromkeys(
        ("nodes", "dtypes", "shapes", "statics"), 2)}.get(str(got["structure"]), {})


class Differs(Note):
    """Outputs that differ (of two variants ``reference`` and ``other``), or could not be
    compared; the first leaf where two outputs differ."""

    KINDS = {"leaf_differs": _LEAF, "outputs_differ": f"{_LEAF} reference:str other:str",
             "outputs_uncompared": "reference:str other:str error:str",
             "compare_raised": "error:str message:str"}
    LENGTHS = {"leaf_differs": _sides, "outputs_differ": _sides}


class Placed(Note):
    """A ``--target`` record's notes: an argument sharded over ``sharded`` devices
    replicated over the target's; the user's ``in_shardings`` not matching the
    arguments' ``what`` ("structure", "number"); an effort ``setting`` libtpu refused."""

    KINDS = {"target_replicated": "sharded:int devices:int",
             "target_shardings_unmatched": "what:str",
             "target_setting_refused": "setting:str why:str"}


class Taken(Note):
    """How a variant took its entry and helpers (``VariantResult.noted``): the entry's
    scalars or leaves held static (``arguments`` as the user points at them, ``short``
    its name and ``spelled`` the jit's static options as code), its Equinox modules, its
    ``donation``; a helper's calls that stay inline; a planned helper the program holds
    no jit call of (``held_by``: the library primitive that runs it; ``named``: a name of
    the user's holds it), or nested through it (``ran``: the functions its jit ran);
    backward passes (``counts`` of ``helpers``); a helper that ``stays_inline`` and
    ``why`` (an :class:`Inline`)."""

    KINDS = {
        "scalars_held_static": "entry:str arguments:str error:str short:str spelled:str",
        "leaves_held_static": "entry:str leaves:str error:str",
        "equinox_modules": "entry:str", "donates": "entry:str donation:str",
        "inline_holds_arrays": "helper:str type_name:str",
        "inline_unhashable": "helper:str type_name:str",
        "helper_scalars_static": "helper:str error:str",
        "not_nested": "helper:str held_by:str? named:bool",
        "held_by": "helper:str held_by:str ran:str*", "kernel_body": "helper:str",
        "backward_passes": "helpers:str*= counts:int*=", "same_as_flat": "",
        "stays_inline": "helper:str why:note",
    }


def _rules(got: dict[str, object]) -> dict[str, int]:
    """A custom_vjp function's two rules (forward, backward), a custom_jvp's one."""
    return {"rules": 2 if got["rule"] == "custom_vjp" else 1}


class Inline(Note):
    """Why a helper stays inline (held by a ``stays_inline`` note, and by ``--effort``'s
    out-of-line row). ``inline_rules_only``: a ``rule`` function whose body adds no
    equation, its ``rules`` adding ``equations`` (None: not counted) at ``sites`` call
    sites (0: not counted) in ``caller``; ``inline_recreated``: made anew on each call of
    ``outer``; ``inline_leaks``: it leaks traced values, ``held`` where its result holds
    them, else ``mechanism`` how (each a :class:`Leak`), ``partner`` a helper it leaks
    only nested with."""

    KINDS = {
        "inline_rules_only": "rule:rule rules:str* equations:int? sites:int caller:str",
        "inline_recreated": "outer:str", "inline_linen_made_before": "class_name:str",
        "inline_linen_method": "", "inline_self_holds_arrays": "type_name:str",
        "inline_no_function": "", "inline_custom_vjp": "", "inline_classmethod": "",
        "inline_linen_unnamed": "", "inline_flax_jit": "",
        "inline_trace_fails": "error:str first_line:str",
        "inline_leaks": "held:note? mechanism:note? partner:str?",
        "inline_differentiated": "", "inline_no_noinline": "", "inline_cannot_nest": "",
    }
    LENGTHS = {"inline_rules_only": _rules}


class Leak(Note):
    """How a helper's own jit leaks traced values. ``leak_static_held``: its result (a
    ``result_type``; None a plain container) holds one in aux data (``in_aux``) or a leaf
    that is no array, nearest held by a ``holder`` ("partial" of the function ``name``,
    "function" ``name`` by its closure, "object" of type ``name``, or "traced"); the
    others say how, as the leak checker's message shows (``library``: "haiku", "keras"
    or None; ``type_name``: None, of no type the chain names)."""

    KINDS = {
        "leak_static_held": "result_type:str? in_aux:bool holder:str name:str?",
        "leak_not_passed": "library:str?", "leak_static_output": "type_name:str?",
        "leak_handler_stack": "name:str", "leak_global": "name:str",
        "leak_closure": "function:str variable:str", "leak_elsewhere": "",
    }


class Parts(Note):
    """The parts' notes: ``--effort``'s settings left out and why its out-of-line row was
    not measured (``refused``: each helper's ``stays_inline``), why ``--xla`` profiled no
    compile of a variant, compiles of other threads that used the cache while
    ``--cache`` measured, and why ``--lines`` ran no line hook (``python``: "3.11")."""

    KINDS = {
        "setting_already_on": "setting:str", "setting_refused": "setting:str backend:str why:str",
        "out_of_line_no_helper": "", "out_of_line_no_nested": "",
        "out_of_line_raised": "error:str message:str", "out_of_line_none_kept": "refused:note*",
        "xla_variant_failed": "variant:str", "xla_raised": "error:str message:str",
        "other_threads_cached": "compiles:int", "no_line_hook": "why:hook python:str",
    }


class Constants(Note):
    """What the big constants passed as arguments noted of a variant: a captured value
    that is no array of numbers (``what``: "tracer", "objects", else "other" of type
    ``type_name``); a constant read inside a ``stuck_in`` primitive ("scan"); ``small``
    of ``total`` bytes in constants under ``lift`` bytes each; inputs unmatched; none
    passed; ``count`` constants still captured where ``expected`` were left."""

    KINDS = {
        "captured_not_array": "what:str type_name:str", "constant_stuck": "nbytes:int stuck_in:str",
        "small_constants": "small:int total:int lift:int", "constants_unmatched": "variant:str",
        "no_constant_passed": "variant:str",
        "constants_still_captured": "variant:str count:int nbytes:int expected:int",
    }


class Ran(Note):
    """What running the cell (or file, ``source``) adds to a result's warnings: x64 with
    narrow arguments, a Ctrl-C held, what it printed, how often it ran, a swept ``name``
    it never reads or assigns (at ``line``), and the JAX ``settings`` a ``file`` set to
    ``values`` too late: ``imported_by`` "before" (an earlier import) or "jitmagic"
    (before ``line``; 0: its first definition)."""

    KINDS = {
        "x64_narrow": "", "put_back_held": "", "printed": "lines:int traces:int",
        "cell_ran": "source:str times:int", "sweep_name_unread": "name:str",
        "sweep_name_assigned": "name:str line:int",
        "late_settings": "file:str settings:str*= values:str*= imported_by:str line:int",
    }


class PutBack(Note):
    """What a cell's code changed outside its scratch namespace and jitmagic put back
    (one kind per row of :mod:`jitmagic.cell.effects.table`), or left where another
    thread changed it (``left_as_is``: each a ``rows`` and a ``keys``, "" for a row of
    one value). A ``call`` is the function that sets it ("np.seterr", "os.umask");
    ``added``: those of the names it added; ``sure``: the cell set it."""

    KINDS = {
        "figures_closed": "count:int", "rc_put_back": "keys:str*",
        "listeners_put_back": "added:int+ removed:int+",
        "filters_put_back": "filters:bool+ showwarning:bool+",
        "logging_put_back": "disable:bool+ loggers:str*+",
        "numpy_put_back": "call:str settings:str*= values:str*=",
        "decimal_put_back": "replaced:bool settings:str*= values:str*= was:str*=",
        "setting_put_back": "call:str value:str was:str", "signals_put_back": "signals:str*+",
        "environ_put_back": "changed:str* added:str*",
        "jax_environ_put_back": "late:str*+ took:str*+ added:str*",
        "cwd_put_back": "now:str? was:str", "sys_list_put_back": "name:str",
        "hooks_put_back": "hooks:str*", "streams_put_back": "generators:str*+ settled:bool",
        "config_put_back": "option:str value:str was:str sure:bool",
        "config_left": "option:str value:str", "library_name_put_back": "module:str name:str",
        "own_names_put_back": "names:str* added:str*",
        "globals_put_back": "changed:str* added:str*", "not_put_back": "error:str message:str",
        "left_as_is": "rows:row*=+ keys:str*=",
    }
