"""`fedbounds feasible fednmap ... --sigma --mu` prints the stochastic PEP's certified noise floor beside Theorem 8's printed
one where the committed grid covers the point, and "not covered" with the nearest grid point otherwise (issue 21, item 7)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from fedbounds.checks.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _readme_example() -> list[str]:
    """The README's example of the certified floor (the bash block after "Theorem 8's noise floor at a point")."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("Theorem 8's noise floor at a point", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block
    words = shlex.split(block.group(1).strip())
    assert words[:3] == ["fedbounds", "feasible", "fednmap"]
    return words[1:]


def test_the_readme_point_prints_both_floors(capsys: pytest.CaptureFixture[str]) -> None:
    argv = _readme_example()
    assert main([*argv, "--width", "200"]) == 1  # 16x the printed steps: not admissible for Theorem 5's conditions
    out = capsys.readouterr().out
    printed = re.search(r"printed .* = ([0-9.e+-]+)\s+\(m = 1\)", out)
    certified = re.search(r"certified K sigma\^2/e8 = ([0-9.e+-]+)", out)
    assert printed and certified, out
    assert "scope: certified at n = 2, Q = 1" in out and "C_0 window" in out
    assert main([*argv, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)["stochastic_pep_floor"]
    assert data["covered"] and (data["n"], data["Q"]) == (2, 1)
    assert data["certified_floor"] == pytest.approx(float(certified.group(1)), rel=1e-5)
    assert data["printed_floor"] == pytest.approx(float(printed.group(1)), rel=1e-5)
    assert data["certified_floor"] < data["printed_floor_m1"]


def test_the_default_example_is_not_covered(capsys: pytest.CaptureFixture[str]) -> None:
    """README's first feasible example (n = 10, Q = 5, Theorem 5's printed steps): off the grid, said so."""
    argv = ["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "10", "--Q", "5", "--sigma", "1", "--mu", "0.1",
            "--epsilon", "0.01"]
    main([*argv, "--width", "300"])
    out = capsys.readouterr().out
    assert "certified not covered: (n, Q) = (10, 5) is not a grid pair; not covered by the certified grid (nearest: (n, Q) = (4, 2)" in out
    assert "certified K sigma^2/e8" not in out
    main([*argv, "--json"])
    data = json.loads(capsys.readouterr().out)["stochastic_pep_floor"]
    assert not data["covered"] and data["nearest"]["n"] == 4 and data["printed_floor"] > 0


def test_printed_steps_at_a_grid_pair_are_not_covered(capsys: pytest.CaptureFixture[str]) -> None:
    """At (n, Q) = (2, 1) but Theorem 5's own steps (k = 1), the certificate (k = 16) does not apply."""
    main(["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "2", "--Q", "1", "--sigma", "1", "--mu", "0.1", "--json"])
    data = json.loads(capsys.readouterr().out)["stochastic_pep_floor"]
    assert not data["covered"] and "are not the grid's" in data["reason"]


def test_theorem5_has_no_noise_floor_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["feasible", "fednmap.theorem5", "--L", "1", "--rho", "0.1", "--n", "2", "--Q", "1", "--json"]) == 0
    assert "stochastic_pep_floor" not in json.loads(capsys.readouterr().out)
