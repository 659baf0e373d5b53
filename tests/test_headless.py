"""A plain script's jitmagic loads no display library: ``import jitmagic`` and a
``jitmagic.compare(...)`` leave IPython, matplotlib and ipywidgets unimported (each is
imported only by a magic, a chart or a widget). Each is checked in a fresh interpreter,
where nothing else has imported them; the import-linter contract ``front-doors``
(pyproject.toml) keeps the imports that could load them out of the package's code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: The checkout whose jitmagic the child imports.
ROOT = Path(__file__).resolve().parents[1]
#: The libraries a plain script never needs.
DISPLAY_LIBRARIES = ("IPython", "matplotlib", "ipywidgets")

#: A fresh interpreter: which display libraries are loaded after ``import jitmagic``
#: and after a tiny comparison (argv[1]: "compare" to run one), as JSON, after checking
#: that each is installed (else their absence would prove nothing).
CHILD = textwrap.dedent('''
    import importlib.util, json, sys
    LIBRARIES = sys.argv[2:]
    assert all(importlib.util.find_spec(name) for name in LIBRARIES), "not all installed"
    def loaded():
        return sorted(name for name in LIBRARIES if name in sys.modules)
    found = {"before": loaded()}
    import jitmagic
    found["import"] = loaded()
    if sys.argv[1] == "compare":
        import jax.numpy as jnp
        def helper(x):
            return jnp.sin(x) * 2
        def model(x):
            return helper(x) + helper(x)
        result = jitmagic.compare(model, jnp.ones(3), repeat=1, number=1, quiet=True)
        assert isinstance(result, jitmagic.Comparison)
        found["compare"] = loaded()
    print(json.dumps(found))
''')


def _loaded(step: str) -> dict[str, list[str]]:
    """What the child loaded at each step up to ``step`` ("import" or "compare")."""
    done = subprocess.run([sys.executable, "-c", CHILD, step, *DISPLAY_LIBRARIES],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env=os.environ | {"JAX_PLATFORMS": "cpu"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_jitmagic_loads_no_display_library():
    assert _loaded("import") == {"before": [], "import": []}


@pytest.mark.slow
def test_a_comparison_from_a_script_loads_no_display_library():
    assert _loaded("compare") == {"before": [], "import": [], "compare": []}
