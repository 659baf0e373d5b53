"""``--target TOPOLOGY``: what jitmagic knows of the TPUs it compiles for without one.

With libtpu installed, JAX gives a compile-only description of a TPU slice
(``jax.experimental.topologies.get_topology_desc``): its devices take shardings, and
``jax.jit(f).lower(spec).compile()`` compiles for them on this machine's CPU. This
module holds the facts around that, without importing JAX.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

#: What to install for ``--target``: libtpu, paired with the JAX it was built for.
INSTALL = 'pip install "jitmagic[tpu]"  (or pip install "jax[tpu]==<your jax version>")'
#: A topology's name as libtpu reads it: a TPU kind, then the chips along each axis.
FORM = "KIND:AxB or KIND:AxBxC, e.g. v5e:1x1, v5e:2x2, v5p:2x2x1"
_NAME = re.compile(r"^([a-zA-Z0-9_]+):([0-9]+(?:x[0-9]+){1,2})$")
#: The chips one host holds at most along each axis (libtpu's default host bounds);
#: a smaller slice is one host of its own size.
HOST_BOUNDS = (2, 2, 1)


@dataclass(frozen=True, slots=True)
class Chip:
    """One TPU kind: how libtpu names it, how its devices call themselves, the
    high-bandwidth memory one device of it holds (None: not known here), and the slices
    it compiles for (see :data:`CHIPS`)."""

    kind: str  # as a topology name writes it: "v5e"
    device_kind: str  # as JAX's device says it: "TPU v5 lite"
    hbm_bytes: int | None
    most_chips: int  # the largest slice of this kind
    #: The most chips along each axis (x, y, z) of a 2-D kind (z 1); None: a 3-D kind,
    #: bounded by ``most_chips`` alone.
    axes: tuple[int, int, int] | None = None


_GIB = 1024 ** 3
#: The TPU kinds libtpu 0.0.42 compiles for, with each device's HBM and their largest
#: slices (Google Cloud's figures), each compiled for here. Past them libtpu aborts the
#: whole process for v5e ("Check failed: Topology()->chip_bounds().z == 1") and fails for
#: v4 ("more parameters (1) than supported (limit -674)").
CHIPS: dict[str, Chip] = {c.kind: c for c in (
    Chip("v4", "TPU v4", 32 * _GIB, 4096),
    Chip("v5e", "TPU v5 lite", 16 * _GIB, 256, (16, 16, 1)),
    Chip("v5p", "TPU v5", 95 * _GIB, 8960),
    Chip("v6e", "TPU v6 lite", 32 * _GIB, 256, (16, 16, 1)),
    Chip("tpu7x", "TPU7x", 192 * _GIB, 9216),
)}


@dataclass(frozen=True, slots=True)
class Topology:
    """A topology name, checked: its kind, chips per axis, and one host's bounds."""

    name: str
    kind: str
    chips: tuple[int, ...]

    @property
    def host_bounds(self) -> tuple[int, int, int]:
        """``chips_per_host_bounds`` for libtpu: the default host, or the slice where it
        is smaller (``v5e:1x1`` is one chip on one host)."""
        dims = (*self.chips, 1, 1)[:3]
        return (min(dims[0], HOST_BOUNDS[0]), min(dims[1], HOST_BOUNDS[1]),
                min(dims[2], HOST_BOUNDS[2]))

    @property
    def chip(self) -> Chip | None:
        return CHIPS.get(self.kind)


class TopologyError(ValueError):
    """A topology name libtpu will not take: the message says what would be."""


