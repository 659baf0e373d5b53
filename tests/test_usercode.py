"""The user's code by identity, not by path: a distribution's module is never the user's,
wherever it is imported from (site-packages, a folder on PYTHONPATH as on a TPU VM, a
symlink, ``pip install --target``); a local module, a module on PYTHONPATH of no
distribution and an editable install of the user's project are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import jax
import pytest

import jitmagic
from jitmagic import usercode
from jitmagic.usercode import Layout, is_users

SITE = os.path.dirname(os.path.dirname(os.path.abspath(jax.__file__)))

#: Debian's system Python: ``sys.prefix`` is /usr, its packages in dist-packages.
DEBIAN = Layout(
    stdlib=("/usr/lib/python3.11/",),
    site=("/usr/lib/python3/dist-packages/", "/usr/local/lib/python3.11/dist-packages/"),
    path=("/usr/src/app", "/usr/lib/python3.11", "/usr/lib/python3/dist-packages",
          "/usr/local/lib/python3.11/dist-packages"),
    distributed={"numpy": ("/usr/lib/python3/dist-packages/",),
                 "docs": ("/usr/local/lib/python3.11/dist-packages/",)})


def test_under_debians_system_python_code_under_usr_is_the_users():
    """sys.prefix /usr holds the user's /usr/src/app: only the library folders count."""
    assert is_users("/usr/src/app/model.py", DEBIAN)
    assert is_users("/usr/src/app/layers/attention.py", DEBIAN)
    assert not is_users("/usr/lib/python3/dist-packages/numpy/core/numeric.py", DEBIAN)
    assert not is_users("/usr/lib/python3.11/functools.py", DEBIAN)


def test_a_local_module_named_as_a_wheels_stray_package_is_the_users():
    """Some wheels ship a top-level ``docs``: the user's own docs.py is still theirs."""
    assert is_users("/usr/src/app/docs.py", DEBIAN)
    assert not is_users("/usr/local/lib/python3.11/dist-packages/docs/conf.py", DEBIAN)


def test_jax_from_a_source_checkout_with_no_distribution_is_not_the_users():
    layout = Layout(stdlib=(), site=(), path=("/srv/me/src/jax", "/srv/me/proj"),
                    distributed={})
    assert not is_users("/srv/me/src/jax/jax/_src/core.py", layout)
    assert is_users("/srv/me/proj/train.py", layout)


def test_modules_named_mine_are_the_users_though_installed():
    layout = Layout(stdlib=(), site=("/venv/site/",), path=("/venv/site",),
                    distributed={"mylib": ("/venv/site/",)})
    path = "/venv/site/mylib/layers.py"
    assert not is_users(path, layout)
    assert is_users(path, layout, frozenset({"mylib"}))
    with usercode.mine(["mylib.layers"]):
        assert usercode._MINE.get() == {"mylib"}
    assert usercode._MINE.get() == frozenset()


