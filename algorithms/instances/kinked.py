"""A kinked quadratic: identical clients whose gradient is piecewise linear, the lower-bound instance of FedNMap's
noise floor (docs/fednmap-reconstruction.md §10.10).

Every client has the same separable f_i = f (no heterogeneity), phi = 0, and per coordinate

    f'(x) = c_r x                         (x >= a, a <= 0),     f'(x) = c_l x                        (x < a, a > 0),
    f'(x) = c_r a + c_l (x - a)           (x <  a, a <= 0),     f'(x) = c_l a + c_r (x - a)          (x >= a, a > 0),

i.e. curvature c_l left of the kink a and c_r right of it, with the minimiser x* = 0 on whichever side holds 0 and
f* = 0. f is convex and min(c_l, c_r)-strongly convex, so: L = max(c_l, c_r) (exact: the Hessian takes that value),
and the proximal-PL constant mu = min(c_l, c_r) (exact: f'^2 / (2 (f - f*)) equals the curvature of the piece that
holds 0 there, and tends to the other piece's curvature far out). A linear gradient (c_l = c_r) is the control.

The gradient is nonlinear only at the kink: E[f'(x + D)] != f'(x) for a spread D that straddles it. This is what
makes FedNMap's local steps (which take gradients at points drifted by the client's own noise) biased at Q >= 2.
"""

from __future__ import annotations

import numpy as np
from fedbounds.algorithms.base import Constant, Solution, check_int, check_positive
from fedbounds.algorithms.regularizers import Zero

__all__ = ["KinkedQuadratic", "kinked_quadratic"]


class KinkedQuadratic:
    """n identical clients, f_i = f of the module docstring in each of p coordinates, phi = 0."""

    name = "kinked_quadratic"

    def __init__(self, n: int, p: int, c_left: float, c_right: float, kink: float) -> None:
        self.n, self.p = check_int("n", n), check_int("p", p)
        self.c_left = check_positive("c_left", c_left)
        self.c_right = check_positive("c_right", c_right)
        self.kink = float(kink)
        if not np.isfinite(self.kink):
            raise ValueError(f"kink must be finite, got {kink!r}")
        self.phi = Zero()

    def _pieces(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(far, c_near, c_far): far = on the kink's side away from 0, and the curvatures near 0 and beyond the kink."""
        X = np.asarray(X, dtype=float)
        a = self.kink
        if a <= 0:
            return X < a, self.c_right, self.c_left
        return X >= a, self.c_left, self.c_right

    def _grad1(self, X: np.ndarray) -> np.ndarray:
        far, cn, cf = self._pieces(X)
        a = self.kink
        return np.where(far, cn * a + cf * (X - a), cn * X)

    def _value1(self, X: np.ndarray) -> np.ndarray:
        far, cn, cf = self._pieces(X)
        a = self.kink
        return np.where(far, 0.5 * cn * a * a + cn * a * (X - a) + 0.5 * cf * (X - a) ** 2, 0.5 * cn * X * X)

    def client_values(self, X: np.ndarray) -> np.ndarray:
        return self._value1(X).sum(axis=-1)

    def grad(self, X: np.ndarray) -> np.ndarray:
        return self._grad1(X)

    def f(self, x: np.ndarray) -> np.ndarray:
        return self._value1(x).sum(axis=-1)

    def grad_f(self, x: np.ndarray) -> np.ndarray:
        return self._grad1(x)

    def psi(self, x: np.ndarray) -> np.ndarray:
        return self.f(x)

    @property
    def constants(self) -> dict[str, Constant]:
        return {
            "L": Constant(max(self.c_left, self.c_right), "exact", "max(c_left, c_right): the Hessian takes both values"),
            "mu": Constant(min(self.c_left, self.c_right), "exact", "min(c_left, c_right): strong convexity, hence proximal PL"),
            "rho": Constant(0.0, "exact", "phi = 0"),
            "rho_f": Constant(0.0, "exact", "f is convex"),
            "zeta2": Constant(0.0, "exact", "identical clients"),
        }

    def solution(self) -> Solution:
        x = np.zeros(self.p)
        return Solution(x, 0.0, 0.0, 1.0, method="closed form", extra={"global": True, "psi_star_kind": "exact"})


def kinked_quadratic(n: int = 1, p: int = 1, c_left: float = 0.1, c_right: float = 1.0, kink: float = 0.0) -> KinkedQuadratic:
    """The instance of the module docstring (deterministic)."""
    return KinkedQuadratic(n, p, c_left, c_right, kink)