def parse(name: str) -> Topology:
    """``"v5e:2x2"`` → its :class:`Topology`; :class:`TopologyError` with a did-you-mean
    for a name of another form or an unknown kind."""
    text = name.strip() if isinstance(name, str) else ""
    found = _NAME.match(text)
    if found is None:
        raise TopologyError(f"--target {name!r} is not a TPU topology: write {FORM}"
                            f"{_close(text.partition(':')[0], text)}")
    kind = found[1].lower()
    if kind not in CHIPS:
        raise TopologyError(f"--target {name!r}: no TPU kind {found[1]!r}"
                            f"{_close(kind, text)}; the kinds are {', '.join(CHIPS)}")
    chips = tuple(int(n) for n in found[2].split("x"))
    if min(chips) < 1:
        raise TopologyError(f"--target {name!r}: every axis needs at least 1 chip ({FORM})")
    _check_size(name, CHIPS[kind], chips)
    dims = (*chips, 1, 1)[:3]
    if any(d > b and d % b for d, b in zip(dims, HOST_BOUNDS, strict=True)):
        raise TopologyError(f"--target {name!r}: a slice larger than one host is whole hosts "
                            f"of {'x'.join(map(str, HOST_BOUNDS))} chips, so each axis is at "
                            f"most {HOST_BOUNDS[0]} or a multiple of it (e.g. {kind}:2x4, "
                            f"{kind}:4x4)")
    return Topology(f"{kind}:{found[2]}", kind, chips)


def _check_size(name: str, chip: Chip, chips: tuple[int, ...]) -> None:
    """:class:`TopologyError` for a slice larger than ``chip``'s largest, naming the
    largest: a longer axis, a third axis on a 2-D kind, more chips in all."""
    dims, kind = (*chips, 1, 1)[:3], chip.kind
    if chip.axes is not None and any(d > m for d, m in zip(dims, chip.axes, strict=True)):
        most = max(chip.axes[:2])
        fitting = f"{kind}:{min(dims[0], most)}x{min(dims[1], most)}"
        raise TopologyError(f"--target {name!r}: a {kind} slice is 2-D, at most {most} chips "
                            f"along an axis (the largest is {kind}:{most}x{most}); write "
                            f"e.g. {fitting}")
    if math.prod(dims) > chip.most_chips:
        raise TopologyError(f"--target {name!r} is {math.prod(dims)} chips: a {kind} slice "
                            f"has at most {chip.most_chips}; write a smaller one, e.g. "
                            f"{kind}:16x16x16")  # a 2-D kind's largest is said above


#: Other names for a kind that users write (Cloud's accelerator types).
ALIASES = {"v5litepod": "v5e", "v5lite": "v5e", "v6lite": "v6e", "v7x": "tpu7x"}


def _close(kind: str, text: str) -> str:
    """``: did you mean v5e:2x2?`` for a kind close to a known one (empty: none)."""
    key = kind.lower().split("-")[0]
    near = ALIASES.get(key) or next(iter(difflib.get_close_matches(key, list(CHIPS), 1)), None)
    if near is None:
        return ""
    chips = text.partition(":")[2] if ":" in text else ""
    counted = re.fullmatch(r"[^-]+-([0-9]+)", text)  # Cloud's accelerator type: v5litepod-4
    shape = chips if re.fullmatch(r"[0-9]+(x[0-9]+){1,2}", chips) else \
        _BY_COUNT.get(int(counted[1]), "2x2") if counted and near in ("v5e", "v6e") else "2x2"
    return f" (did you mean {near}:{shape}?)"


#: A v5e or v6e slice of N chips (Cloud's ``v5litepod-N``) as a topology's chips per axis.
_BY_COUNT = {1: "1x1", 4: "2x2", 8: "2x4", 16: "4x4", 32: "4x8", 64: "8x8", 128: "8x16",
             256: "16x16"}


def libtpu_installed() -> bool:
    """Whether libtpu is importable here (what compiles for a TPU without one)."""
    try:
        return importlib.util.find_spec("libtpu") is not None
    except (ImportError, ValueError):  # hidden (sys.modules["libtpu"] = None), or broken
        return False


def no_libtpu(name: str) -> str:
    """What ``--target`` says where libtpu is not installed."""
    return (f"--target {name} compiles for a TPU with libtpu, which is not installed in "
            f"this Python ({sys.executable}): {INSTALL}")


