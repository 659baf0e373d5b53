"""A cell's side effects are undone after it is measured, and the result says what was.

Each cell is tiny and measured with ``-r 1 -n 2``: its helper makes the change once per
trace. The test compares the state after with the state before; the result's warnings
must name what was put back. (``run_magic`` checks the kernel's own state besides.)
"""

from __future__ import annotations

import cProfile
import decimal
import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import threading
import warnings

import jax
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from jax._src import monitoring
from support import FAST

from jitmagic.cell.effects import effects_undone
from jitmagic.cell.effects.settings import take_umask
from jitmagic.render.notes.helpers import said


def cell(effect: str) -> str:
    """A cell whose helper ``layer`` does ``effect`` each time it is traced."""
    return f"""\
import decimal, io, logging, os, random, signal, sys, threading, warnings
import jax, jax.numpy as jnp, numpy as np
import matplotlib.pyplot as plt
def layer(x):
    {effect}
    return jnp.sin(x)
def model(x):
    return layer(x) * 2
model(jnp.ones(3))
"""


def _logger(name: str) -> tuple:
    log = logging.getLogger(name)
    return log.level, list(log.handlers), log.propagate, log.disabled


#: (what the helper does, the state it changes, a phrase the warning says)
EFFECTS = {
    "figure": ("plt.figure()", plt.get_fignums, "matplotlib figure"),
    "rcParams": ("plt.rcParams['lines.linewidth'] = 7.5",
                 lambda: matplotlib.rcParams["lines.linewidth"], "rcParams lines.linewidth"),
    "event listener": ("jax.monitoring.register_event_listener(lambda e, **k: None)",
                       lambda: list(monitoring._event_listeners), "jax.monitoring listener"),
    "duration listener": (
        "jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: None)",
        lambda: list(monitoring._event_duration_secs_listeners), "jax.monitoring listener"),
    "warnings filter": ("warnings.simplefilter('ignore')", lambda: list(warnings.filters),
                        "warnings filters"),
    "showwarning": ("warnings.showwarning = print", lambda: warnings.showwarning,
                    "warnings.showwarning"),
    "root handler": ("logging.getLogger().addHandler(logging.NullHandler())",
                     lambda: _logger(""), "root logger"),
    "jax logger level": ("logging.getLogger('jax').setLevel(logging.CRITICAL)",
                         lambda: _logger("jax"), "'jax' logger"),
    "logging.disable": ("logging.disable(logging.CRITICAL)",
                        lambda: logging.root.manager.disable, "logging.disable"),
    "seterr": ("np.seterr(over='raise')", np.geterr, "np.seterr(over='raise')"),
    "recursion limit": ("sys.setrecursionlimit(4321)", sys.getrecursionlimit,
                        "sys.setrecursionlimit(4321)"),
    "print options": ("np.set_printoptions(precision=3)", np.get_printoptions,
                      "np.set_printoptions(precision=3)"),
    "SIGUSR1": ("signal.signal(signal.SIGUSR1, lambda *a: None)",
                lambda: signal.getsignal(signal.SIGUSR1), "SIGUSR1"),
    "SIGTERM": ("signal.signal(signal.SIGTERM, signal.SIG_IGN)",
                lambda: signal.getsignal(signal.SIGTERM), "SIGTERM"),
    "excepthook": ("sys.excepthook = print", lambda: sys.excepthook, "sys.excepthook"),
    "threading excepthook": ("threading.excepthook = print", lambda: threading.excepthook,
                             "threading.excepthook"),
    "umask": ("os.umask(0o077)", take_umask, "os.umask(0o77) (it was 0o22)"),
    "switch interval": ("sys.setswitchinterval(0.25)", sys.getswitchinterval,
                        "sys.setswitchinterval(0.25)"),
    "int max str digits": ("sys.set_int_max_str_digits(640)", sys.get_int_max_str_digits,
                           "sys.set_int_max_str_digits(640)"),
    "decimal context": ("decimal.getcontext().prec = 5", lambda: decimal.getcontext().prec,
                        "decimal's context (prec=5, it was 28)"),
    "environment": ("os.environ['JITMAGIC_SIDE_EFFECT'] = '1'", lambda: dict(os.environ),
                    "JITMAGIC_SIDE_EFFECT (added)"),
    "working directory": ("os.chdir('/')", os.getcwd, "working directory to '/'"),
    "argv": ("sys.argv.append('--flag')", lambda: list(sys.argv), "sys.argv"),
    "path": ("sys.path.insert(0, '/nonexistent')", lambda: list(sys.path), "sys.path"),
    "settrace": ("sys.settrace(lambda *a: None)", sys.gettrace, "sys.settrace's hook"),
    "setprofile": ("sys.setprofile(None)", sys.getprofile, None),  # off already: no change
    "threading trace": ("threading.settrace(lambda *a: None)", threading.gettrace,
                        "threading.settrace's hook"),
    "threading profile": ("threading.setprofile(lambda *a: None)", threading.getprofile,
                          "threading.setprofile's hook"),
    "stdout": ("sys.stdout = io.StringIO()", lambda: sys.stdout, "sys.stdout"),
    "stderr": ("sys.stderr = io.StringIO()", lambda: sys.stderr, "sys.stderr"),
}


