"""The command-line certificate verifier: a file is checked against the problem it names (rebuilt), and every damaged
or hostile file ends in one line and exit 2 (unreadable) or 1 (not proved), in bounded time and memory."""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import time
from fractions import Fraction
from pathlib import Path

import pytest
from fedbounds.checks.pep import certificate as C
from fedbounds.checks.pep import verify_certificate as V

#: a small committed certificate (FedNMap's descent PEP at n = Q = T = 1, printed steps), named in the evidence
SMALL = "f5f1b760880b146f"
OTHER = "ecf94b1e76655d9c"  # the same family at 4x the steps: another problem's valid certificate


def _cert(name: str = SMALL) -> dict:
    return C.load(C.stored(name))


def _write(path: Path, cert: object) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump(cert, fh)
    return path


def _run(capsys, *args: str) -> tuple[int, str]:
    code = V.main(list(args))
    out = capsys.readouterr()
    lines = [s for s in (out.out + out.err).splitlines() if s]
    assert len(lines) == len([a for a in args if not a.startswith("--")]), lines  # one line per file, no traceback
    return code, lines[-1]


def test_the_committed_file_verifies_against_its_rebuilt_problem(tmp_path: Path, capsys) -> None:
    code, line = _run(capsys, str(C.stored(SMALL)))
    assert code == 0 and "build_lyapunov_pep" in line and SMALL in line


# ------------------------------------------------------------------------------------------------------------------
# tampered certificates: each one still passes the rows-only arithmetic (so only the rebuild can refuse it)
# ------------------------------------------------------------------------------------------------------------------
def _gram_diagonal_plus_one(cert: dict) -> dict:
    """An easier problem: a Gram diagonal coefficient of the row with the largest multiplier y raised by 1 (S gains y
    on the diagonal: still PSD, so the arithmetic still passes)."""
    k = max(range(len(cert["rows"])), key=lambda k: Fraction(cert["rows"][k]["y"]))
    row = cert["rows"][k]
    diag = [e for e in row["gram"] if e[0] == e[1]]
    if diag:
        diag[0][2] = str(Fraction(diag[0][2]) + 1)
    else:
        row["gram"] = sorted([*row["gram"], [0, 0, "1"]])
    return cert


def _constant_shifted_bound_lowered(cert: dict) -> dict:
    """A constant of a used row shifted by +1 and the bound lowered by its multiplier: V = -sum y c drops by y."""
    k = max(range(len(cert["rows"])), key=lambda k: Fraction(cert["rows"][k]["y"]))
    y = Fraction(cert["rows"][k]["y"])
    cert["rows"][k]["constant"] = str(Fraction(cert["rows"][k]["constant"]) + 1)
    cert["bound"] = str(Fraction(cert["bound"]) - y)
    return cert


def _fabricated_one_row(cert: dict) -> dict:
    """'tau - B <= 0' with multiplier 1: proves tau <= B for any B, about a PEP of that single row."""
    out = dict(cert, bound="-1", rows=[{"kind": "inequality", "y": "1", "gram": [], "values": [[0, "1"]], "constant": "1"}])
    return out


def _problem_parameter_changed(cert: dict) -> dict:
    """The description of another problem (C_0 = 2 instead of 1) in front of the same rows."""
    for p in cert["problem"]["parameters"]:
        if p[0] == "C_0":
            p[2] = "2"
    return cert


def _builder_not_ours(cert: dict) -> dict:
    cert["problem"]["builder"] = "os:system"
    return cert


def _description_removed(cert: dict) -> dict:
    cert["problem"] = {"hash": cert["problem"]["hash"], "rows_total": cert["problem"]["rows_total"]}
    return cert


TAMPER = {
    "gram diagonal + 1": (_gram_diagonal_plus_one, SMALL, "row \\d+ of the certificate is not a row of this PEP"),
    "constant shifted, bound lowered": (_constant_shifted_bound_lowered, SMALL, "is not a row of this PEP"),
    "fabricated one-row certificate": (_fabricated_one_row, SMALL, "(sizes differ|not a row of this PEP)"),
    "another problem's parameters": (_problem_parameter_changed, SMALL, "recorded hash .* is not the rebuilt problem's"),
    "builder outside the project": (_builder_not_ours, SMALL, "not a fedbounds.checks module:function"),
    "description removed": (_description_removed, SMALL, "names no builder"),
}