#: The environment libtpu needs to start on a machine without a TPU: no query of a
#: cloud metadata server (there is none: it would wait for it), and a second libtpu in
#: the machine (another process holding libtpu's lock file) allowed.
START_ENV = {"TPU_SKIP_MDS_QUERY": "1", "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}


@contextlib.contextmanager
def libtpu_environment() -> Iterator[None]:
    """Within, :data:`START_ENV` set where the user had not set it; after, every variable
    as it was (unset again where it was unset)."""
    before = {k: os.environ.get(k) for k in START_ENV}
    os.environ.update({k: v for k, v in START_ENV.items() if before[k] is None})
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def native_stderr_kept(kept: list[str]) -> Iterator[None]:
    """Within, what native code writes on stderr (libtpu's warnings, which do not apply
    to a compile-only client) goes to a file whose text is appended to ``kept`` after."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to move
        yield
        return
    with tempfile.TemporaryFile(mode="w+b") as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            kept.append(caught.read().decode(errors="replace"))


#: What ``--target`` cannot measure: it compiles, it never runs.
NOT_MEASURABLE = ("first_call_s", "execute_s")

#: The options ``--target`` refuses, with why: each needs the program to run.
REFUSED = {
    "why": "--why includes --cache and --lines, which need the device or this machine's "
           "backend; write --xla --effort for what --target measures of a compile",
    "vmap": "--vmap times calls of jit(vmap(f)) and vmap(jit(f)), which need the device",
    "cache": "--cache times first calls from JAX's persistent cache, which need the device",
    "attribute": "--attribute times the flat variant's trace on this machine's backend; "
                 "run it without --target (tracing is the same for any target)",
    "advise": "--advise times each helper's cold first call, which needs the device",
    "sweep": "--sweep measures one comparison per value; run --target once per value",
    "number": "-n sets the calls of a steady-state timing, and nothing is called",
    "lines": "--lines counts the program per line on this machine's backend; run it "
             "without --target (the jaxpr and StableHLO are the same for any target)",
}


@dataclass(frozen=True, slots=True)
class Calibration:
    """How this kind of host's compile seconds for a target compare with the TPU host's,
    measured on both (docs/benchmarks.md): the TPU host's seconds over this host's, for
    the same cells compiled for the same topology."""

    host: str  # the host kind it was measured on: "2-core x86_64 CPU"
    topology: str  # "v5e:1x1"
    tpu_over_here: float  # the TPU host's compile seconds / this host's (median)
    low: float  # the least and the most of that ratio over the cells measured
    high: float
    measured: str  # when and on what: "2026-12-06, 3 cells, JAX 0.10.2, libtpu 0.0.42"
    #: The discussion's example's flat/nested compile ratio here and on the TPU's chip:
    #: how far a verdict made here carries there.
    nesting_here: float
    nesting_tpu: float


#: The calibration of each host kind (:func:`host_kind`'s words), measured on both
#: (docs/benchmarks.md, "Compiling for a TPU without one"): each program compiled in
#: fresh processes, here after the client's set-up as ``--target`` does, on the TPU v5e
#: host through its chip. A host with none: a report with ``--target`` says so.
CALIBRATION: dict[str, Calibration] = {
    # seed flat 0.82 s here, 6.05 s there (7.4x); nested 0.35 s, 5.41 s (15.5x);
    # a 24-block bf16 MLP 1.29 s, 3.33 s (2.6x)
    "2-core x86_64 CPU": Calibration(
        "2-core x86_64 CPU", "v5e:1x1", 7.4, 2.6, 15.5,
        "2026-12-06, 3 programs, JAX 0.10.2, libtpu 0.0.42", 2.34, 1.12),
}


def host_kind() -> str:
    """This host as a calibration is keyed: its core count and machine type ("2-core
    x86_64 CPU")."""
    import platform

    return f"{os.cpu_count() or 1}-core {platform.machine() or 'unknown'} CPU"


def calibration(topology: str, host: str | None = None) -> Calibration | None:
    """The calibration for ``host`` (this one by default) and ``topology``'s kind, if measured."""
    found = CALIBRATION.get(host or host_kind())
    kind = topology.partition(":")[0]
    return found if found is not None and found.topology.partition(":")[0] == kind else None
