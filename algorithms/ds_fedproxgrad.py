"""DS FedProxGrad (Arif, arXiv 2512.08671, Steps 1-3, eqs. (3)-(5)) and FedProxGrad with a constant step.

Problem class: F(x) = f(x) + lam r(x), f = (1/N) sum_i f_i, each f_i L_f-smooth (and rho-weakly convex), r
L_r-smooth with ||grad r|| <= G_r (paper A1, A3). The problem is a smooth composite instance (phi = Zero) with
attributes ``lam``, ``r``, ``grad_r``, ``F``, ``grad_F`` (and ``grad_r_double_sample`` for the S2 estimator);
a plain smooth ``Problem`` without them is read as lam = 0, F = f.

Round r with step eta_r (``schedule``):

- Step 1, eq. (3): client i returns y_i ~ argmin_w h_i(w; x^r) = f_i(w) + ||w - x^r||^2 / (2 eta_r), from
  one of three local solvers (``solver``):

  * ``exact``: solved to a tolerance, ||grad h_i(y)|| <= tol * max(1, ||grad f_i(x^r)||); in closed form
    (H_i + I/eta) y = h_i + x/eta when the problem is quadratic (attributes ``hessians``, ``linear``), else
    gradient descent on h_i with step 1/(L_f + 1/eta_r), vectorised with a mask of converged entries;
  * ``gd_certified`` (notes 3.4, P1): the same gradient descent from y = x^r, stopped by the residual rule
    ||grad h_i(y)|| <= theta_r ||grad f_i(x^r)|| with theta_r = c_theta eta_r;
  * ``inject`` (notes 3.4, P2): y_i = x^r - eta_r grad f_i(x^r) + eta_r e_i with ||e_i|| = gamma_r
    ||grad f_i(x^r)|| exactly, e_i along +grad F(x^r)/||grad F(x^r)|| (``uphill``, the worst case of
    Lemma 5.1) or uniform on the sphere (``random``); gamma_r = c_gamma eta_r, a constant, or c sqrt(eta_r).

- Step 2, eq. (4): ybar = (1/N) sum_i y_i.
- Step 3, eq. (5): x^{r+1} = ybar - eta_r lam grad r(x^r) + eta_r e_r^stoch, with the fairness gradient at the
  OLD point x^r. The paper's e^stoch carries no lambda: it is the error of the whole fairness term
  -lam grad r. The two estimators (``estimator``) map onto it as follows:

  * ``gaussian`` (S1): e^stoch ~ N(0, (sigma2/p) I), so E e^stoch = 0 and E||e^stoch||^2 = sigma2 exactly;
  * ``double_sampling`` (S2): the server uses lam * g_hat with g_hat = problem.grad_r_double_sample(x^r,
    rng, batch) (unbiased for grad r), i.e. x^{r+1} = ybar - eta_r lam g_hat, hence
    e^stoch = lam (grad r(x^r) - g_hat) and sigma^2 = lam^2 E||g_hat - grad r||^2.

Recorded per round and replica (P3): gamma_emp = max_i ||(y_i - x^r)/eta_r + grad f_i(x^r)|| /
||grad f_i(x^r)|| (the smallest gamma_r for which eq. (10) holds this round), eta, and uplink = 1 p-vector per
client. By eq. (6)-(7), x^{r+1} - x^r = -eta_r grad F(x^r) + eta_r e_f^r + eta_r e_r^stoch; the state keeps
the last round's y_i and e^stoch so that the identity can be checked.

Random draws (contract): at round t the local solver draws once from ``stream(seed, t, *LOCAL_KEY)`` (random
inject directions, shape (R, n, p)) and the server once from ``stream(seed, t, *SERVER_KEY)`` (estimator,
on the full (R, p) stack), so the per-client reference in ``algorithms/reference/ds_fedproxgrad_ref.py``
replays the same draws.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from fedbounds.algorithms._validate import check_array
from fedbounds.algorithms.base import check_int, check_positive
from fedbounds.algorithms.metrics import Observation
from fedbounds.algorithms.rng import stream
from fedbounds.algorithms.run import Context, check_params, register

#: stream keys (l, extra) of round t's two draws, ``stream(seed, t, *key)``. The clients use exact gradients
#: (no oracle), and the plain ``stream(seed, t, l)`` is reserved for an oracle, so both draws use extra keys.
LOCAL_KEY = (0, 1)  # the local solver: random inject directions, one (R, n, p) normal draw
SERVER_KEY = (0, 2)  # the server: the fairness-gradient estimator on the (R, p) stack


# ---------------------------------------------------------------------------------------------------------------
# spec parsing helpers
# ---------------------------------------------------------------------------------------------------------------


def _spec(name: str, spec: Any, allowed: Mapping[str, tuple[str, ...]]) -> tuple[str, dict]:
    """Validate a ``{"kind": ..., **fields}`` spec: known kind, no unknown or missing fields."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"{name} must be a dict with a 'kind' in {sorted(allowed)}, got {spec!r}")
    kind = spec.get("kind")
    if kind not in allowed:
        raise ValueError(f"{name}['kind'] must be one of {sorted(allowed)}, got {kind!r}")
    fields = {k: v for k, v in spec.items() if k != "kind"}
    extra = sorted(set(fields) - set(allowed[kind]))
    if extra:
        raise ValueError(f"{name} of kind {kind!r} accepts the fields {list(allowed[kind])}, got unknown {extra}")
    return kind, fields