def test_every_side_effect_at_once_is_undone_and_named(run_magic):
    before = {name: state() for name, (_, state, _) in EFFECTS.items()}
    result, _ = run_magic(f"{FAST} -o", cell("; ".join(e for e, _, _ in EFFECTS.values())))
    said = " ".join(result.warnings)
    for name, (_, state, phrase) in EFFECTS.items():
        assert state() == before[name], name
        assert phrase is None or phrase in said, (name, result.warnings)


@pytest.mark.slow
@pytest.mark.parametrize("name", EFFECTS)
def test_a_side_effect_is_undone_and_named(run_magic, name):
    """Each alone: its row, and only its row, puts something back."""
    effect, state, phrase = EFFECTS[name]
    before = state()
    result, _ = run_magic(f"{FAST} -o", cell(effect))
    assert state() == before
    said = [w for w in result.warnings if "put back now" in w or "closed now" in w]
    if phrase is None:
        assert not said
    else:
        assert len(said) == 1 and phrase in said[0], result.warnings


DECIMALS = """\
import decimal
import jax.numpy as jnp
{change}
third = float(decimal.Decimal(1) / 3)
def model(x):
    return jnp.sin(x) * third
model(jnp.ones(3))
"""


@pytest.mark.parametrize(("change", "phrase"), [
    ("decimal.getcontext().prec = 5", "changed decimal's context (prec=5, it was 28)"),
    ("decimal.getcontext().rounding = decimal.ROUND_DOWN",
     "changed decimal's context (rounding='ROUND_DOWN', it was 'ROUND_HALF_EVEN')"),
    ("decimal.setcontext(decimal.Context(prec=6))",
     "replaced decimal's context (decimal.setcontext; prec=6, it was 28)"),
])
def test_decimals_context_set_by_the_cell_is_put_back_and_named(run_magic, ip, change, phrase):
    """A cell's `decimal.getcontext().prec = 5` stayed after the comparison, named
    nowhere: the kernel's Decimal arithmetic then rounded to 5 digits."""
    context = decimal.getcontext()
    try:
        result, _ = run_magic(f"{FAST} -o", DECIMALS.format(change=change))
    finally:
        ip.user_ns.pop("third", None)
    assert decimal.getcontext() is context and context.prec == 28
    assert context.rounding == decimal.ROUND_HALF_EVEN
    assert str(decimal.Decimal(1) / 3) == "0." + "3" * 28
    said = [w for w in result.warnings if "decimal" in w]
    assert len(said) == 1 and phrase in said[0], result.warnings
    assert said[0].endswith("put back now")


STREAMS = """\
import random
import jax.numpy as jnp, numpy as np
noise = np.random.rand(3)  # the setup draws once, as the user expects
def jitter(x):
    return x + np.random.normal() * 1e-3 + random.random() * 1e-3  # once per trace
def model(x):
    return jnp.sin(jitter(x)) * 2
model(jnp.ones(3))
"""


