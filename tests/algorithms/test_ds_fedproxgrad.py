"""DS FedProxGrad (arXiv 2512.08671, eqs. (3)-(7), (10)) and FedProxGrad: vectorised vs per-client reference,
the inexactness of the three local solvers, the error identity (7), the estimators' unbiasedness (9), and
parameter validation.

The private test problem: f_i = heterogeneous least squares (optionally plus the nonconvex smooth penalty
alpha sum w_k^2/(1 + w_k^2), which makes it non-quadratic), r(x) = Delta(x)^2 / 2 with Delta(x) =
mean_j tanh(c_j^T x + b_j), a pooled statistic like the demographic-parity gap (notes 3.2, R1), so that the
double-sampling estimator 2-batch Delta_A grad Delta_B is unbiased for grad r.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fedbounds.algorithms.base import Constant
from fedbounds.algorithms.ds_fedproxgrad import (
    DS_FEDPROXGRAD,
    FEDPROXGRAD,
    ExactProx,
    make_schedule,
    smoothness_of_f,
)
from fedbounds.algorithms.instances.least_squares import heterogeneous_least_squares
from fedbounds.algorithms.reference.ds_fedproxgrad_ref import run_reference
from fedbounds.algorithms.regularizers import L1, Zero
from fedbounds.algorithms.run import DivergenceError, run
from scipy.optimize import minimize

# --------------------------------------------------------------------------------------------------------------
# the private smooth composite problem
# --------------------------------------------------------------------------------------------------------------


class _Composite:
    """F = (1/n) sum_i f_i + lam r with known L_f, rho_f, G_r, L_r."""

    def __init__(self, n=4, p=3, m=8, lam=0.7, alpha=0.0, J=40, heterogeneity=1.0, seed=0):
        self.ls = heterogeneous_least_squares(n=n, p=p, m=m, heterogeneity=heterogeneity, seed=seed)
        self.n, self.p, self.lam, self.alpha = n, p, lam, alpha
        self.phi = Zero()
        if alpha == 0.0:  # quadratic f_i: expose the structure the exact solver uses in closed form
            self.hessians, self.linear = self.ls.hessians, self.ls.linear
        rng = np.random.default_rng(seed + 100)
        C = rng.standard_normal((J, p))
        self.C = C / np.maximum(1.0, np.linalg.norm(C, axis=1, keepdims=True))  # ||c_j|| <= 1
        self.b = rng.uniform(0.2, 1.0, J)
        self._L_ls = float(np.linalg.eigvalsh(self.ls.hessians).max())

    # f_i
    def client_values(self, X):
        q = X**2 / (1 + X**2)
        return self.ls.client_values(X) + self.alpha * q.sum(axis=-1)

    def grad(self, X):
        return self.ls.grad(X) + self.alpha * 2 * X / (1 + X**2) ** 2

    def f(self, x):
        X = np.broadcast_to(np.asarray(x)[..., None, :], (*np.shape(x)[:-1], self.n, self.p))
        return self.client_values(X).mean(axis=-1)

    def grad_f(self, x):
        X = np.broadcast_to(np.asarray(x)[..., None, :], (*np.shape(x)[:-1], self.n, self.p))
        return self.grad(X).mean(axis=-2)

    def psi(self, x):
        return self.f(x)

    # r = Delta^2 / 2
    def _delta(self, x, idx=None):
        u = np.einsum("jp,...p->...j", self.C, x) + self.b
        if idx is None:
            return np.tanh(u).mean(-1), np.einsum("...j,jp->...p", 1 / np.cosh(u) ** 2, self.C) / len(self.b)
        t = np.take_along_axis(np.tanh(u), idx, axis=-1).mean(-1)
        s = np.take_along_axis(1 / np.cosh(u) ** 2, idx, axis=-1)
        return t, np.einsum("...k,...kp->...p", s, self.C[idx]) / idx.shape[-1]

    def r(self, x):
        return 0.5 * self._delta(x)[0] ** 2

    def grad_r(self, x):
        d, gd = self._delta(x)
        return d[..., None] * gd

    def grad_r_double_sample(self, x, rng, batch):
        idx = rng.integers(0, len(self.b), size=(*np.shape(x)[:-1], 2, batch))
        dA, _ = self._delta(x, idx[..., 0, :])
        _, gB = self._delta(x, idx[..., 1, :])
        return dA[..., None] * gB

    def F(self, x):
        return self.f(x) + self.lam * self.r(x)

    def grad_F(self, x):
        return self.grad_f(x) + self.lam * self.grad_r(x)

    @property
    def constants(self):
        L_f = self._L_ls + 2 * self.alpha  # q'' in [-1/2, 2]
        L_r = 1 + 4 / (3 * np.sqrt(3))  # ||grad Delta||^2 + |Delta| max|tanh''| with ||c_j|| <= 1
        return {
            "L": Constant(L_f, "upper_bound"),
            "L_f": Constant(L_f, "upper_bound"),
            "rho_f": Constant(self.alpha / 2, "upper_bound"),
            "G_r": Constant(1.0, "upper_bound"),
            "L_r": Constant(L_r, "upper_bound"),
            "lam": Constant(self.lam),
            "L_F": Constant(L_f + self.lam * L_r, "upper_bound"),
        }


class _PlugIn(_Composite):
    """Negative control: a single-batch plug-in estimate Delta_A grad Delta_A (biased at order 1/batch)."""

    def grad_r_double_sample(self, x, rng, batch):
        idx = rng.integers(0, len(self.b), size=(*np.shape(x)[:-1], batch))
        d, g = self._delta(x, idx)
        return d[..., None] * g


QUAD = _Composite()
NONQUAD = _Composite(alpha=0.3, seed=1)
X0 = np.array([0.8, -0.5, 0.3])


def simulate(alg, problem, params, rounds, replicas=1, seed=0):
    state = alg.init(problem, params, None, replicas, seed)
    states = [state]
    for t in range(rounds):
        state = alg.step(state, t)
        states.append(state)
    return states


def _fd_grad(fun, x, h=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        g[k] = (fun(x + e) - fun(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("problem", [QUAD, NONQUAD], ids=["quadratic", "nonquadratic"])
def test_fixture_gradients_match_finite_differences(problem):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(problem.p)
    np.testing.assert_allclose(problem.grad_F(x), _fd_grad(problem.F, x), atol=1e-7)
    np.testing.assert_allclose(problem.grad_r(x), _fd_grad(problem.r, x), atol=1e-8)
    X = rng.standard_normal((problem.n, problem.p))
    for i in range(problem.n):
        def fi(w, i=i):
            Z = X.copy()
            Z[i] = w
            return problem.client_values(Z)[i]
        np.testing.assert_allclose(problem.grad(X)[i], _fd_grad(fi, X[i]), atol=1e-7)


# --------------------------------------------------------------------------------------------------------------
# vectorised == reference
# --------------------------------------------------------------------------------------------------------------

CASES = [
    ("exact_closed_gauss", QUAD, {"kind": "power", "c": 0.3, "alpha": 0.6}, {"kind": "exact", "tol": 1e-12},
     {"kind": "gaussian", "sigma2": 0.5}),
    ("exact_gd_ds", NONQUAD, {"kind": "constant", "eta": 0.2}, {"kind": "exact", "tol": 1e-12},
     {"kind": "double_sampling", "batch": 3}),
    ("exact_forced_gd_gauss", QUAD, {"kind": "sqrt_horizon", "c": 1.0, "R": 16}, {"kind": "exact", "tol": 1e-12, "method": "gd"},
     {"kind": "gaussian", "sigma2": 0.2}),
    ("certified_gauss", NONQUAD, {"kind": "power", "c": 0.4, "alpha": 1.0}, {"kind": "gd_certified", "c_theta": 0.5},
     {"kind": "gaussian", "sigma2": 0.3}),
    ("certified_ds", QUAD, {"kind": "constant", "eta": 0.3}, {"kind": "gd_certified", "c_theta": 1.0},
     {"kind": "double_sampling", "batch": 2}),
    ("inject_uphill_gauss", QUAD, {"kind": "power", "c": 0.3, "alpha": 0.75},
     {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 2.0}, "direction": "uphill"}, {"kind": "gaussian", "sigma2": 0.1}),
    ("inject_random_ds", NONQUAD, {"kind": "constant", "eta": 0.1},
     {"kind": "inject", "gamma": {"kind": "sqrt", "c": 0.5}, "direction": "random"}, {"kind": "double_sampling", "batch": 4}),
    ("inject_random_const_gauss", QUAD, {"kind": "sqrt_horizon", "c": 0.5, "R": 4},
     {"kind": "inject", "gamma": {"kind": "constant", "value": 0.3}, "direction": "random"}, {"kind": "gaussian", "sigma2": 1.0}),
]


@pytest.mark.parametrize(("name", "problem", "schedule", "solver", "estimator"), CASES, ids=[c[0] for c in CASES])
def test_vectorised_matches_reference(name, problem, schedule, solver, estimator):
    params = {"schedule": schedule, "solver": solver, "estimator": estimator, "x0": X0}
    rounds, replicas, seed = 8, 3, 11
    states = simulate(DS_FEDPROXGRAD, problem, params, rounds, replicas, seed)
    ref = run_reference(problem, params, rounds=rounds, replicas=replicas, seed=seed)
    np.testing.assert_allclose(np.array([s.x for s in states]), ref["x"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array([s.y for s in states[1:]]), ref["y"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array([s.e_stoch for s in states[1:]]), ref["e_stoch"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array([s.gamma_emp for s in states[1:]]), ref["gamma_emp"], rtol=0, atol=1e-12)
    np.testing.assert_allclose([s.eta for s in states[1:]], ref["eta"], rtol=0, atol=1e-15)
    # replicas draw different noise, so the comparison is not between identical copies
    assert np.ptp(states[-1].x, axis=0).max() > 1e-6


def test_same_seed_reproduces_and_other_seed_differs():
    params = {"schedule": {"kind": "constant", "eta": 0.2}, "estimator": {"kind": "gaussian", "sigma2": 1.0}}
    a = simulate(DS_FEDPROXGRAD, QUAD, params, 5, 2, seed=4)[-1].x
    b = simulate(DS_FEDPROXGRAD, QUAD, params, 5, 2, seed=4)[-1].x
    c = simulate(DS_FEDPROXGRAD, QUAD, params, 5, 2, seed=5)[-1].x
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - c).max() > 1e-3


# --------------------------------------------------------------------------------------------------------------
# local solvers and the inexactness of eq. (10)
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("problem", [QUAD, NONQUAD], ids=["quadratic", "nonquadratic"])
def test_exact_prox_matches_an_independent_solver(problem):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, problem.p))
    eta = 0.4
    X = np.broadcast_to(x[:, None, :], (2, problem.n, problem.p))
    Y, _ = ExactProx(tol=1e-12).solve(problem, X, problem.grad(X), eta, smoothness_of_f(problem), 0, 0, x)
    for k in range(2):
        for i in range(problem.n):
            def h(w, i=i, k=k):
                Z = np.array(X[k])
                Z[i] = w
                return problem.client_values(Z)[i] + np.sum((w - x[k]) ** 2) / (2 * eta)
            res = minimize(h, x[k], method="BFGS", options={"gtol": 1e-11})
            np.testing.assert_allclose(Y[k, i], res.x, atol=1e-6)


def test_exact_closed_form_and_gradient_descent_agree():
    x = np.array([[0.3, -1.0, 2.0]])
    X = np.broadcast_to(x[:, None, :], (1, QUAD.n, QUAD.p))
    G = QUAD.grad(X)
    Yc, _ = ExactProx(method="closed_form").solve(QUAD, X, G, 0.5, smoothness_of_f(QUAD), 0, 0, x)
    Yg, steps = ExactProx(method="gd", tol=1e-13).solve(QUAD, X, G, 0.5, smoothness_of_f(QUAD), 0, 0, x)
    assert steps.min() > 5
    np.testing.assert_allclose(Yc, Yg, atol=1e-12)


@pytest.mark.parametrize("problem", [QUAD, NONQUAD], ids=["quadratic", "nonquadratic"])
@pytest.mark.parametrize("schedule", [{"kind": "constant", "eta": 0.5}, {"kind": "power", "c": 0.9, "alpha": 0.6}], ids=["const", "power"])
def test_exact_prox_inexactness_within_notes_bound(problem, schedule):
    """Notes 1.5 item 4: the exact prox satisfies (10) with gamma_r/eta_r <= L_f/(1 - L_f eta_r)."""
    L_f = smoothness_of_f(problem)
    schedule = {k: (v / L_f if k in ("eta", "c") else v) for k, v in schedule.items()}
    params = {"schedule": schedule, "solver": {"kind": "exact", "tol": 1e-13},
              "estimator": {"kind": "gaussian", "sigma2": 0.5}, "x0": X0}
    states = simulate(DS_FEDPROXGRAD, problem, params, 30, replicas=4, seed=2)
    ratios = np.array([s.gamma_emp / s.eta for s in states[1:]])  # (rounds, R)
    etas = np.array([s.eta for s in states[1:]])[:, None]
    bound = L_f / (1 - L_f * etas)
    assert np.all(ratios <= bound * (1 + 1e-9))
    assert ratios.min() > 1e-3  # the exact prox is not a gradient step: (10) measures a real error


def test_inexactness_bound_can_fail():
    """Negative control: injected error twice the exact-prox bound is reported above it."""
    L_f = smoothness_of_f(QUAD)
    eta = 0.5 / L_f
    c_gamma = 2 * L_f / (1 - L_f * eta)
    params = {"schedule": {"kind": "constant", "eta": eta},
              "solver": {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": c_gamma}}, "x0": X0}
    states = simulate(DS_FEDPROXGRAD, QUAD, params, 3)
    assert all(s.gamma_emp[0] / eta > L_f / (1 - L_f * eta) for s in states[1:])


@pytest.mark.parametrize("problem", [QUAD, NONQUAD], ids=["quadratic", "nonquadratic"])
@pytest.mark.parametrize("c_theta", [0.3, 3.0])
def test_certified_gd_stops_by_its_rule_and_obeys_p1_bound(problem, c_theta):
    """Notes 3.4 (P1): at the stop ||grad h_i(y)|| <= theta ||grad f_i(x)||, and gamma_r <= (theta + L_f eta)/(1 - L_f eta)."""
    L_f = smoothness_of_f(problem)
    params = {"schedule": {"kind": "power", "c": 0.5 / L_f, "alpha": 0.7}, "solver": {"kind": "gd_certified", "c_theta": c_theta},
              "estimator": {"kind": "gaussian", "sigma2": 0.3}, "x0": X0}
    states = simulate(DS_FEDPROXGRAD, problem, params, 15, replicas=3, seed=1)
    for prev, s in itertools.pairwise(states):
        X = np.broadcast_to(prev.x[:, None, :], s.y.shape)
        gx = np.linalg.norm(problem.grad(X), axis=-1)
        gh = np.linalg.norm(problem.grad(s.y) + (s.y - X) / s.eta, axis=-1)
        theta = c_theta * s.eta
        assert np.all(gh <= theta * gx * (1 + 1e-12))
        assert np.all(s.gamma_emp <= (theta + L_f * s.eta) / (1 - L_f * s.eta) * (1 + 1e-12))
        assert np.all(s.local_steps >= 1)


@pytest.mark.parametrize("direction", ["uphill", "random"])
@pytest.mark.parametrize(
    ("gamma_spec", "gamma_of_eta"),
    [({"kind": "proportional", "c_gamma": 3.0}, lambda e: 3.0 * e),
     ({"kind": "constant", "value": 0.4}, lambda e: 0.4),
     ({"kind": "sqrt", "c": 0.7}, lambda e: 0.7 * np.sqrt(e))],
    ids=["proportional", "constant", "sqrt"],
)
def test_inject_realises_the_prescribed_gamma(direction, gamma_spec, gamma_of_eta):
    params = {"schedule": {"kind": "power", "c": 0.4, "alpha": 0.8},
              "solver": {"kind": "inject", "gamma": gamma_spec, "direction": direction},
              "estimator": {"kind": "gaussian", "sigma2": 0.2}, "x0": X0}
    states = simulate(DS_FEDPROXGRAD, NONQUAD, params, 10, replicas=3, seed=9)
    for prev, s in itertools.pairwise(states):
        np.testing.assert_allclose(s.gamma_emp, gamma_of_eta(0.4 / (s.t) ** 0.8), rtol=0, atol=1e-12)
        # every client's error has exactly the prescribed size, not only the worst one
        X = np.broadcast_to(prev.x[:, None, :], s.y.shape)
        G = NONQUAD.grad(X)
        e = (s.y - X) / s.eta + G
        np.testing.assert_allclose(np.linalg.norm(e, axis=-1), gamma_of_eta(s.eta) * np.linalg.norm(G, axis=-1), rtol=1e-11)
        if direction == "uphill":
            g = NONQUAD.grad_F(prev.x)
            cos = np.einsum("kip,kp->ki", e, g) / (np.linalg.norm(e, axis=-1) * np.linalg.norm(g, axis=-1)[:, None])
            np.testing.assert_allclose(cos, 1.0, atol=1e-12)


def test_random_directions_are_isotropic():
    """Random inject directions: the mean of e_i/||e_i|| over many draws is 0 and E[d d^T] = I/p."""
    params = {"schedule": {"kind": "constant", "eta": 0.1},
              "solver": {"kind": "inject", "gamma": {"kind": "constant", "value": 1.0}, "direction": "random"}, "x0": X0}
    s0 = DS_FEDPROXGRAD.init(QUAD, params, None, 2000, 3)
    s1 = DS_FEDPROXGRAD.step(s0, 0)
    X = np.broadcast_to(s0.x[:, None, :], s1.y.shape)
    e = (s1.y - X) / 0.1 + QUAD.grad(X)
    d = (e / np.linalg.norm(e, axis=-1, keepdims=True)).reshape(-1, QUAD.p)
    se = 1 / np.sqrt(QUAD.p * len(d))
    assert np.abs(d.mean(axis=0)).max() < 5 * se
    np.testing.assert_allclose(d.T @ d / len(d), np.eye(QUAD.p) / QUAD.p, atol=0.02)


# --------------------------------------------------------------------------------------------------------------
# the error decomposition (6)-(7) and the estimators (9)
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("solver", "estimator"),
    [({"kind": "exact"}, {"kind": "gaussian", "sigma2": 0.7}),
     ({"kind": "gd_certified", "c_theta": 0.5}, {"kind": "double_sampling", "batch": 2}),
     ({"kind": "inject", "gamma": {"kind": "constant", "value": 0.5}, "direction": "random"}, {"kind": "gaussian", "sigma2": 0.2})],
    ids=["exact_S1", "certified_S2", "inject_S1"],
)
def test_eq7_identity(solver, estimator):
    """x^{r+1} - x^r = -eta grad F(x^r) + eta e_f^r + eta e_stoch^r, e_f from (6)."""
    params = {"schedule": {"kind": "power", "c": 0.5, "alpha": 0.6}, "solver": solver, "estimator": estimator, "x0": X0}
    states = simulate(DS_FEDPROXGRAD, NONQUAD, params, 6, replicas=3, seed=5)
    for prev, s in itertools.pairwise(states):
        X = np.broadcast_to(prev.x[:, None, :], s.y.shape)
        e_f = ((s.y - X) / s.eta + NONQUAD.grad(X)).mean(axis=-2)
        rhs = -s.eta * NONQUAD.grad_F(prev.x) + s.eta * e_f + s.eta * s.e_stoch
        np.testing.assert_allclose(s.x - prev.x, rhs, rtol=0, atol=1e-13)
        assert np.abs(s.e_stoch).max() > 0


def _one_round(problem, estimator, replicas, seed=0):
    params = {"schedule": {"kind": "constant", "eta": 0.3}, "estimator": estimator, "x0": X0}
    s0 = DS_FEDPROXGRAD.init(problem, params, None, replicas, seed)
    return DS_FEDPROXGRAD.step(s0, 0)


def _mean_within_ci(samples, target, z=4.5):
    m = samples.mean(axis=0)
    se = samples.std(axis=0, ddof=1) / np.sqrt(len(samples))
    return np.all(np.abs(m - target) <= z * se), m, se


@pytest.mark.parametrize("batch", [1, 3])
def test_double_sampling_is_unbiased(batch):
    """S2: E x^{r+1} equals the noiseless update, i.e. E[e_stoch | x] = 0 (assumption (9)), within a 4.5-sigma CI."""
    exact = _one_round(QUAD, {"kind": "gaussian", "sigma2": 0.0}, 1).x[0]
    s = _one_round(QUAD, {"kind": "double_sampling", "batch": batch}, 20_000)
    ok, m, se = _mean_within_ci(s.x, exact)
    assert ok, (m - exact, se)
    ok, _, _ = _mean_within_ci(s.e_stoch, np.zeros(QUAD.p))
    assert ok
    assert se.min() > 0  # the estimator is noisy, so the test has power


def test_plug_in_estimator_bias_is_detected():
    """Negative control: the single-batch plug-in Delta_A grad Delta_A fails the same unbiasedness test."""
    plug = _PlugIn()
    exact = _one_round(plug, {"kind": "gaussian", "sigma2": 0.0}, 1).x[0]
    s = _one_round(plug, {"kind": "double_sampling", "batch": 1}, 20_000)
    ok, _, _ = _mean_within_ci(s.x, exact)
    assert not ok


def test_gaussian_estimator_moments():
    """S1: E e_stoch = 0 and E||e_stoch||^2 = sigma2 (the paper's sigma^2 of (9), with no lambda)."""
    sigma2 = 2.5
    s = _one_round(QUAD, {"kind": "gaussian", "sigma2": sigma2}, 20_000)
    sq = np.sum(s.e_stoch**2, axis=-1)
    assert abs(sq.mean() - sigma2) <= 4.5 * sq.std(ddof=1) / np.sqrt(len(sq))
    ok, _, _ = _mean_within_ci(s.e_stoch, np.zeros(QUAD.p))
    assert ok


# --------------------------------------------------------------------------------------------------------------
# convergence
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("solver", [{"kind": "exact"}, {"kind": "gd_certified", "c_theta": 1.0},
                                    {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 1.0}}],
                         ids=["exact", "certified", "inject"])
