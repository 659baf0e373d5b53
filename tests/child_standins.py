"""Stand-in entries for the child runner's tests (tests/test_children.py): each says the
stage it enters, then ends as a child can: a result, an error, a signal, a hang."""

from __future__ import annotations

import os
import signal
import sys
import time

from jitmagic.measure.children import stage


def succeeds(inputs):
    stage("adding")
    return {"sum": sum(inputs["numbers"]), "pid": os.getpid()}


def raises(inputs):
    stage("checking")
    raise ValueError(f"bad input {inputs!r}")


def segfaults(inputs):
    stage(inputs["stage"])
    sys.stderr.write("F1206 07:08:23.212953    5415 target.cc:1735] Check failed: "
                     "chip_bounds().z == 1 (2 vs. 1)\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)


def hangs(inputs):
    """Hangs, with a grandchild of its own in its process group that hangs too."""
    import subprocess

    stage("hanging")
    with open(inputs["pids"], "w") as out:
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        out.write(f"{os.getpid()} {grandchild.pid}\n")
    time.sleep(600)
