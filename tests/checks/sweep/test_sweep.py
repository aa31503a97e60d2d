"""Sweeps at scale (issue 8): the store, resuming, SIGKILL safety, Dask vs local processes, the report, the CLI.

These tests run a synthetic cell (written to a temporary module, so that spawned workers and a CLI subprocess
can import it) whose rounds to target are known to scale as 1/(nQ): the machinery is tested independently of
the algorithms. ``test_sweep_cell.py`` runs the real cell.
"""

from __future__ import annotations

import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.sweep.runner import run_sweep
from fedbounds.checks.sweep.spec import parse_spec
from fedbounds.checks.sweep.store import Store, decode_curves, encode_curves

ROOT = Path(__file__).resolve().parents[3]

#: A cell whose replica-mean metric is ~ 1/(1 + eta n Q t): rounds to a target scale exactly as 1/(nQ).
SYNTH_CELL = """
import time

import numpy as np

from fedbounds.checks.sweep.cell import summarize


class _Div:
    def __init__(self, round, replica, reason):
        self.round, self.replica, self.reason = round, replica, reason


def cell(config):
    p = config["params"]
    time.sleep(float(p.get("sleep", 0.0)))
    if p.get("fail"):
        raise ValueError("eta_a is past the stability limit for this cell")
    n, Q, eta = config["instance"]["params"]["n"], p["Q"], p["eta_a"]
    T, R = config["rounds"], config["replicas"]
    rng = np.random.default_rng([config["seed"], n, Q])
    t = np.arange(T + 1)[:, None]
    metric = 1.0 / (1.0 + eta * n * Q * t) * rng.lognormal(0.0, 0.02, size=(T + 1, R))
    div = None
    if eta > 1.5:  # a deliberately unstable step: metrics stop at round 3
        metric, div = metric[:4] * 10.0 ** np.arange(4)[:, None], _Div(3, 0, "overflow")
    return summarize({"psi_gap": metric, "dist_sq": 2.0 * metric}, config["target"], div)
"""

SPEC = """
name = "synth"
algorithm = "fednmap"
cell = "sweep_synth_cell:cell"
rounds = 120
replicas = 3
seeds = [0, 1]
metrics = ["psi_gap", "dist_sq"]

[instance]
name = "synthetic"

[params]
sleep = {sleep}

[grid]
n = [1, 2, 4]
Q = [1, 2]
eta_a = {etas}

[target]
metric = "psi_gap"
value = 0.05

[report]
tune = ["eta_a"]
"""