def _require(name: str, fields: dict, key: str) -> Any:
    if key not in fields:
        raise ValueError(f"{name}['{key}'] is required")
    return fields[key]


def _norm(v: np.ndarray) -> np.ndarray:
    """Euclidean norm over the last axis (one formula shared with the reference, so both round alike)."""
    return np.sqrt(np.sum(v * v, axis=-1))


# ---------------------------------------------------------------------------------------------------------------
# step-size schedules eta_r
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConstantSchedule:
    """eta_r = eta (FedProxGrad; also the finite-horizon Corollary (ii) with eta = c/sqrt(R))."""

    eta: float

    def __call__(self, r: int) -> float:
        return self.eta

    @property
    def eta_max(self) -> float:
        return self.eta


@dataclass(frozen=True)
class PowerSchedule:
    """eta_r = c / (r + 1)^alpha (Corollary (i), shifted so that r = 0 is defined; notes 1.4)."""

    c: float
    alpha: float

    def __call__(self, r: int) -> float:
        return self.c / (r + 1) ** self.alpha

    @property
    def eta_max(self) -> float:
        return self.c


@dataclass(frozen=True)
class SqrtHorizonSchedule:
    """eta_r = c / sqrt(R), constant over a horizon of R rounds (Corollary (ii), eq. (26))."""

    c: float
    R: int

    def __call__(self, r: int) -> float:
        return self.c / np.sqrt(self.R)

    @property
    def eta_max(self) -> float:
        return self.c / np.sqrt(self.R)


Schedule = ConstantSchedule | PowerSchedule | SqrtHorizonSchedule

_SCHEDULES = {"constant": ("eta",), "power": ("c", "alpha"), "sqrt_horizon": ("c", "R")}


def make_schedule(spec: Mapping[str, Any]) -> Schedule:
    """Parse ``params["schedule"]``: {"kind": "constant", "eta"} | {"kind": "power", "c", "alpha"} |
    {"kind": "sqrt_horizon", "c", "R"}; eta, c, alpha > 0 and R an integer >= 1."""
    kind, f = _spec("schedule", spec, _SCHEDULES)
    if kind == "constant":
        return ConstantSchedule(check_positive("schedule['eta']", _require("schedule", f, "eta")))
    if kind == "power":
        return PowerSchedule(
            check_positive("schedule['c']", _require("schedule", f, "c")),
            check_positive("schedule['alpha']", _require("schedule", f, "alpha")),
        )
    return SqrtHorizonSchedule(
        check_positive("schedule['c']", _require("schedule", f, "c")),
        check_int("schedule['R']", _require("schedule", f, "R")),
    )


# ---------------------------------------------------------------------------------------------------------------
# inexactness schedules gamma_r (inject solver, P2)
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GammaSchedule:
    """gamma_r as a function of eta_r: ``proportional`` c_gamma eta_r (eq. (10)), ``constant`` value,
    ``sqrt`` c sqrt(eta_r) (notes 1.5 item 6)."""

    kind: str
    value: float

    def __call__(self, eta: float) -> float:
        if self.kind == "proportional":
            return self.value * eta
        if self.kind == "constant":
            return self.value
        return self.value * np.sqrt(eta)