def test_noiseless_decaying_schedule_drives_grad_F_to_zero(solver):
    """sigma2 = 0, eta_r = c/(r+1)^0.6 and gamma_r = O(eta_r): ||grad F(x^r)||^2 decreases monotonically to ~0."""
    params = {"schedule": {"kind": "power", "c": 0.5, "alpha": 0.6}, "solver": solver, "x0": 3 * X0}
    g = run("ds_fedproxgrad", QUAD, params, rounds=400).metrics["grad_F_sq"][:, 0]
    assert g[-1] < 1e-4 * g[0]
    assert np.all(np.diff(g[20:]) <= 0)


def test_constant_gamma_leaves_a_floor():
    """Notes 1.5 item 6: a constant uphill gamma leaves a floor, gamma = c sqrt(eta_r) does not (same schedule)."""
    def final(gamma):
        params = {"schedule": {"kind": "power", "c": 0.5, "alpha": 0.6}, "x0": 3 * X0,
                  "solver": {"kind": "inject", "gamma": gamma, "direction": "uphill"}}
        return run("ds_fedproxgrad", QUAD, params, rounds=400).metrics["grad_F_sq"][-50:, 0]

    floor = final({"kind": "constant", "value": 0.5})
    sqrt = final({"kind": "sqrt", "c": 0.5})
    assert floor.min() > 1e-2 and np.ptp(floor) < 0.05 * floor.mean()
    assert sqrt[-1] < floor.min() / 10


