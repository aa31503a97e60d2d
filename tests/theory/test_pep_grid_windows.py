"""The committed threshold tables of FedNMap's PEP grid (``pep_evidence.json``: SMALLEST_C0, STEPS) as windows
(issue 21): written by the three-valued searches, no undecided probe counted as failing, monotone in n.

n clients contain n - 1 (identical clients), so the smallest certified C_0 cannot drop and the largest certified step
cannot grow from n - 1 to n. A window is the pair of decided ends; a pair of windows is contradictory only when both
facing ends are decided and cross. Every window is printed in the failure message, both ends.
"""

from __future__ import annotations

from typing import Any

import pytest
from fedbounds.theory.fednmap import pep_evidence as ev
from fedbounds.theory.fednmap import recovered


def _fmt(pairs: list[dict[str, Any]]) -> str:
    return "\n".join(f"{p}" for p in pairs)


def test_rows_were_written_by_the_three_valued_search() -> None:
    """Every row carries its window's other end and its undecided probes (the table written before the three-valued
    search has neither, and fails here)."""
    assert all("C_0_low" in r and "unknown" in r for r in ev.SMALLEST_C0)
    assert all("k_high" in r and "unknown" in r for r in ev.STEPS)
    assert len(ev.SMALLEST_C0) == 72 and len(ev.STEPS) == 24


def test_no_undecided_probe_is_a_window_end() -> None:
    """A failing end (C_0_low, k_high) is a probe decided to fail, never one of the row's undecided probes; each window
    is ordered (low < high)."""
    for r in ev.SMALLEST_C0:
        assert r["C_0_low"] is None or r["C_0_low"] not in r["unknown"], r
        assert r["C_0_low"] is None or r["C_0"] is None or r["C_0_low"] < r["C_0"], r
    for r in ev.STEPS:
        assert r["k_high"] is None or r["k_high"] not in r["unknown"], r
        assert r["k_high"] is None or r["k"] is None or r["k"] < r["k_high"], r


def test_smallest_c0_windows_are_monotone_in_n() -> None:
    pairs = recovered.smallest_c0_windows()
    decided = [p for p in pairs if p["decided"]]
    assert len(pairs) == 36 and decided, _fmt(pairs)
    bad = [p for p in pairs if not p["consistent"]]
    assert not bad, "n = 2's smallest C_0 below n = 1's failing end:\n" + _fmt(bad)


def test_largest_step_windows_are_monotone_in_n() -> None:
    pairs = recovered.largest_step_windows()
    decided = [p for p in pairs if p["decided"]]
    assert len(pairs) == 12 and decided, _fmt(pairs)
    bad = [p for p in pairs if not p["consistent"]]
    assert not bad, "a larger n certified above a smaller n's failing end:\n" + _fmt(bad)


def _c0_row(n: int, low: float | None, high: float | None, unknown: tuple[float, ...] = ()) -> dict[str, Any]:
    return {"rho": 0.1, "n": n, "Q": 2, "T": 2, "k": 16.0, "C_c": 1.0, "C_0_low": low, "C_0": high,
            "unknown": list(unknown), "status": "certified", "value": 0.9}


