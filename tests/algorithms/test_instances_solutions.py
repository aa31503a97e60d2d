"""psi* and x* of every instance against an independent solver (issue 2: "an independent solver such as scipy
or scikit-learn for psi*").

f is the mean over clients of per-client means; every client has m samples, so f is the mean over the pooled
n m samples, which is the scaling of scikit-learn's Lasso ((1/(2 N)) ||A x - b||^2 + alpha ||x||_1, alpha =
weight) and of LogisticRegression (C sum loss + ||x||^2/2, so C = 1/(l2 N)).
"""

from __future__ import annotations

import numpy as np
import pytest
from fedbounds.algorithms.instances import make_instance
from scipy.optimize import minimize, minimize_scalar
from sklearn.linear_model import Lasso, LogisticRegression

SMALL = {"n": 4, "p": 5}


def pooled(prob):
    A = prob.A.reshape(-1, prob.p)
    b = (prob.b if hasattr(prob, "b") else prob.y).reshape(-1)
    return A, b


def test_least_squares_against_lstsq():
    prob = make_instance("least_squares", **SMALL, m=12, seed=2)
    A, b = pooled(prob)
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    psi = 0.5 * np.mean((A @ x - b) ** 2)
    sol = prob.solution()
    assert sol.psi_star == pytest.approx(psi, rel=1e-12)
    np.testing.assert_allclose(sol.x_star, x, rtol=1e-9, atol=1e-12)
    assert sol.extra["psi_star_kind"] == "exact"


@pytest.mark.parametrize("weight", [0.01, 0.05, 0.2])
def test_lasso_against_sklearn(weight):
    prob = make_instance("lasso", **SMALL, m=12, weight=weight, seed=1)
    A, b = pooled(prob)
    sk = Lasso(alpha=weight, fit_intercept=False, tol=1e-14, max_iter=1_000_000).fit(A, b)
    psi_sk = 0.5 * np.mean((A @ sk.coef_ - b) ** 2) + weight * np.abs(sk.coef_).sum()
    sol = prob.solution()
    assert float(prob.psi(sk.coef_)) == pytest.approx(psi_sk, rel=1e-12)
    assert sol.psi_star <= psi_sk + 1e-12
    assert sol.psi_star == pytest.approx(psi_sk, abs=1e-9)
    np.testing.assert_allclose(sol.x_star, sk.coef_, atol=1e-6)


def coordinate_descent(prob, sweeps: int = 60) -> np.ndarray:
    """Exact coordinate minimisation of psi = f + phi (separable phi; psi strongly convex), each 1-D problem by
    bounded Brent over [-R, R] (relative accuracy ~ sqrt(machine eps)) together with the kink candidate 0."""
    H, h = prob.hessians.mean(axis=0), prob.linear.mean(axis=0)
    x = np.zeros(prob.p)
    R = 50.0
    for _ in range(sweeps):
        old = x.copy()
        for k in range(prob.p):
            c = H[k] @ x - H[k, k] * x[k] - h[k]

            def obj(t: float, k: int = k, c: float = c) -> float:
                return 0.5 * H[k, k] * t * t + c * t + float(prob.phi.value(np.array([t])))

            res = minimize_scalar(obj, bounds=(-R, R), method="bounded", options={"xatol": 1e-13, "maxiter": 2000})
            x[k] = res.x if obj(res.x) < obj(0.0) else 0.0
        if np.max(np.abs(x - old)) < 1e-9:
            break
    return x


@pytest.mark.parametrize("name", ["least_squares_mcp", "least_squares_scad"])
def test_weakly_convex_regularisers_against_coordinate_descent(name):
    prob = make_instance(name, **SMALL, m=12, lam=0.1, seed=0)
    sol = prob.solution()
    assert sol.extra["global"] and prob.phi.rho < prob.constants["mu"].value  # (mu - rho)-strongly convex
    x_cd = coordinate_descent(prob)
    assert sol.psi_star <= float(prob.psi(x_cd)) + 1e-12
    assert sol.psi_star == pytest.approx(float(prob.psi(x_cd)), abs=1e-9)
    np.testing.assert_allclose(sol.x_star, x_cd, atol=1e-6)