def _next_draws() -> tuple[list[float], float]:
    return np.random.rand(3).tolist(), random.random()


def test_the_global_generators_continue_as_after_one_run_of_the_cell(ip, run_magic):
    """A helper that draws while traced draws once per trace: after the comparison, the
    user's stream is where one plain run of the cell leaves it."""
    np.random.seed(1)
    random.seed(1)
    with capture_output():
        ip.run_cell(STREAMS)  # plainly, once
    once = _next_draws()
    np.random.seed(1)
    random.seed(1)
    try:
        result, _ = run_magic(f"{FAST} -o", STREAMS)
        assert _next_draws() == once
    finally:
        for name in ("noise", "jitter", "model", "random"):
            ip.user_ns.pop(name, None)
    said = [w for w in result.warnings if "global random generators" in w]
    assert len(said) == 1, result.warnings
    assert "np.random and random" in said[0] and "as after one run of the cell" in said[0]


def test_the_generators_are_put_back_as_before_where_nothing_was_traced():
    np.random.seed(2)
    random.seed(2)
    before = _next_draws()
    np.random.seed(2)
    random.seed(2)
    with effects_undone() as undone:
        np.random.rand(5)
    assert _next_draws() == before
    assert len(undone) == 1 and "generator np.random while" in str(undone[0])
    assert "as before the cell" in str(undone[0])


def test_figures_open_before_stay_open(run_magic):
    kept = plt.figure()
    try:
        result, _ = run_magic(f"{FAST} -o", cell("plt.figure(); plt.figure()"))
        assert plt.get_fignums() == [kept.number]
        said = [w for w in result.warnings if "matplotlib figures" in w]
        assert len(said) == 1 and re.search(r"opened (\d+) matplotlib", said[0])
        assert int(re.search(r"opened (\d+)", said[0])[1]) % 2 == 0  # two per trace
    finally:
        plt.close(kept)


PLAIN = """\
import jax, jax.numpy as jnp
def step(c, x):
    return c + jnp.tanh(x), None
def model(x):
    return jax.lax.scan(step, 0.0, x)[0] + jax.nn.relu(x).sum()
model(jnp.ones(4))
"""


def test_a_cell_without_side_effects_reports_none(run_magic):
    """JAX's own doings while measuring (its first use of scan, relu, the compilation
    events jitmagic listens to) are not reported as the cell's."""
    result, _ = run_magic(f"{FAST} -o", PLAIN)
    assert not [w for w in result.warnings if "put back" in w or "printed" in w]


def test_jax_logging_set_through_its_config_is_put_back(run_magic):
    """JAX adds its log handler for ``jax_logging_level`` and keeps the level it set
    when the config is put back: the loggers are put back as they were."""
    before = _logger("jax"), _logger("jaxlib")
    result, _ = run_magic(f"{FAST} -o", PLAIN.replace(
        "\n", "\njax.config.update('jax_logging_level', 'ERROR')\n", 1))
    assert (_logger("jax"), _logger("jaxlib")) == before
    assert any("JAX's config jax_logging_level" in w for w in result.warnings)


def _jax_made(source: str) -> dict:
    """What ``source`` defines, as if written in JAX's own files."""
    made: dict = {}
    exec(compile(source, jax.__file__, "exec"), made)
    return made


def test_jax_own_listener_is_left_to_jax():
    """A listener JAX registers while measuring (its own function) stays, unreported;
    the cell's goes."""
    jax_listener = _jax_made("def listener(event, **kwargs):\n    pass\n")["listener"]

    def users(event, **kwargs):
        pass

    try:
        with effects_undone() as undone:
            jax.monitoring.register_event_listener(jax_listener)
            jax.monitoring.register_event_listener(users)
        assert jax_listener in monitoring._event_listeners
        assert users not in monitoring._event_listeners
        assert len(undone) == 1 and "registered 1 jax.monitoring listener" in str(undone[0])
    finally:
        monitoring._event_listeners[:] = [f for f in monitoring._event_listeners
                                          if f is not jax_listener]


