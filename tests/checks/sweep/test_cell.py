"""The real sweep cell (issue 8): summaries of trajectories, determinism, and the shipped tiny spec end to end."""

from __future__ import annotations

import csv
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.sweep.cell import summarize
from fedbounds.checks.sweep.runner import execute
from fedbounds.checks.sweep.spec import load_spec
from fedbounds.checks.sweep.store import Store


def _first_stay_below(curve: np.ndarray, target: float) -> int | None:
    """Independent reference: the first t with curve[s] <= target for every s >= t (a plain loop)."""
    for t in range(len(curve)):
        if all(np.isfinite(v) and v <= target for v in curve[t:]):
            return t
    return None


def test_summary_of_a_reached_curve_matches_a_plain_loop() -> None:
    rng = np.random.default_rng(3)
    metric = np.exp(-0.1 * np.arange(80))[:, None] * rng.lognormal(0, 0.3, size=(80, 5))
    out = summarize({"psi_gap": metric, "dist_sq": 2 * metric}, {"metric": "psi_gap", "value": 0.01})
    mean = metric.mean(axis=1)
    assert out["status"] == "reached"
    assert out["rounds_to_target"] == _first_stay_below(mean, 0.01)
    assert out["final"] == mean[-1] and out["rounds_completed"] == 79
    assert out["curves"]["dist_sq"].tobytes() == (2 * metric).mean(axis=1).tobytes()
    assert out["divergence_round"] is None


def test_summary_of_a_plateau_and_of_a_divergence() -> None:
    flat = np.full((30, 2), 0.5)
    out = summarize({"psi_gap": flat}, {"metric": "psi_gap", "value": 0.1})
    assert out["status"] == "not_reached" and out["rounds_to_target"] is None and out["final"] == 0.5
    dipped = np.exp(-np.arange(10.0))[:, None] * np.ones((10, 2))  # below 0.1 from round 3, then blows up
    div = SimpleNamespace(round=9, replica=1, reason="non-finite z")
    out = summarize({"psi_gap": dipped}, {"metric": "psi_gap", "value": 0.1}, div)
    assert out["status"] == "diverged" and out["rounds_to_target"] is None
    assert (out["divergence_round"], out["divergence_replica"], out["divergence_reason"]) == (9, 1, "non-finite z")
    with pytest.raises(ValueError, match="target metric 'normal_map_sq' was not recorded"):
        summarize({"psi_gap": flat}, {"metric": "normal_map_sq", "value": 0.1})


def test_overflowing_mean_is_none_not_nan() -> None:
    huge = np.array([[1e308, 1e308], [1e308, 1e308]])
    out = summarize({"psi_gap": huge}, {"metric": "psi_gap", "value": 1.0})
    assert out["final"] is None and out["best"] is None and out["status"] == "not_reached"


@pytest.fixture
def engine() -> None:
    pytest.importorskip("fedbounds.algorithms.oracles")
    from fedbounds.algorithms import oracles

    if not hasattr(oracles, "make_oracle"):
        pytest.skip("fedbounds.algorithms.oracles.make_oracle not there yet")


def test_real_cell_is_deterministic_and_consistent(engine: None) -> None:
    spec = load_spec("tiny")
    cell = spec.cells()[5]
    a, b = execute(cell.config), execute(dict(cell.config))
    assert a.error is None, a.error
    assert (a.result, a.curves) == (b.result, b.curves)
    import json

    result = json.loads(a.result)
    from fedbounds.checks.sweep.store import decode_curves

    curves = decode_curves(result["curves"], a.curves)
    assert set(curves) == set(spec.metrics)
    assert curves["psi_gap"].shape == (result["rounds_completed"] + 1,)
    if result["status"] != "diverged":
        assert result["rounds_to_target"] == _first_stay_below(curves["psi_gap"], spec.target["value"])
    other_seed = next(c for c in spec.cells() if c.coords == {**cell.coords, "seed": 1})
    assert execute(other_seed.config).curves != a.curves


@pytest.mark.slow  # 14 s at load 5-7 (pytest --durations, 2026-12-04)
def test_tiny_spec_end_to_end_through_the_cli(engine: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "tiny.sqlite"
    assert main(["sweep", "tiny", "--store", str(store), "--processes", "1", "--no-progress"]) == 0
    spec = load_spec("tiny")
    with Store(store, readonly=True) as st:
        assert st.keys() == {c.key for c in spec.cells()}
        statuses = {r.result["status"] for r in st.rows()}
    assert "reached" in statuses
    assert main(["sweep", "tiny", "--store", str(store), "--processes", "1", "--no-progress"]) == 0
    assert f"{spec.size} already stored, 0 computed" in capsys.readouterr().out
    out = tmp_path / "rep"
    assert main(["report", str(store), "--out", str(out)]) == 0
    assert (out / "tiny_rounds_vs_n.png").exists() and (out / "tiny_rounds_vs_Q.png").exists()
    rows = list(csv.DictReader((out / "cells.csv").open()))
    assert len(rows) == spec.size and not any("nan" in v.lower() for r in rows for v in r.values())


@pytest.mark.slow  # 17 s at load 5-7 (pytest --durations, 2026-12-04)
def test_real_cells_identical_in_pool_processes_and_on_dask(engine: None, tmp_path: Path) -> None:
    """The same real cells computed in forked pool workers and on a Dask cluster: identical stored bytes."""
    distributed = pytest.importorskip("distributed")
    from fedbounds.checks.sweep.runner import run_sweep

    spec = load_spec("tiny")
    pool, dask = tmp_path / "pool.sqlite", tmp_path / "dask.sqlite"
    run_sweep(spec, pool, processes=2, progress=False, limit=6)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        run_sweep(spec, dask, client=client, progress=False, limit=6)
    with Store(pool, readonly=True) as a, Store(dask, readonly=True) as b:
        raw_a, raw_b = a.raw(), b.raw()
    assert len(raw_a) == 6 and raw_a == raw_b


@pytest.mark.slow  # 19 s at load 5-7 (pytest --durations, 2026-12-04)
def test_the_sweep_page_a_reader_opens(engine: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page has navigation, the study's scope, the spec attached and linked, the run (commit, command, machine,
    times), every series whose interval excludes the claimed slope marked; no -wal/-shm stays beside the store."""
    store = tmp_path / "tiny.sqlite"
    assert main(["sweep", "tiny", "--store", str(store), "--processes", "1", "--no-progress"]) == 0
    out = tmp_path / "rep"
    assert main(["report", str(store), "--out", str(out)]) == 0
    capsys.readouterr()
    page = (out / "index.html").read_text(encoding="utf-8")
    assert '<nav class="contents">' in page and 'href="tiny.spec.toml"' in page
    assert (out / "tiny.spec.toml").read_text(encoding="utf-8") == load_spec("tiny").source
    for label in ("git commit", "command", "machine", "elapsed (s)", "cells"):
        assert f"<dt>{label}</dt>" in page, label
    assert "scope of tiny:" in page and "expected slope" in page
    slopes = list(csv.DictReader((out / "slopes.csv").open()))
    missed = [s for s in slopes if s["contains_expected"].lower() == "false"]
    assert page.count("NO: the interval excludes it") == len(missed)
    assert not list(tmp_path.glob("tiny.sqlite-*")), list(tmp_path.glob("tiny.sqlite-*"))