def test_window_check_flags_the_old_biased_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: the old table's (Q, T, k) = (2, 2, 16) reading (n = 1 at 0.224 with a failing end above
    n = 2's 0.128) is flagged; the same point with n = 1's lower end undecided (the honest reading of an undecided
    probe) is not, and neither is an n = 2 window above n = 1's."""
    monkeypatch.setattr(ev, "SMALLEST_C0", [_c0_row(1, 0.2, 0.224), _c0_row(2, 0.1, 0.128)])
    (p,) = recovered.smallest_c0_windows()
    assert p["decided"] and not p["consistent"] and p["small"] == (0.2, 0.224) and p["large"] == (0.1, 0.128)
    monkeypatch.setattr(ev, "SMALLEST_C0", [_c0_row(1, None, 0.224, unknown=(0.2,)), _c0_row(2, 0.1, 0.128)])
    (p,) = recovered.smallest_c0_windows()
    assert not p["decided"] and p["consistent"]
    monkeypatch.setattr(ev, "SMALLEST_C0", [_c0_row(1, 0.099, 0.309), _c0_row(2, 0.1, 0.1275)])
    (p,) = recovered.smallest_c0_windows()
    assert p["decided"] and p["consistent"]
    # a row where nothing met brackets nothing: its last failing probe (64, unbounded there) is no lower end
    monkeypatch.setattr(ev, "SMALLEST_C0", [_c0_row(1, 64.0, None), _c0_row(2, 0.1, 0.128)])
    (p,) = recovered.smallest_c0_windows()
    assert p["small"] == (None, None) and not p["decided"] and p["consistent"]
    # a row whose final certificate is not certified has no upper end
    monkeypatch.setattr(ev, "SMALLEST_C0", [_c0_row(1, 0.2, 0.224), {**_c0_row(2, 0.1, 0.128), "status": "inconclusive"}])
    (p,) = recovered.smallest_c0_windows()
    assert p["large"] == (0.1, None) and not p["decided"]


def test_step_window_check_flags_a_larger_n_above(monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control for STEPS: n = 2 certified at k = 200 while n = 1 was decided to fail at 193 is flagged."""
    row = {"rho": 0.1, "Q": 1, "T": 1, "unknown": [], "status": "certified", "value": 0.9}
    monkeypatch.setattr(ev, "STEPS", [{**row, "n": 1, "k": 192.0, "k_high": 193.0}, {**row, "n": 2, "k": 200.0, "k_high": 204.0}])
    (p,) = recovered.largest_step_windows()
    assert p["decided"] and not p["consistent"]
    monkeypatch.setattr(ev, "STEPS", [{**row, "n": 1, "k": 192.0, "k_high": 193.0}, {**row, "n": 2, "k": 190.0, "k_high": 204.0}])
    (p,) = recovered.largest_step_windows()
    assert p["decided"] and p["consistent"]


def test_proved_rows_are_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``proved`` row (certified, and its exact certificate verified) counts as certified in the summaries and as a
    window end; an ``inconclusive`` one does not."""
    row = {"rho": 0.1, "Q": 1, "T": 1, "unknown": [], "value": 0.9, "C_0": 1.0, "C_c": 1.0, "L": 1.0, "gamma": 0.18,
           "eta_hat_printed": 0.002}
    monkeypatch.setattr(ev, "STEPS", [{**row, "n": 1, "k": 192.0, "k_high": 193.0, "status": "proved"},
                                      {**row, "n": 2, "k": 190.0, "k_high": 204.0, "status": "inconclusive"}])
    s = recovered.largest_step_summary()
    assert s["certified"] == 1 and s["k_min"] == 192.0 and "inconclusive" in s["not_certified"][0]
    (p,) = recovered.largest_step_windows()
    assert p["small"] == (192.0, 193.0) and p["large"] == (None, 204.0)


def test_the_claims_quote_both_ends() -> None:
    """The evidence text of both claims states the windows: every certified step row as [k, k_high), and the C_0
    monotonicity count with the number of decided pairs (none inconsistent)."""
    from fedbounds.theory.fednmap.claims import PEP_LARGEST_STEP, PEP_LYAPUNOV_CONSTANTS

    for r in ev.STEPS:
        assert f"k={r['k']:.4g} (window [{r['k']:.4g}, {r['k_high']:.4g}))" in PEP_LARGEST_STEP.evidence, r
    pairs = recovered.smallest_c0_windows()
    decided = sum(p["decided"] for p in pairs)
    assert f"{len(pairs)} point pairs, {decided} with both facing ends decided, 0 of them not monotone" in \
        PEP_LYAPUNOV_CONSTANTS.evidence
