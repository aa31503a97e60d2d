"""Certified solvers shared by the instances (design.md, principle 5: "x* comes with a certificate").

Every instance finds its x* here and certifies it by the natural residual
``||x - prox_{gamma phi}(x - gamma grad f(x))||`` (base.natural_residual), so that a solver's "converged"
is never taken on trust. Three regimes:

- phi = 0: scipy L-BFGS-B, then Newton steps with the analytic Hessian (quadratic local convergence).
- phi convex (rho = 0): FISTA with adaptive (gradient-scheme) restart, then a proximal-Newton polish whose
  quadratic subproblem is solved by restarted FISTA; each step is accepted only if it lowers the residual.
- phi weakly convex (rho > 0): proximal gradient with gamma < 1/rho (a contraction when f is mu-strongly
  convex with mu > rho), then the same proximal-Newton polish where the subproblem is strongly convex.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from fedbounds.algorithms.base import Regularizer
from scipy.optimize import minimize

Vec = np.ndarray
Fun = Callable[[Vec], float]
Grad = Callable[[Vec], Vec]
Hess = Callable[[Vec], np.ndarray]


@dataclass(frozen=True)
class SolveResult:
    """A point, its natural residual at ``gamma`` and how it was found."""

    x: Vec
    residual: float
    gamma: float
    method: str


def is_zero(phi: Regularizer) -> bool:
    """True for phi = 0 (the smooth case)."""
    return getattr(phi, "name", "") == "zero"


def certificate_gamma(L: float, rho: float) -> float:
    """The gamma at which residuals are reported: 1/L, or 1/(2 rho) if that is smaller (gamma < 1/rho)."""
    g = 1.0 / L
    if rho > 0:
        g = min(g, 0.5 / rho)
    return g


def residual_norm(grad: Grad, phi: Regularizer, x: Vec, gamma: float) -> float:
    """||x - prox_{gamma phi}(x - gamma grad f(x))||, the natural residual (base.natural_residual)."""
    return float(np.linalg.norm(x - phi.prox(x - gamma * grad(x), gamma)))


def _prox_gradient(grad: Grad, phi: Regularizer, x0: Vec, step: float, tol: float, max_iter: int, accelerate: bool) -> Vec:
    """(Accelerated) proximal gradient; stops when the residual at the extrapolated point is <= tol.

    With ``accelerate`` it is FISTA with the gradient-scheme adaptive restart of O'Donoghue and Candes.
    """
    x = np.array(x0, dtype=float)
    y, t = x.copy(), 1.0
    for _ in range(max_iter):
        x_new = phi.prox(y - step * grad(y), step)
        if np.linalg.norm(x_new - y) <= tol:
            return x_new
        if accelerate:
            t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            if np.dot(y - x_new, x_new - x) > 0:  # adaptive restart
                y, t_new = x_new.copy(), 1.0
            else:
                y = x_new + ((t - 1.0) / t_new) * (x_new - x)
            t = t_new
        else:
            y = x_new
        x = x_new
    return x


def _newton_direction(g: Vec, H: np.ndarray) -> Vec:
    try:
        return -np.linalg.solve(H, g)
    except np.linalg.LinAlgError:
        return -np.linalg.lstsq(H, g, rcond=None)[0]


def _polish(grad: Grad, hess: Hess, phi: Regularizer, x0: Vec, gamma: float, max_iter: int = 60) -> Vec:
    """(Proximal) Newton polish; a step (halved up to 40 times) is accepted only if the residual falls."""
    x = np.array(x0, dtype=float)
    res = residual_norm(grad, phi, x, gamma)
    smooth = is_zero(phi)
    for _ in range(max_iter):
        if res <= 1e-15 * max(1.0, float(np.linalg.norm(x))):
            break
        g, H = grad(x), hess(x)
        ev = np.linalg.eigvalsh(H)
        # the (proximal) Newton model must be convex: strongly convex beyond rho for a weakly convex phi,
        # positive definite in the smooth case (no steps towards saddles), at least positive semidefinite else
        need = phi.rho if phi.rho > 0 else (0.0 if smooth else -1e-12 * abs(ev[-1]))
        if ev[-1] <= 0 or ev[0] <= need:
            break
        if smooth:
            d = _newton_direction(g, H)
        else:
            step = 1.0 / ev[-1]

            def q_grad(u: Vec, g: Vec = g, H: np.ndarray = H, x: Vec = x) -> Vec:
                return g + H @ (u - x)

            u = _prox_gradient(q_grad, phi, x, step, 1e-17 * max(1.0, float(np.linalg.norm(x))), 20_000, phi.rho == 0)
            d = u - x
        t = 1.0
        for _ in range(40):
            xn = x + t * d
            rn = residual_norm(grad, phi, xn, gamma)
            if rn < res:
                x, res = xn, rn
                break
            t *= 0.5
        else:
            break
    return x


def solve_composite(
    value: Fun,
    grad: Grad,
    hess: Hess,
    phi: Regularizer,
    L: float,
    x0: Vec,
    *,
    tol: float = 1e-11,
    max_iter: int = 200_000,
    convex_f: bool = True,
) -> SolveResult:
    """Minimise ``value + phi`` (a stationary point when nonconvex) and certify it by the natural residual.

    ``L`` bounds the smoothness of ``value``; ``hess`` returns its (p, p) Hessian. The residual is reported at
    ``certificate_gamma(L, phi.rho)``. FISTA is used only when both f (``convex_f``) and phi are convex;
    otherwise the monotone proximal gradient method.
    """
    gamma = certificate_gamma(L, phi.rho)
    x0 = np.array(x0, dtype=float)
    if is_zero(phi):

        def fun(x: Vec) -> tuple[float, Vec]:
            return float(value(x)), np.asarray(grad(x), dtype=float)

        opt = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": 20_000, "gtol": 1e-12, "ftol": 0.0})
        x = _polish(grad, hess, phi, opt.x, gamma)
        method = "L-BFGS-B, then Newton polish"
    else:
        accelerate = phi.rho == 0 and convex_f
        x = _prox_gradient(grad, phi, x0, gamma, tol, max_iter, accelerate)
        x = _polish(grad, hess, phi, x, gamma)
        method = ("FISTA with adaptive restart" if accelerate else "proximal gradient") + ", then proximal-Newton polish"
    return SolveResult(x, residual_norm(grad, phi, x, gamma), gamma, method)
