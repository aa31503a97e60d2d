"""The committed linear-speedup study (results/fednmap_speedup/) is reproducible: a slice of its cells, rebuilt
from the committed spec with the same seed, gives the committed numbers exactly; the committed tables agree
with each other."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from fedbounds.checks.sweep.runner import execute
from fedbounds.checks.sweep.spec import load_spec

RESULTS = Path(__file__).resolve().parents[3] / "results" / "fednmap_speedup"
#: a cheap slice (188 rounds or fewer): every method once, the two (n, Q) points and both step constants each twice
#: (16 cells cost 25 s on 2 slow cores; these 4 cover every method, point and constant)
SLICE = [
    ("fednmap", 32, 8, 0.0014),
    ("fednmap_nocorr", 64, 4, 0.002),
    ("fedavg_prox", 32, 8, 0.002),
    ("scaffold_prox", 64, 4, 0.0014),
]

pytestmark = pytest.mark.skipif(not (RESULTS / "cells.csv").exists(), reason="the study's results are not committed yet")


def _committed() -> dict[tuple, dict]:
    with (RESULTS / "cells.csv").open() as fh:
        return {(r["method"], int(r["n"]), int(r["Q"]), float(r["eta_s"])): r for r in csv.DictReader(fh)}


def _num(text: str) -> float | None:
    return None if text == "" else float(text)


@pytest.mark.slow  # 67 s at load 5-7 (pytest --durations, 2026-12-04)
def test_a_slice_rebuilt_from_the_committed_spec_matches_the_committed_cells() -> None:
    committed = _committed()
    cells = {(c.coords["method"], c.coords["n"], c.coords["Q"], c.coords["eta_s"]): c for c in load_spec("fednmap_speedup").iter_cells()}
    for key in SLICE:
        out = execute(cells[key].config)  # as the sweep's workers run it: BLAS on one thread, serialised result
        assert out.error is None, out.error
        res = json.loads(out.result)
        row = committed[key]
        assert res["decision"] == row["decision"], key
        assert res["rounds_to_target"] == _num(row["rounds_to_target"]), key
        assert [res["rtt_ci"][0], res["rtt_ci"][1]] == [_num(row["ci_low"]), _num(row["ci_high"])], key
        assert res["replicas_used"] == int(row["replicas_used"]), key
        assert res["floor"][0] == float(row["floor"]), key


def test_committed_points_are_the_best_step_constant_of_the_committed_cells() -> None:
    committed = _committed()
    with (RESULTS / "points.csv").open() as fh:
        points = list(csv.DictReader(fh))
    assert len(points) == 4 * 7 * 6
    for p in points:
        # where eta_s = min(s n Q, 2) is capped for both constants the two are one configuration, stored once
        keys = [(p["method"], int(p["n"]), int(p["Q"]), s) for s in (0.0014, 0.002)]
        cands = [committed[k] for k in keys if k in committed]
        assert cands
        reached = [int(c["rounds_to_target"]) for c in cands if c["decision"] == "reached"]
        if reached:
            assert p["decision"] == "reached" and int(p["rounds_to_target"]) == min(reached)
        else:
            assert p["decision"] != "reached"


def test_committed_slopes_refit_from_the_committed_points() -> None:
    with (RESULTS / "points.csv").open() as fh:
        points = [r for r in csv.DictReader(fh) if r["decision"] == "reached"]
    with (RESULTS / "slopes.csv").open() as fh:
        slopes = {(r["method"], r["axis"], r["series"]): r for r in csv.DictReader(fh)}
    for method in ("fednmap", "fednmap_nocorr"):
        pts = [p for p in points if p["method"] == method]
        x = np.log([float(p["nQ"]) for p in pts])
        y = np.log([float(p["rounds_to_target"]) for p in pts])
        slope = np.polyfit(x, y, 1)[0]  # an independent least-squares fit
        row = slopes[(method, "nQ", "all")]
        assert math.isclose(float(row["slope"]), slope, rel_tol=1e-9)
        assert float(row["boot_low"]) <= float(row["slope"]) <= float(row["boot_high"])
