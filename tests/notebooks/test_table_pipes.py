"""The notebooks' Markdown tables: a norm written with pipes (``||a||``, ``\\|a\\|``) inside a cell ends the cell in
nbconvert's HTML, so the tables write norms as ``\\Vert`` (maths) or the norm sign (text)."""

import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9]*.py"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_pipe_norm_inside_a_table_cell(nb: Path) -> None:
    rows = [ln for ln in nb.read_text(encoding="utf-8").splitlines() if ln.startswith("# |")]
    bad = [ln for ln in rows if "\\|" in ln or re.search(r"\|\|(?!-)", ln.removeprefix("# |").removesuffix("|"))]
    assert not bad, bad


def test_the_tables_are_still_there() -> None:
    for name in ("01_ds_lemma52", "02_ds_theorem53", "03_fednmap_normal_map"):
        assert any(ln.startswith("# |") for ln in (NOTEBOOKS[0].parent / f"{name}.py").read_text(encoding="utf-8").splitlines()), name
    assert ".replace('||', '‖')" in (NOTEBOOKS[0].parent / "01_ds_lemma52.py").read_text(encoding="utf-8")  # notebook 01's constants table
