"""``python -m jitmagic`` as a terminal runs it, pressing Ctrl-C (a real SIGINT the process
sends itself) at moments found from what the process is doing, never after a sleep: for the
command's Ctrl-C tests in tests/test_stops.py.

    python tests/ctrl_c_child.py ENTRY MOMENTS GAP -- FILE.py [options]

MOMENTS, comma-separated, are pressed in this order, once each:

- ``compile``: inside the XLA compile of a cold run of ENTRY: armed by JAX's event at the
  end of its lowering (``jaxpr_to_mlir_module_duration``: the compile begins next), then
  pressed from a thread once the main thread is inside XLA's compile, there for a
  measurement's stage;
- ``steady``: inside a steady-state timing loop (the main thread in ``timeit``'s loop);
- ``charts``: as the HTML report's charts are drawn (``jitmagic.render.bundle.chart_png``);
- ``save``: as a report is written (``jitmagic.frontends.saving.write_report``);
- ``exit``: as the process ends, in an exit function (run before JAX's own);
- ``teardown``: later still, as the interpreter clears its modules (after every exit
  function, where Python has put SIGINT's handler back to the system's default).

A moment named twice in a row is pressed again GAP seconds after its first press has
reached the process (two presses in one compile, say). Each press is told on stderr
before it is sent, as ``[press] compile inside=True at=812.034``: whether the main thread
was at that moment as it was sent, and when (``time.monotonic()``).

SIGINT starts at Python's own handler, as in a terminal, even where this process was
started with it ignored (``nohup``, ``&``, ``trap "" INT``).
"""

from __future__ import annotations

import atexit
import os
import runpy
import signal
import sys
import threading
import time
import types

import jax

LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
MAIN = threading.main_thread().ident


def main_stack() -> list[tuple[str, str]]:
    """(file, function) of each frame the main thread is in now, innermost first; empty
    where the walk met something other than a frame (a chain read from another thread
    while the main one runs was seen, on a loaded machine, to end in a JAX tracer: the
    watcher then looks again)."""
    frame = sys._current_frames().get(MAIN)
    stack = []
    while frame is not None:
        if not isinstance(frame, types.FrameType):
            return []
        stack.append((frame.f_code.co_filename, frame.f_code.co_name))
        frame = frame.f_back
    return stack


def compiling() -> bool:
    """The main thread is in XLA's compile, for a stage of the measurement."""
    stack = main_stack()
    return (any(file.endswith(os.path.join("jax", "_src", "compiler.py"))
                and name == "backend_compile_and_load" for file, name in stack)
            and any(file.endswith(os.path.join("sampling", "stages.py")) for file, _ in stack))


def timing_steady() -> bool:
    """The main thread is in a steady-state loop (``timeit``'s generated code)."""
    return any(file == "<timeit-src>" for file, _ in main_stack())


#: The moments a thread watches for; the others are pressed by a hook as they happen.
WATCHED = {"compile": compiling, "steady": timing_steady}


def delivered(limit: float = 10.0) -> None:
    """Wait until the last press has reached the process: while it is still pending (no
    thread of it has run since, on a loaded machine), the kernel would merge the next
    SIGINT into it, and two presses would be one, as they would be from a terminal."""
    end = time.monotonic() + limit
    while signal.SIGINT in signal.sigpending() and time.monotonic() < end:
        time.sleep(0.0002)


class Presser:
    """The presses still to make, in order, and the one made last."""

    def __init__(self, entry: str, moments: list[str], gap: float):
        self.entry, self.todo, self.gap = entry, moments, gap
        self.last: str | None = None
        self.lowered = threading.Event()  # ENTRY's lowering has ended: its compile begins
        self.lock = threading.Lock()
        self.moved = threading.Event()  # set by each press

    def due(self, moment: str) -> bool:
        with self.lock:
            return bool(self.todo) and self.todo[0] == moment and self.last != moment

    def press(self, moment: str, inside: bool = True) -> None:
        with self.lock:
            self.todo.pop(0)
            self.last = moment
        print(f"[press] {moment} inside={inside} at={time.monotonic():.3f}", file=sys.stderr,
              flush=True)
        self.moved.set()
        os.kill(os.getpid(), signal.SIGINT)

    def watch(self) -> None:
        """The thread: press each watched moment as it comes, and each repeat; it ends
        once no press left needs it (so that it holds no lock as the process ends)."""
        while True:
            with self.lock:
                again = bool(self.todo) and self.todo[0] == self.last
                if not again and not any(m in WATCHED for m in self.todo):
                    return
                moment = self.todo[0]
            if again:
                delivered()
                time.sleep(self.gap)  # the spacing of two presses, not a moment's finding
                self.press(moment, WATCHED.get(moment, lambda: True)())
            elif moment in WATCHED:
                if moment == "compile":
                    self.lowered.wait()
                while not WATCHED[moment]():
                    time.sleep(0.0005)
                self.press(moment)
            else:  # a hook presses it
                self.moved.wait()
                self.moved.clear()

    def on_event(self, event: str, secs: float, **kw) -> None:
        if event == LOWER_EVENT and kw.get("fun_name") == f"jit({self.entry})":
            self.lowered.set()
        if "exit" in self.todo and not getattr(self, "_exit_hooked", False):
            self._exit_hooked = True  # registered after the command's own: runs before it
            atexit.register(self.at_exit)

    def at_exit(self) -> None:
        if self.due("exit"):
            self.press("exit")


class PressedAtTeardown:
    """Held by a module of its own until the interpreter clears its modules: presses then."""

    def __init__(self, presser: Presser):
        self.presser = presser

    def __del__(self):
        if self.presser.due("teardown"):
            self.presser.press("teardown")


def hooked(presser: Presser, moment: str, real):
    """``real``, pressing ``moment`` as it is called (where that press is due)."""
    def call(*args, **kwargs):
        if presser.due(moment):
            presser.press(moment)
        return real(*args, **kwargs)
    return call


def main() -> None:
    entry, moments, gap, dashes, *argv = sys.argv[1:]
    assert dashes == "--", sys.argv
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    presser = Presser(entry, moments.split(","), float(gap))
    jax.monitoring.register_event_duration_secs_listener(presser.on_event)

    import jitmagic.frontends.saving as saving
    import jitmagic.render.bundle as bundle

    bundle.chart_png = hooked(presser, "charts", bundle.chart_png)
    saving.write_report = hooked(presser, "save", saving.write_report)
    threading.Thread(target=presser.watch, daemon=True).start()
    holder = types.ModuleType("ctrl_c_child_teardown")
    holder.pressed = PressedAtTeardown(presser)
    sys.modules[holder.__name__] = holder
    sys.argv = ["jitmagic", *argv]
    os.environ["JITMAGIC_IN_ONE_PROCESS"] = "1"  # measured here, where the presses are
    runpy.run_module("jitmagic", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