def test_constant_step_plateaus_decaying_step_does_not():
    """Theorem 5.3 vs the constant-step sigma-floor (notes 1.6), E||grad F||^2 over 64 replicas."""
    est = {"kind": "gaussian", "sigma2": 1.0}

    def curve(schedule):
        traj = run("ds_fedproxgrad", QUAD, {"schedule": schedule, "estimator": est, "x0": X0}, rounds=300, replicas=64, seed=3)
        return traj.metrics["grad_F_sq"].mean(axis=1)

    const = curve({"kind": "constant", "eta": 0.5})
    decay = curve({"kind": "power", "c": 0.5, "alpha": 0.75})
    assert decay[-100:].mean() < const[-100:].mean() / 10
    assert decay[250:].mean() < decay[100:150].mean() / 1.5  # still going down


# --------------------------------------------------------------------------------------------------------------
# FedProxGrad, metrics, validation
# --------------------------------------------------------------------------------------------------------------


def test_fedproxgrad_is_ds_with_a_constant_step():
    common = {"solver": {"kind": "gd_certified", "c_theta": 0.5}, "estimator": {"kind": "gaussian", "sigma2": 0.4}, "x0": X0}
    a = simulate(FEDPROXGRAD, NONQUAD, {"eta": 0.2, **common}, 5, 2, seed=1)
    b = simulate(DS_FEDPROXGRAD, NONQUAD, {"schedule": {"kind": "constant", "eta": 0.2}, **common}, 5, 2, seed=1)
    np.testing.assert_array_equal(a[-1].x, b[-1].x)
    c = simulate(FEDPROXGRAD, NONQUAD, {"schedule": {"kind": "constant", "eta": 0.2}, **common}, 5, 2, seed=1)
    np.testing.assert_array_equal(a[-1].x, c[-1].x)