def _on_pythonpath(tmp_path, script: str) -> dict:
    """Run ``script`` with JAX imported through a symlink in a folder on PYTHONPATH (as a
    TPU VM installs it), beside a user's module in another such folder; its JSON."""
    libs, mine = tmp_path / "libs", tmp_path / "mine"
    libs.mkdir()
    mine.mkdir()
    (libs / "jax").symlink_to(os.path.join(SITE, "jax"))
    (mine / "mylayers.py").write_text("def layer(x):\n    return x * 2\n")
    env = {**os.environ, "PYTHONPATH": f"{libs}{os.pathsep}{mine}"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_jax_through_a_folder_on_pythonpath_is_not_the_users(tmp_path):
    seen = _on_pythonpath(tmp_path, """
        import json, jax, jax._src.core, jax.numpy, mylayers
        from jitmagic.usercode import user_file
        print(json.dumps({"jax_at": jax.__file__,
                          "jax": [user_file(m.__file__) for m in (jax, jax._src.core, jax.numpy)],
                          "mine": user_file(mylayers.__file__)}))""")
    assert seen["jax_at"].startswith(str(tmp_path))  # imported through the symlink
    assert seen["jax"] == [False, False, False]
    assert seen["mine"] is True


@pytest.mark.slow
def test_the_demo_nests_and_decides_with_jax_on_pythonpath(tmp_path):
    """The TPU VM's layout on a CPU: the discussion's helper is nested, JAX's are not,
    and a helper of the user's module on PYTHONPATH is nested too."""
    seen = _on_pythonpath(tmp_path, """
        import json, jax.numpy as jnp, jitmagic, mylayers
        def f(x):
            return sum(i * jnp.sin(x) for i in range(64))
        def g(x):
            return mylayers.layer(sum(f(x) for _ in range(16)))
        r = jitmagic.compare(g, jnp.ones(128), repeat=3, quiet=True)
        print(json.dumps({"helpers": list(r.nested.helpers),
                          "kind": r.verdict.kind}))""")
    assert seen["helpers"] == ["f", "mylayers.layer"]
    assert seen["kind"] == "faster"


def test_a_cell_and_jitmagic_itself():
    assert usercode.user_file("<ipython-input-3-abc>")
    assert not usercode.user_file(jitmagic.__file__)
    assert not usercode.user_file(os.__file__)
    assert usercode.user_file(__file__)  # the tests are a project's local files


def test_mine_makes_an_installed_librarys_functions_helpers():
    """``--mine optax``: optax's ``l2_loss`` is a helper to nest, as a local one would be."""
    import jax.numpy as jnp
    import optax

    def model(x):
        return optax.l2_loss(x).sum() + optax.l2_loss(2 * x).sum()

    plain = jitmagic.compare(model, jnp.ones(8), repeat=1, number=1, quiet=True)
    theirs = jitmagic.compare(model, jnp.ones(8), repeat=1, number=1, quiet=True,
                              mine="optax")
    assert plain.nested.helpers == ()
    assert "l2_loss" in " ".join(theirs.nested.helpers)
    assert usercode._MINE.get() == frozenset()  # put back after the measurement


def test_mine_takes_top_level_modules_python_can_import():
    from jitmagic.errors import InputError
    from jitmagic.options import Options

    assert Options(mine="optax, equinox").mine == ("optax", "equinox")
    assert Options(mine='"optax"').mine == ("optax",)  # as %jitcompare --mine "optax" passes it
    with pytest.raises(InputError, match="takes top-level module names, e.g. `--mine mylib"):
        Options(mine="my lib")
    with pytest.raises(InputError, match="takes top-level module names"):
        Options(mine="optax.losses")
    with pytest.raises(InputError, match="cannot make `jax` yours: it is JAX's stack"):
        Options(mine="jax")
    with pytest.raises(InputError, match="names `nosuchmodule`, which Python cannot import"):
        Options(mine="nosuchmodule")
    with pytest.raises(InputError, match="cannot take `__main__`: the cell's or script's own "
                                         "code is yours already"):
        Options(mine="__main__")  # was a ValueError (issue 59, item 11)


def test_an_egg_info_left_in_a_source_tree_is_no_install(tmp_path):
    """setuptools leaves ``mypkg.egg-info`` in the project's own tree when it builds it or
    installs it editable (and after it is uninstalled): the package stays the user's. A
    ``.dist-info`` beside a package in a folder on PYTHONPATH (``pip install --target``)
    is an install: a library's."""
    src, target = tmp_path / "src", tmp_path / "target"
    for folder, package, meta, text in ((src, "mypkg", "mypkg.egg-info", "PKG-INFO"),
                                        (target, "theirpkg", "theirpkg-1.0.dist-info",
                                         "METADATA")):
        (folder / package).mkdir(parents=True)
        (folder / package / "__init__.py").write_text("def layer(x):\n    return x\n")
        (folder / meta).mkdir()
        (folder / meta / text).write_text(f"Metadata-Version: 2.1\nName: {package}\n"
                                          "Version: 1.0\n")
        (folder / meta / "top_level.txt").write_text(f"{package}\n")
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{target}"}
    script = ("import json, mypkg, theirpkg; from jitmagic.usercode import user_file; "
              "print(json.dumps([user_file(mypkg.__file__), user_file(theirpkg.__file__)]))")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, False]


def test_a_venv_reached_through_a_link_keeps_its_libraries(tmp_path):
    """A venv used through a symlink names its site-packages by the link while its files'
    real paths lie behind it: Flax there is still Flax's (it was taken for the user's)."""
    real_site = tmp_path / "real" / "lib" / "site-packages"
    (real_site / "flax" / "linen").mkdir(parents=True)
    (real_site / "flax" / "linen" / "linear.py").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    site = str(tmp_path / "link" / "lib" / "site-packages")
    layout = Layout(stdlib=(), site=usercode._folders([site]), path=(site,),
                    distributed={"flax": usercode._folders([site])})
    linked = os.path.join(site, "flax", "linen", "linear.py")
    assert not is_users(linked, layout)
    assert not is_users(os.path.realpath(linked), layout)
