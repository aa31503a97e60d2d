"""Tests for the stochastic oracles of ``algorithms/oracles.py`` (issue 2, "Stochastic oracles").

Means and variances are estimated from K = 20 000 draws and compared with the truth by a z-test at
|estimate - truth| <= 5 standard errors (two-sided level about 6e-7 per comparison; the seeds are fixed, so
the tests are deterministic). The exact minibatch variance is also checked by enumerating every batch.

The test-only problem below has per-sample gradients, so these tests do not depend on the instances stream.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fedbounds.algorithms.oracles import ORACLES, ExactOracle, GaussianOracle, MinibatchOracle, SampledProblem, SignOracle, make_oracle
from fedbounds.algorithms.regularizers import Zero

K = 20_000  # Monte Carlo draws
Z = 5.0  # standard errors allowed


class PerSampleLeastSquares:
    """f_i(x) = (1/N_i) sum_{j < N_i} (a_ij^T x - b_ij)^2 / 2; per-sample gradients a_ij (a_ij^T x - b_ij).

    With unequal counts, rows j >= N_i are padding filled with huge values, so a leak shows at once."""

    def __init__(self, n: int = 3, p: int = 4, N: int | list[int] = 7, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        counts = np.broadcast_to(np.asarray(N), (n,)).astype(int)
        N_max = int(counts.max())
        self.n, self.p, self.phi, self.counts = n, p, Zero(), counts
        self.A = rng.standard_normal((n, N_max, p)) + rng.standard_normal((n, 1, p))  # client-specific shift
        self.b = rng.standard_normal((n, N_max))
        pad = np.arange(N_max) >= counts[:, None]
        self.A[pad], self.b[pad] = 1e6, 1e6
        self.num_samples = int(counts[0]) if np.all(counts == counts[0]) else counts

    def grad(self, X: np.ndarray) -> np.ndarray:
        """Client by client, as A_i^T (A_i x - b_i) / N_i on the real rows (independent of per_sample_grads)."""
        out = np.empty(np.shape(X))
        for i, Ni in enumerate(self.counts):
            A, b = self.A[i, :Ni], self.b[i, :Ni]
            out[..., i, :] = ((X[..., i, :] @ A.T - b) @ A) / Ni
        return out

    def per_sample_grads(self, X: np.ndarray) -> np.ndarray:
        r = np.einsum("ijp,...ip->...ij", self.A, X) - self.b
        return self.A * r[..., None]

    def sample_grad(self, X: np.ndarray, idx: np.ndarray) -> np.ndarray:
        rows = np.arange(self.n)[:, None]
        A, b = self.A[rows, idx], self.b[rows, idx]  # (..., n, batch, p), (..., n, batch)
        r = np.einsum("...ijp,...ip->...ij", A, X) - b
        return (A * r[..., None]).mean(axis=-2)


def rng_for(seed: int, *key: int) -> np.random.Generator:
    """The engine's stream: Generator(SeedSequence(seed, spawn_key=(t, l)))."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def point(problem: PerSampleLeastSquares, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((problem.n, problem.p))


def assert_within_ci(estimates: np.ndarray, truth: np.ndarray, stderr: np.ndarray, what: str) -> None:
    """Two-sided z-test at Z standard errors (plus 1e-12 for quantities that are exactly zero)."""
    dev = np.abs(estimates - truth)
    assert np.all(dev <= Z * stderr + 1e-12), f"{what}: max |dev|/se = {np.max(dev / np.maximum(stderr, 1e-300)):.2f}"


