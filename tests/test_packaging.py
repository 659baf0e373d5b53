"""What the docs point at exists, the package metadata is whole, and the private JAX
API jitmagic relies on is still there.

Everything is read from the tree as it is when the tests run (no list of modules,
files or private names is written down here where the source can say it), so a
module that is renamed, split or removed shows up as a broken reference at once.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jitmagic"
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = sorted(PACKAGE.rglob("*.py"))

# --------------------------------------------------------------------------- references

#: A Sphinx cross-reference: ``:mod:`jitmagic.render```, ``:func:`~.stats.difference```,
#: ``:class:`title <target>```.
ROLE = re.compile(r":(?:py:)?(mod|func|class|meth|attr|data|exc|obj):`([^`]+)`")
#: A path to one of the package's files or folders: ``jitmagic/measure/variants/entry.py``.
PACKAGE_PATH = re.compile(r"(?<![\w./-])jitmagic/(?:\w+/)*(?:\w+\.py|\w+/?)(?![\w.-])")
#: A dotted name in the package, in prose or code: ``jitmagic.model.sweep.exponents``
#: (not the schema string ``jitmagic.comparison/2``, nor ``jitmagic-demo.html``).
DOTTED = re.compile(r"(?<![\w./-])jitmagic(?:\.[A-Za-z_]\w*)+(?![\w/-])")
#: A path from the repository root in the docs: ``tests/test_soak.py``, ``docs/x.png``.
REPO_PATH = re.compile(r"(?<![\w./-])(?:tests|benchmarks|notebooks|docs|\.ci)/[\w./-]*\w")
#: A Markdown link or image to a local file: ``[text](orderings.md#fields)``.
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _target(ref: str) -> str:
    """The object a role names: ``title <target>`` → target, ``~a.b`` / ``!a.b`` → a.b."""
    explicit = re.fullmatch(r".*<(.+)>", ref.strip())
    return (explicit.group(1) if explicit else ref).strip().lstrip("~!")


def _has(obj: Any, name: str) -> bool:
    """Whether ``obj`` has ``name``: an attribute, or a dataclass field or annotation
    without a class-level value."""
    if hasattr(obj, name):
        return True
    for klass in getattr(obj, "__mro__", ()):
        if name in getattr(klass, "__dataclass_fields__", {}) or \
                name in getattr(klass, "__annotations__", {}):
            return True
    return False


def resolve(dotted: str) -> Any:
    """The module or object ``dotted`` names; ``LookupError`` saying what is missing."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # only "this very name is not a module"; a missing dependency inside is a failure
            if exc.name is None or not f"{name}.".startswith(f"{exc.name}."):
                raise
            continue
        break
    else:
        raise LookupError(f"no module {parts[0]!r}")
    for j, attr in enumerate(parts[i:], start=i):
        if not _has(obj, attr):
            raise LookupError(f"{'.'.join(parts[:j])} has no {attr!r}")
        obj = getattr(obj, attr, None)
    return obj


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _candidates(target: str, module: str | None) -> Iterator[str]:
    """Where Sphinx would look for ``target`` written in ``module``: ``.name`` against the
    module and each package above it; a plain name in the module first, then as written."""
    scopes = []
    if module:
        parts = module.split(".")
        scopes = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    if target.startswith("."):
        yield from (scope + target for scope in scopes)
        return
    if scopes and target.split(".")[0] != scopes[-1]:  # not already absolute
        yield f"{scopes[0]}.{target}"
    yield target


def _in_a_class_of(module: str, name: str) -> bool:
    """Whether a class defined in ``module`` has ``name`` (``:meth:`close``` written inside
    the class it belongs to)."""
    mod = importlib.import_module(module)
    return any(isinstance(v, type) and getattr(v, "__module__", None) == module and _has(v, name)
               for v in vars(mod).values())


