"""``fedbounds feasible`` answers the question asked (issue 20, item 4): it chooses the analysis window m to minimise
the rounds, puts the answer first, explains its columns, exits 1 when the answer is 'no', fits 80 columns, and every
--axes pair draws a region or says why not."""

from __future__ import annotations

import json

import pytest
from fedbounds.checks.cli import main
from fedbounds.theory.feasibility import feasibility

README = ["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "10", "--Q", "5", "--sigma", "1", "--mu", "0.1"]
CONSTS = {"L": 1, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1, "mu": 0.1}


def test_the_readme_example_is_reachable_and_answers_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*README, "--epsilon", "0.01"]) == 0  # today: '[unreachable]' (m = 1 leaves the floor at 7.28)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("Answer: admissible")
    head = " ".join(" ".join(lines[:10]).split())  # lines wrapped at 80 columns, joined back
    assert "chosen: minimises T" in head and "not an algorithm parameter" in head
    assert "Rounds to reach epsilon = 0.01: T = " in head and "unreachable" not in head


def test_the_chosen_window_beats_every_fixed_window() -> None:
    """The chosen m's rounds (at the stated reference C_0, E[L_0]) are no more than at any m given with --m: a scan
    through the other code path (m given), not the optimiser's own objective."""
    best = feasibility("fednmap", CONSTS, target=0.01)
    m_star = int(best.chosen["m"])
    t_star = best.rounds_needed.reference_rounds
    assert t_star is not None and best.rounds_needed.flag == "symbolic"
    for k in sorted({m_star - 40, m_star - 1, m_star + 1, m_star + 40, 2 * m_star}):
        other = feasibility("fednmap", CONSTS, {"m": k}, target=0.01)
        assert other.rounds_needed.reference_rounds is None or other.rounds_needed.reference_rounds >= t_star, k
    # below the floor's threshold (36 sigma^2/(m n mu Q) + drift > epsilon) no window reaches epsilon
    assert feasibility("fednmap", CONSTS, {"m": 8}, target=0.01).rounds_needed.flag == "unreachable"


def test_m_given_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    res = feasibility("fednmap", CONSTS, {"m": 900}, target=0.01)
    assert res.chosen["m"] == 900 and res.step_sizes["m_source"] == "given"


def test_not_admissible_and_unreachable_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*README, "--eta-a", "0.01", "--eta-s", "1"]) == 1  # today: exit 0 on NOT ADMISSIBLE
    assert "NOT ADMISSIBLE" in capsys.readouterr().out.splitlines()[1]
    assert main([*README, "--m", "8", "--epsilon", "0.01"]) == 1  # unreachable at m = 8
    assert main([*README, "--m", "8"]) == 0  # no epsilon: admissible is the answer


def test_legend_and_references(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*README, "--epsilon", "0.01"]) == 0
    out = capsys.readouterr().out
    for column in ("margin:", "bound/value:", "status:"):
        assert f"    {column}" in out
    assert "note 2.4" not in out and "reconstruction note" not in out and "[INF]" not in out
    assert "docs/fednmap-reconstruction.md §2.4" in out
    assert "**" not in out  # no sympy power artefacts (sigma^2**(1/3))
    assert "sigma^(2/3)" in out
    assert main([*README, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"margin", "bound/value"} <= set(data["legend"]) and data["exit_status"] == 0


def test_ds_references_name_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["feasible", "ds-fedproxgrad", "--L-f", "0.45", "--L-r", "0.9", "--lam", "1", "--G", "0.3", "--B", "1",
            "--G-r", "1", "--sigma", "0.1", "--alpha", "0.75", "--R", "1000"]
    assert main(argv) in (0, 1)
    out = capsys.readouterr().out
    assert "[INF]" not in out and "notes 1.6" not in out


@pytest.mark.parametrize("width", [80, 100])
def test_the_report_fits_the_width(width: int, capsys: pytest.CaptureFixture[str]) -> None:
    args = [*README, "--epsilon", "0.01"] + ([] if width == 80 else ["--width", str(width)])
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(ln) for ln in lines) <= width  # today: 213-284 columns


def test_a_too_narrow_width_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*README, "--width", "10"]) == 2
    assert "--width" in capsys.readouterr().err


@pytest.mark.parametrize("axes", ["gamma,eta_hat", "gamma,eta_a", "eta_a,eta_hat", "eta_hat,m", "eta_a,eta_s"])
def test_every_axes_pair_draws_a_region_or_says_why(axes: str, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """Today gamma,eta_hat is empty: eta_a held at its bound at the chosen gamma pins gamma to one value."""
    import numpy as np
    import sympy as sp
    from fedbounds.checks.report.feasibility_plot import projected_margins

    res = feasibility("fednmap", CONSTS, target=0.01)
    margins, _ = projected_margins(res, tuple(axes.split(",")))
    xs, ys = (res.region_symbols[a] for a in axes.split(","))
    # some point strictly inside: each drawn condition at half the point's value on both axes
    px, py = (0.5 * res.chosen[a] for a in axes.split(","))
    inside = [float(e.xreplace({xs: sp.Float(px), ys: sp.Float(py)})) for e in margins.values() if e.free_symbols <= {xs, ys}]
    assert inside and all(v > 0 for v in inside), (axes, inside)
    path = tmp_path / "r.png"
    assert main([*README, "--epsilon", "0.01", "--plot", str(path), "--axes", axes]) == 0
    assert path.stat().st_size > 0 and np.isfinite(px)
