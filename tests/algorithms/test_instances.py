"""Instances know their constants (issue 2, "Instances"; design.md principle 5), checked independently.

For every registered instance (small sizes):
- gradients against central finite differences of the values, Hessians against finite differences of the
  (so verified) gradients;
- L against the eigenvalues of those finite-difference Hessians at sampled points: never above the stated
  bound, and equal to it (to FD accuracy) where the constant is marked exact;
- rho_f: the smallest sampled Hessian eigenvalue is >= -rho_f; mu: the smallest eigenvalue is >= mu;
- the certificate: the natural residual recomputed at x* (< 1e-10), zeta2 recomputed from per-sample gradients;
- batched shapes and the per-sample (minibatch) interface;
- the registry and the parameter validation.
The independent-solver comparisons for psi* are in ``test_instances_solutions.py``; the fairness and the
real-data instances have their own files.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from fedbounds.algorithms.base import Constant, Problem, Solution, natural_residual
from fedbounds.algorithms.instances import INSTANCES, make_instance
from fedbounds.algorithms.regularizers import L1, MCP, Zero

SMALL = {"n": 4, "p": 5}
CASES: dict[str, tuple[str, dict]] = {
    "least_squares": ("least_squares", {**SMALL, "m": 12}),
    "lasso": ("lasso", {**SMALL, "m": 12, "weight": 0.05}),
    "least_squares_mcp": ("least_squares_mcp", {**SMALL, "m": 12, "lam": 0.1}),
    "least_squares_scad": ("least_squares_scad", {**SMALL, "m": 12, "lam": 0.1}),
    "logistic": ("logistic", {**SMALL, "m": 30}),
    "logistic_l1": ("logistic", {**SMALL, "m": 30, "l2": 0.0, "phi": {"name": "l1", "weight": 0.01}}),
    "nonconvex_logistic": ("nonconvex_logistic", {**SMALL, "m": 30}),
    "sigmoid_least_squares": ("sigmoid_least_squares", {**SMALL, "m": 30, "l2": 0.01}),
    "fairness": ("fairness", {**SMALL, "m": 30, "gb_radius": 5.0}),
    "breast_cancer": ("breast_cancer", {"n": 4}),
    "digits": ("digits", {"n": 3}),
}


@cache
def instance(case: str):
    name, params = CASES[case]
    return make_instance(name, **params)


def sample_points(prob, k: int, seed: int = 0) -> np.ndarray:
    """k points (k, p): 0, x*, Gaussian points at scales 0.3 to 10, and points with coordinates +-1."""
    rng = np.random.default_rng(seed)
    p = prob.p
    scales = np.geomspace(0.3, 10.0, k - 4)
    pts = [np.zeros(p), prob.solution().x_star]
    pts += [s * rng.standard_normal(p) / np.sqrt(p) * 3 for s in scales]
    pts += [rng.choice([-1.0, 1.0], size=p), rng.choice([-1.0, 1.0], size=p) * rng.uniform(0.8, 1.2, p)]
    return np.array(pts)


# ---- finite differences (batched over the p coordinate directions) ----
H_GRAD, H_HESS = 1e-5, 1e-5


def fd_client_grads(prob, X: np.ndarray) -> np.ndarray:
    """Central differences of client_values at X (n, p): (n, p)."""
    E = np.eye(prob.p)[:, None, :] * H_GRAD  # (p, 1, p)
    vp, vm = prob.client_values(X + E), prob.client_values(X - E)  # (p, n)
    return ((vp - vm) / (2 * H_GRAD)).T


def fd_grad(fun, x: np.ndarray, h: float = H_GRAD) -> np.ndarray:
    """Central differences of a batched scalar function at x (p,)."""
    E = np.eye(x.size) * h
    return (fun(x + E) - fun(x - E)) / (2 * h)


def fd_jac(fun, x: np.ndarray, h: float = H_HESS) -> np.ndarray:
    """Central differences of a batched vector function (..., p) -> (..., p) at x (p,): (p, p), symmetrised."""
    E = np.eye(x.size) * h
    J = ((fun(x + E) - fun(x - E)) / (2 * h)).T
    return 0.5 * (J + J.T)


def fd_client_hessians(prob, X: np.ndarray) -> np.ndarray:
    """Central differences of the client gradients at X (n, p): (n, p, p)."""
    E = np.eye(prob.p)[:, None, :] * H_HESS
    gp, gm = prob.grad(X + E), prob.grad(X - E)  # (p, n, p): [k, i, :]
    H = np.transpose((gp - gm) / (2 * H_HESS), (1, 2, 0))  # [i, :, k]
    return 0.5 * (H + np.swapaxes(H, -1, -2))


def client_stack(prob, x: np.ndarray) -> np.ndarray:
    return np.broadcast_to(x, (prob.n, prob.p)).copy()


# ---------------------------------------------------------------- protocol and shapes


@pytest.mark.parametrize("case", list(CASES))
def test_implements_problem_protocol(case):
    prob = instance(case)
    assert isinstance(prob, Problem)
    c = prob.constants
    for key in ("L", "rho", "rho_f", "zeta2"):
        assert isinstance(c[key], Constant), key
        assert c[key].kind in ("exact", "upper_bound", "lower_bound", "estimate")
        assert c[key].note
        assert np.isfinite(c[key].value)
    assert isinstance(prob.solution(), Solution)
    assert isinstance(prob.num_samples, int) and prob.num_samples >= 1


@pytest.mark.parametrize("case", list(CASES))
def test_batched_shapes_agree_with_single_calls(case):
    prob = instance(case)
    rng = np.random.default_rng(1)
    n, p = prob.n, prob.p
    X = rng.standard_normal((3, 2, n, p))
    assert prob.client_values(X).shape == (3, 2, n)
    assert prob.grad(X).shape == (3, 2, n, p)
    x = rng.standard_normal((3, 2, p))
    assert prob.f(x).shape == (3, 2)
    assert prob.grad_f(x).shape == (3, 2, p)
    assert prob.psi(x).shape == (3, 2)
    for a, b in [(1, 0), (2, 1)]:
        np.testing.assert_allclose(prob.grad(X)[a, b], prob.grad(X[a, b]), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(prob.client_values(X)[a, b], prob.client_values(X[a, b]), rtol=1e-12)
        np.testing.assert_allclose(prob.f(x)[a, b], prob.f(x[a, b]), rtol=1e-12)
        np.testing.assert_allclose(prob.grad_f(x)[a, b], prob.grad_f(x[a, b]), rtol=1e-12, atol=1e-14)
        # f and grad f are the client means
        Xa = client_stack(prob, x[a, b])
        np.testing.assert_allclose(prob.f(x[a, b]), prob.client_values(Xa).mean(), rtol=1e-12)
        np.testing.assert_allclose(prob.grad_f(x[a, b]), prob.grad(Xa).mean(axis=0), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("case", list(CASES))
def test_per_sample_interface(case):
    prob = instance(case)
    rng = np.random.default_rng(2)
    n, p, N = prob.n, prob.p, prob.num_samples
    X = rng.standard_normal((2, n, p))
    G = prob.per_sample_grads(X)
    assert G.shape == (2, n, N, p)
    np.testing.assert_allclose(G.mean(axis=-2), prob.grad(X), rtol=1e-10, atol=1e-13)
    idx = rng.integers(0, N, size=(2, n, 7))
    g = prob.sample_grad(X, idx)
    assert g.shape == (2, n, p)
    expect = np.take_along_axis(G, idx[..., None], axis=-2).mean(axis=-2)
    np.testing.assert_allclose(g, expect, rtol=1e-10, atol=1e-13)
    full = np.broadcast_to(np.arange(N), (2, n, N))
    np.testing.assert_allclose(prob.sample_grad(X, full), prob.grad(X), rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------- derivatives


@pytest.mark.parametrize("case", list(CASES))
def test_gradients_match_finite_differences(case):
    prob = instance(case)
    rng = np.random.default_rng(3)
    for scale in (0.5, 2.0):
        X = scale * rng.standard_normal((prob.n, prob.p))
        g, fd = prob.grad(X), fd_client_grads(prob, X)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8 * max(1.0, np.abs(fd).max()))
        x = X[0]
        np.testing.assert_allclose(prob.grad_f(x), fd_grad(prob.f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", [c for c in CASES if hasattr(instance(c), "hess")])
def test_hessians_match_finite_differences(case):
    prob = instance(case)
    X = np.random.default_rng(4).standard_normal((prob.n, prob.p))
    np.testing.assert_allclose(prob.hess(X), fd_client_hessians(prob, X), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(prob.hess_f(X[1]), fd_jac(prob.grad_f, X[1]), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- L, rho_f, mu


@cache
def sampled_spectra(case: str, k: int = 12) -> tuple[float, float, float]:
    """(max_i,x |lambda|(hess f_i), min_i,x lambda(hess f_i), min_x lambda(hess f)) over FD Hessians at sampled x."""
    prob = instance(case)
    big, small, small_f = 0.0, np.inf, np.inf
    for x in sample_points(prob, k):
        ev = np.linalg.eigvalsh(fd_client_hessians(prob, client_stack(prob, x)))
        big = max(big, float(np.abs(ev).max()))
        small = min(small, float(ev.min()))
        small_f = min(small_f, float(np.linalg.eigvalsh(fd_jac(prob.grad_f, x))[0]))
    return big, small, small_f


@pytest.mark.parametrize("case", list(CASES))
def test_L_bounds_sampled_hessians_and_is_attained_when_exact(case):
    prob = instance(case)
    L = prob.constants["L"]
    big, _, _ = sampled_spectra(case)
    assert big <= L.value * (1 + 1e-6) + 1e-8, (big, L)
    if L.kind == "exact":  # exact: the sampled points include the maximiser x = 0 (logistic) / any point (quadratic)
        assert big == pytest.approx(L.value, rel=1e-6, abs=1e-8)
    else:
        assert L.kind == "upper_bound"


@pytest.mark.parametrize("case", list(CASES))
def test_rho_f_bounds_negative_curvature(case):
    prob = instance(case)
    rho_f = prob.constants["rho_f"]
    _, small, _ = sampled_spectra(case)
    assert small >= -rho_f.value - 1e-7, (small, rho_f)
    if rho_f.value == 0.0:
        assert rho_f.kind == "exact"


def test_nonconvex_logistic_penalty_curvature_reaches_minus_alpha_over_2():
    """The penalty's curvature bound -alpha_pen/2 is attained at |w_k| = 1 (notes 3.1): the FD Hessian of
    f - f_logistic (same data, alpha_pen = 0) at x = (1, ..., 1) is -alpha_pen/2 I."""
    from fedbounds.algorithms.instances import Logistic

    prob = make_instance("nonconvex_logistic", n=3, p=4, m=20, alpha_pen=0.5)
    plain = Logistic(prob.A, prob.y)
    H = fd_jac(lambda z: prob.grad_f(z) - plain.grad_f(z), np.ones(4))
    np.testing.assert_allclose(H, -0.25 * np.eye(4), atol=1e-7)
    assert prob.constants["rho_f"].value == pytest.approx(0.25)


@pytest.mark.parametrize("case", [c for c in CASES if "mu" in instance(c).constants])
def test_mu_below_sampled_hessians_of_f(case):
    prob = instance(case)
    mu = prob.constants["mu"]
    _, _, small_f = sampled_spectra(case)
    assert small_f >= mu.value * (1 - 1e-6) - 1e-8, (small_f, mu)
    if mu.kind == "exact":  # quadratic: lambda_min of the (constant) Hessian
        assert small_f == pytest.approx(mu.value, rel=1e-6, abs=1e-8)


def test_least_squares_mu_and_L_from_pooled_data():
    """Independent route: the Hessian of f is (1/(nm)) A^T A on the pooled data; each f_i's is A_i^T A_i/m."""
    prob = make_instance("least_squares", n=5, p=6, m=9, heterogeneity=2.0, seed=3)
    A = prob.A.reshape(-1, prob.p)
    sv = np.linalg.svd(A, compute_uv=False)
    assert prob.constants["mu"].value == pytest.approx(sv[-1] ** 2 / A.shape[0], rel=1e-10)
    L_i = [np.linalg.svd(prob.A[i], compute_uv=False)[0] ** 2 / prob.m for i in range(prob.n)]
    assert prob.constants["L"].value == pytest.approx(max(L_i), rel=1e-10)


