"""What the measuring notes beside its figures, held as facts: a :class:`Note` of one
``kind`` of a family (a subclass whose :attr:`~Note.KINDS` names its fields); older
reports' sentences load as they were."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Self

from .saved import schema
from .saved.schema import fail
from .shown import Shown

#: The texts a field of such a type (``"why:hook"``) may hold; any other is refused.
KEYS: dict[str, tuple[str, ...]] = {
    "part": (),  # the names of jitmagic.model.parts.PARTS, which fills it
    "hook": ("not_asked", "no_tool_id", "no_monitoring"),
    "structure": ("shape", "node"),
    "rule": ("custom_vjp", "custom_jvp"),
    # what another thread changed (``left_as_is``): the rows of jitmagic.cell.effects
    "row": ("figures", "listeners", "filters", "logging", "rc", "np.seterr",
            "np.set_printoptions", "decimal", "random", "sys.setrecursionlimit",
            "sys.setswitchinterval", "sys.set_int_max_str_digits", "os.umask", "signals",
            "environ", "cwd", "sys_list", "hooks", "config", "module", "own", "global"),
}


class Field(NamedTuple):
    """One field of a kind of note, from its spec ``name:type``: ``type`` is ``str``,
    ``int``, ``float``, ``bool``, ``note``, ``shape`` (a tuple of ints) or a name in
    :data:`KEYS`; then ``*``: a tuple of them, ``?``: or None, ``=``: read side by side
    with the other ``=`` fields, ``+``: says what changed (one at least is non-empty)."""

    name: str
    read: schema.Kind
    parallel: bool
    telling: bool


def _field(spec: str) -> Field:
    name, _, kind = spec.partition(":")
    marks = kind.lstrip("abcdefghijklmnopqrstuvwxyz_")
    base = kind[:len(kind) - len(marks)]
    read = _TYPES.get(base) or _key(base)
    read = schema.items(read) if "*" in marks else read
    return Field(name, schema.optional(read) if "?" in marks else read, "=" in marks, "+" in marks)


def _key(name: str) -> schema.Kind:
    """A text that is one of :data:`KEYS` ``[name]``."""
    if name not in KEYS:
        raise ValueError(f"no type of note field named {name!r}")
    return lambda value, where: schema.one_of(*KEYS[name])(value, where)


class Note(Shown):
    """One fact noted: its ``kind``, then the fields its :attr:`KINDS` row names."""

    #: This family's kinds: each one's fields' specs (:class:`Field`).
    KINDS: ClassVar[dict[str, str]] = {}
    #: Of a kind whose tuples' lengths its other fields set: those lengths, by field.
    LENGTHS: ClassVar[dict[str, Callable[[dict[str, Any]], dict[str, int]]]] = {}
    kind: str

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...

    def __init_subclass__(cls) -> None:
        for name, spec in cls.KINDS.items():
            if name in FAMILY:
                raise ValueError(f"two kinds of note named {name!r}")
            FAMILY[name], FIELDS[name] = cls, tuple(map(_field, spec.split()))

    def __init__(self, kind: str, *values: Any, **named: Any) -> None:
        if FAMILY.get(kind) is not type(self):
            raise TypeError(f"{kind!r} is no kind of {type(self).__name__} note")
        names = [f.name for f in FIELDS[kind]]
        given = dict(zip(names, values, strict=False)) | named
        if len(given) != len(values) + len(named) or sorted(given) != sorted(names):
            raise TypeError(f"{type(self).__name__}({kind!r}, ...) takes "
                            f"{', '.join(names) or 'no field'}; got {len(values)} values and "
                            f"{sorted(named)}")
        self.__dict__.update(kind=kind, **{n: given[n] for n in names})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a note is a fact: {name} cannot be set")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash(tuple(vars(self).values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, vars(self).values()))})"

    def facts(self) -> dict[str, Any]:
        """The note's fields by name (its kind apart)."""
        return {k: v for k, v in vars(self).items() if k != "kind"}

    def replace(self, **changed: Any) -> Self:
        """The same note with the fields ``changed``."""
        return type(self)(self.kind, **(self.facts() | changed))

    def to_dict(self) -> dict[str, Any]:
        """The note as a report saves it: its kind, then its fields (tuples as lists)."""
        return {k: schema.encode(v) for k, v in vars(self).items()}


#: A note as a record holds it: a fact, or the sentence an earlier version saved.
Noted = str | Note
#: Each kind of note's family, and its fields, by the kind's name.
FAMILY: dict[str, type[Note]] = {}
FIELDS: dict[str, tuple[Field, ...]] = {}


def read_fact(value: Any, where: str) -> Note:
    """A note held inside another (why a helper stays inline): a fact, never a sentence."""
    got = read_noted(schema.obj(value, where), where)
    assert isinstance(got, Note)  # an object reads as a fact
    return got


#: How each type a field's spec names is read back from a report.
_TYPES: dict[str, schema.Kind] = {
    "str": schema.text, "float": schema.number_or_nan, "bool": schema.flag,
    "int": schema.integer, "shape": schema.items(schema.integer), "note": read_fact}


def saved_note(note: Noted) -> Any:
    """``note`` as a report saves it: a fact as its dict, a sentence as it is."""
    return note if isinstance(note, str) else note.to_dict()


def saved(notes: Iterable[Noted]) -> list[Any]:
    """``notes`` as a report saves them (:func:`saved_note`)."""
    return [saved_note(n) for n in notes]


