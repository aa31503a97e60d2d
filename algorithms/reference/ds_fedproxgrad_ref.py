"""Reference DS FedProxGrad (arXiv 2512.08671, Steps 1-3), written with plain loops over replicas and clients so
that it reads like the paper. It shares no numerics with ``algorithms/ds_fedproxgrad.py`` beyond the problem's
own functions; it replays the same random draws (one draw per (round, step) from ``stream(seed, t, l)`` on the
full stack, indexed by replica and client) so that both trajectories agree to rounding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from fedbounds.algorithms.ds_fedproxgrad import LOCAL_KEY, SERVER_KEY
from fedbounds.algorithms.rng import stream


def _norm(v: np.ndarray) -> float:
    return float(np.sqrt(np.sum(v * v, axis=-1)))


def _grad_fi(problem: Any, i: int, w: np.ndarray) -> np.ndarray:
    """grad f_i(w) for client i alone (evaluated on a stack where every client sits at w)."""
    return problem.grad(np.tile(w, (problem.n, 1)))[i]


def _eta(params: dict, r: int) -> float:
    if "eta" in params:  # FedProxGrad's constant step
        return float(params["eta"])
    schedule = params["schedule"]
    if schedule["kind"] == "constant":
        return float(schedule["eta"])
    if schedule["kind"] == "power":
        return schedule["c"] / (r + 1) ** schedule["alpha"]
    return schedule["c"] / math.sqrt(schedule["R"])


def _gamma(spec: dict, eta: float) -> float:
    if spec["kind"] == "proportional":
        return spec["c_gamma"] * eta
    if spec["kind"] == "constant":
        return float(spec["value"])
    return spec["c"] * math.sqrt(eta)


def _L_f(problem: Any) -> float:
    const = problem.constants
    return float(const["L_f"].value if "L_f" in const else const["L"].value)


def _gd_on_h(problem: Any, i: int, x: np.ndarray, gx: np.ndarray, eta: float, L_f: float, threshold: float, max_iter: int):
    """Gradient descent on h_i(w) = f_i(w) + ||w - x||^2/(2 eta) from w = x, step 1/(L_f + 1/eta), until
    ||grad h_i(w)|| <= threshold."""
    step = 1.0 / (L_f + 1.0 / eta)
    w = x.copy()
    gf = gx
    for _ in range(max_iter):
        gh = gf + (w - x) / eta
        if not _norm(gh) > threshold:
            return w
        w = w - step * gh
        gf = _grad_fi(problem, i, w)
    raise RuntimeError("reference local solver did not converge")


def local_step(problem: Any, i: int, x: np.ndarray, eta: float, solver: dict, *, grad_F_x: np.ndarray, z: np.ndarray | None):
    """Step 1, eq. (3): client i's approximate prox point y_i ~ argmin_w f_i(w) + ||w - x||^2/(2 eta)."""
    gx = _grad_fi(problem, i, x)
    kind = solver["kind"]
    if kind == "exact":
        method = solver.get("method", "auto")
        if method == "closed_form" or (method == "auto" and hasattr(problem, "hessians") and hasattr(problem, "linear")):
            # the optimality condition H_i y - h_i + (y - x)/eta = 0
            return np.linalg.solve(problem.hessians[i] + np.eye(problem.p) / eta, problem.linear[i] + x / eta)
        tol = solver.get("tol", 1e-12)
        return _gd_on_h(problem, i, x, gx, eta, _L_f(problem), tol * max(1.0, _norm(gx)), solver.get("max_iter", 100_000))
    if kind == "gd_certified":
        theta = solver["c_theta"] * eta
        return _gd_on_h(problem, i, x, gx, eta, _L_f(problem), theta * _norm(gx), solver.get("max_iter", 100_000))
    # inject: y_i = x - eta grad f_i(x) + eta e_i with ||e_i|| = gamma ||grad f_i(x)||
    gamma = _gamma(solver["gamma"], eta)
    if solver.get("direction", "uphill") == "uphill":
        if _norm(grad_F_x) > 0:
            d = grad_F_x / _norm(grad_F_x)
        else:
            d = np.zeros(problem.p)
            d[0] = 1.0
    else:
        d = z / _norm(z)
    e_i = gamma * _norm(gx) * d
    return x - eta * gx + eta * e_i


