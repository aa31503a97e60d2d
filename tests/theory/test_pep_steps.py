"""The largest PEP-certified steps at a user's point (theory/fednmap/pep_steps.py) and their section in
``fedbounds feasible fednmap``.

Expectations come from the rows of ``pep_evidence.STEPS`` (the committed table, which the grid may rewrite: no k is
hard-coded) or from a monkeypatched table whose printed steps are Theorem 5's bounds substituted with sympy ``subs``
+ ``evalf`` (a different code path from the lookup's ``lambdify``), never from the lookup itself.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sympy as sp
from fedbounds.checks.cli import main
from fedbounds.theory.core.symbols import L as L_sym
from fedbounds.theory.core.symbols import Q as Q_sym
from fedbounds.theory.core.symbols import gamma as gamma_sym
from fedbounds.theory.core.symbols import m as m_sym
from fedbounds.theory.core.symbols import rho as rho_sym
from fedbounds.theory.fednmap import formulas as fm
from fedbounds.theory.fednmap import pep_evidence as ev
from fedbounds.theory.fednmap.pep_steps import CertifiedSteps, NotCovered, certified_steps

COVERED = ["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "2", "--Q", "1"]


def _rows(rho: float, n: int, Q: int) -> list[dict[str, Any]]:
    """The committed STEPS rows at (rho, n, Q) (L = 1 on the grid)."""
    return [r for r in ev.STEPS if r["L"] == 1.0 and r["rho"] == rho and r["n"] == n and r["Q"] == Q]


def _all_certified(rows: list[dict[str, Any]]) -> bool:
    return bool(rows) and all(r["status"] in ev.EVIDENCE and r["k"] is not None for r in rows)


def _sym_printed(rho: float, Q: int) -> dict[str, float]:
    """Theorem 5's largest gamma, eta_hat, eta_a at L = 1, m = 1, by sympy substitution at 30 digits."""
    vals = {L_sym: sp.Integer(1), rho_sym: sp.Float(rho, 30), Q_sym: sp.Integer(Q), m_sym: sp.Integer(1)}
    g = fm.theorem5_gamma_max.subs(vals).evalf(30)
    vals[gamma_sym] = g
    return {"gamma": float(g), "eta_hat": float(fm.theorem5_eta_hat_max.subs(vals).evalf(30)),
            "eta_a": float(fm.theorem5_eta_a_max.subs(vals).evalf(30))}


