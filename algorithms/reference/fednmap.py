"""FedNMap, Algorithm 1 as reconstructed (fednmap-reconstruction.md §2.6), written with per-client loops."""

from __future__ import annotations

from typing import Any

import numpy as np

from algorithms.reference._common import History, draw, initial


def fednmap(problem: Any, params: dict, *, rounds: int, replicas: int = 1, seed: int = 0, oracle: Any) -> dict[str, np.ndarray]:
    """Reference FedNMap; history of ``z``, ``x``, ``c``. Defaults: eta_s 1, variant "A", correction True."""
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
    hist = History()
    hist.record(z=z, x=x, c=c)
    for t in range(rounds):
        # server broadcasts z_t; clients compute x_t and v_t = (z_t - x_t)/gamma
        v = [(z[r] - x[r]) / gamma for r in range(R)]
        z_loc = [[z[r].copy() for _ in range(n)] for r in range(R)]
        for l in range(Q):
            x_loc = [[None] * n for _ in range(R)]
            for r in range(R):
                for i in range(n):
                    if variant == "A":
                        x_loc[r][i] = prox(z_loc[r][i])  # [I] variant A
                    else:
                        x_loc[r][i] = z_loc[r][i] - gamma * v[r]  # variant B
            g = draw(oracle, problem, x_loc, seed, t, l)
            for r in range(R):
                for i in range(n):
                    z_loc[r][i] = z_loc[r][i] - eta_a * (g[r, i] + v[r] + c[r][i])
        for r in range(R):
            y = [(z[r] - z_loc[r][i]) / (eta_a * Q) for i in range(n)]  # the only uplink message
            ybar = sum(y) / n
            z[r] = z[r] - eta_s * eta_a * Q * ybar
            x[r] = prox(z[r])
            if correction:
                c[r] = [c[r][i] - y[i] + ybar for i in range(n)]
        hist.record(z=z, x=x, c=c)
    return hist.arrays()
