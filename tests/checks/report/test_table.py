"""Terminal tables fit the width (fedbounds.checks.report.table), and the commands' --width."""

from __future__ import annotations

import io

import pytest
from fedbounds.checks.report.table import DEFAULT_WIDTH, output_width, render_table


def _rows() -> tuple[list[str], list[list[str]]]:
    header = ["claim", "verdict", "scope", "notes"]
    rows = [["fednmap.theorem8.complexity", "holds*", "outside: eta_hat 4-16x, eta_a 222x past Theorem 5's conditions",
             "a long note " * 12], ["ds.lemma5_2", "holds", "inside Lemma 5.2's hypotheses", "-"]]
    return header, rows


@pytest.mark.parametrize("width", [60, 80, 120])
def test_every_line_fits_and_nothing_is_lost(width: int) -> None:
    header, rows = _rows()
    out = render_table(header, rows, width)
    assert max(len(line) for line in out.splitlines()) <= width
    words = " ".join(out.split())
    for cell in [*header, *(c for r in rows for c in r)]:
        for w in cell.split():
            if len(w) <= 20:  # words are kept whole (ids up to the column floor)
                assert w in words
    assert "fednmap.theorem8.complexity" in out  # an id is not broken across lines


def test_a_narrow_table_is_left_as_is() -> None:
    out = render_table(["a", "b"], [["1", "2"]], 80)
    assert out.splitlines() == ["a  b", "-  -", "1  2"]


def test_width_defaults_to_80_off_a_terminal() -> None:
    assert output_width(None, io.StringIO()) == DEFAULT_WIDTH and output_width(33) == 33


@pytest.mark.parametrize("command", [["claims"], ["claims", "--paper", "ds"]])
@pytest.mark.parametrize("width", [None, 70, 100])
def test_claims_table_fits(command: list[str], width: int | None, capsys: pytest.CaptureFixture[str]) -> None:
    from fedbounds.checks.cli import main

    argv = command + ([] if width is None else ["--width", str(width)])
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= (width or DEFAULT_WIDTH)
    assert "fednmap.assumption1" in out or "ds." in out


def test_check_accepts_width() -> None:
    import argparse

    from fedbounds.checks.commands.check import configure

    p = argparse.ArgumentParser()
    configure(p)
    assert p.parse_args(["--width", "90"]).width == 90 and p.parse_args([]).width is None
    with pytest.raises(SystemExit):
        p.parse_args(["--width", "3"])