def test_engine_records_the_per_round_metrics():
    params = {"schedule": {"kind": "power", "c": 0.3, "alpha": 0.5}, "x0": X0,
              "solver": {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 2.0}}}
    traj = run("ds_fedproxgrad", QUAD, params, rounds=4, replicas=3, seed=0)
    m = traj.metrics
    assert {"F", "grad_F_sq", "eta", "gamma_emp", "uplink"} <= set(m)
    assert all(v.shape == (5, 3) for v in m.values())
    np.testing.assert_array_equal(m["eta"][0], 0.0)  # row 0: the initial state, no round yet
    np.testing.assert_array_equal(m["uplink"], np.r_[0, 1, 1, 1, 1][:, None] * np.ones(3))
    etas = 0.3 / np.sqrt(np.arange(1, 5))  # row t + 1 holds round t
    np.testing.assert_allclose(m["eta"][1:], etas[:, None] * np.ones(3))
    np.testing.assert_allclose(m["gamma_emp"][1:], 2.0 * etas[:, None] * np.ones(3), atol=1e-12)
    np.testing.assert_allclose(m["F"][-1], QUAD.F(traj.final.x))
    direct = simulate(DS_FEDPROXGRAD, QUAD, params, 4, 3, 0)[-1].x
    np.testing.assert_array_equal(traj.final.x, direct)
    assert traj.params["solver"]["gamma"] == {"kind": "proportional", "c_gamma": 2.0}
    assert traj.params["estimator"] == {"kind": "gaussian", "sigma2": 0.0}


