"""Exact mode (fedbounds.algorithms.exact): closed-form moments against Monte Carlo and against hand-derived recursions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fedbounds.algorithms.exact import run_exact
from fedbounds.algorithms.fednmap import FedNMap
from fedbounds.algorithms.instances.least_squares import heterogeneous_least_squares
from fedbounds.algorithms.oracles import GaussianOracle
from fedbounds.algorithms.regularizers import L1, SquaredL2, Zero
from fedbounds.algorithms.run import run

SIGMA2 = 2.0


@pytest.fixture(scope="module")
def ridge():
    """Linear-Gaussian instance: heterogeneous least squares with phi = SquaredL2."""
    return heterogeneous_least_squares(n=3, p=4, m=10, heterogeneity=1.0, phi=SquaredL2(0.2), seed=6)


@pytest.fixture(scope="module")
def smooth():
    return heterogeneous_least_squares(n=3, p=4, m=10, heterogeneity=1.0, phi=Zero(), seed=8)


def params_for(name, problem):
    g = 1.0 / problem.constants["L"].value
    base = {"eta_a": 0.3 * g, "eta_s": 1.0, "Q": 3, "x0": np.ones(problem.p)}
    return {
        "fednmap": {"gamma": g, "eta_a": 0.3 * g, "eta_s": 1.0, "Q": 3, "z0": np.ones(problem.p)},
        "norm_sgd": {"eta": 0.5 * g, "gamma": g, "z0": np.ones(problem.p)},
        "prox_sgd": {"eta": 0.5 * g, "x0": np.ones(problem.p)},
        "fedavg_prox": base,
        "scaffold_prox": base,
        "fedprox_prox": {**base, "mu": 1.0},
        "fedmid": base,
        "fedda": base,
    }[name]


def test_norm_sgd_moments_match_a_hand_derived_recursion(smooth):
    """phi = 0, so x = z and z+ = (I - eta (1/gamma - 1/gamma) ...) reduces to z+ = z - eta (H z - h + xi_bar),
    xi_bar ~ N(0, sigma2 / (p n) I): m+ = (I - eta H) m + eta h, C+ = (I - eta H) C (I - eta H)^T + eta^2 sigma2/(p n) I."""
    P = params_for("norm_sgd", smooth)
    ex = run_exact("norm_sgd", smooth, P, rounds=15, oracle=GaussianOracle(SIGMA2))
    H, h = smooth.hessians.mean(axis=0), smooth.linear.mean(axis=0)
    n, p, eta = smooth.n, smooth.p, P["eta"]
    A = np.eye(p) - eta * H
    m, C = np.ones(p), np.zeros((p, p))
    x_star = np.linalg.solve(H, h)
    for t in range(16):
        np.testing.assert_allclose(ex.x_mean[t], m, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(ex.x_cov[t], C, rtol=1e-11, atol=1e-15)
        gap = 0.5 * (m - x_star) @ H @ (m - x_star) + 0.5 * np.trace(H @ C)  # f quadratic: f - f* = (x-x*)^T H (x-x*)/2
        np.testing.assert_allclose(ex.E_psi_gap[t], gap, rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(ex.E_dist_sq[t], np.sum((m - x_star) ** 2) + np.trace(C), rtol=1e-10)
        G = H  # F_nor(z) = H z - h for phi = 0
        np.testing.assert_allclose(ex.E_normal_map_sq[t], np.sum((H @ m - h) ** 2) + np.trace(G @ C @ G.T), rtol=1e-9, atol=1e-13)
        m, C = A @ m + eta * h, A @ C @ A.T + eta**2 * SIGMA2 / (p * n) * np.eye(p)


@pytest.mark.parametrize("name", ["fednmap", "norm_sgd", "fedavg_prox", "scaffold_prox", "fedda"])
def test_exact_moments_agree_with_monte_carlo(ridge, name):
    rounds, R = 12, 3000
    P = params_for(name, ridge)
    oracle = GaussianOracle(SIGMA2)
    ex = run_exact(name, ridge, P, rounds=rounds, oracle=oracle)
    mc = run(name, ridge, P, rounds=rounds, replicas=R, seed=17, oracle=oracle)
    metrics = {"psi_gap": ex.E_psi_gap, "dist_sq": ex.E_dist_sq}
    if ex.E_normal_map_sq is not None:
        metrics["normal_map_sq"] = ex.E_normal_map_sq
    for key, exact in metrics.items():
        values = mc.metrics[key]
        se = values.std(axis=1, ddof=1) / np.sqrt(R)
        z = np.abs(values.mean(axis=1) - exact) / np.maximum(se, 1e-300)
        assert np.all(z[1:] < 4.5), (key, z)  # 4.5 standard errors, over 12 rounds x 3 metrics
        assert np.isclose(values[0].mean(), exact[0], rtol=1e-12)  # deterministic start
    # the mean of the final point, coordinatewise, and the covariance's trace
    x = mc.final.x
    se = x.std(axis=0, ddof=1) / np.sqrt(R)
    assert np.all(np.abs(x.mean(axis=0) - ex.x_mean[-1]) < 4.5 * se)
    tr_mc = np.trace(np.cov(x.T))
    assert abs(tr_mc - np.trace(ex.x_cov[-1])) < 0.1 * np.trace(ex.x_cov[-1])
    assert np.trace(ex.x_cov[-1]) > 1e-4  # the noise matters: the check is not of a deterministic run


@pytest.mark.parametrize("name", ["fednmap", "norm_sgd", "prox_sgd", "fedavg_prox", "scaffold_prox", "fedprox_prox", "fedmid", "fedda"])
def test_without_noise_exact_mode_is_the_deterministic_run(ridge, name):
    P = params_for(name, ridge)
    ex = run_exact(name, ridge, P, rounds=8)
    tr = run(name, ridge, P, rounds=8)
    np.testing.assert_allclose(ex.E_psi_gap, tr.metrics["psi_gap"][:, 0], rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(ex.x_mean[-1], tr.final.x[0], rtol=1e-11, atol=1e-13)
    assert np.max(np.abs(ex.cov)) == 0.0
    assert ex.E_natural_residual_sq is None or np.allclose(ex.E_natural_residual_sq, tr.metrics["natural_residual_sq"][:, 0], rtol=1e-8)


def test_probing_once_equals_probing_every_round(ridge):
    """The time-invariance shortcut (one probe) gives the same moments as re-probing every round."""

    class EveryRound(FedNMap):
        time_invariant = False

    P = params_for("fednmap", ridge)
    once = run_exact("fednmap", ridge, P, rounds=6, oracle=GaussianOracle(SIGMA2))
    every = run_exact(EveryRound(), ridge, P, rounds=6, oracle=GaussianOracle(SIGMA2))
    np.testing.assert_allclose(once.mean, every.mean, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(once.cov, every.cov, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(once.E_normal_map_sq, every.E_normal_map_sq, rtol=1e-12)


def test_layout_and_shapes(ridge):
    ex = run_exact("fednmap", ridge, params_for("fednmap", ridge), rounds=3, oracle=GaussianOracle(SIGMA2))
    n, p = ridge.n, ridge.p
    assert ex.layout == {"z": (0, p, (p,)), "x": (p, 2 * p, (p,)), "c": (2 * p, 2 * p + n * p, (n, p))}
    d = 2 * p + n * p
    assert ex.mean.shape == (4, d) and ex.cov.shape == (d, d)
    assert ex.x_mean.shape == (4, p) and ex.x_cov.shape == (4, p, p)
    assert ex.E_psi_gap.shape == ex.E_normal_map_sq.shape == (4,)
    # the corrections sum to zero in mean and in every direction of the covariance
    c = slice(2 * p, d)
    S = np.kron(np.ones(n), np.eye(p))  # sum over clients
    assert np.allclose(S @ ex.mean[-1, c], 0, atol=1e-13)
    assert np.allclose(S @ ex.cov[c, c] @ S.T, 0, atol=1e-13)
    assert np.all(np.linalg.eigvalsh(ex.cov) > -1e-12)


def test_exact_mode_refuses_nonlinear_or_non_gaussian(ridge):
    lasso = heterogeneous_least_squares(n=2, p=3, m=6, phi=L1(0.1), seed=0)
    with pytest.raises(ValueError, match="phi = Zero or SquaredL2"):
        run_exact("fednmap", lasso, {"gamma": 0.1, "eta_a": 0.01, "Q": 2}, rounds=2, oracle=GaussianOracle(1.0))

    class OtherOracle:
        sigma2 = 1.0

        def sample(self, problem, X, rng):
            return problem.grad(X) + rng.standard_t(3, size=np.shape(X))

    with pytest.raises(ValueError, match="GaussianOracle"):
        run_exact("fednmap", ridge, params_for("fednmap", ridge), rounds=2, oracle=OtherOracle())


def test_affinity_self_check_catches_a_nonlinear_prox(ridge):
    """A phi that claims to be squared-l2 but has a nonlinear prox: the per-round probe check must object."""

    @dataclass(frozen=True)
    class FakeL2:
        name: str = "squared_l2"
        rho: float = 0.0

        def value(self, x):
            return 0.1 * np.abs(x).sum(axis=-1)

        def prox(self, z, gamma):
            return np.sign(z) * np.maximum(np.abs(z) - 0.1 * gamma, 0.0)

    fake = type(ridge)(ridge.A, ridge.b, FakeL2())
    with pytest.raises(ValueError, match="not affine"):
        run_exact("fednmap", fake, {"gamma": 0.1, "eta_a": 0.01, "Q": 2, "z0": np.ones(fake.p)}, rounds=2)
