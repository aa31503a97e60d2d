"""Property tests for the regularisers of ``algorithms/regularizers.py`` (issue 2, "Regularisers").

Every regulariser is checked against computations that do not reuse its prox formula:
- the prox minimises phi(u) + ||u - z||^2 / (2 gamma) (compared with random and nearby candidates u);
- separable ones: coordinatewise, it agrees with a bounded scalar minimisation (scipy ``minimize_scalar``);
- non-separable ones (group lasso, l2 ball): the optimality condition (z - p)/gamma in d phi(p) holds;
- the prox is 1/(1 - gamma rho)-Lipschitz; batched and single calls agree;
- rho is right for MCP and SCAD: phi + rho/2 t^2 is convex, phi + 0.9 rho/2 t^2 is not;
- MCP and SCAD values agree with the integral of their defining derivatives (Zhang 2010; Fan & Li 2001).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fedbounds.algorithms.base import Regularizer
from fedbounds.algorithms.regularizers import (
    L1,
    MCP,
    REGULARIZERS,
    SCAD,
    BoxIndicator,
    ElasticNet,
    GroupLasso,
    L2BallIndicator,
    SquaredL2,
    Zero,
    make_regularizer,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.optimize import minimize_scalar

KINDS = sorted(REGULARIZERS)
SEPARABLE = ["zero", "l1", "squared_l2", "elastic_net", "box", "mcp", "scad"]
weights = st.floats(0.0, 3.0)


def draw_regularizer(data: st.DataObject, kind: str) -> tuple[Regularizer, int]:
    """A regulariser of the given kind with drawn parameters, and a dimension p that fits it."""
    p = data.draw(st.integers(1, 6), label="p")
    if kind == "zero":
        return Zero(), p
    if kind == "l1":
        return L1(data.draw(weights, label="weight")), p
    if kind == "squared_l2":
        return SquaredL2(data.draw(weights, label="weight")), p
    if kind == "elastic_net":
        return ElasticNet(data.draw(weights, label="l1"), data.draw(weights, label="l2")), p
    if kind == "box":
        lower = np.array(data.draw(st.lists(st.floats(-3.0, 1.0), min_size=p, max_size=p), label="lower"))
        width = np.array(data.draw(st.lists(st.floats(0.0, 3.0), min_size=p, max_size=p), label="width"))
        if data.draw(st.booleans(), label="scalar bounds"):
            return BoxIndicator(float(lower[0]), float(lower[0] + width[0])), p
        upper = lower + width
        if data.draw(st.booleans(), label="one-sided"):
            lower[0] = -np.inf
        return BoxIndicator(tuple(lower), tuple(upper)), p
    if kind == "l2_ball":
        # radius 0 or >= 1e-6: below that, ||x||^2 is subnormal and np.linalg.norm loses the last digits
        return L2BallIndicator(data.draw(st.just(0.0) | st.floats(1e-6, 3.0), label="radius")), p
    if kind == "group_lasso":
        w = data.draw(weights, label="weight")
        if data.draw(st.booleans(), label="group size"):
            s = data.draw(st.integers(1, 3), label="size")
            return GroupLasso(w, s), s * data.draw(st.integers(1, 3), label="blocks")
        perm = data.draw(st.permutations(range(p)), label="perm")
        cuts = sorted(data.draw(st.sets(st.integers(1, max(p - 1, 1)), max_size=p - 1), label="cuts")) if p > 1 else []
        bounds = [0, *cuts, p]
        groups = tuple(tuple(perm[a:b]) for a, b in itertools.pairwise(bounds) if b > a)
        return GroupLasso(w, groups), p
    if kind == "mcp":
        return MCP(data.draw(st.floats(0.05, 2.0), label="lam"), data.draw(st.floats(0.3, 5.0), label="theta")), p
    if kind == "scad":
        return SCAD(data.draw(st.floats(0.05, 2.0), label="lam"), data.draw(st.floats(2.05, 6.0), label="a")), p
    raise AssertionError(kind)


def draw_gamma(data: st.DataObject, reg: Regularizer, hi: float = 0.999) -> float:
    """gamma in (0, 1/rho): a fraction of 1/rho when rho > 0, else in [0.01, 10]."""
    if reg.rho > 0:
        return data.draw(st.floats(0.01, hi), label="gamma * rho") / reg.rho
    return data.draw(st.floats(0.01, 10.0), label="gamma")


def draw_points(data: st.DataObject, shape: tuple[int, ...], label: str = "z") -> np.ndarray:
    """Points with entries in [-6, 6]: either drawn entrywise (edge values) or from a seeded Gaussian."""
    size = int(np.prod(shape))
    if data.draw(st.booleans(), label=f"{label} entrywise"):
        return np.array(data.draw(st.lists(st.floats(-6.0, 6.0), min_size=size, max_size=size), label=label)).reshape(shape)
    seed = data.draw(st.integers(0, 2**32 - 1), label=f"{label} seed")
    return np.clip(3.0 * np.random.default_rng(seed).standard_normal(shape), -6.0, 6.0)


def objective(reg: Regularizer, U: np.ndarray, z: np.ndarray, gamma: float) -> np.ndarray:
    return reg.value(U) + np.sum((U - z) ** 2, axis=-1) / (2.0 * gamma)


def feasible(reg: Regularizer, U: np.ndarray) -> np.ndarray:
    """Move candidates into the domain of an indicator (test-side; any feasible map will do)."""
    if isinstance(reg, BoxIndicator):
        return np.minimum(np.maximum(U, reg.lower), reg.upper)
    if isinstance(reg, L2BallIndicator):
        norm = np.linalg.norm(U, axis=-1, keepdims=True)
        return U * np.where(norm > reg.radius, reg.radius / np.maximum(norm, 1e-300), 1.0) * (1 - 1e-14)
    return U


def candidates(reg: Regularizer, P: np.ndarray, seed: int) -> np.ndarray:
    """Random points, small perturbations of P (where a wrong formula shows), coordinate moves, sparsified P,
    and for MCP/SCAD points on the breakpoints of phi."""
    rng = np.random.default_rng(seed)
    p = P.shape[-1]
    U = [3.0 * rng.standard_normal((100, p))]
    for eps in (1e-1, 1e-2, 1e-3, 1e-5):
        U.append(P + eps * rng.standard_normal((25, p)))
        U.append(P + eps * np.eye(p))
        U.append(P - eps * np.eye(p))
    U.append(P * (1 - np.eye(p)))
    if isinstance(reg, (MCP, SCAD)):
        knots = [reg.lam, reg.theta * reg.lam] if isinstance(reg, MCP) else [reg.lam, reg.a * reg.lam]
        for k in knots:
            for s in (-1.0, 1.0):
                V = np.repeat(P[None], p, axis=0)
                V[np.arange(p), np.arange(p)] = s * k
                U.append(V)
    return feasible(reg, np.concatenate(U))


# ---------------------------------------------------------------- the prox minimises the prox objective


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_prox_is_the_minimiser(kind: str, data: st.DataObject) -> None:
    reg, p = draw_regularizer(data, kind)
    gamma = draw_gamma(data, reg)
    z = draw_points(data, (p,))
    P = reg.prox(z, gamma)
    best = objective(reg, P, z, gamma)
    assert np.isfinite(best), "the prox must lie in the domain of phi"
    U = candidates(reg, P, data.draw(st.integers(0, 2**32 - 1), label="candidate seed"))
    obj = objective(reg, U, z, gamma)
    tol = 1e-12 * (1.0 + abs(best))
    worst = int(np.argmin(obj))
    assert obj[worst] >= best - tol, f"u = {U[worst]} beats prox = {P}: {obj[worst]} < {best}"


def coordinate_regularizer(reg: Regularizer, j: int) -> tuple[Regularizer, float, float]:
    """phi_j for a separable phi (phi(x) = sum_j phi_j(x_j)) and the interval on which it is finite."""
    if isinstance(reg, BoxIndicator):
        lo, hi = (float(b) if np.ndim(b) == 0 else float(b[j]) for b in (reg.lower, reg.upper))
        return BoxIndicator(lo, hi), lo, hi
    return reg, -np.inf, np.inf


@pytest.mark.parametrize("kind", SEPARABLE)
@given(data=st.data())
@settings(max_examples=15)
def test_prox_matches_scalar_minimisation(kind: str, data: st.DataObject) -> None:
    reg, p = draw_regularizer(data, kind)
    gamma = draw_gamma(data, reg, hi=0.95)
    z = draw_points(data, (p,))
    P = reg.prox(z, gamma)
    for j in range(p):
        phi_j, lo, hi = coordinate_regularizer(reg, j)

        def h(t: float, j: int = j, phi_j: Regularizer = phi_j) -> float:
            return float(phi_j.value(np.array([t]))) + (t - z[j]) ** 2 / (2.0 * gamma)

        # an interval that holds the minimiser: the domain of phi_j, else a margin around 0 and z_j
        a = lo if np.isfinite(lo) else min(hi, -abs(z[j])) - 1.0
        b = hi if np.isfinite(hi) else max(lo, abs(z[j])) + 1.0
        if b - a < 1e-12:
            t_star = a
        else:
            t_star = minimize_scalar(h, bounds=(a, b), method="bounded", options={"xatol": 1e-12, "maxiter": 10_000}).x
        assert h(P[j]) <= h(t_star) + 1e-12 * (1 + abs(h(t_star))), (j, P[j], t_star)
        assert abs(P[j] - t_star) <= 1e-5 * (1 + abs(z[j])), (j, P[j], t_star)


@given(data=st.data())
def test_group_lasso_optimality_condition(data: st.DataObject) -> None:
    """(z_g - p_g)/gamma = w p_g/||p_g|| if p_g != 0, and ||z_g|| <= gamma w if p_g = 0 (subdifferential of ||.||)."""
    reg, p = draw_regularizer(data, "group_lasso")
    gamma = draw_gamma(data, reg)
    z = draw_points(data, (p,))
    P = reg.prox(z, gamma)
    for g in reg.index_groups(p):
        pg, zg = P[g], z[g]
        if np.linalg.norm(pg) > 0:
            np.testing.assert_allclose((zg - pg) / gamma, reg.weight * pg / np.linalg.norm(pg), rtol=1e-9, atol=1e-9)
        else:
            assert np.linalg.norm(zg) <= gamma * reg.weight * (1 + 1e-12)


@given(data=st.data())
def test_l2_ball_optimality_condition(data: st.DataObject) -> None:
    """Projection onto a ball: ||p|| <= r, z - p = lam p with lam >= 0, and lam (||p|| - r) = 0."""
    reg, p = draw_regularizer(data, "l2_ball")
    z = draw_points(data, (p,))
    P = reg.prox(z, draw_gamma(data, reg))
    r, nz = reg.radius, np.linalg.norm(z)
    assert np.linalg.norm(P) <= r * (1 + 1e-12)
    if nz <= r:
        np.testing.assert_array_equal(P, z)
    else:
        assert np.linalg.norm(P) == pytest.approx(r, rel=1e-12, abs=1e-15)
        if r > 1e-12:
            lam = (nz - r) / r  # z = (1 + lam) p along the same ray
            np.testing.assert_allclose(z - P, lam * P, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- Lipschitz, batching


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_prox_is_lipschitz(kind: str, data: st.DataObject) -> None:
    """||prox(z1) - prox(z2)|| <= ||z1 - z2|| / (1 - gamma rho) (Rockafellar & Wets, Prop. 12.19)."""
    reg, p = draw_regularizer(data, kind)
    gamma = draw_gamma(data, reg)
    Z1 = draw_points(data, (64, p), "z1")
    scale = 10.0 ** data.draw(st.integers(-6, 0), label="log10 |z1 - z2|")
    Z2 = Z1 + scale * np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed")).standard_normal(Z1.shape)
    lip = 1.0 / (1.0 - gamma * reg.rho)
    lhs = np.linalg.norm(reg.prox(Z1, gamma) - reg.prox(Z2, gamma), axis=-1)
    rhs = lip * np.linalg.norm(Z1 - Z2, axis=-1)
    assert np.all(lhs <= rhs * (1 + 1e-9) + 1e-12), float(np.max(lhs / rhs))


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
@settings(max_examples=10)
def test_batched_matches_single(kind: str, data: st.DataObject) -> None:
    reg, p = draw_regularizer(data, kind)
    gamma = draw_gamma(data, reg)
    Z = feasible(reg, draw_points(data, (3, 4, p))) if data.draw(st.booleans(), label="feasible") else draw_points(data, (3, 4, p))
    P, V = reg.prox(Z, gamma), reg.value(Z)
    assert P.shape == (3, 4, p) and np.shape(V) == (3, 4)
    for i in range(3):
        for k in range(4):
            np.testing.assert_allclose(P[i, k], reg.prox(Z[i, k], gamma), rtol=1e-15, atol=0)
            np.testing.assert_allclose(V[i, k], reg.value(Z[i, k]), rtol=1e-15, atol=0)


# ---------------------------------------------------------------- rho is the weak-convexity modulus


def penalty_1d(reg: Regularizer, t: np.ndarray) -> np.ndarray:
    return reg.value(np.asarray(t, dtype=float)[..., None])


def concave_region(reg: MCP | SCAD) -> tuple[float, float]:
    """Where phi'' = -rho: (0, theta lam) for MCP, (lam, a lam) for SCAD."""
    return (0.0, reg.theta * reg.lam) if isinstance(reg, MCP) else (reg.lam, reg.a * reg.lam)


@pytest.mark.parametrize("kind", ["mcp", "scad"])
@given(data=st.data())
def test_rho_makes_phi_convex(kind: str, data: st.DataObject) -> None:
    """phi + rho/2 t^2 is convex: the three-point (chord) inequality on random triples t1 < t2 < t3."""
    reg, _ = draw_regularizer(data, kind)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    span = 1.5 * concave_region(reg)[1]
    T = np.sort(rng.uniform(-span, span, size=(500, 3)), axis=-1)
    T = T[(T[:, 2] - T[:, 0]) > 1e-6]
    t1, t2, t3 = T.T

    def g(t: np.ndarray) -> np.ndarray:
        return penalty_1d(reg, t) + 0.5 * reg.rho * t * t

    chord = ((t3 - t2) * g(t1) + (t2 - t1) * g(t3)) / (t3 - t1)
    assert np.all(g(t2) <= chord + 1e-10 * (1 + np.abs(chord)))


@pytest.mark.parametrize("kind", ["mcp", "scad"])
@given(data=st.data())
def test_smaller_rho_leaves_phi_nonconvex(kind: str, data: st.DataObject) -> None:
    """With 0.9 rho in place of rho, midpoint convexity fails inside the concave piece (rho is not too large)."""
    reg, _ = draw_regularizer(data, kind)
    lo, hi = concave_region(reg)
    u = sorted(data.draw(st.lists(st.floats(0.05, 0.95), min_size=2, max_size=2, unique=True), label="u"))
    if u[1] - u[0] < 0.1:
        u[1] = min(u[0] + 0.1, 0.99)
    t1, t3 = lo + u[0] * (hi - lo), lo + u[1] * (hi - lo)
    sign = data.draw(st.sampled_from([-1.0, 1.0]), label="side")
    t1, t3 = sign * t1, sign * t3
    rho_small = 0.9 * reg.rho

    def g(t: float) -> float:
        return float(penalty_1d(reg, t)) + 0.5 * rho_small * t * t

    gap = g(0.5 * (t1 + t3)) - 0.5 * (g(t1) + g(t3))
    expected = 0.5 * (reg.rho - rho_small) * (0.5 * (t3 - t1)) ** 2  # = -(phi'' + rho_small) h^2 / 2 on a quadratic piece
    assert gap > 0.5 * expected > 0


# ---------------------------------------------------------------- values from the defining derivatives


@pytest.mark.parametrize("kind", ["mcp", "scad"])
@given(data=st.data())
@settings(max_examples=10)
def test_value_matches_derivative_definition(kind: str, data: st.DataObject) -> None:
    """MCP: phi(t) = int_0^|t| (lam - s/theta)_+ ds (Zhang 2010, eq. 2.1). SCAD: phi(0) = 0 and
    phi'(s) = lam [1{s <= lam} + (a lam - s)_+ / ((a - 1) lam) 1{s > lam}] (Fan & Li 2001, eq. 2.7)."""
    reg, _ = draw_regularizer(data, kind)
    t = data.draw(st.floats(-8.0, 8.0), label="t")
    if isinstance(reg, MCP):

        def dphi(s: float) -> float:
            return max(reg.lam - s / reg.theta, 0.0)

        knots = [reg.theta * reg.lam]
    else:

        def dphi(s: float) -> float:
            return reg.lam if s <= reg.lam else max(reg.a * reg.lam - s, 0.0) / (reg.a - 1.0)

        knots = [reg.lam, reg.a * reg.lam]
    pts = [k for k in knots if k < abs(t)]
    expected = quad(dphi, 0.0, abs(t), points=pts or None, epsabs=1e-13, epsrel=1e-13)[0] if t != 0 else 0.0
    assert float(penalty_1d(reg, t)) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_closed_form_values() -> None:
    x = np.array([1.0, -2.0, 0.5])
    assert L1(2.0).value(x) == pytest.approx(7.0)
    assert SquaredL2(2.0).value(x) == pytest.approx(5.25)
    assert ElasticNet(1.0, 2.0).value(x) == pytest.approx(3.5 + 5.25)
    assert GroupLasso(1.0, ((0, 1), (2,))).value(x) == pytest.approx(np.sqrt(5.0) + 0.5)
    assert BoxIndicator(-2.0, 1.0).value(x) == 0.0 and BoxIndicator(-1.0, 1.0).value(x) == np.inf
    assert L2BallIndicator(3.0).value(x) == 0.0 and L2BallIndicator(2.0).value(x) == np.inf
    np.testing.assert_allclose(GroupLasso(2.0, 2).prox(np.array([3.0, 4.0, 0.1, 0.0]), 1.0), [1.8, 2.4, 0.0, 0.0])
    # SCAD at gamma = 1 is Fan & Li's (2.8): lam = 1, a = 3: z = 2.5 -> ((a-1) z - a lam)/(a - 2) = 2
    np.testing.assert_allclose(SCAD(1.0, 3.0).prox(np.array([0.5, 1.5, 2.5, -2.5, 4.0]), 1.0), [0.0, 0.5, 2.0, -2.0, 4.0])


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
@settings(max_examples=5)
def test_gamma_out_of_range_is_rejected(kind: str, data: st.DataObject) -> None:
    reg, p = draw_regularizer(data, kind)
    z = np.ones(p)
    bad = [0.0, -1.0, np.nan, np.inf]
    if reg.rho > 0:
        # 1/rho as the parameters write it (theta, a - 1): fl(1 / fl(1/theta)) may land just below theta
        at = reg.theta if isinstance(reg, MCP) else reg.a - 1.0
        bad += [at, at * (1 + 1e-12), 2.0 * at]
    for gamma in bad:
        with pytest.raises(ValueError, match="gamma"):
            reg.prox(z, gamma)