def test_fedproxgrad_through_the_engine():
    traj = run("fedproxgrad", NONQUAD, {"eta": 0.2, "x0": X0}, rounds=3)
    np.testing.assert_allclose(traj.metrics["eta"][1:], 0.2)
    assert traj.params["eta"] == 0.2 and "schedule" not in traj.params


def test_divergence_is_reported_with_its_round():
    """Inject with gamma = 0 is an explicit gradient step (notes 1.5 item 4); with eta = 20/L_f it blows up, and
    the engine stops at the round whose update overflowed, keeping only finite metrics."""
    L_f = smoothness_of_f(QUAD)
    params = {"schedule": {"kind": "constant", "eta": 20.0 / L_f}, "x0": X0,
              "solver": {"kind": "inject", "gamma": {"kind": "constant", "value": 0.0}}}
    traj = run("ds_fedproxgrad", QUAD, params, rounds=2000, replicas=2)
    assert traj.divergence is not None
    assert 10 < traj.divergence.round < 2000
    assert traj.rounds_completed == traj.divergence.round
    assert all(np.all(np.isfinite(v)) for v in traj.metrics.values())
    with pytest.raises(DivergenceError, match=f"diverged at round {traj.divergence.round} "):
        traj.raise_if_diverged()
    # the same run with a stable step does not diverge
    ok = run("ds_fedproxgrad", QUAD, {**params, "schedule": {"kind": "constant", "eta": 0.5 / L_f}}, rounds=200)
    assert ok.divergence is None