def test_a_filter_a_library_adds_stays_and_the_cells_goes():
    """``import numpyro`` adds warnings filters of its own while the cell runs: they
    stay (the library stays imported), unreported; the cell's own filter goes."""
    before = list(warnings.filters)
    library = _jax_made("import warnings\n"
                        "def on_import():\n"
                        "    warnings.filterwarnings('ignore', message='library noise')\n")
    try:
        with effects_undone() as undone:
            library["on_import"]()
        assert warnings.filters[0][1].pattern == "library noise"
        assert warnings.filters[1:] == before and not undone
        with effects_undone() as undone:
            library["on_import"]()  # again: already there
            warnings.filterwarnings("ignore", message="the cell's")
        assert warnings.filters[1:] == before
        assert list(map(str, undone)) == [said("changed the warnings filters")]
    finally:
        warnings.filters[:] = before
        warnings._filters_mutated()


def test_a_variable_a_library_sets_on_import_stays_and_the_cells_goes(ip, run_magic):
    """A library's import sets its own environment variables (JAX's
    ``MOSAIC_GPU_CUDA_ROOT``, TensorFlow's ``TF_FORCE_GPU_ALLOW_GROWTH``); the module
    stays imported, so they stay, unreported. The cell's own variable is put back."""
    ip.user_ns["import_library"] = _jax_made(
        "import os\n"
        "def on_import():\n"
        "    os.environ['JITMAGIC_LIBRARY_VAR'] = '/opt/cuda'\n"
        "    os.environ.setdefault('JITMAGIC_LIBRARY_DEFAULT', 'true')\n")["on_import"]
    plain = type(os.environ).__setitem__
    try:
        result, _ = run_magic(f"{FAST} -o", cell(
            "import_library(); os.environ['JITMAGIC_CELL_VAR'] = '1'; "
            "os.environ.setdefault('JITMAGIC_CELL_DEFAULT', '1')"))
        assert os.environ["JITMAGIC_LIBRARY_VAR"] == "/opt/cuda"
        assert os.environ["JITMAGIC_LIBRARY_DEFAULT"] == "true"
        assert "JITMAGIC_CELL_VAR" not in os.environ
        assert "JITMAGIC_CELL_DEFAULT" not in os.environ
    finally:
        ip.user_ns.pop("import_library", None)
        os.environ.pop("JITMAGIC_LIBRARY_VAR", None)
        os.environ.pop("JITMAGIC_LIBRARY_DEFAULT", None)
    said = [w for w in result.warnings if "environment variables" in w]
    assert said == [globals()["said"]("changed environment variables JITMAGIC_CELL_VAR "
                                      "(added), JITMAGIC_CELL_DEFAULT (added)")], result.warnings
    assert type(os.environ).__setitem__ is plain  # jitmagic's wrapper is gone


def test_xla_flags_set_by_a_cell_after_the_backend_started_is_said_to_have_had_no_effect(
        ip, run_magic):
    """XLA reads XLA_FLAGS once, as JAX's backend starts: a cell that sets it in a kernel
    whose backend runs already changed nothing, and must not be told it "applied"."""
    import jax.numpy as jnp

    jnp.ones(1).block_until_ready()  # the kernel's backend has started
    was = os.environ.get("XLA_FLAGS")
    result, _ = run_magic(f"{FAST} -o", cell(
        "os.environ['XLA_FLAGS'] = '--xla_backend_optimization_level=0'; "
        "os.environ['JITMAGIC_PLAIN_VAR'] = '1'"))
    assert os.environ.get("XLA_FLAGS") == was and "JITMAGIC_PLAIN_VAR" not in os.environ
    (flags,) = [w for w in result.warnings if "XLA_FLAGS" in w]
    assert "had no effect" in flags and "applied" not in flags, flags
    assert "compiler_options" in flags
    (plain,) = [w for w in result.warnings if "JITMAGIC_PLAIN_VAR" in w]
    assert plain == globals()["said"]("changed environment variables JITMAGIC_PLAIN_VAR "
                                      "(added)") and "XLA_FLAGS" not in plain


