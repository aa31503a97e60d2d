"""Specification tests of FedNMap (reconstruction §2.6): they fail if the algorithm is wrong.

The reference solutions are independent of FedNMap: x* comes from ``LeastSquares.solution()`` (centralised
accelerated proximal gradient with its natural-residual certificate) or, for smooth quadratics, from a linear
solve written here.
"""

from __future__ import annotations

import numpy as np
import pytest
from fedbounds.algorithms.fednmap import FedNMap
from fedbounds.algorithms.instances.least_squares import heterogeneous_least_squares
from fedbounds.algorithms.oracles import GaussianOracle
from fedbounds.algorithms.regularizers import L1, SquaredL2
from fedbounds.algorithms.rng import stream
from fedbounds.algorithms.run import run
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def lasso():
    """Heterogeneous Lasso: clients with shifted features and their own models (zeta^2 > 0)."""
    problem = heterogeneous_least_squares(n=6, p=10, m=40, heterogeneity=2.0, phi=L1(0.1), seed=0)
    assert problem.constants["zeta2"].value > 0.1  # genuinely heterogeneous at x*
    return problem


def exact_params(problem, **kw):
    gamma = 1.0 / problem.constants["L"].value
    return {"gamma": gamma, "eta_a": 0.1 * gamma, "eta_s": 2.0, "Q": 5, **kw}  # eta_hat = gamma


@pytest.mark.parametrize("variant", ["A", "B"])
def test_exact_gradients_reach_the_composite_stationary_point(lasso, variant):
    tr = run("fednmap", lasso, exact_params(lasso, variant=variant), rounds=800)
    tr.raise_if_diverged()
    sol = lasso.solution()
    assert sol.residual < 1e-12  # the certificate of the reference solution
    assert tr.metrics["normal_map_sq"][-1, 0] < 1e-20
    assert tr.metrics["natural_residual_sq"][-1, 0] < 1e-20
    x_T = tr.final.x[0]
    np.testing.assert_allclose(x_T, sol.x_star, atol=1e-10)
    # same support as the centralised solution (the l1 structure is recovered exactly, zeros are exact zeros)
    assert np.array_equal(x_T == 0, sol.x_star == 0)
    # at the fixed point the corrections are the gradient gaps: c_i = grad f(x*) - grad f_i(x*) (§2.5 [D])
    G = lasso.grad(np.broadcast_to(sol.x_star, (lasso.n, lasso.p)))
    np.testing.assert_allclose(tr.final.c[0], G.mean(axis=0) - G, atol=1e-9)


def test_corrections_sum_to_zero_every_round(lasso):
    sums = []
    P = exact_params(lasso, Q=4)
    run(
        "fednmap",
        lasso,
        P,
        rounds=40,
        replicas=3,
        oracle=GaussianOracle(1.0),
        callback=lambda t, s: sums.append(np.max(np.abs(s.c.sum(axis=1)))),
    )
    assert len(sums) == 40
    assert max(sums) < 1e-13
    # and they are not trivially zero
    alg = FedNMap()
    state = alg.init(lasso, alg.validate(lasso, P), GaussianOracle(1.0), 3, 0)
    state = alg.step(alg.step(state, 0), 1)
    assert np.max(np.abs(state.c)) > 1e-2


def test_without_correction_the_fixed_point_is_biased(lasso):
    """Negative control: drop c and the heterogeneous drift biases the limit (FedNMap's correction removes it)."""
    biased = run("fednmap", lasso, exact_params(lasso, correction=False), rounds=800)
    d_end, d_mid = biased.metrics["dist_sq"][-1, 0], biased.metrics["dist_sq"][400, 0]
    assert d_end > 1e-6  # measurably away from x*
    assert abs(d_end - d_mid) < 1e-3 * d_end  # and settled there: a biased fixed point, not slow convergence
    assert biased.metrics["normal_map_sq"][-1, 0] > 1e-6
    # with Q = 1 there is no drift, so the same run without correction is unbiased (the bias is the drift's)
    q1 = run("fednmap", lasso, exact_params(lasso, correction=False, Q=1, eta_s=10.0), rounds=800)
    assert q1.metrics["normal_map_sq"][-1, 0] < 1e-20