_GAMMAS = {"proportional": ("c_gamma",), "constant": ("value",), "sqrt": ("c",)}


def make_gamma_schedule(spec: Mapping[str, Any]) -> GammaSchedule:
    """Parse ``solver["gamma"]``; every coefficient must be >= 0 (gamma_r >= 0 in (10))."""
    kind, f = _spec("solver['gamma']", spec, _GAMMAS)
    key = _GAMMAS[kind][0]
    value = check_positive(f"solver['gamma']['{key}']", _require("solver['gamma']", f, key), strict=False)
    return GammaSchedule(kind, value)


# ---------------------------------------------------------------------------------------------------------------
# local prox solvers (Step 1, eq. (3))
# ---------------------------------------------------------------------------------------------------------------


def smoothness_of_f(problem: Any) -> float:
    """L_f of A1(i): ``constants["L_f"]`` where the instance reports it, else ``constants["L"]``."""
    const = problem.constants
    key = "L_f" if "L_f" in const else "L"
    if key not in const:
        raise ValueError("problem.constants must report 'L_f' or 'L' (smoothness of every f_i)")
    return float(const[key].value)


def _is_quadratic(problem: Any) -> bool:
    return hasattr(problem, "hessians") and hasattr(problem, "linear")


def _gd_prox(problem: Any, X: np.ndarray, Gx: np.ndarray, eta: float, L_f: float, thr: np.ndarray, max_iter: int, t: int):
    """Gradient descent on h_i(w) = f_i(w) + ||w - x||^2/(2 eta) from w = x with step 1/(L_f + 1/eta),
    per entry until ||grad h_i(w)|| <= thr (entries that are done stay fixed). Returns (Y, steps)."""
    s = 1.0 / (L_f + 1.0 / eta)
    Y = X.copy()
    Gf = Gx
    steps = np.zeros(X.shape[:-1], dtype=int)
    for k in range(max_iter + 1):
        Gh = Gf + (Y - X) / eta
        active = _norm(Gh) > thr  # NaN compares False: a non-finite entry stops and the engine reports it
        if not active.any():
            return Y, steps
        if k == max_iter:
            raise RuntimeError(
                f"local prox solver did not reach its stopping rule in max_iter={max_iter} steps at round {t} "
                f"({int(active.sum())} client entries left)"
            )
        Y = np.where(active[..., None], Y - s * Gh, Y)
        steps += active
        Gf = problem.grad(Y)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class ExactProx:
    """(a) y_i = prox_{eta f_i}(x^r) to a tolerance: ||grad h_i(y)|| <= tol * max(1, ||grad f_i(x^r)||).

    ``method``: ``closed_form`` (quadratic f_i: solve (H_i + I/eta) y = h_i + x/eta), ``gd`` (gradient descent
    with step 1/(L_f + 1/eta)), or ``auto`` (closed form where the problem is quadratic)."""

    tol: float = 1e-12
    max_iter: int = 100_000
    method: str = "auto"
    kind: str = field(default="exact", init=False)

    def solve(self, problem: Any, X: np.ndarray, Gx: np.ndarray, eta: float, L_f: float, seed: int, t: int, x: np.ndarray):
        use_closed = self.method == "closed_form" or (self.method == "auto" and _is_quadratic(problem))
        if use_closed:
            M = problem.hessians + np.eye(problem.p) / eta  # (n, p, p)
            rhs = problem.linear + X / eta  # (R, n, p)
            Y = np.linalg.solve(M, rhs[..., None])[..., 0]
            return Y, np.zeros(X.shape[:-1], dtype=int)
        thr = self.tol * np.maximum(1.0, _norm(Gx))
        return _gd_prox(problem, X, Gx, eta, L_f, thr, self.max_iter, t)


@dataclass(frozen=True)
class GDCertified:
    """(b) P1: gradient descent on h_i from y = x^r, step 1/(L_f + 1/eta_r), stopped as soon as
    ||grad h_i(y)|| <= theta_r ||grad f_i(x^r)||, theta_r = c_theta eta_r (checkable by the client; notes 3.4
    give gamma_r <= (theta_r + L_f eta_r)/(1 - L_f eta_r))."""

    c_theta: float
    max_iter: int = 100_000
    kind: str = field(default="gd_certified", init=False)

    def solve(self, problem: Any, X: np.ndarray, Gx: np.ndarray, eta: float, L_f: float, seed: int, t: int, x: np.ndarray):
        thr = self.c_theta * eta * _norm(Gx)
        return _gd_prox(problem, X, Gx, eta, L_f, thr, self.max_iter, t)