def _row(rho: float, n: int, Q: int, T: int, k: float | None, status: str = "certified", C_0: float = 1.0) -> dict[str, Any]:
    """A STEPS row shaped as pep_grid writes it."""
    p = _sym_printed(rho, Q)
    return {"L": 1.0, "rho": rho, "n": n, "Q": Q, "T": T, "gamma": p["gamma"], "eta_hat_printed": p["eta_hat"],
            "eta_a_printed": p["eta_a"], "k": k, "C_0": C_0, "C_c": 1.0, "solves": 1, "status": status,
            "value": 0.5 if status == "certified" else None, "values": {}, "statuses": {"CLARABEL": "optimal", "SCS": "optimal"},
            "gaps": {"CLARABEL": 1e-9 * T, "SCS": -1e-7 * T}, "gram_dim": 5, "seconds": 0.1}


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A synthetic grid: rho in {0.1, 0.5}, (n, Q) in {(1, 1), (2, 1)}, T in {1, 2, 3} with distinct k per T."""
    rows = [_row(rho, n, Q, T, k, C_0=C_0) for rho in (0.1, 0.5) for (n, Q) in ((1, 1), (2, 1))
            for T, k, C_0 in ((1, 300.0, 1.0), (2, 150.0, 2.0), (3, 250.0, 0.5))]
    monkeypatch.setattr(ev, "STEPS", rows)
    return rows


# --------------------------------------------------------------------------------------------------------------
# the committed table
# --------------------------------------------------------------------------------------------------------------


def test_covered_point_is_the_minimum_over_T_of_the_committed_rows() -> None:
    rows = _rows(0.1, 2, 1)
    got = certified_steps(1.0, 0.1, 2, 1)
    if not _all_certified(rows):  # the grid being regenerated, or a horizon not certified: not covered
        assert isinstance(got, NotCovered)
        return
    k = min(r["k"] for r in rows)
    binding = min((r for r in rows if r["k"] == k), key=lambda r: r["T"])
    assert isinstance(got, CertifiedSteps)
    assert got.k == k and got.ratio == k
    assert got.eta_hat == pytest.approx(k * binding["eta_hat_printed"], rel=1e-12)
    assert got.eta_a == pytest.approx(k * binding["eta_a_printed"], rel=1e-12)
    assert (got.C_0, got.C_c, got.T_binding) == (binding["C_0"], binding["C_c"], binding["T"])
    assert got.T == tuple(sorted(r["T"] for r in rows))
    assert got.status == ("proved" if all(r["status"] == "proved" for r in rows) else "certified")
    worst = {s: max(abs(r["gaps"][s]) for r in rows) for s in rows[0]["gaps"]}
    assert got.max_gap == pytest.approx(worst, rel=1e-15)


def test_scaled_point_has_the_same_k_and_steps_divided_by_L() -> None:
    rows = _rows(0.1, 2, 1)
    got = certified_steps(4.0, 0.4, 2, 1)  # rho/L = 0.1, default gamma = 1/(5(rho+L)) = gamma(L=1)/4
    if not _all_certified(rows):
        assert isinstance(got, NotCovered)
        return
    k = min(r["k"] for r in rows)
    assert isinstance(got, CertifiedSteps) and got.k == k
    assert got.eta_hat == pytest.approx(k * rows[0]["eta_hat_printed"] / 4, rel=1e-12)
    assert got.eta_a == pytest.approx(k * rows[0]["eta_a_printed"] / 4, rel=1e-12)
    assert got.gamma == pytest.approx(rows[0]["gamma"] / 4, rel=1e-12)
    at_1 = certified_steps(1.0, 0.1, 2, 1)
    assert got.eta_hat == pytest.approx(at_1.eta_hat / 4, rel=1e-12)


# --------------------------------------------------------------------------------------------------------------
# a synthetic table: the minimum over T, scaling, off-grid reasons, a horizon not certified, stale evidence
# --------------------------------------------------------------------------------------------------------------


def test_minimum_over_T_and_its_constants(table) -> None:
    got = certified_steps(1.0, 0.1, 2, 1)
    assert isinstance(got, CertifiedSteps)
    assert got.k == 150.0 and got.T_binding == 2 and (got.C_0, got.C_c) == (2.0, 1.0) and got.T == (1, 2, 3)
    printed = _sym_printed(0.1, 1)
    assert got.eta_hat == pytest.approx(150.0 * printed["eta_hat"], rel=1e-12)
    assert got.eta_a == pytest.approx(150.0 * printed["eta_a"], rel=1e-12)
    assert got.max_gap == pytest.approx({"CLARABEL": 3e-9, "SCS": 3e-7}, rel=1e-12)


def test_scaling_on_the_synthetic_table(table) -> None:
    got = certified_steps(4.0, 2.0, 1, 1)  # rho/L = 0.5
    printed = _sym_printed(0.5, 1)
    assert isinstance(got, CertifiedSteps) and got.k == 150.0
    assert got.eta_hat == pytest.approx(150.0 * printed["eta_hat"] / 4, rel=1e-12)
    assert got.eta_a == pytest.approx(150.0 * printed["eta_a"] / 4, rel=1e-12)


def test_gamma_is_matched_to_1e9_relative(table) -> None:
    g = _sym_printed(0.1, 1)["gamma"]
    assert isinstance(certified_steps(1.0, 0.1, 2, 1, gamma=g * (1 - 1e-12)), CertifiedSteps)  # the calculator's default
    off = certified_steps(1.0, 0.1, 2, 1, gamma=g * (1 - 1e-6))
    assert isinstance(off, NotCovered) and off.reason.startswith("gamma L = ")


@pytest.mark.parametrize(
    ("args", "start", "grid"),
    [
        ((1.0, 0.2, 2, 1), "rho/L = 0.2 is off the PEP grid", "{0.1, 0.5}"),
        ((1.0, 0.0, 2, 1), "rho/L = 0 is off the PEP grid", "{0.1, 0.5}"),
        ((1.0, 0.1, 2, 1, 0.1), "gamma L = 0.1 is off the PEP grid", "{0.181818}"),
        ((1.0, 0.1, 5, 1), "n = 5 is off the PEP grid", "{1, 2}"),
        ((1.0, 0.1, 1, 3), "Q = 3 is off the PEP grid", "{1}"),
    ],
)
def test_off_grid_says_which_and_what_the_grid_has(table, args, start, grid) -> None:
    got = certified_steps(*args)
    assert isinstance(got, NotCovered)
    assert got.reason.startswith(start) and grid in got.reason and "\n" not in got.reason


def test_a_pair_off_the_grid(table, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev, "STEPS", [*table, _row(0.1, 1, 2, 1, 100.0)])
    got = certified_steps(1.0, 0.1, 2, 2)  # n = 2 and Q = 2 each on the grid, the pair not
    assert isinstance(got, NotCovered) and got.reason.startswith("(n, Q) = (2, 2) is off the PEP grid")


@pytest.mark.parametrize("status", ["inconclusive", "unbounded", "none"])
def test_one_horizon_not_certified_is_not_covered(table, monkeypatch: pytest.MonkeyPatch, status: str) -> None:
    rows = [dict(r, status=status, k=None if status == "none" else r["k"]) if (r["rho"], r["n"], r["T"]) == (0.1, 2, 3) else r
            for r in table]
    monkeypatch.setattr(ev, "STEPS", rows)
    got = certified_steps(1.0, 0.1, 2, 1)
    assert isinstance(got, NotCovered) and f"T = 3: {status}" in got.reason
    assert isinstance(certified_steps(1.0, 0.1, 1, 1), CertifiedSteps)  # the other (n, Q) is untouched


def test_a_proved_horizon_counts_as_certified(table, monkeypatch: pytest.MonkeyPatch) -> None:
    """``proved`` (certified, plus a verified exact certificate) is evidence; the point's status is its weakest
    horizon's. (Before, a proved row made its point "not covered".)"""
    one = [dict(r, status="proved") if (r["rho"], r["n"], r["T"]) == (0.1, 2, 1) else r for r in table]
    monkeypatch.setattr(ev, "STEPS", one)
    got = certified_steps(1.0, 0.1, 2, 1)
    assert isinstance(got, CertifiedSteps) and got.k == 150.0 and got.status == "certified"
    monkeypatch.setattr(ev, "STEPS", [dict(r, status="proved") for r in table])
    got = certified_steps(1.0, 0.1, 2, 1)
    assert isinstance(got, CertifiedSteps) and got.status == "proved"


