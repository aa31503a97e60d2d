"""Vectorised engine versus the per-client reference loops: same draws, same trajectories to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest
from fedbounds.algorithms.instances.least_squares import heterogeneous_least_squares
from fedbounds.algorithms.oracles import GaussianOracle
from fedbounds.algorithms.reference import REFERENCES
from fedbounds.algorithms.regularizers import L1, MCP, SquaredL2
from fedbounds.algorithms.run import ALGORITHMS, replica_arrays
from hypothesis import given, settings
from hypothesis import strategies as st


def vectorised_history(name, problem, params, *, rounds, replicas, seed, oracle):
    alg = ALGORITHMS[name]
    P = alg.validate(problem, params)
    state = alg.init(problem, P, oracle, replicas, seed)
    rows = [replica_arrays(state, replicas)]
    for t in range(rounds):
        state = alg.step(state, t)
        rows.append(replica_arrays(state, replicas))
    return {k: np.stack([r[k] for r in rows]) for k in rows[0]}


def params_for(name, problem, rng_scale=1.0):
    L = problem.constants["L"].value
    g = 1.0 / L
    base = {"eta_a": 0.2 * g, "eta_s": 1.5, "Q": 3}
    return {
        "fednmap": {"gamma": g, **base},
        "prox_sgd": {"eta": 0.5 * g},
        "norm_sgd": {"eta": 0.5 * g, "gamma": g},
        "fedmid": base,
        "fedda": base,
        "fedavg_prox": base,
        "scaffold_prox": base,
        "fedprox_prox": {**base, "mu": 0.5 * L},
    }[name]


@pytest.fixture(scope="module")
def lasso():
    return heterogeneous_least_squares(n=3, p=5, m=10, heterogeneity=1.5, phi=L1(0.1), seed=4)


def assert_same(vec, ref):
    assert set(ref) <= set(vec), (set(ref), set(vec))
    for key, r in ref.items():
        v = vec[key]
        assert v.shape == r.shape, key
        np.testing.assert_allclose(v, r, rtol=1e-12, atol=1e-12, err_msg=key)


def test_every_builtin_has_a_reference():
    builtins = ("fednmap", "prox_sgd", "norm_sgd", "fedmid", "fedda", "fedavg_prox", "scaffold_prox", "fedprox_prox")
    assert set(builtins) <= set(REFERENCES)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_vectorised_equals_reference(lasso, name):
    kw = dict(rounds=6, replicas=2, seed=5, oracle=GaussianOracle(0.4))
    params = params_for(name, lasso)
    ref = REFERENCES[name](lasso, params, **kw)
    vec = vectorised_history(name, lasso, params, **kw)
    assert_same(vec, ref)
    # the stochastic run actually moved, and the replicas differ (the comparison is not trivial)
    assert not np.allclose(ref["x"][-1, 0], ref["x"][-1, 1])
    assert np.max(np.abs(ref["x"][-1] - ref["x"][0])) > 1e-3


@pytest.mark.parametrize("options", [{"variant": "B"}, {"correction": False}, {"variant": "B", "correction": False, "z0": None}])
def test_fednmap_options_equal_reference(lasso, options):
    kw = dict(rounds=5, replicas=2, seed=9, oracle=GaussianOracle(0.2))
    params = {**params_for("fednmap", lasso), **options, "z0": np.linspace(-1, 1, lasso.p)}
    assert_same(vectorised_history("fednmap", lasso, params, **kw), REFERENCES["fednmap"](lasso, params, **kw))


@settings(max_examples=8)
@given(
    name=st.sampled_from(sorted(REFERENCES)),
    n=st.integers(1, 4),
    p=st.integers(1, 5),
    Q=st.integers(1, 3),
    phi=st.sampled_from(["l1", "l2", "mcp"]),
    seed=st.integers(0, 2**16),
)
def test_vectorised_equals_reference_property(name, n, p, Q, phi, seed):
    reg = {"l1": L1(0.05), "l2": SquaredL2(0.3), "mcp": MCP(lam=0.05, theta=50.0)}[phi]
    problem = heterogeneous_least_squares(n=n, p=p, m=6, heterogeneity=1.0, phi=reg, seed=seed % 97)
    if name == "fedda" and reg.rho > 0:
        return  # FedDA needs a convex phi (validated; see test_baselines)
    params = params_for(name, problem)
    if "Q" in params:
        params["Q"] = Q
    kw = dict(rounds=3, replicas=2, seed=seed, oracle=GaussianOracle(0.3))
    assert_same(vectorised_history(name, problem, params, **kw), REFERENCES[name](problem, params, **kw))


def test_reference_replays_exact_oracle(lasso):
    from fedbounds.algorithms.oracles import ExactOracle

    kw = dict(rounds=4, replicas=2, seed=1, oracle=ExactOracle())
    params = {**params_for("fednmap", lasso), "z0": np.linspace(-1, 1, lasso.p)}
    ref = REFERENCES["fednmap"](lasso, params, **kw)
    assert_same(vectorised_history("fednmap", lasso, params, **kw), ref)
    np.testing.assert_array_equal(ref["x"][:, 0], ref["x"][:, 1])  # no noise: the replicas coincide


@pytest.mark.parametrize("name", ["fednmap", "fedavg_prox", "norm_sgd"])
def test_vectorised_equals_reference_non_quadratic(name):
    """A problem without ``hessians``: the reference takes client i's gradient from ``problem.grad`` row i."""
    from fedbounds.algorithms.instances.logistic import synthetic_logistic

    problem = synthetic_logistic(n=3, p=4, m=8, phi=L1(0.02), seed=2)
    assert not hasattr(problem, "hessians")
    g = 1.0 / float(problem.L)
    params = {
        "fednmap": {"gamma": g, "eta_a": 0.2 * g, "eta_s": 1.5, "Q": 2},
        "fedavg_prox": {"eta_a": 0.2 * g, "eta_s": 1.5, "Q": 2},
        "norm_sgd": {"eta": 0.5 * g, "gamma": g},
    }[name]
    kw = dict(rounds=4, replicas=2, seed=3, oracle=GaussianOracle(0.3))
    assert_same(vectorised_history(name, problem, params, **kw), REFERENCES[name](problem, params, **kw))


def test_reference_detects_a_different_draw(lasso):
    """The comparison can fail: another seed's draws give a different trajectory."""
    params = params_for("fednmap", lasso)
    vec = vectorised_history("fednmap", lasso, params, rounds=3, replicas=2, seed=5, oracle=GaussianOracle(0.4))
    ref = REFERENCES["fednmap"](lasso, params, rounds=3, replicas=2, seed=6, oracle=GaussianOracle(0.4))
    with pytest.raises(AssertionError):
        assert_same(vec, ref)


def test_reference_needs_additive_noise(lasso):
    from fedbounds.algorithms.oracles import MinibatchOracle

    with pytest.raises(ValueError, match="noise"):
        REFERENCES["fednmap"](lasso, params_for("fednmap", lasso), rounds=1, replicas=1, seed=0, oracle=MinibatchOracle(2))


def test_reference_keep_records_only_named_fields(lasso):
    kw = dict(rounds=2, replicas=3, seed=0, oracle=GaussianOracle(0.1))
    out = REFERENCES["fednmap"](lasso, params_for("fednmap", lasso), **kw, keep=("z", "x"))
    assert set(out) == {"z", "x"} and out["z"].shape == (3, 3, lasso.p)
