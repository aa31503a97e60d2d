"""The lower-bound instance of FedNMap's n-independent noise floor (checks/fednmap/spep/lower.py, docs §10.10)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fedbounds.algorithms.instances.kinked import kinked_quadratic
from fedbounds.algorithms.rng import stream
from fedbounds.algorithms.run import run
from fedbounds.checks.fednmap.spep import lower as lo

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("kink", [-0.3, 0.0, 0.4])
def test_kinked_instance_is_in_the_class_with_its_stated_constants(kink: float) -> None:
    pb = kinked_quadratic(n=3, p=1, c_left=0.1, c_right=1.0, kink=kink)
    x = np.linspace(-5, 5, 20001)[:, None, None] * np.ones((1, 3, 1))
    g, f = pb.grad(x)[:, 0, 0], pb.client_values(x)[:, 0]
    assert pb.grad(np.zeros((1, 3, 1))).max() == 0.0 and f.min() >= 0.0  # x* = 0, f* = 0
    # the gradient is the derivative of the value (central differences), so the stated f is the f the engine uses
    assert np.allclose(np.gradient(f, x[:, 0, 0]), g, atol=1e-3)
    slopes = np.diff(g) / np.diff(x[:, 0, 0])
    assert slopes.max() <= pb.constants["L"].value + 1e-9 and slopes.min() >= pb.constants["mu"].value - 1e-9
    ratio = g[f > 0] ** 2 / (2 * f[f > 0])  # proximal PL with phi = 0: f'^2 >= 2 mu (f - f*)
    assert ratio.min() >= pb.constants["mu"].value - 1e-9
    far = np.array([-1e4, 1e4])[:, None, None] * np.ones((1, 3, 1))
    far_ratio = pb.grad(far)[:, 0, 0] ** 2 / (2 * pb.client_values(far)[:, 0])
    assert min(ratio.min(), far_ratio.min()) < pb.constants["mu"].value * 1.01  # mu is the constant (attained far out), not a bound


def test_the_tap_records_the_gradient_where_the_engine_takes_it() -> None:
    """One engine round from (z, c): the server's move is -eta_hat (tapped gradient + sampled noise + mean c), the noise
    redrawn from the engine's own streams. A tap reading the gradient at the server point instead fails at Q = 2."""
    Q, n, seed = 2, 500, 3
    pb = lo.instance(n, Q, 0.0)
    ea = lo.steps(Q)["eta_a"]
    z0 = -1.0 * ea
    tap = lo.Tap(lo.oracle("gaussian", n))
    tr = run("fednmap", pb, lo._params(Q, z0, None), rounds=1, replicas=1, seed=seed, oracle=tap, metrics=())
    noise = [float(np.mean(tap.inner.noise(stream(seed, 0, l), (1, n, 1)))) for l in range(Q)]
    moved = (z0 - float(tr.final.z[0, 0])) / lo.steps(Q)["eta_hat"]
    assert moved == pytest.approx(np.mean(tap.means) + np.mean(noise), rel=1e-9, abs=1e-15)
    at_server = float(pb.grad_f(np.array([z0]))[0])
    assert abs(moved - (at_server + np.mean(noise))) > 1e-3 * abs(at_server)


def test_q1_takes_the_gradient_at_the_server_point_so_there_is_no_bias() -> None:
    pb = lo.instance(200, 1, 0.0)
    z = lo.root(pb, 1, "gaussian", seed=5, clients_rounds=1, burn=1)
    assert abs(z) < 1e-3 * lo.steps(1)["eta_a"]


def test_the_kink_makes_an_n_independent_error_and_a_linear_gradient_does_not() -> None:
    """Control: the same run with the kink removed (curvature mu on both sides: a linear gradient) puts the mean-field
    root at x* within its interval, while the kinked instance's interval excludes x* (changing only the curvature)."""
    kinked = lo.n_independent(2, 0.0, clients=2000, batches=3, rounds=2, burn=1, seed=2)
    linear = lo.n_independent(2, 0.0, clients=2000, batches=3, rounds=2, burn=1, seed=2, curvatures=(lo.MU, lo.MU))
    zk, zl = kinked["z_over_eta_a"], linear["z_over_eta_a"]
    assert zl["low"] <= 0.0 <= zl["high"] and abs(zl["mean"]) < 0.05
    assert zk["high"] < -0.3 and kinked["b"]["low"] > 0.0


