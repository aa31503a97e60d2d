"""Baseline algorithms run beside FedNMap, vectorised over (R replicas, n clients, p), per ``docs/baselines.md``.

Notation of the FedNMap paper: n clients, Q local steps, round t, client step eta_a, server step eta_s,
g_i(x) one stochastic gradient of f_i at x. Every algorithm draws its gradients at round t, local step l from
``stream(seed, t, l)`` with one oracle call on the full (R, n, p) stack. "uplink" is the number of p-vectors each
client sends per round (recorded per round as the metric ``uplink``).

Centralised references (``prox_sgd``, ``norm_sgd``): one step per round, on the client-averaged stochastic
gradient g = (1/n) sum_i g_i(x) (one oracle call on the stack of n copies of x). With n = 1 this is exactly the
centralised method of baselines.md; with n > 1 it is the same method with an n-sample minibatch (variance
sigma^2/n), i.e. parallel SGD with one uplink vector per client.

Composite adaptation: FedAvg, SCAFFOLD and FedProx were published for smooth problems; their server prox
``prox_{eta_s eta_a Q phi}`` is OUR composite adaptation (baselines.md), as the docstrings say.

The prox parameter of a server prox, eta_s eta_a Q, must lie in (0, 1/rho) (checked up front).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from fedbounds.algorithms.base import check_gamma, check_int, check_positive
from fedbounds.algorithms.metrics import Observation
from fedbounds.algorithms.rng import stream
from fedbounds.algorithms.run import Context, check_params, check_point

# ------------------------------------------------------------------------------------------ helpers


def _clients(x: np.ndarray, n: int) -> np.ndarray:
    """Stack of n copies of x: (R, p) -> (R, n, p) (a fresh array)."""
    return np.repeat(x[:, None, :], n, axis=1)


class _Base:
    name = ""
    required: tuple[str, ...] = ()
    optional: Mapping[str, Any] = {}
    uplink = 1
    #: one round is the same map of the state every round (exact mode probes it once); False for FedDA
    time_invariant = True

    def validate(self, problem: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        P = check_params(self.name, params, self.required, self.optional)
        for key in ("eta", "eta_a", "eta_s", "mu"):
            if key in P:
                P[key] = check_positive(key, P[key])
        if "Q" in P:
            P["Q"] = check_int("Q", P["Q"], 1)
        for key in ("x0", "z0"):
            if key in P:
                P[key] = check_point(key, P[key], problem.p)
        self._validate(problem, P)
        return P

    def _validate(self, problem: Any, P: dict[str, Any]) -> None:
        """Algorithm-specific checks (prox parameters)."""

    def _per_round(self, state: Any) -> dict[str, float]:
        return {"uplink": float(self.uplink) if state.t > 0 else 0.0}

    def observe(self, state: Any) -> Observation:
        return Observation(x=state.x, per_round=self._per_round(state))


def _check_server_prox(problem: Any, P: Mapping[str, Any]) -> None:
    check_gamma(P["eta_s"] * P["eta_a"] * P["Q"], problem.phi.rho, name="eta_s * eta_a * Q (server prox parameter)")


# ------------------------------------------------------------------------------------------ centralised


@dataclass(frozen=True, eq=False)
class PointState:
    """After t rounds: the point x_t (R, p)."""

    ctx: Context
    t: int
    x: np.ndarray


@dataclass(frozen=True, eq=False)
class NormalMapState:
    """After t rounds: z_t and x_t = prox(z_t), (R, p)."""

    ctx: Context
    t: int
    z: np.ndarray
    x: np.ndarray


def _averaged_gradient(ctx: Context, x: np.ndarray, t: int) -> np.ndarray:
    """(1/n) sum_i g_i(x), one oracle call on the (R, n, p) stack, stream (t, 0)."""
    g = ctx.oracle.sample(ctx.problem, _clients(x, ctx.problem.n), stream(ctx.seed, t, 0))
    return g.mean(axis=1)


class ProxSGD(_Base):
    """Prox-SGD (Ghadimi, Lan, Zhang 2016; Davis, Drusvyatskiy 2019), baselines.md:

        x_{k+1} = prox_{eta phi}(x_k - eta g(x_k)),   g = client-averaged stochastic gradient.

    Params: ``eta`` in (0, 1/rho), ``x0`` (default zeros). Uplink 1.
    """

    name = "prox_sgd"
    required = ("eta",)
    optional: Mapping[str, Any] = {"x0": None}

    def _validate(self, problem: Any, P: dict[str, Any]) -> None:
        check_gamma(P["eta"], problem.phi.rho, name="eta")

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any, replicas: int, seed: int) -> PointState:
        P = self.validate(problem, params)
        x = np.broadcast_to(P["x0"], (replicas, problem.p)).copy()
        return PointState(Context(problem, P, oracle, seed, replicas), 0, x)

    def step(self, state: PointState, t: int) -> PointState:
        ctx = state.ctx
        eta = ctx.params["eta"]
        g = _averaged_gradient(ctx, state.x, t)
        return PointState(ctx, state.t + 1, ctx.problem.phi.prox(state.x - eta * g, eta))

    def _per_round(self, state: Any) -> dict[str, float]:
        done = state.t > 0
        return {"uplink": 1.0 if done else 0.0, "eta": state.ctx.params["eta"] if done else 0.0}


class NormSGD(_Base):
    """Normal-map SGD, norM-SGD (Qiu, Jiang, Milzarek), baselines.md; the centralised method FedNMap builds on:

        z_{k+1} = z_k - eta (g(x_k) + (z_k - x_k)/gamma),   x_{k+1} = prox_{gamma phi}(z_{k+1}).

    (``eta`` is the paper's alpha_k, constant here.) FedNMap with n = 1, Q = 1 equals it with eta = eta_hat.
    Params: ``eta`` > 0, ``gamma`` in (0, 1/rho), ``z0`` (default zeros). Uplink 1.
    """

    name = "norm_sgd"
    required = ("eta", "gamma")
    optional: Mapping[str, Any] = {"z0": None}

    def _validate(self, problem: Any, P: dict[str, Any]) -> None:
        P["gamma"] = check_gamma(P["gamma"], problem.phi.rho)

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any, replicas: int, seed: int) -> NormalMapState:
        P = self.validate(problem, params)
        z = np.broadcast_to(P["z0"], (replicas, problem.p)).copy()
        return NormalMapState(Context(problem, P, oracle, seed, replicas), 0, z, problem.phi.prox(z, P["gamma"]))

    def step(self, state: NormalMapState, t: int) -> NormalMapState:
        ctx = state.ctx
        eta, gamma = ctx.params["eta"], ctx.params["gamma"]
        g = _averaged_gradient(ctx, state.x, t)
        z = state.z - eta * (g + (state.z - state.x) / gamma)
        return NormalMapState(ctx, state.t + 1, z, ctx.problem.phi.prox(z, gamma))

    def observe(self, state: NormalMapState) -> Observation:
        P = state.ctx.params
        done = state.t > 0
        return Observation(
            x=state.x, z=state.z, gamma=P["gamma"], per_round={"uplink": 1.0 if done else 0.0, "eta": P["eta"] if done else 0.0}
        )


# ------------------------------------------------------------------------------------------ federated, composite


class FedMiD(_Base):
    """FedMiD (Yuan, Zaheer, Reddi, ICML 2021; Euclidean mirror map), baselines.md:

        client: x_i^0 = x_t;  x_i^{l+1} = prox_{eta_a phi}(x_i^l - eta_a g_i(x_i^l)),  l < Q
        server: x_{t+1} = x_t + eta_s mean_i (x_i^Q - x_t).

    Params: ``eta_a`` in (0, 1/rho), ``eta_s`` > 0 (default 1), ``Q`` >= 1, ``x0``. Uplink 1.
    """

    name = "fedmid"
    required = ("eta_a", "Q")
    optional: Mapping[str, Any] = {"eta_s": 1.0, "x0": None}

    def _validate(self, problem: Any, P: dict[str, Any]) -> None:
        check_gamma(P["eta_a"], problem.phi.rho, name="eta_a")

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any, replicas: int, seed: int) -> PointState:
        P = self.validate(problem, params)
        return PointState(Context(problem, P, oracle, seed, replicas), 0, np.broadcast_to(P["x0"], (replicas, problem.p)).copy())

    def step(self, state: PointState, t: int) -> PointState:
        ctx = state.ctx
        P, problem = ctx.params, ctx.problem
        eta_a = P["eta_a"]
        X = _clients(state.x, problem.n)
        for l in range(P["Q"]):
            g = ctx.oracle.sample(problem, X, stream(ctx.seed, t, l))
            X = problem.phi.prox(X - eta_a * g, eta_a)
        x = state.x + P["eta_s"] * (X.mean(axis=1) - state.x)
        return PointState(ctx, state.t + 1, x)


class FedDA(_Base):
    """FedDA / FedDualAvg (Yuan, Zaheer, Reddi, ICML 2021; h = ||.||^2/2, so the primal map is a prox),
    baselines.md:

        client: z_i^0 = z_t; for l < Q: eta~ = eta_s eta_a t Q + eta_a l;  x_i^l = prox_{eta~ phi}(z_i^l);
                z_i^{l+1} = z_i^l - eta_a g_i(x_i^l)
        server: z_{t+1} = z_t + eta_s mean_i (z_i^Q - z_t);  x_{t+1} = prox_{eta_s eta_a (t+1) Q phi}(z_{t+1}).

    z_0 = x_0; prox with weight 0 is the identity. The prox weight grows with t (dual averaging), so FedDA needs
    a convex phi (rho = 0). Params: ``eta_a`` > 0, ``eta_s`` > 0 (default 1), ``Q`` >= 1, ``x0``. Uplink 1.
    """

    name = "fedda"
    required = ("eta_a", "Q")
    optional: Mapping[str, Any] = {"eta_s": 1.0, "x0": None}
    time_invariant = False  # the prox weight grows with t

    def _validate(self, problem: Any, P: dict[str, Any]) -> None:
        if problem.phi.rho > 0:
            raise ValueError(f"fedda needs a convex phi (rho = 0): its prox weight grows without bound; got rho = {problem.phi.rho}")

    @staticmethod
    def _prox(problem: Any, z: np.ndarray, weight: float) -> np.ndarray:
        return z.copy() if weight == 0.0 else problem.phi.prox(z, weight)

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any, replicas: int, seed: int) -> NormalMapState:
        P = self.validate(problem, params)
        z = np.broadcast_to(P["x0"], (replicas, problem.p)).copy()
        return NormalMapState(Context(problem, P, oracle, seed, replicas), 0, z, z.copy())

    def step(self, state: NormalMapState, t: int) -> NormalMapState:
        ctx = state.ctx
        P, problem = ctx.params, ctx.problem
        eta_a, eta_s, Q = P["eta_a"], P["eta_s"], P["Q"]
        Z = _clients(state.z, problem.n)
        for l in range(Q):
            X = self._prox(problem, Z, eta_s * eta_a * t * Q + eta_a * l)
            Z -= eta_a * ctx.oracle.sample(problem, X, stream(ctx.seed, t, l))
        z = state.z + eta_s * (Z.mean(axis=1) - state.z)
        return NormalMapState(ctx, state.t + 1, z, self._prox(problem, z, eta_s * eta_a * (t + 1) * Q))


# ------------------------------------------------------------------------------------------ federated, smooth + server prox


class FedAvgProx(_Base):
    """FedAvg with server prox (McMahan et al. 2017; the composite adaptation is ours), baselines.md:

        client: x_i^0 = x_t;  x_i^{l+1} = x_i^l - eta_a g_i(x_i^l)
        server: x_{t+1} = prox_{eta_s eta_a Q phi}(x_t + eta_s mean_i (x_i^Q - x_t)).

    Biased under heterogeneity with a nonsmooth phi, even with exact gradients. Params: ``eta_a`` > 0,
    ``eta_s`` > 0 (default 1), ``Q`` >= 1 with eta_s eta_a Q in (0, 1/rho), ``x0``. Uplink 1.
    """

    name = "fedavg_prox"
    required = ("eta_a", "Q")
    optional: Mapping[str, Any] = {"eta_s": 1.0, "x0": None}

    def _validate(self, problem: Any, P: dict[str, Any]) -> None:
        _check_server_prox(problem, P)

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any, replicas: int, seed: int) -> PointState:
        P = self.validate(problem, params)
        return PointState(Context(problem, P, oracle, seed, replicas), 0, np.broadcast_to(P["x0"], (replicas, problem.p)).copy())

    def _local(self, ctx: Context, x: np.ndarray, t: int) -> np.ndarray:
        P, problem = ctx.params, ctx.problem
        X = _clients(x, problem.n)
        for l in range(P["Q"]):
            X -= P["eta_a"] * ctx.oracle.sample(problem, X, stream(ctx.seed, t, l))
        return X

    def step(self, state: PointState, t: int) -> PointState:
        ctx = state.ctx
        P = ctx.params
        X = self._local(ctx, state.x, t)
        x = ctx.problem.phi.prox(state.x + P["eta_s"] * (X.mean(axis=1) - state.x), P["eta_s"] * P["eta_a"] * P["Q"])
        return PointState(ctx, state.t + 1, x)


@dataclass(frozen=True, eq=False)
class ScaffoldState:
    """After t rounds: server x_t and c_t (R, p); client control variates c_i (R, n, p)."""

    ctx: Context
    t: int
    x: np.ndarray
    c: np.ndarray
    ci: np.ndarray


class ScaffoldProx(_Base):
    """SCAFFOLD with server prox (Karimireddy et al. 2020, option II, full participation; the server prox is
    our composite adaptation), baselines.md:

        client: y^0 = x_t;  y^{l+1} = y^l - eta_a (g_i(y^l) - c_i + c_t),  l < Q
                c_i^+ = c_i - c_t + (x_t - y^Q)/(Q eta_a);  send dy_i = y^Q - x_t and dc_i = c_i^+ - c_i
        server: x_{t+1} = prox_{eta_s eta_a Q phi}(x_t + eta_s mean_i dy_i),  c_{t+1} = c_t + mean_i dc_i.

    c = c_i = 0 at t = 0. Params as FedAvg with server prox. Uplink 2.
    """

    name = "scaffold_prox"
    required = ("eta_a", "Q")
    optional: Mapping[str, Any] = {"eta_s": 1.0, "x0": None}
    uplink = 2

    def _validate(self, problem: Any, P: dict[str, Any]) -> None:
        _check_server_prox(problem, P)

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any, replicas: int, seed: int) -> ScaffoldState:
        P = self.validate(problem, params)
        R, n, p = replicas, problem.n, problem.p
        x = np.broadcast_to(P["x0"], (R, p)).copy()
        return ScaffoldState(Context(problem, P, oracle, seed, R), 0, x, np.zeros((R, p)), np.zeros((R, n, p)))

    def step(self, state: ScaffoldState, t: int) -> ScaffoldState:
        ctx = state.ctx
        P, problem = ctx.params, ctx.problem
        eta_a, eta_s, Q = P["eta_a"], P["eta_s"], P["Q"]
        correction = state.c[:, None, :] - state.ci  # c_t - c_i
        Y = _clients(state.x, problem.n)
        for l in range(Q):
            Y -= eta_a * (ctx.oracle.sample(problem, Y, stream(ctx.seed, t, l)) + correction)
        ci = state.ci - state.c[:, None, :] + (state.x[:, None, :] - Y) / (Q * eta_a)
        dy = Y - state.x[:, None, :]
        x = problem.phi.prox(state.x + eta_s * dy.mean(axis=1), eta_s * eta_a * Q)
        c = state.c + (ci - state.ci).mean(axis=1)
        return ScaffoldState(ctx, state.t + 1, x, c, ci)


class FedProxProx(FedAvgProx):
    """FedProx with server prox (Li et al. 2020; the server prox is our composite adaptation), baselines.md:

        client: w^0 = x_t;  w^{l+1} = w^l - eta_a (g_i(w^l) + mu (w^l - x_t)),  l < Q
        server: x_{t+1} = prox_{eta_s eta_a Q phi}(x_t + eta_s mean_i (w^Q - x_t)).

    Params: ``mu`` > 0 plus those of FedAvg with server prox. Uplink 1.
    """

    name = "fedprox_prox"
    required = ("eta_a", "Q", "mu")

    def _local(self, ctx: Context, x: np.ndarray, t: int) -> np.ndarray:
        P, problem = ctx.params, ctx.problem
        anchor = x[:, None, :]
        W = _clients(x, problem.n)
        for l in range(P["Q"]):
            W -= P["eta_a"] * (ctx.oracle.sample(problem, W, stream(ctx.seed, t, l)) + P["mu"] * (W - anchor))
        return W
