"""The baselines of ``papers/baselines.md``, written with per-replica, per-client loops.

Centralised methods take one step per round on the client-averaged stochastic gradient (as in
``algorithms.baselines``). Defaults: eta_s 1, x0 / z0 zeros.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from algorithms.reference._common import History, draw, initial


def _prox(problem: Any, z: np.ndarray, weight: float) -> np.ndarray:
    return z.copy() if weight == 0.0 else problem.phi.prox(z, weight)


def _avg_grad(oracle: Any, problem: Any, x: list[np.ndarray], seed: int, t: int) -> list[np.ndarray]:
    n = problem.n
    g = draw(oracle, problem, [[x[r]] * n for r in range(len(x))], seed, t, 0)
    return [sum(g[r, i] for i in range(n)) / n for r in range(len(x))]


def prox_sgd(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """x_{k+1} = prox_{eta phi}(x_k - eta g(x_k)); history of ``x``."""
    eta = params["eta"]
    x = [initial(params, "x0", problem.p) for _ in range(replicas)]
    hist = History()
    hist.record(x=x)
    for t in range(rounds):
        g = _avg_grad(oracle, problem, x, seed, t)
        x = [problem.phi.prox(x[r] - eta * g[r], eta) for r in range(replicas)]
        hist.record(x=x)
    return hist.arrays()


def norm_sgd(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """z_{k+1} = z_k - eta (g(x_k) + (z_k - x_k)/gamma), x_{k+1} = prox_{gamma phi}(z_{k+1}); history of ``z``, ``x``."""
    eta, gamma = params["eta"], params["gamma"]
    z = [initial(params, "z0", problem.p) for _ in range(replicas)]
    x = [problem.phi.prox(z[r], gamma) for r in range(replicas)]
    hist = History()
    hist.record(z=z, x=x)
    for t in range(rounds):
        g = _avg_grad(oracle, problem, x, seed, t)
        for r in range(replicas):
            z[r] = z[r] - eta * (g[r] + (z[r] - x[r]) / gamma)
            x[r] = problem.phi.prox(z[r], gamma)
        hist.record(z=z, x=x)
    return hist.arrays()


def fedmid(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """FedMiD: local prox-SGD steps, server averages the primal iterates; history of ``x``."""
    eta_a, Q, eta_s = params["eta_a"], params["Q"], params.get("eta_s", 1.0)
    n, R = problem.n, replicas
    x = [initial(params, "x0", problem.p) for _ in range(R)]
    hist = History()
    hist.record(x=x)
    for t in range(rounds):
        x_loc = [[x[r].copy() for _ in range(n)] for r in range(R)]
        for l in range(Q):
            g = draw(oracle, problem, x_loc, seed, t, l)
            for r in range(R):
                for i in range(n):
                    x_loc[r][i] = problem.phi.prox(x_loc[r][i] - eta_a * g[r, i], eta_a)
        x = [x[r] + eta_s * (sum(x_loc[r][i] - x[r] for i in range(n)) / n) for r in range(R)]
        hist.record(x=x)
    return hist.arrays()


def fedda(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """FedDA (dual averaging, growing prox weight); history of ``z``, ``x``."""
    eta_a, Q, eta_s = params["eta_a"], params["Q"], params.get("eta_s", 1.0)
    n, R = problem.n, replicas
    z = [initial(params, "x0", problem.p) for _ in range(R)]  # z_0 = x_0
    x = [z[r].copy() for r in range(R)]
    hist = History()
    hist.record(z=z, x=x)
    for t in range(rounds):
        z_loc = [[z[r].copy() for _ in range(n)] for r in range(R)]
        for l in range(Q):
            eta_tilde = eta_s * eta_a * t * Q + eta_a * l
            x_loc = [[_prox(problem, z_loc[r][i], eta_tilde) for i in range(n)] for r in range(R)]
            g = draw(oracle, problem, x_loc, seed, t, l)
            for r in range(R):
                for i in range(n):
                    z_loc[r][i] = z_loc[r][i] - eta_a * g[r, i]
        for r in range(R):
            z[r] = z[r] + eta_s * (sum(z_loc[r][i] - z[r] for i in range(n)) / n)
            x[r] = _prox(problem, z[r], eta_s * eta_a * (t + 1) * Q)
        hist.record(z=z, x=x)
    return hist.arrays()


def _server_prox_method(problem: Any, params: dict, rounds: int, replicas: int, seed: int, oracle: Any, mu: float) -> dict[str, np.ndarray]:
    """FedAvg (mu = 0) or FedProx (mu > 0) local steps, then the server prox (our composite adaptation)."""
    eta_a, Q, eta_s = params["eta_a"], params["Q"], params.get("eta_s", 1.0)
    n, R = problem.n, replicas
    x = [initial(params, "x0", problem.p) for _ in range(R)]
    hist = History()
    hist.record(x=x)
    for t in range(rounds):
        w = [[x[r].copy() for _ in range(n)] for r in range(R)]
        for l in range(Q):
            g = draw(oracle, problem, w, seed, t, l)
            for r in range(R):
                for i in range(n):
                    step = g[r, i] + mu * (w[r][i] - x[r]) if mu else g[r, i]
                    w[r][i] = w[r][i] - eta_a * step
        for r in range(R):
            avg = x[r] + eta_s * (sum(w[r][i] - x[r] for i in range(n)) / n)
            x[r] = problem.phi.prox(avg, eta_s * eta_a * Q)
        hist.record(x=x)
    return hist.arrays()


def fedavg_prox(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """FedAvg with server prox; history of ``x``."""
    return _server_prox_method(problem, params, rounds, replicas, seed, oracle, 0.0)


def fedprox_prox(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """FedProx with server prox; history of ``x``."""
    return _server_prox_method(problem, params, rounds, replicas, seed, oracle, params["mu"])


def scaffold_prox(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """SCAFFOLD (option II) with server prox; history of ``x``, ``c``, ``ci``."""
    eta_a, Q, eta_s = params["eta_a"], params["Q"], params.get("eta_s", 1.0)
    n, p, R = problem.n, problem.p, replicas
    x = [initial(params, "x0", p) for _ in range(R)]
    c = [np.zeros(p) for _ in range(R)]
    ci = [[np.zeros(p) for _ in range(n)] for _ in range(R)]
    hist = History()
    hist.record(x=x, c=c, ci=ci)
    for t in range(rounds):
        y = [[x[r].copy() for _ in range(n)] for r in range(R)]
        for l in range(Q):
            g = draw(oracle, problem, y, seed, t, l)
            for r in range(R):
                for i in range(n):
                    y[r][i] = y[r][i] - eta_a * (g[r, i] - ci[r][i] + c[r])
        for r in range(R):
            dy, dc = [], []
            for i in range(n):
                ci_plus = ci[r][i] - c[r] + (x[r] - y[r][i]) / (Q * eta_a)
                dy.append(y[r][i] - x[r])
                dc.append(ci_plus - ci[r][i])
                ci[r][i] = ci_plus
            x[r] = problem.phi.prox(x[r] + eta_s * (sum(dy) / n), eta_s * eta_a * Q)
            c[r] = c[r] + sum(dc) / n
        hist.record(x=x, c=c, ci=ci)
    return hist.arrays()