def test_listeners_the_cell_cleared_are_registered_again():
    def mine(event, **kwargs):
        pass

    jax.monitoring.register_event_listener(mine)
    lists = monitoring._event_listeners
    try:
        with effects_undone() as undone:
            monitoring.clear_event_listeners()  # rebinds the module's lists
        assert monitoring._event_listeners is lists and mine in lists
        assert "unregistered" in str(undone[0])
    finally:
        jax.monitoring.unregister_event_listener(mine)


def test_a_helper_counting_its_calls_in_a_global_leaves_it_as_it_was(ip, run_magic):
    ip.run_cell("""\
import jax.numpy as jnp
CALLS = 0
def counted(x):
    global CALLS, SEEN
    CALLS += 1
    SEEN = True
    return jnp.cos(x)
def counting_model(x):
    return counted(x) + 1
xs = jnp.ones(3)
""")
    try:
        result, _ = run_magic(f"{FAST} -o counting_model(xs)")
        assert ip.user_ns["CALLS"] == 0 and "SEEN" not in ip.user_ns
        said = [w for w in result.warnings if "your globals" in w]
        assert len(said) == 1 and "CALLS, SEEN (added)" in said[0]
        assert "counted traces, not your calls" in said[0]
    finally:
        for name in ("CALLS", "counted", "counting_model", "xs"):
            ip.user_ns.pop(name, None)


@pytest.mark.parametrize("trace", [1, 3])  # in discovery; in a cold run, while timed
def test_sys_exit_in_a_traced_helper_is_a_usage_error(run_magic, trace):
    with pytest.raises(UsageError, match=r"your function `quits` called sys.exit\(3\) while "
                                         r"it was measured: nothing was measured"):
        run_magic(FAST, f"""\
import sys, jax.numpy as jnp
traces = []
def quits(x):
    traces.append(1)
    if len(traces) == {trace}:
        sys.exit(3)
    return x * 2
def model(x):
    return quits(x) + 1
model(jnp.ones(3))
""")


PRINTS = """\
import jax.numpy as jnp
print("setup, once")
def layer(x):
    print("tracing layer")
    return jnp.sin(x)
def model(x):
    return layer(x) * 2
model(jnp.ones(3))
"""


def test_prints_while_tracing_are_counted_and_explained(run_magic):
    result, cap = run_magic(f"{FAST} -o", PRINTS)
    assert cap.stdout.count("setup, once") == 1
    times = cap.stdout.count("tracing layer")
    assert times >= 3  # discovery, then one cold run of each variant
    said = [w for w in result.warnings if w.startswith("your code printed")]
    assert len(said) == 1, result.warnings
    assert said[0].startswith(f"your code printed {times} lines while it was measured")
    assert "at least 3 times here" in said[0]


def test_a_setup_that_prints_is_not_a_repeat(run_magic):
    result, cap = run_magic(f"{FAST} -o", 'print("once")\n' + PLAIN)
    assert cap.stdout.count("once") == 1
    assert not [w for w in result.warnings if "printed" in w]


NONFINITE = """\
import jax.numpy as jnp
def odd(x):
    return jnp.stack([jnp.log(x - 1.0), jnp.sqrt(-x), x * 3e38, jnp.exp(x * 100)])
def model(x):
    return odd(x) * 2
model(jnp.ones(3))
"""

#: float64 outputs at the top of the range whose sign flips with each trace: flat and
#: nested differ by more than float64 holds (the difference overflows).
OVERFLOWS = """\
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
sign = [1.0]
def flips(x):
    sign[0] = -sign[0]
    return x * sign[0] * 1.7e308
def model(x):
    return flips(x) + 0.0
model(jnp.ones(3))
"""


