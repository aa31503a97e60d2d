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
    """FedNMap conserves mean_i c_i (eigenvalue 1 of the full map), which s0, b and the noise never excite: the
    decaying subspace drops it (dimension n + 1 of n + 2 at p = 1), and there the spectral radius is < 1, so the limit
    exists."""
    prob = weakly_convex_quadratic(n=6, p=1, heterogeneity=1.0)
    rnd = affine_round("fednmap", prob, {"gamma": 0.18, "eta_a": 1e-3, "eta_s": 1.0, "Q": 4, "z0": np.array([3.0])},
                       oracle=GaussianOracle(SIGMA2))
    assert np.max(np.abs(np.linalg.eigvals(rnd.M))) == pytest.approx(1.0, abs=1e-12)
    cf = closed_form(rnd)
    assert cf.r == 7 and rnd.M.shape == (8, 8)
    assert cf.leak < 1e-9
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


# ---- Theorem 5's steps at p >= 2: eigenvalue 1 (the conserved mean correction) next to 1 - 4e-7 -----------------


def _inside(n: int, p: int, heterogeneity: float, Q: int):
    """FedNMap at Theorem 5's printed steps (target 0.01, sigma^2 = 1) on the weakly convex quadratic; z0 = [3, 1, 0, ...]."""
    from fedbounds.checks.fednmap.inside import inside_steps

    prob = weakly_convex_quadratic(n=n, p=p, heterogeneity=heterogeneity)
    c = prob.constants
    st = inside_steps(L=c["L"].value, rho=c["rho"].value, mu=c["mu"].value, sigma2=SIGMA2, n=n, Q=Q, eps=0.01)
    z0 = np.zeros(p)
    z0[:2] = [3.0, 1.0]
    P = {"gamma": st["gamma"], "eta_a": st["eta_a"], "eta_s": st["eta_s"], "Q": Q, "z0": z0}
    return prob, P


def _full_space(rnd, t: int) -> tuple[np.ndarray, np.ndarray]:
    """(E s_t, Cov s_t) by binary powering of the whole state's map (no basis, no reduction): the round loop's sum
    sum_{k<t} M^k (b, Sigma) regrouped, an independent check of the reduction at t = 1e6 in 20 squarings."""
    P, s, C = rnd.M.copy(), rnd.b.copy(), rnd.Sigma.copy()
    A, m, Ct = np.eye(len(s)), np.zeros(len(s)), np.zeros_like(C)
    j = 0
    while t >> j:
        if (t >> j) & 1:
            A, m, Ct = P @ A, P @ m + s, P @ Ct @ P.T + C
        s, C, P = s + P @ s, C + P @ C @ P.T, P @ P
        j += 1
    return A @ rnd.s0 + m, Ct


def _gap(rnd, m: np.ndarray, C: np.ndarray) -> tuple[float, float]:
    """(E[psi - psi*], its variance part tr(A Cov x) / 2) from full-state moments, centred at x* (as the readouts say)."""
    c, a, A = rnd.psi_quadratic
    x0, Px = rnd.readouts["x"]
    xs = rnd.x_star
    e, Cx = x0 + Px @ m - xs, Px @ C @ Px.T
    var = 0.5 * float(np.sum(A * Cx))
    return float(c + a @ xs + 0.5 * xs @ A @ xs - rnd.psi_star + (a + A @ xs) @ e + 0.5 * e @ A @ e) + var, var


def _lyapunov_floor(rnd) -> float:
    """The floor's variance part by a second route: the conserved mean correction projected out by its definition
    (mean_i c_i = 0, not by a spectral computation), then scipy's discrete Lyapunov solve, ``direct`` method."""
    import scipy.linalg as sla

    a, b, (n, p) = rnd.layout["c"]
    ell = np.zeros((p, rnd.M.shape[0]))
    for k in range(p):
        ell[k, a + k : b : p] = 1.0 / n
    U = sla.null_space(ell)
    C = sla.solve_discrete_lyapunov(U.T @ rnd.M @ U, U.T @ rnd.Sigma @ U, method="direct")
    _, _, A = rnd.psi_quadratic
    Px = rnd.readouts["x"][1] @ U
    return 0.5 * float(np.sum(A * (Px @ C @ Px.T)))


