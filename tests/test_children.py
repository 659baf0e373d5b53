"""The runner of fresh child processes (jitmagic.measure.children): each way a child ends
is told apart, said, and leaves nothing behind (no process, no file, no setting)."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest

from jitmagic.measure.children import Entry, Script, run_child
from jitmagic.model.progress import CouldNotStart, Crashed, EndedEarly, Failed, Finished, TimedOut

TESTS = str(Path(__file__).parent)


def _run(function, inputs, **given):
    return run_child(Entry("child_standins", function), inputs, cwd=TESTS, **given)


def _leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("jitmagic-child-*")}


def test_a_child_that_finishes_gives_its_result_from_another_process():
    before, env = _leftovers(), dict(os.environ)
    end = _run("succeeds", {"numbers": [1, 2, 3]}, timeout_s=60)
    assert isinstance(end, Finished) and end.result["sum"] == 6 and end.stage == "adding"
    assert end.result["pid"] != os.getpid()
    assert _leftovers() == before and dict(os.environ) == env
    assert psutil.Process().children() == []


def test_a_child_that_raises_gives_the_error_type_message_and_stage():
    end = _run("raises", [1], timeout_s=60)
    assert end == Failed("ValueError", "bad input [1]", "checking")
    assert str(end) == "the child process raised ValueError: bad input [1] (while checking)"


def test_a_child_killed_by_a_signal_says_which_where_and_natives_last_words():
    end = _run("segfaults", {"stage": "XLA compile of flat"}, timeout_s=60)
    assert isinstance(end, Crashed) and end.signal == signal.SIGSEGV
    assert end.signal_name == "SIGSEGV" and end.stage == "XLA compile of flat"
    assert end.fatal == "Check failed: chip_bounds().z == 1 (2 vs. 1)"
    assert str(end) == ("the child process was killed by SIGSEGV during XLA compile of "
                        "flat: Check failed: chip_bounds().z == 1 (2 vs. 1)")
    assert psutil.Process().children() == []


def test_a_child_that_hangs_is_killed_with_its_group_within_the_timeout(tmp_path):
    pids = tmp_path / "pids"
    began = time.monotonic()
    end = _run("hangs", {"pids": str(pids)}, timeout_s=3)
    took = time.monotonic() - began
    assert end == TimedOut(3, "hanging") and took < 3 + 5
    child, grandchild = (int(p) for p in pids.read_text().split())
    assert not psutil.pid_exists(child) and not _alive(grandchild)
    assert psutil.Process().children(recursive=True) == []
    assert str(end) == "the child process ran past its 3 s and was killed (while hanging)"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_python_that_is_not_there_could_not_start():
    end = run_child(Entry("json", "dumps"), 1, python="/no/such/python", timeout_s=10)
    assert end == CouldNotStart("/no/such/python", "No such file or directory")
    assert "could not start /no/such/python: No such file or directory" in str(end)


def test_ctrl_c_in_the_parent_ends_the_child_with_it(tmp_path):
    pids = tmp_path / "pids"

    def press(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGALRM, press)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            _run("hangs", {"pids": str(pids)}, timeout_s=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    child, grandchild = (int(p) for p in pids.read_text().split())
    assert not psutil.pid_exists(child) and not _alive(grandchild)


def test_a_script_gives_its_exit_status_and_shares_the_output(capfd):
    end = run_child(Script(("-c", "import sys; print('hello'); sys.exit(3)")), timeout_s=60)
    assert end == Finished(3, None)
    assert "hello" in capfd.readouterr().out
    killed = run_child(Script(("-c", "import os, signal; os.kill(os.getpid(), signal.SIGABRT)")))
    assert isinstance(killed, Crashed) and killed.signal_name == "SIGABRT"


@pytest.mark.parametrize("status", [0, 3])
def test_a_script_that_ends_the_process_before_its_end_is_told_from_one_that_finished(status):
    """``os._exit(0)`` skips Python's end: its 0 is no finish, nor is its 3 a status of
    the script's own choosing."""
    end = run_child(Script(("-c", f"import os; os._exit({status})")))
    assert end == EndedEarly(status, None)
    assert str(end) == f"the child process ended with status {status} before its end"
    assert run_child(Script(("-c", f"import sys; sys.exit({status})"))) == Finished(status, None)
    assert psutil.Process().children() == []


def test_a_signal_to_the_parent_alone_goes_on_to_the_script_it_waits_for():
    """``kill -TERM PARENT`` (a CI job's timeout, a ``kill`` of the command's pid): the
    script, in a process group of its own, gets it and ends by it; the parent's own
    handler is as it was after."""
    before = signal.getsignal(signal.SIGTERM)
    sender = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    sender.start()
    try:
        end = run_child(Script(("-c", "import time; time.sleep(60)")))
    finally:
        sender.cancel()
    assert isinstance(end, Crashed) and end.signal == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before
    assert psutil.Process().children() == []


def test_a_crash_outside_any_variant_is_reproduced_with_the_file_alone():
    """A crash where no variant was being measured (the watch's program, finding the
    helpers) is reproduced by running the file alone, not "that step of that variant"."""
    from jitmagic.model.progress import Crashed
    from jitmagic.render.progress import crash_report

    for stage in (None, "jitcompare: finding helpers"):
        said = crash_report(Crashed(signal.SIGSEGV, stage))
        assert "run your file alone (python FILE.py)" in said and "variant" not in said
    said = crash_report(Crashed(signal.SIGSEGV, "jitcompare g: nested 2/3 · first call"))
    assert "run that step of that variant alone" in said