@pytest.mark.parametrize(("source", "match"), [
    (NONFINITE, True), (OVERFLOWS, False),
    ("import numpy as np\nnp.seterr(all='raise')\n" + OVERFLOWS, False),  # nor an error
])
def test_outputs_with_inf_nan_or_overflow_raise_no_numpy_warning(run_magic, source, match):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result, _ = run_magic(f"{FAST} -o", source)
    assert result.outputs_match is match
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], \
        [str(w.message) for w in caught]


X64_AFTER = """\
import jax, jax.numpy as jnp
x = jnp.ones(3)
jax.config.update("jax_enable_x64", True)
def model(x):
    return jnp.sin(x) * 2
model({arg})
"""


@pytest.mark.parametrize(("arg", "noted"), [("x", True), ("jnp.ones(3)", False)])
def test_x64_on_with_32_bit_arguments_is_noted(run_magic, arg, noted):
    result, _ = run_magic(f"{FAST} -o", X64_AFTER.format(arg=arg))
    said = [w for w in result.warnings if w.startswith("jax_enable_x64 is on")]
    assert bool(said) == noted, result.warnings
    assert not jax.config.values["jax_enable_x64"]  # put back, and said so


def test_a_cprofile_the_cell_turned_off_collects_again(run_magic):
    """``%prun``'s profiler is not callable: its ``enable()`` puts it back."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        result, _ = run_magic(f"{FAST} -o", cell("sys.setprofile(None)"))
        assert sys.getprofile() is profile
    finally:
        profile.disable()
    assert any("sys.setprofile's hook" in w for w in result.warnings)


def test_what_cannot_be_put_back_is_said_and_the_rest_is_put_back(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    here = os.getcwd()
    os.chdir(gone)
    try:
        with effects_undone() as undone:
            os.chdir(here)
            gone.rmdir()  # the working directory before is no more
            os.environ["JITMAGIC_SIDE_EFFECT"] = "1"
        assert "JITMAGIC_SIDE_EFFECT" not in os.environ
        assert any("could not put back (FileNotFoundError" in str(s) for s in undone), undone
    finally:
        os.chdir(here)


class StandInCoverage:
    """What ``coverage run`` installs, in Python (coverage itself is not installed in
    this venv): a ``sys.settrace`` tracer that records the lines run in this file, set
    on each new frame; the frames it was tracing keep their local tracer."""

    def __init__(self):
        self.lines: set[int] = set()

    def __call__(self, frame, event, arg):
        if frame.f_code.co_filename != __file__:
            return None  # other files are not measured (coverage's source filter)
        return self.local

    def local(self, frame, event, arg):
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self.local


def _measured_under(tracer: StandInCoverage, run_magic, line: str) -> tuple[object, int]:
    """Run the magic from a frame the tracer traces; (what sys.gettrace() was after,
    the line after the magic), that line's number."""
    run_magic(line, FAST_CELL)
    after = sys.gettrace()  # this line, and the next, must still be traced
    return after, sys._getframe().f_lineno


FAST_CELL = """\
import jax.numpy as jnp
def layer(x):
    return jnp.sin(x) * 2
def model(x):
    return layer(x) + layer(x)
model(jnp.ones(4))
"""


@pytest.mark.parametrize("line", [f"{FAST} --no-plot", f"{FAST} --no-plot --lines"])
def test_a_coverage_tracer_is_left_running_and_still_traces_after_the_magic(run_magic,
                                                                             line):
    tracer = StandInCoverage()
    sys.settrace(tracer)
    try:
        after, next_line = _measured_under(tracer, run_magic, line)
        now = sys.gettrace()
    finally:
        sys.settrace(None)
    assert after is tracer and now is tracer
    assert next_line in tracer.lines  # the calling frame's lines after the magic ran
    assert next_line - 1 in tracer.lines


def test_the_settrace_line_hook_hands_lines_on_to_a_coverage_tracer():
    from jitmagic.measure.lines.tables import lines_of

    def layer(x):
        return jax.numpy.sin(x) * 2

    def entry(x):
        return layer(x) + layer(x)

    tracer = StandInCoverage()
    sys.settrace(tracer)
    try:
        table = lines_of(entry, (jax.numpy.ones(4),), {}, hook="settrace")
        now = sys.gettrace()
    finally:
        sys.settrace(None)
    assert now is tracer and table.flat.has_hits  # the hook ran, then put coverage back
    body = layer.__code__.co_firstlineno + 1
    assert body in tracer.lines  # coverage saw the helper's line while it was traced


