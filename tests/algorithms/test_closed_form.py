"""Closed-form moments (fedbounds.algorithms.closed_form) against the round-by-round exact mode and Monte Carlo."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from fedbounds.algorithms.closed_form import NoLimit, closed_form, reachable_basis
from fedbounds.algorithms.exact import affine_round, run_exact
from fedbounds.algorithms.instances.quadratic import ConcaveQuadratic, weakly_convex_quadratic
from fedbounds.algorithms.oracles import GaussianOracle
from fedbounds.algorithms.run import run
from fedbounds.checks.fednmap.speedup import rounds_to_target

SIGMA2 = 1.0
Z0 = np.array([3.0, 2.0])


@pytest.fixture(scope="module")
def quad():
    return weakly_convex_quadratic(n=4, p=2, heterogeneity=2.0)


def _params(alg: str) -> dict:
    if alg.startswith("fednmap"):
        return {"gamma": 0.18, "eta_a": 0.05, "eta_s": 1.0, "Q": 3, "z0": Z0, "correction": alg == "fednmap"}
    return {"eta_a": 0.05, "eta_s": 1.0, "Q": 3, "x0": Z0}


ALGS = ("fednmap", "fednmap_nocorr", "fedavg_prox", "scaffold_prox")


@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("method", ["eigen", "doubling"])
def test_closed_form_matches_the_round_loop(quad, alg, method):
    """Every metric at rounds 0..300 agrees with run_exact's loop to 1e-10 relative, with either evaluator (an
    off-by-one in the geometric sums, a transposed covariance or a wrong readout would miss by far more)."""
    engine = "fednmap" if alg.startswith("fednmap") else alg
    P = _params(alg)
    if engine != "fednmap":
        P.pop("correction", None)
    ex = run_exact(engine, quad, P, rounds=300, oracle=GaussianOracle(SIGMA2))
    cf = closed_form(affine_round(engine, quad, P, oracle=GaussianOracle(SIGMA2)), method=method)
    for metric in cf.metrics:
        loop = getattr(ex, f"E_{metric}")
        for t in (0, 1, 2, 7, 50, 300):
            assert abs(cf.expectation(metric, t) - loop[t]) <= 1e-10 * abs(loop[t]), (metric, t)


def test_limit_is_the_lyapunov_solution_and_the_long_run(quad):
    """The floor (t = inf) matches the loop after 3000 rounds (the transient is < 1e-120 by then) and the mean and
    covariance solve m = M m + b, C = M C M^T + Sigma on the reachable subspace."""
    P = _params("fednmap")
    cf = closed_form(affine_round("fednmap", quad, P, oracle=GaussianOracle(SIGMA2)))
    ex = run_exact("fednmap", quad, P, rounds=3000, oracle=GaussianOracle(SIGMA2))
    assert abs(cf.expectation("psi_gap", np.inf) - ex.E_psi_gap[-1]) <= 1e-10 * ex.E_psi_gap[-1]
    m, C = cf._limit_reduced()
    np.testing.assert_allclose(cf.M @ m + cf.b, m, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cf.M @ C @ cf.M.T + cf.Sigma, C, rtol=1e-10, atol=1e-16)


def test_the_conserved_mean_correction_is_not_reachable():
    """FedNMap conserves mean_i c_i (eigenvalue 1 of the full map) and carries x = prox(z) beside z: the reachable
    subspace has dimension n (of n + 2 at p = 1), and there the spectral radius is < 1, so the limit exists."""
    prob = weakly_convex_quadratic(n=6, p=1, heterogeneity=1.0)
    rnd = affine_round("fednmap", prob, {"gamma": 0.18, "eta_a": 1e-3, "eta_s": 1.0, "Q": 4, "z0": np.array([3.0])},
                       oracle=GaussianOracle(SIGMA2))
    assert np.max(np.abs(np.linalg.eigvals(rnd.M))) == pytest.approx(1.0, abs=1e-12)
    cf = closed_form(rnd)
    assert cf.r == 6 and rnd.M.shape == (8, 8)
    assert cf.spectral_radius < 1.0
    cf.expectation("psi_gap", np.inf)


def _toy(M: np.ndarray, b: np.ndarray, Sigma: np.ndarray) -> SimpleNamespace:
    d = M.shape[0]
    eye = np.eye(d)
    return SimpleNamespace(algorithm="toy", params={}, M=M, b=b, Sigma=Sigma, s0=np.ones(d), x_star=np.zeros(d), psi_star=0.0,
                           readouts={"x": (np.zeros(d), eye)}, psi_quadratic=(0.0, np.zeros(d), eye))


def test_a_jordan_block_uses_doubling_and_matches_a_direct_loop():
    """M = [[0.9, 1], [0, 0.9]] is not diagonalisable: auto picks doubling, which matches the recursion exactly."""
    M = np.array([[0.9, 1.0], [0.0, 0.9]])
    b, Sigma = np.array([0.1, 0.2]), np.array([[0.5, 0.1], [0.1, 0.3]])
    cf = closed_form(_toy(M, b, Sigma))
    assert cf.method == "doubling"
    m, C = np.ones(2), np.zeros((2, 2))
    for t in range(1, 200):
        m, C = M @ m + b, M @ C @ M.T + Sigma
        if t in (1, 3, 64, 199):
            mt, Ct = cf.moments(t)
            np.testing.assert_allclose(mt, m, rtol=1e-12)
            np.testing.assert_allclose(Ct, C, rtol=1e-11)
    np.testing.assert_allclose(cf.moments(np.inf)[1], C, rtol=1e-8)


def test_no_limit_is_said_when_the_spectral_radius_is_one():
    cf = closed_form(_toy(np.diag([1.0, 0.5]), np.array([0.1, 0.0]), np.eye(2)))
    with pytest.raises(NoLimit, match=r"spectral radius (1|0\.99999)"):
        cf.limit()
    assert cf.expectation("psi_gap", 10) > 0  # finite rounds still work


def test_reachable_basis_keeps_only_reachable_directions():
    M = np.diag([0.5, 0.2, 1.0])
    U = reachable_basis(M, np.array([[1.0], [1.0], [0.0]]))
    assert U.shape == (3, 2) and np.allclose(U[2], 0.0)


def test_rounds_to_target_matches_the_loop(quad):
    """Bisection on t gives the loop's first round after which the mean stays below the target."""
    P = _params("fednmap")
    cf = closed_form(affine_round("fednmap", quad, P, oracle=GaussianOracle(SIGMA2)))
    target = 3.0 * cf.expectation("psi_gap", np.inf)
    ex = run_exact("fednmap", quad, P, rounds=2000, oracle=GaussianOracle(SIGMA2))
    assert cf.rounds_to_target("psi_gap", target) == rounds_to_target(ex.E_psi_gap, target)
    assert cf.rounds_to_target("psi_gap", 0.5 * cf.expectation("psi_gap", np.inf)) is None  # below the floor


