"""The verifier over many files (the store): files verified in parallel processes, one line each in the order given,
the same statuses as one at a time, Ctrl-C ends it with 130 and leaves no process behind; and its exact PSD test in
integers decides exactly as the rational LDL^T does, with the same pivots."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from fedbounds.checks.pep import certificate as C
from fedbounds.checks.pep import verify_certificate as V


def _ldlt_fractions(S: list[list[Fraction]]) -> tuple[bool, list[Fraction]]:
    """The reference: LDL^T in fractions with the same symmetric pivoting (largest remaining diagonal, first on ties)."""
    A = [row[:] for row in S]
    alive, pivots = list(range(len(S))), []
    while alive:
        p = max(alive, key=lambda i: A[i][i])
        d = A[p][p]
        if d < 0:
            return False, pivots
        if d == 0:
            return all(A[i][j] == 0 for i in alive for j in alive), pivots
        pivots.append(d)
        alive.remove(p)
        for i in alive:
            f = A[p][i] / d
            for j in alive:
                A[i][j] -= f * A[p][j]
    return True, pivots


def _matrix(rng: random.Random) -> list[list[Fraction]]:
    """A symmetric rational matrix: B^T B of a random rank (PSD, often singular), sometimes with one entry moved
    (mostly not PSD), with denominators that differ by entry."""
    n, r = rng.randint(1, 7), rng.randint(0, 7)
    B = [[Fraction(rng.randint(-9, 9), rng.choice((1, 2, 3, 7, 10**6))) for _ in range(n)] for _ in range(r)]
    S = [[sum((B[k][i] * B[k][j] for k in range(r)), Fraction(0)) for j in range(n)] for i in range(n)]
    if rng.random() < 0.6:
        i, j = rng.randrange(n), rng.randrange(n)
        delta = Fraction(rng.randint(-3, 3), rng.choice((1, 5, 10**12)))
        S[i][j] += delta
        if i != j:
            S[j][i] += delta
    return S


def test_the_integer_ldlt_decides_and_pivots_as_the_rational_ldlt() -> None:
    rng = random.Random(20261204)
    seen = {True: 0, False: 0}
    for _ in range(400):
        S = _matrix(rng)
        want = _ldlt_fractions(S)
        assert V.ldlt_psd([row[:] for row in S]) == want, S
        seen[want[0]] += 1
    assert min(seen.values()) > 40  # both answers are exercised
    # ties, zero pivots with a zero or a nonzero remaining row, a tiny negative determinant
    one = Fraction(1)
    assert V.ldlt_psd([[one, one], [one, one]]) == (True, [one])
    assert V.ldlt_psd([[one, one], [one, one - Fraction(1, 10**30)]]) == _ldlt_fractions([[one, one], [one, one - Fraction(1, 10**30)]])
    assert V.ldlt_psd([[Fraction(0), one], [one, Fraction(0)]]) == (False, [])


def _rows_only_files(tmp_path: Path) -> list[str]:
    """Four small committed files, one with a constant lowered (not proved), one that is not JSON, one missing."""
    small = [str(p) for p in sorted(C.STORE.glob("*.json.gz"), key=lambda p: p.stat().st_size)[:4]]
    cert = C.load(small[1])
    k = max(range(len(cert["rows"])), key=lambda k: Fraction(cert["rows"][k]["y"]))
    cert["rows"][k]["constant"] = str(Fraction(cert["rows"][k]["constant"]) - 1)
    bad = tmp_path / "bad.json.gz"
    with gzip.open(bad, "wt", encoding="utf-8") as fh:
        json.dump(cert, fh)
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    return [small[0], str(bad), small[2], str(junk), str(tmp_path / "missing.json.gz"), small[3]]


def _lines(text: str) -> list[str]:
    return [re.sub(r"[0-9.]+ s;", "T s;", s) for s in text.splitlines() if s]  # the timing is the only difference


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: the verifier runs the files one at a time")
def test_files_in_parallel_print_the_serial_lines_in_the_given_order(tmp_path: Path, capsys, monkeypatch) -> None:
    files = _rows_only_files(tmp_path)
    assert V.main(["--rows-only", *files]) == 2
    pooled = capsys.readouterr()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert V.main(["--rows-only", *files]) == 2
    serial = capsys.readouterr()
    assert _lines(pooled.out) == _lines(serial.out) and _lines(pooled.err) == _lines(serial.err)
    out, err = _lines(pooled.out), _lines(pooled.err)
    assert [s.split(":")[0] for s in out] == [files[0], files[1], files[2], files[5]]  # the given order
    assert ": proved:" in out[0] and "NOT PROVED: (iii) fails" in out[1] and ": proved:" in out[3]
    assert [s.split(":")[0] for s in err] == [files[3], files[4]] and all("unreadable certificate" in s for s in err)
    assert "Traceback" not in pooled.err


def _children(pid: int) -> set[int]:
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(d.name))
    return out


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not Path("/proc/self/stat").exists(), reason="needs 2 CPUs and /proc")
def test_ctrl_c_exits_130_in_one_go_and_leaves_no_worker(tmp_path: Path) -> None:
    # the two largest files take seconds each, rows-only, so the workers are busy when Ctrl-C comes (to the whole
    # process group, as a terminal sends it)
    big = [str(p) for p in sorted(C.STORE.glob("*.json.gz"), key=lambda p: -p.stat().st_size)[:2]]
    proc = subprocess.Popen([sys.executable, "-m", "fedbounds.checks.pep.verify_certificate", "--rows-only", *big, *big],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            workers |= _children(proc.pid)
        assert len(workers) >= 2 and proc.poll() is None, "the workers never started"
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    deadline = time.monotonic() + 10
    while workers and time.monotonic() < deadline:
        workers = {w for w in workers if _alive(w)}
        time.sleep(0.1)
    assert not workers, f"left behind: {sorted(workers)}"


def test_an_address_space_limit_too_small_for_the_rebuild_is_refused_at_once(tmp_path: Path) -> None:
    """Under ulimit -v 300000 the rebuild's imports could hang for good in OpenBLAS's start-up; the verifier refuses the
    limit first (one line, exit 3), and ``--rows-only``, which loads no numerical library, still decides the file."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (300000 * 1024, resource.RLIM_INFINITY))

    one = str(min(C.STORE.glob("*.json.gz"), key=lambda p: p.stat().st_size))
    cmd = [sys.executable, "-m", "fedbounds.checks.pep.verify_certificate"]
    got = subprocess.run([*cmd, one], preexec_fn=limit, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert got.returncode == 3 and len(got.stderr.strip().splitlines()) == 1, got.stderr
    assert "ulimit -v 300000" in got.stderr and "--rows-only" in got.stderr
    rows = subprocess.run([*cmd, "--rows-only", one], preexec_fn=limit, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert rows.returncode == 0, rows.stderr