COVERED = """\
import jax.numpy as jnp
import jitmagic

def helper(x):
    return jnp.sin(x) * 2

def entry(x):
    return helper(x) + helper(x)

def after():
    return 41 + 1

jitmagic.compare(entry, jnp.ones(3), repeat=1, number=1, lines=True, quiet=True)
after()
"""


@pytest.mark.slow
def test_coverage_run_keeps_measuring_the_script_after_a_measurement(tmp_path):
    # the real `coverage run` (its C tracer), not a stand-in: the lines after the
    # measurement, and the helper's, are covered
    script = tmp_path / "covered.py"
    script.write_text(COVERED)
    data = tmp_path / ".coverage"
    run = subprocess.run([sys.executable, "-m", "coverage", "run", f"--data-file={data}",
                          str(script)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    report = tmp_path / "coverage.json"
    subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o",
                    str(report)], cwd=tmp_path, check=True, capture_output=True, timeout=60)
    files = json.loads(report.read_text())["files"]  # keyed relative to the folder it ran in
    executed = set(files[script.name]["executed_lines"])
    lines = COVERED.splitlines()
    assert {lines.index("    return 41 + 1") + 1, len(lines)} <= executed  # after() ran
    assert lines.index("    return jnp.sin(x) * 2") + 1 in executed


def test_a_jax_variable_set_before_the_backend_started_is_said_to_stay_in_effect(monkeypatch):
    from jitmagic.cell.effects.settings import undo_environ

    before = dict(os.environ)
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
    monkeypatch.setenv("JAX_JITMAGIC_TEST", "1")
    (once,) = map(str, undo_environ(before, read=(True, False)))
    assert "JAX_JITMAGIC_TEST (added), which had no effect" in once
    assert "XLA_FLAGS" in once.split("; it changed ")[1]
    assert "stays in effect for the rest of this kernel" in once
    assert "XLA_FLAGS" not in os.environ or os.environ["XLA_FLAGS"] == before.get("XLA_FLAGS")


def test_what_was_put_back_is_saved_as_facts_and_each_row_is_named():
    """The notes of what was put back save and read back as facts, and each row's label
    is a row that render/notes names (what another thread changed is said with it)."""
    from jitmagic.cell.effects import effects
    from jitmagic.model.notes import KEYS, PutBack, read_noted, saved_note
    from jitmagic.render.notes.helpers import THINGS

    notes = [PutBack("setting_put_back", "os.umask", "63", "18"),
             PutBack("cwd_put_back", None, "/tmp"),
             PutBack("own_names_put_back", ("L.SCALE", "L.EXTRA"), ("L.EXTRA",)),
             PutBack("config_put_back", "jax_enable_x64", "True", "False", False),
             PutBack("left_as_is", ("environ", "hooks"), ("JITMAGIC_X", "sys.settrace"))]
    assert [read_noted(saved_note(n), "note") for n in notes] == notes
    assert str(notes[0]).endswith("set os.umask(0o77) (it was 0o22): it applied while "
                                  "measuring and is put back now")
    assert "changed the working directory to None (it was '/tmp')" in str(notes[1])
    assert "classes: L.SCALE, L.EXTRA (added). They applied" in str(notes[2])
    assert str(notes[3]).startswith("the cell, or another thread while it ran, changed JAX's "
                                    "config jax_enable_x64 to True: it applied")
    assert str(notes[4]).startswith("the environment variable JITMAGIC_X and sys.settrace's "
                                    "hook (a debugger's or coverage's) changed while")
    assert set(THINGS) == set(KEYS["row"])  # each row a loaded note may name is said
    for row in effects({"x": 1}):
        for key in row.view():
            name, key_name = row.label(key)
            assert isinstance(THINGS[name](key_name), str), (name, key)
