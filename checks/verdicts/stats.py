"""Statistics behind the verdicts (design.md, principle 4): t-based confidence intervals for Monte Carlo
means, and log-log slope fits with t-intervals (linear speedup, rates in T).

Every function is pure numpy/scipy and independent of the papers: the checks feed it measured quantities.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _st

__all__ = ["SlopeFit", "loglog_slope", "mean_ci", "t_quantile"]


def t_quantile(level: float, dof: int | np.ndarray, one_sided: bool = True) -> float | np.ndarray:
    """Student-t quantile for a confidence ``level`` in (0, 1): one-sided uses ``level``, two-sided
    ``(1 + level) / 2``. ``dof`` < 1 gives ``inf`` (no interval from a single sample)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    q = level if one_sided else 0.5 * (1.0 + level)
    dof = np.asarray(dof, dtype=float)
    out = np.where(dof >= 1, _st.t.ppf(q, np.maximum(dof, 1.0)), np.inf)
    return float(out) if out.ndim == 0 else out


def mean_ci(samples: np.ndarray, level: float = 0.95, one_sided: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean of ``samples`` along axis 0 with a t-based confidence interval: ``(mean, low, high)``.

    With ``one_sided=True`` (the default, as the verdicts use it) ``high`` is a one-sided upper confidence
    bound at ``level`` and ``low`` a one-sided lower confidence bound at ``level``; with ``one_sided=False``
    ``[low, high]`` is the two-sided interval. A single sample gives ``(-inf, inf)``; constant samples give
    a zero-width interval. Non-finite samples are not dropped: they propagate (a diverged replica must
    not vanish from a mean). Scalars are returned as 0-d arrays converted to float.
    """
    x = np.asarray(samples, dtype=float)
    if x.ndim == 0 or x.shape[0] == 0:
        raise ValueError(f"samples must have at least one entry along axis 0, got shape {x.shape}")
    k = x.shape[0]
    mean = x.mean(axis=0)
    if k == 1:
        low = np.full_like(mean, -np.inf)
        high = np.full_like(mean, np.inf)
    else:
        se = x.std(axis=0, ddof=1) / np.sqrt(k)
        tq = t_quantile(level, k - 1, one_sided)
        with np.errstate(invalid="ignore"):
            half = np.where(se == 0, 0.0, tq * se)
        low, high = mean - half, mean + half
    if np.ndim(mean) == 0:
        return float(mean), float(low), float(high)  # type: ignore[return-value]
    return mean, low, high


@dataclass(frozen=True)
class SlopeFit:
    """OLS fit log y = intercept + slope * log x, with the slope's standard error and two-sided t-interval."""

    slope: float
    intercept: float
    stderr: float
    ci_low: float
    ci_high: float
    points: int = 0

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the slope's confidence interval."""
        return self.ci_low <= value <= self.ci_high

    def to_dict(self) -> dict:
        return asdict(self)


def loglog_slope(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> SlopeFit:
    """Ordinary least squares of ``log y`` on ``log x`` with a two-sided t-interval (``len - 2`` degrees of
    freedom) for the slope. Needs at least two points with positive finite x and y; with exactly two the
    interval is infinite. Repeated x values (several replicas at one n) are allowed and add information."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.size} and {y.size}")
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    lx, ly = np.log(x[ok]), np.log(y[ok])
    k = lx.size
    if k < 2 or np.ptp(lx) == 0:
        raise ValueError(f"loglog_slope needs at least two distinct positive x with positive y, got {k} usable points")
    xm, ym = lx.mean(), ly.mean()
    sxx = float(np.sum((lx - xm) ** 2))
    slope = float(np.sum((lx - xm) * (ly - ym)) / sxx)
    intercept = float(ym - slope * xm)
    if k > 2:
        resid = ly - (intercept + slope * lx)
        s2 = float(np.sum(resid**2) / (k - 2))
        stderr = float(np.sqrt(s2 / sxx))
        half = float(t_quantile(level, k - 2, one_sided=False)) * stderr
    else:
        stderr, half = float("inf"), float("inf")
    return SlopeFit(slope, intercept, stderr, slope - half, slope + half, int(k))