def test_monte_carlo_contains_the_closed_form(quad):
    """4000 seeded replicas at rounds 5 and 40: the closed form lies within the 99.9% interval of the MC mean."""
    P = _params("fednmap")
    cf = closed_form(affine_round("fednmap", quad, P, oracle=GaussianOracle(SIGMA2)))
    traj = run("fednmap", quad, P, rounds=40, replicas=4000, seed=11, oracle=GaussianOracle(SIGMA2), metrics=("psi_gap",))
    g = traj.metrics["psi_gap"]
    for t in (5, 40):
        mean, se = g[t].mean(), g[t].std(ddof=1) / np.sqrt(g.shape[1])
        assert abs(mean - cf.expectation("psi_gap", t)) <= 3.3 * se, (t, mean, se)


def test_time_varying_rounds_are_refused():
    from fedbounds.algorithms.instances.least_squares import heterogeneous_least_squares
    from fedbounds.algorithms.regularizers import SquaredL2

    ridge = heterogeneous_least_squares(n=3, p=2, m=5, phi=SquaredL2(0.2), seed=1)
    with pytest.raises(ValueError, match="time-invariant"):
        affine_round("fedda", ridge, {"eta_a": 0.05, "Q": 2, "x0": Z0}, oracle=GaussianOracle(SIGMA2))


def test_instance_constants_and_linear_prox():
    """L = 1 (exact for n >= 2), mu = 1 - kappa - rho, x* certified; f is the same at every n; the prox is linear."""
    a, b = weakly_convex_quadratic(n=2, p=2), weakly_convex_quadratic(n=7, p=2)
    c = a.constants
    assert c["L"].value == 1.0 and c["L"].kind == "exact"
    assert c["mu"].value == pytest.approx(0.65) and c["rho"].value == 0.1
    x = np.array([[0.3, -2.0], [1.5, 0.7]])
    np.testing.assert_allclose(a.grad_f(x), b.grad_f(x), rtol=1e-12)
    assert a.solution().residual < 1e-12
    np.testing.assert_allclose(a.solution().x_star, [1.0, -1.0], rtol=1e-12)
    phi = ConcaveQuadratic(0.1)
    np.testing.assert_allclose(phi.prox(np.array([2.0]), 0.5), [2.0 / 0.95])
    with pytest.raises(ValueError, match="hessian_het"):
        weakly_convex_quadratic(hessian_het=0.6)


def test_the_corrected_floor_does_not_depend_on_heterogeneity():
    """With its correction FedNMap's stationary mean is x* and zeta enters only the offset b, so the floor at zeta = 1e6
    equals the floor at zeta = 0 (to 1e-3: the solve for the mean loses cond(I - M) |b| eps). Probing with unit
    directions next to an offset of size 1e6 loses the
    conserved mean correction to cancellation and gives a floor of 1e12 instead (affine_round re-probes at scale |b|)."""
    params = {"gamma": 0.18, "eta_a": 1e-5, "eta_s": 0.7, "Q": 2, "z0": np.array([3.0])}
    floors = [closed_form(affine_round("fednmap", weakly_convex_quadratic(n=8, p=1, heterogeneity=z), params,
                                       oracle=GaussianOracle(SIGMA2))).expectation("psi_gap", np.inf) for z in (0.0, 1e6)]
    assert floors[1] == pytest.approx(floors[0], rel=1e-3)  # the mean at zeta = 1e6 is solved to ~1e-4 (cond(I - M) |b| eps)
