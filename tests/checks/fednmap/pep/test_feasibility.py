"""PEP-certified steps at any n (issue 20, item 4): the committed grid stops at n = 3, the block form does not."""

from __future__ import annotations

import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.fednmap.pep import feasibility as feasibility_pep
from fedbounds.theory.fednmap import pep_evidence as ev
from fedbounds.theory.fednmap.pep_steps import certified_steps, printed_steps

GAMMA = 1 / (5 * 1.1)  # Theorem 5's largest gamma at L = 1, rho = 0.1 (the grid's)


@pytest.mark.slow  # 54 s at load 5-7 (pytest --durations, 2026-12-04)
def test_n10_is_certified_in_block_form() -> None:
    assert not certified_steps(1.0, 0.1, 10, 1, gamma=GAMMA).covered  # the committed grid: n <= 3 only
    got = feasibility_pep.certify_at_n(1.0, 0.1, 10, 1, GAMMA)
    assert got["covered"], got
    grid_k = min(r["k"] for r in ev.STEPS if r["rho"] == 0.1 and r["Q"] == 1)
    assert got["k"] == grid_k and {h["T"] for h in got["horizons"]} == {1, 2}
    assert all(h["status"] == "certified" and h["value"] <= 1.0 for h in got["horizons"])
    p = printed_steps(1.0, 0.1, 1, GAMMA)
    assert got["eta_hat"] == pytest.approx(grid_k * p["eta_hat"], rel=1e-12)


def test_a_multiplier_past_the_threshold_is_not_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: the same certificate at k = 400 (the grid's search stopped below 200) must fail."""
    rows = [dict(r, k=400.0) for r in ev.STEPS]
    monkeypatch.setattr(ev, "STEPS", rows)
    got = feasibility_pep.certify_at_n(1.0, 0.1, 10, 1, GAMMA)
    assert not got["covered"] and "failed" in got["reason"]


def test_off_grid_rho_is_not_covered_with_a_reason() -> None:
    got = feasibility_pep.certify_at_n(2.0, 0.05, 50, 10, 1 / (5 * 2.05))
    assert not got["covered"] and "off the PEP grid" in got["reason"]


@pytest.mark.slow  # 75 s at load 5-7 (pytest --durations, 2026-12-04)
def test_the_command_line_offers_it(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "10", "--Q", "1", "--sigma", "1", "--mu", "0.1"]
    assert main(argv) == 0
    assert "--pep-certify certifies" in capsys.readouterr().out
    assert main([*argv, "--pep-certify", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["pep_certified_steps"]["covered"] and data["pep_certified_steps"]["n"] == 10
