"""The proved rows of the committed PEP grids (pep_evidence.json, spep_grid.json) and the prove pass that made them.

Every ``proved`` row must name a committed certificate that the standard-library verifier accepts and whose exact bound
B covers the row's value: B <= value + delta, with |B - value| at most the prover's largest room (B below the value
proves the row's claim with room to spare). A row whose
value is altered, or whose file is missing, fails the same check (negative controls). For a few cheap rows the PEP
rebuilt from the row's point has the certificate's row hash (the pointer is not arbitrary)."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from fedbounds.checks.fednmap import prove_evidence as pe
from fedbounds.checks.pep import certificate as C
from fedbounds.checks.pep.verify_certificate import load, verify


def _grids() -> list[tuple[str, str, dict[str, Any]]]:
    """(grid, table, row) for every row of both committed files."""
    pep = json.loads(pe.PEP_FILE.read_text())
    spep = json.loads(pe.SPEP_FILE.read_text())
    return ([("pep", t, r) for t in pe.PEP_TABLES for r in pep[t]] + [("spep", "rows", r) for r in spep["rows"]])


def _value(grid: str, row: dict[str, Any]) -> float:
    return float(row["value"] if grid == "pep" else row["K"])


@cache
def _verified(name: str, store: Path = C.STORE) -> Fraction:
    """The exact bound a committed certificate proves (the verifier's, not the file's claim)."""
    return Fraction(verify(load(store / name))["bound"])


def check_proved(row: dict[str, Any], value: float, store: Path = C.STORE) -> None:
    """A proved row's claim: its certificate file exists, verifies, and its bound B has B <= value + delta, within the
    prover's largest room of the value either way."""
    proof = row.get("proof") or {}
    assert proof.get("status") == "proved", f"a proved row without a proof record: {proof}"
    path = store / proof["file"]
    assert path.exists(), f"{path.name} is not committed"
    bound = _verified(proof["file"], store)
    assert Fraction(proof["bound_exact"]) == bound
    assert bound <= Fraction(value) + Fraction(proof["delta"]), (value, float(bound), proof["delta"])
    assert abs(bound - Fraction(value)) <= pe.room(value), (value, float(bound))


def test_every_proved_row_names_a_verified_certificate_covering_its_value() -> None:
    rows = [(g, t, r) for g, t, r in _grids() if r["status"] == "proved"]
    assert len(rows) >= 241  # every certified row: pep_evidence's 98 and spep_grid's 143 (the passes of 2026-12-02)
    assert not [r for _, _, r in _grids() if r["status"] == "certified"], "a certified row without an exact certificate"
    for grid, _, row in rows:
        check_proved(row, _value(grid, row))


def test_rows_not_proved_say_why_and_are_not_evidence_of_a_proof() -> None:
    for grid, _, row in _grids():
        proof = row.get("proof")
        if row["status"] == "certified":
            assert proof is not None and proof["status"].startswith("not proved: "), (grid, row)
        elif row["status"] != "proved":
            assert proof is None, (grid, row)


@pytest.mark.parametrize("change", ["value up", "value down", "file missing", "record missing"])
def test_the_check_fails_on_an_altered_row(change: str, tmp_path: Path) -> None:
    """Negative controls: the first proved spep row and the first proved STEPS row, each altered one way."""
    picks = [next((g, r) for g, t, r in _grids() if t == table and r["status"] == "proved") for table in ("STEPS", "rows")]
    for grid, row in picks:
        v = _value(grid, row)
        check_proved(row, v)  # the unaltered row passes
        bad = copy.deepcopy(row)
        store = C.STORE
        if change == "value up":  # the bound is further below it than any room: another PEP's certificate
            v = float(Fraction(bad["proof"]["bound_exact"]) + 2 * pe.room(v))
        elif change == "value down":  # the bound is further above it than the recorded delta
            v = v - 2 * bad["proof"]["delta"]
        elif change == "file missing":
            store = tmp_path
        else:
            del bad["proof"]
        with pytest.raises(AssertionError):
            check_proved(bad, v, store)


@pytest.mark.parametrize(("grid", "table", "where"), [
    ("pep", "DESCENT", {"n": 1, "Q": 1, "T": 1, "k": 1.0}),
    ("pep", "STEPS", {"rho": 0.1, "n": 2, "Q": 1, "T": 1}),
    ("spep", "rows", {"n": 1, "Q": 1, "C_0": 1.0, "C_c": 1e-3}),
    ("spep", "rows", {"n": 2, "Q": 2, "C_0": 1.0, "C_c": 1e-3}),
])
def test_a_rebuilt_row_has_its_certificates_row_hash(grid: str, table: str, where: dict[str, Any]) -> None:
    """The PEP rebuilt from the row's recorded point hashes to the file's name; with C_0 doubled it does not. An
    n = 2, Q = 2 cell is proved on the block builder's PEP (the full PEP, the zero means as rows), the first target."""
    (row,) = [r for g, t, r in _grids() if t == table and all(r[k] == v for k, v in where.items())]
    target = pe.pep_target(table, row) if grid == "pep" else pe.spep_targets(row)[0]
    digest = C.problem_of(target.build).digest
    assert row["proof"]["hash"] == digest and row["proof"]["file"] == f"{digest}.json.gz"
    assert load(C.STORE / row["proof"]["file"])["problem"]["hash"] == digest
    moved = {**row, "C_0": 2 * row["C_0"]}
    other = pe.pep_target(table, moved) if grid == "pep" else pe.spep_targets(moved)[0]
    assert C.problem_of(other.build).digest != digest


def test_a_rerun_attempts_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """Idempotent: on the committed files every certified row is proved or was tried, so a re-run with no budget for
    solves (limit 0) finds nothing left to attempt and changes nothing."""
    for grid, path in (("pep", pe.PEP_FILE), ("spep", pe.SPEP_FILE)):
        data = json.loads(path.read_text())
        before = copy.deepcopy(data)
        summary = pe.prove_grid(data, grid, limit=0, log=lambda s: None)
        assert not any("not attempted (limit)" in c for c in summary["counts"].values()), summary
        assert data == before


def test_a_disagreeing_new_solve_does_not_upgrade_the_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an empty certificate store, the cheapest DESCENT row proves (a file is written); with its value moved by 1%
    (beyond the two-solver tolerance 1e-3) the new Clarabel solve disagrees: not proved, and no file is written."""
    monkeypatch.setattr(C, "STORE", tmp_path)
    (row,) = [r for _, t, r in _grids() if t == "DESCENT" and (r["n"], r["Q"], r["T"], r["k"]) == (1, 1, 1, 1.0)]
    bad = {**row, "value": row["value"] * 1.01}
    rec = pe.prove_row(pe.pep_target("DESCENT", bad))
    assert rec["status"].startswith("not proved: a new Clarabel solve gives") and rec["disagrees"]
    assert list(tmp_path.iterdir()) == []
    good = pe.prove_row(pe.pep_target("DESCENT", row))
    assert good["status"] == "proved" and [p.name for p in tmp_path.iterdir()] == [good["file"]]
    check_proved({"proof": good}, row["value"], tmp_path)


def test_a_bad_limit_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert pe.main(["--limit", "-1"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