@pytest.mark.parametrize(("alpha_het", "beta_het"), [(0.0, 0.0), (1.0, 1.0)])
def test_logistic_l2_against_sklearn(alpha_het, beta_het):
    prob = make_instance("logistic", **SMALL, m=30, alpha_het=alpha_het, beta_het=beta_het, l2=0.01, seed=3)
    A, y = pooled(prob)
    C = 1.0 / (prob.l2 * A.shape[0])
    sk = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(A, y)
    w = sk.coef_.ravel()
    sol = prob.solution()
    assert sol.psi_star <= float(prob.psi(w)) + 1e-12
    assert sol.psi_star == pytest.approx(float(prob.psi(w)), abs=1e-9)
    np.testing.assert_allclose(sol.x_star, w, atol=1e-5)


def test_logistic_unregularised_against_sklearn():
    prob = make_instance("logistic", **SMALL, m=30, l2=0.0, seed=4)
    A, y = pooled(prob)
    sk = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(A, y)
    w = sk.coef_.ravel()
    assert prob.solution().psi_star == pytest.approx(float(prob.psi(w)), abs=1e-8)
    assert prob.solution().psi_star <= float(prob.psi(w)) + 1e-12


def l1_split_solve(prob, weight: float) -> np.ndarray:
    """min f(u - v) + weight sum(u + v) over u, v >= 0 by scipy L-BFGS-B (a smooth reformulation of the l1 problem)."""
    p = prob.p

    def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
        u, v = z[:p], z[p:]
        g = prob.grad_f(u - v)
        return float(prob.f(u - v) + weight * z.sum()), np.concatenate([g + weight, -g + weight])

    res = minimize(
        fun,
        np.zeros(2 * p),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * (2 * p),
        options={"ftol": 0.0, "gtol": 1e-13, "maxiter": 50_000},
    )
    return res.x[:p] - res.x[p:]


def test_logistic_l1_against_scipy_split():
    prob = make_instance("logistic", **SMALL, m=30, l2=0.0, phi={"name": "l1", "weight": 0.02}, seed=0)
    w = l1_split_solve(prob, 0.02)
    sol = prob.solution()
    assert sol.psi_star <= float(prob.psi(w)) + 1e-12
    assert sol.psi_star == pytest.approx(float(prob.psi(w)), abs=1e-8)
    np.testing.assert_allclose(sol.x_star, w, atol=1e-4)


@pytest.mark.parametrize("name", ["nonconvex_logistic", "sigmoid_least_squares"])
def test_nonconvex_stationary_point_against_scipy_bfgs(name):
    """Both start from x = 0; the certified point is a strict local minimiser (FD Hessian positive definite)."""
    prob = make_instance(name, **SMALL, m=30, seed=0)
    res = minimize(lambda x: float(prob.f(x)), np.zeros(prob.p), jac=prob.grad_f, method="BFGS", options={"gtol": 1e-11})
    sol = prob.solution()
    assert sol.extra["psi_star_kind"] == "estimate"
    assert sol.psi_star == pytest.approx(float(res.fun), abs=1e-8)
    np.testing.assert_allclose(sol.x_star, res.x, atol=1e-4)
    E = np.eye(prob.p) * 1e-5
    H = (prob.grad_f(sol.x_star + E) - prob.grad_f(sol.x_star - E)) / 2e-5
    assert np.linalg.eigvalsh(0.5 * (H + H.T))[0] > 0


def test_fairness_stationary_point_against_scipy_bfgs():
    prob = make_instance("fairness", **SMALL, m=30, lam=2.0, seed=0)
    res = minimize(lambda x: float(prob.F(x)), np.zeros(prob.p), jac=prob.grad_F, method="BFGS", options={"gtol": 1e-11})
    sol = prob.solution()
    assert sol.psi_star == pytest.approx(float(prob.F(sol.x_star)), rel=1e-14)
    assert sol.psi_star == pytest.approx(float(res.fun), abs=1e-8)
    np.testing.assert_allclose(sol.x_star, res.x, atol=1e-4)
    assert sol.psi_star >= prob.constants["F_star_lower"].value


@pytest.mark.parametrize(("name", "params"), [("breast_cancer", {"n": 5}), ("digits", {"n": 4, "task": 3})])
def test_real_data_against_sklearn(name, params):
    prob = make_instance(name, **params)
    A, y = pooled(prob)
    sk = LogisticRegression(C=1.0 / (prob.l2 * A.shape[0]), fit_intercept=False, tol=1e-12, max_iter=100_000).fit(A, y)
    w = sk.coef_.ravel()
    sol = prob.solution()
    assert sol.psi_star <= float(prob.psi(w)) + 1e-12
    assert sol.psi_star == pytest.approx(float(prob.psi(w)), abs=1e-8)
    assert sol.residual < 1e-10


