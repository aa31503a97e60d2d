"""Standalone verifier of an exact PEP certificate: standard library only (``fractions``, ``json``, ``gzip``), no solver.

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
i <= j (so the off-diagonal entry of A is c/2), ``values``: [[k, c], ...], ``constant``: c}. Anything else in the file
(the problem's description and hash, the float value, delta) is informative and not trusted.

Run ``python -m fedbounds.checks.pep.verify_certificate FILE...``: one line per file, exit 0 when every file
verifies, 1 when one does not, 2 on unreadable input.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

__all__ = ["CertificateError", "ldlt_psd", "load", "main", "verify", "verify_file"]

FORMAT = "fedbounds-pep-certificate/1"


class CertificateError(ValueError):
    """A certificate that does not prove its bound (the message says which condition fails)."""


def _q(s: Any) -> Fraction:
    if isinstance(s, bool) or not isinstance(s, str | int):
        raise CertificateError(f"a number must be a string 'p/q' or an integer, got {s!r}")
    return Fraction(s)


def ldlt_psd(S: list[list[Fraction]]) -> tuple[bool, list[Fraction]]:
    """Exact PSD test of a symmetric rational matrix by LDL^T with symmetric (largest diagonal) pivoting.

    At each step the largest remaining diagonal entry d is the pivot: d < 0 means not PSD; d = 0 means every
    remaining entry must be 0 (a PSD matrix with a zero diagonal entry has a zero row); d > 0 eliminates its row and
    column (Schur complement). Returns (is PSD, the pivots used)."""
    n = len(S)
    A = [row[:] for row in S]
    for i in range(n):
        if len(A[i]) != n or any(A[i][j] != A[j][i] for j in range(n)):
            raise CertificateError("the residual matrix is not symmetric")
    alive = list(range(n))
    pivots: list[Fraction] = []
    while alive:
        p = max(alive, key=lambda i: A[i][i])
        d = A[p][p]
        if d < 0:
            return False, pivots
        if d == 0:
            return all(A[i][j] == 0 for i in alive for j in alive), pivots
        pivots.append(d)
        alive.remove(p)
        row = A[p]
        for i in alive:
            if row[i] == 0:
                continue
            f = row[i] / d
            Ai = A[i]
            for j in alive:
                if row[j] != 0:
                    Ai[j] -= f * row[j]
    return True, pivots


def verify(cert: dict[str, Any]) -> dict[str, Any]:
    """Check conditions (i)-(iii) of the module docstring exactly; return a summary, or raise CertificateError."""
    t0 = time.perf_counter()
    if cert.get("format") != FORMAT:
        raise CertificateError(f"unknown format {cert.get('format')!r} (expected {FORMAT!r})")
    try:
        npts, nval, obj = int(cert["points"]), int(cert["values"]), int(cert["objective"])
        bound = _q(cert["bound"])
        rows = cert["rows"]
    except (KeyError, TypeError, ValueError) as exc:
        raise CertificateError(f"missing or malformed field: {exc}") from None
    if not (0 <= obj < nval):
        raise CertificateError(f"objective index {obj} outside the {nval} values")
    S = [[Fraction(0)] * npts for _ in range(npts)]
    Fsum = [Fraction(0)] * nval
    V = Fraction(0)
    denominators = 1
    for r, row in enumerate(rows):
        y = _q(row["y"])
        kind = row["kind"]
        if kind not in ("inequality", "equality"):
            raise CertificateError(f"row {r}: kind {kind!r}")
        if kind == "inequality" and y < 0:
            raise CertificateError(f"row {r}: negative multiplier {y} on an inequality")
        denominators = max(denominators, y.denominator)
        for i, j, c in row["gram"]:
            i, j, c = int(i), int(j), _q(c)
            if not (0 <= i <= j < npts):
                raise CertificateError(f"row {r}: Gram entry ({i}, {j}) outside 0 <= i <= j < {npts}")
            if i == j:
                S[i][i] += y * c
            else:
                S[i][j] += y * c / 2
                S[j][i] += y * c / 2
        for k, c in row["values"]:
            k = int(k)
            if not (0 <= k < nval):
                raise CertificateError(f"row {r}: value index {k} outside 0..{nval - 1}")
            Fsum[k] += y * _q(c)
        V -= y * _q(row["constant"])
    for k in range(nval):
        want = 1 if k == obj else 0
        if Fsum[k] != want:
            raise CertificateError(f"(i) fails: the function-value part does not cancel at value {k} "
                                   f"(sum y_k a_k = {float(Fsum[k]):.3g}, needs {want})")
    psd, pivots = ldlt_psd(S)
    if not psd:
        raise CertificateError("(ii) fails: the residual matrix sum y_k A_k is not positive semidefinite")
    if V > bound:
        raise CertificateError(f"(iii) fails: the certified value {float(V):.12g} exceeds the bound {float(bound):.12g}")
    return {"value": V, "bound": bound, "rows": len(rows), "points": npts, "min_pivot": min(pivots, default=None),
            "rank": len(pivots), "max_denominator": denominators, "seconds": time.perf_counter() - t0}


def load(path: str | Path) -> dict[str, Any]:
    """A certificate file: JSON, gzip-compressed when its name ends in ``.gz``."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def verify_file(path: str | Path) -> dict[str, Any]:
    """:func:`verify` on a certificate file (:func:`load`)."""
    return verify(load(path))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m fedbounds.checks.pep.verify_certificate FILE...", file=sys.stderr)
        return 2
    code = 0
    for a in args:
        try:
            s = verify_file(a)
        except CertificateError as exc:
            print(f"{a}: NOT PROVED: {exc}")
            code = max(code, 1)
            continue
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            print(f"{a}: unreadable certificate: {type(exc).__name__}: {exc}", file=sys.stderr)
            code = 2
            continue
        print(f"{a}: proved: worst case <= {float(s['bound']):.12g} (certified value {float(s['value']):.12g}; "
              f"{s['rows']} rows, Gram {s['points']}, rank {s['rank']}, {s['seconds']:.3f} s)")
    return code


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
