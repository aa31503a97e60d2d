"""FedNMap (Huang, Pu, Johansson, arXiv 2602.03357), Algorithm 1 as reconstructed.

Problem: min_x psi(x) = f(x) + phi(x), f = (1/n) sum_i f_i, each f_i L-smooth, phi rho-weakly convex (eq. (1)).
Specification: ``docs/fednmap-reconstruction.md``, pseudocode of section 2.6. One round t:

    x_t = prox_{gamma phi}(z_t),  v_t = (z_t - x_t) / gamma                      (frozen during the round, §2.2 [D])
    client i:  z_i^0 = z_t;  for l = 0..Q-1:
                   x_i^l = prox_{gamma phi}(z_i^l)    variant "A" (default; the reconstruction's most likely
                                                      reading [I], §2.3)
                   x_i^l = z_i^l - gamma v_t          variant "B" (the alternative, prox-free reading [I])
                   z_i^{l+1} = z_i^l - eta_a (g_i(x_i^l) + v_t + c_{i,t})              (§2.2 [D])
               y_{i,t} = (z_t - z_i^Q) / (eta_a Q)          the only uplink vector     (§2.1 [V])
    server:    ybar_t = mean_i y_{i,t};  z_{t+1} = z_t - eta_s eta_a Q ybar_t;  x_{t+1} = prox(z_{t+1})  (§2.1 [V])
    clients:   c_{i,t+1} = c_{i,t} - y_{i,t} + ybar_t,  c_{i,0} = 0                              (§2.1 [V])

``c0`` replaces c_{i,0} = 0 by given corrections (an (n, p) array), e.g. the fixed point's
c_i* = grad f(x*) - grad f_i(x*): started at (z*, c*) with exact gradients the algorithm stays there (a check's
start, not the paper's initialisation).

eta_hat = eta_s eta_a Q is the effective step (§2.4 [I]). ``correction=False`` keeps c = 0 (the negative
control: without the correction the fixed point is biased under heterogeneity). All clients and replicas are
updated at once on (R, n, p) arrays; the only Python loops are over rounds (the driver) and local steps.

Params: ``gamma`` in (0, 1/rho), ``eta_a`` > 0, ``eta_s`` > 0 (default 1), ``Q`` integer >= 1, ``variant`` "A" or
"B", ``correction`` (bool, default True), ``z0`` ((p,) array, default zeros), ``c0`` ((n, p) array, default zeros).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from fedbounds.algorithms._validate import check_array
from fedbounds.algorithms.base import check_gamma, check_int, check_positive
from fedbounds.algorithms.metrics import Observation
from fedbounds.algorithms.rng import stream
from fedbounds.algorithms.run import Context, check_params, check_point


@dataclass(frozen=True, eq=False)
class FedNMapState:
    """After t rounds: z_t, x_t = prox(z_t) (R, p); corrections c_{i,t} (R, n, p)."""

    ctx: Context
    t: int
    z: np.ndarray
    x: np.ndarray
    c: np.ndarray


class FedNMap:
    """FedNMap, Algorithm 1 (reconstruction §2.6); see the module docstring."""

    name = "fednmap"
    required = ("gamma", "eta_a", "Q")
    optional: Mapping[str, Any] = {"eta_s": 1.0, "variant": "A", "correction": True, "z0": None, "c0": None}
    uplink = 1
    #: one round is the same map of the state every round (exact mode probes it once)
    time_invariant = True

    def validate(self, problem: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        P = check_params(self.name, params, self.required, self.optional)
        P["gamma"] = check_gamma(P["gamma"], problem.phi.rho)
        P["eta_a"] = check_positive("eta_a", P["eta_a"])
        P["eta_s"] = check_positive("eta_s", P["eta_s"])
        P["Q"] = check_int("Q", P["Q"], 1)
        if P["variant"] not in ("A", "B"):
            raise ValueError(f"variant must be 'A' (gradient at prox(z_i)) or 'B' (shifted point), got {P['variant']!r}")
        if not isinstance(P["correction"], bool | np.bool_):
            raise ValueError(f"correction must be True or False, got {P['correction']!r}")
        P["correction"] = bool(P["correction"])
        P["z0"] = check_point("z0", P["z0"], problem.p)
        if P["c0"] is not None:
            c0 = check_array("c0", P["c0"], finite=False, nonempty=False)
            if c0.shape != (problem.n, problem.p) or not np.all(np.isfinite(c0)):
                raise ValueError(f"c0 must be a finite array of shape ({problem.n}, {problem.p}), got shape {c0.shape}")
            P["c0"] = c0
        return P

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any, replicas: int, seed: int) -> FedNMapState:
        P = self.validate(problem, params)
        R, n, p = replicas, problem.n, problem.p
        z = np.broadcast_to(P["z0"], (R, p)).copy()
        x = problem.phi.prox(z, P["gamma"])
        c = np.zeros((R, n, p)) if P["c0"] is None else np.broadcast_to(P["c0"], (R, n, p)).copy()
        return FedNMapState(Context(problem, P, oracle, seed, R), 0, z, x, c)

    def step(self, state: FedNMapState, t: int) -> FedNMapState:
        ctx = state.ctx
        P, problem, oracle = ctx.params, ctx.problem, ctx.oracle
        gamma, eta_a, eta_s, Q = P["gamma"], P["eta_a"], P["eta_s"], P["Q"]
        prox = problem.phi.prox
        z_t = state.z[:, None, :]
        v = (state.z - state.x) / gamma  # v_t in d phi(x_t), frozen for the round
        # three (R, n, p) work arrays per round; the round's outputs c and y are written into two of them
        drift = np.add(v[:, None, :], state.c)  # v_t + c_{i,t}
        Z = np.empty_like(drift)
        Z[...] = z_t  # z_i^0 = z_t
        buf = np.empty_like(drift)
        if P["variant"] == "B":
            shift = gamma * v[:, None, :]
        for l in range(Q):
            X = prox(Z, gamma) if P["variant"] == "A" else np.subtract(Z, shift, out=buf)
            g = oracle.sample(problem, X, stream(ctx.seed, t, l))
            np.add(g, drift, out=buf)
            buf *= eta_a
            Z -= buf  # z_i^{l+1} = z_i^l - eta_a (g + v_t + c_i)
        y = np.subtract(z_t, Z, out=Z)
        y /= eta_a * Q  # uplink y_{i,t} = (z_t - z_i^Q) / (eta_a Q)
        ybar = y.mean(axis=1)
        z = state.z - eta_s * eta_a * Q * ybar
        x = prox(z, gamma)
        if P["correction"]:
            c = np.subtract(state.c, y, out=drift)
            c += ybar[:, None, :]  # c_{i,t+1} = c_{i,t} - y_{i,t} + ybar_t
        else:
            c = state.c
        return FedNMapState(ctx, state.t + 1, z, x, c)

    def observe(self, state: FedNMapState) -> Observation:
        P = state.ctx.params
        done = state.t > 0
        eta_hat = P["eta_s"] * P["eta_a"] * P["Q"]
        return Observation(
            x=state.x,
            z=state.z,
            gamma=P["gamma"],
            per_round={"uplink": float(self.uplink) if done else 0.0, "eta": eta_hat if done else 0.0},
        )
