"""Notebook 01's Markdown tables: a norm written with pipes (``||a||``, ``\\|a\\|``) inside a cell ends the cell in
nbconvert's HTML, so the tables write norms as ``\\Vert`` (maths) or the norm sign (text)."""

import re
from pathlib import Path

NB = Path(__file__).resolve().parents[2] / "notebooks" / "01_ds_lemma52.py"


def test_no_pipe_norm_inside_a_table_cell() -> None:
    text = NB.read_text(encoding="utf-8")
    rows = [ln for ln in text.splitlines() if ln.startswith("# |")]
    assert rows, "notebook 01 lost its summary table"
    bad = [ln for ln in rows if "\\|" in ln or re.search(r"\|\|(?!-)", ln.removeprefix("# |").removesuffix("|"))]
    assert not bad, bad
    assert ".replace('||', '‖')" in text  # the constants table's notes, printed at run time
