"""Fewer draws per verdict (issue 14): common random numbers, antithetic pairs, sequential replicas, exact moments."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fedbounds.checks.fednmap.speedup import rounds_to_target
from fedbounds.checks.studies.fednmap_speedup import (
    AntitheticOracle,
    decide,
    engine_seed,
    exact_target_curve,
    pair_units,
    rtt_bootstrap,
    rtt_of_curves,
    sequential_replicas,
    validate_efficiency,
)


def _first_stay_below(curve: np.ndarray, target: float) -> int:
    """Independent reference: the first t with curve[s] <= target for every s >= t; -1 if none (a plain loop)."""
    for t in range(len(curve)):
        if all(np.isfinite(v) and v <= target for v in curve[t:]):
            return t
    return -1


def test_rtt_of_curves_matches_a_plain_loop_and_rounds_to_target() -> None:
    rng = np.random.default_rng(0)
    curves = np.exp(-0.05 * np.arange(120))[:, None] * rng.lognormal(0, 0.4, size=(120, 30)) + 0.01
    curves[:, 3] = 1.0  # never below
    curves[50, 4] = np.nan  # a non-finite round never counts as below
    got = rtt_of_curves(curves, 0.05)
    want = [_first_stay_below(curves[:, j], 0.05) for j in range(curves.shape[1])]
    assert got.tolist() == want
    assert got[3] == -1 and got[4] >= 51
    for j in (0, 7, 12):
        r = rounds_to_target(curves[:, j], 0.05)
        assert (r if r is not None else -1) == got[j]


def test_antithetic_pairs_are_exact_negatives_with_the_stated_variance() -> None:
    oracle = AntitheticOracle(sigma2=3.0)
    rng = np.random.default_rng(1)
    xi = oracle.noise(rng, (4000, 2, 6))
    np.testing.assert_array_equal(xi[:2000], -xi[2000:])
    per_client = np.sum(xi[:2000] ** 2, axis=-1)  # E||xi||^2 = sigma2 (FedNMap Assumption 3 with equality)
    assert abs(per_client.mean() - 3.0) < 4 * per_client.std() / np.sqrt(per_client.size)
    with pytest.raises(ValueError, match="even"):
        oracle.noise(rng, (3, 2, 6))


def test_pair_units_average_the_two_halves() -> None:
    m = np.arange(12.0).reshape(2, 6)
    np.testing.assert_array_equal(pair_units(m, True), [[1.5, 2.5, 3.5], [7.5, 8.5, 9.5]])
    assert pair_units(m, False) is not None and pair_units(m, False).shape == (2, 6)


def test_engine_seeds_are_common_unless_salted() -> None:
    assert engine_seed(0, 0) == engine_seed(0, 0, 0)
    assert len({engine_seed(0, b) for b in range(50)}) == 50
    assert engine_seed(0, 0) != engine_seed(1, 0)
    assert engine_seed(0, 0, 12345) != engine_seed(0, 0)


def test_bootstrap_interval_has_zero_width_on_identical_units_and_brackets_a_noisy_one() -> None:
    t = np.arange(200)
    same = np.repeat((np.exp(-0.03 * t) + 0.001)[:, None], 10, axis=1)
    rtt, lo, hi, boot = rtt_bootstrap(same, 0.01, B=50, seed=0)
    assert rtt == _first_stay_below(same[:, 0], 0.01) and lo == hi == rtt and set(boot.tolist()) == {rtt}
    rng = np.random.default_rng(2)
    noisy = np.exp(-0.03 * t)[:, None] * rng.lognormal(0, 0.5, size=(200, 64)) + 0.001
    rtt, lo, hi, _ = rtt_bootstrap(noisy, 0.01, B=200, seed=0)
    assert lo <= rtt <= hi and lo < hi


def test_decide_reports_a_floor_above_the_target_as_not_reached() -> None:
    eff = validate_efficiency({})
    rng = np.random.default_rng(3)
    units = 0.002 + 0.0002 * rng.standard_normal((300, 16))
    d = decide(units, 1e-3, eff, seed=0, replicas=32, blocks=1)
    assert d.status == "not_reached" and d.rtt is None
    d = decide(units, 2e-3, eff, seed=0, replicas=32, blocks=1)  # the floor is the target: cannot be decided
    assert d.status == "undecided" and d.units_needed > 16


def test_sequential_replicas_add_blocks_until_decided_and_respect_the_cap() -> None:
    t = np.arange(400)
    calls: list[tuple[int, int]] = []

    def run_block(b: int, R: int) -> tuple[np.ndarray, None]:
        calls.append((b, R))
        rng = np.random.default_rng([7, b])
        return np.exp(-0.04 * t)[:, None] * rng.lognormal(0, 1.0, size=(400, R)) + 1e-4, None

    eff = validate_efficiency({"antithetic": False, "cap": 512, "rel_halfwidth": 0.02})
    d, units, div = sequential_replicas(run_block, 1e-3, eff, block=8, seed=0)
    assert div is None and units.shape[1] == d.replicas == sum(R for _, R in calls)
    assert [b for b, _ in calls] == list(range(len(calls))) and all(R % 8 == 0 for _, R in calls)
    assert d.replicas <= 512
    assert all(R <= 3 * sum(r for _, r in calls[:i]) for i, (_, R) in enumerate(calls) if i)
    assert d.status == "reached" and len(calls) >= 2  # one block of 8 does not decide it; more blocks do
    assert (d.ci[1] - d.ci[0]) / 2 <= max(0.02 * d.rtt, 1.0)
    calls.clear()
    d, _, _ = sequential_replicas(run_block, 1e-3, {**eff, "rel_halfwidth": 0.015}, block=8, seed=0)
    assert d.status == "undecided" and d.replicas == 512  # too tight for the cap: stops at it, undecided
    calls.clear()
    d, _, _ = sequential_replicas(run_block, 1e-3, {**eff, "sequential": False}, block=8, seed=0)
    assert calls == [(0, 8)] and d.replicas == 8


def test_validate_efficiency_names_the_bad_setting() -> None:
    with pytest.raises(ValueError, match="unknown setting"):
        validate_efficiency({"antithetical": True})
    with pytest.raises(ValueError, match=r"efficiency\.rel_halfwidth"):
        validate_efficiency({"rel_halfwidth": 1.5})
    with pytest.raises(ValueError, match=r"efficiency\.cap"):
        validate_efficiency({"cap": 1})


def _ridge_config(**eff: object) -> dict:
    from fedbounds.checks.sweep.spec import load_spec

    spec = load_spec("fednmap_speedup")
    cfg = next(
        c.config
        for c in spec.iter_cells()
        if (c.coords["method"], c.coords["n"], c.coords["Q"], c.coords["eta_s"]) == ("fednmap", 32, 8, 0.002)
    )
    cfg = json.loads(json.dumps(cfg))
    ip = {k: v for k, v in cfg["instance"]["params"].items() if k != "weight"}
    cfg["instance"] = {"name": "least_squares", "params": {**ip, "phi": {"name": "squared_l2", "weight": 0.02}}}
    cfg["target"]["value"] = 2e-3
    cfg["params"]["efficiency"] = {**cfg["params"]["efficiency"], **eff}
    return cfg


@pytest.mark.slow  # 71 s at load 5-7 (pytest --durations, 2026-12-04)
def test_exact_moments_match_a_large_monte_carlo_mean_on_a_linear_gaussian_cell() -> None:
    from fedbounds.algorithms.instances import make_instance
    from fedbounds.algorithms.oracles import GaussianOracle
    from fedbounds.algorithms.run import run
    from fedbounds.checks.sweep.cell import _study_params

    cfg = _ridge_config()
    prob = make_instance(cfg["instance"]["name"], **cfg["instance"]["params"])
    params = {k: v for k, v in cfg["params"].items() if k not in ("method", "efficiency")}
    engine, ep = _study_params("fednmap", params, prob)
    ex = exact_target_curve(engine, prob, ep, rounds=60, sigma2=4.0, metric="psi_gap")[:, 0]
    m = run(engine, prob, ep, rounds=60, replicas=2000, seed=4, oracle=GaussianOracle(4.0), metrics=("psi_gap",)).metrics["psi_gap"]
    se = m.std(axis=1, ddof=1) / np.sqrt(m.shape[1])
    z = np.abs(m.mean(axis=1) - ex)[1:] / se[1:]
    assert np.max(z) < 4.5 and np.median(z) < 1.5
    lasso = make_instance("lasso", n=4, p=8, m=100, heterogeneity=0.5, weight=0.02, seed=1)
    with pytest.raises(ValueError, match="phi"):
        exact_target_curve(engine, lasso, ep, rounds=5, sigma2=4.0, metric="psi_gap")


@pytest.mark.slow  # 61 s at load 5-7 (pytest --durations, 2026-12-04)
def test_study_cell_exact_mode_needs_no_replica_and_falls_in_the_monte_carlo_interval() -> None:
    from fedbounds.checks.sweep.cell import compute_study_cell

    ex = compute_study_cell(_ridge_config(exact=True))
    mc = compute_study_cell(_ridge_config())
    assert ex["replicas_used"] == 0 and ex["decision"] == "reached"
    assert mc["decision"] == "reached" and mc["replicas_used"] > 0
    assert mc["rtt_ci"][0] <= ex["rounds_to_target"] <= mc["rtt_ci"][1]


def test_common_random_numbers_pair_fednmap_with_fedavg_prox() -> None:
    """Same engine seed: FedNMap and FedAvg-prox at the same (n, Q) draw the same noise, so the paired difference
    of their final-window floors varies much less than with independent streams (salted seeds)."""
    from fedbounds.algorithms.instances import make_instance
    from fedbounds.algorithms.oracles import GaussianOracle
    from fedbounds.algorithms.run import run
    from fedbounds.checks.sweep.cell import _study_params

    prob = make_instance("lasso", n=8, p=8, m=100, heterogeneity=0.5, weight=0.02, seed=1)
    base = {"gamma": 1.0, "eta_a": 0.125, "eta_s": 0.064, "Q": 4, "z0": [1.0] * 8}
    floors = {}
    for method, salt in (("fednmap", 0), ("fedavg_prox", 0), ("fedavg_prox", 99)):
        engine, ep = _study_params(method, base, prob)
        m = run(engine, prob, ep, rounds=300, replicas=64, seed=engine_seed(0, 0, salt), oracle=GaussianOracle(4.0), metrics=("psi_gap",))
        floors[(method, salt)] = m.metrics["psi_gap"][-75:].mean(axis=0)
    common = np.var(floors[("fedavg_prox", 0)] - floors[("fednmap", 0)], ddof=1)
    independent = np.var(floors[("fedavg_prox", 99)] - floors[("fednmap", 0)], ddof=1)
    assert independent > 4 * common
