"""FedNMap, Algorithm 1 as reconstructed, written as the pseudocode of fednmap-reconstruction.md §2.6 reads:

    for t = 0..T-1:
        server broadcasts z_t (clients compute x_t = prox(z_t), v_t = (z_t - x_t)/gamma)
        for each client i:
            z_i = z_t
            for l = 0..Q-1:
                x_i = prox(z_i)                  # variant A (B: x_i = z_i - gamma v_t)
                g   = g_i(x_i)                   # one stochastic gradient per step
                z_i = z_i - eta_a (g + v_t + c_{i,t})
            y_{i,t} = (z_t - z_i) / (eta_a Q)    # the only uplink message
        server: ybar_t = mean_i y_{i,t};  z_{t+1} = z_t - eta_s eta_a Q ybar_t;  x_{t+1} = prox(z_{t+1})
        clients: c_{i,t+1} = c_{i,t} - y_{i,t} + ybar_t

with one more loop, over the Monte Carlo replicas r, around the clients. Each stochastic gradient is computed on
its own point, g = grad f_i(x_i) + xi[r, i] (``client_grad``), with the noise of (t, l) replayed from the engine's
stream (``round_noise``; see ``fedbounds.algorithms.reference._common``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from fedbounds.algorithms.reference._common import History, client_grad, initial, round_noise


def fednmap(
    problem: Any,
    params: dict,
    *,
    rounds: int,
    replicas: int = 1,
    seed: int = 0,
    oracle: Any,
    keep: tuple[str, ...] | None = None,
) -> dict[str, np.ndarray]:
    """Reference FedNMap; history of ``z``, ``x``, ``c`` (or only the fields in ``keep``).

    Defaults: eta_s 1, variant "A", correction True, z0 zeros.
    """
    gamma, eta_a, Q = params["gamma"], params["eta_a"], params["Q"]
    eta_s = params.get("eta_s", 1.0)
    variant = params.get("variant", "A")
    correction = params.get("correction", True)
    n, p, R = problem.n, problem.p, replicas

    def prox(z: np.ndarray) -> np.ndarray:
        return problem.phi.prox(z, gamma)

    z = [initial(params, "z0", p) for _ in range(R)]  # input z_0
    x = [prox(z[r]) for r in range(R)]  # x_0 = prox(z_0)
    c = [[np.zeros(p) for _ in range(n)] for _ in range(R)]  # c_{i,0} = 0
    hist = History(keep)
    hist.record(z=z, x=x, c=c)
    for t in range(rounds):
        noise = round_noise(oracle, seed, t, Q, (R, n, p))  # noise[l][r, i]: the draw of client i at step l
        for r in range(R):
            # server broadcasts z_t; clients compute x_t and v_t = (z_t - x_t)/gamma
            v = (z[r] - x[r]) / gamma
            y = []
            for i in range(n):
                z_i = z[r]
                for l in range(Q):
                    x_i = prox(z_i) if variant == "A" else z_i - gamma * v  # [I] variant A / variant B
                    g = client_grad(problem, i, x_i) + noise[l][r, i]  # g_i(x_i)
                    z_i = z_i - eta_a * (g + v + c[r][i])
                y.append((z[r] - z_i) / (eta_a * Q))  # the only uplink message
            ybar = sum(y) / n
            z[r] = z[r] - eta_s * eta_a * Q * ybar
            x[r] = prox(z[r])
            if correction:
                c[r] = [c[r][i] - y[i] + ybar for i in range(n)]
        hist.record(z=z, x=x, c=c)
    return hist.arrays()
