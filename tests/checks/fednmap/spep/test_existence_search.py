"""The searches behind Theorem 8's tables, against oracles whose answer is known (docs/fednmap-reconstruction.md §10.9):
the bisection over C_0 (:func:`existence.smallest_c0`), the front's largest rate (:func:`existence.largest_rate`) and
the speedup fit (:func:`speedup.fit_slope`, :func:`existence.speedup_table`). No SDP is solved: ``existence.solve`` is
replaced by a fake whose threshold is set here, so each test checks the search, not a solver."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from fedbounds.checks.fednmap.spep import existence as E
from fedbounds.checks.fednmap.spep.speedup import fit_slope

N, Q, M, RHO = 2, 1, 1, 0.1
FLOOR = 100.0  # the printed floor the fake oracle's K is compared with (printed_floor is replaced by it)


def _c0_of(tau: float) -> float:
    """The C_0 whose Theorem 8 rate is tau eta_hat (r(C_0) = 2 eta_hat mu/(9 (1 + gamma mu C_0)), inverted)."""
    gamma = E.steps(Q, M, RHO)["gamma"]
    return (2 * E.MU / (9 * tau) - 1) / (gamma * E.MU)


def _oracle(monkeypatch: pytest.MonkeyPatch, threshold: float, below: str = "proved") -> list[float]:
    """``solve`` replaced: at C_0 >= threshold the floor K/r is half the printed one (meets), below it twice (fails)
    with status ``below`` (``inconclusive``, ``single solver``: no decision). Returns the C_0 of every call."""
    calls: list[float] = []
    eta_hat = E.steps(Q, M, RHO)["eta_hat"]

    def solve(n: int, q: int, tau: float, *a: Any, **k: Any) -> dict[str, Any]:
        c0 = _c0_of(tau)
        calls.append(c0)
        meets = c0 >= threshold - 1e-9
        K = tau * eta_hat * FLOOR * (0.5 if meets else 2.0)
        status = "proved" if meets else below
        return {"status": status, "K": None if status == "inconclusive" else K, "values": {}, "gaps": {}}

    monkeypatch.setattr(E, "solve", solve)
    monkeypatch.setattr(E, "printed_floor", lambda *a, **k: FLOOR)
    return calls


# ------------------------------------------------------------------------------------------------- smallest_c0


def test_c0_zero_is_probed_first_and_alone_when_it_meets(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _oracle(monkeypatch, 0.0)
    out = E.smallest_c0(N, Q, M, RHO)
    assert out["C_0_min"] == 0.0 and out["status"] == "proved" and out["floor_ratio"] == pytest.approx(0.5)
    assert calls == [pytest.approx(0.0, abs=1e-9)]


@pytest.mark.parametrize("threshold", [0.3, 5.3, 37.0])
def test_the_bisection_brackets_a_known_threshold_within_its_tolerance(monkeypatch: pytest.MonkeyPatch,
                                                                       threshold: float) -> None:
    """The oracle meets exactly from ``threshold`` on: the answer is a window (C_0_low, C_0_min] holding it, no wider
    than ``rel`` C_0_min, whose upper end was probed and met and whose lower end failed (or is 0, never probed as
    meeting)."""
    _oracle(monkeypatch, threshold)
    out = E.smallest_c0(N, Q, M, RHO, rel=0.05)
    lo, hi = out["C_0_low"], out["C_0_min"]
    assert lo < threshold <= hi + 1e-9
    assert hi - lo <= 0.05 * hi
    met = {p["C_0"] for p in out["probes"] if p["outcome"] == "meets"}
    assert hi in met and all(c >= hi for c in met)
    assert lo == 0.0 or any(p["C_0"] == lo and p["outcome"] == "fails" for p in out["probes"])
    assert out["status"] == "proved" and out["floor_ratio"] == pytest.approx(0.5)


def test_a_threshold_beyond_the_range_leaves_no_c0(monkeypatch: pytest.MonkeyPatch) -> None:
    _oracle(monkeypatch, 100.0)
    out = E.smallest_c0(N, Q, M, RHO, c0_max=64.0)
    assert out["C_0_min"] is None and out["status"] is None
    assert out["C_0_low"] == 64.0  # every probe up to c0_max decided to fail: the window is (64, inf)


@pytest.mark.parametrize("below", ["inconclusive", "single solver"])
def test_undecided_probes_never_read_as_failing(monkeypatch: pytest.MonkeyPatch, below: str) -> None:
    """Below the threshold the oracle cannot decide (no certificate; Clarabel alone): those probes are ``unknown``,
    narrow nothing, and the lower end stays 0; the search stops at the first undecided bisection probe and says so."""
    _oracle(monkeypatch, 10.0, below)
    out = E.smallest_c0(N, Q, M, RHO)
    outcomes = [p["outcome"] for p in out["probes"]]
    assert "fails" not in outcomes and "unknown" in outcomes
    assert out["C_0_low"] == 0.0 and out["C_0_min"] == 16.0
    assert out["undecided"] == [p["C_0"] for p in out["probes"] if p["outcome"] == "unknown"]
    assert out["decided"] is False


def test_a_decided_bracket_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    _oracle(monkeypatch, 5.3)
    out = E.smallest_c0(N, Q, M, RHO)
    assert out["decided"] is True and out["undecided"] == []


# ------------------------------------------------------------------------------------------------- largest_rate


def _front_oracle(monkeypatch: pytest.MonkeyPatch, tau_star: float, unknown: tuple[float, float] | None = None) -> None:
    """K* finite (proved) for tau <= tau_star, unbounded above; ``unknown``: an interval of tau left undecided."""

    def solve(n: int, q: int, tau: float, *a: Any, **k: Any) -> dict[str, Any]:
        if unknown is not None and unknown[0] <= tau <= unknown[1]:
            return {"status": "inconclusive", "K": None}
        return {"status": "proved", "K": 1e-5} if tau <= tau_star else {"status": "unbounded", "K": math.inf}

    monkeypatch.setattr(E, "solve", solve)


@pytest.mark.parametrize("tau_star", [0.013, 0.2, 1.31])
def test_largest_rate_brackets_the_front(monkeypatch: pytest.MonkeyPatch, tau_star: float) -> None:
    _front_oracle(monkeypatch, tau_star)
    out = E.largest_rate(N, Q, M, RHO, tau_hi=2.0, rel=0.02)
    assert out["tau_low"] <= tau_star < out["tau_high"]
    assert out["tau_high"] - out["tau_low"] <= 0.02 * out["tau_high"]
    assert out["undecided"] == []


def test_largest_rate_stops_at_an_undecided_probe_without_moving_an_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """An inconclusive probe is neither finite nor unbounded: the bracket keeps its last decided ends (still holding
    the true front) and the probe is listed."""
    _front_oracle(monkeypatch, 0.2, unknown=(0.1, 0.3))
    out = E.largest_rate(N, Q, M, RHO, tau_hi=2.0, rel=0.02)
    assert out["tau_low"] <= 0.2 < out["tau_high"]
    assert out["undecided"] and 0.1 <= out["undecided"][0] <= 0.3
    assert out["tau_high"] - out["tau_low"] > 0.02 * out["tau_high"]  # not narrowed past the undecided probe


def test_largest_rate_asks_for_a_higher_end_when_the_top_is_finite(monkeypatch: pytest.MonkeyPatch) -> None:
    _front_oracle(monkeypatch, 5.0)
    out = E.largest_rate(N, Q, M, RHO, tau_hi=2.0)
    assert out["tau_low"] is None and "raise tau_hi" in out["note"]


# ------------------------------------------------------------------------------------------------- the speedup fit


@pytest.mark.parametrize("a", [1.0, 0.7, 0.32])
def test_fit_recovers_a_known_power(a: float) -> None:
    """Floors 3/n^a, exact: slope -a, the interval (zero residual) collapsing on it."""
    ns = [1, 2, 4, 8, 16, 32]
    fit = fit_slope(ns, [3.0 / n**a for n in ns])
    assert fit["slope"] == pytest.approx(-a, abs=1e-9) and fit["points"] == 6
    assert fit["low"] == pytest.approx(-a, abs=1e-6) and fit["high"] == pytest.approx(-a, abs=1e-6)


def test_fit_interval_covers_the_power_under_noise_and_excludes_a_wrong_one() -> None:
    """Floors 3/n^0.7 times seeded log-normal noise (sd 0.05): the 95% interval holds -0.7 and excludes -1 (a fit
    that only returned -1, or an interval from the wrong degrees of freedom or a missing sqrt, fails this)."""
    rng = np.random.default_rng(20261204)
    ns = [1, 2, 4, 8, 16, 32, 64]
    ys = [3.0 / n**0.7 * math.exp(0.05 * rng.standard_normal()) for n in ns]
    fit = fit_slope(ns, ys)
    assert fit["low"] < -0.7 < fit["high"]
    assert fit["high"] < -0.6 and fit["low"] > -0.8  # the interval is informative, not wide enough to pass anything
    assert not fit["low"] < -1.0 < fit["high"]


def test_fit_interval_has_its_stated_coverage() -> None:
    """Over 1000 seeded replicates of 7 noisy floors, the 95% interval holds the true slope about 95% of the time (an
    interval from the normal quantile instead of Student's t with k - 2 degrees of freedom covers about 89%, a
    standard error without its square root or residual variance far from 95%)."""
    rng = np.random.default_rng(32)
    ns = np.array([1, 2, 4, 8, 16, 32, 64], float)
    hits = 0
    for _ in range(1000):
        fit = fit_slope(list(ns), list(2.0 * ns**-0.9 * np.exp(0.1 * rng.standard_normal(len(ns)))))
        hits += fit["low"] <= -0.9 <= fit["high"]
    assert 0.93 <= hits / 1000 <= 0.97


def test_fit_with_two_points_has_a_slope_but_no_interval() -> None:
    fit = fit_slope([1, 4], [1.0, 0.25])
    assert fit["slope"] == pytest.approx(-1.0) and fit["low"] is None and fit["high"] is None
    assert fit_slope([2], [1.0])["slope"] is None


def test_speedup_table_fits_each_axis(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's fits from a fake oracle whose floor is n^-0.8 Q^-0.5: the n slope of every Q series is -0.8, the
    Q slope of every n series -0.5 (an axis swapped, or a floor not divided by the rate, fails); a point without a
    proof is listed and left out of every fit."""
    from fedbounds.checks.fednmap.spep import reduced

    def point(n: int, q: int, tau: float, *a: Any, k: float = 1.0, **kw: Any) -> dict[str, Any]:
        if q == 8 and n >= 4:
            return {"n": n, "Q": q, "status": "single solver", "K": 1.0, "cpu_s": 0.0}
        r = tau * E.steps(q, k=k)["eta_hat"]
        return {"n": n, "Q": q, "status": "proved", "K": r * n**-0.8 * q**-0.5, "cpu_s": 0.0}

    monkeypatch.setattr(reduced, "point", point)
    monkeypatch.setattr(E, "printed_floor", lambda *a, **k: 1.0)
    monkeypatch.setattr(E, "SPEEDUP_NS", (1, 2, 4, 8))
    out = E.speedup_table()
    fits = {(f["axis"], f["series"]): f for f in out["fits"]}
    for q in (1, 2, 4):
        assert fits[("n", f"Q={q}")]["slope"] == pytest.approx(-0.8, abs=1e-9)
    for n in (1, 2):
        assert fits[("Q", f"n={n}")]["slope"] == pytest.approx(-0.5, abs=1e-9)
    assert fits[("Q", "n=4")]["points"] == 3  # Q = 8 has no proof at n = 4: not fitted
    assert [r["n"] for r in out["rows"] if r["Q"] == 8] == [1, 2, 4, 8]  # but listed
    assert all(s["slope"] == pytest.approx(-0.8, abs=1e-9) for s in out["local_slopes"])
    for r in out["rows"]:  # the floor is K*/r: the fake's K over the rate gives back its floor
        if r["status"] == "proved":
            assert r["floor"] == pytest.approx(r["n"] ** -0.8 * r["Q"] ** -0.5, rel=1e-12)