def run_reference(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0) -> dict[str, np.ndarray]:
    """Run DS FedProxGrad with per-replica, per-client loops.

    Returns ``x`` (rounds + 1, R, p), and per round t (arrays of length ``rounds``): ``eta`` (rounds,),
    ``gamma_emp`` (rounds, R), ``y`` (rounds, R, n, p), ``e_stoch`` (rounds, R, p)."""
    n, p = problem.n, problem.p
    lam = float(getattr(problem, "lam", 0.0))
    solver = params.get("solver") or {"kind": "exact", "tol": 1e-12}
    estimator = params.get("estimator") or {"kind": "gaussian", "sigma2": 0.0}
    x0 = np.zeros(p) if params.get("x0") is None else np.asarray(params["x0"], dtype=float)
    x = np.array(np.broadcast_to(x0, (replicas, p)), dtype=float)
    xs, etas, gammas, ys, es = [x.copy()], [], [], [], []
    for t in range(rounds):
        eta = _eta(params, t)
        # the round's random draws, one per (round, step), on the full stack
        z_all = None
        if solver["kind"] == "inject" and solver.get("direction", "uphill") == "random":
            z_all = stream(seed, t, *LOCAL_KEY).standard_normal((replicas, n, p))
        if estimator["kind"] == "gaussian":
            sigma2 = float(estimator["sigma2"])
            noise_all = np.sqrt(sigma2 / p) * stream(seed, t, *SERVER_KEY).standard_normal((replicas, p)) if sigma2 > 0 else None
        else:
            g_hat_all = problem.grad_r_double_sample(x, stream(seed, t, *SERVER_KEY), int(estimator["batch"]))
        x_new = np.empty_like(x)
        gamma_t = np.zeros(replicas)
        y_t = np.empty((replicas, n, p))
        e_t = np.empty((replicas, p))
        for k in range(replicas):
            xk = x[k]
            grad_r_x = problem.grad_r(xk) if hasattr(problem, "grad_r") else np.zeros(p)
            grad_F_x = problem.grad_F(xk) if hasattr(problem, "grad_F") else problem.grad_f(xk)
            # Step 1: local proximal steps
            for i in range(n):
                z = None if z_all is None else z_all[k, i]
                y_t[k, i] = local_step(problem, i, xk, eta, solver, grad_F_x=grad_F_x, z=z)
                # P3: the inexactness of eq. (10) for this client
                gx = _grad_fi(problem, i, xk)
                err = _norm((y_t[k, i] - xk) / eta + gx)
                ratio = err / _norm(gx) if _norm(gx) > 0 else (math.inf if err > 0 else 0.0)
                gamma_t[k] = max(gamma_t[k], ratio)
            # Step 2: aggregation
            ybar = sum(y_t[k, i] for i in range(n)) / n
            # Step 3: global update with the fairness gradient at the old point
            if estimator["kind"] == "gaussian":
                e = noise_all[k] if noise_all is not None else np.zeros(p)
                x_new[k] = ybar - eta * lam * grad_r_x + eta * e
            else:
                g_hat = g_hat_all[k]
                e = lam * (grad_r_x - g_hat)
                x_new[k] = ybar - eta * lam * g_hat
            e_t[k] = e
        x = x_new
        xs.append(x.copy())
        etas.append(eta)
        gammas.append(gamma_t)
        ys.append(y_t)
        es.append(e_t)
    return {
        "x": np.array(xs),
        "eta": np.array(etas),
        "gamma_emp": np.array(gammas),
        "y": np.array(ys),
        "e_stoch": np.array(es),
    }