# ---------------------------------------------------------------- "with any regulariser"


def ls(phi):
    return make_instance("least_squares", **SMALL, m=12, seed=5, phi=phi)


def test_ridge_against_closed_form():
    prob = ls({"name": "squared_l2", "weight": 0.3})
    H, h = prob.hessians.mean(axis=0), prob.linear.mean(axis=0)
    x = np.linalg.solve(H + 0.3 * np.eye(prob.p), h)
    np.testing.assert_allclose(prob.solution().x_star, x, rtol=1e-9, atol=1e-12)
    assert prob.solution().residual < 1e-10


def test_elastic_net_against_sklearn():
    from sklearn.linear_model import ElasticNet

    l1, l2 = 0.05, 0.2
    prob = ls({"name": "elastic_net", "l1": l1, "l2": l2})
    A, b = pooled(prob)
    sk = ElasticNet(alpha=l1 + l2, l1_ratio=l1 / (l1 + l2), fit_intercept=False, tol=1e-14, max_iter=1_000_000).fit(A, b)
    sol = prob.solution()
    assert sol.residual < 1e-10
    assert sol.psi_star <= float(prob.psi(sk.coef_)) + 1e-12
    assert sol.psi_star == pytest.approx(float(prob.psi(sk.coef_)), abs=1e-9)


@pytest.mark.parametrize("name", ["least_squares", "logistic"])
def test_box_against_scipy_bounds(name):
    params = {**SMALL, "m": 12 if name == "least_squares" else 30, "seed": 5}
    prob = make_instance(name, **params, phi={"name": "box", "lower": -0.3, "upper": 0.2})
    res = minimize(
        lambda x: (float(prob.f(x)), prob.grad_f(x)),
        np.zeros(prob.p),
        jac=True,
        method="L-BFGS-B",
        bounds=[(-0.3, 0.2)] * prob.p,
        options={"ftol": 0.0, "gtol": 1e-13, "maxiter": 50_000},
    )
    sol = prob.solution()
    assert sol.residual < 1e-10
    assert np.all(sol.x_star >= -0.3) and np.all(sol.x_star <= 0.2)
    assert sol.psi_star == pytest.approx(float(res.fun), abs=1e-10)
    assert np.sum((np.abs(sol.x_star + 0.3) < 1e-12) | (np.abs(sol.x_star - 0.2) < 1e-12)) >= 1  # a bound is active


def test_l2_ball_against_scipy_slsqp():
    prob = ls({"name": "l2_ball", "radius": 0.5})
    cons = {"type": "ineq", "fun": lambda x: 0.25 - x @ x, "jac": lambda x: -2 * x}
    res = minimize(
        lambda x: float(prob.f(x)),
        np.zeros(prob.p),
        jac=prob.grad_f,
        method="SLSQP",
        constraints=[cons],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    sol = prob.solution()
    assert sol.residual < 1e-10
    assert np.linalg.norm(sol.x_star) == pytest.approx(0.5, rel=1e-9)  # active
    assert sol.psi_star == pytest.approx(float(res.fun), abs=1e-9)


def test_group_lasso_kkt():
    """Independent optimality check: grad_g f + w x_g/||x_g|| = 0 on non-zero groups, ||grad_g f|| <= w on zero ones."""
    w = 0.08
    prob = make_instance("least_squares", n=4, p=6, m=12, seed=5, phi={"name": "group_lasso", "weight": w, "groups": 2})
    sol = prob.solution()
    assert sol.residual < 1e-10
    g = prob.grad_f(sol.x_star)
    zero = 0
    for k in range(3):
        xg, gg = sol.x_star[2 * k : 2 * k + 2], g[2 * k : 2 * k + 2]
        if np.linalg.norm(xg) > 0:
            np.testing.assert_allclose(gg + w * xg / np.linalg.norm(xg), 0.0, atol=1e-9)
        else:
            zero += 1
            assert np.linalg.norm(gg) <= w + 1e-12
    assert 0 < zero < 3 or sol.psi_star == pytest.approx(float(prob.psi(np.zeros(6))))