@dataclass(frozen=True)
class InjectError:
    """(c) P2: y_i = x^r - eta_r grad f_i(x^r) + eta_r e_i, ||e_i|| = gamma_r ||grad f_i(x^r)|| exactly.

    ``uphill``: e_i along grad F(x^r)/||grad F(x^r)|| (the first basis vector where grad F(x^r) = 0);
    ``random``: uniform on the sphere, one (R, n, p) normal draw from ``stream(seed, t, *LOCAL_KEY)``."""

    gamma: GammaSchedule
    direction: str = "uphill"
    kind: str = field(default="inject", init=False)

    def solve(self, problem: Any, X: np.ndarray, Gx: np.ndarray, eta: float, L_f: float, seed: int, t: int, x: np.ndarray):
        if self.direction == "uphill":
            g = grad_F(problem, x)  # (R, p)
            ng = _norm(g)[..., None]
            e1 = np.zeros_like(g)
            e1[..., 0] = 1.0
            d = np.where(ng > 0, g / np.where(ng > 0, ng, 1.0), e1)[..., None, :]  # (R, 1, p)
        else:
            Z = stream(seed, t, *LOCAL_KEY).standard_normal(X.shape)
            d = Z / _norm(Z)[..., None]
        E = self.gamma(eta) * _norm(Gx)[..., None] * d
        Y = X - eta * Gx + eta * E
        return Y, np.zeros(X.shape[:-1], dtype=int)


Solver = ExactProx | GDCertified | InjectError

_SOLVERS = {"exact": ("tol", "max_iter", "method"), "gd_certified": ("c_theta", "max_iter"), "inject": ("gamma", "direction")}


def make_solver(spec: Mapping[str, Any] | None) -> Solver:
    """Parse ``params["solver"]`` (default {"kind": "exact", "tol": 1e-12}):
    {"kind": "exact", "tol" > 0, "max_iter" >= 1, "method" in auto/closed_form/gd} |
    {"kind": "gd_certified", "c_theta" > 0, "max_iter"} |
    {"kind": "inject", "gamma": gamma spec, "direction" in uphill/random}."""
    if spec is None:
        return ExactProx()
    kind, f = _spec("solver", spec, _SOLVERS)
    if kind == "exact":
        method = f.get("method", "auto")
        if method not in ("auto", "closed_form", "gd"):
            raise ValueError(f"solver['method'] must be one of ['auto', 'closed_form', 'gd'], got {method!r}")
        return ExactProx(
            tol=check_positive("solver['tol']", f.get("tol", 1e-12)),
            max_iter=check_int("solver['max_iter']", f.get("max_iter", 100_000)),
            method=method,
        )
    if kind == "gd_certified":
        return GDCertified(
            c_theta=check_positive("solver['c_theta']", _require("solver", f, "c_theta")),
            max_iter=check_int("solver['max_iter']", f.get("max_iter", 100_000)),
        )
    direction = f.get("direction", "uphill")
    if direction not in ("uphill", "random"):
        raise ValueError(f"solver['direction'] must be one of ['random', 'uphill'], got {direction!r}")
    return InjectError(make_gamma_schedule(_require("solver", f, "gamma")), direction)


# ---------------------------------------------------------------------------------------------------------------
# fairness-gradient estimators (Step 3, eq. (5); assumption (9))
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GaussianEstimator:
    """S1: e^stoch ~ N(0, (sigma2/p) I), so E[e^stoch | x] = 0 and E||e^stoch||^2 = sigma2 (assumption (9))."""

    sigma2: float
    kind: str = field(default="gaussian", init=False)

    def server_step(self, problem: Any, x: np.ndarray, ybar: np.ndarray, eta: float, lam: float, seed: int, t: int):
        """Returns (x^{r+1}, e^stoch) by eq. (5)."""
        gr = grad_r(problem, x)
        if self.sigma2 > 0:
            e = np.sqrt(self.sigma2 / x.shape[-1]) * stream(seed, t, *SERVER_KEY).standard_normal(x.shape)
        else:
            e = np.zeros_like(x)
        return ybar - eta * lam * gr + eta * e, e