def test_n1_q1_is_normal_map_sgd_step_for_step():
    problem = heterogeneous_least_squares(n=1, p=8, m=20, heterogeneity=0.0, phi=L1(0.2), seed=2)
    gamma = 0.5 / problem.constants["L"].value
    eta_a, eta_s = 0.3 * gamma, 1.7
    oracle = GaussianOracle(0.5)
    z0 = np.linspace(-1.0, 1.0, problem.p)
    kw = dict(rounds=30, replicas=4, seed=3, oracle=oracle)
    fed = run("fednmap", problem, {"gamma": gamma, "eta_a": eta_a, "eta_s": eta_s, "Q": 1, "z0": z0}, **kw)
    nsgd = run("norm_sgd", problem, {"gamma": gamma, "eta": eta_s * eta_a, "z0": z0}, **kw)
    for name in ("psi", "normal_map_sq", "dist_sq"):
        np.testing.assert_allclose(fed.metrics[name], nsgd.metrics[name], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fed.final.z, nsgd.final.z, rtol=1e-12, atol=1e-14)
    # ... and not with a different alpha (the comparison has teeth)
    other = run("norm_sgd", problem, {"gamma": gamma, "eta": 1.01 * eta_s * eta_a, "z0": z0}, **kw)
    assert not np.allclose(fed.final.z, other.final.z, rtol=1e-6)


def test_one_round_by_hand():
    """One round with exact gradients against the §2.6 formulas evaluated by hand on a 2-client quadratic."""
    problem = heterogeneous_least_squares(n=2, p=3, m=4, heterogeneity=1.0, phi=SquaredL2(0.5), seed=7)
    gamma, eta_a, eta_s, Q = 0.2, 0.05, 3.0, 2
    z0 = np.array([1.0, -2.0, 0.5])
    tr = run("fednmap", problem, {"gamma": gamma, "eta_a": eta_a, "eta_s": eta_s, "Q": Q, "z0": z0}, rounds=1)
    H, h = problem.hessians, problem.linear
    s = 1.0 / (1.0 + gamma * 0.5)  # prox of (0.5/2)||x||^2 is a scaling
    x0 = s * z0
    v = (z0 - x0) / gamma
    z_loc = []
    for i in range(2):
        zi = z0.copy()
        for _ in range(Q):
            zi = zi - eta_a * (H[i] @ (s * zi) - h[i] + v)  # c_{i,0} = 0
        z_loc.append(zi)
    y = [(z0 - zi) / (eta_a * Q) for zi in z_loc]
    ybar = (y[0] + y[1]) / 2
    z1 = z0 - eta_s * eta_a * Q * ybar
    np.testing.assert_allclose(tr.final.z[0], z1, rtol=1e-14)
    np.testing.assert_allclose(tr.final.x[0], s * z1, rtol=1e-14)
    np.testing.assert_allclose(tr.final.c[0], [ybar - y[0], ybar - y[1]], rtol=1e-13, atol=1e-15)


@settings(max_examples=10)
@given(n=st.integers(1, 5), Q=st.integers(1, 4), seed=st.integers(0, 1000), variant=st.sampled_from(["A", "B"]))
def test_server_step_is_normal_map_step_on_averaged_local_gradients(n, Q, seed, variant):
    """§2.5 [D]: ybar_t = gbar_t + v_t, so z_{t+1} = z_t - eta_hat (gbar_t + (z_t - x_t)/gamma) every round."""
    problem = heterogeneous_least_squares(n=n, p=4, m=6, heterogeneity=1.0, phi=L1(0.05), seed=seed)
    gamma = 0.5 / problem.constants["L"].value
    P = {"gamma": gamma, "eta_a": 0.2 * gamma, "eta_s": 1.3, "Q": Q, "variant": variant}
    alg = FedNMap()
    oracle = GaussianOracle(0.3)
    state = alg.init(problem, alg.validate(problem, P), oracle, 2, seed)
    for t in range(3):
        nxt = alg.step(state, t)
        # recover gbar from the local trajectories: replay the draws with the reference recursion
        v = (state.z - state.x) / gamma
        Z = np.repeat(state.z[:, None, :], n, axis=1)
        gsum = np.zeros_like(Z)
        for l in range(Q):
            X = problem.phi.prox(Z, gamma) if variant == "A" else Z - gamma * v[:, None, :]
            g = oracle.sample(problem, X, stream(seed, t, l))
            gsum += g
            Z = Z - P["eta_a"] * (g + v[:, None, :] + state.c)
        gbar = gsum.mean(axis=1) / Q
        eta_hat = P["eta_s"] * P["eta_a"] * Q
        np.testing.assert_allclose(nxt.z, state.z - eta_hat * (gbar + v), rtol=1e-11, atol=1e-13)
        assert np.max(np.abs(nxt.c.sum(axis=1))) < 1e-12
        state = nxt
