"""Stochastic gradient oracles g_i(x) with a known variance, batched over replicas and clients.

``oracle.sample(problem, X, rng)`` takes a client-stacked point X of shape ``(..., n, p)`` (leading axes are
Monte Carlo replicas) and returns one stochastic gradient per replica and client, shape ``(..., n, p)``, with
E g = grad f_i(X[..., i, :]) and a stated second moment E||g - grad f_i||^2 (``variance``), the sigma^2 of
FedNMap's Assumption 3 and of DS FedProxGrad's (9). All randomness comes from the ``numpy.random.Generator``
passed in; the engine draws one per (round, local step) from a SeedSequence and calls ``sample`` once on the
full stack, so replicas and clients get independent draws and a run is reproducible.

- ``GaussianOracle(sigma2)``: g = grad f_i(x) + xi, xi ~ N(0, (sigma2/p) I_p), so E||xi||^2 = sigma2 exactly.
- ``MinibatchOracle(batch, replace=False)``: g = (1/b) sum_{j in S} grad f_ij(x), S a uniform batch of b of
  client i's N_i samples, drawn per replica and client per call. Exact variance (Cochran, Sampling
  Techniques, 3rd ed., Thm 2.2, for the mean of a simple random sample without replacement):
  E||g - grad f_i||^2 = (N - b) / (b (N - 1)) * S^2 without replacement, S^2 / b with replacement, where
  S^2 = (1/N) sum_j ||grad f_ij(x) - grad f_i(x)||^2 is the per-sample gradient variance.
- ``ExactOracle()``: g = grad f_i(x), sigma2 = 0.
- ``SignOracle(directions, signs=None)``: g = grad f_i(x) + s_i u_i, a fixed direction u_i per client and a fair sign
  s_i = +-1 (a two-point law): E g = grad f_i, E||g - grad f_i||^2 = ||u_i||^2 exactly. The signs are drawn per
  replica and client on every call, or fixed per replica (``signs``, one replica per sign pattern: exact
  enumeration of the law). Not in ``ORACLES``: its directions are an array, not a spec value.

``make_oracle(spec)`` builds one from a dict such as ``{"kind": "gaussian", "sigma2": 0.1}``.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Protocol, runtime_checkable

import numpy as np
from fedbounds.algorithms._validate import InvalidParameterError, check_array, check_bool, describe
from fedbounds.algorithms.base import Problem, check_int, check_positive


@runtime_checkable
class SampledProblem(Protocol):
    """What ``MinibatchOracle`` needs beyond ``Problem``: f_i(x) = (1/N_i) sum_{j < N_i} f_ij(x).

    ``num_samples`` is N (an int, every client has N samples) or an int array (n,) of per-client N_i.
    ``sample_grad(X, idx)``: idx is an int array ``(..., n, b)`` of sample indices of each client (idx[..., i, :]
    < N_i); returns the mean per-sample gradient (1/b) sum_k grad f_{i, idx_k}(X[..., i, :]), shape ``(..., n, p)``.
    ``per_sample_grads(X)``: all per-sample gradients, shape ``(..., n, N_max, p)``; with unequal N_i the
    entries j >= N_i of client i are padding and are ignored. Only ``MinibatchOracle.variance`` needs it.
    """

    n: int
    p: int

    @property
    def num_samples(self) -> int | np.ndarray: ...

    def grad(self, X: np.ndarray) -> np.ndarray: ...

    def sample_grad(self, X: np.ndarray, idx: np.ndarray) -> np.ndarray: ...

    def per_sample_grads(self, X: np.ndarray) -> np.ndarray: ...


def _check_stack(problem: Problem, X: np.ndarray) -> np.ndarray:
    """X as a float array of shape ``(..., n, p)``; otherwise a ValueError naming X."""
    X = check_array("X", X, finite=False, nonempty=False)
    if X.ndim < 2 or X.shape[-2:] != (problem.n, problem.p):
        raise ValueError(f"X must have shape (..., n, p) = (..., {problem.n}, {problem.p}), got {X.shape}")
    return X


@dataclass(frozen=True)
class ExactOracle:
    """The exact gradient: g_i = grad f_i(x), sigma2 = 0 (the deterministic limit of every algorithm)."""

    name: str = "exact"

    @property
    def sigma2(self) -> float:
        return 0.0

    def sample(self, problem: Problem, X: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        return problem.grad(_check_stack(problem, X))

    def noise(self, rng: np.random.Generator | None, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape)

    def variance(self, problem: Problem, X: np.ndarray) -> np.ndarray:
        return np.zeros(_check_stack(problem, X).shape[:-1])


@dataclass(frozen=True)
class GaussianOracle:
    """g_i = grad f_i(x) + xi_i, xi_i ~ N(0, (sigma2/p) I_p) iid over replicas and clients: unbiased with
    E||g_i - grad f_i(x)||^2 = p * sigma2/p = sigma2 exactly (FedNMap Assumption 3 with equality).

    The noise is drawn even when sigma2 = 0, so runs with different sigma2 and the same seed use the same
    standard normals (common random numbers)."""

    sigma2: float
    name: str = "gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma2", check_positive("sigma2", self.sigma2, strict=False))

    def noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """The additive noise alone, shape ``shape`` = ``(..., p)`` (for exact mode and replay)."""
        shape = tuple(int(s) for s in shape)
        if not shape or shape[-1] < 1:
            raise ValueError(f"shape must be (..., p) with p >= 1, got {shape}")
        return rng.standard_normal(shape) * np.sqrt(self.sigma2 / shape[-1])

    def sample(self, problem: Problem, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        X = _check_stack(problem, X)
        return problem.grad(X) + self.noise(rng, X.shape)

    def variance(self, problem: Problem, X: np.ndarray) -> np.ndarray:
        """E||g - grad f_i||^2 = sigma2 at every replica and client, shape ``(..., n)``."""
        return np.full(_check_stack(problem, X).shape[:-1], self.sigma2)


@dataclass(frozen=True)
class MinibatchOracle:
    """g_i = mean of the per-sample gradients of a uniform batch of ``batch`` of client i's samples, drawn
    independently per replica and client on every call (without replacement unless ``replace``).

    Needs a ``SampledProblem`` (``num_samples``, ``sample_grad``; ``per_sample_grads`` for ``variance``).
    ``batch`` must lie in [1, min_i N_i], also with replacement."""

    batch: int
    replace: bool = False
    name: str = "minibatch"

    def __post_init__(self) -> None:
        object.__setattr__(self, "batch", check_int("batch", self.batch, minimum=1))
        object.__setattr__(self, "replace", check_bool("replace", self.replace))

    def num_samples(self, problem: SampledProblem) -> np.ndarray:
        """Per-client sample counts N_i, shape (n,), after checking 1 <= batch <= min_i N_i."""
        if not hasattr(problem, "num_samples") or not hasattr(problem, "sample_grad"):
            raise ValueError(f"problem must provide num_samples and sample_grad(X, idx) for minibatches, got {type(problem).__name__}")
        N = np.broadcast_to(np.asarray(problem.num_samples), (problem.n,))
        if not np.issubdtype(N.dtype, np.integer) or N.min() < 1:
            raise ValueError(f"problem.num_samples must be a positive int or int array of shape (n,), got {problem.num_samples!r}")
        if self.batch > N.min():
            raise ValueError(f"batch must lie in [1, min_i N_i] = [1, {int(N.min())}], got {self.batch}")
        return N.astype(np.intp)

    def indices(self, problem: SampledProblem, lead: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Sample indices of shape ``(*lead, n, batch)``: client i's row is a uniform batch from range(N_i)."""
        N, b = self.num_samples(problem), self.batch
        if self.replace:
            return rng.integers(0, N[:, None], size=(*lead, problem.n, b))
        # b smallest of iid uniform keys = a uniform b-subset; padding (j >= N_i) gets key +inf, never chosen
        keys = rng.random((*lead, problem.n, int(N.max())))
        keys[..., np.arange(N.max()) >= N[:, None]] = np.inf
        return np.argpartition(keys, b - 1, axis=-1)[..., :b]

    def sample(self, problem: SampledProblem, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        X = _check_stack(problem, X)
        return problem.sample_grad(X, self.indices(problem, X.shape[:-2], rng))

    def variance(self, problem: SampledProblem, X: np.ndarray) -> np.ndarray:
        """Exact E||g - grad f_i||^2 at X, shape ``(..., n)``: (N_i - b)/(b (N_i - 1)) S_i^2 without
        replacement (0 when N_i = 1), S_i^2 / b with replacement; S_i^2 = (1/N_i) sum_j ||g_ij - mean_j g_ij||^2."""
        X = _check_stack(problem, X)
        N = self.num_samples(problem)
        if not hasattr(problem, "per_sample_grads"):
            raise ValueError(f"problem must provide per_sample_grads(X) for the exact minibatch variance, got {type(problem).__name__}")
        G = np.asarray(problem.per_sample_grads(X), dtype=float)
        want = (*X.shape[:-1], int(N.max()), problem.p)
        if G.shape != want:
            raise ValueError(f"per_sample_grads must have shape (..., n, N_max, p) = {want}, got {G.shape}")
        mask = (np.arange(N.max()) < N[:, None])[..., None]  # (n, N_max, 1)
        G = np.where(mask, G, 0.0)
        mean = G.sum(axis=-2, keepdims=True) / N[:, None, None]
        S2 = np.sum(np.where(mask, G - mean, 0.0) ** 2, axis=(-2, -1)) / N
        b = self.batch
        if self.replace:
            factor = np.full(N.shape, 1.0 / b)
        else:
            factor = np.where(N > 1, (N - b) / (b * np.maximum(N - 1, 1.0)), 0.0)
        return factor * S2


@dataclass(frozen=True, eq=False)
class SignOracle:
    """g_i = grad f_i(x) + s_i u_i: ``directions`` u (n, p), fair signs s_i = +-1 (module docstring).

    ``signs`` None: s drawn per replica and client on every call (independent over calls, replicas and clients).
    ``signs`` an (R, n) array of +-1: replica r uses row r on every call (the same sign at every local step and
    round); the law over the replicas is mean-zero only if every column sums to 0, which is required (all 2^n
    patterns, as rows, satisfy it). Run it with ``replicas = R``."""

    directions: np.ndarray
    signs: np.ndarray | None = None
    name: str = "sign"

    def __post_init__(self) -> None:
        u = check_array("directions", self.directions, ndim=2)
        object.__setattr__(self, "directions", u)
        if self.signs is not None:
            s = check_array("signs", self.signs, shape=(None, u.shape[0]))
            if not np.all(np.abs(s) == 1):
                raise InvalidParameterError("signs", "signs must have entries +1 or -1")
            if np.any(s.sum(axis=0) != 0):
                raise InvalidParameterError("signs", "every column of signs must sum to 0 (a mean-zero law over the replicas)")
            object.__setattr__(self, "signs", s)

    @property
    def sigma2(self) -> float:
        """The largest per-client second moment max_i ||u_i||^2 (each client's own is :meth:`variance`)."""
        return float(np.max(np.sum(self.directions**2, axis=-1)))

    def _check(self, problem: Problem, X: np.ndarray) -> np.ndarray:
        X = _check_stack(problem, X)
        if self.directions.shape != (problem.n, problem.p):
            raise ValueError(f"directions must have shape (n, p) = ({problem.n}, {problem.p}), got {self.directions.shape}")
        return X

    def noise(self, rng: np.random.Generator | None, shape: tuple[int, ...]) -> np.ndarray:
        """The additive noise s_i u_i alone, shape ``shape`` = ``(..., n, p)``."""
        shape = tuple(int(k) for k in shape)
        if shape[-2:] != self.directions.shape:
            raise ValueError(f"shape must be (..., n, p) with (n, p) = {self.directions.shape}, got {shape}")
        if self.signs is None:
            if rng is None:
                raise ValueError("rng must be a numpy Generator when the signs are drawn")
            s = rng.choice(np.array([-1.0, 1.0]), size=shape[:-1])
        else:
            if len(shape) != 3 or shape[0] != self.signs.shape[0]:
                raise ValueError(f"fixed signs need shape (R, n, p) with R = {self.signs.shape[0]} replicas, got {shape}")
            s = self.signs
        return s[..., None] * self.directions

    def sample(self, problem: Problem, X: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        X = self._check(problem, X)
        return problem.grad(X) + self.noise(rng, X.shape)

    def variance(self, problem: Problem, X: np.ndarray) -> np.ndarray:
        """E||g_i - grad f_i||^2 = ||u_i||^2, shape ``(..., n)``."""
        X = self._check(problem, X)
        return np.broadcast_to(np.sum(self.directions**2, axis=-1), X.shape[:-1]).copy()


ORACLES: dict[str, type] = {"exact": ExactOracle, "gaussian": GaussianOracle, "minibatch": MinibatchOracle}


def make_oracle(spec: dict) -> ExactOracle | GaussianOracle | MinibatchOracle:
    """Build an oracle from a spec: ``{"kind": "exact"}``, ``{"kind": "gaussian", "sigma2": s}`` or
    ``{"kind": "minibatch", "batch": b, "replace": False}``. Unknown kinds or keys are a ValueError."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise InvalidParameterError("spec", f"spec must be a dict with a 'kind' in {sorted(ORACLES)}, got {describe(spec)}")
    kind = spec["kind"]
    if not isinstance(kind, str) or kind not in ORACLES:
        raise InvalidParameterError("kind", f"kind must be one of {sorted(ORACLES)}, got {describe(kind)}")
    cls = ORACLES[kind]
    params = {k: v for k, v in spec.items() if k != "kind"}
    allowed = [f.name for f in fields(cls) if f.name != "name"]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise InvalidParameterError(str(unknown[0]), f"unknown key(s) {unknown} for oracle kind {kind!r}; allowed: {allowed}")
    required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
    missing = [k for k in required if k not in params]
    if missing:
        raise ValueError(f"oracle kind {kind!r} needs {missing}, got {spec!r}")
    return cls(**params)