@dataclass(frozen=True)
class DoubleSamplingEstimator:
    """S2: the server steps with lam * g_hat, g_hat = problem.grad_r_double_sample(x, rng, batch) unbiased for
    grad r; in eq. (5) this is e^stoch = lam (grad r(x) - g_hat), so sigma^2 = lam^2 E||g_hat - grad r||^2."""

    batch: int
    kind: str = field(default="double_sampling", init=False)

    def server_step(self, problem: Any, x: np.ndarray, ybar: np.ndarray, eta: float, lam: float, seed: int, t: int):
        g_hat = problem.grad_r_double_sample(x, stream(seed, t, *SERVER_KEY), self.batch)
        e = lam * (grad_r(problem, x) - g_hat)
        return ybar - eta * lam * g_hat, e


Estimator = GaussianEstimator | DoubleSamplingEstimator

_ESTIMATORS = {"gaussian": ("sigma2",), "double_sampling": ("batch",)}


def make_estimator(spec: Mapping[str, Any] | None) -> Estimator:
    """Parse ``params["estimator"]`` (default {"kind": "gaussian", "sigma2": 0}): {"kind": "gaussian",
    "sigma2" >= 0} | {"kind": "double_sampling", "batch" integer >= 1}."""
    if spec is None:
        return GaussianEstimator(0.0)
    kind, f = _spec("estimator", spec, _ESTIMATORS)
    if kind == "gaussian":
        return GaussianEstimator(check_positive("estimator['sigma2']", _require("estimator", f, "sigma2"), strict=False))
    return DoubleSamplingEstimator(check_int("estimator['batch']", _require("estimator", f, "batch")))


# ---------------------------------------------------------------------------------------------------------------
# the smooth composite objective F = f + lam r
# ---------------------------------------------------------------------------------------------------------------


def fairness_weight(problem: Any) -> float:
    """lambda of F = f + lambda r (0 for a problem without a fairness term)."""
    return float(getattr(problem, "lam", 0.0))


def grad_r(problem: Any, x: np.ndarray) -> np.ndarray:
    """grad r(x), shape ``x.shape`` (zeros for a problem without a fairness term)."""
    if hasattr(problem, "grad_r"):
        return problem.grad_r(x)
    return np.zeros_like(x)


def F(problem: Any, x: np.ndarray) -> np.ndarray:
    """F(x) = f(x) + lam r(x), shape ``x.shape[:-1]``."""
    return problem.F(x) if hasattr(problem, "F") else problem.f(x)


def grad_F(problem: Any, x: np.ndarray) -> np.ndarray:
    """grad F(x) = grad f(x) + lam grad r(x), shape ``x.shape``."""
    return problem.grad_F(x) if hasattr(problem, "grad_F") else problem.grad_f(x)


def empirical_gamma(X: np.ndarray, Y: np.ndarray, Gx: np.ndarray, eta: float) -> np.ndarray:
    """P3: max_i ||(y_i - x^r)/eta_r + grad f_i(x^r)|| / ||grad f_i(x^r)||, the smallest gamma_r satisfying
    eq. (10) this round; shape ``X.shape[:-2]``. A client with grad f_i(x^r) = 0 counts 0 if its error is 0 too
    and inf otherwise (then (10) holds for no gamma)."""
    err = _norm((Y - X) / eta + Gx)
    g = _norm(Gx)
    ratio = np.where(g > 0, err / np.where(g > 0, g, 1.0), np.where(err > 0, np.inf, 0.0))
    return ratio.max(axis=-1)


# ---------------------------------------------------------------------------------------------------------------
# the algorithm
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DSConfig:
    """The parsed parameters of a run (besides the engine's ``Context``)."""

    schedule: Schedule
    solver: Solver
    estimator: Estimator
    lam: float
    L_f: float


@dataclass(frozen=True, eq=False)
class DSState:
    """State after ``t`` rounds: the iterate x^t (R, p), and what round t - 1 produced (None before round 0):
    client outputs ``y`` (R, n, p), ``e_stoch`` (R, p), ``eta``, ``gamma_emp`` (R,), ``local_steps`` (R,) (the
    largest number of local GD steps over the clients), ``uplink`` (p-vectors sent per client)."""

    ctx: Context
    cfg: DSConfig
    t: int
    x: np.ndarray
    y: np.ndarray | None = None
    e_stoch: np.ndarray | None = None
    eta: float = 0.0
    gamma_emp: np.ndarray | None = None
    local_steps: np.ndarray | None = None
    uplink: int = 0


