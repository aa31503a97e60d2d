"""The baselines of ``docs/baselines.md``, written with plain loops: for each replica, for each client, for each
local step, one stochastic gradient g = grad f_i(x) + xi[r, i] on that client's own point (``client_grad`` and the
replayed noise of ``round_noise``, see ``fedbounds.algorithms.reference._common``).

Centralised methods take one step per round on the client-averaged stochastic gradient (as in
``fedbounds.algorithms.baselines``; the noise of stream (t, 0)). Defaults: eta_s 1, x0 / z0 zeros.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from fedbounds.algorithms.reference._common import History, client_grad, initial, round_noise


def _prox(problem: Any, z: np.ndarray, weight: float) -> np.ndarray:
    return z.copy() if weight == 0.0 else problem.phi.prox(z, weight)


def _avg_grad(problem: Any, x: np.ndarray, noise: np.ndarray, r: int) -> np.ndarray:
    """(1/n) sum_i g_i(x) for replica r: every client's stochastic gradient at the same point x."""
    n = problem.n
    return sum(client_grad(problem, i, x) + noise[r, i] for i in range(n)) / n


def prox_sgd(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """x_{k+1} = prox_{eta phi}(x_k - eta g(x_k)); history of ``x``."""
    eta = params["eta"]
    n, p, R = problem.n, problem.p, replicas
    x = [initial(params, "x0", p) for _ in range(R)]
    hist = History()
    hist.record(x=x)
    for t in range(rounds):
        (noise,) = round_noise(oracle, seed, t, 1, (R, n, p))
        for r in range(R):
            g = _avg_grad(problem, x[r], noise, r)
            x[r] = problem.phi.prox(x[r] - eta * g, eta)
        hist.record(x=x)
    return hist.arrays()


def norm_sgd(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """z_{k+1} = z_k - eta (g(x_k) + (z_k - x_k)/gamma), x_{k+1} = prox_{gamma phi}(z_{k+1}); history of ``z``, ``x``."""
    eta, gamma = params["eta"], params["gamma"]
    n, p, R = problem.n, problem.p, replicas
    z = [initial(params, "z0", p) for _ in range(R)]
    x = [problem.phi.prox(z[r], gamma) for r in range(R)]
    hist = History()
    hist.record(z=z, x=x)
    for t in range(rounds):
        (noise,) = round_noise(oracle, seed, t, 1, (R, n, p))
        for r in range(R):
            g = _avg_grad(problem, x[r], noise, r)
            z[r] = z[r] - eta * (g + (z[r] - x[r]) / gamma)
            x[r] = problem.phi.prox(z[r], gamma)
        hist.record(z=z, x=x)
    return hist.arrays()


def fedmid(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """FedMiD: local prox-SGD steps, server averages the primal iterates; history of ``x``."""
    eta_a, Q, eta_s = params["eta_a"], params["Q"], params.get("eta_s", 1.0)
    n, p, R = problem.n, problem.p, replicas
    x = [initial(params, "x0", p) for _ in range(R)]
    hist = History()
    hist.record(x=x)
    for t in range(rounds):
        noise = round_noise(oracle, seed, t, Q, (R, n, p))
        for r in range(R):
            x_loc = []
            for i in range(n):
                x_i = x[r]
                for l in range(Q):
                    g = client_grad(problem, i, x_i) + noise[l][r, i]
                    x_i = problem.phi.prox(x_i - eta_a * g, eta_a)
                x_loc.append(x_i)
            x[r] = x[r] + eta_s * (sum(x_i - x[r] for x_i in x_loc) / n)
        hist.record(x=x)
    return hist.arrays()


def fedda(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """FedDA (dual averaging, growing prox weight); history of ``z``, ``x``."""
    eta_a, Q, eta_s = params["eta_a"], params["Q"], params.get("eta_s", 1.0)
    n, p, R = problem.n, problem.p, replicas
    z = [initial(params, "x0", p) for _ in range(R)]  # z_0 = x_0
    x = [z[r].copy() for r in range(R)]
    hist = History()
    hist.record(z=z, x=x)
    for t in range(rounds):
        noise = round_noise(oracle, seed, t, Q, (R, n, p))
        for r in range(R):
            z_loc = []
            for i in range(n):
                z_i = z[r]
                for l in range(Q):
                    x_i = _prox(problem, z_i, eta_s * eta_a * t * Q + eta_a * l)
                    g = client_grad(problem, i, x_i) + noise[l][r, i]
                    z_i = z_i - eta_a * g
                z_loc.append(z_i)
            z[r] = z[r] + eta_s * (sum(z_i - z[r] for z_i in z_loc) / n)
            x[r] = _prox(problem, z[r], eta_s * eta_a * (t + 1) * Q)
        hist.record(z=z, x=x)
    return hist.arrays()


def _server_prox_method(problem: Any, params: dict, rounds: int, replicas: int, seed: int, oracle: Any, mu: float) -> dict[str, np.ndarray]:
    """FedAvg (mu = 0) or FedProx (mu > 0) local steps, then the server prox (our composite adaptation)."""
    eta_a, Q, eta_s = params["eta_a"], params["Q"], params.get("eta_s", 1.0)
    n, p, R = problem.n, problem.p, replicas
    x = [initial(params, "x0", p) for _ in range(R)]
    hist = History()
    hist.record(x=x)
    for t in range(rounds):
        noise = round_noise(oracle, seed, t, Q, (R, n, p))
        for r in range(R):
            w_loc = []
            for i in range(n):
                w = x[r]
                for l in range(Q):
                    g = client_grad(problem, i, w) + noise[l][r, i]
                    step = g + mu * (w - x[r]) if mu else g
                    w = w - eta_a * step
                w_loc.append(w)
            avg = x[r] + eta_s * (sum(w - x[r] for w in w_loc) / n)
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
        noise = round_noise(oracle, seed, t, Q, (R, n, p))
        for r in range(R):
            dy, dc = [], []
            for i in range(n):
                y = x[r]
                for l in range(Q):
                    g = client_grad(problem, i, y) + noise[l][r, i]
                    y = y - eta_a * (g - ci[r][i] + c[r])
                ci_plus = ci[r][i] - c[r] + (x[r] - y) / (Q * eta_a)
                dy.append(y - x[r])
                dc.append(ci_plus - ci[r][i])
                ci[r][i] = ci_plus
            x[r] = problem.phi.prox(x[r] + eta_s * (sum(dy) / n), eta_s * eta_a * Q)
            c[r] = c[r] + sum(dc) / n
        hist.record(x=x, c=c, ci=ci)
    return hist.arrays()