@pytest.mark.parametrize("kind", sorted(TAMPER))
def test_a_tampered_certificate_is_refused_by_the_command(kind: str, tmp_path: Path, capsys) -> None:
    tamper, name, message = TAMPER[kind]
    path = _write(tmp_path / f"{name}.json.gz", tamper(copy.deepcopy(_cert(name))))
    code, line = _run(capsys, str(path))
    assert code == 1, line
    assert "NOT PROVED" in line
    assert re.search(message, line), line
    if kind not in ("builder outside the project", "description removed", "another problem's parameters"):
        code, line = _run(capsys, "--rows-only", str(path))  # the arithmetic alone accepts it: only the rebuild refuses
        assert code == 0, line


def test_a_zeroed_hash_and_a_renamed_file_are_refused(tmp_path: Path, capsys) -> None:
    cert = _cert()
    cert["problem"]["hash"] = "0" * 16
    path = _write(tmp_path / ("0" * 16 + ".json.gz"), cert)
    code, line = _run(capsys, str(path))
    assert code == 1 and "recorded hash '0000000000000000' is not the rebuilt problem's" in line
    assert V.main(["--rows-only", str(path)]) == 0
    capsys.readouterr()
    # the true hash inside, a wrong name outside
    path = _write(tmp_path / ("0" * 16 + ".json.gz"), _cert())
    code, line = _run(capsys, str(path))
    assert code == 1 and "file's name" in line


def test_another_problems_valid_certificate_under_this_name_is_refused(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path / f"{SMALL}.json.gz", _cert(OTHER))
    code, line = _run(capsys, str(path))
    assert code == 1 and f"file's name {SMALL}.json.gz is not the rebuilt problem's hash {OTHER}" in line


def test_a_certificate_of_an_old_builder_version_is_refused(tmp_path: Path, capsys) -> None:
    cert = _cert()
    cert["problem"]["builder_version"] = 0
    code, line = _run(capsys, str(_write(tmp_path / f"{SMALL}.json.gz", cert)))
    assert code == 1 and "version 0; the builder is now version 1" in line


# ------------------------------------------------------------------------------------------------------------------
# bounded input: one line, exit 2 (or 1), within seconds
# ------------------------------------------------------------------------------------------------------------------
def _tiny(**over: object) -> dict:
    """A one-point, one-value certificate of tau <= 1 (rows-only: it names no problem)."""
    cert = {"format": V.FORMAT, "points": 1, "values": 1, "objective": 0, "bound": "1",
            "rows": [{"kind": "inequality", "y": "1", "gram": [], "values": [[0, "1"]], "constant": "-1"}]}
    cert.update(over)
    return cert


def _hostile(tmp_path: Path, kind: str) -> Path:
    p = tmp_path / "c.json"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "/dev/zero":
        return Path("/dev/zero")
    elif kind == "folder":
        p.mkdir()
    elif kind == "gzip bomb":
        p = tmp_path / "c.json.gz"
        with gzip.open(p, "wb", compresslevel=9) as fh:
            for _ in range(3):
                fh.write(b" " * 2**20)
    elif kind == "truncated gz":
        p = tmp_path / "c.json.gz"
        p.write_bytes(gzip.compress(json.dumps(_tiny()).encode())[:-12])
    elif kind == "top-level list":
        p.write_text("[1, 2]")
    elif kind == "null":
        p.write_text("null")
    elif kind == "deep array":
        p.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "huge exponent":
        p.write_text(json.dumps(_tiny(rows=[dict(_tiny()["rows"][0], y="1e100000000")])))
    elif kind == "too many digits":
        p.write_text(json.dumps(_tiny(bound="9" * 5000)))
    elif kind == "zero denominator bound":
        p.write_text(json.dumps(_tiny(bound="1/0")))
    elif kind == "zero denominator multiplier":
        p.write_text(json.dumps(_tiny(rows=[dict(_tiny()["rows"][0], y="1/0")])))
    elif kind == "points 4.7":
        p.write_text(json.dumps(_tiny(points=4.7)))
    elif kind == "points 10^20":
        p.write_text(json.dumps(_tiny(points=10**20)))
    elif kind == "points 10^9":
        p.write_text(json.dumps(_tiny(points=10**9)))
    elif kind == "points true":
        p.write_text(json.dumps(_tiny(points=True)))
    elif kind == "index a string":
        p.write_text(json.dumps(_tiny(rows=[dict(_tiny()["rows"][0], values=[["0", "1"]])])))
    elif kind == "missing":
        pass
    else:  # pragma: no cover
        raise AssertionError(kind)
    return p


