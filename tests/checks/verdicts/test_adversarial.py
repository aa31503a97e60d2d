"""fedbounds.checks.verdicts.adversarial: the search space, the budgeted seeded search, the calibrated scale."""

from __future__ import annotations

import math

import pytest
from fedbounds.checks.verdicts.adversarial import Dimension, calibrated_scale, search_worst


def test_dimension_maps_the_unit_interval_and_back() -> None:
    d = Dimension("x", 1e-3, 1e3, log=True)
    assert d.value(0.0) == pytest.approx(1e-3) and d.value(1.0) == pytest.approx(1e3) and d.value(0.5) == pytest.approx(1.0)
    assert d.unit(10.0) == pytest.approx(2 / 3)
    k = Dimension("k", 1, 8, integer=True)
    assert k.value(0.0) == 1 and k.value(1.0) == 8 and isinstance(k.value(0.37), int)
    c = Dimension("family", choices=("a", "b", "c"))
    assert [c.value(u) for u in (0.0, 0.5, 0.99, 1.0)] == ["a", "b", "c", "c"]
    assert c.value(c.unit("b")) == "b"
    with pytest.raises(ValueError, match="positive"):
        Dimension("bad", 0.0, 1.0, log=True)
    with pytest.raises(ValueError, match="low <= high"):
        Dimension("bad", 2.0, 1.0)


def _bump(p) -> float:
    """A known maximum 3.0 at x = 0.7, family "b" (else at most 1.5)."""
    return (3.0 if p["family"] == "b" else 1.5) * math.exp(-50.0 * (p["x"] - 0.7) ** 2)


SPACE = [Dimension("x", 0.0, 1.0), Dimension("family", choices=("a", "b", "c"))]


def test_search_finds_a_known_maximum_within_budget() -> None:
    wc = search_worst(_bump, SPACE, budget=120, seed=3)
    assert wc.evaluations <= 120 and len(wc.history) == wc.evaluations
    assert wc.point["family"] == "b" and wc.ratio > 2.9
    assert wc.ratio == max(r for _, r in wc.history)
    assert wc.to_dict()["loose_by"] == pytest.approx(1 / wc.ratio)


def test_search_is_deterministic_and_starts_are_evaluated_first() -> None:
    a = search_worst(_bump, SPACE, budget=40, seed=5, starts=[{"x": 0.1, "family": "a"}])
    b = search_worst(_bump, SPACE, budget=40, seed=5, starts=[{"x": 0.1, "family": "a"}])
    assert a.ratio == b.ratio and a.point == b.point
    assert a.history[0][0]["family"] == "a" and a.history[0][0]["x"] == pytest.approx(0.1)


def test_failures_count_as_zero_and_do_not_win() -> None:
    def f(p) -> float:
        if p["x"] > 0.5:
            raise ValueError("outside the claim's domain")
        return p["x"]

    wc = search_worst(f, [Dimension("x", 0.0, 1.0)], budget=30, seed=0)
    assert wc.failures > 0 and wc.point["x"] <= 0.5 and 0 < wc.ratio <= 0.5


def test_budget_and_space_are_validated() -> None:
    with pytest.raises(ValueError, match="budget"):
        search_worst(_bump, SPACE, budget=0)
    with pytest.raises(ValueError, match="no dimension"):
        search_worst(_bump, [], budget=5)


def test_calibrated_scale_sits_a_factor_two_below_the_worst_ratio() -> None:
    assert calibrated_scale(0.01) == pytest.approx(0.005)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            calibrated_scale(bad)
