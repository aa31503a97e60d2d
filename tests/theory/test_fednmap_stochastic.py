"""The translation of a per-round noise coefficient into Theorem 8's floor (theory/fednmap/stochastic.py)."""

from __future__ import annotations

import pytest
from fedbounds.theory.core.evaluate import evaluate
from fedbounds.theory.fednmap import stochastic as S

#: (n, Q) = (2, 2) at 16 x Theorem 5's printed steps, L = 1, rho = 0.1 (gamma = 1/5.5)
POINT = {"L": 1.0, "rho": 0.1, "gamma": 1 / 5.5, "eta_hat": 0.028101276109960993, "eta_a": 0.014050638054980496, "n": 2, "Q": 2,
         "C_0": 1.0, "sigma2": 1.0, "s_var": 1, "s_drift": 1}


def test_allowance_matches_the_issue_figure() -> None:
    """The issue's 'per-round noise Theorem 8 allows at m = 1 (about 0.087)' at n = Q = 2 (mu -> 0). A 2x error in 36
    or in 12100 moves it by more than 30% (both terms are of the same size here: 0.056 and 0.031)."""
    v = {**POINT, "mu": 1e-9}
    assert evaluate(S.round_noise_allowance, v) == pytest.approx(0.0872, abs=5e-4)
    var_only = evaluate(S.round_noise_allowance, {**v, "s_drift": 0})
    assert var_only == pytest.approx(8 * POINT["eta_hat"] / 4, rel=1e-6)  # (2 eta_hat/9) * 36/(n Q)


def test_floor_ratio_is_one_at_the_allowance() -> None:
    v = {**POINT, "mu": 0.1}
    K8 = evaluate(S.round_noise_allowance, v)
    assert evaluate(S.floor_ratio, {**v, "K_sigma": K8}) == pytest.approx(1.0, rel=1e-12)
    assert evaluate(S.floor_ratio, {**v, "K_sigma": K8 / 2}) == pytest.approx(0.5, rel=1e-12)


def test_rooms_scale_with_their_own_constant_only() -> None:
    v = {**POINT, "mu": 0.1, "K_var": 1e-3, "kappa": 0.25, "C_c": 1e-3}
    r36, r121 = evaluate(S.room_variance, v), evaluate(S.room_drift, v)
    assert evaluate(S.room_variance, {**v, "s_var": 2}) == pytest.approx(2 * r36)
    assert evaluate(S.room_drift, {**v, "s_var": 2}) == pytest.approx(r121)
    assert evaluate(S.room_drift, {**v, "s_drift": 0.5}) == pytest.approx(r121 / 2)