def broken_role(ref: str, module: str | None = None) -> str | None:
    """Why a Sphinx reference does not resolve (None: it does)."""
    target = _target(ref)
    reasons = []
    for name in _candidates(target, module):
        try:
            resolve(name)
            return None
        except LookupError as exc:
            reasons.append(f"{name}: {exc}")
    if module and "." not in target.lstrip(".") and _in_a_class_of(module, target.lstrip(".")):
        return None
    return "; ".join(reasons)


def _doc_lines() -> Iterator[tuple[Path, int, str]]:
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            yield doc, number, line


def _where(path: Path, number: int) -> str:
    return f"{path.relative_to(ROOT)}:{number}"


def test_the_docs_name_only_modules_and_objects_that_exist():
    """Every ``:mod:``/``:func:``/``:class:`` target and every ``jitmagic.x.y`` name in the
    README and docs/ imports (a module) or is an attribute of one."""
    bad = []
    for doc, number, line in _doc_lines():
        for match in ROLE.finditer(line):
            why = broken_role(match.group(2))
            if why:
                bad.append(f"{_where(doc, number)} {match.group(0)}: {why}")
        for match in DOTTED.finditer(line):
            try:
                resolve(match.group(0))
            except LookupError as exc:
                bad.append(f"{_where(doc, number)} {match.group(0)}: {exc}")
    assert not bad, "references in the docs that name nothing:\n" + "\n".join(bad)


def test_the_docs_name_only_files_that_exist():
    """Every ``jitmagic/...py`` path (and package folder), every path from the repository
    root (``tests/...``, ``benchmarks/...``) and every local link in the README and docs/
    is there."""
    bad = []
    for doc, number, line in _doc_lines():
        paths = [m.group(0) for m in PACKAGE_PATH.finditer(line)]
        paths += [m.group(0).rstrip(".") for m in REPO_PATH.finditer(line)]
        bad += [f"{_where(doc, number)} {p}" for p in paths if not (ROOT / p).exists()]
        for match in LINK.finditer(line):
            link = match.group(1).split("#")[0]
            if link and not re.match(r"[a-z]+:", link) and not (doc.parent / link).exists():
                bad.append(f"{_where(doc, number)} link {match.group(1)}")
    assert not bad, "paths in the docs that do not exist:\n" + "\n".join(bad)


def test_docstrings_and_comments_name_only_what_exists():
    """Sphinx references (relative ones against their module) and ``jitmagic/...py`` paths
    in the package's own docstrings and comments resolve too."""
    bad = []
    for path in SOURCES:
        module = module_name(path)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in ROLE.finditer(line):
                why = broken_role(match.group(2), module)
                if why:
                    bad.append(f"{_where(path, number)} {match.group(0)}: {why}")
            bad += [f"{_where(path, number)} {m.group(0)}: no such file"
                    for m in PACKAGE_PATH.finditer(line) if not (ROOT / m.group(0)).exists()]
    assert not bad, "references in the source that name nothing:\n" + "\n".join(bad)


def test_nothing_points_outside_the_repository():
    """No doc, source or packaging file refers to ``../shared`` or any other folder above
    the checkout: a fresh clone must be complete."""
    files = [*DOCS, *SOURCES, ROOT / "pyproject.toml", ROOT / "run-tests",
             *sorted((ROOT / ".ci").glob("*")), *sorted((ROOT / "tests").glob("*.py")),
             *sorted((ROOT / "benchmarks").glob("*.py"))]
    outside = re.compile(r"\.\./shared|(?<![\w.])shared/|/work/")
    bad = [f"{_where(f, n)} {line.strip()}" for f in files if f.is_file()
           for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
           if outside.search(line) and f != Path(__file__).resolve()]
    assert not bad, "pointers outside the repository:\n" + "\n".join(bad)


# --------------------------------------------------------------------------- the README

README_MAX_LINES = 160


