"""Smooth nonconvex losses with closed-form L and weak-convexity modulus (fedproxgrad-notes.md section 3.1).

1. ``nonconvex_logistic``: logistic loss plus alpha_pen sum_k w_k^2/(1 + w_k^2). The penalty's second derivative
   (2 - 6 w^2)/(1 + w^2)^3 lies in [-1/2, 2] (max at w = 0, min at |w| = 1), so with ||a_j|| <= 1
   L_f = (1/4) max_i lambda_max(A_i^T A_i/m) + 2 alpha_pen (exact: attained at x = 0, where the logistic and
   the penalty curvatures are both maximal) and rho_f = alpha_pen/2 (upper bound). f_i >= 0.
2. ``sigmoid_least_squares`` (the notes' alternative): ell(t, y) = (sigmoid(t) - y)^2. With s = sigmoid(t),
   ell'' = 2 s^2 (1 - s)(2 - 3 s) for y = 0 (and the mirror image s -> 1 - s for y = 1), whose extrema over
   s in [0, 1] are at the roots s = (15 -+ sqrt(33))/24 of 12 s^2 - 15 s + 4:
   curv_max = 0.1541... and curv_min = -0.1202.... Hence L <= curv_max max_i lambda_max(A_i^T A_i/m) and
   rho_f <= -curv_min max_i lambda_max(A_i^T A_i/m) (both upper bounds: no x makes every t_j extremal).

For both, ``solution()`` returns a certified stationary point (natural residual < 1e-10) reached from x = 0,
with psi* of kind estimate (``Solution.extra``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from fedbounds.algorithms._validate import check_seed
from fedbounds.algorithms.base import Regularizer, check_positive, check_regularizer
from fedbounds.algorithms.instances.logistic import BinaryGLM, Logistic, synthetic_features
from fedbounds.algorithms.regularizers import Zero
from scipy.special import expit


def _sigmoid_ls_curvature_extrema() -> tuple[float, float]:
    """(max, min) over s in [0, 1] of g(s) = 2 s^2 (1 - s)(2 - 3 s), at the roots of g'(s)/(2 s) = 12 s^2 - 15 s + 4."""
    r = np.sqrt(33.0)
    s1, s2 = (15.0 - r) / 24.0, (15.0 + r) / 24.0

    def g(s: float) -> float:
        return 2.0 * s * s * (1.0 - s) * (2.0 - 3.0 * s)

    return g(s1), g(s2)


_SLS_MAX, _SLS_MIN = _sigmoid_ls_curvature_extrema()


@dataclass
class SigmoidLeastSquares(BinaryGLM):
    """Sigmoid least squares ell(t, y) = (sigmoid(t) - y)^2 (bounded, smooth, nonconvex); see the module doc."""

    name: str = "sigmoid_least_squares"
    curv_max: ClassVar[float] = _SLS_MAX
    curv_min: ClassVar[float] = _SLS_MIN
    L_attained: ClassVar[bool] = False

    def _loss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (expit(t) - y) ** 2

    def _dloss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        s = expit(t)
        return 2.0 * (s - y) * s * (1.0 - s)

    def _d2loss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        s = expit(t)
        d1 = s * (1.0 - s)
        return 2.0 * d1 * d1 + 2.0 * (s - y) * d1 * (1.0 - 2.0 * s)

    def _L_note(self) -> str:
        return f"{_SLS_MAX:.6f} max_i lambda_max(A_i^T A_i/m) + l2 + 2 alpha_pen (sup of ell'' times the data curvature)"



def nonconvex_logistic(
    n: int = 10,
    p: int = 20,
    m: int = 50,
    alpha_het: float = 1.0,
    beta_het: float = 1.0,
    alpha_pen: float = 0.1,
    phi: Regularizer | None = None,
    seed: int = 0,
) -> Logistic:
    """Logistic loss + alpha_pen sum w_k^2/(1 + w_k^2) on synthetic(alpha_het, beta_het) data (notes 3.1, 3.3).

    L_f = (1/4) max_i lambda_max(A_i^T A_i/m) + 2 alpha_pen (exact), rho_f = alpha_pen/2 (upper bound).
    """
    check_positive("alpha_pen", alpha_pen)
    check_regularizer("phi", phi)
    A, y = synthetic_features(n, p, m, alpha_het, beta_het, np.random.default_rng(check_seed("seed", seed)))
    return Logistic(A, y, phi if phi is not None else Zero(), l2=0.0, alpha_pen=alpha_pen, name="nonconvex_logistic")


def sigmoid_least_squares(
    n: int = 10,
    p: int = 20,
    m: int = 50,
    alpha_het: float = 1.0,
    beta_het: float = 1.0,
    l2: float = 0.01,
    phi: Regularizer | None = None,
    seed: int = 0,
) -> SigmoidLeastSquares:
    """Sigmoid least squares (sigmoid(a^T x) - y)^2 (+ l2/2 ||x||^2) on synthetic(alpha_het, beta_het) data (notes 3.1).

    The default l2 = 0.01 keeps x* of moderate norm (without it the loss flattens out, ||x*|| ~ 25 on the default
    instance); f stays nonconvex as long as l2 < -curv_min max_i lambda_max(A_i^T A_i/m) (rho_f > 0).
    """
    check_positive("l2", l2, strict=False)
    check_regularizer("phi", phi)
    A, y = synthetic_features(n, p, m, alpha_het, beta_het, np.random.default_rng(check_seed("seed", seed)))
    return SigmoidLeastSquares(A, y, phi if phi is not None else Zero(), l2=l2)
