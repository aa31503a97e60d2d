"""Regularisers phi with closed-form prox operators, batched over leading axes.

Each has ``value(x)`` (over the last axis), ``prox(z, gamma)`` and ``rho``, its weak-convexity modulus
(phi + rho/2 ||.||^2 is convex). ``prox`` raises a ValueError unless 0 < gamma < 1/rho, the range in which
u -> phi(u) + ||u - z||^2 / (2 gamma) is strongly convex, so the prox is single-valued and
1/(1 - gamma rho)-Lipschitz (Rockafellar & Wets, Variational Analysis, Prop. 12.19; FedNMap Assumption 1).

Formulas: soft thresholding and block soft thresholding (Parikh & Boyd, Proximal Algorithms, 2014, sec. 6.5),
projections onto a box and an l2 ball (ibid. sec. 6.2), MCP (Zhang, Ann. Statist. 2010; prox = firm
thresholding, Gao & Bruce 1997), SCAD (Fan & Li, JASA 2001, eq. (2.8) for gamma = 1). The MCP and SCAD proxes
below are derived for a general gamma from the stationarity condition on each piece; the docstrings say how.

``make_regularizer(name, **params)`` builds one from a spec; ``REGULARIZERS`` maps names to classes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from fedbounds.algorithms._validate import InvalidParameterError, check_array, check_real, describe
from fedbounds.algorithms.base import check_gamma, check_positive

#: relative slack with which a point on the boundary of an l2 ball counts as inside (rounding in r z/||z||)
BALL_TOL = 1e-12


def _as_points(x: np.ndarray, arg: str) -> np.ndarray:
    """``x`` as a float array of points ``(..., p)``; a 0-d input is a ValueError naming ``arg``."""
    a = check_array(arg, x, finite=False, nonempty=False)
    if a.ndim == 0:
        raise InvalidParameterError(arg, f"{arg} must have shape (..., p) with at least one axis, got a 0-d array")
    return a


def _soft(z: np.ndarray, t: float) -> np.ndarray:
    """Soft thresholding sign(z) max(|z| - t, 0), the prox of t |.|, computed as z - clip(z, -t, t).

    The two forms agree exactly in floating point (z - (+-t) is the same rounding as +-(|z| - t)); this one makes
    a single array and two passes instead of five (it returns +0.0 where the other returns -0.0).
    """
    out = np.clip(z, -t, t)
    np.subtract(z, out, out=out)
    return out


def _check_gamma_below(gamma: float, rho: float, bound: float) -> float:
    """check_gamma, and also gamma < ``bound`` = 1/rho as the prox formula writes it (theta for MCP, a - 1 for
    SCAD): gamma = bound can pass gamma * rho < 1 by rounding, and the formula would then divide by zero."""
    g = check_gamma(gamma, rho)
    if g >= bound:
        raise ValueError(f"gamma must lie in (0, 1/rho) = (0, {bound:.6g}) for rho = {rho:g}, got {gamma!r}")
    return g


@dataclass(frozen=True)
class Zero:
    """phi = 0 (smooth problems)."""

    name: str = "zero"

    @property
    def rho(self) -> float:
        return 0.0

    def value(self, x: np.ndarray) -> np.ndarray:
        return np.zeros(_as_points(x, "x").shape[:-1])

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        return np.array(_as_points(z, "z"), dtype=float, copy=True)


@dataclass(frozen=True)
class L1:
    """phi(x) = weight * ||x||_1; prox is soft thresholding at gamma * weight."""

    weight: float = 1.0
    name: str = "l1"

    def __post_init__(self) -> None:
        check_positive("weight", self.weight, strict=False)

    @property
    def rho(self) -> float:
        return 0.0

    def value(self, x: np.ndarray) -> np.ndarray:
        return self.weight * np.abs(_as_points(x, "x")).sum(axis=-1)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        return _soft(_as_points(z, "z"), gamma * self.weight)


@dataclass(frozen=True)
class SquaredL2:
    """phi(x) = weight/2 ||x||^2; prox_{gamma phi}(z) = z / (1 + gamma weight)."""

    weight: float = 1.0
    name: str = "squared_l2"

    def __post_init__(self) -> None:
        check_positive("weight", self.weight, strict=False)

    @property
    def rho(self) -> float:
        return 0.0

    def value(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * self.weight * np.square(_as_points(x, "x")).sum(axis=-1)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        return _as_points(z, "z") / (1.0 + gamma * self.weight)


@dataclass(frozen=True)
class ElasticNet:
    """phi(x) = l1 ||x||_1 + l2/2 ||x||^2; prox = soft(z, gamma l1) / (1 + gamma l2) (Parikh & Boyd 6.5.3)."""

    l1: float = 1.0
    l2: float = 1.0
    name: str = "elastic_net"

    def __post_init__(self) -> None:
        check_positive("l1", self.l1, strict=False)
        check_positive("l2", self.l2, strict=False)

    @property
    def rho(self) -> float:
        return 0.0

    def value(self, x: np.ndarray) -> np.ndarray:
        x = _as_points(x, "x")
        return self.l1 * np.abs(x).sum(axis=-1) + 0.5 * self.l2 * np.square(x).sum(axis=-1)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        return _soft(_as_points(z, "z"), gamma * self.l1) / (1.0 + gamma * self.l2)


def _bound(name: str, v: float | tuple[float, ...]) -> float | tuple[float, ...]:
    """A box bound as a float or a tuple of floats (hashable, so the dataclass stays frozen and hashable)."""
    a = check_array(name, v, ndim=(0, 1), finite=False, nonempty=False)
    if a.ndim > 1 or a.size == 0 or np.isnan(a).any():
        raise ValueError(f"{name} must be a number or a non-empty 1-d vector without NaN, got {v!r}")
    return float(a) if a.ndim == 0 else tuple(float(t) for t in a)


@dataclass(frozen=True)
class BoxIndicator:
    """phi = indicator of {lower <= x <= upper} (0 inside, +inf outside); prox = clip(z, lower, upper).

    ``lower`` and ``upper`` are numbers or vectors of length p (infinite entries allowed).
    """

    lower: float | tuple[float, ...] = -1.0
    upper: float | tuple[float, ...] = 1.0
    name: str = "box"

    def __post_init__(self) -> None:
        object.__setattr__(self, "lower", _bound("lower", self.lower))
        object.__setattr__(self, "upper", _bound("upper", self.upper))
        lo, hi = np.asarray(self.lower), np.asarray(self.upper)
        if lo.ndim == 1 and hi.ndim == 1 and lo.size != hi.size:
            raise ValueError(f"lower and upper must have the same length, got {lo.size} and {hi.size}")
        if np.any(lo > hi):
            raise ValueError(f"lower must be <= upper entrywise, got lower={self.lower!r}, upper={self.upper!r}")

    @property
    def rho(self) -> float:
        return 0.0

    def _bounds(self, x: np.ndarray, arg: str) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.asarray(self.lower), np.asarray(self.upper)
        for nm, b in (("lower", lo), ("upper", hi)):
            if b.ndim == 1 and b.size != x.shape[-1]:
                raise ValueError(f"{arg} has last axis {x.shape[-1]} but {nm} has length {b.size}")
        return lo, hi

    def value(self, x: np.ndarray) -> np.ndarray:
        x = _as_points(x, "x")
        lo, hi = self._bounds(x, "x")
        inside = np.all((x >= lo) & (x <= hi), axis=-1)
        return np.where(inside, 0.0, np.inf)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        z = _as_points(z, "z")
        lo, hi = self._bounds(z, "z")
        return np.clip(z, lo, hi)


@dataclass(frozen=True)
class L2BallIndicator:
    """phi = indicator of {||x|| <= radius}; prox = z min(1, radius/||z||).

    ``value`` counts ||x|| <= radius (1 + BALL_TOL) as inside, so the prox's own (rounded) output is feasible.
    """

    radius: float = 1.0
    name: str = "l2_ball"

    def __post_init__(self) -> None:
        check_positive("radius", self.radius, strict=False)

    @property
    def rho(self) -> float:
        return 0.0

    def value(self, x: np.ndarray) -> np.ndarray:
        norm = np.linalg.norm(_as_points(x, "x"), axis=-1)
        return np.where(norm <= self.radius * (1.0 + BALL_TOL), 0.0, np.inf)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        z = _as_points(z, "z")
        norm = np.linalg.norm(z, axis=-1, keepdims=True)
        return z * np.where(norm > self.radius, self.radius / np.where(norm > 0, norm, 1.0), 1.0)


def _groups(groups: int | tuple[tuple[int, ...], ...]) -> int | tuple[tuple[int, ...], ...]:
    """Validate ``groups``: a positive group size, or disjoint non-empty index tuples covering 0..p-1."""
    if isinstance(groups, (int, np.integer)) and not isinstance(groups, bool):
        if groups < 1:
            raise ValueError(f"groups (a group size) must be an integer >= 1, got {groups!r}")
        return int(groups)
    try:
        gs = tuple(tuple(int(i) for i in g) for g in groups)
    except TypeError:
        raise ValueError(f"groups must be a group size or a tuple of index tuples, got {groups!r}") from None
    flat = sorted(i for g in gs for i in g)
    if not gs or any(len(g) == 0 for g in gs) or flat != list(range(len(flat))):
        raise ValueError(f"groups must be non-empty, disjoint index tuples that partition 0..p-1, got {groups!r}")
    return gs


@dataclass(frozen=True)
class GroupLasso:
    """phi(x) = weight * sum_g ||x_g||_2; prox is block soft thresholding x_g max(0, 1 - gamma weight/||z_g||).

    ``groups`` is a group size s (consecutive blocks of s coordinates; p must be a multiple of s) or a tuple
    of disjoint index tuples that partition 0..p-1 (then p is their total size).
    """

    weight: float = 1.0
    groups: int | tuple[tuple[int, ...], ...] = 1
    name: str = "group_lasso"

    def __post_init__(self) -> None:
        check_positive("weight", self.weight, strict=False)
        object.__setattr__(self, "groups", _groups(self.groups))

    @property
    def rho(self) -> float:
        return 0.0

    def index_groups(self, p: int, arg: str = "x") -> list[np.ndarray]:
        """The groups as index arrays for dimension ``p``; a mismatch is a ValueError naming ``groups``."""
        if isinstance(self.groups, int):
            if p % self.groups:
                raise ValueError(f"{arg} has last axis {p}, not a multiple of the group size groups={self.groups}")
            return [np.arange(s, s + self.groups) for s in range(0, p, self.groups)]
        total = sum(len(g) for g in self.groups)
        if p != total:
            raise ValueError(f"{arg} has last axis {p} but groups partition {total} coordinates")
        return [np.asarray(g) for g in self.groups]

    def value(self, x: np.ndarray) -> np.ndarray:
        x = _as_points(x, "x")
        gs = self.index_groups(x.shape[-1], "x")
        return self.weight * sum(np.linalg.norm(x[..., g], axis=-1) for g in gs)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        z = _as_points(z, "z")
        gs, t = self.index_groups(z.shape[-1], "z"), gamma * self.weight
        out = np.array(z, copy=True)
        if t == 0.0:
            return out
        for g in gs:
            zg = z[..., g]
            norm = np.linalg.norm(zg, axis=-1, keepdims=True)
            out[..., g] = zg * np.where(norm > t, 1.0 - t / np.where(norm > 0, norm, 1.0), 0.0)
        return out


@dataclass(frozen=True)
class MCP:
    """Minimax concave penalty (Zhang 2010), coordinatewise:
    phi(t) = lam |t| - t^2/(2 theta) for |t| <= theta lam, theta lam^2 / 2 otherwise; rho = 1/theta.

    prox_{gamma phi} for 0 < gamma < theta (firm thresholding): 0 for |z| <= gamma lam;
    sign(z) (|z| - gamma lam) / (1 - gamma/theta) for gamma lam < |z| <= theta lam; z for |z| > theta lam.
    (Middle piece: stationarity lam sign(u) - u/theta + (u - z)/gamma = 0. It meets the outer pieces
    continuously at |z| = gamma lam and |z| = theta lam.)
    """

    lam: float = 1.0
    theta: float = 3.0
    name: str = "mcp"

    def __post_init__(self) -> None:
        check_positive("lam", self.lam, strict=False)
        check_positive("theta", self.theta)

    @property
    def rho(self) -> float:
        return 1.0 / self.theta

    def value(self, x: np.ndarray) -> np.ndarray:
        a = np.abs(_as_points(x, "x"))
        lam, th = self.lam, self.theta
        inner = lam * a - a * a / (2.0 * th)
        return np.where(a <= th * lam, inner, 0.5 * th * lam * lam).sum(axis=-1)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        _check_gamma_below(gamma, self.rho, self.theta)
        z = _as_points(z, "z")
        a, lam, th = np.abs(z), self.lam, self.theta
        mid = np.sign(z) * (a - gamma * lam) / (1.0 - gamma / th)
        return np.where(a <= gamma * lam, 0.0, np.where(a <= th * lam, mid, z))


@dataclass(frozen=True)
class SCAD:
    """Smoothly clipped absolute deviation (Fan & Li 2001), coordinatewise, a > 2:
    phi(t) = lam |t| for |t| <= lam; (2 a lam |t| - t^2 - lam^2) / (2 (a - 1)) for lam < |t| <= a lam;
    (a + 1) lam^2 / 2 for |t| > a lam. rho = 1/(a - 1) (the middle piece has curvature -1/(a - 1)).

    prox_{gamma phi} for 0 < gamma < a - 1: soft(z, gamma lam) for |z| <= (1 + gamma) lam;
    ((a - 1) z - sign(z) a lam gamma) / (a - 1 - gamma) for (1 + gamma) lam < |z| <= a lam; z for |z| > a lam.
    (Middle piece: stationarity (a lam sign(u) - u)/(a - 1) + (u - z)/gamma = 0. At gamma = 1 this is Fan & Li
    (2.8), ((a - 1) z - sign(z) a lam)/(a - 2).)
    """

    lam: float = 1.0
    a: float = 3.7
    name: str = "scad"

    def __post_init__(self) -> None:
        check_positive("lam", self.lam, strict=False)
        check_real("a", self.a, low=2.0, low_open=True)

    @property
    def rho(self) -> float:
        return 1.0 / (self.a - 1.0)

    def value(self, x: np.ndarray) -> np.ndarray:
        t = np.abs(_as_points(x, "x"))
        lam, a = self.lam, self.a
        mid = (2.0 * a * lam * t - t * t - lam * lam) / (2.0 * (a - 1.0))
        out = np.where(t <= lam, lam * t, np.where(t <= a * lam, mid, 0.5 * (a + 1.0) * lam * lam))
        return out.sum(axis=-1)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        _check_gamma_below(gamma, self.rho, self.a - 1.0)
        z = _as_points(z, "z")
        t, lam, a = np.abs(z), self.lam, self.a
        mid = ((a - 1.0) * z - np.sign(z) * a * lam * gamma) / (a - 1.0 - gamma)
        return np.where(t <= (1.0 + gamma) * lam, _soft(z, gamma * lam), np.where(t <= a * lam, mid, z))


REGULARIZERS: dict[str, type] = {
    cls.name: cls  # the dataclass default of ``name`` is a class attribute
    for cls in (Zero, L1, SquaredL2, ElasticNet, BoxIndicator, L2BallIndicator, GroupLasso, MCP, SCAD)
}


def make_regularizer(name: str, **params: object):
    """Build a regulariser from its name (a key of ``REGULARIZERS``) and parameters, e.g.
    ``make_regularizer("mcp", lam=0.1, theta=3.0)``. Unknown names or parameters are a ValueError."""
    if not isinstance(name, str) or name not in REGULARIZERS:
        raise InvalidParameterError("name", f"name must be one of {sorted(REGULARIZERS)}, got {describe(name)}")
    cls = REGULARIZERS[name]
    allowed = [f.name for f in fields(cls) if f.name != "name"]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise InvalidParameterError(str(unknown[0]), f"unknown parameter(s) {unknown} for regulariser {name!r}; allowed: {allowed}")
    return cls(**params)