@pytest.fixture
def synth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding the synthetic cell module, on sys.path and PYTHONPATH (spawned workers)."""
    mod_dir = tmp_path / "mods"
    mod_dir.mkdir()
    (mod_dir / "sweep_synth_cell.py").write_text(SYNTH_CELL)
    monkeypatch.syspath_prepend(str(mod_dir))
    monkeypatch.setenv("FEDBOUNDS_CELLS", "sweep_synth_cell:cell")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(mod_dir), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return tmp_path


def _spec_text(sleep: float = 0.0, etas: str = "[1.0, 2.0]") -> str:
    return SPEC.format(sleep=sleep, etas=etas)


def _raw(path: Path) -> dict:
    with Store(path, readonly=True) as st:
        assert st.integrity() == "ok"
        return st.raw()


# ---------------------------------------------------------------------------------------------- store


def test_store_is_wal_and_never_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as st:
        kw = {"spec": "x", "config": "{}", "coords": "{}", "result": '{"a":1}', "curves": b"\x00" * 8, "elapsed": 0.1}
        assert st.put("k1", **kw) is True
        assert st.put("k1", **{**kw, "result": '{"a":2}'}) is False
        assert st.count() == 1 and st.keys() == {"k1"}
        assert st.has_keys(["k1", "k2"]) == {"k1"}
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO cells VALUES ('k1', 'x', '{}', '{}', '{}', x'00', 0, 0, '')")
    assert con.execute("SELECT result FROM cells").fetchall() == [('{"a":1}',)]
    con.close()


def test_curves_round_trip_exactly() -> None:
    rng = np.random.default_rng(1)
    curves = {"b": rng.standard_normal(7) * 1e-300, "a": np.array([np.pi, 1e308, -0.0])}
    layout, blob = encode_curves(curves)
    back = decode_curves(layout, blob)
    assert layout["metrics"] == ["a", "b"]
    for k, v in curves.items():
        assert back[k].tobytes() == v.astype("<f8").tobytes()


def test_not_a_store(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ValueError, match="not a sweep store"):
        Store(bad)
    with pytest.raises(ValueError, match="does not exist"):
        Store(tmp_path / "missing.sqlite", readonly=True)


# ---------------------------------------------------------------------------------------------- runner


def test_rerun_computes_only_the_missing_cells(synth: Path) -> None:
    spec = parse_spec(_spec_text())
    store = synth / "s.sqlite"
    first = run_sweep(spec, store, processes=1, progress=False, limit=5)
    assert (first.total, first.already, first.computed) == (24, 0, 5)
    second = run_sweep(spec, store, processes=1, progress=False)
    assert (second.already, second.computed, second.remaining) == (5, 19, 0)
    third = run_sweep(spec, store, processes=1, progress=False)
    assert (third.already, third.computed) == (24, 0)
    with Store(store, readonly=True) as st:
        assert st.keys() == {c.key for c in spec.cells()}
        rows = list(st.rows())
    div = [r for r in rows if r.result["status"] == "diverged"]
    assert div and all(r.result["divergence_round"] == 3 and r.result["rounds_to_target"] is None for r in div)
    ok = [r for r in rows if r.result["status"] == "reached"]
    assert ok and all(r.curves()["psi_gap"].shape == (121,) for r in ok)


def test_cell_errors_are_reported_not_stored(synth: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_path = synth / "err.toml"
    spec_path.write_text(_spec_text().replace("eta_a = [1.0, 2.0]", "eta_a = [1.0, 2.0]\nfail = [false, true]"))
    store = synth / "e.sqlite"
    assert main(["sweep", str(spec_path), "--store", str(store), "--processes", "1", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "24 computed" in out and "ValueError: eta_a is past the stability limit" in out
    with Store(store, readonly=True) as st:
        assert st.count() == 24


def test_every_cell_failing_is_bad_input(synth: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_path = synth / "err.toml"
    spec_path.write_text(_spec_text().replace("sleep = 0.0", "sleep = 0.0\nfail = true"))
    store = synth / "e.sqlite"
    assert main(["sweep", str(spec_path), "--store", str(store), "--processes", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "every cell" in err and "ValueError: eta_a is past the stability limit" in err
    with Store(store, readonly=True) as st:
        assert st.count() == 0


@pytest.mark.slow  # 11 s at load 5-7 (pytest --durations, 2026-12-04)
def test_sigkill_part_way_then_resume_equals_an_uninterrupted_run(synth: Path) -> None:
    """Kill a CLI sweep (parent and workers, SIGKILL) after a few cells are stored; resume; compare with a
    sweep that ran straight through: same keys, identical result bytes, no duplicates, a sound file."""
    spec_path = synth / "slow.toml"
    spec_path.write_text(_spec_text(sleep=0.2, etas="[0.5]"))
    spec = parse_spec(spec_path.read_text())
    killed, straight = synth / "killed.sqlite", synth / "straight.sqlite"

    cmd = [sys.executable, "-m", "fedbounds.checks.cli", "sweep", str(spec_path), "--store", str(killed), "--processes", "2",
           "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stored = 0
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            if killed.exists():
                try:
                    con = sqlite3.connect(f"file:{killed}?mode=ro", uri=True, timeout=5)
                    stored = con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
                    con.close()
                except sqlite3.OperationalError:
                    continue
            if stored >= 3:
                os.killpg(proc.pid, signal.SIGKILL)
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode() if proc.stderr else ""
    with Store(killed, readonly=True) as st:
        assert st.integrity() == "ok"
        part = st.count()
    assert 3 <= part < spec.size

    resumed = run_sweep(spec, killed, processes=1, progress=False)
    assert resumed.already == part and resumed.computed == spec.size - part
    run_sweep(spec, straight, processes=1, progress=False)

    a, b = _raw(killed), _raw(straight)
    assert set(a) == set(b) == {c.key for c in spec.cells()}
    assert a == b
    con = sqlite3.connect(killed)
    assert con.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM cells").fetchone() == (spec.size, spec.size)
    con.close()


@pytest.mark.slow  # 3.6 s in the fresh-clone run of 2026-12-04 (--durations, load 1.0-1.7)
def test_dask_and_local_processes_store_identical_bytes(synth: Path) -> None:
    distributed = pytest.importorskip("distributed")
    spec = parse_spec(_spec_text())
    via_pool, via_dask = synth / "pool.sqlite", synth / "dask.sqlite"
    run_sweep(spec, via_pool, processes=2, progress=False)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        summary = run_sweep(spec, via_dask, client=client, progress=False)
    assert summary.computed == spec.size
    assert _raw(via_pool) == _raw(via_dask)


@pytest.mark.slow
def test_cli_local_dask_cluster_matches_serial(synth: Path) -> None:
    spec_path = synth / "s.toml"
    spec_path.write_text(_spec_text())
    a, b = synth / "a.sqlite", synth / "b.sqlite"
    assert main(["sweep", str(spec_path), "--store", str(a), "--processes", "1", "--no-progress"]) == 0
    assert main(["sweep", str(spec_path), "--store", str(b), "--workers", "2", "--no-progress"]) == 0
    assert _raw(a) == _raw(b)


# ---------------------------------------------------------------------------------------------- CLI + report


def test_cli_malformed_spec_exits_2_naming_the_field(synth: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = synth / "bad.toml"
    bad.write_text(_spec_text().replace("Q = [1, 2]", 'Q = [1, "x"]'))
    assert main(["sweep", str(bad), "--store", str(synth / "x.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "spec field 'grid.Q': expected a list of integers >= 1, got 'x'" in err
    assert not (synth / "x.sqlite").exists()
    assert main(["sweep", str(bad), "--workers", "2", "--scheduler", "tcp://x:1"]) == 2


def test_cli_dry_run_counts(synth: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_path = synth / "s.toml"
    spec_path.write_text(_spec_text())
    store = synth / "s.sqlite"
    run_sweep(parse_spec(spec_path.read_text()), store, processes=1, progress=False, limit=7)
    assert main(["sweep", str(spec_path), "--store", str(store), "--dry-run"]) == 0
    assert "24 cells; 7 stored, 17 missing" in capsys.readouterr().out


def test_report_writes_png_and_csv_with_slopes_near_minus_one(synth: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = parse_spec(_spec_text(etas="[0.5, 1.0, 2.0]"))
    store = synth / "r.sqlite"
    run_sweep(spec, store, processes=1, progress=False)
    out = synth / "rep"
    assert main(["report", str(store), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for name in ("cells.csv", "points.csv", "slopes.csv", "synth_rounds_vs_n.png", "synth_rounds_vs_Q.png", "synth_rounds_vs_product.png"):
        assert (out / name).exists(), name
        assert str(out / name) in printed
    assert (out / "synth_rounds_vs_n.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    cells = list(csv.DictReader((out / "cells.csv").open()))
    assert len(cells) == spec.size
    assert not any("nan" in v.lower() for row in cells for v in row.values())
    diverged = [r for r in cells if r["status"] == "diverged"]
    assert diverged and all(r["divergence_round"] == "3" and r["rounds_to_target"] == "" for r in diverged)

    slopes = {(r["axis"], r["series"]): r for r in csv.DictReader((out / "slopes.csv").open())}
    # the synthetic rounds are ~ 19 / (eta n Q), eta tuned to 1.0 (2.0 diverges): slope -1 up to rounding
    for key in (("n", "Q=1"), ("n", "Q=2"), ("Q", "n=1"), ("n*Q", "all")):
        s = slopes[key]
        assert -1.25 < float(s["slope"]) < -0.75, (key, s)
    points = list(csv.DictReader((out / "points.csv").open()))
    assert len(points) == 6  # 3 x 2 after tuning eta_a
    assert {p["eta_a"] for p in points} <= {"0.5", "1.0", "2.0"}


def test_report_on_missing_or_empty_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "none.sqlite")]) == 2
    Store(tmp_path / "empty.sqlite").close()
    assert main(["report", str(tmp_path / "empty.sqlite")]) == 2
    assert "holds no cells" in capsys.readouterr().err


def test_report_on_a_symlink_loop_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tmp_path / "loop.sqlite"
    loop.symlink_to(loop)
    assert main(["report", str(loop)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "symbolic link that leads nowhere (dangling, or a loop)" in err, err


def test_report_refuses_a_spec_whose_default_store_another_spec_wrote(
    synth: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`fedbounds report SPEC` reads SPEC's default store; a store another spec wrote (renamed or copied there) is
    refused in one line naming both specs and both fingerprints, exit 2, and no report is written."""
    from fedbounds.checks.commands.sweep import default_store

    monkeypatch.chdir(synth)
    writer = parse_spec(_spec_text())
    other_text = _spec_text(etas="[0.5, 1.0]").replace('name = "synth"', 'name = "other"')
    (synth / "other.toml").write_text(other_text)
    other = parse_spec(other_text)
    assert other.fingerprint != writer.fingerprint
    store = default_store(other.name, other.fingerprint)
    store.parent.mkdir(parents=True)
    run_sweep(writer, store, processes=1, progress=False, limit=2)
    capsys.readouterr()
    assert main(["report", "other.toml"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "written by spec 'synth'" in err and writer.fingerprint[:12] in err, err
    assert "spec 'other'" in err and other.fingerprint[:12] in err, err
    assert not any(p.name.endswith("-report") for p in store.parent.iterdir())
    with Store(store, readonly=True) as st:  # the store itself is sound and holds the writer's cells
        assert st.fingerprint() == writer.fingerprint and st.count() == 2


@pytest.mark.slow
def test_a_local_dask_cluster_sweep_prints_nothing_of_dasks_own(synth: Path) -> None:
    """``--workers 2`` (a local Dask cluster): stderr holds the progress lines only, not the workers' heartbeat
    errors and tracebacks when the cluster shuts down."""
    spec_path = synth / "s.toml"
    spec_path.write_text(_spec_text())
    run = subprocess.run([sys.executable, "-m", "fedbounds.checks.cli", "sweep", str(spec_path), "--store", str(synth / "d.sqlite"),
                          "--workers", "2", "--limit", "4"], capture_output=True, text=True, timeout=300, cwd=synth)
    assert run.returncode == 0, run.stderr[-2000:]
    noise = [ln for ln in run.stderr.splitlines() if "distributed" in ln or "Traceback" in ln or " - ERROR - " in ln]
    assert not noise, run.stderr[-3000:]
