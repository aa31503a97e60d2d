"""The driver: runs any registered algorithm on ``R`` Monte Carlo replicas at once and records metrics.

Algorithms
----------
An algorithm is an object with

* ``name: str``
* ``validate(problem, params) -> dict``: checks ``params`` up front (ValueError naming the parameter and the
  allowed range; unknown keys are errors) and returns them with defaults filled in;
* ``init(problem, params, oracle, replicas, seed) -> State``: the state before round 0;
* ``step(state, t) -> State``: one communication round ``t`` (0-based); it draws its stochastic gradients at
  local step ``l`` with ``fedbounds.algorithms.rng.stream(seed, t, l)``, calling ``oracle.sample(problem, X, rng)``
  once per (t, l) on the full ``(R, n, p)`` stack;
* ``observe(state) -> Observation``: the output point ``x`` (R, p), the normal-map variable ``z`` (R, p) if
  any, the algorithm's ``gamma`` if any, and per-round values (``uplink``, ``eta``, ``gamma_emp``).

A state is a small frozen dataclass. Its per-replica arrays (fields that are numpy arrays whose first axis is
the replica axis, shapes ``(R, p)`` or ``(R, n, p)``) are what the driver checks for divergence and what exact
mode (``fedbounds.algorithms.exact``) propagates; anything else in it (the :class:`Context` with problem, params, oracle
and seed; the round counter) is carried along untouched.

Registry
--------
``ALGORITHMS`` maps a name to its algorithm object. The built-ins (``fednmap``, ``prox_sgd``, ``norm_sgd``,
``fedmid``, ``fedda``, ``fedavg_prox``, ``scaffold_prox``, ``fedprox_prox``) are loaded on first use. Other
streams add theirs with :func:`register`: ``algorithms/ds_fedproxgrad.py`` calls, at module level,
``register("ds_fedproxgrad", DSFedProxGrad())`` and ``register("fedproxgrad", FedProxGrad())``. The registry
imports ``fedbounds.algorithms.ds_fedproxgrad`` lazily, the first time a name that is not built in is looked up (or the
registry is listed); while that module does not exist, the names are simply absent. A module may instead
define a module-level dict ``ALGORITHMS`` (name -> algorithm); the registry then registers those entries.

Divergence
----------
After every round the driver checks every per-replica array of the state and every recorded metric: a
non-finite value or one with ``|value| > 1e150`` stops the run. The trajectory then keeps the metrics of the
rounds completed before it (never a NaN) and ``divergence = Divergence(round=t, replica=k, reason)``, where
``t`` is the 0-based index of the round whose update diverged (= the number of rounds completed) and ``k`` the
first replica that diverged.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from fedbounds.algorithms._validate import (
    InvalidParameterError,
    check_array,
    check_bool,
    check_callable,
    check_mapping,
    check_object,
    check_seed,
    describe,
)
from fedbounds.algorithms.base import check_int
from fedbounds.algorithms.metrics import METRIC_NAMES, MetricContext, Observation, applicable, evaluate

__all__ = [
    "ALGORITHMS",
    "OVERFLOW",
    "Algorithm",
    "Context",
    "Divergence",
    "DivergenceError",
    "Observation",
    "Trajectory",
    "check_metrics",
    "check_oracle",
    "check_params",
    "check_point",
    "check_problem",
    "default_oracle",
    "register",
    "replica_arrays",
    "run",
    "unregister",
]

#: a state entry with |value| above this counts as divergence
OVERFLOW = 1e150


@runtime_checkable
class Algorithm(Protocol):
    """The engine's algorithm interface (see the module docstring)."""

    name: str

    def validate(self, problem: Any, params: Mapping[str, Any]) -> dict[str, Any]: ...

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any, replicas: int, seed: int) -> Any: ...

    def step(self, state: Any, t: int) -> Any: ...

    def observe(self, state: Any) -> Observation: ...


@dataclass(frozen=True, eq=False)
class Context:
    """What a state carries besides its arrays: problem, validated params, oracle, seed and replica count."""

    problem: Any
    params: Mapping[str, Any]
    oracle: Any
    seed: int
    replicas: int


def default_oracle() -> Any:
    """``fedbounds.algorithms.oracles.ExactOracle()`` (exact gradients), the oracle used when ``run`` gets none."""
    from fedbounds.algorithms.oracles import ExactOracle

    return ExactOracle()


