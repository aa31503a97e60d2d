"""Fewer draws per decided verdict: common random numbers, antithetic pairs, sequential replicas, exact moments.

A sweep cell asks one question: how many rounds does the algorithm need before the replica mean of its target
metric (FedNMap, Theorem 8: E[psi(x_t)] - psi*) falls below the target and stays there (the linear-speedup
measurement of Theorems 5 and 8 and Table 1, rates sigma^2/(nQT))? A cell's answer is *decided* when

- ``reached``: the percentile-bootstrap interval of rounds-to-target (replica units resampled, as in
  :func:`fedbounds.checks.fednmap.speedup.bootstrap_slope`) has half-width <= ``rel_halfwidth`` times the
  estimate (or <= 1 round: rounds are integers), or
- ``not_reached``: the confidence interval of the final-window mean (the last quarter of the rounds, averaged
  per replica unit) lies entirely above the target (a floor above the target: the algorithm loses the speedup),
- ``diverged``: the run blew up (``fedbounds.algorithms.run.Divergence``).

The techniques, each switchable so that its effect can be measured on the same cells
(``benchmarks/bench_efficiency.py``):

- **Common random numbers** (:func:`engine_seed`): a block's engine seed depends only on the cell's seed and the
  block index, never on n, Q, the step constant or the algorithm; every algorithm draws its round-t, step-l
  noise from ``fedbounds.algorithms.rng.stream(seed, t, l)`` on the same (R, n, p) stack, so FedNMap and
  FedAvg-prox at the same (n, Q) see the same gradient noise and a paired difference loses the shared part.
  ``crn = false`` salts the seed with the cell's configuration (independent streams), for the comparison.
- **Antithetic pairs** (:class:`AntitheticOracle`): replica r + R/2 gets the noise -xi of replica r. Each
  replica is still an exact draw, so every mean stays unbiased; the pair mean is the independent unit for
  intervals. It cancels the part of the metric that is odd in the noise (for a quadratic metric around a
  transient, the cross term 2 d^T A L xi), and leaves the even part (the noise floor).
- **Sequential replicas** (:func:`sequential_replicas`): replicas are added in blocks, each sized from the
  interval seen so far (replicas needed scale as the squared ratio of interval widths; at most 3x the replicas
  so far, so the total at most quadruples per step), until the cell is decided or the cap is reached.
- **Exact moments** (:func:`exact_target_curve`): on a linear-Gaussian instance (quadratic f, phi zero or
  squared l2, additive Gaussian noise) ``fedbounds.algorithms.exact.run_exact`` propagates mean and
  covariance in closed form, so E[psi(x_t)] - psi* has no sampling error and needs no replica at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "DEFAULTS",
    "AntitheticOracle",
    "Decision",
    "engine_seed",
    "exact_target_curve",
    "floor_interval",
    "pair_units",
    "rtt_bootstrap",
    "rtt_of_curves",
    "sequential_replicas",
    "validate_efficiency",
]

#: the efficiency settings of a cell (``config["params"]["efficiency"]``) and their defaults
DEFAULTS: dict[str, Any] = {
    "crn": True,  # common random numbers across n, Q, step constants and algorithms
    "antithetic": True,  # replicas in antithetic pairs (the block size must be even)
    "sequential": True,  # add blocks until decided; False: one block of `replicas`
    "cap": 512,  # most replicas per cell
    "rel_halfwidth": 0.05,  # rounds-to-target decided within +-5%
    "level": 0.95,  # two-sided level of every interval
    "bootstrap": 200,  # bootstrap resamples of the replica units
    "window": 0.25,  # final window (fraction of the rounds) for the not-reached decision
    "growth": 4,  # each new block takes the replicas to at most `growth` times those so far
    "exact": False,  # exact moments (linear-Gaussian instances only): no replicas
}


def validate_efficiency(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """The efficiency settings with defaults filled in; a ValueError names an unknown key or a bad value."""
    given = dict(value or {})
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"efficiency: unknown setting(s) {unknown}; allowed: {sorted(DEFAULTS)}")
    out = {**DEFAULTS, **given}
    for key in ("crn", "antithetic", "sequential", "exact"):
        if not isinstance(out[key], bool):
            raise ValueError(f"efficiency.{key}: expected true or false, got {out[key]!r}")
    for key in ("cap", "bootstrap", "growth"):
        if isinstance(out[key], bool) or not isinstance(out[key], int) or out[key] < 2:
            raise ValueError(f"efficiency.{key}: expected an integer >= 2, got {out[key]!r}")
    for key, lo, hi in (("rel_halfwidth", 0.0, 1.0), ("level", 0.0, 1.0), ("window", 0.0, 1.0)):
        v = out[key]
        if isinstance(v, bool) or not isinstance(v, int | float) or not lo < v < hi:
            raise ValueError(f"efficiency.{key}: expected a number in ({lo:g}, {hi:g}), got {v!r}")
        out[key] = float(v)
    return out


# ---------------------------------------------------------------------------------------------- noise


def engine_seed(seed: int, block: int, salt: int = 0) -> int:
    """The engine seed of replica block ``block`` of a cell with seed ``seed``.

    With ``salt = 0`` (common random numbers) it depends on nothing else, so cells that differ only in n, Q,
    a step constant or the algorithm run on the same noise streams. A nonzero ``salt`` (a hash of the cell's
    configuration) gives independent streams."""
    words = np.random.SeedSequence([int(seed), int(block), int(salt) % 2**63]).generate_state(2, np.uint32)
    return int(words[0]) | (int(words[1] & 0x7FFFFFFF) << 32)


@dataclass(frozen=True)
class AntitheticOracle:
    """Additive Gaussian gradient noise in antithetic pairs: on an (R, n, p) stack with R even, replica
    r < R/2 gets g = grad f_i(x) + xi_r and replica r + R/2 gets grad f_i(x) - xi_r, xi ~ N(0, (sigma2/p) I).

    Each replica alone is distributed exactly as under ``GaussianOracle(sigma2)`` (Assumption 3 with
    equality: E||g - grad f_i||^2 = sigma2); the two halves are negatively coupled."""

    sigma2: float
    name: str = "gaussian_antithetic"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.sigma2) and self.sigma2 >= 0):
            raise ValueError(f"sigma2 must be a finite number >= 0, got {self.sigma2!r}")

    def noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """The additive noise of an (R, ..., p) stack: R/2 draws, then their negatives."""
        shape = tuple(int(s) for s in shape)
        if len(shape) < 2 or shape[0] % 2:
            raise ValueError(f"antithetic noise needs an even replica axis, got shape {shape}")
        half = rng.standard_normal((shape[0] // 2, *shape[1:])) * np.sqrt(self.sigma2 / shape[-1])
        return np.concatenate([half, -half])

    def sample(self, problem: Any, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim != 3:
            raise ValueError(f"antithetic sampling needs an (R, n, p) stack, got shape {X.shape}")
        return problem.grad(X) + self.noise(rng, X.shape)

    def variance(self, problem: Any, X: np.ndarray) -> np.ndarray:
        """E||g - grad f_i||^2 = sigma2 at every replica and client."""
        return np.full(np.shape(X)[:-1], float(self.sigma2))


def pair_units(metric: np.ndarray, antithetic: bool) -> np.ndarray:
    """The independent units of a block's ``(rounds + 1, R)`` metric: the replicas, or with antithetic pairs
    the pair means ``(m[:, r] + m[:, r + R/2]) / 2`` (the pairs are independent of each other)."""
    m = np.asarray(metric, dtype=float)
    if not antithetic:
        return m
    h = m.shape[1] // 2
    return 0.5 * (m[:, :h] + m[:, h:])


# ---------------------------------------------------------------------------------------------- intervals


def rtt_of_curves(curves: np.ndarray, target: float) -> np.ndarray:
    """Rounds to target of every column of ``curves`` (rounds + 1, B): the first t with the column <= target
    at t and at every later round; -1 where the column does not end below the target (not reached).

    Column by column this is :func:`fedbounds.checks.fednmap.speedup.rounds_to_target` of a one-replica curve."""
    c = np.asarray(curves, dtype=float)
    below = np.isfinite(c) & (c <= target)
    rev = ~below[::-1]
    last_bad = c.shape[0] - 1 - np.argmax(rev, axis=0)
    rtt = np.where(rev.any(axis=0), last_bad + 1, 0)
    return np.where(below[-1], rtt, -1).astype(np.int64)


def rtt_bootstrap(
    units: np.ndarray, target: float, *, B: int, seed: int, level: float = 0.95
) -> tuple[int | None, float, float, np.ndarray]:
    """Rounds to target of the unit mean and its percentile-bootstrap interval (units resampled with
    replacement, ``B`` times, seeded). Returns ``(rtt or None, low, high, bootstrap rtts)``; a resample that
    does not reach the target counts as +inf, so ``high`` is inf when more than (1 - level)/2 of them miss."""
    u = np.asarray(units, dtype=float)
    U = u.shape[1]
    point = rtt_of_curves(u.mean(axis=1, keepdims=True), target)[0]
    rng = np.random.default_rng([int(seed), 31415])
    counts = rng.multinomial(U, np.full(U, 1.0 / U), size=B).astype(float) / U  # (B, U) resampling weights
    boot = np.empty(B, dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        for a in range(0, B, 50):
            boot[a : a + 50] = rtt_of_curves(u @ counts[a : a + 50].T, target)
    vals = np.where(boot < 0, np.inf, boot.astype(float))
    q = (1.0 - level) / 2.0
    lo, hi = np.quantile(vals, [q, 1.0 - q], method="inverted_cdf")
    return (None if point < 0 else int(point)), float(lo), float(hi), boot


def floor_interval(units: np.ndarray, *, window: float, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of the target metric over the final ``window`` of the rounds, averaged per unit, with its
    two-sided t-interval over units: ``(mean, low, high)``."""
    from fedbounds.checks.verdicts.stats import mean_ci

    u = np.asarray(units, dtype=float)
    k = max(1, math.ceil(window * (u.shape[0] - 1)))
    per_unit = u[-k:].mean(axis=0)
    m, lo, hi = mean_ci(per_unit, level=level, one_sided=False)
    return float(m), float(lo), float(hi)