@pytest.mark.parametrize(
    ("build", "param"),
    [
        (lambda: L1(-1.0), "weight"),
        (lambda: L1(np.nan), "weight"),
        (lambda: SquaredL2(-0.1), "weight"),
        (lambda: ElasticNet(-1.0, 1.0), "l1"),
        (lambda: ElasticNet(1.0, -1.0), "l2"),
        (lambda: BoxIndicator(1.0, 0.0), "lower"),
        (lambda: BoxIndicator((0.0, 2.0), (1.0, 1.0)), "lower"),
        (lambda: BoxIndicator((0.0, 0.0), (1.0, 1.0, 1.0)), "lower"),
        (lambda: BoxIndicator(np.nan, 1.0), "lower"),
        (lambda: L2BallIndicator(-1.0), "radius"),
        (lambda: GroupLasso(-1.0, 2), "weight"),
        (lambda: GroupLasso(1.0, 0), "groups"),
        (lambda: GroupLasso(1.0, ((0, 1), (1, 2))), "groups"),
        (lambda: GroupLasso(1.0, ((0,), (2,))), "groups"),
        (lambda: GroupLasso(1.0, ((0,), ())), "groups"),
        (lambda: MCP(-1.0, 3.0), "lam"),
        (lambda: MCP(1.0, 0.0), "theta"),
        (lambda: MCP(1.0, -2.0), "theta"),
        (lambda: SCAD(-1.0, 3.7), "lam"),
        (lambda: SCAD(1.0, 2.0), "a"),
        (lambda: SCAD(1.0, 1.5), "a"),
    ],
)
def test_bad_parameters_are_rejected(build, param: str) -> None:
    with pytest.raises(ValueError, match=param):
        build()


