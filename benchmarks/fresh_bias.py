"""Why the command's fresh children read the seed's nested first call below the hand's
(issue 60: on a TPU v5e 3.45-3.94 s against 3.54-4.53 s, medians 7% apart, all of it in
XLA's compile; the flat ones alike): one variant's cold first call in fresh processes of
several kinds, taken in turn, in one command. Each by-hand process adds up JAX's own
monitoring events (trace, lowering, XLA compile) around its timed call.

- ``hand``: as ``fresh_vs_hand.py`` times it (the cell's setup, a tiny warm-up jit, then
  ``jax.jit(g)(x)``);
- ``hand, no warm-up``; ``hand, traced first`` (an untimed ``jax.make_jaxpr`` of the flat
  program first, as the command's discovery does); ``hand, lowered first`` (an untimed
  lowering of the timed program first); ``hand, after 5 s`` (a sleep after the warm-up);
  ``hand, AOT stages`` (``trace().lower().compile()`` then the call);
- ``hand, named g_nested``: the timed program's module named as the command named its
  nested row before 2026-12-06's evening (``jit_g_nested``; since, a child keeps the
  user's name);
- ``command``: the command's own child (one sample, with its page faults), and
  ``command, trimmed`` (glibc's free heap handed back before the sample).

    python benchmarks/fresh_bias.py [nested|flat] [ROUNDS] ["KIND;KIND;..."]

On the TPU host: ``PYTHONPATH=$PYTHONPATH:$PWD:$PWD/benchmarks python
benchmarks/fresh_bias.py nested 4 "hand;hand, named g_nested;command"`` (12 fresh
processes, about 4 minutes there).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

from fresh_vs_hand import ONE_CALL, SEED

from jitmagic.measure.children import Entry, run_child
from jitmagic.model.progress import Finished

#: The by-hand process's lines before its timed call, per kind (``ONE_CALL`` edited): its
#: warm-up, and an untimed trace of the flat program before the helper is jitted.
WARM_UP = "jax.block_until_ready(jax.jit(lambda a: a + 1)(1.0))\n"
NESTING = 'if sys.argv[3] == "nested":'
TRACED = "jax.make_jaxpr(lambda: eval(call, namespace))()\n"
#: The timed program named as the command's nested row is where it compares both rows.
RENAMED = """def renamed(*a, _fn=namespace[entry]):
    return _fn(*a)
renamed.__name__ = renamed.__qualname__ = entry + "_nested"
fn = jax.jit(renamed)"""
LOWERED = "jax.jit(lambda: eval(call, namespace)).lower()\njax.clear_caches()\n"
KINDS = {"hand": ONE_CALL, "hand, no warm-up": ONE_CALL.replace(WARM_UP, ""),
         "hand, traced first": ONE_CALL.replace(NESTING, TRACED + NESTING),
         "hand, lowered first": ONE_CALL.replace("entry, args", LOWERED.replace(
             "call,", "call.replace(call.split('(')[0], 'fn', 1),").replace(
             "namespace)", "{**namespace, 'fn': jax.jit(namespace[call.split('(')[0]])})")
             + "entry, args"),
         "hand, after 5 s": ONE_CALL.replace(WARM_UP, WARM_UP + "time.sleep(5)\n"),
         "hand, named g_nested": ONE_CALL.replace("fn = jax.jit(namespace[entry])", RENAMED),
         "hand, AOT stages": ONE_CALL.replace(
             'jax.block_until_ready(eval(f"fn({args}", {**namespace, "fn": fn}))',
             'jax.block_until_ready(eval(f"fn.trace({args}", {**namespace, "fn": fn})'
             '.lower().compile()(*eval(f"({args},", namespace)))')}


def counted_child(inputs: dict) -> dict:
    """The command's child, with the page faults of each cold sample in its result (and,
    where ``trim`` is asked, glibc's free memory handed back to the system before it)."""
    import ctypes
    import resource

    from jitmagic.frontends.command import measure_in_child
    from jitmagic.measure.sampling.runner import Sampler

    once, faults = Sampler._measure_once, []

    def counted(self, *args, **kwargs):
        if inputs.get("trim"):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        once(self, *args, **kwargs)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)

    Sampler._measure_once = counted
    return {**measure_in_child(inputs), "page_faults": faults}


def by_hand(code: str, path: str, variant: str) -> tuple[float, str]:
    """The first call's seconds, and its stages as JAX's monitoring events add them up."""
    done = subprocess.run([sys.executable, "-c", code, path, "f", variant],
                          capture_output=True, text=True, check=True)
    *_, stages, took = done.stdout.strip().splitlines()
    return float(took), stages


def by_command(path: str, variant: str, trim: bool = False) -> tuple[float, str]:
    end = run_child(Entry("fresh_bias", "counted_child"),
                    {"argv": [path, "-r", "1", "-q"], "sample": variant, "trim": trim},
                    timeout_s=600)
    assert isinstance(end, Finished), end
    samples = end.result["variants"][variant]["samples"]
    stages = {k: round(xs[0], 3) for k, xs in samples.items() if xs and xs[0] is not None}
    stages["page_faults"] = end.result["page_faults"]
    return samples["first_call_s"][0], str(stages)


def main() -> None:
    variant = sys.argv[1] if len(sys.argv) > 1 else "nested"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    wanted = sys.argv[3].split(";") if len(sys.argv) > 3 else [*KINDS, "command"]
    assert WARM_UP in ONE_CALL and TRACED in KINDS["hand, traced first"]
    path = os.path.join(tempfile.mkdtemp(prefix="fresh_bias_"), "seed.py")
    with open(path, "w") as out:
        out.write(SEED)
    seconds: dict[str, list[float]] = {k: [] for k in (*KINDS, "command", "command, trimmed")
                                       if k in wanted}
    for i in range(rounds):
        for kind in list(seconds)[:: 1 if i % 2 == 0 else -1]:
            took, stages = by_command(path, variant, "trim" in kind) if "command" in kind \
                else by_hand(KINDS[kind], path, variant)
            seconds[kind].append(took)
            print(f"round {i + 1}: {kind:20} {took:.3f} s  {stages}", flush=True)
    for kind, xs in seconds.items():
        print(f"{variant} first call, {kind:20} median {statistics.median(xs):.3f} s "
              f"({min(xs):.3f}-{max(xs):.3f} s)")


if __name__ == "__main__":
    main()