def _check_problem(problem: Any) -> None:
    phi = getattr(problem, "phi", None)
    if phi is not None and getattr(phi, "name", "zero") != "zero":
        raise ValueError(f"problem: DS FedProxGrad needs a smooth composite problem (phi = Zero), got phi = {phi.name!r}")


def _check_oracle(oracle: Any) -> None:
    if oracle is not None and getattr(oracle, "sigma2", None) != 0.0:
        raise ValueError(
            "oracle: DS FedProxGrad's clients use exact gradients (the paper's model, notes 1.5 item 8); pass no "
            "oracle or an exact one (sigma2 = 0) and put the noise in params['estimator']"
        )


def _x0(problem: Any, x0: Any) -> np.ndarray | None:
    if x0 is None:
        return None
    v = check_array("x0", x0, finite=False, nonempty=False)
    if v.ndim not in (1, 2) or v.shape[-1] != problem.p or not np.all(np.isfinite(v)):
        raise ValueError(f"x0 must be a finite array of shape ({problem.p},) or (replicas, {problem.p}), got shape {v.shape}")
    return v


def _spec_dict(spec: Any) -> dict:
    """A normalised copy of a parsed spec, as a plain dict (what ``validate`` returns)."""
    out = {"kind": spec.kind}
    for f in fields(spec):
        if f.name == "kind":
            continue
        v = getattr(spec, f.name)
        out[f.name] = {"kind": v.kind, _GAMMAS[v.kind][0]: v.value} if isinstance(v, GammaSchedule) else v
    return out