@dataclass
class Decision:
    """Where a cell stands after some replicas: ``status`` in reached / not_reached / diverged / undecided
    (undecided: the cap was hit first), the estimate, its interval, the units and replicas used, and the
    units the current interval says would decide it (``units_needed``)."""

    status: str
    rtt: int | None
    ci: tuple[float, float]
    floor: tuple[float, float, float]
    units: int
    replicas: int
    blocks: int
    units_needed: float
    boot: list[int] = field(default_factory=list)


def decide(units: np.ndarray, target: float, eff: Mapping[str, Any], *, seed: int, replicas: int, blocks: int) -> Decision:
    """The decision on ``units`` (rounds + 1, U) for ``target`` (see the module docstring)."""
    U = units.shape[1]
    rtt, lo, hi, boot = rtt_bootstrap(units, target, B=eff["bootstrap"], seed=seed, level=eff["level"])
    fl = floor_interval(units, window=eff["window"], level=eff["level"])
    if rtt is not None and math.isfinite(hi):
        half, allowed = (hi - lo) / 2.0, max(eff["rel_halfwidth"] * rtt, 1.0)
        status = "reached" if half <= allowed else "undecided"
        need = U * (half / allowed) ** 2
    elif fl[1] > target:
        status, need = "not_reached", float(U)
    else:
        status = "undecided"
        gap = abs(fl[0] - target)
        half = (fl[2] - fl[1]) / 2.0
        need = U * (half / gap) ** 2 if gap > 0 else math.inf
        if rtt is not None:  # reached, but too many resamples miss: at least double
            need = max(need, 2.0 * U)
    return Decision(status, rtt, (lo, hi), fl, U, replicas, blocks, float(need), [int(b) for b in boot])