# ---------------------------------------------------------------- certificate and zeta2


@pytest.mark.parametrize("case", list(CASES))
def test_certificate_residual(case):
    prob = instance(case)
    sol = prob.solution()
    if case == "fairness":  # a stationary point of F = f + lam r
        res = sol.gamma * np.linalg.norm(prob.grad_F(sol.x_star))
    else:
        res = np.linalg.norm(natural_residual(prob, sol.x_star, sol.gamma))
    assert res < 1e-10
    assert sol.residual == pytest.approx(res, abs=1e-14)
    assert sol.gamma > 0 and sol.gamma * prob.phi.rho < 1
    assert sol.extra["psi_star_kind"] in ("exact", "estimate")


@pytest.mark.parametrize("case", list(CASES))
def test_zeta2_from_per_sample_gradients(case):
    prob = instance(case)
    x = prob.solution().x_star
    g_i = prob.per_sample_grads(client_stack(prob, x)).mean(axis=-2)  # (n, p), per-sample route
    zeta2 = np.mean([np.sum((g_i[i] - g_i.mean(axis=0)) ** 2) for i in range(prob.n)])
    assert prob.constants["zeta2"].value == pytest.approx(zeta2, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(
    ("name", "knob", "low", "high", "params"),
    [
        ("least_squares", "heterogeneity", 0.2, 1.0, {**SMALL, "m": 12}),
        ("lasso", "heterogeneity", 0.2, 1.0, {**SMALL, "m": 12}),
        ("logistic", "alpha_het", 0.0, 1.0, {**SMALL, "m": 30, "beta_het": 0.0, "l2": 0.0}),
        ("nonconvex_logistic", "alpha_het", 0.0, 1.0, {**SMALL, "m": 30, "beta_het": 0.0}),
    ],
)
def test_larger_heterogeneity_gives_larger_zeta2(name, knob, low, high, params):
    for seed in (0, 1):
        z_low = make_instance(name, **params, seed=seed, **{knob: low}).constants["zeta2"].value
        z_high = make_instance(name, **params, seed=seed, **{knob: high}).constants["zeta2"].value
        assert z_high > z_low, (seed, z_low, z_high)


def test_logistic_joint_knob_gives_larger_zeta2():
    """synthetic(0, 0) (i.i.d.) against synthetic(1, 1), default sizes and l2, same seeds."""
    for seed in (0, 1, 2):
        z0 = make_instance("logistic", alpha_het=0.0, beta_het=0.0, seed=seed).constants["zeta2"].value
        z1 = make_instance("logistic", alpha_het=1.0, beta_het=1.0, seed=seed).constants["zeta2"].value
        assert z1 > z0


# ---------------------------------------------------------------- registry and validation


def test_registry_names():
    assert {"least_squares", "lasso", "logistic", "nonconvex_logistic", "fairness", "breast_cancer", "digits"} <= set(INSTANCES)
    assert {"least_squares_mcp", "least_squares_scad"} <= set(INSTANCES)


def test_make_instance_builds_phi_from_specs():
    prob = make_instance("least_squares", **SMALL, m=12, phi={"name": "mcp", "lam": 0.1, "theta": 40.0})
    assert isinstance(prob.phi, MCP) and prob.phi.theta == 40.0
    assert isinstance(make_instance("least_squares", **SMALL, m=12, phi="l1").phi, L1)
    assert isinstance(make_instance("least_squares", **SMALL, m=12, phi=Zero()).phi, Zero)


def test_seeded_and_reproducible():
    a = make_instance("fairness", **SMALL, m=20, seed=5)
    b = make_instance("fairness", **SMALL, m=20, seed=5)
    c = make_instance("fairness", **SMALL, m=20, seed=6)
    np.testing.assert_array_equal(a.A, b.A)
    np.testing.assert_array_equal(a.s, b.s)
    assert not np.array_equal(a.A, c.A)


@pytest.mark.parametrize(
    ("name", "params", "needle"),
    [
        ("nope", {}, "name must be one of"),
        ("least_squares", {"bogus": 1}, "bogus"),
        ("least_squares", {"n": 0}, "n must be"),
        ("least_squares", {"p": 0}, "p must be"),
        ("least_squares", {"m": 0}, "m must be"),
        ("least_squares", {"heterogeneity": -1.0}, "heterogeneity"),
        ("lasso", {"weight": -0.1}, "weight"),
        ("least_squares_mcp", {"theta": -1.0}, "theta"),
        ("logistic", {"alpha_het": -1.0}, "alpha_het"),
        ("logistic", {"beta_het": -0.5}, "beta_het"),
        ("logistic", {"l2": -1.0}, "l2"),
        ("nonconvex_logistic", {"alpha_pen": 0.0}, "alpha_pen"),
        ("sigmoid_least_squares", {"n": 1.5}, "n must be"),
        ("fairness", {"lam": -1.0}, "lam"),
        ("fairness", {"B2": 0.0}, "B2"),
        ("fairness", {"delta": -1.0}, "delta"),
        ("fairness", {"p": 3, "shifted_features": 4}, "shifted_features"),
        ("fairness", {"n": 0}, "n must be"),
        ("nonconvex_logistic", {"beta_het": -1.0}, "beta_het"),
        ("breast_cancer", {"concentration": 0.0}, "concentration"),
        ("breast_cancer", {"n": 10_000}, "n must lie"),
        ("digits", {"task": 10}, "task"),
        ("digits", {"l1": -1.0}, "l1"),
        ("least_squares", {"phi": {"weight": 1.0}}, "phi"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(name, params, needle):
    with pytest.raises(ValueError, match=needle):
        make_instance(name, **params)