def replica_arrays(state: Any, replicas: int) -> dict[str, np.ndarray]:
    """The per-replica float arrays of a state dataclass: fields whose first axis has length ``replicas``."""
    out = {}
    for f in dataclasses.fields(state):
        v = getattr(state, f.name)
        if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == replicas and np.issubdtype(v.dtype, np.floating):
            out[f.name] = v
    return out


def check_params(algorithm: str, params: Mapping[str, Any], required: tuple[str, ...], optional: Mapping[str, Any]) -> dict:
    """``params`` with the ``optional`` defaults filled in; a ValueError names a missing or unknown key.

    ``gamma_eval`` (the gamma of the natural-residual metric) is accepted by every algorithm.
    """
    params = check_mapping("params", params)
    allowed = (*required, *optional, "gamma_eval")
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"{algorithm}: unknown parameter(s) {unknown}; allowed: {', '.join(allowed)}")
    missing = [k for k in required if k not in params]
    if missing:
        raise ValueError(f"{algorithm}: missing required parameter(s) {missing}")
    out = {**optional, **params}
    if out.get("gamma_eval") is not None:
        from fedbounds.algorithms.base import check_positive

        out["gamma_eval"] = check_positive("gamma_eval", out["gamma_eval"])
    return out


def check_point(name: str, value: Any, p: int) -> np.ndarray:
    """An initial point: None -> zeros (p,); else a finite array of shape (p,) (ValueError otherwise)."""
    if value is None:
        return np.zeros(p)
    v = check_array(name, value, shape=(p,), finite=False)
    if not np.all(np.isfinite(v)):
        raise InvalidParameterError(name, f"{name} must be a finite array of shape ({p},), got NaN or infinite entries")
    return v


def check_problem(problem: Any) -> Any:
    """``problem`` if it is a Problem as the engine uses it (``n``, ``p`` integers >= 1, ``grad()``, ``psi()``, a
    ``phi`` with ``prox()``, ``value()`` and ``rho``); an InvalidParameterError naming ``problem`` otherwise."""
    what = "a Problem such as make_instance('least_squares')"
    check_object("problem", problem, what, ("grad", "psi"), ("n", "p", "phi"))
    for dim in ("n", "p"):
        value = getattr(problem, dim)
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise InvalidParameterError("problem", f"problem.{dim} must be an integer >= 1, got {value!r}")
    check_object("problem", problem.phi, "a Problem whose phi is a regulariser (prox(), value(), rho)", ("prox", "value"), ("rho",))
    return problem


def check_oracle(oracle: Any) -> Any:
    """``oracle``, or exact gradients when it is None; an object without ``sample()`` names ``oracle``."""
    if oracle is None:
        return default_oracle()
    return check_object("oracle", oracle, "an oracle object such as GaussianOracle(0.1) or None", ("sample",))


def check_metrics(metrics: Any) -> tuple[str, ...] | None:
    """None, or a tuple of known metric names (a bare string is an error, not a tuple of its letters)."""
    if metrics is None:
        return None
    if isinstance(metrics, str | bytes) or not isinstance(metrics, tuple | list):
        raise InvalidParameterError("metrics", f"metrics must be a tuple of metric names or None, got {describe(metrics)}")
    unknown = [m for m in metrics if m not in METRIC_NAMES]
    if unknown:
        raise InvalidParameterError("metrics", f"metrics: unknown {unknown}; allowed: {', '.join(METRIC_NAMES)}")
    return tuple(metrics)


# ---------------------------------------------------------------------------------------------- registry

_BUILTINS = {
    "fednmap": ("fedbounds.algorithms.fednmap", "FedNMap"),
    "prox_sgd": ("fedbounds.algorithms.baselines", "ProxSGD"),
    "norm_sgd": ("fedbounds.algorithms.baselines", "NormSGD"),
    "fedmid": ("fedbounds.algorithms.baselines", "FedMiD"),
    "fedda": ("fedbounds.algorithms.baselines", "FedDA"),
    "fedavg_prox": ("fedbounds.algorithms.baselines", "FedAvgProx"),
    "scaffold_prox": ("fedbounds.algorithms.baselines", "ScaffoldProx"),
    "fedprox_prox": ("fedbounds.algorithms.baselines", "FedProxProx"),
}
#: modules of other streams that register algorithms when imported (missing modules are skipped)
_EXTENSIONS = ("fedbounds.algorithms.ds_fedproxgrad",)


