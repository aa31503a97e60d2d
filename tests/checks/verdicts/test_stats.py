"""fedbounds.checks.verdicts.stats and fedbounds.checks.fednmap.speedup.rounds_to_target
against hand-computed values and Monte Carlo coverage."""

from __future__ import annotations

import numpy as np
import pytest
from fedbounds.checks.fednmap.speedup import rounds_to_target
from fedbounds.checks.verdicts.stats import loglog_slope, mean_ci


def test_mean_ci_known_values() -> None:
    # samples 1, 2, 3: mean 2, sd 1, se 1/sqrt(3); t_{0.95, 2} = 2.919986 (table value)
    mean, low, high = mean_ci(np.array([1.0, 2.0, 3.0]))
    assert mean == pytest.approx(2.0)
    assert high == pytest.approx(2.0 + 2.919986 / np.sqrt(3), rel=1e-6)
    assert low == pytest.approx(2.0 - 2.919986 / np.sqrt(3), rel=1e-6)
    # two-sided 95%: t_{0.975, 2} = 4.302653
    _, low2, high2 = mean_ci(np.array([1.0, 2.0, 3.0]), one_sided=False)
    assert high2 == pytest.approx(2.0 + 4.302653 / np.sqrt(3), rel=1e-6)
    assert low2 == pytest.approx(2.0 - 4.302653 / np.sqrt(3), rel=1e-6)


def test_mean_ci_axis0_and_degenerate() -> None:
    x = np.arange(12.0).reshape(4, 3)
    mean, low, high = mean_ci(x)
    assert mean.shape == (3,)
    np.testing.assert_allclose(mean, [4.5, 5.5, 6.5])
    assert np.all(low < mean) and np.all(high > mean)
    assert mean_ci(np.array([5.0])) == (5.0, -np.inf, np.inf)
    assert mean_ci(np.full(7, 2.5)) == (2.5, 2.5, 2.5)
    with pytest.raises(ValueError, match="level"):
        mean_ci(np.ones(3), level=1.5)


def test_mean_ci_coverage_monte_carlo() -> None:
    rng = np.random.default_rng(1)
    draws = rng.standard_normal((20, 4000))
    _, low, high = mean_ci(draws)
    # each one-sided bound should miss the true mean 0 about 5% of the time
    assert 0.035 < np.mean(high < 0) < 0.065
    assert 0.035 < np.mean(low > 0) < 0.065


def test_loglog_slope_exact_power_law_and_noise() -> None:
    x = np.array([1.0, 2, 4, 8, 16])
    fit = loglog_slope(x, 3.0 * x**-1.0)
    assert fit.slope == pytest.approx(-1.0)
    assert fit.intercept == pytest.approx(np.log(3.0))
    assert fit.ci_low == pytest.approx(-1.0) and fit.ci_high == pytest.approx(-1.0)
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(400):
        y = 2.0 * x**-0.5 * np.exp(0.1 * rng.standard_normal(x.size))
        hits += loglog_slope(x, y).contains(-0.5)
    assert 0.92 < hits / 400 < 0.98
    two = loglog_slope(np.array([1.0, 10.0]), np.array([1.0, 0.1]))
    assert two.slope == pytest.approx(-1.0) and two.ci_high == np.inf
    with pytest.raises(ValueError):
        loglog_slope(np.array([1.0, 1.0]), np.array([1.0, 2.0]))


def test_rounds_to_target() -> None:
    metric = np.array([[5.0, 5.0], [3.0, 1.0], [0.5, 0.7], [2.0, 0.0], [0.1, 0.1], [0.2, 0.0]])
    # means: 5, 2, 0.6, 1, 0.1, 0.1 -> stays <= 1 from round 2 on (1 <= 1 counts)
    assert rounds_to_target(metric, 1.0) == 2
    assert rounds_to_target(metric, 0.5) == 4
    assert rounds_to_target(metric, 0.01) is None
    assert rounds_to_target(metric, 10.0) == 0
    # the upper confidence bound reaches the target later than the mean
    assert rounds_to_target(metric, 0.5, upper=True) is None
    assert rounds_to_target(np.array([3.0, 1.0, np.nan]), 2.0) is None
    assert rounds_to_target(np.array([3.0, 1.0, 0.5]), 2.0) == 1
