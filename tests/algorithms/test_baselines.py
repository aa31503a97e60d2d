"""Specification tests of the baselines (docs/baselines.md): fixed points, biases, reductions, validation.

x* comes from ``LeastSquares.solution()`` (certified centralised solver) or, for smooth quadratics, from a
linear solve here; neither shares code with the algorithms.
"""

from __future__ import annotations

import numpy as np
import pytest
from fedbounds.algorithms.instances.least_squares import heterogeneous_least_squares
from fedbounds.algorithms.regularizers import L1, MCP, Zero
from fedbounds.algorithms.run import run


@pytest.fixture(scope="module")
def lasso():
    """The heterogeneous Lasso instance of test_fednmap."""
    return heterogeneous_least_squares(n=6, p=10, m=40, heterogeneity=2.0, phi=L1(0.1), seed=0)


@pytest.fixture(scope="module")
def smooth():
    """Heterogeneous least squares with phi = 0 and its minimiser by a linear solve."""
    problem = heterogeneous_least_squares(n=5, p=8, m=80, heterogeneity=1.0, phi=Zero(), seed=1)
    assert problem.constants["zeta2"].value > 0.01
    x_star = np.linalg.solve(problem.hessians.mean(axis=0), problem.linear.mean(axis=0))
    return problem, x_star


def step(problem):
    return 1.0 / problem.constants["L"].value


@pytest.mark.slow  # 3.3 s in the fresh-clone run of 2026-12-04 (--durations, load 1.0-1.7)
def test_fedavg_server_prox_is_biased_where_fednmap_is_exact(lasso):
    g = step(lasso)
    common = {"eta_a": 0.1 * g, "eta_s": 2.0, "Q": 5}
    fedavg = run("fedavg_prox", lasso, common, rounds=800)
    fednmap = run("fednmap", lasso, {**common, "gamma": g}, rounds=800)
    d_avg, d_mid = fedavg.metrics["dist_sq"][-1, 0], fedavg.metrics["dist_sq"][400, 0]
    assert d_avg > 1e-5  # measurably away from x* ...
    assert abs(d_avg - d_mid) < 1e-3 * d_avg  # ... and settled: a biased fixed point
    assert fednmap.metrics["dist_sq"][-1, 0] < 1e-18  # the bias FedNMap removes (and still converging)
    # control: with one local step there is no drift and FedAvg with server prox is the prox-gradient method
    q1 = run("fedavg_prox", lasso, {**common, "Q": 1, "eta_s": 10.0}, rounds=800)
    assert q1.metrics["dist_sq"][-1, 0] < 1e-18


def test_scaffold_exact_on_smooth_heterogeneous(smooth):
    problem, x_star = smooth
    g = step(problem)
    tr = run("scaffold_prox", problem, {"eta_a": 0.1 * g, "eta_s": 2.0, "Q": 5}, rounds=400)
    assert tr.metrics["dist_sq"][-1, 0] < 1e-20
    np.testing.assert_allclose(tr.final.x[0], x_star, atol=1e-10)
    # control variates converge to the client gradients at x*, and c to their mean (= grad f(x*) = 0)
    G = problem.grad(np.broadcast_to(x_star, (problem.n, problem.p)))
    np.testing.assert_allclose(tr.final.ci[0], G, atol=1e-9)
    np.testing.assert_allclose(tr.final.c[0], G.mean(axis=0), atol=1e-9)
    assert np.all(tr.metrics["uplink"][1:] == 2)
    # FedAvg on the same problem and steps is biased: SCAFFOLD's exactness is the control variates' doing
    fedavg = run("fedavg_prox", problem, {"eta_a": 0.1 * g, "eta_s": 2.0, "Q": 5}, rounds=400)
    assert fedavg.metrics["dist_sq"][-1, 0] > 1e-6


def test_centralised_methods_converge_with_exact_gradients(lasso):
    g = step(lasso)
    x_star = lasso.solution().x_star
    prox = run("prox_sgd", lasso, {"eta": g}, rounds=800)
    nsgd = run("norm_sgd", lasso, {"eta": g, "gamma": g}, rounds=800)
    np.testing.assert_allclose(prox.final.x[0], x_star, atol=1e-10)
    np.testing.assert_allclose(nsgd.final.x[0], x_star, atol=1e-10)
    assert nsgd.metrics["normal_map_sq"][-1, 0] < 1e-20
    assert np.all(prox.metrics["uplink"][1:] == 1) and np.all(prox.metrics["eta"][1:] == g)


def test_fedmid_curse_of_primal_averaging(lasso, smooth):
    """FedMiD averages prox outputs: on phi = 0 with Q = 1 it is gradient descent (exact), but on the heterogeneous
    Lasso even Q = 1 is biased, mean_i prox(x - eta_a grad f_i(x)) != prox(x - eta_a grad f(x)), and the average
    of the clients' sparse points is not sparse where x* is."""
    problem, x_star = smooth
    gd = run("fedmid", problem, {"eta_a": step(problem), "Q": 1}, rounds=400, metrics=("dist_sq",))
    assert gd.metrics["dist_sq"][-1, 0] < 1e-20
    tr = run("fedmid", lasso, {"eta_a": step(lasso), "Q": 1}, rounds=400, metrics=("dist_sq",))
    x_T, x_star = tr.final.x[0], lasso.solution().x_star
    assert tr.metrics["dist_sq"][-1, 0] > 1e-5
    assert abs(tr.metrics["dist_sq"][-1, 0] - tr.metrics["dist_sq"][200, 0]) < 1e-3 * tr.metrics["dist_sq"][-1, 0]
    assert np.count_nonzero(x_T[x_star == 0]) > 0


