"""Shared building blocks of the algorithms layer: constants with their exactness, solutions with their
certificates, the ``Regularizer`` and ``Problem`` interfaces, and argument validation.

Shapes: a point is ``(..., p)``; a client-stacked point is ``(..., n, p)`` (leading axes are Monte Carlo
replicas). Every method is batched over the leading axes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np
from fedbounds.algorithms._validate import InvalidParameterError, check_array, check_integer, check_object, check_real

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
    """Return ``float(value)`` or raise a ValueError naming ``name`` and the allowed range (see ``_validate``)."""
    return check_real(name, value, low=0.0, low_open=strict)


def check_in_range(name: str, value: float, low: float, high: float, *, closed: str = "both") -> float:
    """Return ``float(value)`` if it lies in the interval, else a ValueError naming it and the interval.

    ``closed`` is one of ``"both"``, ``"left"``, ``"right"``, ``"neither"``.
    """
    low_open, high_open = closed in ("right", "neither"), closed in ("left", "neither")
    lb, rb = "(" if low_open else "[", ")" if high_open else "]"
    return check_real(name, value, low=low, high=high, low_open=low_open, high_open=high_open, allowed=f"in {lb}{low}, {high}{rb}")


def check_int(name: str, value: int, minimum: int = 1) -> int:
    """Return ``value`` if it is an integer >= ``minimum``, else a ValueError naming it."""
    return check_integer(name, value, minimum)


def finite_array(name: str, value: object) -> np.ndarray:
    """``value`` as a float array; a ValueError naming ``name`` if it is not real numeric data (complex data
    too) or holds NaN/infinity."""
    return check_array(name, value, nonempty=False)


def check_regularizer(name: str, value: object, *, allow_none: bool = True) -> object:
    """``value`` if it is a regulariser (``prox()``, ``value()``, ``rho``) or, when ``allow_none``, None."""
    if value is None and allow_none:
        return None
    return check_object(name, value, "a regulariser such as L1(0.1)" + (" or None" if allow_none else ""), ("prox", "value"), ("rho",))


def client_data(name: str, value: object, labels: tuple[str, ...]) -> np.ndarray:
    """Per-client data (``A`` (n, m, p), ``b`` (n, m), ...) as a finite real float array with ``len(labels)``
    axes, none of them empty; ``labels`` names the axes in the message (e.g. ("n", "m", "p"))."""
    arr = check_array(name, value, ndim=len(labels), nonempty=False)
    if 0 in arr.shape:
        raise InvalidParameterError(name, f"{name} must have shape ({', '.join(labels)}) with every axis >= 1, got shape {arr.shape}")
    return arr


def check_gamma(gamma: float, rho: float, name: str = "gamma") -> float:
    """A prox parameter must satisfy 0 < gamma < 1/rho (any gamma > 0 when rho = 0)."""
    g = check_positive(name, gamma)
    if rho > 0 and g * rho >= 1.0:
        raise InvalidParameterError(name, f"{name} must lie in (0, 1/rho) = (0, {1.0 / rho:.6g}) for rho = {rho:g}, got {gamma!r}")
    return g


def natural_residual(problem: Problem, x: np.ndarray, gamma: float) -> np.ndarray:
    """F_nat^gamma(x) = x - prox_{gamma phi}(x - gamma grad f(x)), shape ``x.shape``."""
    return x - problem.phi.prox(x - gamma * problem.grad_f(x), gamma)


def normal_map(problem: Problem, z: np.ndarray, gamma: float) -> np.ndarray:
    """F_nor^gamma(z) = grad f(prox(z)) + (z - prox(z))/gamma, shape ``z.shape``."""
    x = problem.phi.prox(z, gamma)
    return problem.grad_f(x) + (z - x) / gamma
