"""The user's own persistent compilation cache and temp folder, beside a comparison that
asks for every part: jitmagic writes none of its own programs into the user's cache
folder, and a temp folder it cannot use loses only the part that needs one.

The cache is set as a user sets it in an earlier cell (its folder, and the thresholds
lowered so that every program is cached); the cell's call runs once before, so the
eager ops it compiles are the user's, in their folder before the magic runs.
"""

from __future__ import annotations

import os
import tempfile

import jax
import pytest

from jitmagic._compat import reset_persistent_cache
from jitmagic.measure.sampling.conditions import cache_settings

CELL = """\
import jax.numpy as jnp
def layer(x):
    return jnp.tanh(x @ x.T) + x
def model(x):
    for _ in range(2):
        x = layer(x)
    return x.sum()
x = jnp.ones((8, 8))
"""

EVERY_PART = "-r 3 -n 2 --no-plot -o --vmap --attribute --advise --xla --lines --cache"


@pytest.fixture
def users_cache(ip, tmp_path):
    """The user's cache on, in ``tmp_path``, caching every program; put back after."""
    saved = cache_settings()
    reset_persistent_cache()
    jax.config.update("jax_compilation_cache_dir", str(tmp_path))
    jax.config.update("jax_enable_compilation_cache", True)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    ip.run_cell(CELL)
    ip.run_cell("model(x)")  # the user's own compiles, cached by the user
    yield tmp_path
    for name, value in saved.items():
        jax.config.update(name, value)
    reset_persistent_cache()
    for name in ("layer", "model", "x"):
        ip.user_ns.pop(name, None)


@pytest.mark.slow
@pytest.mark.parametrize("line", [EVERY_PART, f"{EVERY_PART} --in-axes 0"])
def test_no_program_of_jitmagic_is_written_into_the_users_cache(run_magic, users_cache,
                                                                 line):
    before = sorted(os.listdir(users_cache))
    assert before, "the user's own compiles were not cached: the test checks nothing"
    result, _ = run_magic(line, "model(x)")
    assert sorted(os.listdir(users_cache)) == before  # jit_stack, jit_take were written
    assert result.second_start is not None
    # JAX importing its own submodules meanwhile is no other thread's change
    assert not [w for w in result.warnings if "another thread" in w], result.warnings


SMALL = """\
import jax.numpy as jnp
def layer(x):
    return jnp.sin(x) * 2
def model(x):
    return layer(x) + layer(x)
model(jnp.ones(4))
"""


def test_an_unusable_temp_folder_skips_only_the_parts_that_need_one(run_magic,
                                                                    monkeypatch):
    # what a process whose temp folder is /proc/self gets: mkdtemp's FileNotFoundError
    monkeypatch.setattr(tempfile, "tempdir", "/proc/self")
    result, _ = run_magic("-r 1 -n 2 --no-plot -o --cache --xla", SMALL)
    assert result.variants["flat"].ok and result.variants["nested"].ok  # the rest stands
    assert result.second_start is None
    skipped = [w for w in result.warnings if w.startswith("the second start was not measured")]
    assert len(skipped) == 1, result.warnings
    assert "'/proc/self'" in skipped[0] and "FileNotFoundError" in skipped[0]
    assert "TMPDIR set to a folder you can write to" in skipped[0]
    notes = " ".join(result.xla_passes.notes.values()) if result.xla_passes else ""
    assert "could not make its scratch folder for the profiled XLA compile" in notes
