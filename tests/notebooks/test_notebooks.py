"""Every derivation notebook runs, top to bottom, with its assert cells.

Notebooks are jupytext percent-format ``.py`` files in ``notebooks/``; each is converted to ``.ipynb`` in a
temporary folder and executed with nbmake's runner (the same runner ``pytest --nbmake`` uses).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import jupytext
import pytest
from nbmake.nb_run import NotebookRun

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.py"))

#: each notebook must finish in under 2 minutes on 2 cores (issue 7); the timeout is per cell
CELL_TIMEOUT_S = 120


@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """... and leaves nothing behind: not in its current folder (the notebook's), not in the temporary folder."""
    notebook = jupytext.read(source)  # the kernelspec comes from the file's own header
    target = tmp_path / f"{source.stem}.ipynb"
    jupytext.write(notebook, target)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the kernel's tempfile folder
    result = NotebookRun(target, default_timeout=CELL_TIMEOUT_S).execute()
    assert result.error is None, f"{source.name}: {result.error.summary}\n{result.error.trace}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, scratch.name]), f"{source.name} left files in its folder"
    assert not list(scratch.rglob("*")), f"{source.name} left temporary files: {sorted(map(str, scratch.rglob('*')))}"


def test_notebooks_exist() -> None:
    assert NOTEBOOKS, "no notebooks found in notebooks/"


@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_header_names_a_python3_kernel(source: Path) -> None:
    """Opened in Jupyter (or converted by ``jupytext --to ipynb --execute``), the notebook starts a Python 3
    kernel without asking: its jupytext header carries the kernelspec."""
    kernelspec = jupytext.read(source).metadata.get("kernelspec")
    assert kernelspec == {"display_name": "Python 3", "language": "python", "name": "python3"}, f"{source.name}: {kernelspec}"


def test_notebooks_extra_installs_what_the_readme_line_runs() -> None:
    """``pip install -e '.[notebooks]'`` brings Jupyter, jupytext, nbconvert (which ``jupytext --execute`` needs)
    and a kernel, and the README gives that line for a fresh clone."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ]", req, maxsplit=1)[0].lower() for req in extras["notebooks"]}
    assert {"jupytext", "nbconvert", "ipykernel"} <= names and names & {"notebook", "jupyterlab"}, names
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e '.[notebooks]'" in readme and "jupytext --to ipynb --execute notebooks/" in readme
