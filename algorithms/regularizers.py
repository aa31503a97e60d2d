"""Regularisers phi with closed-form prox operators, batched over leading axes.

Each has ``value(x)`` (over the last axis), ``prox(z, gamma)`` and ``rho``, its weak-convexity modulus.
``prox`` raises a ValueError unless 0 < gamma < 1/rho.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algorithms.base import check_gamma, check_positive


@dataclass(frozen=True)
class Zero:
    """phi = 0 (smooth problems)."""

    name: str = "zero"

    @property
    def rho(self) -> float:
        return 0.0

    def value(self, x: np.ndarray) -> np.ndarray:
        return np.zeros(np.shape(x)[:-1])

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        return np.array(z, dtype=float, copy=True)


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
        return self.weight * np.abs(x).sum(axis=-1)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        z = np.asarray(z, dtype=float)
        return np.sign(z) * np.maximum(np.abs(z) - gamma * self.weight, 0.0)
