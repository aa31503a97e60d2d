"""The proved rows of the committed PEP grids (pep_evidence.json, spep_grid.json, pep_c0_window.json) and the prove
pass that made them.

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
from fedbounds.checks.fednmap.pep import prove as pe
from fedbounds.checks.pep import certificate as C
from fedbounds.checks.pep.verify_certificate import load, verify


def _grids() -> list[tuple[str, str, dict[str, Any]]]:
    """(grid, table, row) for every row of the three committed files."""
    pep = json.loads(pe.PEP_FILE.read_text())
    spep = json.loads(pe.SPEP_FILE.read_text())
    window = json.loads(pe.WINDOW_FILE.read_text())
    return ([("pep", t, r) for t in pe.PEP_TABLES for r in pep[t]] + [("spep", "rows", r) for r in spep["rows"]]
            + [("window", t, r) for t in pe.WINDOW_TABLES for r in window[t]])


def _value(grid: str, row: dict[str, Any], table: str = "") -> float:
    """The PEP value a row's certificate must cover: pep's value, spep's K; the window's ratio (measure (a)), minus the
    certified exponent (measure (b)), or for its steps rows (which record none) the value the proof names."""
    if grid == "pep":
        return float(row["value"])
    if grid == "spep":
        return float(row["K"])
    if table == "exponent":
        return -float(row["exponent_certified"])
    if table == "steps":
        return float(row["proof"]["value"])
    return float(row["ratio"])


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


@pytest.mark.slow  # 126 s at load 5-7 (pytest --durations, 2026-12-04)
def test_every_proved_row_names_a_verified_certificate_covering_its_value() -> None:
    rows = [(g, t, r) for g, t, r in _grids() if r["status"] == "proved"]
    assert len(rows) >= 241 + 45  # pep_evidence's 98 and spep_grid's 143 (every certified row), 45 of the window's 47
    assert not [r for g, _, r in _grids() if g != "window" and r["status"] == "certified"], \
        "a certified evidence-grid row without an exact certificate"
    for grid, table, row in rows:
        check_proved(row, _value(grid, row, table))


def check_window_claim(table: str, row: dict[str, Any], store: Path = C.STORE) -> None:
    """A proved window row: :func:`check_proved` at its PEP value; a steps row (no recorded ratio, its claim is
    ratio <= 1 at k) also needs the verified bound <= 1."""
    check_proved(row, _value("window", row, table), store)
    if table == "steps":
        assert row["proof"]["ceiling"] == 1.0 and _verified(row["proof"]["file"], store) <= 1


def test_every_proved_window_row_names_a_verified_certificate_covering_its_value() -> None:
    """pep_c0_window.json: 45 of its 47 certified rows proved at the pass of 2026-12-02 (scan 26 of 27, C_c 7 of 7,
    recheck 4 of 4, exponent 6 of 7, steps 2 of 2); each names a committed certificate covering its value."""
    rows = [(t, r) for g, t, r in _grids() if g == "window" and r["status"] == "proved"]
    counts = {t: sum(1 for u, _ in rows if u == t) for t in pe.WINDOW_TABLES}
    assert counts == {"scan": 26, "C_c": 7, "recheck": 4, "exponent": 6, "steps": 2}, counts
    for table, row in rows:
        check_window_claim(table, row)


@pytest.mark.parametrize(("table", "change"), [(t, c) for t in ("scan", "exponent", "steps") for c in
                                               ("value up", "value down", "file missing", "record missing")]
                         + [("steps", "claim below bound")])
def test_the_window_check_fails_on_an_altered_row(table: str, change: str, tmp_path: Path) -> None:
    """Negative controls on the first proved row of a window table: its value (the ratio, the certified exponent, or
    the steps row's proved value) moved above the bound by twice the room or below it by twice the delta, its file missing, its record
    missing; a steps row whose claim were 1 below the bound (ratio <= bound - 1e-9) fails too."""
    row = next(r for g, t, r in _grids() if (g, t) == ("window", table) and r["status"] == "proved")
    check_window_claim(table, row)  # the unaltered row passes
    bad, store = copy.deepcopy(row), C.STORE
    bound, delta = Fraction(row["proof"]["bound_exact"]), row["proof"]["delta"]
    v = _value("window", row, table)
    moved = {"value up": float(bound + 2 * pe.room(v)),  # the bound further below it than any room: another PEP's
             "value down": v - 2 * delta}
    if change in moved:
        if table == "exponent":
            bad["exponent_certified"] = -moved[change]
        elif table == "steps":
            bad["proof"]["value"] = moved[change]
        else:
            bad["ratio"] = moved[change]
    elif change == "file missing":
        store = tmp_path
    elif change == "record missing":
        del bad["proof"]
    else:
        bad["proof"]["ceiling"] = float(bound) - 1e-9
    with pytest.raises((AssertionError, KeyError)):
        check_window_claim(table, bad, store)


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


def _speedup() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(row, solve) for every K of spep_speedup.json (two per (n, Q): C_c = 1e-5, 1e-4)."""
    data = json.loads(pe.SPEEDUP_FILE.read_text())
    return [(r, sv) for r in data["rows"] for sv in r["solves"]]


#: certificates larger than this are verified in the slow run only (the (8, 2) and (8, 3) files: 134-388 kB, about 13 s
#: each for the exact LDL^T of a Gram of 56 or 80 with 1361 or 2743 rows)
BIG_FILE = 100_000


def _small(sv: dict[str, Any]) -> bool:
    return (C.STORE / sv["proof"]["file"]).stat().st_size <= BIG_FILE


@pytest.mark.slow  # 13 s at load 5-7 (pytest --durations, 2026-12-04)
def test_every_speedup_K_at_n_up_to_8_is_proved_or_says_why() -> None:
    """spep_speedup.json at the passes of 2026-12-02: both K of every row at n <= 8 name a verified certificate
    covering K (the files over BIG_FILE in the slow run); above n = 8 (no full PEP at hand) each certified K says so,
    by design."""
    from fedbounds.checks.fednmap.spep.encoding import FULL_ROWS_UP_TO

    pairs = _speedup()
    proved = {(r["n"], r["Q"], sv["C_c"]) for r, sv in pairs if sv["status"] == "proved"}
    assert proved == {(n, Q, cc) for n in (1, 2, 4, 8) for Q in (1, 2, 3) for cc in (1e-5, 1e-4)}
    for _, sv in pairs:
        if sv["status"] == "proved" and _small(sv):
            check_proved(sv, float(sv["K"]))
    for r, sv in pairs:
        if sv["status"] != "certified":
            continue
        why = sv["proof"]["status"]
        assert r["n"] > FULL_ROWS_UP_TO, (r["n"], r["Q"], why)
        assert why.startswith(f"not proved: n = {r['n']} > {FULL_ROWS_UP_TO}") and "by design" in why, why
    assert sum(sv["status"] == "certified" for _, sv in pairs) == 12  # every certified K above n = 8


@pytest.mark.slow  # about 50 s: the exact LDL^T of the four n = 8 files
def test_the_large_speedup_certificates_verify_and_cover_their_K() -> None:
    big = [sv for r, sv in _speedup() if sv["status"] == "proved" and not _small(sv)]
    assert len(big) == 4
    for sv in big:
        check_proved(sv, float(sv["K"]))


@pytest.mark.parametrize("change", ["K up", "K down", "file missing"])
def test_the_speedup_check_fails_on_an_altered_K(change: str, tmp_path: Path) -> None:
    """Negative controls on the n = 4, Q = 2, C_c = 1e-4 K (a block-builder proof)."""
    (sv,) = [sv for r, sv in _speedup() if (r["n"], r["Q"], sv["C_c"]) == (4, 2, 1e-4)]
    check_proved(sv, sv["K"])
    K, store = sv["K"], C.STORE
    if change == "K up":  # the bound further below it than any room
        K = float(Fraction(sv["proof"]["bound_exact"]) + 2 * pe.room(K))
    elif change == "K down":
        K = K - 2 * sv["proof"]["delta"]
    else:
        store = tmp_path
    with pytest.raises(AssertionError):
        check_proved(sv, K, store)


@pytest.mark.parametrize(("grid", "table", "where"), [
    ("window", "scan", {"n": 2, "Q": 1, "C_0": 1.0}),
    ("window", "exponent", {"n": 2, "Q": 1, "C_0": 1.0}),
    ("window", "steps", {"rho": 0.5}),
    ("speedup", "solves", {"n": 2, "Q": 2, "C_c": 1e-4}),
    ("pep", "DESCENT", {"n": 1, "Q": 1, "T": 1, "k": 1.0}),
    ("pep", "STEPS", {"rho": 0.1, "n": 2, "Q": 1, "T": 1}),
    ("spep", "rows", {"n": 1, "Q": 1, "C_0": 1.0, "C_c": 1e-3}),
    ("spep", "rows", {"n": 2, "Q": 2, "C_0": 1.0, "C_c": 1e-3}),
])
def test_a_rebuilt_row_has_its_certificates_row_hash(grid: str, table: str, where: dict[str, Any]) -> None:
    """The PEP rebuilt from the row's recorded point hashes to the file's name; with C_0 doubled it does not. An
    n = 2, Q = 2 cell is proved on the block builder's PEP (the full PEP, the zero means as rows), the first target."""
    if grid == "speedup":  # a K of a speedup row, at the row's (n, Q) and the table's C_0
        (row,) = [{"n": r["n"], "Q": r["Q"], "C_0": 1.0, **sv} for r, sv in _speedup()
                  if all({"n": r["n"], "Q": r["Q"], **sv}[k] == v for k, v in where.items())]
    else:
        (row,) = [r for g, t, r in _grids() if (g, t) == (grid, table) and all(r[k] == v for k, v in where.items())]

    def target(r: dict[str, Any]) -> pe.Target:
        return pe.pep_target(table, r) if grid == "pep" else pe.window_target(table, r) if grid == "window" \
            else pe.speedup_targets(r)[0] if grid == "speedup" else pe.spep_targets(r)[0]

    pb = C.problem_of(target(row).build)
    digest = pb.digest
    assert row["proof"]["hash"] == digest and row["proof"]["file"] == f"{digest}.json.gz"
    cert = load(C.STORE / row["proof"]["file"])
    assert cert["problem"]["hash"] == digest
    # rows, not names: every stored row is a row of the PEP rebuilt from the row's point, and the file's own
    # description of its problem (what the command-line verifier rebuilds; at n = 1 it may be another builder call
    # with the same rows) rebuilds to the same PEP
    C.check_stored(pb, cert)
    assert C.check_problem(cert, row["proof"]["file"])["value"] <= Fraction(cert["bound"])
    tampered = copy.deepcopy(cert)
    tampered["rows"][0]["constant"] = str(Fraction(tampered["rows"][0]["constant"]) + 1)
    with pytest.raises(C.CertificateError, match="not a row of this PEP"):
        C.check_stored(pb, tampered)
    moved = {**row, "C_0": 2 * row["C_0"]}
    if table == "exponent":  # the rebuild checks the recorded Theorem 8 exponent, which moves with C_0
        from fedbounds.checks.fednmap.pep.encoding import theorem5_steps, theorem8_exponent
        from fedbounds.checks.fednmap.pep.window import RHO, K, L

        st = theorem5_steps(L, RHO, row["Q"])
        moved["exponent_theorem8"] = theorem8_exponent(K * st["eta_hat"], row["mu"], st["gamma"], moved["C_0"])
    assert C.problem_of(target(moved).build).digest != digest


def test_every_file_an_evidence_row_names_names_its_problem() -> None:
    """Each certificate an evidence row points to is self-contained: it names a builder of its grid's family (the
    command-line verifier rebuilds it from there; the slow store test does so for every file)."""
    names = {r["proof"]["file"] for _, _, r in _grids() if (r.get("proof") or {}).get("status") == "proved"}
    names |= {sv["proof"]["file"] for _, sv in _speedup() if (sv.get("proof") or {}).get("status") == "proved"}
    assert len(names) >= 200
    for name in sorted(names):
        problem = load(C.STORE / name)["problem"]
        assert problem["hash"] == name[:16] and problem["builder"].startswith("fedbounds.checks.fednmap."), name


def test_a_rerun_attempts_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """Idempotent: on the committed files every certified row is proved or was tried, so a re-run with no budget for
    solves (limit 0) finds nothing left to attempt and changes nothing."""
    for grid, path in pe.GRIDS.items():
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
