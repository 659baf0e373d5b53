"""The shape of the code itself, read from the source (no measuring): which jitmagic
module imports which, and how many parameters its functions take.

Every ``import`` statement that can run counts, including those inside functions (a lazy
import is still a dependency); imports for type hints only (``if TYPE_CHECKING:``) do
not. ``lint-imports`` checks the layers (pyproject.toml); these tests check what it does
not say directly: no cycle anywhere, and the headless packages reach no display library,
even indirectly.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import jitmagic

PACKAGE = Path(jitmagic.__file__).parent


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Named parameters, positional and keyword, without ``self``/``cls``, *args, **kwargs."""
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def test_no_function_takes_more_than_seven_parameters():
    """Options travel as one object: no function spells out nine of them."""
    too_many = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = _parameters(node)
                if len(names) > 7:
                    where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                    too_many.append(f"{where} {node.name}({', '.join(names)})")
    assert not too_many, "functions with more than 7 parameters:\n" + "\n".join(too_many)


DISPLAY_LIBRARIES = ("IPython", "matplotlib", "ipywidgets")
HEADLESS = ("jitmagic.cell", "jitmagic.measure", "jitmagic.model")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolve(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` names (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def runtime_nodes(tree: ast.AST):
    """Every node that can run: all of ``tree`` but the bodies of ``if TYPE_CHECKING:``
    (imports for type hints only, which never run and so make no cycle)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo += node.orelse
            continue
        todo += ast.iter_child_nodes(node)


def imports_of(path: Path, modules: set[str], type_only: bool = False) -> set[str]:
    """Every module ``path`` imports, anywhere in it: jitmagic modules by their full name,
    other packages by their top-level name; with ``type_only``, imports for type hints
    too."""
    importer, found = module_name(path), set()
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree) if type_only else runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            target = resolve(node, importer, path.name == "__init__.py")
            # ``from pkg import sub`` imports the submodule where there is one.
            subs = {f"{target}.{a.name}" for a in node.names} & modules
            found |= subs or {target}
    return {m if m.startswith("jitmagic") else m.split(".")[0] for m in found}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """jitmagic's import graph: module -> the modules it imports."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle among jitmagic's own modules, or None (depth-first search)."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(module: str, path: list[str]) -> list[str] | None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if target not in graph:
                continue
            if state.get(target) == "open":
                return path[path.index(target):] + [module, target]
            if target not in state and (cycle := visit(target, [*path, module])):
                return cycle
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module, [])):
            return cycle
    return None


def test_the_graph_sees_function_local_imports(graph):
    # If the graph missed imports inside functions, the checks below would pass vacuously.
    assert "jitmagic.frontends.magic" in graph["jitmagic"]  # imported in load_ipython_extension
    assert "jitmagic.render.charts.phases" in graph["jitmagic.render.bundle"]  # in chart_png


def test_no_import_cycle_lazy_imports_included(graph):
    assert find_cycle(graph) is None


def test_no_import_cycle_type_only_imports_included():
    """A cycle closed only by a type hint is still a knot: a Protocol unties it."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    assert find_cycle({module_name(p): imports_of(p, modules, type_only=True)
                       for p in paths}) is None


def test_the_model_imports_nothing_above_it(graph):
    above = ("jitmagic.render", "jitmagic.measure", "jitmagic.frontends", "jitmagic.options",
             "jitmagic.errors")
    for module in (m for m in graph if m.startswith("jitmagic.model")):
        up = {t for t in graph[module] if t.startswith(above)}
        assert not up, f"{module} imports {sorted(up)}"


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph.get(module, ())
    return seen


def test_cells_measure_and_model_reach_no_display_library(graph):
    headless_graph = graph
    for module in (m for m in graph if m.startswith(HEADLESS)):
        shown = reachable(headless_graph, module) & set(DISPLAY_LIBRARIES)
        assert not shown, f"{module} imports {sorted(shown)}, directly or through jitmagic"


#: A folder a newcomer can take in at a glance holds at most this many modules; a larger
#: one has families that want folders of their own (docs/measuring.md, the code map).
MOST_MODULES = 15


def test_no_folder_holds_more_than_fifteen_modules():
    folders = [d for d in [PACKAGE, *PACKAGE.rglob("*")] if d.is_dir() and d.name != "__pycache__"]
    sizes = {str(d.relative_to(PACKAGE.parent)): len(set(d.glob("*.py")) - {d / "__init__.py"})
             for d in folders}
    crowded = {d: n for d, n in sizes.items() if n > MOST_MODULES}
    assert not crowded, f"folders of more than {MOST_MODULES} modules: {crowded}"


def test_every_folder_says_what_it_holds():
    for init in PACKAGE.rglob("__init__.py"):
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init} has no docstring"


#: Private names of other libraries jitmagic touches: JAX's internals, attributes that are
#: not public API, and the private modules of frameworks whose classes it recognises.
PRIVATE_MODULES = re.compile(r"^(jax\._src|equinox\._|flax\.nnx\.transforms\.)")
PRIVATE_ATTRIBUTES = {"_jit_info", "_instances", "_add_filter", "_actions",
                      "_filters_mutated"}
COMPAT = "jitmagic._compat"


def private_uses(path: Path) -> list[str]:
    """Where ``path`` imports a private module, names one in a string, or reads one of
    :data:`PRIVATE_ATTRIBUTES` (directly or through ``getattr``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if PRIVATE_MODULES.match(node.value) else []
            names += [node.value] if node.value in PRIVATE_ATTRIBUTES else []
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            names = [node.attr]
        found += [f"{path.name}:{node.lineno} {n}" for n in names
                  if PRIVATE_MODULES.match(n) or n in PRIVATE_ATTRIBUTES]
    return found


def test_only_the_compatibility_module_touches_private_names():
    outside = [use for path in sorted(PACKAGE.rglob("*.py")) if module_name(path) != COMPAT
               for use in private_uses(path)]
    assert not outside, f"private names outside {COMPAT}: {outside}"
    inside = private_uses(PACKAGE / "_compat.py")
    assert any("jax._src" in use for use in inside) and any("_jit_info" in u for u in inside)


def test_the_sentences_of_a_sys_exit_live_in_errors_alone():
    """What jitmagic says of the user's ``sys.exit`` is worded once, in
    :mod:`jitmagic.errors`: no other module's strings say ``sys.exit(``."""
    worded = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.JoinedStr | ast.Constant) and "sys.exit(" in (
                    node.value if isinstance(node, ast.Constant)
                    and isinstance(node.value, str) else ast.unparse(node)):
                worded.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert worded and all(w.startswith("jitmagic/errors.py") for w in worded), worded


#: The most lines a function of jitmagic's spans, its docstring included.
LONGEST_FUNCTION = 40
#: The most lines a module of jitmagic's holds.
LONGEST_MODULE = 500


def test_no_module_is_longer_than_five_hundred_lines():
    """A module that outgrows this is two houses: split by what each part holds."""
    long = [f"{path.relative_to(PACKAGE.parent)} ({n} lines)"
            for path in sorted(PACKAGE.rglob("*.py"))
            if (n := len(path.read_text().splitlines())) > LONGEST_MODULE]
    assert not long, f"modules over {LONGEST_MODULE} lines:\n" + "\n".join(long)


def test_no_function_is_longer_than_forty_lines():
    """Long functions are split into named steps; the offenders are listed."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                span = node.end_lineno - node.lineno + 1
                if span > LONGEST_FUNCTION:
                    long.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} "
                                f"{node.name} ({span} lines)")
    assert not long, f"functions over {LONGEST_FUNCTION} lines:\n" + "\n".join(long)


#: A string that names a module to import, or a function in one: ``"jitmagic.render.x"``,
#: ``"jitmagic.measure.parts.effort:add_part"``, ``".parts.effort:add_part"``.
NAMES_A_MODULE = re.compile(r"\.?jitmagic(\.\w+)+(:\w+)?|\w+(\.\w+)+:\w+|(\.\w+)+:\w+")
#: The calls that import a module named by a string.
IMPORTING = ("import_module", "__import__", "find_spec")


def string_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of each string constant that names a jitmagic module or a
    ``"module:function"``, and of each importing call whose argument is a jitmagic path
    or is read relative to a package (``import_module(TABLE[name], __package__)``)."""
    found = [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant)
             and isinstance(n.value, str) and NAMES_A_MODULE.fullmatch(n.value)]
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args):
        if ast.unparse(call.func).split(".")[-1] in IMPORTING:
            arg = ast.unparse(call.args[0])
            relative = len(call.args) > 1 or any(k.arg == "package" for k in call.keywords)
            if "jitmagic" in arg or arg.lstrip("'\"f").startswith(".") or relative:
                found.append((call.lineno, ast.unparse(call)))
    return found


def test_no_string_names_a_jitmagic_module_to_import():
    """Each layer imports what it uses by name (the table of parts' measurers, sections
    and differs are each layer's own tables), so import-linter, mypy and any drawing of
    the imports see every tie: no string names a module to import."""
    hidden = [f"{path.relative_to(PACKAGE.parent)}:{line}: {said}"
              for path in sorted(PACKAGE.rglob("*.py"))
              for line, said in string_imports(ast.parse(path.read_text(), str(path)))]
    assert not hidden, "modules named by strings:\n" + "\n".join(hidden)


def test_a_module_named_by_a_string_is_found():
    tree = ast.parse('P = ("jitmagic.measure.parts.effort:add_part", f"{M}.lines:section")\n'
                     'importlib.import_module("jitmagic.render.diff")\n'
                     'importlib.import_module(f"jitmagic.{name}")\n'
                     'importlib.import_module(name)\nX = "jitmagic"\nY = "v5e:1x1"\n'
                     'importlib.import_module(COMMANDS[argv[0]], __package__)\n')
    assert sorted(line for line, _ in string_imports(tree)) == [1, 1, 2, 2, 3, 7]