class _Registry(Mapping[str, Any]):
    """name -> algorithm; built-ins load on first lookup, extension modules when a name is not built in."""

    def __init__(self) -> None:
        self._entries: dict[str, Any] = {}
        self._extensions_loaded = False

    def register(self, name: str, algorithm: Any, *, replace: bool = False) -> None:
        for attr in ("validate", "init", "step", "observe"):
            if not callable(getattr(algorithm, attr, None)):
                raise TypeError(f"algorithm {name!r} lacks the method {attr}()")
        old = self._entries.get(name)
        if old is not None and not replace and type(old) is not type(algorithm):
            raise ValueError(f"algorithm name {name!r} is already registered to {type(old).__name__}")
        self._entries[name] = algorithm

    def _load_builtin(self, name: str) -> None:
        module, cls = _BUILTINS[name]
        if name not in self._entries:
            self._entries[name] = getattr(importlib.import_module(module), cls)()

    def _load_extensions(self) -> None:
        if self._extensions_loaded:
            return
        self._extensions_loaded = True
        for module_name in _EXTENSIONS:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as err:
                if err.name != module_name:
                    raise
                continue
            for name, algorithm in getattr(module, "ALGORITHMS", {}).items():
                if name not in self._entries:
                    self.register(name, algorithm)

    def _load_all(self) -> None:
        for name in _BUILTINS:
            self._load_builtin(name)
        self._load_extensions()

    def __getitem__(self, name: str) -> Any:
        if name in _BUILTINS:
            self._load_builtin(name)
        elif name not in self._entries:
            self._load_extensions()
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return iter(dict(self._entries))

    def __len__(self) -> int:
        self._load_all()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self[name]  # type: ignore[index]
        except KeyError:
            return False
        return True


ALGORITHMS = _Registry()


def register(name: str, algorithm: Any, *, replace: bool = False) -> None:
    """Add ``algorithm`` to ``ALGORITHMS`` under ``name``.

    Re-registering a name with an object of the same class replaces it silently (a module imported twice);
    a different class needs ``replace=True``.
    """
    ALGORITHMS.register(name, algorithm, replace=replace)


def unregister(name: str) -> None:
    """Remove ``name`` from ``ALGORITHMS`` (KeyError if absent); built-ins come back on the next lookup."""
    del ALGORITHMS._entries[name]


def get_algorithm(algorithm: str | Any) -> Any:
    """The algorithm object for a name (ValueError listing the known names) or the object itself."""
    if not isinstance(algorithm, str):
        what = f"a registered name ({', '.join(sorted(ALGORITHMS))}) or an algorithm object"
        return check_object("algorithm", algorithm, what, ("validate", "init", "step", "observe"))
    try:
        return ALGORITHMS[algorithm]
    except KeyError:
        raise InvalidParameterError("algorithm", f"algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}") from None


# ---------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Divergence:
    """The first divergence of a run: 0-based round index ``round`` (= rounds completed), first bad replica."""

    round: int
    replica: int
    reason: str


class DivergenceError(RuntimeError):
    """Raised by ``Trajectory.raise_if_diverged``: "diverged at round t (replica k): reason"."""

    def __init__(self, divergence: Divergence) -> None:
        self.divergence = divergence
        super().__init__(f"diverged at round {divergence.round} (replica {divergence.replica}): {divergence.reason}")


@dataclass(frozen=True)
class Trajectory:
    """Recorded run. ``metrics[name]`` has shape (rounds_completed + 1, replicas); row t is after t rounds.

    ``final`` is the last finite state (after ``rounds_completed`` rounds); ``divergence`` is None unless the run
    stopped early.
    """

    algorithm: str
    params: dict
    seed: int
    replicas: int
    metrics: dict[str, np.ndarray]
    divergence: Divergence | None
    final: Any
    rounds_completed: int = 0

    def raise_if_diverged(self) -> None:
        if self.divergence is not None:
            raise DivergenceError(self.divergence)