def test_problem_is_consistent() -> None:
    """The test problem's grad is the mean of its per-sample gradients and matches finite differences."""
    for N in (7, [5, 7, 3]):
        prob = PerSampleLeastSquares(N=N)
        assert isinstance(prob, SampledProblem)
        X = point(prob)
        G = prob.per_sample_grads(X)
        for i, Ni in enumerate(prob.counts):
            np.testing.assert_allclose(G[i, :Ni].mean(axis=0), prob.grad(X)[i], rtol=1e-12, atol=1e-12)
            A, b = prob.A[i, :Ni], prob.b[i, :Ni]
            fd = [(np.mean((A @ (X[i] + 1e-6 * e) - b) ** 2) - np.mean((A @ (X[i] - 1e-6 * e) - b) ** 2)) / 4e-6 for e in np.eye(prob.p)]
            np.testing.assert_allclose(prob.grad(X)[i], fd, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- Gaussian oracle


@pytest.mark.parametrize("sigma2", [0.3, 4.0])
def test_gaussian_mean_and_variance(sigma2: float) -> None:
    prob = PerSampleLeastSquares()
    X = np.broadcast_to(point(prob), (K, prob.n, prob.p))
    oracle = GaussianOracle(sigma2)
    g = oracle.sample(prob, X, rng_for(0, 3, 1))
    assert g.shape == (K, prob.n, prob.p)
    e = g - prob.grad(X)
    # mean: each coordinate of E g equals grad f_i; se = sqrt(sigma2/p / K)
    assert_within_ci(e.mean(axis=0), 0.0, np.sqrt(sigma2 / prob.p / K), "mean")
    # E||g - grad f_i||^2 = sigma2; ||e||^2 = (sigma2/p) chi2_p has variance 2 sigma2^2 / p
    sq = np.sum(e**2, axis=-1)
    assert_within_ci(sq.mean(axis=0), sigma2, np.sqrt(2 * sigma2**2 / prob.p / K), "E||g - grad||^2")
    np.testing.assert_array_equal(oracle.variance(prob, X[:2]), np.full((2, prob.n), sigma2))
    # isotropic: each coordinate has variance sigma2/p (sample variance of a normal: se = (sigma2/p) sqrt(2/K))
    assert_within_ci(e.var(axis=0), sigma2 / prob.p, sigma2 / prob.p * np.sqrt(2 / K), "coordinate variance")


def test_gaussian_noise_alone_and_zero_sigma() -> None:
    prob = PerSampleLeastSquares()
    X = point(prob)
    g = GaussianOracle(0.5).sample(prob, X, rng_for(7, 0, 0))
    np.testing.assert_allclose(g - prob.grad(X), GaussianOracle(0.5).noise(rng_for(7, 0, 0), X.shape), rtol=1e-12, atol=1e-14)
    # common random numbers: the same seed gives noise scaled by sqrt(sigma2)
    np.testing.assert_allclose(GaussianOracle(4.0).noise(rng_for(7, 0, 0), (5, 3)), 2 * GaussianOracle(1.0).noise(rng_for(7, 0, 0), (5, 3)))
    np.testing.assert_array_equal(GaussianOracle(0.0).sample(prob, X, rng_for(7, 0, 0)), prob.grad(X))


def test_exact_oracle() -> None:
    prob = PerSampleLeastSquares()
    X = np.stack([point(prob, s) for s in range(3)])
    o = ExactOracle()
    assert o.sigma2 == 0.0
    np.testing.assert_array_equal(o.sample(prob, X, rng_for(0, 0, 0)), prob.grad(X))
    np.testing.assert_array_equal(o.variance(prob, X), np.zeros((3, prob.n)))


# ---------------------------------------------------------------- minibatch oracle

MINIBATCH_CASES = [
    pytest.param(7, 1, False, id="N7-b1"),
    pytest.param(7, 3, False, id="N7-b3"),
    pytest.param(7, 3, True, id="N7-b3-replace"),
    pytest.param([5, 7, 3], 2, False, id="unequal-b2"),
    pytest.param([5, 7, 3], 3, True, id="unequal-b3-replace"),
]


@pytest.mark.parametrize(("N", "batch", "replace"), MINIBATCH_CASES)
def test_minibatch_mean_and_variance(N: int | list[int], batch: int, replace: bool) -> None:
    prob = PerSampleLeastSquares(N=N)
    oracle = MinibatchOracle(batch, replace=replace)
    x = point(prob)
    X = np.broadcast_to(x, (K, prob.n, prob.p))
    g = oracle.sample(prob, X, rng_for(1, 2, 3))
    assert g.shape == (K, prob.n, prob.p)
    e = g - prob.grad(X)
    assert_within_ci(e.mean(axis=0), 0.0, e.std(axis=0) / np.sqrt(K), "mean")
    sq = np.sum(e**2, axis=-1)
    var = oracle.variance(prob, x)
    assert var.shape == (prob.n,) and np.all(var > 0)
    assert_within_ci(sq.mean(axis=0), var, sq.std(axis=0) / np.sqrt(K), "E||g - grad||^2")


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("batch", [1, 2, 4, 5])
def test_minibatch_variance_by_enumeration(batch: int, replace: bool) -> None:
    """Average ||g_S - grad f_i||^2 over every batch S (all b-subsets, or all b-tuples with replacement),
    each equally likely: the exact variance, computed without the finite-population formula."""
    prob = PerSampleLeastSquares(N=[5, 5, 5])  # equal counts given as an array
    oracle = MinibatchOracle(batch, replace=replace)
    X = np.stack([point(prob, 1), point(prob, 2)])  # two replicas at different points
    grad = prob.grad(X)
    batches = list(itertools.product(range(5), repeat=batch) if replace else itertools.combinations(range(5), batch))
    idx = np.broadcast_to(np.array(batches)[:, None, None, :], (len(batches), 2, prob.n, batch))
    gS = prob.sample_grad(np.broadcast_to(X, (len(batches), *X.shape)), idx)
    np.testing.assert_allclose(gS.mean(axis=0), grad, rtol=1e-10, atol=1e-12)  # unbiased
    exact = np.mean(np.sum((gS - grad) ** 2, axis=-1), axis=0)
    np.testing.assert_allclose(oracle.variance(prob, X), exact, rtol=1e-10, atol=1e-14)


def test_full_batch_without_replacement_is_exact() -> None:
    prob = PerSampleLeastSquares(N=6)
    X = np.stack([point(prob, s) for s in range(4)])
    oracle = MinibatchOracle(6)
    np.testing.assert_allclose(oracle.sample(prob, X, rng_for(0, 0, 0)), prob.grad(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(oracle.variance(prob, X), np.zeros((4, prob.n)))
    prob1 = PerSampleLeastSquares(N=1)
    np.testing.assert_array_equal(MinibatchOracle(1).variance(prob1, point(prob1)), np.zeros(prob1.n))


@pytest.mark.parametrize("replace", [False, True])
def test_minibatch_indices(replace: bool) -> None:
    """Indices lie in range(N_i), are distinct without replacement, and each sample is drawn with frequency
    b/N_i (z-test on the inclusion counts)."""
    prob = PerSampleLeastSquares(N=[5, 7, 3])
    b = 3
    idx = MinibatchOracle(b, replace=replace).indices(prob, (K,), rng_for(4, 0, 0))
    assert idx.shape == (K, prob.n, b)
    for i, Ni in enumerate(prob.counts):
        rows = idx[:, i, :]
        assert rows.min() >= 0 and rows.max() < Ni
        if not replace:
            assert np.all(np.sort(rows, axis=-1)[:, 1:] != np.sort(rows, axis=-1)[:, :-1])
        counts = np.stack([(rows == j).sum(axis=-1) for j in range(Ni)], axis=-1)  # (K, N_i) per draw
        assert_within_ci(counts.mean(axis=0), b / Ni, counts.std(axis=0) / np.sqrt(K), f"inclusion, client {i}")


# ---------------------------------------------------------------- sign (two-point) oracle


def test_sign_oracle_by_enumeration() -> None:
    """Fixed signs, one replica per pattern of the 2^n: replica r's noise is exactly pattern_r * u, its mean over the
    replicas is 0 and its second moment ||u_i||^2, both exactly (no sampling error)."""
    prob = PerSampleLeastSquares()
    pats = np.array(list(itertools.product((1, -1), repeat=prob.n)), dtype=float)
    o = SignOracle(U_SIGN, signs=pats)
    X = np.broadcast_to(point(prob), (len(pats), prob.n, prob.p))
    e = o.sample(prob, X) - prob.grad(X)
    np.testing.assert_allclose(e, pats[..., None] * U_SIGN, rtol=0, atol=1e-12)
    np.testing.assert_allclose(e.mean(axis=0), 0.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.sum(e**2, axis=-1).mean(axis=0), np.sum(U_SIGN**2, axis=-1), rtol=1e-12)
    np.testing.assert_allclose(o.variance(prob, X), np.broadcast_to(np.sum(U_SIGN**2, axis=-1), (len(pats), prob.n)))
    assert o.sigma2 == pytest.approx(np.max(np.sum(U_SIGN**2, axis=-1)))


def test_sign_oracle_random_signs() -> None:
    """Drawn signs: each noise is +u_i or -u_i exactly, each with frequency 1/2 (z-test), so the mean is 0 and
    E||g - grad f_i||^2 = ||u_i||^2 with no spread."""
    prob = PerSampleLeastSquares()
    X = np.broadcast_to(point(prob), (K, prob.n, prob.p))
    e = SignOracle(U_SIGN).sample(prob, X, rng_for(0, 2, 0)) - prob.grad(X)
    s = e[..., 0] / U_SIGN[:, 0]
    np.testing.assert_allclose(np.abs(s), 1.0, rtol=1e-12)
    np.testing.assert_allclose(e, s[..., None] * U_SIGN, rtol=0, atol=1e-12)
    assert_within_ci((s > 0).mean(axis=0), 0.5, np.sqrt(0.25 / K), "frequency of +u")
    assert_within_ci(e.mean(axis=0), 0.0, np.abs(U_SIGN) / np.sqrt(K), "mean")


def test_sign_oracle_rejects_bad_parameters() -> None:
    prob = PerSampleLeastSquares()
    pats = np.array(list(itertools.product((1, -1), repeat=prob.n)), dtype=float)
    for bad in (np.zeros(4), np.full((3, 4), np.nan), "u"):
        with pytest.raises(ValueError, match="directions"):
            SignOracle(bad)
    with pytest.raises(ValueError, match="directions"):
        SignOracle(np.ones((2, 4))).sample(prob, point(prob), rng_for(0, 0, 0))  # n = 2 directions, 3 clients
    for bad in (2 * pats, np.where(pats > 0, 1.0, 0.0), pats[:, :2], np.ones((2, 3))):  # not +-1, wrong n, biased
        with pytest.raises(ValueError, match="signs"):
            SignOracle(U_SIGN, signs=bad)
    with pytest.raises(ValueError, match="signs"):  # 8 fixed patterns, 4 replicas
        SignOracle(U_SIGN, signs=pats).sample(prob, np.broadcast_to(point(prob), (4, prob.n, prob.p)))
    with pytest.raises(ValueError, match="rng"):
        SignOracle(U_SIGN).sample(prob, point(prob), None)


# ---------------------------------------------------------------- reproducibility and independence

#: directions of the sign oracle for the default test problem (n = 3, p = 4), every coordinate nonzero
U_SIGN = np.random.default_rng(2).standard_normal((3, 4))
ORACLE_OBJECTS = [GaussianOracle(1.0), MinibatchOracle(2), MinibatchOracle(2, replace=True), SignOracle(U_SIGN)]


@pytest.mark.parametrize("oracle", ORACLE_OBJECTS, ids=lambda o: f"{o.name}")
def test_reproducible_streams(oracle) -> None:
    prob = PerSampleLeastSquares()
    X = np.broadcast_to(point(prob), (8, prob.n, prob.p))
    a = oracle.sample(prob, X, rng_for(11, 4, 2))
    np.testing.assert_array_equal(a, oracle.sample(prob, X, rng_for(11, 4, 2)))
    for other in (rng_for(11, 4, 3), rng_for(11, 5, 2), rng_for(12, 4, 2)):
        assert not np.array_equal(a, oracle.sample(prob, X, other))


@pytest.mark.parametrize("oracle", ORACLE_OBJECTS, ids=lambda o: f"{o.name}")
def test_replicas_and_clients_are_independent(oracle) -> None:
    """Leading axes (K, 2): the errors of replica 0 and replica 1 (and of clients 0 and 1) are uncorrelated,
    |r| <= Z / sqrt(K) coordinatewise."""
    prob = PerSampleLeastSquares()
    X = np.broadcast_to(point(prob), (K, 2, prob.n, prob.p))
    e = oracle.sample(prob, X, rng_for(5, 1, 1)) - prob.grad(X)

    def corr(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        u, v = u - u.mean(axis=0), v - v.mean(axis=0)
        return (u * v).mean(axis=0) / (u.std(axis=0) * v.std(axis=0))

    assert np.all(np.abs(corr(e[:, 0], e[:, 1])) <= Z / np.sqrt(K)), "replicas"
    assert np.all(np.abs(corr(e[:, 0, 0], e[:, 0, 1])) <= Z / np.sqrt(K)), "clients"


@pytest.mark.parametrize("oracle", [*ORACLE_OBJECTS, ExactOracle()], ids=lambda o: f"{o.name}")
def test_batched_shapes_and_per_replica_variance(oracle) -> None:
    prob = PerSampleLeastSquares(N=[5, 7, 3])
    X = np.stack([np.stack([point(prob, 10 * i + k) for k in range(3)]) for i in range(2)])  # (2, 3, n, p)
    assert oracle.sample(prob, X, rng_for(0, 0, 0)).shape == X.shape
    V = oracle.variance(prob, X)
    assert V.shape == (2, 3, prob.n)
    for i in range(2):
        for k in range(3):
            np.testing.assert_allclose(V[i, k], oracle.variance(prob, X[i, k]), rtol=1e-12)


# ---------------------------------------------------------------- validation and specs


def test_bad_parameters_are_rejected() -> None:
    for bad in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="sigma2"):
            GaussianOracle(bad)
    for bad in (0, -2, 2.5):
        with pytest.raises(ValueError, match="batch"):
            MinibatchOracle(bad)
    prob = PerSampleLeastSquares(N=[5, 7, 3])
    for replace in (False, True):
        with pytest.raises(ValueError, match="batch"):
            MinibatchOracle(4, replace=replace).sample(prob, point(prob), rng_for(0, 0, 0))
        with pytest.raises(ValueError, match="batch"):
            MinibatchOracle(4, replace=replace).variance(prob, point(prob))
    for oracle in [*ORACLE_OBJECTS, ExactOracle()]:
        with pytest.raises(ValueError, match="X"):
            oracle.sample(prob, np.zeros((prob.n, prob.p + 1)), rng_for(0, 0, 0))
        with pytest.raises(ValueError, match="X"):
            oracle.variance(prob, np.zeros(prob.p))
    with pytest.raises(ValueError, match="shape"):
        GaussianOracle(1.0).noise(rng_for(0, 0, 0), ())
    no_samples = PerSampleLeastSquares()
    del no_samples.num_samples
    with pytest.raises(ValueError, match="num_samples"):
        MinibatchOracle(1).sample(no_samples, point(no_samples), rng_for(0, 0, 0))


def test_make_oracle() -> None:
    assert make_oracle({"kind": "gaussian", "sigma2": 0.5}) == GaussianOracle(0.5)
    assert make_oracle({"kind": "minibatch", "batch": 3}) == MinibatchOracle(3)
    assert make_oracle({"kind": "minibatch", "batch": 3, "replace": True}) == MinibatchOracle(3, replace=True)
    assert make_oracle({"kind": "exact"}) == ExactOracle()
    assert set(ORACLES) == {"exact", "gaussian", "minibatch"}
    with pytest.raises(ValueError, match="kind"):
        make_oracle({"kind": "laplace"})
    with pytest.raises(ValueError, match="kind"):
        make_oracle({"sigma2": 1.0})
    with pytest.raises(ValueError, match="sigma2"):
        make_oracle({"kind": "gaussian"})
    with pytest.raises(ValueError, match="sigma2"):
        make_oracle({"kind": "gaussian", "sigma2": -1.0})
    with pytest.raises(ValueError, match="unknown key"):
        make_oracle({"kind": "exact", "sigma2": 1.0})