def test_schedules():
    assert make_schedule({"kind": "constant", "eta": 0.1})(7) == 0.1
    assert make_schedule({"kind": "power", "c": 2.0, "alpha": 0.5})(3) == pytest.approx(1.0)
    assert make_schedule({"kind": "sqrt_horizon", "c": 3.0, "R": 9})(100) == pytest.approx(1.0)


GOOD = {"schedule": {"kind": "constant", "eta": 0.1}}
BAD = [
    ({"schedule": {"kind": "constant", "eta": 0.0}}, "schedule['eta']"),
    ({"schedule": {"kind": "constant", "eta": -1.0}}, "schedule['eta']"),
    ({"schedule": {"kind": "power", "c": 1.0, "alpha": 0.0}}, "schedule['alpha']"),
    ({"schedule": {"kind": "power", "c": -1.0, "alpha": 0.5}}, "schedule['c']"),
    ({"schedule": {"kind": "sqrt_horizon", "c": 1.0, "R": 0}}, "schedule['R']"),
    ({"schedule": {"kind": "sqrt_horizon", "c": 1.0, "R": 2.5}}, "schedule['R']"),
    ({"schedule": {"kind": "power", "c": 1.0}}, "schedule['alpha']"),
    ({"schedule": {"kind": "cosine", "eta": 1.0}}, "schedule['kind']"),
    ({"schedule": {"kind": "constant", "eta": 0.1, "alpha": 1}}, "schedule"),
    ({}, "schedule"),
    ({**GOOD, "solver": {"kind": "exact", "tol": 0}}, "solver['tol']"),
    ({**GOOD, "solver": {"kind": "exact", "method": "newton"}}, "solver['method']"),
    ({**GOOD, "solver": {"kind": "gd_certified", "c_theta": 0}}, "solver['c_theta']"),
    ({**GOOD, "solver": {"kind": "gd_certified"}}, "solver['c_theta']"),
    ({**GOOD, "solver": {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": -1}}}, "solver['gamma']['c_gamma']"),
    ({**GOOD, "solver": {"kind": "inject", "gamma": {"kind": "sqrt", "c": float("nan")}}}, "solver['gamma']['c']"),
    ({**GOOD, "solver": {"kind": "inject", "gamma": {"kind": "linear", "c": 1}}}, "solver['gamma']['kind']"),
    ({**GOOD, "solver": {"kind": "inject", "gamma": {"kind": "constant", "value": 0.1}, "direction": "down"}}, "solver['direction']"),
    ({**GOOD, "solver": {"kind": "inject"}}, "solver['gamma']"),
    ({**GOOD, "solver": {"kind": "newton"}}, "solver['kind']"),
    ({**GOOD, "estimator": {"kind": "gaussian", "sigma2": -0.1}}, "estimator['sigma2']"),
    ({**GOOD, "estimator": {"kind": "double_sampling", "batch": 0}}, "estimator['batch']"),
    ({**GOOD, "estimator": {"kind": "hsic"}}, "estimator['kind']"),
    ({**GOOD, "x0": np.zeros(5)}, "x0"),
    ({**GOOD, "eta": 0.1}, "eta"),
]


@pytest.mark.parametrize(("params", "needle"), BAD, ids=[f"{i}-{b[1]}" for i, b in enumerate(BAD)])
def test_bad_parameters_raise_value_error_naming_them(params, needle):
    with pytest.raises(ValueError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        DS_FEDPROXGRAD.init(QUAD, params, None, 1, 0)


def test_bad_fedproxgrad_and_setup_parameters():
    with pytest.raises(ValueError, match="schedule"):
        FEDPROXGRAD.init(QUAD, {"schedule": {"kind": "power", "c": 1.0, "alpha": 0.6}})
    with pytest.raises(ValueError, match="eta"):
        FEDPROXGRAD.init(QUAD, {})
    with pytest.raises(ValueError, match="eta"):
        FEDPROXGRAD.init(QUAD, {"eta": 0.0})
    with pytest.raises(ValueError, match="replicas"):
        DS_FEDPROXGRAD.init(QUAD, GOOD, None, 0, 0)
    with pytest.raises(ValueError, match="rho_f"):  # h_i not strongly convex: eta rho_f >= 1
        DS_FEDPROXGRAD.init(NONQUAD, {"schedule": {"kind": "constant", "eta": 2 / NONQUAD.alpha * 1.01}}, None, 1, 0)
    with pytest.raises(ValueError, match="phi"):
        DS_FEDPROXGRAD.init(heterogeneous_least_squares(n=2, p=2, m=3, phi=L1(0.1)), GOOD, None, 1, 0)
    with pytest.raises(ValueError, match="double_sampling"):
        DS_FEDPROXGRAD.init(heterogeneous_least_squares(n=2, p=2, m=3), {**GOOD, "estimator": {"kind": "double_sampling", "batch": 1}})

    class _Noisy:
        sigma2 = 1.0

    with pytest.raises(ValueError, match="oracle"):
        DS_FEDPROXGRAD.init(QUAD, GOOD, _Noisy(), 1, 0)


def test_plain_smooth_problem_is_fedprox_with_its_heterogeneity_bias():
    """Without a fairness term (lam = 0, F = f) and a constant step the exact-prox method is FedProx: on least
    squares it converges to the fixed point of x = (1/n) sum_i (H_i + I/eta)^{-1}(h_i + x/eta), solved here as
    one linear system, which is not x* (the client-drift bias)."""
    ls = heterogeneous_least_squares(n=3, p=3, m=10, heterogeneity=1.0, seed=2)
    eta = 0.5
    inv = np.linalg.inv(ls.hessians + np.eye(3) / eta)
    x_eta = np.linalg.solve(np.eye(3) - inv.mean(axis=0) / eta, np.einsum("ipq,iq->p", inv, ls.linear) / 3)
    states = simulate(FEDPROXGRAD, ls, {"eta": eta}, 300)
    np.testing.assert_allclose(states[-1].x[0], x_eta, atol=1e-10)
    assert np.linalg.norm(x_eta - ls.solution().x_star) > 1e-3


# --------------------------------------------------------------------------------------------------------------
# the fairness instance (algorithms/instances/fairness.py: logistic + nonconvex penalty, r = Delta^2)
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fair():
    from fedbounds.algorithms.instances.fairness import fairness

    return fairness(n=4, p=5, m=30, lam=1.0, seed=0)


FAIR_CASES = [
    ("exact_S2", {"kind": "power", "c": 2.0, "alpha": 0.6}, {"kind": "exact", "tol": 1e-12}, {"kind": "double_sampling", "batch": 3}),
    ("certified_S2", {"kind": "constant", "eta": 1.0}, {"kind": "gd_certified", "c_theta": 0.5}, {"kind": "double_sampling", "batch": 1}),
    ("inject_random_S1", {"kind": "sqrt_horizon", "c": 2.0, "R": 4},
     {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 1.0}, "direction": "random"}, {"kind": "gaussian", "sigma2": 0.1}),
    ("inject_uphill_S2", {"kind": "constant", "eta": 0.5},
     {"kind": "inject", "gamma": {"kind": "constant", "value": 0.3}}, {"kind": "double_sampling", "batch": 2}),
]


@pytest.mark.parametrize(("name", "schedule", "solver", "estimator"), FAIR_CASES, ids=[c[0] for c in FAIR_CASES])
def test_fairness_vectorised_matches_reference(fair, name, schedule, solver, estimator):
    x0 = np.linspace(-1.0, 1.0, fair.p)
    params = {"schedule": schedule, "solver": solver, "estimator": estimator, "x0": x0}
    states = simulate(DS_FEDPROXGRAD, fair, params, 6, replicas=3, seed=21)
    ref = run_reference(fair, params, rounds=6, replicas=3, seed=21)
    np.testing.assert_allclose(np.array([s.x for s in states]), ref["x"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array([s.gamma_emp for s in states[1:]]), ref["gamma_emp"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array([s.e_stoch for s in states[1:]]), ref["e_stoch"], rtol=0, atol=1e-12)
    assert np.ptp(states[-1].x, axis=0).max() > 1e-8


def test_fairness_exact_prox_inexactness_within_notes_bound(fair):
    L_f = fair.constants["L_f"].value
    params = {"schedule": {"kind": "power", "c": 0.9 / L_f, "alpha": 0.6}, "solver": {"kind": "exact", "tol": 1e-13},
              "estimator": {"kind": "double_sampling", "batch": 2}, "x0": np.full(fair.p, 0.5)}
    states = simulate(DS_FEDPROXGRAD, fair, params, 20, replicas=4, seed=2)
    for s in states[1:]:
        assert np.all(s.gamma_emp / s.eta <= L_f / (1 - L_f * s.eta) * (1 + 1e-9))
        assert np.all(s.gamma_emp > 0) and np.all(s.local_steps >= 1)


def test_fairness_double_sampling_noise_is_unbiased_with_sigma2_lam2_var(fair):
    """S2 on the fairness instance: E e_stoch = 0 and E||e_stoch||^2 = lam^2 Var(g_hat), with the instance's exact
    variance (``double_sample_variance``), i.e. sigma^2 = lam^2 Var(g_hat) as the module docstring maps it."""
    from fedbounds.algorithms.instances.fairness import fairness

    lam = 2.5
    prob = fairness(n=4, p=5, m=30, lam=lam, seed=0)
    x0 = np.linspace(-1.0, 1.0, prob.p)
    params = {"schedule": {"kind": "constant", "eta": 0.5}, "estimator": {"kind": "double_sampling", "batch": 2}, "x0": x0,
              "solver": {"kind": "inject", "gamma": {"kind": "constant", "value": 0.0}}}  # a cheap local step
    s = DS_FEDPROXGRAD.step(DS_FEDPROXGRAD.init(prob, params, None, 8000, 1), 0)
    ok, m, se = _mean_within_ci(s.e_stoch, np.zeros(prob.p))
    assert ok, (m, se)
    sq = np.sum(s.e_stoch**2, axis=-1)
    target = lam**2 * float(prob.double_sample_variance(x0, 2))
    assert abs(sq.mean() - target) <= 4.5 * sq.std(ddof=1) / np.sqrt(len(sq))
    # the noiseless update is the mean of the noisy ones
    exact = DS_FEDPROXGRAD.step(DS_FEDPROXGRAD.init(prob, {**params, "estimator": None}, None, 1, 1), 0).x[0]
    ok, _, _ = _mean_within_ci(s.x, exact)
    assert ok


def test_fairness_noiseless_decaying_schedule_converges(fair):
    params = {"schedule": {"kind": "power", "c": 2.0, "alpha": 0.6}, "solver": {"kind": "gd_certified", "c_theta": 1.0}}
    g = run("ds_fedproxgrad", fair, params, rounds=300).metrics["grad_F_sq"][:, 0]
    assert g[-1] < 1e-3 * g[0]
    assert np.all(np.diff(g[5:]) <= 0)


def test_gd_prox_stops_with_its_own_message_when_out_of_steps() -> None:
    """max_iter = 1 on a non-quadratic instance: the solver must say it did not reach its stopping rule, after
    exactly max_iter steps (kills the off-by-one mutant of the step loop)."""
    from fedbounds.algorithms.ds_fedproxgrad import _gd_prox
    from fedbounds.algorithms.instances import make_instance

    problem = make_instance("fairness", seed=0)
    X = np.ones((1, problem.n, problem.p))
    Gx = problem.grad(X)
    thr = np.zeros(X.shape[:-1])
    with pytest.raises(RuntimeError, match="did not reach its stopping rule in max_iter=1"):
        _gd_prox(problem, X, Gx, 0.1, float(problem.constants["L_f"].value), thr, 1, 0)
    Y, steps = _gd_prox(problem, X, Gx, 0.1, float(problem.constants["L_f"].value), np.full(X.shape[:-1], np.inf), 1, 0)
    assert np.array_equal(Y, X) and not steps.any()
