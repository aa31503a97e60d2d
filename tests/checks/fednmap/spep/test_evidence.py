"""The committed stochastic-PEP evidence (theory/fednmap/spep_grid.json, spep_speedup.json) and what the claims read."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fedbounds.checks.fednmap.spep.speedup import fit_slope
from fedbounds.theory.fednmap import stochastic_claims as SC

SPEEDUP = Path(SC.__file__).with_name("spep_speedup.json")


def test_fit_slope_recovers_a_known_power_law() -> None:
    xs = [1, 2, 4, 8, 16]
    fit = fit_slope(xs, [3.0 * x**-1.0 * (1 + 0.01 * (-1) ** i) for i, x in enumerate(xs)])
    assert fit["low"] < -1.0 < fit["high"] and fit["slope"] == pytest.approx(-1.0, abs=0.02)
    assert fit_slope([1, 2], [1.0, 0.5])["low"] is None  # no interval from two points


@pytest.mark.skipif(not SC.GRID_FILE.exists(), reason="no committed grid")
def test_grid_windows() -> None:
    """What the claims say, read from the committed rows: C_0 = 0 has no descent; C_c = 1 violates the floor at n = 2
    (the correction state's noise); small C_c holds; no certified row is 'unknown'."""
    s = SC.summary()
    assert s["certified"] > 0
    for p in s["points"]:
        assert 0.0 in p["C_0_no_descent"]
        if p["n"] > 1:
            assert 1.0 in p["C_c_violated"]
            assert p["C_c_holds"] and min(p["C_c_holds"]) <= 1e-3
        assert p["best"] is not None and p["best"]["floor_ratio"] < 0.05


@pytest.mark.skipif(not SPEEDUP.exists(), reason="no committed speedup table")
def test_speedup_table_is_linear_in_nQ() -> None:
    """K_var gamma n Q / eta_hat^2 is 0.517 at C_0 = 1 (exact at Q = 1 or n = 1, up to 0.535 at
    Q, n >= 2) at every certified (n, Q): linear speedup of the certified noise term; kappa = (1 - 1/n)/Q (the correction noise, no 1/n)."""
    data = json.loads(SPEEDUP.read_text())
    rows = [r for r in data["rows"] if r["K_var"] is not None]
    assert len(rows) >= 6
    for r in rows:
        c = r["K_var_gamma_nQ_over_eta_hat2"]
        if r["Q"] == 1 or r["n"] == 1:
            assert c == pytest.approx(0.517, rel=5e-3)  # exact 1/(n Q) shape
        else:
            assert 0.517 <= c <= 0.55  # a small part that does not shrink as 1/(n Q) (0.520 at (2, 2), 0.535 at (16, 3))
    nq = next(f for f in data["fits"] if f["axis"] == "nQ")
    assert nq["slope"] == pytest.approx(-1.0, abs=0.01) and not math.isnan(nq["slope"])