def test_the_readme_stays_short():
    """The README is the first page: at most 160 lines; details go to docs/."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, more than {README_MAX_LINES}: move a section "
        f"to docs/ and link it")


def test_the_readme_starts_with_the_two_commands():
    """The first section holds the two commands for a fresh machine: install and run the
    demo, and run the tests."""
    text = README.read_text(encoding="utf-8")
    first = text.split("\n## ", 2)[1]
    assert "pip install -e . && .venv/bin/python -m jitmagic demo" in first
    assert "./run-tests" in first
    assert (ROOT / "run-tests").is_file()


# --------------------------------------------------------------------------- packaging


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_has_one_source():
    """pyproject reads the version from ``jitmagic.__version__``, and the installed
    metadata agrees (``pip install -e .`` again if this fails after a version bump)."""
    import jitmagic

    project = _pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    attr = _pyproject()["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "jitmagic.__version__"
    # setuptools reads it without importing jitmagic (and so JAX): it must be a literal
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    literal = [n.value.value for n in tree.body if isinstance(n, ast.Assign)
               and [getattr(t, "id", None) for t in n.targets] == ["__version__"]
               and isinstance(n.value, ast.Constant)]
    assert literal == [jitmagic.__version__]
    assert importlib.metadata.version("jitmagic") == jitmagic.__version__


def test_the_license_is_declared_and_shipped():
    project = _pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "the jitmagic authors" in text


def test_jax_has_no_upper_bound_that_would_downgrade_a_users_jax():
    """``pip install jitmagic`` beside a newer JAX (a TPU VM's, paired with its libtpu)
    must keep it: jax and jaxlib have a lower bound only, the same, and the README says
    it."""
    deps = _pyproject()["project"]["dependencies"]
    pins = {re.split(r"[<>=!~ ]", d, maxsplit=1)[0]: d for d in deps}
    assert "<" not in pins["jax"] + pins["jaxlib"] and "==" not in pins["jax"], pins
    spec = pins["jax"].removeprefix("jax").replace(" ", "")
    assert pins["jaxlib"].removeprefix("jaxlib").replace(" ", "") == spec
    assert f"`jax{spec}`" in README.read_text(encoding="utf-8"), (
        f"the README does not state the JAX it needs, jax{spec}")


# --------------------------------------------------------------------------- private JAX


def _jax_version() -> str:
    import jax

    return jax.__version__


def _gone(what: str, exc: BaseException | str) -> str:
    return (f"jitmagic relies on {what}, which JAX {_jax_version()} no longer has: {exc}. "
            f"Adapt jitmagic (grep for it) or keep the jax pin in pyproject.toml below this "
            f"version.")


def _jax_names_used() -> dict[str, list[str]]:
    """Every name jitmagic reaches inside JAX's private or semi-private modules
    (``jax._src``, ``jax.extend``), found in the source: the modules it imports
    (``from jax._src import source_info_util``), the names it imports from them, and the
    attributes it reads off those modules (``source_info_util.raw_frame_to_frame``).
    ``{dotted name: [where it is used]}``."""
    private = re.compile(r"jax\.(_src|extend)(\.|$)")
    used: dict[str, list[str]] = {}
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases: dict[str, str] = {}  # local name -> the private module or object it is
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if private.match(a.name):
                        aliases[a.asname or a.name] = a.name
            elif isinstance(node, ast.ImportFrom) and not node.level \
                    and private.match(node.module or ""):
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases:
                used.setdefault(f"{aliases[node.value.id]}.{node.attr}", []).append(
                    f"{path.relative_to(ROOT)}:{node.lineno}")
        for local, name in aliases.items():
            used.setdefault(name, []).append(f"{path.relative_to(ROOT)} ({local})")
    return used


def _attribute_uses(name: str) -> list[str]:
    """Where the source reads the attribute ``name`` (``obj._jit_info`` or
    ``getattr(obj, "_jit_info", ...)``)."""
    found = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            direct = isinstance(node, ast.Attribute) and node.attr == name
            dynamic = (isinstance(node, ast.Call) and getattr(node.func, "id", None)
                       in ("getattr", "hasattr") and len(node.args) >= 2
                       and isinstance(node.args[1], ast.Constant) and node.args[1].value == name)
            if direct or dynamic:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_private_jax_modules_jitmagic_imports_are_there():
    used = _jax_names_used()
    assert any(n.startswith("jax._src.") for n in used), "found no jax._src use to check"
    gone = []
    for name, where in sorted(used.items()):
        try:
            resolve(name)
        except (LookupError, ImportError) as exc:
            gone.append(_gone(name, exc) + f" (used at {', '.join(where)})")
    assert not gone, "\n".join(gone)


def test_a_jitted_function_still_carries_its_jit_info():
    """``jax.jit(f)._jit_info`` holds the options a user's jit was made with (read to take
    that jit off for the flat variant and put it back for the nested one), and
    ``__wrapped__`` the plain function."""
    import jax

    assert _attribute_uses("_jit_info"), "jitmagic no longer reads _jit_info: drop this test"
    options = _module_constant("JIT_OPTIONS")

    def f(x, n):
        return x * n

    jitted = jax.jit(f, static_argnums=(1,))
    info = getattr(jitted, "_jit_info", None)
    assert info is not None, _gone("the _jit_info attribute of jax.jit functions",
                                   "jax.jit(f)._jit_info is missing")
    assert jitted.__wrapped__ is f, _gone("jax.jit(f).__wrapped__", "it is not f")
    missing = [k for k in options if not hasattr(info, k)]
    assert not missing, _gone(f"jax.jit(f)._jit_info.{{{', '.join(missing)}}}", "missing")
    assert tuple(info.static_argnums) == (1,), _gone(
        "jax.jit(f)._jit_info.static_argnums", f"it reads {info.static_argnums!r}, not (1,)")


def test_a_jaxpr_equation_still_carries_its_raw_frames():
    """``eqn.source_info.traceback.raw_frames()`` gives (code objects, last instructions),
    which ``source_info_util.raw_frame_to_frame`` turns into a line (``--lines``)."""
    import jax
    from jax._src import source_info_util

    def f(x):
        return x * 2

    eqn = jax.make_jaxpr(f)(1.0).jaxpr.eqns[0]
    try:
        codes, lastis = eqn.source_info.traceback.raw_frames()
    except AttributeError as exc:
        pytest.fail(_gone("eqn.source_info.traceback.raw_frames()", exc))
    line = [source_info_util.raw_frame_to_frame(c, i).start_line
            for c, i in zip(codes, lastis, strict=True) if c is f.__code__]
    assert line == [f.__code__.co_firstlineno + 1], _gone(
        "source_info_util.raw_frame_to_frame(code, lasti).start_line", f"it gave {line}")


def test_the_jax_monitoring_events_jitmagic_listens_to_still_fire():
    """JAX's own clock (``jax.monitoring`` duration events, named in measure/sampling/monitor.py)
    still reports trace, lowering and compile under the names jitmagic filters on."""
    import jax

    monitor = importlib.import_module("jitmagic.measure.sampling.monitor")
    events = {v for k, v in vars(monitor).items()
              if k.endswith("_EVENT") and isinstance(v, str)}
    seen: set[str] = set()

    def listener(event: str, *_: Any, **__: Any) -> None:
        seen.add(event)

    jax.clear_caches()  # so that the compile is not an in-memory cache hit
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        jax.jit(lambda x: x + 1).trace(1.0).lower().compile()
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    durations = {e for e in events if "cache" not in e}
    missing = sorted(durations - seen)
    assert not missing, _gone(f"the jax.monitoring events {missing}",
                              f"a jit's trace, lower and compile reported {sorted(seen)}")


def _module_constant(name: str) -> Any:
    """The value of the module-level constant ``name`` wherever in jitmagic it is defined
    (modules move; the constant's name is what the tests rely on)."""
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    getattr(t, "id", None) == name for t in node.targets):
                return getattr(importlib.import_module(module_name(path)), name)
    pytest.fail(f"no jitmagic module defines {name}")


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation but ``-`` and
    ``_`` dropped, each space a ``-`` (``## Saved reports: JSON`` → ``saved-reports-json``)."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors_of(doc: Path) -> set[str]:
    """The anchors of ``doc``'s headings (outside code blocks), a repeated one numbered
    ``-1``, ``-2`` as GitHub numbers them."""
    found: set[str] = set()
    fenced = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        fenced ^= line.lstrip().startswith("```")
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading and not fenced:
            slug, n = github_slug(heading.group(1)), 1
            while slug in found:
                slug, n = f"{github_slug(heading.group(1))}-{n}", n + 1
            found.add(slug)
    return found


def test_github_slugs_are_as_github_makes_them():
    assert github_slug("Saved reports: JSON and `--html`") == "saved-reports-json-and---html"
    assert github_slug("What 0.4 adds (and why)") == "what-04-adds-and-why"


def test_every_link_to_a_heading_finds_it():
    """A local link's ``#anchor`` (in the README and docs/) names a heading of the file
    it points to (GitHub's slug of it)."""
    bad = []
    for doc, number, line in _doc_lines():
        for match in LINK.finditer(line):
            link, _, anchor = match.group(1).partition("#")
            if not anchor or re.match(r"[a-z]+:", link):
                continue
            target = doc.parent / link if link else doc
            if target.suffix == ".md" and target.exists() and anchor not in anchors_of(target):
                bad.append(f"{_where(doc, number)} {match.group(1)}")
    assert not bad, "links to headings that are not there:\n" + "\n".join(bad)


def test_every_private_name_a_part_needs_is_in_this_jax():
    from jitmagic._compat import NEEDED, missing

    assert {n.option for n in NEEDED} >= {None, "xla", "effort", "lines", "cache"}
    assert missing() == (), _gone(", ".join(n.name for n in missing()), "missing")


def test_a_part_whose_private_name_moved_is_refused_and_the_rest_measured(monkeypatch):
    """As under a newer JAX that renamed what --xla reads: --xla is refused with what to
    do, and flat against nested is measured all the same."""
    import jax.numpy as jnp

    import jitmagic
    from jitmagic import _compat
    from jitmagic.errors import InputError

    moved = _compat.Needed(_compat.PROFILER, "_profile_state_renamed", "xla")
    monkeypatch.setattr(_compat, "NEEDED", (*_compat.NEEDED, moved))
    result = jitmagic.compare(lambda x: jnp.sin(x) * 2, jnp.ones(4), repeat=1, number=1,
                              xla=True, quiet=True)
    assert result.xla_passes is None and result.flat.samples["compile_s"]
    assert any(w.startswith("--xla not measured: it needs JAX's private "
                            "jax._src.profiler._profile_state_renamed, which JAX ")
               for w in result.warnings)
    core = _compat.Needed(_compat.SOURCE_INFO, "user_context_renamed", None)
    monkeypatch.setattr(_compat, "NEEDED", (core,))
    with pytest.raises(InputError, match="install a jitmagic release made for this JAX"):
        jitmagic.compare(lambda x: x + 1, jnp.ones(4), repeat=1, number=1, quiet=True)


# ------------------------------------------------------------ the hook comes with the install

#: A loop whose step compiles twice (a short last batch): ``fail_after_warmup=0`` fails.
TWICE = '''
import jax, jax.numpy as jnp
step = jax.jit(lambda x: x.sum())
print(float(step(jnp.ones(4)) + step(jnp.ones(5))))
'''


def _fresh_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A new venv (its python, its site-packages) that finds this environment's packages
    (JAX, ...) on its path, but not jitmagic, which is installed into it."""
    venv = tmp_path / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"], check=True,
                               capture_output=True, text=True).stdout.strip())
    others = [p for p in sys.path if p.endswith("site-packages")]
    (site / "aaa-others.pth").write_text("\n".join(others) + "\n")  # read before the hook's
    return python, site


def _copy_of_the_project(tmp_path: Path) -> Path:
    """What pip builds from, copied (pip builds in the folder: no build/ left here)."""
    source = tmp_path / "project"
    shutil.copytree(ROOT / "jitmagic", source / "jitmagic",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "jitmagic-watch.pth",
                 "jitmagic_watch.py"):
        shutil.copy(ROOT / name, source / name)
    return source


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True], ids=["pip install", "pip install -e"])
def test_installed_means_hooked_and_uninstalled_leaves_nothing(tmp_path, editable):
    python, site = _fresh_venv(tmp_path)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps",
                    *(["-e"] if editable else []), str(_copy_of_the_project(tmp_path))],
                   check=True, capture_output=True, timeout=600)
    for name in ("jitmagic-watch.pth", "jitmagic_watch.py"):  # the line and its guard
        assert (site / name).read_text() == (ROOT / name).read_text()
    (tmp_path / "train.py").write_text(TWICE)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("JITMAGIC_WATCH") and k != "PYTHONPATH"}
    env["JAX_PLATFORMS"] = "cpu"

    def run(*argv: str, **variable: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(python), *argv], cwd=tmp_path, env={**env, **variable},
                              capture_output=True, text=True, timeout=300)

    gated = run("train.py", JITMAGIC_WATCH="fail_after_warmup=0")
    assert gated.returncode == 1, gated.stderr
    assert "Gate FAILED" in gated.stderr and gated.stdout == "9.0\n"
    plain = run("train.py")
    assert plain.returncode == 0 and "jitwatch" not in plain.stderr
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "jitmagic"],
                   check=True, capture_output=True, timeout=300)
    assert not (site / "jitmagic-watch.pth").exists()
    assert not (site / "jitmagic_watch.py").exists()
    after = run("-c", "print('ran')", JITMAGIC_WATCH="1")
    assert (after.returncode, after.stdout, after.stderr) == (0, "ran\n", "")


@pytest.mark.slow
def test_a_moved_editable_checkout_is_said_in_one_line_and_fails_a_gated_program(tmp_path):
    """``pip install -e copy`` then ``mv copy elsewhere``: every start says what is wrong
    in one line (no "Error processing line" traceback); a JAX program given a gate does
    not pass it unapplied, and pip (no JAX) is left to run."""
    python, _ = _fresh_venv(tmp_path)
    project = _copy_of_the_project(tmp_path)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(project)],
                   check=True, capture_output=True, timeout=600)
    project.rename(tmp_path / "elsewhere")
    (tmp_path / "train.py").write_text(TWICE)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("JITMAGIC_WATCH") and k != "PYTHONPATH"}
    env.update(JAX_PLATFORMS="cpu", JITMAGIC_WATCH="fail_after_warmup=0")
    said = ("jitmagic: JITMAGIC_WATCH='fail_after_warmup=0': jitmagic cannot be imported (no "
            "module named 'jitmagic': an editable checkout moved or deleted?): reinstall "
            "jitmagic (pip install jitmagic, or pip install -e CHECKOUT where the checkout now "
            "is), or unset JITMAGIC_WATCH")
    for argv, status in ((["-c", "print(1)"], 0), (["-m", "pip", "--version"], 0),
                         (["train.py"], 2)):
        done = subprocess.run([str(python), *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == status, (argv, done.stderr)
        assert done.stderr.startswith(said) and "Error processing" not in done.stderr
        assert "Traceback" not in done.stderr
    assert done.stdout == "9.0\n"  # the program ran, unwatched
    assert done.stderr.splitlines()[-1] == said.replace(
        "jitmagic cannot be", "the watch (and any gate) asked for could not be applied: "
        "jitmagic cannot be")