def _gaussian_drift_model(Q: int, kink: float) -> float:
    """b / eta_a^2 from an independent mean-field model: the l-th local iterate is x + D_l with D_l Gaussian of variance
    eta_a^2 sigma^2 (l^2/Q + l) (l noises, plus l times the correction, last round's client noise mean: variance
    sigma^2/Q); the root of mean_l E f'(z + D_l) in closed form (ramp functions), then f at the root."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    cn, cf = (1.0, 0.1) if kink <= 0 else (0.1, 1.0)

    def ramp(u: float, s: float) -> float:
        return u * norm.cdf(u / s) + s * norm.pdf(u / s) if s > 0 else max(u, 0.0)

    def mean_grad(z: float, s: float) -> float:
        return cn * z + (cn - cf) * ramp(kink - z, s) if kink <= 0 else cn * z + (cf - cn) * ramp(z - kink, s)

    sd = [np.sqrt(l * l / Q + l) for l in range(Q)]
    r = brentq(lambda z: np.mean([mean_grad(z, s) for s in sd]), -50, 50)
    pb = kinked_quadratic(c_left=0.1, c_right=1.0, kink=kink)
    return float(pb.f(np.array([r])))


@pytest.mark.slow
def test_the_engine_estimate_agrees_with_an_independent_drift_model() -> None:
    rec = lo.n_independent(8, -0.375, clients=8000, batches=2, seed=4)
    ea = lo.steps(8)["eta_a"]
    assert rec["b"]["mean"] / ea**2 == pytest.approx(_gaussian_drift_model(8, -0.375), rel=0.05)


def test_fit_recovers_a_over_n_plus_b() -> None:
    ns = [1, 2, 4, 8, 16, 32, 64]
    fl = [0.05 / n + 1e-4 for n in ns]
    fl = [f * (1 + 1e-6 * (-1) ** k) for k, f in enumerate(fl)]
    fit = lo.fit_a_over_n_plus_b(ns, fl)
    assert fit["a"] == pytest.approx(0.05, rel=1e-4) and fit["b"] == pytest.approx(1e-4, rel=1e-2)
    assert fit["b_low"] <= 1e-4 <= fit["b_high"]


def test_an_error_above_the_proved_floor_is_flagged() -> None:
    floor = lo.proved_floors()[8][64]
    lower = {8: {"b": {"mean": 1e-8, "low": 0.9e-8, "high": 1.1e-8}, "kink_units": -0.375, "law": "gaussian"}}
    ok = lo.compare(lower, [{"n": 64, "Q": 8, "kink_units": -0.375, "error": {"high": 0.5 * floor}}])
    bad = lo.compare(lower, [{"n": 64, "Q": 8, "kink_units": -0.375, "error": {"high": 2.0 * floor}}])
    assert ok["all_below"] and not bad["all_below"]


def test_the_committed_data_file() -> None:
    from fedbounds.theory.core.evidence import load

    data = load(ROOT / lo.TARGET)
    cmp = data["comparison"]
    assert cmp["all_below"] and len(cmp["finite_vs_proved"]) == 6
    rows = {r["Q"]: r for r in cmp["rows"]}
    assert rows[1]["b_lower"] < 1e-15  # Q = 1: no bias, structurally
    for Q in (2, 4, 8):
        r = rows[Q]
        assert 0.0 < r["b_lower_low"] and r["b_lower_high"] < r["proved_fit"]["b"] < r["printed_drift_term"]
    for c in data["controls_linear_gradient"]:  # the kink removed: the root at x* to the estimator's resolution
        assert abs(c["z_over_eta_a"]["mean"]) < 0.01 and c["b"]["high"] < 1e-4 * rows[c["Q"]]["b_lower"]


def test_cli_bad_argument_exits_2_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert lo.main(["--no-such-flag"]) == 2
    err = capsys.readouterr().err
    assert "--no-such-flag" in err and "Traceback" not in err


def test_an_unwritable_target_is_refused_before_any_run(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """One line, exit 2, and no run started (the runs take minutes)."""
    monkeypatch.setattr(lo, "table", lambda **_: pytest.fail("ran before refusing the target"))
    assert lo.main(["--write", "--out", str(tmp_path / "missing" / "x.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "its folder does not exist" in err and "Traceback" not in err


def test_the_proved_floors_are_read_wherever_the_command_runs(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # not the checkout: the committed table is this installation's, not the folder's
    assert lo.proved_floors()[1][1] > 0