def sequential_replicas(
    run_block: Callable[[int, int], tuple[np.ndarray, Any]],
    target: float,
    eff: Mapping[str, Any],
    *,
    block: int,
    seed: int,
) -> tuple[Decision, np.ndarray, Any]:
    """Add replica blocks until the cell is decided or ``eff["cap"]`` replicas are used.

    ``run_block(b, R)`` runs block ``b`` with ``R`` replicas and returns its ``(rounds + 1, R)`` target metric
    and its divergence (None if none). Each new block is sized from the current interval (units needed =
    units * (half-width / allowed)^2), rounded up to a multiple of ``block``, and at most the cap. Returns the
    decision, the units (rounds + 1, U) and the divergence."""
    per_unit = 2 if eff["antithetic"] else 1
    parts: list[np.ndarray] = []
    used, b = 0, 0
    R = block
    while True:
        metric, divergence = run_block(b, R)
        b += 1
        used += R
        if divergence is not None:
            units = pair_units(metric, eff["antithetic"])
            return Decision("diverged", None, (math.nan, math.nan), (math.nan,) * 3, units.shape[1], used, b, math.nan), units, divergence
        parts.append(pair_units(metric, eff["antithetic"]))
        units = np.hstack(parts) if len(parts) > 1 else parts[0]
        d = decide(units, target, eff, seed=seed, replicas=used, blocks=b)
        if d.status != "undecided" or not eff["sequential"] or used >= eff["cap"]:
            return d, units, None
        cap_step = (eff.get("growth", 4) - 1) * used
        # the projection, but at least one block and at most (growth - 1)x the replicas so far: a bimodal bootstrap (a late
        # excursion of the mean above the target in some resamples) overstates the need while few units are in
        more = min(max(d.units_needed * per_unit - used, block), cap_step) if math.isfinite(d.units_needed) else cap_step
        R = int(min(math.ceil(more / block), (eff["cap"] - used) // block) * block)
        if R <= 0:  # the cap is not a multiple of the block: no whole block fits any more
            return d, units, None


# ---------------------------------------------------------------------------------------------- exact moments


def exact_target_curve(algorithm: str, problem: Any, params: Mapping[str, Any], *, rounds: int, sigma2: float, metric: str) -> np.ndarray:
    """E[metric] for t = 0..rounds by exact moment propagation (``fedbounds.algorithms.exact.run_exact``) on a
    linear-Gaussian instance; a ValueError if the instance is not one (an l1 phi, say). Shape (rounds + 1, 1)."""
    from fedbounds.algorithms.exact import run_exact
    from fedbounds.algorithms.oracles import GaussianOracle

    ex = run_exact(algorithm, problem, dict(params), rounds=rounds, oracle=GaussianOracle(sigma2))
    curve = getattr(ex, f"E_{metric}", None)
    if curve is None:
        raise ValueError(f"exact mode has no expectation of {metric!r} for {algorithm!r}")
    return np.asarray(curve, dtype=float)[:, None]


# ---------------------------------------------------------------------------------------------- the study's tables


@dataclass
class StudyPoint:
    """One (method, n, Q) after tuning the step constant: the chosen cell's numbers."""

    method: str
    n: int
    Q: int
    eta_s: float
    decision: str
    rtt: int | None
    ci: tuple[float | None, float | None]
    replicas: int
    boot: list[int]


def study_points(rows: list[dict]) -> list[StudyPoint]:
    """Per (method, n, Q), the step constant with the fewest rounds among the decided ``reached`` cells (else
    the first cell, kept as not reached / undecided). ``rows`` are dicts with ``coords`` and ``result``."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        c = r["coords"]
        groups.setdefault((c["method"], int(c["n"]), int(c["Q"])), []).append(r)
    out = []
    for (method, n, Q), cands in sorted(groups.items()):
        reached = [r for r in cands if r["result"].get("decision") == "reached"]
        pick = min(reached, key=lambda r: (r["result"]["rounds_to_target"], r["coords"]["eta_s"])) if reached else cands[0]
        res = pick["result"]
        ci = res.get("rtt_ci") or [None, None]
        out.append(
            StudyPoint(
                method,
                n,
                Q,
                float(pick["coords"]["eta_s"]),
                str(res.get("decision")),
                res.get("rounds_to_target"),
                (ci[0], ci[1]),
                int(res.get("replicas_used", 0)),
                list(res.get("rtt_boot") or []),
            )
        )
    return out


def bootstrap_fit(points: list[StudyPoint], x_of: Callable[[StudyPoint], float], *, level: float = 0.95) -> dict[str, Any] | None:
    """Log-log OLS slope of rounds-to-target on ``x_of(point)`` over the decided ``reached`` points, with a
    percentile-bootstrap interval: resample b refits on every point's b-th bootstrap rounds-to-target (the
    replica units resampled within each cell, as in ``fedbounds.checks.fednmap.speedup.bootstrap_slope``); a
    resample where some point misses the target is dropped (``complete`` = fraction kept)."""
    from fedbounds.checks.verdicts.stats import loglog_slope

    pts = [p for p in points if p.decision == "reached" and p.rtt]
    xs = np.array([x_of(p) for p in pts], dtype=float)
    if len(pts) < 2 or np.ptp(np.log(xs)) == 0:
        return None
    fit = loglog_slope(xs, np.array([p.rtt for p in pts], dtype=float), level=level)
    B = min((len(p.boot) for p in pts), default=0)
    slopes = []
    for b in range(B):
        ys = np.array([p.boot[b] for p in pts], dtype=float)
        if np.all(ys > 0):
            slopes.append(loglog_slope(xs, ys).slope)
    q = (1.0 - level) / 2.0
    lo, hi = np.quantile(slopes, [q, 1.0 - q]) if slopes else (math.nan, math.nan)
    return {
        "slope": fit.slope,
        "intercept": fit.intercept,
        "boot_low": float(lo),
        "boot_high": float(hi),
        "ols_low": fit.ci_low,
        "ols_high": fit.ci_high,
        "points": len(pts),
        "complete": len(slopes) / B if B else 0.0,
    }


def _slope_rows(points: list[StudyPoint]) -> list[dict[str, Any]]:
    """Slopes in n (one per method and Q), in Q (one per method and n) and in nQ (one per method, and per
    method on nQ <= 64, the range before the step cap eta_s <= 2 binds for either step constant)."""
    rows = []
    for method in dict.fromkeys(p.method for p in points):
        mp = [p for p in points if p.method == method]
        fits: list[tuple[str, str, list[StudyPoint], Callable[[StudyPoint], float]]] = []
        fits += [("n", f"Q={Q}", [p for p in mp if p.Q == Q], lambda p: p.n) for Q in sorted({p.Q for p in mp})]
        fits += [("Q", f"n={n}", [p for p in mp if p.n == n], lambda p: p.Q) for n in sorted({p.n for p in mp})]
        fits += [("nQ", "all", mp, lambda p: p.n * p.Q), ("nQ", "nQ<=64", [p for p in mp if p.n * p.Q <= 64], lambda p: p.n * p.Q)]
        for axis, series, pts, x_of in fits:
            f = bootstrap_fit(pts, x_of)
            rows.append(
                {"method": method, "axis": axis, "series": series, "excluded": sum(p.decision != "reached" for p in pts), **(f or {})}
            )
    return rows


def comparison_figure(points: list[StudyPoint], slopes: list[dict[str, Any]], path: Any) -> None:
    """Rounds to target against nQ, ONE panel comparing the methods (log-log): per method its reached points
    (markers, with their 95% bootstrap intervals) and its fitted power law (a line over the points' range), the
    fitted slope rounded to 2 decimals in the legend with its bootstrap interval (``slopes``: the ``nQ``/``all``
    rows of :func:`_slope_rows` or of ``slopes.csv``), and a slope -1 guide anchored at the first method's
    n = Q = 1 point. A method with no fit is listed as such."""
    from matplotlib.figure import Figure

    fits = {r["method"]: r for r in slopes if r.get("axis") == "nQ" and r.get("series") == "all"}
    methods = list(dict.fromkeys(p.method for p in points))
    fig = Figure(figsize=(7.2, 5.0), layout="constrained")
    ax = fig.subplots()
    markers = "osD^vP*X"
    for i, method in enumerate(methods):
        mp = [p for p in points if p.method == method]
        ok = sorted((p for p in mp if p.decision == "reached" and p.rtt), key=lambda p: p.n * p.Q)
        fit = fits.get(method) or {}
        slope = fit.get("slope")
        label = f"{method} ({len(ok)} of {len(mp)} points reached)"
        if slope is not None and math.isfinite(slope):
            lo, hi = fit.get("boot_low"), fit.get("boot_high")
            ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi) else ""
            label += f": slope {slope:.2f}{ci}"
        else:
            label += ": no fit"
        # methods whose curves coincide (FedNMap with and without its correction here) stay visible: each later
        # method is drawn thinner, on top, in its own dash pattern and marker
        color, lw, dash, z = f"C{i}", max(2.8 - 0.6 * i, 1.0), ("-", "--", "-.", ":")[i % 4], 2 + i
        if ok:
            x = np.array([p.n * p.Q for p in ok], dtype=float)
            y = np.array([p.rtt for p in ok], dtype=float)
            lo_ = np.array([p.ci[0] if p.ci[0] is not None else p.rtt for p in ok], dtype=float)
            hi_ = np.array([p.ci[1] if p.ci[1] is not None else p.rtt for p in ok], dtype=float)
            ax.errorbar(x, y, yerr=[np.clip(y - lo_, 0, None), np.clip(hi_ - y, 0, None)], marker=markers[i % len(markers)],
                        ms=7 - i if i < 4 else 4, capsize=2, ls="none", color=color, alpha=0.8, mfc="none" if i % 2 else color, zorder=z)
            intercept = fit.get("intercept")
            if slope is not None and math.isfinite(slope):
                if intercept is None:  # slopes.csv has no intercept: the OLS line through the points' mean
                    intercept = float(np.mean(np.log(y)) - slope * np.mean(np.log(x)))
                xx = np.geomspace(x.min(), x.max(), 20)
                ax.plot(xx, np.exp(intercept) * xx**slope, color=color, lw=lw, ls=dash, zorder=z)
        ax.plot([], [], color=color, lw=lw, marker=markers[i % len(markers)], mfc="none" if i % 2 else color, ls=dash, label=label)
    ref = [p for p in points if p.decision == "reached" and p.rtt and p.n * p.Q == 1]
    if ref:
        xx = np.geomspace(1, max(p.n * p.Q for p in points), 20)
        ax.plot(xx, ref[0].rtt / xx, ls=(0, (1, 3)), color="0.4", lw=1, label="slope -1 (linear speedup)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("nQ (clients x local steps)")
    ax.set_ylabel("rounds to E[psi - psi*] <= target")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title("Rounds to target against nQ, per method\n(best step constant; 95% bootstrap intervals; fitted slopes in the legend)",
                 fontsize=10)
    fig.savefig(path, dpi=100)


def read_study_csv(out_dir: Any) -> tuple[list[StudyPoint], list[dict[str, Any]]]:
    """The study's points and slope rows from its committed ``points.csv`` and ``slopes.csv`` (no store needed;
    the points carry no bootstrap draws, so nothing is refitted from them)."""
    import csv
    from pathlib import Path

    def num(v: str) -> float | None:
        return float(v) if v not in ("", None) else None

    out = Path(out_dir)
    with open(out / "points.csv", newline="") as fh:
        points = [
            StudyPoint(r["method"], int(r["n"]), int(r["Q"]), float(r["eta_s"]), r["decision"],
                       None if r["rounds_to_target"] == "" else int(float(r["rounds_to_target"])),
                       (num(r["ci_low"]), num(r["ci_high"])), int(r["replicas_used"]), [])
            for r in csv.DictReader(fh)
        ]
    with open(out / "slopes.csv", newline="") as fh:
        slopes = [{k: (v if k in ("method", "axis", "series") else num(v)) for k, v in r.items()} for r in csv.DictReader(fh)]
    return points, slopes


def _figure(points: list[StudyPoint], axis: str, path: Any) -> None:
    """Rounds to target against ``axis`` (n or Q), one panel per method, log-log, one line per value of the other
    axis, with a slope -1 guide (against nQ: :func:`comparison_figure`, one panel comparing the methods)."""
    from matplotlib.figure import Figure

    methods = list(dict.fromkeys(p.method for p in points))
    fig = Figure(figsize=(4.2 * len(methods), 3.8), layout="constrained")
    axes = fig.subplots(1, len(methods), squeeze=False, sharey=True)[0]
    other = {"n": "Q", "Q": "n", "nQ": None}[axis]
    for ax, method in zip(axes, methods, strict=True):
        mp = [p for p in points if p.method == method]
        keys = sorted({getattr(p, other) for p in mp}) if other else [None]
        for k in keys:
            sp = sorted((p for p in mp if other is None or getattr(p, other) == k), key=lambda p: p.n * p.Q)
            ok = [p for p in sp if p.decision == "reached" and p.rtt]
            if not ok:
                continue
            x = np.array([p.n * p.Q if axis == "nQ" else getattr(p, axis) for p in ok], dtype=float)
            y = np.array([p.rtt for p in ok], dtype=float)
            lo = np.array([p.ci[0] if p.ci[0] is not None else p.rtt for p in ok], dtype=float)
            hi = np.array([p.ci[1] if p.ci[1] is not None else p.rtt for p in ok], dtype=float)
            ax.errorbar(
                x,
                y,
                yerr=[np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)],
                marker="o",
                ms=3,
                capsize=2,
                ls="none" if axis == "nQ" else "-",
                label=f"{other}={k}" if other else "all",
            )
        missed = sum(p.decision != "reached" for p in mp)
        ref = [p for p in mp if p.decision == "reached" and p.rtt and p.n * p.Q == 1]
        if ref:
            xx = np.geomspace(1, max(p.n * p.Q if axis == "nQ" else getattr(p, axis) for p in mp), 20)
            ax.plot(xx, ref[0].rtt / xx, ls="--", color="0.5", lw=1, label="slope -1")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(axis)
        ax.set_title(f"{method} ({missed} of {len(mp)} points not reached)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    axes[0].set_ylabel("rounds to E[psi - psi*] <= target")
    fig.suptitle(f"Rounds to target against {axis} (best step constant; 95% bootstrap intervals)", fontsize=10)
    fig.savefig(path, dpi=100)


def _csv(path: Any, header: list[str], rows: list[list[Any]]) -> None:
    import csv

    def fmt(v: Any) -> str:
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return ""
        return repr(v) if isinstance(v, float) else str(v)

    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows([[fmt(v) for v in r] for r in rows])


def write_study(store_path: Any, out_dir: Any) -> dict[str, Any]:
    """Write the study's ``cells.csv`` (every cell), ``points.csv`` (after tuning the step constant),
    ``slopes.csv`` (bootstrap slopes in n, Q and nQ) and ``rounds_vs_{n,Q,nQ}.png`` into ``out_dir``; returns
    a summary (cells, replicas, decisions, CPU seconds of the cells)."""
    from pathlib import Path

    from fedbounds.checks.sweep.store import Store

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with Store(store_path, readonly=True) as st:
        rows = [{"coords": r.coords, "config": r.config, "result": r.result, "elapsed": r.elapsed} for r in st.rows(curves=False)]
    rows.sort(key=lambda r: (r["coords"]["method"], r["coords"]["n"], r["coords"]["Q"], r["coords"]["eta_s"], r["coords"]["seed"]))
    head = [
        "method",
        "n",
        "Q",
        "eta_s",
        "seed",
        "rounds",
        "decision",
        "rounds_to_target",
        "ci_low",
        "ci_high",
        "replicas_used",
        "blocks",
        "floor",
        "floor_low",
        "floor_high",
        "elapsed_s",
    ]
    _csv(
        out / "cells.csv",
        head,
        [
            [r["coords"][k] for k in ("method", "n", "Q", "eta_s", "seed")]
            + [r["config"]["rounds"]]
            + [r["result"].get(k) for k in ("decision", "rounds_to_target")]
            + list(r["result"].get("rtt_ci") or [None, None])
            + [r["result"].get("replicas_used"), r["result"].get("blocks")]
            + list(r["result"].get("floor") or [None] * 3)
            + [round(r["elapsed"], 3)]
            for r in rows
        ],
    )
    points = study_points(rows)
    _csv(
        out / "points.csv",
        ["method", "n", "Q", "nQ", "eta_s", "decision", "rounds_to_target", "ci_low", "ci_high", "replicas_used"],
        [[p.method, p.n, p.Q, p.n * p.Q, p.eta_s, p.decision, p.rtt, p.ci[0], p.ci[1], p.replicas] for p in points],
    )
    slopes = _slope_rows(points)
    cols = ["method", "axis", "series", "slope", "boot_low", "boot_high", "ols_low", "ols_high", "points", "excluded", "complete"]
    _csv(out / "slopes.csv", cols, [[s.get(c) for c in cols] for s in slopes])
    for axis in ("n", "Q"):
        _figure(points, axis, out / f"rounds_vs_{axis}.png")
    comparison_figure(points, slopes, out / "rounds_vs_nQ.png")
    decisions: dict[str, int] = {}
    for r in rows:
        decisions[r["result"].get("decision", "?")] = decisions.get(r["result"].get("decision", "?"), 0) + 1
    reps = [int(r["result"].get("replicas_used", 0)) for r in rows]
    return {
        "cells": len(rows),
        "replicas": sum(reps),
        "decisions": decisions,
        "cell_seconds": sum(r["elapsed"] for r in rows),
        "replicas_per_decided_cell": sum(reps) / max(1, sum(v for k, v in decisions.items() if k != "undecided")),
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m fedbounds.checks.studies.fednmap_speedup STORE OUT``: write the study's tables and figures."""
    import json
    import os
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "--figure":  # redraw rounds_vs_nQ.png from the committed CSVs
        points, slopes = read_study_csv(args[1])
        comparison_figure(points, slopes, os.path.join(args[1], "rounds_vs_nQ.png"))
        return 0
    if len(args) != 2:
        print("usage: python -m fedbounds.checks.studies.fednmap_speedup STORE OUT_DIR\n"
              "       python -m fedbounds.checks.studies.fednmap_speedup --figure OUT_DIR  (rounds_vs_nQ.png from its CSVs)",
              file=sys.stderr)
        return 2
    print(json.dumps(write_study(args[0], args[1]), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
