"""Hostile names in the causes' sections, on real JAX: ESC, BEL, a CSI and an OSC sequence
in a constant's dict key, a helper's ``__name__``, ``__qualname__`` and code name,
``exec``'s file name, the command's file name and the user's error. None of
them reaches the text (the command's stdout, the magic's text/plain) as a raw control
character: each is written as its escape (``\\x1b``), as the rest of the report is (a
saved report's strings are escaped as it loads: ``tests/test_saved.py``)."""

from __future__ import annotations

import re
import sys
import textwrap

import jax.numpy as jnp
import pytest

import jitmagic
from jitmagic.render.bundle import text

#: ESC and BEL alone, a CSI (colour, clear screen) and an OSC (set the window's title).
HOSTILE = "\x1b\x07\x1b[31m\x1b[2J\x1b]0;pwned\x07\x9b"
#: What a terminal acts on: C0 controls but newline and tab, DEL and C1.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

SOURCE = textwrap.dedent("""
    import numpy as np
    import jax
    import jax.numpy as jnp

    CONSTS = {NAME: np.linspace(0.0, 1.0, 512 * 512, dtype=np.float32).reshape(512, 512)}

    def layer(x):
        if SCRATCH in str(jax.config.jax_compilation_cache_dir or ""):
            raise ValueError("failed " + NAME)
        return jnp.sin(x) * 0.5 + x

    def model(x):
        for _ in range(3):
            x = layer(x)
        return x + jnp.sum(CONSTS[NAME][:4]) * jnp.mean(CONSTS[NAME])
""")


def hostile_model():
    """``model`` and its helper, made by ``exec`` from a file named with :data:`HOSTILE`;
    the helper's names (``__name__``, ``__qualname__``, its code's) hostile too."""
    namespace = {"NAME": HOSTILE, "SCRATCH": "jitmagic-cache-", "__name__": "hostile"}
    exec(compile(SOURCE, f"cell{HOSTILE}.py", "exec"), namespace)
    layer = namespace["layer"]
    layer.__name__ = layer.__qualname__ = f"layer{HOSTILE}"
    layer.__code__ = layer.__code__.replace(co_name=f"layer{HOSTILE}",
                                            co_qualname=f"layer{HOSTILE}")
    return namespace["model"]


def raw_in(said: str) -> list[str]:
    """The lines of ``said`` holding a raw control character."""
    return [line for line in said.splitlines() if RAW.search(line)]


@pytest.fixture(scope="module")
def measured():
    """--why (--lines, --cache, --xla, the big constants) on the hostile model."""
    return jitmagic.compare(hostile_model(), jnp.ones((4, 4)), repeat=1, number=1,
                            why=True, quiet=True)


@pytest.mark.slow  # every cause measured: 4-6 s on 2 cores
def test_no_hostile_name_reaches_the_text_raw(measured):
    said = text(measured)
    for section in ("Why the first call", "Program size by source line", "Big constants",
                    "Second start", "Where XLA spends the compile"):
        assert section in said  # each cause's section is there to be checked
    assert "failed" in said and "\\x1b]0;pwned\\x07" in said  # the error, escaped
    assert f"cell{HOSTILE}.py".encode("unicode_escape").decode() in said  # exec's file
    assert raw_in(said) == []
    assert raw_in(str(measured)) == []


def test_the_text_renderer_escapes_every_block():
    from jitmagic.render.blocks import Cell, Code, Details, Heading, Para, Pre, Table, as_text

    said = as_text([Heading((HOSTILE,)), Para([f"a `{HOSTILE}` b", Code(HOSTILE)]),
                    Table((HOSTILE, "x"), [[Cell(HOSTILE, HOSTILE, code=True), HOSTILE]]),
                    Pre(f"Traceback\n  File \"{HOSTILE}\"\n"),
                    Details((HOSTILE,), HOSTILE, in_text=True)])
    assert raw_in(said) == [] and said.count("\\x1b]0;pwned\\x07") == 10
    assert "\\x1b[31m" in said and "\\x9b" in said


@pytest.mark.skipif(sys.platform == "win32", reason="a file name with ESC in it")
@pytest.mark.slow  # a process of its own, --why
def test_the_commands_output_holds_no_raw_escape(tmp_path):
    import subprocess

    script = tmp_path / f"run{HOSTILE[:2]}[31m.py"
    script.write_text(
        "import jax.numpy as jnp\n"
        f"NAME = {HOSTILE!r}\nSCRATCH = 'jitmagic-cache-'\n{SOURCE}\n"
        "model(jnp.ones((4, 4)))\n")
    run = subprocess.run([sys.executable, "-m", "jitmagic", str(script), "--why", "-r", "1",
                          "-n", "1"], capture_output=True, timeout=600)
    out, err = run.stdout.decode(), run.stderr.decode()
    assert run.returncode == 0, err
    assert "Why the first call" in out and "\\x1b[31m" in out
    assert raw_in(out) == [] and raw_in(err) == []