def test_the_reproduction_at_p2_gives_the_true_floor():
    """weakly_convex_quadratic(n=4, p=2, heterogeneity=2) at Theorem 5's steps, Q = 3, z0 = [3, 1]: the floor is the
    variance part alone (the fixed point is x*) = 1.346e-8 (a 50-digit doubling of this probe's M gives 1.34598e-8;
    the probe's own rounding moves it by ~7e-4 between heterogeneities 0, 1, 2, whose M is the same in exact
    arithmetic). The Krylov basis gave 4.70e-8."""
    prob, P = _inside(4, 2, 2.0, 3)
    rnd = affine_round("fednmap", prob, P, oracle=GaussianOracle(SIGMA2))
    cf = closed_form(rnd)
    floor = cf.expectation("psi_gap", np.inf)
    assert floor == pytest.approx(1.346e-8, rel=1e-3)
    assert floor == pytest.approx(_lyapunov_floor(rnd), rel=1e-3)
    m, _ = cf.limit()
    np.testing.assert_allclose(rnd.readouts["x"][0] + rnd.readouts["x"][1] @ m, rnd.x_star, atol=1e-7)


@pytest.mark.parametrize(("n", "p", "heterogeneity", "Q"), [(4, 2, 2.0, 3), (4, 2, 1.0, 3), (2, 2, 1.0, 2), (2, 4, 2.0, 2),
                                                           (2, 8, 1.0, 2)])
def test_p_at_least_2_matches_the_whole_state_at_1e6_rounds_and_the_limit(n, p, heterogeneity, Q):
    """At p = 2, 4, 8 and heterogeneity 1 and 2 the closed form has a limit (heterogeneity 1 raised NoLimit before),
    agrees with the un-reduced map's moments at t = 1e6 (mid-transient: 1 - radius ~ 4e-7), and its floor with the
    projected Lyapunov solve. (The un-reduced powers cannot give the floor: at t ~ 1e9 the float M's unit modes,
    excited by rounding, have moved it by 20%.)"""
    prob, P = _inside(n, p, heterogeneity, Q)
    rnd = affine_round("fednmap", prob, P, oracle=GaussianOracle(SIGMA2))
    cf = closed_form(rnd)
    assert 0.999 < cf.spectral_radius < 1.0
    floor = cf.expectation("psi_gap", np.inf)
    lyap = _lyapunov_floor(rnd)
    assert floor == pytest.approx(lyap, rel=1e-3)
    t = 10**6
    full, _ = _gap(rnd, *_full_space(rnd, t))
    assert cf.expectation("psi_gap", t) == pytest.approx(full, rel=1e-6)


@pytest.mark.slow
def test_the_reproduction_agrees_with_run_exact_at_1e6_rounds():
    """The project's own round loop (run_exact, 1e6 rounds: 157 s CPU, 1.1 GB) agrees with the closed form at t = 1e3,
    1e5, 1e6 to 1e-6 (before: 1.1647541 against 1.1647792 at t = 1e6, 2e-5 apart)."""
    prob, P = _inside(4, 2, 2.0, 3)
    cf = closed_form(affine_round("fednmap", prob, P, oracle=GaussianOracle(SIGMA2)))
    ex = run_exact("fednmap", prob, P, rounds=10**6, oracle=GaussianOracle(SIGMA2))
    for t in (1000, 10**5, 10**6):
        assert cf.expectation("psi_gap", t) == pytest.approx(ex.E_psi_gap[t], rel=1e-6), t


def test_an_excited_conserved_mode_has_no_limit():
    """c0 with a nonzero mean excites the conserved mean correction (it shifts the fixed point forever): NoLimit,
    truthfully; with the fixed point's corrections (mean zero) the limit exists."""
    prob = weakly_convex_quadratic(n=3, p=1, heterogeneity=1.0)
    P = {"gamma": 0.18, "eta_a": 1e-3, "eta_s": 1.0, "Q": 2, "z0": np.array([3.0])}
    bad = closed_form(affine_round("fednmap", prob, {**P, "c0": np.ones((3, 1))}, oracle=GaussianOracle(SIGMA2)))
    assert bad.leak > 1e-3
    with pytest.raises(NoLimit):
        bad.limit()
    good = closed_form(affine_round("fednmap", prob, {**P, "c0": np.array([[1.0], [-2.0], [1.0]])}, oracle=GaussianOracle(SIGMA2)))
    assert good.leak < 1e-9 and np.isfinite(good.expectation("psi_gap", np.inf))