def read_noted(value: Any, where: str) -> Noted:
    """A note read from a report: an earlier version's sentence, or a checked fact."""
    if isinstance(value, str):
        return schema.text(value, where)
    d = schema.obj(value, where)
    name = d.get("kind")
    if not isinstance(name, str) or name not in FAMILY:
        fail(f"{where}.kind", "a kind of note", name)
    table = tuple((f.name, f.name, f.read, schema.REQUIRED) for f in FIELDS[name])
    got = schema.fields(d, table, where)
    _said_whole(name, got, where)
    return FAMILY[name](name, **got)


def _said_whole(kind: str, got: dict[str, Any], where: str) -> None:
    """Refuse a note its sentence cannot say (lengths that disagree, nothing changed)."""
    lengths = {f.name: len(got[f.name]) for f in FIELDS[kind] if f.parallel}
    if len(set(lengths.values())) > 1:
        raise schema.ReportSchemaError(f"{where}: {' and '.join(lengths)} are read side by "
                                       f"side, so they must be of one length; got "
                                       f"{list(lengths.values())}")
    for name, length in FAMILY[kind].LENGTHS.get(kind, lambda _: {})(got).items():
        if len(got[name]) != length:
            raise schema.ReportSchemaError(f"{where}.{name}: expected {length} items (as the "
                                    f"note's other fields say), got {len(got[name])}")
    telling = [f.name for f in FIELDS[kind] if f.telling]
    if telling and not any(got[n] for n in telling):
        raise schema.ReportSchemaError(f"{where}: a {kind!r} note says what changed, but "
                                f"{' and '.join(telling)} say nothing")


def read_notes(value: Any, where: str) -> tuple[Noted, ...]:
    """A list of notes read from a report (:func:`read_noted`, each checked)."""
    return tuple(schema.items(read_noted)(value, where))


def mentions(note: Noted, helper: str) -> bool:
    """Whether ``note`` is about ``helper`` (a sentence naming it in backquotes)."""
    if isinstance(note, str):
        return f"`{helper}`" in note
    return getattr(note, "helper", None) == helper


def said(notes: Iterable[Noted]) -> tuple[str, ...]:
    """Each note's sentence (``str``: its row of the templates)."""
    return tuple(str(n) for n in notes)


def said_in(attr: str) -> Any:
    """A property: the notes held in ``attr``, each as its sentence (:func:`said`)."""
    return property(lambda self: said(getattr(self, attr)))


class Warned(Note):
    """A comparison's warnings (a sweep's, the orderings')."""

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


#: The fields of the first leaf where two outputs differ; each tuple: reference, then other.
_LEAF = ("path:str structure:structure? worst:float nonfinite:bool others:int nodes:str* "
         "dtypes:str* shapes:shape* statics:str*")


def _sides(got: dict[str, object]) -> dict[str, int]:
    """The tuples that hold two sides, by the structure that differs."""
    return {"shape": {"shapes": 2}, "node": dict.fromkeys(
        ("nodes", "dtypes", "shapes", "statics"), 2)}.get(str(got["structure"]), {})


class Differs(Note):
    """Outputs that differ, or could not be compared; the first leaf where they differ."""

    KINDS = {"leaf_differs": _LEAF, "outputs_differ": f"{_LEAF} reference:str other:str",
             "outputs_uncompared": "reference:str other:str error:str",
             "compare_raised": "error:str message:str"}
    LENGTHS = {"leaf_differs": _sides, "outputs_differ": _sides}


class Placed(Note):
    """A ``--target`` record's notes."""

    KINDS = {"target_replicated": "sharded:int devices:int",
             "target_shardings_unmatched": "what:str",
             "target_setting_refused": "setting:str why:str"}


class Taken(Note):
    """How a variant took its entry and helpers (``VariantResult.noted``)."""

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
    """Why a helper stays inline (in a ``stays_inline`` note, and ``--effort``'s out of line
    row); ``inline_leaks`` holds :class:`Leak` notes."""

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
    """How a helper's own jit leaks traced values."""

    KINDS = {
        "leak_static_held": "result_type:str? in_aux:bool holder:str name:str?",
        "leak_not_passed": "library:str?", "leak_static_output": "type_name:str?",
        "leak_handler_stack": "name:str", "leak_global": "name:str",
        "leak_closure": "function:str variable:str", "leak_elsewhere": "",
    }


class Parts(Note):
    """The parts' notes (``--effort``, ``--xla``, ``--cache``, ``--lines``)."""

    KINDS = {
        "setting_already_on": "setting:str", "setting_refused": "setting:str backend:str why:str",
        "out_of_line_no_helper": "", "out_of_line_no_nested": "",
        "out_of_line_raised": "error:str message:str", "out_of_line_none_kept": "refused:note*",
        "xla_variant_failed": "variant:str", "xla_raised": "error:str message:str",
        "other_threads_cached": "compiles:int", "no_line_hook": "why:hook python:str",
    }


class Constants(Note):
    """What passing big constants as arguments noted of a variant."""

    KINDS = {
        "captured_not_array": "what:str type_name:str", "constant_stuck": "nbytes:int stuck_in:str",
        "small_constants": "small:int total:int lift:int", "constants_unmatched": "variant:str",
        "no_constant_passed": "variant:str",
        "constants_still_captured": "variant:str count:int nbytes:int expected:int",
    }


class Ran(Note):
    """What running the cell (or file) adds to a result's warnings."""

    KINDS = {
        "x64_narrow": "", "put_back_held": "", "printed": "lines:int traces:int",
        "cell_ran": "source:str times:int", "sweep_name_unread": "name:str",
        "sweep_name_assigned": "name:str line:int",
        "late_settings": "file:str settings:str*= values:str*= imported_by:str line:int",
    }


class PutBack(Note):
    """What a cell changed outside its namespace and jitmagic put back, or left as is."""

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