def test_fedda_is_gradient_descent_on_smooth_problems(smooth):
    """phi = 0: every prox is the identity, so FedDA with Q = 1, eta_s = 1 is x <- x - eta_a grad f(x)."""
    problem, _ = smooth
    g = step(problem)
    tr = run("fedda", problem, {"eta_a": g, "Q": 1}, rounds=3)
    H, h = problem.hessians.mean(axis=0), problem.linear.mean(axis=0)
    x = np.zeros(problem.p)
    for _ in range(3):
        x = x - g * (H @ x - h)
    np.testing.assert_allclose(tr.final.x[0], x, rtol=1e-13)
    np.testing.assert_allclose(tr.final.z[0], x, rtol=1e-13)


def test_fedda_prox_weight_grows_with_rounds(lasso):
    """FedDA's output is prox_{eta_s eta_a (t+1) Q phi}(z_{t+1}) (dual averaging), checked after two rounds."""
    P = {"eta_a": 0.05, "eta_s": 1.5, "Q": 2}
    tr = run("fedda", lasso, P, rounds=2)
    z, x = tr.final.z[0], tr.final.x[0]
    w = P["eta_s"] * P["eta_a"] * 2 * P["Q"] * 0.1
    np.testing.assert_allclose(x, np.sign(z) * np.maximum(np.abs(z) - w, 0.0), atol=1e-15)


def test_fedprox_with_one_local_step_is_fedavg(lasso):
    """w^1 = x - eta_a (g(x) + mu (x - x)) = x - eta_a g(x): FedProx and FedAvg agree for Q = 1, any mu."""
    P = {"eta_a": 0.1 * step(lasso), "eta_s": 3.0, "Q": 1}
    a = run("fedprox_prox", lasso, {**P, "mu": 5.0}, rounds=20)
    b = run("fedavg_prox", lasso, P, rounds=20)
    np.testing.assert_allclose(a.final.x, b.final.x, rtol=1e-13, atol=1e-15)
    # with more local steps the proximal term matters
    c = run("fedprox_prox", lasso, {**P, "Q": 4, "mu": 5.0}, rounds=20)
    d = run("fedavg_prox", lasso, {**P, "Q": 4}, rounds=20)
    assert not np.allclose(c.final.x, d.final.x, rtol=1e-6)


def test_uplink_counts(lasso):
    P = {"eta_a": 0.01, "Q": 2}
    counts = {
        name: run(name, lasso, params, rounds=2).metrics["uplink"][:, 0].tolist()
        for name, params in {
            "fedmid": P,
            "fedda": P,
            "fedavg_prox": P,
            "fedprox_prox": {**P, "mu": 1.0},
            "scaffold_prox": P,
            "fednmap": {**P, "gamma": 0.1},
        }.items()
    }
    assert counts == {
        "fedmid": [0, 1, 1],
        "fedda": [0, 1, 1],
        "fedavg_prox": [0, 1, 1],
        "fedprox_prox": [0, 1, 1],
        "scaffold_prox": [0, 2, 2],
        "fednmap": [0, 1, 1],
    }


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("fedavg_prox", {"eta_a": 0.5, "eta_s": 2.0, "Q": 3}, r"eta_s \* eta_a \* Q \(server prox parameter\) must lie in"),
        ("scaffold_prox", {"eta_a": 0.5, "eta_s": 2.0, "Q": 3}, r"eta_s \* eta_a \* Q"),
        ("fedprox_prox", {"eta_a": 0.01, "Q": 3}, "missing required parameter"),
        ("fedprox_prox", {"eta_a": 0.01, "Q": 3, "mu": -1.0}, "mu must be finite and > 0"),
        ("fedmid", {"eta_a": 3.0, "Q": 1}, r"eta_a must lie in \(0, 1/rho\)"),
        ("fedda", {"eta_a": 0.01, "Q": 1}, r"fedda needs a convex phi \(rho = 0\)"),
        ("prox_sgd", {"eta": 3.0}, r"eta must lie in \(0, 1/rho\)"),
        ("norm_sgd", {"eta": 0.1, "gamma": 3.0}, r"gamma must lie in \(0, 1/rho\)"),
        ("norm_sgd", {"eta": 0.1, "gamma": 0.1, "x0": np.zeros(3)}, "unknown parameter"),
        ("fedavg_prox", {"eta_a": 0.01, "Q": 0}, "Q must be an integer >= 1"),
    ],
)
def test_parameters_validated_up_front(name, params, match):
    problem = heterogeneous_least_squares(n=2, p=3, m=5, phi=MCP(lam=0.1, theta=2.5), seed=0)  # rho = 0.4
    with pytest.raises(ValueError, match=match):
        run(name, problem, params, rounds=1)