class DSFedProxGrad:
    """DS FedProxGrad, eqs. (3)-(5), for the engine (``fedbounds.algorithms.run``): ``validate``, ``init``, ``step``,
    ``observe``.

    params: ``schedule`` (required), ``solver`` (default {"kind": "exact", "tol": 1e-12}), ``estimator``
    (default {"kind": "gaussian", "sigma2": 0}), ``x0`` ((p,) or (replicas, p); default zeros), ``gamma_eval``
    (engine: gamma of the natural-residual metric). See ``make_schedule``, ``make_solver``, ``make_estimator``."""

    name = "ds_fedproxgrad"
    optional: Mapping[str, Any] = {"solver": None, "estimator": None, "x0": None}

    def _schedule_spec(self, params: dict) -> Any:
        if "schedule" not in params:
            raise ValueError("schedule is required: {'kind': 'constant' | 'power' | 'sqrt_horizon', ...}")
        return params.pop("schedule")

    def _parse(self, problem: Any, params: Mapping[str, Any]) -> tuple[dict, DSConfig]:
        if not isinstance(params, Mapping):
            raise ValueError(f"params must be a dict, got {params!r}")
        _check_problem(problem)
        P = dict(params)
        schedule_spec = self._schedule_spec(P)
        P = check_params(self.name, P, (), self.optional)
        schedule = make_schedule(schedule_spec)
        solver = make_solver(P["solver"])
        estimator = make_estimator(P["estimator"])
        L_f = smoothness_of_f(problem)
        if solver.kind != "inject":
            # A4(ii): h_i must be strongly convex for the local solve to be well posed: eta_r rho_f < 1
            const = problem.constants
            rho_f = float(const["rho_f"].value) if "rho_f" in const else 0.0
            if rho_f > 0 and schedule.eta_max * rho_f >= 1:
                raise ValueError(
                    f"schedule: the local prox needs eta_r < 1/rho_f = {1 / rho_f:.6g} (h_i strongly convex), "
                    f"got a largest eta_r of {schedule.eta_max:.6g}"
                )
        if estimator.kind == "double_sampling" and not hasattr(problem, "grad_r_double_sample"):
            raise ValueError("estimator: 'double_sampling' needs problem.grad_r_double_sample(x, rng, batch)")
        P["solver"], P["estimator"], P["x0"] = _spec_dict(solver), _spec_dict(estimator), _x0(problem, P["x0"])
        P = self._with_schedule(P, schedule)
        return P, DSConfig(schedule, solver, estimator, fairness_weight(problem), L_f)

    def _with_schedule(self, P: dict, schedule: Schedule) -> dict:
        kind = {ConstantSchedule: "constant", PowerSchedule: "power", SqrtHorizonSchedule: "sqrt_horizon"}[type(schedule)]
        return {"schedule": {"kind": kind, **{f.name: getattr(schedule, f.name) for f in fields(schedule)}}, **P}

    def validate(self, problem: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``params`` (ValueError naming the parameter) and return them normalised, defaults filled in."""
        return self._parse(problem, params)[0]

    def init(self, problem: Any, params: Mapping[str, Any], oracle: Any = None, replicas: int = 1, seed: int = 0) -> DSState:
        replicas = check_int("replicas", replicas)
        seed = check_int("seed", seed, minimum=0)
        _check_oracle(oracle)
        P, cfg = self._parse(problem, params)
        x0 = P["x0"]
        if x0 is None:
            x = np.zeros((replicas, problem.p))
        elif x0.ndim == 1 or x0.shape[0] == replicas:
            x = np.array(np.broadcast_to(x0, (replicas, problem.p)), dtype=float)
        else:
            raise ValueError(f"x0 must have shape ({problem.p},) or ({replicas}, {problem.p}), got {x0.shape}")
        return DSState(Context(problem, P, oracle, seed, replicas), cfg, 0, x)

    def step(self, state: DSState, t: int) -> DSState:
        """Round t (0-based): Steps 1-3 with eta_t = schedule(t)."""
        ctx, cfg = state.ctx, state.cfg
        problem, seed = ctx.problem, ctx.seed
        eta = cfg.schedule(t)
        x = state.x
        X = np.broadcast_to(x[..., None, :], (*x.shape[:-1], problem.n, problem.p))
        Gx = problem.grad(X)  # grad f_i(x^r), (R, n, p)
        # Step 1, eq. (3)
        Y, steps = cfg.solver.solve(problem, X, Gx, eta, cfg.L_f, seed, t, x)
        # Step 2, eq. (4)
        ybar = Y.mean(axis=-2)
        # Step 3, eq. (5)
        x_new, e_stoch = cfg.estimator.server_step(problem, x, ybar, eta, cfg.lam, seed, t)
        return DSState(
            ctx,
            cfg,
            state.t + 1,
            x_new,
            y=Y,
            e_stoch=e_stoch,
            eta=eta,
            gamma_emp=empirical_gamma(X, Y, Gx, eta),
            local_steps=steps.max(axis=-1),
            uplink=1,
        )

    def observe(self, state: DSState) -> Observation:
        """x^t and the per-round values of the round that produced it (0 for the initial state)."""
        R = state.x.shape[0]
        done = state.t > 0
        return Observation(
            x=state.x,
            per_round={
                "gamma_emp": state.gamma_emp if done else np.zeros(R),
                "eta": state.eta if done else 0.0,
                "uplink": float(state.uplink),
            },
        )


class FedProxGrad(DSFedProxGrad):
    """FedProxGrad with a constant step eta (the original analysis, [arifgroup]): DS FedProxGrad with
    ``schedule = {"kind": "constant", "eta": eta}``. params: ``eta`` (or a constant ``schedule``), ``solver``,
    ``estimator``, ``x0``, ``gamma_eval``."""

    name = "fedproxgrad"

    def _schedule_spec(self, params: dict) -> Any:
        if "eta" in params:
            if "schedule" in params:
                raise ValueError("eta: give either eta or schedule, not both")
            return {"kind": "constant", "eta": params.pop("eta")}
        if "schedule" not in params:
            raise ValueError("eta is required (FedProxGrad's constant step), e.g. {'eta': 0.05}")
        spec = params.pop("schedule")
        if not isinstance(spec, Mapping) or spec.get("kind") != "constant":
            raise ValueError(f"schedule must be {{'kind': 'constant', 'eta': ...}} for fedproxgrad, got {spec!r}")
        return spec

    def _with_schedule(self, P: dict, schedule: Schedule) -> dict:
        return {"eta": schedule(0), **P}


#: the algorithm objects, registered with the engine under "ds_fedproxgrad" and "fedproxgrad"
DS_FEDPROXGRAD = DSFedProxGrad()
FEDPROXGRAD = FedProxGrad()
register("ds_fedproxgrad", DS_FEDPROXGRAD)
register("fedproxgrad", FEDPROXGRAD)
