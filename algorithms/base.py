"""Shared building blocks of the algorithms layer: constants with their exactness, solutions with their
certificates, the ``Regularizer`` and ``Problem`` interfaces, and argument validation.

Shapes: a point is ``(..., p)``; a client-stacked point is ``(..., n, p)`` (leading axes are Monte Carlo
replicas). Every method is batched over the leading axes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np

Kind = Literal["exact", "upper_bound", "lower_bound", "estimate"]


@dataclass(frozen=True)
class Constant:
    """A problem constant and what we know of it: its value is ``exact`` or a stated bound."""

    value: float
    kind: Kind = "exact"
    note: str = ""

    @property
    def exact(self) -> bool:
        return self.kind == "exact"


@dataclass(frozen=True)
class Solution:
    """A minimiser x* of psi = f + phi with psi* = psi(x*) and its certificate.

    ``residual`` is the natural residual ||x* - prox_{gamma phi}(x* - gamma grad f(x*))|| at ``gamma``.
    """

    x_star: np.ndarray
    psi_star: float
    residual: float
    gamma: float
    method: str = ""
    extra: dict = field(default_factory=dict)


@runtime_checkable
class Regularizer(Protocol):
    """phi: proper, lsc, rho-weakly convex, with a closed-form prox; batched over leading axes."""

    name: str

    @property
    def rho(self) -> float:
        """Weak-convexity modulus (0 for convex phi)."""
        ...

    def value(self, x: np.ndarray) -> np.ndarray:
        """phi(x) over the last axis, shape ``x.shape[:-1]``."""
        ...

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        """prox_{gamma phi}(z), same shape as ``z``; ValueError unless 0 < gamma < 1/rho."""
        ...


@runtime_checkable
class Problem(Protocol):
    """min_x psi(x) = f(x) + phi(x), f = (1/n) sum_i f_i, each f_i L-smooth."""

    n: int
    p: int
    phi: Regularizer

    def client_values(self, X: np.ndarray) -> np.ndarray:
        """f_i(X[..., i, :]) for every client i, shape ``X.shape[:-1]``."""
        ...

    def grad(self, X: np.ndarray) -> np.ndarray:
        """grad f_i(X[..., i, :]) for every client i, shape ``X.shape``."""
        ...

    def f(self, x: np.ndarray) -> np.ndarray:
        """f(x) = (1/n) sum_i f_i(x), shape ``x.shape[:-1]``."""
        ...

    def grad_f(self, x: np.ndarray) -> np.ndarray:
        """grad f(x), shape ``x.shape``."""
        ...

    def psi(self, x: np.ndarray) -> np.ndarray:
        """psi(x) = f(x) + phi(x), shape ``x.shape[:-1]``."""
        ...

    @property
    def constants(self) -> dict[str, Constant]:
        """Named constants: at least ``L``; also ``rho_f``, ``mu``, ``zeta2``, ``G``, ``B`` where known."""
        ...

    def solution(self) -> Solution:
        """x*, psi* and the certificate."""
        ...


def check_positive(name: str, value: float, *, strict: bool = True) -> float:
    """Return ``float(value)`` or raise a ValueError naming ``name`` and the allowed range."""
    v = float(value)
    if not np.isfinite(v) or (v <= 0 if strict else v < 0):
        allowed = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be finite and {allowed}, got {value!r}")
    return v


def check_in_range(name: str, value: float, low: float, high: float, *, closed: str = "both") -> float:
    """Return ``float(value)`` if it lies in the interval, else a ValueError naming it and the interval.

    ``closed`` is one of ``"both"``, ``"left"``, ``"right"``, ``"neither"``.
    """
    v = float(value)
    lo_ok = v >= low if closed in ("both", "left") else v > low
    hi_ok = v <= high if closed in ("both", "right") else v < high
    if not (np.isfinite(v) and lo_ok and hi_ok):
        lb = "[" if closed in ("both", "left") else "("
        rb = "]" if closed in ("both", "right") else ")"
        raise ValueError(f"{name} must lie in {lb}{low}, {high}{rb}, got {value!r}")
    return v


def check_int(name: str, value: int, minimum: int = 1) -> int:
    """Return ``value`` if it is an integer >= ``minimum``, else a ValueError naming it."""
    if isinstance(value, bool) or int(value) != value or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def finite_array(name: str, value: object) -> np.ndarray:
    """``value`` as a float array; a ValueError naming ``name`` if it is not numeric or holds NaN/infinity."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array, got {type(value).__name__}") from None
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0]) if arr.ndim else ()
        raise ValueError(f"{name} must be finite: {bad} NaN or infinite entries, the first at index {where}")
    return arr


def check_gamma(gamma: float, rho: float, name: str = "gamma") -> float:
    """A prox parameter must satisfy 0 < gamma < 1/rho (any gamma > 0 when rho = 0)."""
    g = check_positive(name, gamma)
    if rho > 0 and g * rho >= 1.0:
        raise ValueError(f"{name} must lie in (0, 1/rho) = (0, {1.0 / rho:.6g}) for rho = {rho:g}, got {gamma!r}")
    return g


def natural_residual(problem: Problem, x: np.ndarray, gamma: float) -> np.ndarray:
    """F_nat^gamma(x) = x - prox_{gamma phi}(x - gamma grad f(x)), shape ``x.shape``."""
    return x - problem.phi.prox(x - gamma * problem.grad_f(x), gamma)


def normal_map(problem: Problem, z: np.ndarray, gamma: float) -> np.ndarray:
    """F_nor^gamma(z) = grad f(prox(z)) + (z - prox(z))/gamma, shape ``z.shape``."""
    x = problem.phi.prox(z, gamma)
    return problem.grad_f(x) + (z - x) / gamma