def _within(v: Any) -> bool:
    """Every entry of ``v`` is finite with |entry| <= OVERFLOW (an empty array is)."""
    a = np.asarray(v)
    if a.size == 0:
        return True
    return bool(-OVERFLOW <= np.min(a) and np.max(a) <= OVERFLOW)


def _first_bad(values: Mapping[str, np.ndarray], replicas: int) -> tuple[int, str] | None:
    """(replica, reason) of the first replica with a non-finite or overflowing entry, else None."""
    # fast path: two reductions per array and no temporary (a NaN propagates into max and min and fails the
    # comparison; an infinity exceeds the bound)
    if all(_within(v) for v in values.values()):
        return None
    bad_any = np.zeros(replicas, dtype=bool)
    reasons: dict[int, str] = {}
    for name, v in values.items():
        a = np.asarray(v, dtype=float).reshape(replicas, -1)
        nonfinite = ~np.isfinite(a)
        with np.errstate(invalid="ignore"):
            huge = np.abs(np.where(nonfinite, 0.0, a)) > OVERFLOW
        bad = (nonfinite | huge).any(axis=1)
        for k in np.flatnonzero(bad & ~bad_any):
            kind = "a non-finite value" if nonfinite[k].any() else f"|value| > {OVERFLOW:g}"
            reasons[int(k)] = f"{name} has {kind}"
        bad_any |= bad
    if not bad_any.any():
        return None
    k = int(np.flatnonzero(bad_any)[0])
    return k, reasons[k]


def run(
    algorithm: str | Any,
    problem: Any,
    params: Mapping[str, Any] | None = None,
    *,
    rounds: int,
    replicas: int = 1,
    seed: int = 0,
    oracle: Any = None,
    metrics: tuple[str, ...] | None = None,
    progress: bool = False,
    callback: Callable[[int, Any], None] | None = None,
) -> Trajectory:
    """Run ``rounds`` rounds of ``algorithm`` (a registered name or an algorithm object) on ``replicas``
    independent Monte Carlo replicas in one vectorised run.

    ``oracle`` defaults to exact gradients. ``metrics=None`` records every metric that applies (see
    ``fedbounds.algorithms.metrics``); naming one that does not apply is a ValueError. ``callback(t, state)`` is called
    with the state after every completed round t (t = 1..rounds; not after a diverged round). ``progress``
    shows a tqdm bar.
    """
    alg = get_algorithm(algorithm)
    name = algorithm if isinstance(algorithm, str) else getattr(alg, "name", type(alg).__name__)
    check_problem(problem)
    rounds = check_int("rounds", rounds, 0)
    replicas = check_int("replicas", replicas, 1)
    seed = check_seed("seed", seed)
    metrics = check_metrics(metrics)
    check_bool("progress", progress)
    check_callable("callback", callback, allow_none=True)
    oracle = check_oracle(oracle)
    params = alg.validate(problem, check_mapping("params", params, allow_none=True))

    state = alg.init(problem, params, oracle, replicas, seed)
    ctx = MetricContext(problem, params)
    with np.errstate(over="ignore", invalid="ignore"):
        obs = alg.observe(state)
        names = applicable(ctx, obs) if metrics is None else tuple(metrics)
        row = evaluate(names, ctx, obs)
    records = {m: np.empty((rounds + 1, replicas)) for m in names}
    divergence = None
    bad = _first_bad({**replica_arrays(state, replicas), **row}, replicas)
    if bad is not None:
        raise ValueError(f"the initial state is not finite or overflows (replica {bad[0]}): {bad[1]}")
    for m in names:
        records[m][0] = row[m]

    completed = 0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=rounds, desc=name, leave=False)
    try:
        for t in range(rounds):
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                new_state = alg.step(state, t)
                bad = _first_bad(replica_arrays(new_state, replicas), replicas)
                if bad is None:
                    row = evaluate(names, ctx, alg.observe(new_state))
                    bad = _first_bad(row, replicas)
            if bad is not None:
                divergence = Divergence(t, *bad)
                break
            state = new_state
            completed = t + 1
            for m in names:
                records[m][completed] = row[m]
            if callback is not None:
                callback(completed, state)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    metrics_out = {m: r[: completed + 1] for m, r in records.items()}
    return Trajectory(name, params, seed, replicas, metrics_out, divergence, state, completed)