HOSTILE = ("fifo", "/dev/zero", "folder", "gzip bomb", "truncated gz", "top-level list", "null", "deep array",
           "huge exponent", "too many digits", "zero denominator bound", "zero denominator multiplier", "points 4.7",
           "points 10^20", "points 10^9", "points true", "index a string", "missing")


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_file_ends_in_one_line_and_exit_2(kind: str, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(V, "MAX_JSON_BYTES", 2**20)  # the bomb: 3 MiB of spaces against a 1 MiB cap (the test stays cheap)
    path = _hostile(tmp_path, kind)
    t0 = time.perf_counter()
    code, line = _run(capsys, "--rows-only", str(path))
    assert time.perf_counter() - t0 < 5
    assert code == 2 and "unreadable certificate" in line, line
    assert "Traceback" not in line


def test_the_rows_only_arithmetic_still_decides_a_good_tiny_file(tmp_path: Path, capsys) -> None:
    p = tmp_path / "c.json"
    p.write_text(json.dumps(_tiny()))
    assert _run(capsys, "--rows-only", str(p))[0] == 0
    p.write_text(json.dumps(_tiny(bound="1/2")))  # the control: the same file with a bound below its value
    code, line = _run(capsys, "--rows-only", str(p))
    assert code == 1 and "(iii) fails" in line


def test_a_gzip_bomb_stops_at_the_real_cap(tmp_path: Path, capsys) -> None:
    """20 MiB of zeros (20 kB compressed) against the 16 MiB cap: refused at the cap, not read whole."""
    p = tmp_path / "bomb.json.gz"
    p.write_bytes(gzip.compress(b"0" * (V.MAX_JSON_BYTES + 4 * 2**20), compresslevel=9))
    assert p.stat().st_size < 100_000
    code, line = _run(capsys, str(p))
    assert code == 2 and f"decompresses to more than {V.MAX_JSON_BYTES} bytes" in line


def test_the_command_line_refuses_in_one_line_without_a_traceback(tmp_path: Path) -> None:
    """``python -m`` runs the module as __main__: its refusals must still be one line and exit 1 (a second copy of
    the module once let the rebuild's CertificateError escape as a traceback)."""
    import subprocess
    import sys

    bad = _write(tmp_path / f"{SMALL}.json.gz", _description_removed(copy.deepcopy(_cert())))
    good = C.stored(SMALL)
    run = subprocess.run([sys.executable, "-m", "fedbounds.checks.pep.verify_certificate", str(good), str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and not run.stderr.strip(), run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 2 and ": proved:" in lines[0] and "NOT PROVED: the file names no builder" in lines[1]


# ------------------------------------------------------------------------------------------------------------------
# bounded arithmetic: a file within the parser's caps is still decided in seconds
# ------------------------------------------------------------------------------------------------------------------
def _hostile_arithmetic(points: int = 512, digits: int = 2000) -> dict:
    """512 points, multipliers 1/q with q of 2000 digits, a dense PSD Gram block on the first 192 points (60-digit
    coefficients, a dominant diagonal), the value part cancelling: a valid-looking file whose sums carry the product
    of the q's and whose exact LDL^T, a dense 192 x 192 one, would take hours."""
    import random

    rnd = random.Random(7)
    q = [str(rnd.randrange(10 ** (digits - 1), 10**digits) | 1) for _ in range(2)]
    dense = [[i, j, str(10**63 if i == j else rnd.randrange(10**59, 10**60))] for i in range(192) for j in range(i, 192)]
    rows = [{"kind": "inequality", "y": f"1/{q[0]}", "gram": [[0, 0, "1"]], "values": [], "constant": "0"},
            {"kind": "inequality", "y": f"1/{q[1]}", "gram": dense, "values": [[0, q[1]]], "constant": "0"}]
    return {"format": V.FORMAT, "points": points, "values": 1, "objective": 0, "bound": "0", "rows": rows}


def test_a_hostile_512_point_file_of_2000_digit_numbers_is_refused_in_seconds(tmp_path: Path) -> None:
    """Within every parser cap (points, digits per number, bytes), yet hours of exact arithmetic: refused in one
    line, exit 2, in seconds (a child process with a time limit, so that a verifier without the bound fails here)."""
    import subprocess
    import sys

    path = _write(tmp_path / "hostile.json.gz", _hostile_arithmetic())
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "fedbounds.checks.pep.verify_certificate", "--rows-only", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert time.perf_counter() - t0 < 30
    lines = (run.stdout + run.stderr).splitlines()
    assert run.returncode == 2 and len(lines) == 1, lines
    assert "unreadable certificate" in lines[0] and f"grows past {V.MAX_SUM_BITS} bits" in lines[0], lines


def test_the_total_digits_and_the_ldlt_work_are_bounded_before_the_arithmetic(tmp_path: Path, capsys, monkeypatch) -> None:
    """Each cap refuses, in one line and exit 2, a file just past it; the same file under the cap is decided."""
    p = tmp_path / "c.json"
    p.write_text(json.dumps(_tiny(rows=[{"kind": "inequality", "y": "1", "gram": [[0, 0, "3"], [0, 1, "2"], [1, 1, "3"]],
                                          "values": [[0, "1"]], "constant": "-1"}], points=2)))
    assert _run(capsys, "--rows-only", str(p))[0] == 0
    monkeypatch.setattr(V, "MAX_TOTAL_DIGITS", 6)  # the rows' numbers hold 7 digits ("1", "3", "2", "3", "1", "-1")
    code, line = _run(capsys, "--rows-only", str(p))
    assert code == 2 and "7 digits in all, more than 6" in line, line
    monkeypatch.setattr(V, "MAX_TOTAL_DIGITS", 7)
    monkeypatch.setattr(V, "MAX_LDLT_WORK", V.ldlt_work(2, 2) * 0.99)  # [[3, 1], [1, 3]]: 2 x 2 of 2-bit integers
    code, line = _run(capsys, "--rows-only", str(p))
    assert code == 2 and "exceed the work budget" in line, line
    monkeypatch.setattr(V, "MAX_LDLT_WORK", V.ldlt_work(2, 2))
    assert _run(capsys, "--rows-only", str(p))[0] == 0


def _psd_by_minors(M: list[list[Fraction]]) -> bool:
    """Independent of the elimination: a symmetric matrix is PSD iff every principal minor is >= 0."""
    import itertools

    def det(A: list[list[Fraction]]) -> Fraction:
        A, out = [r[:] for r in A], Fraction(1)
        for c in range(len(A)):
            p = next((r for r in range(c, len(A)) if A[r][c] != 0), None)
            if p is None:
                return Fraction(0)
            if p != c:
                A[c], A[p], out = A[p], A[c], -out
            out *= A[c][c]
            for r in range(c + 1, len(A)):
                f = A[r][c] / A[c][c]
                A[r] = [a - f * b for a, b in zip(A[r], A[c], strict=True)]
        return out

    n = len(M)
    return all(det([[M[i][j] for j in idx] for i in idx]) >= 0 for k in range(1, n + 1) for idx in itertools.combinations(range(n), k))


def test_the_fraction_free_ldlt_agrees_with_the_principal_minors() -> None:
    """Random small symmetric rational matrices (B B^T of rank 1..5, half of them with one diagonal entry lowered)."""
    import random

    rnd = random.Random(3)
    seen = set()
    for _ in range(40):
        n, k = 5, rnd.randint(1, 5)
        B = [[Fraction(rnd.randint(-9, 9), rnd.randint(1, 9)) for _ in range(k)] for _ in range(n)]
        M = [[sum((B[i][t] * B[j][t] for t in range(k)), Fraction(0)) for j in range(n)] for i in range(n)]
        if rnd.random() < 0.5:
            i = rnd.randrange(n)
            M[i][i] -= Fraction(1, rnd.randint(1, 50))
        got, pivots = V.ldlt_psd(M)
        assert got == _psd_by_minors(M), M
        assert all(p > 0 for p in pivots)
        seen.add(got)
    assert seen == {True, False}
