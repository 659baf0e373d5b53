"""setuptools' own build (pyproject.toml holds the project), with one repair.

``jitmagic-watch.pth``, through which ``JITMAGIC_WATCH=...`` watches any program, is a
data file installed into site-packages (``[tool.setuptools.data-files]``). An editable
install (``pip install -e .``) skips data files: setuptools asks the distribution
``has_data()``, which no distribution has (``has_data_files()`` is its name), so it is
run here; ``run_command`` runs a command once, so a setuptools that runs it itself is
not given a second copy.
"""

from setuptools import setup
from setuptools.command.editable_wheel import editable_wheel


class EditableWheel(editable_wheel):
    def _run_install(self, category: str) -> None:
        super()._run_install(category)
        if category == "data":
            self.run_command("install_data")


setup(cmdclass={"editable_wheel": EditableWheel})
