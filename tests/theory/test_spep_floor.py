"""Theorem 8's noise floor certified by the stochastic PEP at a user's point (theory/fednmap/spep_floor.py), against the
committed rows read by hand; the point must be the grid's, or it is "not covered" with the nearest grid point."""

from __future__ import annotations

import math
from typing import Any

import pytest
from fedbounds.theory.fednmap.spep_floor import certified_noise_floor, load_grid

GRID = load_grid()
GAMMA = 1 / (5 * 1.1)  # Theorem 5's largest gamma at L = 1, rho = 0.1


def _steps(n: int, Q: int) -> dict[str, float]:
    return GRID["steps"][f"{n},{Q}"]


def _by_hand(n: int, Q: int, sigma2: float = 1.0, L: float = 1.0) -> tuple[float, dict]:
    """min over the certified rows at (n, Q) of K sigma^2/e8, e8 = 2 eta_hat mu/(9 (1 + gamma mu C_0)) (Theorem 8),
    at scale L (K/L, the steps and gamma /L, mu L/10)."""
    s = _steps(n, Q)
    best = (math.inf, {})
    for r in GRID["rows"]:
        if (r["n"], r["Q"]) != (n, Q) or r["status"] not in ("certified", "proved"):
            continue
        mu, gamma, eta_hat = 0.1 * L, s["gamma"] / L, s["eta_hat"] / L
        e8 = 2 * eta_hat * mu / (9 * (1 + gamma * mu * r["C_0"]))
        best = min(best, ((r["K"] / L) * sigma2 / e8, r), key=lambda t: t[0])
    return best


def _at(n: int, Q: int, L: float = 1.0, sigma2: float = 1.0, change: dict | None = None) -> Any:
    """The grid's point at (n, Q) (scale L), with ``change`` applied (n, Q among them: the steps stay (n, Q)'s)."""
    s = _steps(n, Q)
    args = {"L": L, "rho": 0.1 * L, "mu": 0.1 * L, "n": n, "Q": Q, "gamma": s["gamma"] / L, "eta_a": s["eta_a"] / L,
            "eta_hat": s["eta_hat"] / L, "sigma2": sigma2}
    return certified_noise_floor(**{**args, **(change or {})})


@pytest.mark.parametrize(("n", "Q"), [(2, 1), (1, 2), (2, 2), (4, 2)])
def test_covered_point_gives_its_own_rows_minimum(n: int, Q: int) -> None:
    got = _at(n, Q, sigma2=4.0)
    want, row = _by_hand(n, Q, sigma2=4.0)
    assert got.covered and got.floor == pytest.approx(want, rel=1e-12)
    assert (got.C_0, got.C_c) == (row["C_0"], row["C_c"])
    printed_m1 = 36 * 4.0 / (n * 0.1 * Q) + 12100 * _steps(n, Q)["eta_a"] ** 2 * Q * 4.0 / (0.1 * (1 - GAMMA * 0.1) ** 2)
    assert got.printed_m1 == pytest.approx(printed_m1, rel=1e-9) and got.ratio == pytest.approx(want / printed_m1, rel=1e-9)
    assert f"n = {n}, Q = {Q}" in got.scope and "C_0 window" in got.scope


def test_n_and_q_are_not_swapped() -> None:
    """(2, 1) and (1, 2) have different rows (n = 1 has no correction noise): each answer is its own."""
    a, b = _at(2, 1), _at(1, 2)
    assert a.covered and b.covered and a.floor != pytest.approx(b.floor, rel=1e-3)
    assert a.floor == pytest.approx(_by_hand(2, 1)[0], rel=1e-12) and b.floor == pytest.approx(_by_hand(1, 2)[0], rel=1e-12)


def test_scale_invariance_in_L() -> None:
    """At L = 4 (rho, mu x 4; gamma and the steps / 4; same sigma) both floors are a quarter, their ratio unchanged."""
    one, four = _at(2, 2), _at(2, 2, L=4.0)
    assert four.covered and four.floor == pytest.approx(one.floor / 4, rel=1e-9)
    assert four.printed_m1 == pytest.approx(one.printed_m1 / 4, rel=1e-9) and four.ratio == pytest.approx(one.ratio, rel=1e-9)
    assert four.C_c == pytest.approx(one.C_c / 4, rel=1e-12) and four.C_0 == one.C_0


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"n": 10, "Q": 5}, "(n, Q) = (10, 5) is not a grid pair"),
        ({"mu": 0.2}, "mu/L = 0.2 is not the grid's 0.1"),
        ({"rho": 0.05}, "rho/L = 0.05"),
        ({"eta_a": _steps(2, 1)["eta_a"] * (1 + 1e-4)}, "are not the grid's"),
        ({"eta_a": _steps(2, 1)["eta_a"] / 16, "eta_hat": _steps(2, 1)["eta_hat"] / 16}, "are not the grid's"),  # printed steps
        ({"C_0": 3.0}, "C_0 = 3 is not a grid value"),
    ],
)
def test_off_grid_is_not_covered_with_the_nearest_point(change: dict, words: str) -> None:
    got = _at(2, 1, change=change)
    assert not got.covered and words in got.reason and "not covered by the certified grid (nearest: (n, Q) = " in got.reason


def test_nearest_is_the_closest_pair_in_log_n_plus_log_q() -> None:
    far = _at(2, 1, change={"n": 10, "Q": 5}).nearest
    assert (far["n"], far["Q"]) == (4, 2)
    deep = _at(2, 1, change={"n": 1, "Q": 8}).nearest
    assert (deep["n"], deep["Q"]) == (1, 2)


def test_given_c0_restricts_to_its_rows_and_no_descent_is_not_covered() -> None:
    got = _at(2, 1, change={"C_0": 2.0})
    assert got.covered and got.C_0 == 2.0 and got.floor >= _at(2, 1).floor
    zero = _at(2, 1, change={"C_0": 0.0})
    assert not zero.covered and "no certified finite K" in zero.reason
