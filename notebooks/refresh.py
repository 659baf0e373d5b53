"""Run the tour notebook top to bottom in a fresh kernel and save it with its outputs.

    .venv/bin/python notebooks/refresh.py

The committed notebook carries the outputs of the last such run; the test suite runs it
again (in a temporary folder) and checks the same shape of results.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

TOUR = Path(__file__).with_name("tour.ipynb")


def main() -> None:
    nb = nbformat.read(TOUR, as_version=4)
    # without the widgets' live state, as JupyterLab saves by default: an export then
    # shows the widget's static HTML (both orderings), which needs no script
    NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(TOUR.parent)}}).execute()
    nbformat.write(nb, TOUR)
    print(f"wrote {TOUR}")


if __name__ == "__main__":
    main()
