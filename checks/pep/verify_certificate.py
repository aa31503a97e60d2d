"""Verifier of an exact PEP certificate: the arithmetic in the standard library alone (``fractions``, ``json``,
``zlib``), no solver; the check that the file is of its stated problem rebuilds that problem with the project's builder.

What a certificate proves. A PEP (Drori and Teboulle 2014; Taylor, Hendrickx and Glineur 2017) is the SDP

    sup tau  over  G >= 0 (Gram matrix of the leaf points), F (leaf function values, tau among them),
             subject to  <A_k, G> + a_k . F + c_k <= 0  (inequality rows),  = 0  (equality rows).

A certificate lists some of its rows (exact rationals) with a multiplier y_k each (y_k >= 0 on inequality rows) and
a claimed ``bound``. Summing the rows with these weights, if

  (i)   the F-part cancels exactly:  e_tau = sum_k y_k a_k   (e_tau picks tau out of F),
  (ii)  S = sum_k y_k A_k is positive semidefinite (checked by an exact rational LDL^T with symmetric pivoting),
  (iii) V = - sum_k y_k c_k <= bound,

then every feasible (G, F) has tau = tau - sum_k y_k (row_k) + sum_k y_k (row_k) <= -<S, G> + V <= V <= bound:
the worst case of the PEP (and of any PEP containing these rows) is at most ``bound``. Leaving rows out only
enlarges the feasible set, so the listed rows may be the support of the multipliers alone.

File format (JSON, gzip-compressed when the name ends in .gz; every number a string "p/q" or "p"): ``format``,
``points`` (size of G), ``values`` (length of F), ``objective`` (index of tau in F), ``bound``, ``rows``: a list of
{``kind``: "inequality" | "equality", ``y``: multiplier, ``gram``: [[i, j, c], ...] meaning c G[i, j] summed over
i <= j (so the off-diagonal entry of A is c/2), ``values``: [[k, c], ...], ``constant``: c}, and ``problem``: the
PEP the certificate is of (docs/provenance.md §7): ``paper``, ``family``, ``builder`` (``module:function``, a function
marked as a certificate builder), ``builder_version``, ``parameters`` ([[name, type, text], ...], every number an
exact rational string), ``data`` ("binary64" or "exact": how the rows are read) and ``hash`` (of the rebuilt rows;
the file's name). The float value, delta and timings are informative and not trusted.

Which PEP. Rows that prove a bound prove it for *those* rows; a file could carry the rows of an easier problem. So
the command first rebuilds the PEP from ``problem`` (:func:`fedbounds.checks.pep.certificate.rebuild`: the builder
at those parameters), requires its hash to be the file's name and the recorded hash, its sizes to be the file's,
and every stored row to be exactly one of the rebuilt rows; only then does it do the arithmetic. ``--rows-only``
skips the rebuild (the arithmetic alone: a bound of the PEP made of the stored rows, whatever PEP that is), and needs
only the standard library.

Bounded input. Regular files only (a FIFO or a device is refused without being opened for a blocking read), at most
:data:`MAX_FILE_BYTES` read and :data:`MAX_JSON_BYTES` decompressed, nesting at most :data:`MAX_DEPTH`, every
number a string "p" or "p/q" of at most :data:`MAX_DIGITS` digits per part (no exponents: "1e100000000" is refused,
not computed), ``points`` an integer in 1..:data:`MAX_POINTS` and ``values`` in 1..:data:`MAX_VALUES`, checked
before anything is allocated. Bounded arithmetic: at most :data:`MAX_TOTAL_DIGITS` digits in all the numbers
(counted before any arithmetic), every running sum within :data:`MAX_SUM_BITS` bits (checked as it grows), and the
LDL^T's predicted work (:func:`ldlt_work`) within :data:`MAX_LDLT_WORK` (checked before it starts). Each cap is
sized from the committed store with room to spare, and a file past one is refused (exit 2), so that every file is
decided in seconds.

Run ``python -m fedbounds.checks.pep.verify_certificate [--rows-only] FILE...``: one line per file, exit 0 when every
file verifies, 1 when one does not prove its bound (or is not of its stated problem), 2 on an unreadable or
malformed file, 3 when the address-space limit is too small for the rebuild (checks.runtime.address_space), 130 on
interrupt. Several files are verified in parallel (one process per CPU), their lines printed
in the order given.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
import sys
import time
import zlib
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "MAX_FILE_BYTES", "MAX_JSON_BYTES", "MAX_LDLT_WORK", "MAX_POINTS", "MAX_SUM_BITS",
           "MAX_TOTAL_DIGITS", "MAX_VALUES", "CertificateError", "Unreadable", "ldlt_psd", "ldlt_work", "load", "main", "verify",
           "verify_file"]

FORMAT = "fedbounds-pep-certificate/1"

#: at most this many bytes are read from a file (the store's largest: 0.4 MB compressed)
MAX_FILE_BYTES = 16 * 2**20
#: ... and decompressed (the store's largest: 4.7 MB of JSON; 16 MiB of the smallest JSON objects stays near 1 GB in
#: Python objects at worst)
MAX_JSON_BYTES = 16 * 2**20
#: nesting of arrays and objects (a certificate needs 4)
MAX_DEPTH = 16
#: digits of the numerator, resp. the denominator, of one number (the store's longest: 128)
MAX_DIGITS = 2000
#: the Gram size (the store's largest: 82; the LDL^T costs points^3)
MAX_POINTS = 512
#: the number of function values (the store's largest: 51)
MAX_VALUES = 100_000
#: digits of all the file's numbers together, checked before any arithmetic (the store's largest: 3,439,753)
MAX_TOTAL_DIGITS = 8_000_000
#: bits of any running sum (an entry of sum y_k A_k, of sum y_k a_k, or the value), checked as it grows (the
#: store's largest: 465): the sums' cost stays linear in the file
MAX_SUM_BITS = 8192
#: the exact LDL^T's work as :func:`ldlt_work` predicts it, checked before the elimination (the store's largest:
#: 7.2e10, 82 points of 135 bits, 5.4 s of CPU at load 6 on 2 cores; about 1e-10 s per unit there), so that a file
#: within every cap is decided in seconds, not hours
MAX_LDLT_WORK = 1.5e11

_NUMBER = re.compile(r"-?[0-9]+(?:/[0-9]+)?")
_JSON_NAMES = {list: "array", type(None): "null", str: "string", int: "number", float: "number", bool: "boolean"}
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")


class CertificateError(ValueError):
    """A certificate that does not prove its bound (the message says which condition fails)."""


class Unreadable(CertificateError):
    """A file that is not a certificate at all: unreadable, too large, malformed (exit 2, not 1)."""


def _q(s: Any) -> Fraction:
    """A number of the file: a string "p" or "p/q" (at most :data:`MAX_DIGITS` digits each, q > 0) or an integer."""
    if isinstance(s, int) and not isinstance(s, bool):
        if s.bit_length() > 4 * MAX_DIGITS:
            raise Unreadable(f"an integer of more than {MAX_DIGITS} digits")
        return Fraction(s)
    if not isinstance(s, str):
        raise Unreadable(f"a number must be a string 'p/q' or an integer, got {type(s).__name__}")
    if len(s) > 2 * MAX_DIGITS + 2 or not _NUMBER.fullmatch(s) or any(len(p) > MAX_DIGITS for p in s.lstrip("-").split("/")):
        raise Unreadable(f"not a number 'p' or 'p/q' of at most {MAX_DIGITS} digits: {s[:40]!r}")
    num, _, den = s.partition("/")
    if den and int(den) == 0:
        raise Unreadable(f"a number with a zero denominator: {s[:40]!r}")
    return Fraction(int(num), int(den) if den else 1)


def _index(x: Any, what: str) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise Unreadable(f"{what} must be an integer, got {type(x).__name__}")
    return x


def _size(cert: dict[str, Any], key: str, cap: int) -> int:
    """``points`` or ``values``: an integer in 1..cap, before anything of that size is allocated."""
    v = cert.get(key)
    if not isinstance(v, int) or isinstance(v, bool):
        raise Unreadable(f"{key!r} must be an integer, got {v!r}"[:120])
    if not 1 <= v <= cap:
        raise Unreadable(f"{key!r} = {v} outside 1..{cap}" if v.bit_length() < 64 else f"{key!r} outside 1..{cap}")
    return v


def ldlt_work(points: int, bits: int) -> float:
    """The predicted cost of :func:`ldlt_psd` on a ``points`` x ``points`` matrix of integers of ``bits`` bits:
    step k updates (points - k)^2 entries, each a minor of order k of at most k (bits + log2 points) bits (Hadamard's
    bound), at the cost of a product of that size (exponent 1.585, Karatsuba's)."""
    size = bits + math.log2(points + 1)
    return float(sum((points - k) ** 2 * (k * size) ** 1.585 for k in range(1, points)))


def _integer_form(S: list[list[Fraction]]) -> tuple[list[list[int]], int]:
    """(L S as integers, L): L the least common multiple of the denominators (L > 0: L S is PSD iff S is)."""
    L = 1
    for row in S:
        for x in row:
            L = L * x.denominator // math.gcd(L, x.denominator)
    return [[x.numerator * (L // x.denominator) for x in row] for row in S], L


def ldlt_psd(S: list[list[Fraction]], max_work: float | None = None) -> tuple[bool, list[Fraction]]:
    """Exact PSD test of a symmetric rational matrix by LDL^T with symmetric (largest diagonal) pivoting.

    At each step the largest remaining diagonal entry d is the pivot: d < 0 means not PSD; d = 0 means every
    remaining entry must be 0 (a PSD matrix with a zero diagonal entry has a zero row); d > 0 eliminates its row and
    column (Schur complement). The elimination runs on L S in integers, fraction-free (Bareiss 1968: each entry after
    a step is a minor, an exact quotient by the previous pivot; the true Schur complement is it divided by that
    positive pivot, so signs and the pivot order are the same). Returns (is PSD, the pivots used, as rationals).
    With ``max_work``, a matrix whose :func:`ldlt_work` exceeds it is refused (:class:`Unreadable`) before work."""
    n = len(S)
    for i in range(n):
        if len(S[i]) != n or any(S[i][j] != S[j][i] for j in range(n)):
            raise CertificateError("the residual matrix is not symmetric")
    A, L = _integer_form(S)
    if max_work is not None and n > 1:
        bits = max((abs(x).bit_length() for row in A for x in row), default=0)
        if ldlt_work(n, bits) > max_work:
            raise Unreadable(f"the exact LDL^T of a {n} x {n} residual of {bits}-bit integers would exceed the work "
                             f"budget ({ldlt_work(n, bits):.3g} > {max_work:.3g})")
    alive = list(range(n))
    pivots: list[Fraction] = []
    prev = 1
    while alive:
        p = max(alive, key=lambda i: A[i][i])
        d = A[p][p]
        if d < 0:
            return False, pivots
        if d == 0:
            return all(A[i][j] == 0 for i in alive for j in alive), pivots
        pivots.append(Fraction(d, prev * L))
        alive.remove(p)
        row = A[p]
        for i in alive:
            Ai, ri = A[i], row[i]
            for j in alive:
                if j >= i:
                    Ai[j] = (d * Ai[j] - ri * row[j]) // prev
                else:
                    Ai[j] = A[j][i]
        prev = d
    return True, pivots


def _capped(x: Fraction, what: str) -> Fraction:
    """``x``, a running sum, unless it has outgrown :data:`MAX_SUM_BITS` (:class:`Unreadable`)."""
    if x.numerator.bit_length() > MAX_SUM_BITS or x.denominator.bit_length() > MAX_SUM_BITS:
        raise Unreadable(f"{what} grows past {MAX_SUM_BITS} bits (the arithmetic is bounded)")
    return x


def _digits(x: Any) -> int:
    """Decimal digits of a number of the file (a string as written; an integer about 0.3 per bit)."""
    if isinstance(x, str):
        return len(x)
    return x.bit_length() * 3 // 10 + 1 if isinstance(x, int) and not isinstance(x, bool) else 0


def _total_digits(rows: list[Any]) -> int:
    """The digits of every number in the rows, counted before any arithmetic."""
    total = 0
    for row in rows:
        if not isinstance(row, dict):
            continue
        total += _digits(row.get("y")) + _digits(row.get("constant"))
        for key, width in (("gram", 3), ("values", 2)):
            entries = row.get(key)
            if isinstance(entries, list):
                total += sum(_digits(e[-1]) for e in entries if isinstance(e, list) and len(e) == width)
    return total


def verify(cert: dict[str, Any]) -> dict[str, Any]:
    """Check conditions (i)-(iii) of the module docstring exactly; return a summary, or raise CertificateError."""
    t0 = time.perf_counter()
    if not isinstance(cert, dict):
        raise Unreadable(f"the file holds a JSON {type(cert).__name__}, not a certificate object")
    if cert.get("format") != FORMAT:
        raise Unreadable(f"unknown format {str(cert.get('format'))[:60]!r} (expected {FORMAT!r})")
    npts, nval = _size(cert, "points", MAX_POINTS), _size(cert, "values", MAX_VALUES)
    obj = _index(cert.get("objective"), "'objective'")
    bound = _q(cert.get("bound"))
    rows = cert.get("rows")
    if not isinstance(rows, list):
        raise Unreadable("'rows' must be a list")
    if not (0 <= obj < nval):
        raise CertificateError(f"objective index {obj} outside the {nval} values")
    digits = _total_digits(rows)
    if digits > MAX_TOTAL_DIGITS:
        raise Unreadable(f"its numbers hold {digits} digits in all, more than {MAX_TOTAL_DIGITS} (the arithmetic is bounded)")
    S = [[Fraction(0)] * npts for _ in range(npts)]
    Fsum = [Fraction(0)] * nval
    V = Fraction(0)
    denominators = 1
    for r, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("gram"), list) or not isinstance(row.get("values"), list):
            raise Unreadable(f"row {r} is not an object with lists 'gram' and 'values'")
        y = _q(row.get("y"))
        kind = row.get("kind")
        if kind not in ("inequality", "equality"):
            raise CertificateError(f"row {r}: kind {kind!r}")
        if kind == "inequality" and y < 0:
            raise CertificateError(f"row {r}: negative multiplier {y} on an inequality")
        denominators = max(denominators, y.denominator)
        for e in row["gram"]:
            if not isinstance(e, list) or len(e) != 3:
                raise Unreadable(f"row {r}: a Gram entry is not [i, j, c]")
            i, j, c = _index(e[0], "a Gram index"), _index(e[1], "a Gram index"), _q(e[2])
            if not (0 <= i <= j < npts):
                raise CertificateError(f"row {r}: Gram entry ({i}, {j}) outside 0 <= i <= j < {npts}")
            if i == j:
                S[i][i] = _capped(S[i][i] + y * c, f"entry ({i}, {i}) of sum y_k A_k")
            else:
                S[i][j] = S[j][i] = _capped(S[i][j] + y * c / 2, f"entry ({i}, {j}) of sum y_k A_k")
        for e in row["values"]:
            if not isinstance(e, list) or len(e) != 2:
                raise Unreadable(f"row {r}: a value entry is not [k, c]")
            k, c = _index(e[0], "a value index"), e[1]
            if not (0 <= k < nval):
                raise CertificateError(f"row {r}: value index {k} outside 0..{nval - 1}")
            Fsum[k] = _capped(Fsum[k] + y * _q(c), f"value {k} of sum y_k a_k")
        V = _capped(V - y * _q(row.get("constant")), "the certified value")
    for k in range(nval):
        want = 1 if k == obj else 0
        if Fsum[k] != want:
            raise CertificateError(f"(i) fails: the function-value part does not cancel at value {k} "
                                   f"(sum y_k a_k = {float(Fsum[k]):.3g}, needs {want})")
    psd, pivots = ldlt_psd(S, max_work=MAX_LDLT_WORK)
    if not psd:
        raise CertificateError("(ii) fails: the residual matrix sum y_k A_k is not positive semidefinite")
    if V > bound:
        raise CertificateError(f"(iii) fails: the certified value {float(V):.12g} exceeds the bound {float(bound):.12g}")
    return {"value": V, "bound": bound, "rows": len(rows), "points": npts, "min_pivot": min(pivots, default=None),
            "rank": len(pivots), "max_denominator": denominators, "seconds": time.perf_counter() - t0}


def _read(path: str | Path) -> bytes:
    """The bytes of a regular file, at most :data:`MAX_FILE_BYTES` (opened non-blocking: a FIFO never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Unreadable(f"cannot open: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable("not a regular file (a FIFO, device or folder is refused)")
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise Unreadable(f"larger than {MAX_FILE_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _gunzip(raw: bytes) -> bytes:
    """One gzip member, at most :data:`MAX_JSON_BYTES` decompressed; truncated or trailing data is refused."""
    d = zlib.decompressobj(wbits=31)
    try:
        out = d.decompress(raw, MAX_JSON_BYTES + 1)
    except zlib.error as exc:
        raise Unreadable(f"not a gzip stream: {exc}") from None
    if len(out) > MAX_JSON_BYTES:
        raise Unreadable(f"decompresses to more than {MAX_JSON_BYTES} bytes")
    if not d.eof:
        raise Unreadable("truncated gzip stream")
    if d.unused_data.strip(b"\0"):
        raise Unreadable("data after the gzip stream")
    return out


def _depth(text: bytes) -> int:
    """The deepest nesting of [ and { (brackets inside strings counted too: an over-count only refuses odd files)."""
    steps = text.translate(_STEPS, _NOT_BRACKETS)  # +1 per opening, -1 (0xff as a signed byte) per closing
    return max(itertools.accumulate(memoryview(steps).cast("b")), default=0)


def load(path: str | Path) -> dict[str, Any]:
    """A certificate file: JSON, gzip-compressed when it starts with gzip's magic (or its name ends in ``.gz``), read
    within the bounds of the module docstring. Raises :class:`Unreadable`."""
    raw = _read(path)
    if raw[:2] == b"\x1f\x8b" or str(path).endswith(".gz"):
        raw = _gunzip(raw)
    if _depth(raw) > MAX_DEPTH:
        raise Unreadable(f"nested deeper than {MAX_DEPTH}")
    try:
        cert = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Unreadable(f"not JSON: {str(exc)[:120]}") from None
    if not isinstance(cert, dict):
        raise Unreadable(f"the file holds a JSON {_JSON_NAMES.get(type(cert), 'value')}, not a certificate object")
    return cert


def verify_file(path: str | Path, rows_only: bool = False) -> dict[str, Any]:
    """:func:`verify` on a certificate file (:func:`load`); unless ``rows_only``, first that the file's rows are rows of
    the PEP its ``problem`` rebuilds to, whose hash is the file's name
    (:func:`fedbounds.checks.pep.certificate.check_problem`)."""
    cert = load(path)
    if rows_only:
        return verify(cert)
    from fedbounds.checks.pep.certificate import check_problem

    return check_problem(cert, Path(path).name)


_USAGE = "usage: python -m fedbounds.checks.pep.verify_certificate [--rows-only] FILE..."


def _one(path: str, rows_only: bool) -> tuple[bool, str, int]:
    """The verdict on one file as (to stderr, its one line, its exit status: 0, 1, 2, or 70 for a bug)."""
    try:
        s = verify_file(path, rows_only=rows_only)
    except Unreadable as exc:
        return True, f"{path}: unreadable certificate: {exc}", 2
    except CertificateError as exc:
        return False, f"{path}: NOT PROVED: {exc}", 1
    except MemoryError:
        return True, f"{path}: unreadable certificate: out of memory", 2
    except Exception as exc:  # a bug, not a verdict on the file: said as such, in one line
        return True, f"{path}: internal error: {type(exc).__name__}: {str(exc)[:160]}", 70
    what = "the stored rows (--rows-only: not checked against a problem)" if rows_only else s.get("problem", "")
    return False, (f"{path}: proved: worst case <= {float(s['bound']):.12g} (certified value {float(s['value']):.12g}; "
                   f"{s['rows']} rows, Gram {s['points']}, rank {s['rank']}, {s['seconds']:.3f} s; {what})"), 0


def _worker_init(parent: int) -> None:
    """A pool worker: killed with the command however it dies; Ctrl-C is the command's (it kills its workers), so
    ignored here, before the block it started under (:func:`_pooled`) is lifted."""
    import signal

    from fedbounds.checks.runtime.pool import die_with_parent

    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _pooled(files: list[str], rows_only: bool, jobs: int) -> Iterator[tuple[bool, str, int]]:
    """:func:`_one` of each file in ``jobs`` spawned processes (the largest files first), yielded in the files' order.
    The workers are killed when the caller stops early (an internal error) and on Ctrl-C.
    They start with Ctrl-C blocked (a worker still starting would otherwise print a traceback)."""
    import concurrent.futures as cf
    import multiprocessing
    import signal

    from fedbounds.checks.runtime.pool import abort

    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_worker_init, initargs=(os.getpid(),))
    try:
        order = sorted(range(len(files)), key=lambda i: -_bytes(files[i]))
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:  # the workers start during submit
            futures = {i: pool.submit(_one, files[i], rows_only) for i in order}
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for i, a in enumerate(files):
            try:
                yield futures[i].result()
            except Exception as exc:  # the worker died (killed, out of memory) or its answer did not come back
                yield True, f"{a}: internal error: worker process failed: {type(exc).__name__}: {str(exc)[:120]}", 70
    except BaseException:
        abort(pool)
        raise
    pool.shutdown(wait=True)  # every answer is in: the workers leave (and are waited for: their CPU time is counted)


def _bytes(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    rows_only = "--rows-only" in args
    files = [a for a in args if a != "--rows-only"]
    if not files or any(a.startswith("-") and a != "-" for a in files):
        print(_USAGE, file=sys.stderr)
        return 2
    if not rows_only:  # the rebuild loads numpy and PEPit, whose start-up can hang under a tiny ulimit -v
        from fedbounds.checks.runtime.address_space import too_small

        if (small := too_small()) is not None:
            print(f"verify_certificate: {small} (--rows-only needs no numerical library)", file=sys.stderr)
            return 3
    jobs = min(len(files), os.cpu_count() or 1)
    results = _pooled(files, rows_only, jobs) if jobs > 1 else (_one(a, rows_only) for a in files)
    code = 0
    try:
        for to_stderr, line, status in results:
            print(line, file=sys.stderr if to_stderr else sys.stdout, flush=True)
            if status == 70:
                return 70
            code = max(code, status)
    finally:
        results.close()
    return code


if __name__ == "__main__":
    # run the package's copy of this module (``python -m`` runs it as __main__, a second copy whose CertificateError
    # the rebuild, which imports the package's, would not match)
    from fedbounds.checks.pep.verify_certificate import main as _main

    try:
        sys.exit(_main())
    except KeyboardInterrupt:
        sys.exit(130)
