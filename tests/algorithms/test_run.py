"""The driver (fedbounds.algorithms.run), the random streams (fedbounds.algorithms.rng) and the metrics (fedbounds.algorithms.metrics)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fedbounds.algorithms.base import natural_residual, normal_map
from fedbounds.algorithms.instances.least_squares import heterogeneous_least_squares
from fedbounds.algorithms.metrics import METRIC_NAMES, Observation
from fedbounds.algorithms.oracles import GaussianOracle
from fedbounds.algorithms.regularizers import L1, MCP
from fedbounds.algorithms.rng import stream
from fedbounds.algorithms.run import ALGORITHMS, Context, Divergence, DivergenceError, Trajectory, register, run, unregister

BUILTINS = ("fednmap", "prox_sgd", "norm_sgd", "fedmid", "fedda", "fedavg_prox", "scaffold_prox", "fedprox_prox")


@pytest.fixture(scope="module")
def lasso():
    return heterogeneous_least_squares(n=4, p=6, m=12, heterogeneity=1.0, phi=L1(0.05), seed=3)


def fednmap_params(problem, **kw):
    gamma = 1.0 / problem.constants["L"].value
    return {"gamma": gamma, "eta_a": 0.1 * gamma, "eta_s": 2.0, "Q": 3, **kw}


# ------------------------------------------------------------------------------------------ streams


def test_stream_is_reproducible_and_keyed():
    a = stream(7, 3, 2).standard_normal(5)
    assert np.array_equal(a, stream(7, 3, 2).standard_normal(5))
    for other in (stream(8, 3, 2), stream(7, 4, 2), stream(7, 3, 1), stream(7, 2, 3), stream(7, 3, 2, 1)):
        assert not np.allclose(a, other.standard_normal(5))


@pytest.mark.parametrize("bad", [(-1, 0, 0), (0, -1, 0), (0, 0, 1.5), (0, True, 0)])
def test_stream_rejects_bad_keys(bad):
    with pytest.raises(ValueError, match="must be an integer >= 0"):
        stream(*bad)


# ------------------------------------------------------------------------------------------ run


def test_run_records_every_applicable_metric(lasso):
    tr = run("fednmap", lasso, fednmap_params(lasso), rounds=5, replicas=3, seed=1, oracle=GaussianOracle(0.1))
    assert isinstance(tr, Trajectory)
    assert tr.rounds_completed == 5 and tr.divergence is None
    assert set(tr.metrics) == {"psi_gap", "psi", "normal_map_sq", "natural_residual_sq", "dist_sq", "eta", "uplink"}
    for values in tr.metrics.values():
        assert values.shape == (6, 3) and np.all(np.isfinite(values))
    assert np.all(tr.metrics["uplink"][0] == 0) and np.all(tr.metrics["uplink"][1:] == 1)
    # filled-in defaults are part of the record
    assert tr.params["eta_s"] == 2.0 and tr.params["variant"] == "A" and tr.params["correction"] is True


def test_metrics_match_independent_formulas(lasso):
    P = fednmap_params(lasso)
    tr = run("fednmap", lasso, P, rounds=4, replicas=2, seed=2, oracle=GaussianOracle(0.3))
    z, x = tr.final.z, tr.final.x
    sol = lasso.solution()
    gamma = P["gamma"]
    # x = prox(z) by soft thresholding, written out here
    assert np.allclose(x, np.sign(z) * np.maximum(np.abs(z) - gamma * 0.05, 0.0), atol=1e-15)
    H, h = lasso.hessians.mean(axis=0), lasso.linear.mean(axis=0)
    grad = x @ H.T - h
    F_nor = grad + (z - x) / gamma
    assert np.allclose(tr.metrics["normal_map_sq"][-1], np.sum(F_nor**2, axis=1), rtol=1e-12)
    F_nat = x - np.sign(x - gamma * grad) * np.maximum(np.abs(x - gamma * grad) - gamma * 0.05, 0.0)
    assert np.allclose(tr.metrics["natural_residual_sq"][-1], np.sum(F_nat**2, axis=1), rtol=1e-10, atol=1e-30)
    assert np.allclose(tr.metrics["dist_sq"][-1], np.sum((x - sol.x_star) ** 2, axis=1), rtol=1e-12)
    assert np.allclose(tr.metrics["psi_gap"][-1], lasso.psi(x) - sol.psi_star, rtol=1e-12)
    # base.py's helpers agree with the hand-written residuals
    assert np.allclose(normal_map(lasso, z, gamma), F_nor) and np.allclose(natural_residual(lasso, x, gamma), F_nat)


def test_metric_selection_and_errors(lasso):
    tr = run("fednmap", lasso, fednmap_params(lasso), rounds=2, metrics=("dist_sq",))
    assert set(tr.metrics) == {"dist_sq"}
    with pytest.raises(ValueError, match="unknown"):
        run("fednmap", lasso, fednmap_params(lasso), rounds=2, metrics=("nope",))
    with pytest.raises(ValueError, match=r"normal_map_sq.*does not apply"):
        run("fedavg_prox", lasso, {"eta_a": 0.01, "Q": 2}, rounds=2, metrics=("normal_map_sq",))
    # natural residual for an algorithm without gamma: only with gamma_eval
    assert "natural_residual_sq" not in run("fedavg_prox", lasso, {"eta_a": 0.01, "Q": 2}, rounds=1).metrics
    tr = run("fedavg_prox", lasso, {"eta_a": 0.01, "Q": 2, "gamma_eval": 0.1}, rounds=1)
    assert np.allclose(tr.metrics["natural_residual_sq"][-1], np.sum(natural_residual(lasso, tr.final.x, 0.1) ** 2, axis=-1))
    assert set(METRIC_NAMES) >= set(tr.metrics)


def test_run_is_reproducible_and_replicas_are_independent(lasso):
    kw = dict(rounds=3, replicas=4, oracle=GaussianOracle(0.5))
    a = run("fednmap", lasso, fednmap_params(lasso), seed=11, **kw)
    b = run("fednmap", lasso, fednmap_params(lasso), seed=11, **kw)
    c = run("fednmap", lasso, fednmap_params(lasso), seed=12, **kw)
    assert np.array_equal(a.final.z, b.final.z)
    assert not np.allclose(a.final.z, c.final.z)
    assert len({tuple(np.round(row, 12)) for row in a.final.z}) == 4  # four different replicas


def test_run_bad_arguments(lasso):
    with pytest.raises(ValueError, match="algorithm must be one of"):
        run("fednmapp", lasso, {}, rounds=1)
    with pytest.raises(ValueError, match="rounds"):
        run("fednmap", lasso, fednmap_params(lasso), rounds=-1)
    with pytest.raises(ValueError, match="replicas"):
        run("fednmap", lasso, fednmap_params(lasso), rounds=1, replicas=0)
    with pytest.raises(ValueError, match="seed"):
        run("fednmap", lasso, fednmap_params(lasso), rounds=1, seed=-3)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"Q": 0}, "Q must be an integer >= 1"),
        ({"Q": 2.5}, "Q must be an integer >= 1"),
        ({"eta_a": 0.0}, "eta_a must be finite and > 0"),
        ({"eta_s": -1.0}, "eta_s must be finite and > 0"),
        ({"gamma": 0.0}, "gamma must be finite and > 0"),
        ({"variant": "C"}, "variant must be"),
        ({"correction": "yes"}, "correction must be"),
        ({"z0": np.zeros(3)}, "z0 must be a finite array of shape"),
        ({"etaa": 1.0}, "unknown parameter"),
    ],
)
def test_fednmap_params_validated_up_front(lasso, params, match):
    with pytest.raises(ValueError, match=match):
        run("fednmap", lasso, fednmap_params(lasso, **params), rounds=1)


def test_gamma_must_lie_below_one_over_rho():
    problem = heterogeneous_least_squares(n=2, p=3, m=5, phi=MCP(lam=0.1, theta=4.0), seed=0)
    rho = problem.phi.rho
    assert rho > 0
    with pytest.raises(ValueError, match=r"gamma must lie in \(0, 1/rho\)"):
        run("fednmap", problem, {"gamma": 1.0 / rho, "eta_a": 0.01, "Q": 1}, rounds=1)
    with pytest.raises(ValueError, match="missing required"):
        run("fednmap", problem, {"eta_a": 0.01, "Q": 1}, rounds=1)


def test_progress_bar_and_callback(lasso, capsys):
    seen = []
    run("fednmap", lasso, fednmap_params(lasso), rounds=3, progress=True, callback=lambda t, s: seen.append((t, s.t)))
    assert seen == [(1, 1), (2, 2), (3, 3)]


# ------------------------------------------------------------------------------------------ divergence


@dataclass(frozen=True, eq=False)
class _ToyState:
    ctx: Context
    t: int
    x: np.ndarray


class _Blowup:
    """Replica ``k`` is multiplied by ``factor`` each round (others stay put); optionally turns NaN."""

    name = "blowup"

    def __init__(self, k: int, factor: float, nan_at: int | None = None) -> None:
        self.k, self.factor, self.nan_at = k, factor, nan_at

    def validate(self, problem, params):
        return dict(params)

    def init(self, problem, params, oracle, replicas, seed):
        return _ToyState(Context(problem, params, oracle, seed, replicas), 0, np.ones((replicas, problem.p)))

    def step(self, state, t):
        x = state.x.copy()
        x[self.k] *= self.factor
        if self.nan_at is not None and t == self.nan_at:
            x[self.k, 0] = np.nan
        return _ToyState(state.ctx, state.t + 1, x)

    def observe(self, state):
        return Observation(x=state.x, per_round={"eta": 1.0})


def test_divergence_reports_round_and_replica(lasso):
    tr = run(_Blowup(k=2, factor=1e60), lasso, {}, rounds=10, replicas=4, metrics=("eta",))
    # x = 1e60 after round 0, 1e120 after round 1, 1e180 > 1e150 after round 2
    assert tr.divergence == Divergence(round=2, replica=2, reason="x has |value| > 1e+150")
    assert tr.rounds_completed == 2 and tr.metrics["eta"].shape == (3, 4)
    # a metric that overflows first (||x - x*||^2 ~ 1e240 after round 1) stops the run one round earlier
    tr = run(_Blowup(k=3, factor=1e60), lasso, {}, rounds=10, replicas=4, metrics=("eta", "dist_sq"))
    assert tr.divergence == Divergence(round=1, replica=3, reason="dist_sq has |value| > 1e+150")
    assert np.all(np.isfinite(tr.metrics["dist_sq"])) and tr.metrics["dist_sq"].shape == (2, 4)
    with pytest.raises(DivergenceError, match=r"diverged at round 1 \(replica 3\): dist_sq"):
        tr.raise_if_diverged()
    tr = run(_Blowup(k=1, factor=1.0, nan_at=4), lasso, {}, rounds=10, replicas=3)
    assert tr.divergence.round == 4 and tr.divergence.replica == 1 and "non-finite" in tr.divergence.reason
    run(_Blowup(k=0, factor=1.0), lasso, {}, rounds=3).raise_if_diverged()  # no divergence, no error
    assert run(_Blowup(k=0, factor=1.0), lasso, {}, rounds=3, metrics=()).rounds_completed == 3


def test_divergence_of_a_real_run(lasso):
    L = lasso.constants["L"].value
    tr = run("fedavg_prox", lasso, {"eta_a": 50.0 / L, "Q": 2}, rounds=500, replicas=3)
    assert tr.divergence is not None and 0 < tr.divergence.round < 500
    assert tr.divergence.replica == 0  # identical replicas under exact gradients: the first one is reported
    for values in tr.metrics.values():
        assert values.shape == (tr.divergence.round + 1, 3) and np.all(np.isfinite(values))
    assert np.all(np.isfinite(tr.final.x)) and np.max(np.abs(tr.final.x)) <= 1e150


def test_nonfinite_initial_point_is_rejected(lasso):
    with pytest.raises(ValueError, match="z0 must be a finite array"):
        run("fednmap", lasso, fednmap_params(lasso, z0=np.full(lasso.p, np.inf)), rounds=1)


# ------------------------------------------------------------------------------------------ registry


def test_registry_has_the_builtins_and_accepts_registrations(lasso):
    for name in BUILTINS:
        assert name in ALGORITHMS
        assert callable(ALGORITHMS[name].step)
    assert "not_an_algorithm" not in ALGORITHMS
    register("blowup_test", _Blowup(0, 1.0))
    assert "blowup_test" in ALGORITHMS and "blowup_test" in list(ALGORITHMS)
    register("blowup_test", _Blowup(0, 2.0))  # same class: replaced silently
    with pytest.raises(ValueError, match="already registered"):
        register("fednmap", _Blowup(0, 1.0))
    with pytest.raises(TypeError, match="lacks the method"):
        register("broken", object())
    tr = run("blowup_test", lasso, {}, rounds=1, metrics=("dist_sq",))
    assert tr.algorithm == "blowup_test" and np.all(tr.final.x == 2.0)
    unregister("blowup_test")
    assert "blowup_test" not in ALGORITHMS


# ------------------------------------------------------------------------------------------ benchmark


@pytest.mark.slow  # 12 s at load 5-7 (pytest --durations, 2026-12-04)
def test_benchmark_script_runs_on_a_tiny_instance():
    """benchmarks/bench_engine.py checks engine == reference before timing; smoke-run it at toy size."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_engine.py"
    args = ["--n", "3", "--p", "4", "--Q", "2", "--replicas", "2", "--rounds", "3", "--ref-rounds", "1", "--fast-grad"]
    out = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "agreement after 1 rounds" in out.stdout and "ratio (reference / vectorised)" in out.stdout
    assert "peak traced memory" in out.stdout