# ------------------------------------------------------------------------------------------------- a bound with room


def _n1_build() -> tuple[Any, float, float]:
    """The searched PEP at n = Q = 1, the printed steps, Theorem 8's rate at C_0 = 0; its K* (committed table:
    1.6612e-5, proved) and the room floor * r."""
    from fedbounds.checks.fednmap.spep.search import build_search_spep

    p = E.steps(1, 1, 0.1)
    tau = 2 * E.MU / 9
    build = build_search_spep(E.L, 0.1, p["gamma"], p["eta_a"], p["eta_s"], 1, 1, tau, E.MU)
    return build, 1.6612e-5, E.printed_floor(1, 1, 1, 0.1) * tau * p["eta_hat"]


def test_a_bound_with_room_is_proved_without_a_solver_optimum(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No solver value, no multipliers: the interior dual at room/2 alone gives an exact certificate, and the file it
    stores names its problem and verifies against the rebuilt PEP."""
    from fedbounds.checks.pep import certificate as C

    monkeypatch.setattr(C, "STORE", tmp_path)
    build, k_star, _ = _n1_build()
    room = 40 * k_star
    out = E._exact(build, None, None, make=True, room=room)
    assert out is not None and out["status"] == "proved" and out["target"] == "room/2"
    assert k_star <= out["bound"] <= room / 2 * (1 + 1e-5)
    (path,) = tmp_path.glob("*.json.gz")
    assert C.check_problem(C.load(path), path.name)["bound"] == pytest.approx(out["bound"])


def test_a_room_below_the_worst_case_is_not_proved(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Control, changed: the room. room/2 = 0.75 K* is below the worst case: no certificate of it can exist, and
    none is stored."""
    from fedbounds.checks.pep import certificate as C

    monkeypatch.setattr(C, "STORE", tmp_path)
    build, k_star, _ = _n1_build()
    out = E._exact(build, None, None, make=True, room=1.5 * k_star)
    assert out is not None and out["status"].startswith("not proved")
    assert not list(tmp_path.glob("*.json.gz"))


def test_resume_keeps_decided_rows_and_the_front_and_recomputes_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--resume``: a decided committed row is kept as it is, an undecided one and a missing point are computed
    (cheapest first), the rows come out in POINTS order, and the committed front is kept (never recomputed)."""
    done = (2, 1, 1, 0.1)
    open_ = (4, 2, 1, 0.1)
    calls: list[tuple[int, int, int, float]] = []

    def point(n: int, q: int, m: int, rho: float, **k: Any) -> dict[str, Any]:
        calls.append((n, q, m, rho))
        return {"n": n, "Q": q, "m": m, "rho": rho, "C_0_min": 0.0, "decided": True, "status": "proved", "new": True}

    monkeypatch.setattr(E, "point", point)
    monkeypatch.setattr(E, "front", lambda *a, **k: pytest.fail("the kept front was recomputed"))
    resume = {"generated": "then", "front": {"tau_low": 0.125},
              "rows": [{"n": 2, "Q": 1, "m": 1, "rho": 0.1, "C_0_min": 0.0, "status": "proved", "old": True},
                       {"n": 4, "Q": 2, "m": 1, "rho": 0.1, "C_0_min": None, "decided": False, "status": None}]}
    out = E.table(resume=resume)
    assert done not in calls and open_ in calls and len(calls) == len(E.POINTS) - 1
    assert [r["n"] * r["Q"] for r in [dict(zip(("n", "Q"), c[:2])) for c in calls]] == sorted(c[0] * c[1] for c in calls)
    keys = [(r["n"], r["Q"], r["m"], r["rho"]) for r in out["rows"]]
    assert keys == list(E.POINTS)
    assert out["rows"][keys.index(done)].get("old") is True
    assert out["front"]["tau_low"] == 0.125 and out["front"]["front_from"] == "then"


def test_a_time_budget_leaves_rows_that_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no time left, nothing is computed: a committed undecided row stays as it was, a point never computed gets
    a row saying 'not computed' (never a C_0), and the claim's text says the same."""
    from fedbounds.theory.fednmap import theorem8_c0 as T8

    monkeypatch.setattr(E, "point", lambda *a, **k: pytest.fail("computed a point with no time left"))
    monkeypatch.setattr(E, "front", lambda *a, **k: {"tau_low": 0.1})
    kept = {"n": 4, "Q": 2, "m": 1, "rho": 0.1, "C_0_min": None, "C_0_low": 0.0, "decided": False, "status": None,
            "gamma_rho": 0.018, "floor_ratio": None, "probes": [{"C_0": 0.0, "outcome": "unknown"}]}
    out = E.table(resume={"rows": [kept], "front": {"tau_low": 0.1}}, budget_s=0.0)
    by = {(r["n"], r["Q"], r["m"], r["rho"]): r for r in out["rows"]}
    assert by[(4, 2, 1, 0.1)] == kept and len(by) == len(E.POINTS)
    other = by[(1, 1, 1, 0.1)]
    assert other["C_0_min"] is None and other["decided"] is False and other["note"].startswith("not computed")
    monkeypatch.setattr(T8, "table", lambda: out)
    assert "(1, 1, 1, 0.0182): C_0 = not computed in the last run [no verdict]" in T8.table_text()
