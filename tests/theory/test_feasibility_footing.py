"""The calculator's answer names its footing, and its rounds are a number (docs/adding-a-paper.md §4)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fedbounds.checks.cli import main
from fedbounds.theory.feasibility import feasibility

FEDNMAP = {"n": 50, "Q": 10, "L": 2, "rho": 0.05, "sigma": 0.1, "mu": 0.5}
ARGV = ["feasible", "fednmap", "--n", "50", "--Q", "10", "--L", "2", "--rho", "0.05", "--sigma", "0.1", "--mu", "0.5",
        "--epsilon", "1e-3"]


def test_rounds_hold_the_number_the_footing_names() -> None:
    res = feasibility("fednmap", FEDNMAP, target=1e-3)
    rn = res.rounds_needed
    assert isinstance(rn.rounds, int) and rn.rounds == rn.reference_rounds
    # the same number when the reference constants are given: an exact search, not the reference path
    given = feasibility("fednmap", {**FEDNMAP, **{f"{k}": v for k, v in rn.reference.items()}}, target=1e-3).rounds_needed
    assert given.flag == "exact" and given.rounds == rn.rounds
    line = res.footing_line()
    assert "Theorem 5's step-size conditions stand in for Theorem 8's" in line and "C_0 = 1, E[L_0] = 1" in line
    assert res.to_dict()["footing"] == line


def test_footing_sits_under_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(ARGV) == 0
    out = capsys.readouterr().out
    head = " ".join(out.splitlines()[:7])
    assert head.index("Answer: admissible") < head.index("Rounds to reach epsilon = 0.001: T = ") < head.index("Footing: Theorem 5")
    assert "Õ" not in out and "reference values" not in out.splitlines()[2]
    assert main([*ARGV, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["footing"].startswith("Footing: Theorem 5's") and isinstance(data["rounds_needed"]["rounds"], int)


def test_a_theorem_on_its_own_footing_prints_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert feasibility("ds.corollary_ii", {"L_f": 1, "G": 1, "B": 1, "sigma": 1, "Delta0": 1}, target=0.5).footing_line() == ""


@pytest.mark.slow  # 10 s at load 5-7 (pytest --durations, 2026-12-04)
def test_ds_decaying_rounds_are_a_number_inside_their_integral_bracket(capsys: pytest.CaptureFixture[str]) -> None:
    """R from Theorem 5.3's decaying bound: the smallest R whose schedule sum reaches 4 (Delta_r0 + Xi_sum)/epsilon,
    against a brute-force cumulative sum (numpy), and inside the bracket its two integral bounds give."""
    consts = {"L_f": 1, "G": 1, "B": 1, "sigma": 1}
    res = feasibility("ds.theorem5_3", consts, {"alpha": 0.6}, target=0.1)
    rn = res.rounds_needed
    c_, al = res.chosen["c"], res.chosen["alpha"]
    r0 = int(res.step_sizes["r_0"])
    need = 4 * rn.reference["Delta_r0 + Xi_sum"] / 0.1
    terms = c_ / (np.arange(r0, 2_000_000) + 1.0) ** al
    brute = r0 + int(np.argmax(np.cumsum(terms) >= need))
    assert rn.rounds == brute and 1_000 < brute < 2_000_000
    nums = [int(x.replace(",", "")) for x in __import__("re").findall(r"R >= ([\d,]+) (?:is necessary|sufficient)", rn.message)]
    assert len(nums) == 2 and nums[0] <= rn.rounds <= nums[1]
    assert main(["feasible", "ds-fedproxgrad", "--L-f", "1", "--G", "1", "--B", "1", "--sigma", "1", "--alpha", "0.75",
                 "--epsilon", "1e-3"]) == 0
    out = capsys.readouterr().out
    assert "Sum(" not in out and "R = 1,296,743,477,537,058" in out
    assert math.isfinite(float(rn.rounds))
