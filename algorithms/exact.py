"""Exact mode: closed-form mean and covariance of an algorithm's state on linear-Gaussian instances.

On a linear-Gaussian instance (quadratic f_i with attributes ``hessians`` (n, p, p) and ``linear`` (n, p),
phi = Zero, SquaredL2 or any regulariser declaring ``linear_prox = True`` (e.g. the weakly convex quadratic of
``fedbounds.algorithms.instances.quadratic``) so that every prox is linear, and an additive Gaussian oracle g = grad f_i(x) + xi with
xi ~ N(0, (sigma2/p) I) independent per call and client) one round of every built-in algorithm is an affine
map of the state s (all per-replica arrays of the state, flattened) and the round's noise xi (all oracle calls
of the round, stacked):

    s_{t+1} = M_t s_t + b_t + N_t xi_t,    xi_t ~ N(0, (sigma2/p) I), independent of s_t,

so that mean and covariance propagate exactly:

    m_{t+1} = M_t m_t + b_t,    C_{t+1} = M_t C_t M_t^T + (sigma2/p) N_t N_t^T.

M_t, b_t, N_t are not derived by hand: they are read off the vectorised ``step`` itself by running it on probe
"replicas" (replica 0: zero state and zero noise -> b; replica 1 + j: the j-th basis state -> column j of M;
then one replica per noise coordinate, with a unit noise injected by a probing oracle -> the columns of N).
Every round the probe also steps two random (state, noise) pairs and checks them against the affine map, so
a step that is not affine (an l1 prox, say) is a ValueError rather than a wrong answer. The map is re-probed
every round, so time-varying maps (FedDA's growing prox weight) are exact too, except for algorithms that
declare ``time_invariant = True`` (the same map every round), which are probed once.

:func:`affine_round` returns the map (M, b, Sigma) of a time-invariant round once, with the readouts; the moments
at any round and in the limit then follow without a round loop (``fedbounds.algorithms.closed_form``).

Expectations of quadratic metrics follow from E[u^T A u] = m^T A m + tr(A C) for u affine in the state:

    E[psi(x_t)] - psi*,  E||F_nor^gamma(z_t)||^2,  E||F_nat^gamma(x_t)||^2,  E||x_t - x*||^2.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from fedbounds.algorithms._validate import InvalidParameterError, check_mapping, describe
from fedbounds.algorithms.base import check_int, natural_residual, normal_map
from fedbounds.algorithms.metrics import MetricContext, natural_gamma
from fedbounds.algorithms.oracles import ExactOracle, GaussianOracle
from fedbounds.algorithms.run import check_problem, get_algorithm, replica_arrays

#: affine_round probes again with directions of length max|b| when max|b| exceeds this
PROBE_RESCALE = 100.0
#: relative tolerance of the affinity self-check
AFFINE_RTOL = 1e-8
_LINEAR_PHI = ("zero", "squared_l2", "l2_squared", "squaredl2")


@dataclass(frozen=True)
class ExactTrajectory:
    """Exact moments of a run.

    ``layout`` maps each state field to its (start, stop) slice in the flat state vector and its per-replica
    shape. ``mean`` (rounds + 1, d) is E[s_t]; ``cov`` (d, d) is Cov[s_T] after the last round; ``x_mean``
    (rounds + 1, p) and ``x_cov`` (rounds + 1, p, p) are the moments of the output point x_t. The ``E_*``
    arrays (length rounds + 1, row t after t rounds) are exact expectations; a metric that does not apply
    (no z, no gamma) is None.
    """

    algorithm: str
    params: dict
    rounds: int
    sigma2: float
    layout: dict[str, tuple[int, int, tuple[int, ...]]]
    mean: np.ndarray
    cov: np.ndarray
    x_mean: np.ndarray
    x_cov: np.ndarray
    E_psi_gap: np.ndarray
    E_psi: np.ndarray
    E_dist_sq: np.ndarray
    E_normal_map_sq: np.ndarray | None
    E_natural_residual_sq: np.ndarray | None


class _ProbeOracle:
    """Exact gradients plus a prescribed additive noise: call k of a round adds ``noise[k]`` (R', n, p)."""

    sigma2 = 0.0

    def __init__(self) -> None:
        self.noise: list[np.ndarray] = []
        self.calls = 0
        self.shapes: list[tuple[int, ...]] = []

    def reset(self, noise: list[np.ndarray]) -> None:
        self.noise, self.calls, self.shapes = noise, 0, []

    def sample(self, problem: Any, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        k = self.calls
        self.calls += 1
        self.shapes.append(np.shape(X))
        g = problem.grad(X)
        if k < len(self.noise):
            g = g + self.noise[k]
        return g


def check_linear_gaussian(problem: Any, oracle: Any) -> float:
    """The oracle's sigma2 if (problem, oracle) is linear-Gaussian (contract), else a ValueError saying why."""
    if not (hasattr(problem, "hessians") and hasattr(problem, "linear")):
        raise InvalidParameterError("problem", "problem: exact mode needs a quadratic problem with attributes 'hessians' and 'linear'")
    phi_name = str(getattr(problem.phi, "name", type(problem.phi).__name__)).lower()
    linear = bool(getattr(problem.phi, "linear_prox", False))
    if not linear and phi_name not in _LINEAR_PHI and type(problem.phi).__name__ not in ("Zero", "SquaredL2"):
        raise InvalidParameterError("problem", f"problem: exact mode needs phi = Zero or SquaredL2 (a linear prox), got {phi_name!r}")
    if oracle is None or isinstance(oracle, ExactOracle):
        return 0.0
    if not isinstance(oracle, GaussianOracle):
        what = "a GaussianOracle (additive N(0, sigma2/p I)) or exact gradients"
        raise InvalidParameterError("oracle", f"oracle: exact mode needs {what}, got {describe(oracle)}")
    return float(oracle.sigma2)


def _flatten(arrays: Mapping[str, np.ndarray], R: int) -> np.ndarray:
    return np.concatenate([a.reshape(R, -1) for a in arrays.values()], axis=1)


def _with_arrays(state: Any, S: np.ndarray, layout: Mapping[str, tuple[int, int, tuple[int, ...]]]) -> Any:
    R = S.shape[0]
    return dataclasses.replace(state, **{name: S[:, a:b].reshape(R, *shape).copy() for name, (a, b, shape) in layout.items()})


def _affine_rows(values: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """From outputs on [zero, e_1..e_d, ...] probes: (offset (k,), matrix (k, d))."""
    v = values.reshape(values.shape[0], -1)
    return v[0], (v[1 : 1 + d] - v[0]).T


def _quadratic(fun: Any, p: int) -> tuple[float, np.ndarray, np.ndarray]:
    """A quadratic fun(x) = c + a^T x + x^T A x / 2 recovered exactly by polarization on unit points."""
    eye = np.eye(p)
    pts = np.concatenate([np.zeros((1, p)), eye, (eye[:, None, :] + eye[None, :, :]).reshape(p * p, p)])
    v = np.asarray(fun(pts), dtype=float)
    c, single, pair = v[0], v[1 : 1 + p], v[1 + p :].reshape(p, p)
    A = pair - single[:, None] - single[None, :] + c
    a = single - c - 0.5 * np.diag(A)
    return float(c), a, 0.5 * (A + A.T)


class _Prober:
    """The probing machinery of one (algorithm, problem, params, oracle): the state's layout and initial value,
    the per-round affine map (:meth:`probe`) and the affine readouts of x, F_nor(z), F_nat(x) (:meth:`readout`)."""

    def __init__(self, algorithm: str | Any, problem: Any, params: Mapping[str, Any] | None, oracle: Any, scale: float = 1.0) -> None:
        alg = get_algorithm(algorithm)
        self.alg = alg
        self.name = algorithm if isinstance(algorithm, str) else getattr(alg, "name", type(alg).__name__)
        check_problem(problem)
        self.sigma2 = check_linear_gaussian(problem, oracle)
        self.params = alg.validate(problem, check_mapping("params", params, allow_none=True))
        self.problem = problem
        p = self.p = problem.p

        # the state's layout and its initial value (deterministic)
        self.oracle = _ProbeOracle()
        self.oracle.reset([])
        s0 = alg.init(problem, self.params, self.oracle, 1, 0)
        arrays0 = replica_arrays(s0, 1)
        layout: dict[str, tuple[int, int, tuple[int, ...]]] = {}
        start = 0
        for fname, a in arrays0.items():
            size = int(np.prod(a.shape[1:], dtype=int))
            layout[fname] = (start, start + size, a.shape[1:])
            start += size
        self.layout = layout
        d = self.d = start
        self.s0 = _flatten(arrays0, 1)[0]

        # number and shapes of the oracle calls per round (dry run on one replica)
        alg.step(s0, 0)
        self.call_shapes = [tuple(s[1:]) for s in self.oracle.shapes]
        sizes = [int(np.prod(s, dtype=int)) for s in self.call_shapes]
        K = self.K = sum(sizes)
        sigma2 = self.sigma2
        self.noise_scale = (np.array([sigma2 / s[-1] for s, m in zip(self.call_shapes, sizes) for _ in range(m)])
                            if K else np.zeros(0))

        check_rng = np.random.default_rng(20240601)
        n_check = 2
        Rp = self.Rp = 1 + d + K + n_check
        S = np.zeros((Rp, d))
        # probe directions of length ``scale``: M = (O - b) / scale loses eps |b| / scale, not eps |b|, to cancellation
        self.scale = float(scale)
        S[1 : 1 + d] = self.scale * np.eye(d)
        self.S_check = check_rng.standard_normal((n_check, d))
        S[1 + d + K :] = self.S_check
        self.S = S
        Xi = np.zeros((Rp, K))
        Xi[1 + d : 1 + d + K] = self.scale * np.eye(K)
        self.Xi_check = check_rng.standard_normal((n_check, K))
        Xi[1 + d + K :] = self.Xi_check
        self.noise_blocks = []
        offset = 0
        for shape, m in zip(self.call_shapes, sizes):
            self.noise_blocks.append(Xi[:, offset : offset + m].reshape(Rp, *shape))
            offset += m

        self.template = alg.init(problem, self.params, self.oracle, Rp, 0)
        self.ctx = MetricContext(problem, self.params)
        self.sol = problem.solution()
        self.psi_quadratic = _quadratic(problem.psi, p)
        self.eye_p = np.vstack([np.zeros(p), np.eye(p)])

    def start(self) -> Any:
        """The probe state of round 0."""
        return _with_arrays(self.template, self.S, self.layout)

    def readout(self, state: Any) -> dict[str, Any]:
        """The affine maps state -> x, F_nor(z), F_nat(x) (offset, matrix), read off the probe state."""
        problem, d, p = self.problem, self.d, self.p
        obs = self.alg.observe(state)
        x0, Px = _affine_rows(np.asarray(obs.x), d)
        maps: dict[str, Any] = {"x": (x0, Px / self.scale)}
        if obs.z is not None and obs.gamma is not None:
            z0, Pz = _affine_rows(np.asarray(obs.z), d)
            Pz = Pz / self.scale
            f0, Fm = _affine_rows(normal_map(problem, self.eye_p, obs.gamma), p)
            maps["nor"] = (Fm @ z0 + f0, Fm @ Pz)
        gamma = natural_gamma(self.ctx, obs)
        if gamma is not None:
            r0, Rm = _affine_rows(natural_residual(problem, self.eye_p, gamma), p)
            x0, Px = maps["x"]
            maps["nat"] = (Rm @ x0 + r0, Rm @ Px)
        return maps

    def probe(self, state: Any, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
        """(M_t, b_t, Sigma_t = (sigma2/p) N_t N_t^T, next probe state) of round t, with the affinity check."""
        d, K, Rp = self.d, self.K, self.Rp
        self.oracle.reset(self.noise_blocks)
        out = self.alg.step(state, t)
        if self.oracle.calls != len(self.call_shapes):
            raise ValueError(f"exact mode: round {t} made {self.oracle.calls} oracle calls, round 0 made {len(self.call_shapes)}")
        O = _flatten(replica_arrays(out, Rp), Rp)
        b = O[0]
        M = (O[1 : 1 + d] - b).T / self.scale
        N = (O[1 + d : 1 + d + K] - b).T / self.scale
        predicted = b + self.S_check @ M.T + self.Xi_check @ N.T
        err = np.max(np.abs(predicted - O[1 + d + K :]))
        scale = max(1.0, float(np.max(np.abs(O[1 + d + K :]))))
        if not err <= AFFINE_RTOL * scale:
            raise ValueError(f"exact mode: round {t} of {self.name} is not affine in (state, noise) (error {err:.3g}); "
                             "a nonlinear phi or step")
        NS = N * np.sqrt(self.noise_scale)
        return M, b, NS @ NS.T, _with_arrays(out, self.S, self.layout)


@dataclass(frozen=True)
class AffineRound:
    """One time-invariant round as the affine map s -> M s + b + N xi, read off the engine's own ``step``.

    ``M`` (d, d), ``b`` (d,), ``Sigma`` = Cov[N xi] = (sigma2/p) N N^T (d, d); ``s0`` the (deterministic) initial
    state; ``readouts`` maps "x" (and "nor", "nat" where they apply) to (offset, matrix) with the quantity = offset +
    matrix @ s; ``psi_quadratic`` = (c, a, A) with psi(x) = c + a^T x + x^T A x / 2; ``x_star``, ``psi_star`` the
    instance's certified solution."""

    algorithm: str
    params: dict
    sigma2: float
    layout: dict[str, tuple[int, int, tuple[int, ...]]]
    M: np.ndarray
    b: np.ndarray
    Sigma: np.ndarray
    s0: np.ndarray
    readouts: dict[str, tuple[np.ndarray, np.ndarray]]
    psi_quadratic: tuple[float, np.ndarray, np.ndarray]
    x_star: np.ndarray
    psi_star: float


def affine_round(algorithm: str | Any, problem: Any, params: Mapping[str, Any] | None = None, *, oracle: Any = None) -> AffineRound:
    """The affine map of one round of a time-invariant algorithm (``time_invariant = True``) on a linear-Gaussian
    instance, probed once from the engine's ``step`` exactly as :func:`run_exact` probes it (module docstring);
    a ValueError if the algorithm's round depends on t or the instance is not linear-Gaussian."""
    pr = _Prober(algorithm, problem, params, oracle)
    if not bool(getattr(pr.alg, "time_invariant", False)):
        raise ValueError(f"closed-form moments need a time-invariant round; {pr.name} declares none (time_invariant is not True)")
    state = pr.start()
    maps = pr.readout(state)
    M, b, Sigma, _ = pr.probe(state, 0)
    big = float(np.max(np.abs(b), initial=0.0))
    if big > PROBE_RESCALE:  # a large offset (high heterogeneity): probe again with directions of its size
        pr = _Prober(algorithm, problem, params, oracle, scale=big)
        state = pr.start()
        maps = pr.readout(state)
        M, b, Sigma, _ = pr.probe(state, 0)
    return AffineRound(algorithm=pr.name, params=pr.params, sigma2=pr.sigma2, layout=pr.layout, M=M, b=b, Sigma=0.5 * (Sigma + Sigma.T),
                       s0=pr.s0, readouts=maps, psi_quadratic=pr.psi_quadratic, x_star=np.asarray(pr.sol.x_star, dtype=float),
                       psi_star=float(pr.sol.psi_star))


def run_exact(
    algorithm: str | Any,
    problem: Any,
    params: Mapping[str, Any] | None = None,
    *,
    rounds: int,
    oracle: Any = None,
) -> ExactTrajectory:
    """Exact E[psi(x_t)] - psi*, E||F_nor(z_t)||^2 (and more) for t = 0..rounds, with no sampling error.

    ``oracle`` is a GaussianOracle (noise N(0, (sigma2/p) I) per client and call) or None / ExactOracle
    (sigma2 = 0, a deterministic run). The seed plays no role (the moments do not depend on it).
    """
    rounds = check_int("rounds", rounds, 0)
    pr = _Prober(algorithm, problem, params, oracle)
    d = pr.d
    mean = pr.s0
    cov = np.zeros((d, d))
    sol = pr.sol
    psi_c, psi_a, psi_A = pr.psi_quadratic

    x_mean, x_cov, E_psi, E_dist, E_nor, E_nat = [], [], [], [], [], []
    means = [mean]

    def record(maps: Mapping[str, Any], mean: np.ndarray, cov: np.ndarray) -> None:
        x0, Px = maps["x"]
        mx, Cx = Px @ mean + x0, Px @ cov @ Px.T
        x_mean.append(mx)
        x_cov.append(Cx)
        E_psi.append(psi_c + psi_a @ mx + 0.5 * mx @ psi_A @ mx + 0.5 * np.sum(psi_A * Cx))
        E_dist.append(float(np.sum((mx - sol.x_star) ** 2) + np.trace(Cx)))
        for key, out in (("nor", E_nor), ("nat", E_nat)):
            if key in maps:
                c0, A = maps[key]
                m = A @ mean + c0
                out.append(float(m @ m + np.sum((A @ cov) * A)))

    # Algorithms that declare ``time_invariant = True`` (their round map does not depend on t) are probed once.
    invariant = bool(getattr(pr.alg, "time_invariant", False))
    state = pr.start()
    maps = pr.readout(state)
    record(maps, mean, cov)
    M = b = Sigma = None
    for t in range(rounds):
        if M is None or not invariant:
            M, b, Sigma, state = pr.probe(state, t)
            if not invariant:
                maps = pr.readout(state)
        mean = M @ mean + b
        cov = M @ cov @ M.T + Sigma
        cov = 0.5 * (cov + cov.T)
        means.append(mean)
        record(maps, mean, cov)

    E_psi_arr = np.array(E_psi)
    return ExactTrajectory(
        algorithm=pr.name,
        params=pr.params,
        rounds=rounds,
        sigma2=pr.sigma2,
        layout=pr.layout,
        mean=np.array(means),
        cov=cov,
        x_mean=np.array(x_mean),
        x_cov=np.array(x_cov),
        E_psi_gap=E_psi_arr - sol.psi_star,
        E_psi=E_psi_arr,
        E_dist_sq=np.array(E_dist),
        E_normal_map_sq=np.array(E_nor) if E_nor else None,
        E_natural_residual_sq=np.array(E_nat) if E_nat else None,
    )