def test_stale_evidence_is_not_covered(table, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [dict(r, eta_hat_printed=r["eta_hat_printed"] * 1.01) for r in table]
    monkeypatch.setattr(ev, "STEPS", rows)
    got = certified_steps(1.0, 0.1, 2, 1)
    assert isinstance(got, NotCovered) and "stale" in got.reason


def test_empty_table_is_not_covered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev, "STEPS", [])
    got = certified_steps(1.0, 0.1, 2, 1)
    assert isinstance(got, NotCovered) and "no STEPS rows" in got.reason


@pytest.mark.parametrize("args", [(0.0, 0.1, 1, 1), (1.0, -0.1, 1, 1), (1.0, 0.1, 0, 1), (1.0, 0.1, 1, 1.5), (1.0, 0.1, 1, 1, -1.0)])
def test_bad_input_names_the_parameter(args) -> None:
    with pytest.raises(ValueError, match=r"^(L|rho|n|Q|gamma) must be"):
        certified_steps(*args)


# --------------------------------------------------------------------------------------------------------------
# the CLI section
# --------------------------------------------------------------------------------------------------------------


def test_cli_text_json_and_latex_carry_the_section(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows(0.1, 2, 1)
    assert main(COVERED) == 0
    text = capsys.readouterr().out
    assert "\nPEP-certified steps (" in text
    assert main([*COVERED, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["pep_certified_steps"]
    assert main([*COVERED, "--latex"]) == 0
    tex = capsys.readouterr().out
    assert "% pep_certified_steps" in tex and tex.index("% pep_certified_steps") < tex.index(r"\end{align*}")
    if not _all_certified(rows):
        assert data["covered"] is False and "not covered: " in text
        return
    k = min(r["k"] for r in rows)
    assert data["covered"] is True and data["k"] == k and data["T"] == sorted(r["T"] for r in rows)
    assert data["eta_hat"] == pytest.approx(k * rows[0]["eta_hat_printed"], rel=1e-9)
    assert f"ratio k = {k:.4g}" in text


def test_cli_uncovered_point_and_theorem8(capsys: pytest.CaptureFixture[str], table) -> None:
    assert main(["feasible", "fednmap", "--L", "1", "--rho", "0.2", "--n", "2", "--Q", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["pep_certified_steps"]
    assert data == {"covered": False, "reason": "rho/L = 0.2 is off the PEP grid (grid: rho/L in {0.1, 0.5})"}
    assert main([*COVERED, "--mu", "0.1", "--sigma", "1"]) == 0  # Theorem 8 uses Theorem 5's steps: same section
    out = capsys.readouterr().out
    assert "[fednmap.theorem8]" in out and "ratio k = 150" in out


def test_cli_ds_report_has_no_pep_section(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["feasible", "ds-fedproxgrad", "--L-f", "1", "--L-r", "0.5", "--lam", "0.2", "--G", "1", "--B", "1", "--G-r", "1",
            "--sigma", "1"]
    assert main([*argv, "--json"]) == 0
    assert "pep_certified_steps" not in json.loads(capsys.readouterr().out)


def test_cli_bad_input_is_still_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*COVERED[:-2], "--Q", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Q" in err