@pytest.mark.parametrize("kind", KINDS)
def test_zero_dim_input_is_rejected(kind: str) -> None:
    reg = make_regularizer(kind)
    with pytest.raises(ValueError, match=r"^z "):
        reg.prox(np.float64(1.0), 0.5)
    with pytest.raises(ValueError, match=r"^x "):
        reg.value(1.0)


@pytest.mark.parametrize(
    ("reg", "p", "param"),
    [
        (BoxIndicator((0.0, 0.0, 0.0), 1.0), 4, "lower"),
        (BoxIndicator(0.0, (1.0, 1.0, 1.0)), 2, "upper"),
        (GroupLasso(1.0, 2), 3, "groups"),
        (GroupLasso(1.0, ((0, 1), (2,))), 4, "groups"),
    ],
)
def test_malformed_shape_is_rejected(reg: Regularizer, p: int, param: str) -> None:
    for call in (lambda: reg.prox(np.zeros((2, p)), 0.5), lambda: reg.value(np.zeros((2, p)))):
        with pytest.raises(ValueError, match=param):
            call()


def test_make_regularizer() -> None:
    assert make_regularizer("mcp", lam=0.5, theta=2.0) == MCP(0.5, 2.0)
    assert make_regularizer("group_lasso", weight=1.0, groups=[[1, 0], [2]]).groups == ((1, 0), (2,))
    assert make_regularizer("box", lower=[0, 1], upper=[2, 3]) == BoxIndicator((0.0, 1.0), (2.0, 3.0))
    for name, cls in REGULARIZERS.items():
        reg = make_regularizer(name)
        assert isinstance(reg, cls) and isinstance(reg, Regularizer) and reg.name == name
    with pytest.raises(ValueError, match="name"):
        make_regularizer("lasso")
    with pytest.raises(ValueError, match="weight"):
        make_regularizer("l1", weight=-1.0)
    with pytest.raises(ValueError, match="unknown parameter"):
        make_regularizer("l1", lam=1.0)
