"""Exact rational certificates for PEP worst cases: extract the rows, find an interior dual, round, restore, store.

A two-solver certificate (:func:`fedbounds.checks.pep.solve.certify`) is floating-point evidence. This module turns a
certified worst case v into a proof of ``worst case <= v + delta`` that the standard-library verifier
(:mod:`fedbounds.checks.pep.verify_certificate`, whose docstring states the identity) checks without a solver:

1. **Rows, exactly.** :func:`problem_of` reads PEPit's prepared scalar constraints of the (full) PEP the builder
   makes (for a client-symmetric builder too: the proof is then of the full PEP) and writes each as exact rationals:
   a coefficient within 2 ulp of a rational with denominator <= 10^6 (1/6, 0.1, ...) becomes that rational, any
   other (1/sqrt(10) B, ...) the exact value of its binary64 double. The certificate is a proof about the PEP with
   these data; they are PEPit's own to 1e-13. PEPit combines coefficients in binary64, so two that are equal in
   real arithmetic can differ by some ulp, and a PEP whose duals lie on a face can lose every dual that way
   (FedNMap's Q = 2 contraction points). When these rows admit no certificate, the PEP is built again under
   :func:`exact_arithmetic` (``problem_of(build, exact=True)``): each scalar the builder passes PEPit is read as
   above, once, and every combination is exact. That PEP has its own hash; its certificates say
   ``"data": "exact"``.
2. **An interior dual.** The optimal dual of a PEP usually has a singular residual matrix (complementary slackness),
   which rounding would push out of the PSD cone. So each solver's multipliers y* (recorded by ``certify``; lifted
   from the block form for a client-symmetric PEP) are moved towards a strictly interior dual y_int
   (:func:`interior_dual`: maximise t with S - t P >= 0 at a generous value, P the projector off the common kernel
   of the rows' Gram parts, a direction no row sees), by the share theta of delta/2 that the values leave; the margin
   theta t_int then absorbs the rounding. (Also tried: the interior dual at value + delta/2 itself.) When no interior
   dual exists, one facial-reduction step (:func:`face`) looks for rational directions every residual must
   annihilate and adds S w = 0 to the exact restoration.
3. **Round and restore.** Multipliers are rounded to rationals (denominator 10^12); those below 1e-13 are dropped
   (dropping rows enlarges the feasible set: still an upper bound). The function-value part must cancel exactly:
   a small rational linear solve corrects the largest multipliers (:func:`_restore`).
4. **Check exactly** (the verifier): e_tau = sum y a, S = sum y A >= 0 by rational LDL^T, V = -sum y c <= bound,
   with bound = v + delta (delta = :data:`DELTA_REL` |v| + :data:`DELTA_ABS`, widened x10 up to twice if the LDL^T fails).

Certificates are stored as JSON under :data:`STORE`, named by the hash of the PEP's rows (all of them, in order), so
``fedbounds check`` finds the certificate of the PEP it just built and re-verifies it exactly (milliseconds) instead of
solving again: :func:`attach` (called by ``certify``). With ``FEDBOUNDS_PROVE=1`` a certified point without a stored
certificate gets one (an extra Clarabel solve; the lead commits the files).

References: Peyrl and Parrilo, "Computing sum of squares decompositions with rational coefficients" (TCS 2008), the
round-and-project idea; PEPit's ``check_feasibility`` (the same identity, in floating point).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gzip
import hashlib
import importlib
import inspect
import io
import json
import math
import numbers
import os
import re
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from fedbounds.checks.pep.verify_certificate import FORMAT, CertificateError, Unreadable, load, verify

__all__ = ["DELTA_ABS", "DELTA_REL", "STORE", "Described", "Problem", "Row", "attach", "certificate_of",
           "check_problem", "checked_certificate", "describe", "exact_arithmetic", "interior_dual", "pep_builder",
           "problem_from_rows", "problem_of", "prove", "rational", "rebuild", "stored"]

#: the stated room of a proof: bound = v + DELTA_REL |v| + DELTA_ABS
DELTA_REL = 1e-6
DELTA_ABS = 1e-9
#: where certificates live (committed for the grid points of the quick profile)
STORE = Path(__file__).resolve().parent / "certificates"
#: multipliers are rounded to this denominator
DENOMINATOR = 10**12


def rational(x: float) -> Fraction:
    """A float as an exact rational: the nearest with denominator <= 10^6 when within 2 ulp of it, else the double's
    exact value."""
    return _rational(float(x))


@functools.lru_cache(maxsize=1 << 16)
def _rational(x: float) -> Fraction:
    """:func:`rational`, remembered: a PEP's rows repeat few coefficients (an n = 8 stochastic round: 192861 reads)."""
    if not math.isfinite(x):
        raise ValueError(f"a PEP coefficient is not finite: {x}")
    q = Fraction(x).limit_denominator(10**6)
    if abs(float(q) - x) <= 2 * math.ulp(x):
        return q
    return Fraction(x)


# --------------------------------------------------------------------------------------------------------------
# which PEP a certificate is of: a builder named by module:function, its version, its parameters as exact rationals
# --------------------------------------------------------------------------------------------------------------
#: a builder a certificate file may name: a function of a fedbounds checks module (never any other code)
_BUILDER_NAME = re.compile(r"fedbounds\.checks(?:\.[a-z_][a-z0-9_]*)+:[a-z_][a-z0-9_]*")


class Described:
    """A PEP builder (``build()``) that knows the problem it builds: ``problem`` = {paper, family, builder
    (module:function), builder_version, parameters} (docs/provenance.md §7), written into its certificates."""

    def __init__(self, build: Callable[[], Any], problem: Mapping[str, Any]) -> None:
        self._build = build
        self.problem = dict(problem)

    def __call__(self) -> Any:
        return self._build()


def _encode(value: Any) -> list[Any] | None:
    """[type, text] of one builder argument: a float as its exact rational "p/q", or None when not describable."""
    if value is None:
        return ["none", ""]
    if isinstance(value, bool):
        return ["boolean", "true" if value else "false"]
    if isinstance(value, numbers.Integral):
        return ["integer", str(int(value))]
    if isinstance(value, numbers.Real):
        return ["rational", str(Fraction(float(value)))] if math.isfinite(float(value)) else None
    if isinstance(value, str):
        return ["text", value]
    return None


def _decode(kind: Any, text: Any) -> Any:
    """The builder argument of ``[name, kind, text]``; a rational must be a binary64 value (what the builder took)."""
    from fedbounds.checks.pep.verify_certificate import _q

    if not isinstance(text, str) or len(text) > 200:
        raise Unreadable("a parameter's text must be a string of at most 200 characters")
    if kind == "none" and text == "":
        return None
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    if kind == "integer" and re.fullmatch(r"-?[0-9]{1,18}", text):
        return int(text)
    if kind == "rational":
        q = _q(text)
        if Fraction(float(q)) != q:
            raise Unreadable(f"the parameter {text[:40]!r} is not a binary64 value")
        return float(q)
    if kind == "text":
        return text
    raise Unreadable(f"a parameter of unknown type {str(kind)[:20]!r} or malformed text {text[:40]!r}")


def pep_builder(paper: str, family: str, version: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a PEP builder factory (``factory(**params) -> build``) as one a certificate file may name; the builds it
    returns are :class:`Described` (when every argument is a number, text, a flag or None). Raise ``version`` whenever
    a change to the factory changes the rows it builds: certificates of the old version are then refused, by name."""

    def mark(factory: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(factory)
        name = f"{factory.__module__}:{factory.__name__}"

        @functools.wraps(factory)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            build = factory(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            params = []
            for key, value in bound.arguments.items():
                if dataclasses.is_dataclass(value) and not isinstance(value, type):
                    # a parameter point: its class, then each field as a parameter of its own
                    params.append([key, "record", f"{type(value).__module__}:{type(value).__name__}"])
                    fields = [(f"{key}.{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value)]
                else:
                    fields = [(key, value)]
                for name_, v in fields:
                    enc = _encode(v)
                    if enc is None:
                        return build
                    params.append([name_, *enc])
            return Described(build, {"paper": paper, "family": family, "builder": name, "builder_version": version,
                                     "parameters": params})

        wrapped.__pep_builder__ = {"paper": paper, "family": family, "version": version}  # type: ignore[attr-defined]
        return wrapped

    return mark


def describe(build: Callable[[], Any]) -> dict[str, Any] | None:
    """The problem description of a :class:`Described` build (a copy), or None."""
    return dict(build.problem) if isinstance(build, Described) else None


def _record_class(name: Any) -> Any:
    """The dataclass a ``record`` parameter names: a dataclass of a ``fedbounds.checks`` module, never other code."""
    if not isinstance(name, str) or not re.fullmatch(r"fedbounds\.checks(?:\.[a-z_][a-z0-9_]*)+:[A-Z][A-Za-z0-9_]*", name):
        raise CertificateError(f"the parameter class {str(name)[:80]!r} is not a fedbounds.checks module:Class")
    module, _, cls = name.partition(":")
    try:
        out = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError):
        raise CertificateError(f"no class {name}") from None
    if not (isinstance(out, type) and dataclasses.is_dataclass(out)):
        raise CertificateError(f"{name} is not a parameter record")
    return out


def rebuild(problem: Mapping[str, Any]) -> Callable[[], Any]:
    """The build a certificate's ``problem`` names: its builder (a :func:`pep_builder` of a ``fedbounds.checks``
    module, at the stated version) called with its parameters. Raises :class:`CertificateError` (the file names no
    such problem) or :class:`Unreadable` (a malformed description)."""
    if not isinstance(problem, Mapping):
        raise CertificateError("the file names no problem (no 'problem' object): it is not self-contained")
    name, version, params = problem.get("builder"), problem.get("builder_version"), problem.get("parameters")
    if name is None:
        raise CertificateError("the file names no builder: it is not self-contained (only --rows-only can read it)")
    if not isinstance(name, str) or not _BUILDER_NAME.fullmatch(name):
        raise CertificateError(f"the builder {str(name)[:80]!r} is not a fedbounds.checks module:function")
    if not isinstance(params, list) or len(params) > 64:
        raise Unreadable("'parameters' must be a list of at most 64 [name, type, text]")
    module, _, function = name.partition(":")
    try:
        factory = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError):
        raise CertificateError(f"no builder {name}") from None
    meta = getattr(factory, "__pep_builder__", None)
    if not isinstance(meta, dict):
        raise CertificateError(f"{name} is not a certificate builder")
    if version != meta["version"]:
        raise CertificateError(f"the file is of {name} version {version!r}; the builder is now version {meta['version']}")
    kwargs: dict[str, Any] = {}
    records: dict[str, tuple[Any, dict[str, Any]]] = {}
    for p in params:
        if not isinstance(p, list) or len(p) != 3 or not isinstance(p[0], str):
            raise Unreadable("a parameter is not [name, type, text]")
        if p[1] == "record":
            records[p[0]] = (_record_class(p[2]), {})
        elif "." in p[0] and p[0].split(".", 1)[0] in records:
            records[p[0].split(".", 1)[0]][1][p[0].split(".", 1)[1]] = _decode(p[1], p[2])
        else:
            kwargs[p[0]] = _decode(p[1], p[2])
    try:
        kwargs.update({key: cls(**fields) for key, (cls, fields) in records.items()})
        return factory(**kwargs)
    except (TypeError, ValueError) as exc:
        raise CertificateError(f"{name} refuses the file's parameters: {str(exc)[:120]}") from None


def check_problem(cert: Mapping[str, Any], filename: str | None = None) -> dict[str, Any]:
    """Verify a certificate file as a proof about the problem it names: rebuild the PEP (:func:`rebuild`), require its
    row hash to be the recorded hash and the file's name (``<hash>.json.gz``, when the name has that form), its sizes
    to be the file's and every stored row to be one of its rows; then the arithmetic
    (:func:`fedbounds.checks.pep.verify_certificate.verify`). The summary names the problem."""
    if not isinstance(cert, Mapping):
        raise Unreadable("not a certificate object")
    desc = cert.get("problem")
    build = rebuild(desc if isinstance(desc, Mapping) else None)  # type: ignore[arg-type]
    assert isinstance(desc, Mapping)
    data = desc.get("data", "binary64")
    if data not in ("binary64", "exact"):
        raise Unreadable(f"'data' must be 'binary64' or 'exact', got {str(data)[:20]!r}")
    try:
        pb = problem_of(build, exact=data == "exact")
    except (ValueError, TypeError, ArithmeticError, AttributeError, AssertionError) as exc:
        raise CertificateError(f"the named problem does not build: {type(exc).__name__}: {str(exc)[:120]}") from None
    if desc.get("hash") != pb.digest:
        raise CertificateError(f"the recorded hash {str(desc.get('hash'))[:20]!r} is not the rebuilt problem's {pb.digest}")
    stem = (filename or "").removesuffix(".gz").removesuffix(".json")
    if re.fullmatch(r"[0-9a-f]{16}", stem) and stem != pb.digest:
        raise CertificateError(f"the file's name {filename} is not the rebuilt problem's hash {pb.digest}")
    s = check_stored(pb, cert)
    s["problem"] = f"rows of {desc['builder']} v{desc['builder_version']} ({desc.get('paper')}, {desc.get('family')}), hash {pb.digest}"
    return s


class _Exact(float):
    """A float that carries the exact rational it stands for (``exact``); arithmetic with these is exact."""

    __slots__ = ("exact",)
    exact: Fraction

    def __new__(cls, exact: Fraction, approx: float | None = None) -> _Exact:
        self = float.__new__(cls, float(exact) if approx is None else approx)
        self.exact = exact
        return self


def _as_exact(v: Any) -> Any:
    """``v`` as an :class:`_Exact` (a float as :func:`rational` reads it), or NotImplemented."""
    if isinstance(v, _Exact):
        return v
    if isinstance(v, int):
        return _Exact(Fraction(int(v)))
    if isinstance(v, float):
        return _Exact(rational(v), float(v))
    return NotImplemented


def _binary(op: Callable[[Fraction, Fraction], Fraction]) -> Callable[[_Exact, Any], Any]:
    def method(self: _Exact, other: Any) -> Any:
        o = _as_exact(other)
        return NotImplemented if o is NotImplemented else _Exact(op(self.exact, o.exact))
    return method


for _name, _op in {"__add__": lambda a, b: a + b, "__radd__": lambda a, b: b + a, "__sub__": lambda a, b: a - b,
                   "__rsub__": lambda a, b: b - a, "__mul__": lambda a, b: a * b, "__rmul__": lambda a, b: b * a,
                   "__truediv__": lambda a, b: a / b, "__rtruediv__": lambda a, b: b / a}.items():
    setattr(_Exact, _name, _binary(_op))
_Exact.__neg__ = lambda self: _Exact(-self.exact)  # type: ignore[method-assign,assignment]
_Exact.__pos__ = lambda self: self  # type: ignore[method-assign,assignment]
_Exact.__abs__ = lambda self: _Exact(abs(self.exact))  # type: ignore[method-assign,assignment]
_Exact.__pow__ = lambda self, e: (_Exact(self.exact ** e) if isinstance(e, int) else float(self) ** e)  # type: ignore[method-assign,assignment]
_Exact.__eq__ = lambda self, o: (self.exact == _as_exact(o).exact) if _as_exact(o) is not NotImplemented else NotImplemented  # type: ignore[method-assign,assignment]
_Exact.__ne__ = lambda self, o: (self.exact != _as_exact(o).exact) if _as_exact(o) is not NotImplemented else NotImplemented  # type: ignore[method-assign,assignment]
_Exact.__hash__ = float.__hash__  # type: ignore[method-assign,assignment]
_Exact.__bool__ = lambda self: self.exact != 0  # type: ignore[method-assign,assignment]


@contextlib.contextmanager
def exact_arithmetic() -> Any:
    """Within it, PEPit's Point and Expression take every float scalar as the exact rational :func:`rational` reads
    it as (0.1 as 1/10, 1/sqrt(10) as its double) and combine coefficients in exact arithmetic.

    PEPit combines coefficients in binary64, and two coefficients equal in real arithmetic can come out some ulp
    apart (FedNMap's Q = 2 contraction PEP: -0.014413235055998643 and 0.014413235055998671 for one cross term of two
    interpolation rows). Read as exact rationals, the rows then lose a linear dependence: the face equations S w = 0
    gain 3 independent equations that force 8 multipliers of the solvers' duals (0.4 to 1.5) to 0, and no dual is
    left (reconstruction §10.6). Built here, each scalar of the builder is rounded once and every relation between
    the coefficients holds exactly."""
    from PEPit import Expression, Point

    names = ("__rmul__", "__mul__", "__truediv__", "__add__", "__radd__", "__sub__", "__rsub__")
    saved = {(c, n): c.__dict__[n] for c in (Point, Expression) for n in names if n in c.__dict__}

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        def method(self: Any, other: Any = None, **kw: Any) -> Any:
            if other is None and kw:
                other = next(iter(kw.values()))
            if isinstance(other, int | float) and not isinstance(other, bool | _Exact):
                other = _as_exact(other)
            return f(self, other)
        return method

    try:
        for (c, n), f in saved.items():
            setattr(c, n, wrap(f))
        yield
    finally:
        for (c, n), f in saved.items():
            setattr(c, n, f)


@dataclass(frozen=True)
class Row:
    """One scalar row <A, G> + a . F + c (<= or ==) 0: ``gram`` {(i, j), i <= j: coefficient of G[i, j]} (both
    off-diagonal entries together), ``values`` {k: coefficient of F[k]}, ``constant`` c."""

    kind: str
    gram: tuple[tuple[int, int, Fraction], ...]
    values: tuple[tuple[int, Fraction], ...]
    constant: Fraction

    def key(self) -> str:
        g = ",".join(f"{i}:{j}:{c}" for i, j, c in self.gram)
        v = ",".join(f"{k}:{c}" for k, c in self.values)
        return f"{self.kind}|{g}|{v}|{self.constant}"

    def record(self, y: Fraction) -> dict[str, Any]:
        return {"kind": self.kind, "y": str(y), "gram": [[i, j, str(c)] for i, j, c in self.gram],
                "values": [[k, str(c)] for k, c in self.values], "constant": str(self.constant)}


@dataclass(frozen=True)
class Problem:
    """A PEP as exact rows: ``points`` leaf points (Gram size), ``values`` leaf function values (tau among them, at
    ``objective``), the rows, and their hash (sha256 of the canonical text, first 16 hex digits)."""

    points: int
    values: int
    objective: int
    rows: tuple[Row, ...]
    digest: str


def leaf_order(pep: Any) -> tuple[dict[Any, int], dict[Any, int]]:
    """(leaf Point -> Gram index, leaf Expression -> value index) of a prepared PEP, the order of :func:`problem_of`'s
    rows: points sorted by their PEPit counter, values in order of first appearance with the objective tau at 0."""
    pts: dict[Any, int] = {}
    vals: dict[Any, int] = {pep.objective: 0}
    for c in pep._list_of_prepared_constraints:
        for key in c.expression.decomposition_dict:
            if isinstance(key, tuple):
                for p in key:
                    pts.setdefault(p, p.counter)
            elif not (isinstance(key, int | float) and key == 1):
                vals.setdefault(key, len(vals))
    return {p: k for k, p in enumerate(sorted(pts, key=lambda p: pts[p]))}, vals


def problem_of(build: Callable[[], Any], exact: bool = False) -> Problem:
    """The exact rows of the PEP ``build()`` makes (a PEP or ``(pep, named)``). Raises ValueError on LMI rows.

    ``exact``: build it under :func:`exact_arithmetic` (the builder's scalars rounded once, their combinations exact)
    instead of reading PEPit's binary64 coefficients."""
    with exact_arithmetic() if exact else contextlib.nullcontext():
        built = build()
        if isinstance(built, Problem):  # a builder of exact rows (its rows are the same with or without ``exact``)
            return built
        pep = built[0] if isinstance(built, tuple) else built
        with contextlib.redirect_stdout(io.StringIO()):
            pep._prepare_constraints(verbose=0)
    if getattr(pep, "_list_of_prepared_psd", None):
        raise ValueError("exact certificates cover scalar rows only (this PEP has LMI constraints)")
    order, vals = leaf_order(pep)
    rows = []
    for kind, d in ((c.equality_or_inequality, c.expression.decomposition_dict) for c in pep._list_of_prepared_constraints):
        gram: dict[tuple[int, int], Fraction] = {}
        values: dict[int, Fraction] = {}
        const = Fraction(0)
        for key, coef in d.items():
            q = coef.exact if isinstance(coef, _Exact) else rational(coef)
            if isinstance(key, tuple):
                i, j = sorted((order[key[0]], order[key[1]]))
                gram[(i, j)] = gram.get((i, j), Fraction(0)) + q
            elif isinstance(key, int | float) and key == 1:
                const += q
            else:
                values[vals[key]] = values.get(vals[key], Fraction(0)) + q
        rows.append(Row(kind, tuple((i, j, c) for (i, j), c in sorted(gram.items()) if c != 0),
                        tuple((k, c) for k, c in sorted(values.items()) if c != 0), const))
    return problem_from_rows(rows, len(order), len(vals))


def problem_from_rows(rows: list[Row] | tuple[Row, ...], points: int, values: int) -> Problem:
    """A :class:`Problem` of exact rows over a Gram matrix of size ``points`` and ``values`` values (the objective
    tau at index 0), with its hash: how :func:`problem_of` states PEPit's rows, and how a builder that writes its rows
    itself (the client-symmetric reduced form, :mod:`fedbounds.checks.fednmap.spep.reduced`) states its own."""
    text = "\n".join(r.key() for r in rows) + f"\n{points} {values} 0"
    return Problem(points, values, 0, tuple(rows), hashlib.sha256(text.encode()).hexdigest()[:16])


def _matrices(pb: Problem) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    """Sparse (vec(A_k) columns, a_k columns), constants c, inequality mask (floats)."""
    import scipy.sparse as sps

    n = pb.points
    gr, gc, gd, fr, fc, fd = [], [], [], [], [], []
    for k, r in enumerate(pb.rows):
        for i, j, c in r.gram:
            if i == j:
                gr.append(i * n + i), gc.append(k), gd.append(float(c))
            else:
                for a, b in ((i, j), (j, i)):
                    gr.append(a * n + b), gc.append(k), gd.append(float(c) / 2)
        for v, c in r.values:
            fr.append(v), fc.append(k), fd.append(float(c))
    K = len(pb.rows)
    AG = sps.csr_matrix((gd, (gr, gc)), shape=(n * n, K))
    AF = sps.csr_matrix((fd, (fr, fc)), shape=(pb.values, K))
    c = np.array([float(r.constant) for r in pb.rows])
    ineq = np.array([r.kind == "inequality" for r in pb.rows])
    return AG, AF, c, ineq


def _kernel(AG: Any, n: int) -> np.ndarray:
    """Orthonormal basis of the common kernel of every row's Gram part (columns)."""
    K = AG.shape[1]
    stack = np.vstack([AG[:, k].toarray().reshape(n, n) for k in range(K)]) if K else np.zeros((1, n))
    if stack.shape[0] > stack.shape[1]:  # the same singular values and right vectors, without an m x m U (n = 8: 377 GiB)
        stack = np.linalg.qr(stack, mode="r")
    _, s, vt = np.linalg.svd(stack, full_matrices=True)
    tol = 1e-9 * max(1.0, s.max() if s.size else 1.0)
    rank = int((s > tol).sum())
    return vt[rank:].T


def _rationalize_basis(V: np.ndarray) -> list[list[Fraction]] | None:
    """Rational vectors spanning the column space of V (reduced row echelon form of V^T, entries with denominator
    <= 1000 within 1e-3: the face solve is often optimal_inaccurate), or None when the span is not rational to that
    accuracy (a wrong span costs a failed attempt, never a false proof: the exact check decides)."""
    import scipy.linalg as sla

    M = V.T.copy()
    out: list[list[Fraction]] = []
    _, _, piv = sla.qr(M, pivoting=True)
    cols = sorted(piv[: M.shape[0]])
    R = np.linalg.solve(M[:, cols], M)  # rows: a basis with the identity on the pivot columns
    for row in R:
        q = [Fraction(float(x)).limit_denominator(1000) for x in row]
        if max(abs(float(a) - float(x)) for a, x in zip(q, row, strict=True)) > 1e-3:
            return None
        out.append(q)
    return out


def face(pb: Problem) -> list[list[Fraction]]:
    """Rational directions w every dual residual must annihilate (one step of facial reduction): the range of the
    largest-trace D >= 0 for which some function-value direction dF (dF_tau >= 0) gives <A_k, D> + a_k . dF <= 0 on
    inequality rows and = 0 on equality rows. (G + s D, F + s dF) stays feasible for s >= 0 without lowering tau, so
    every dual-feasible y has <S, D> = -dF . e_tau - sum_k y_k s_k <= 0, hence S D = 0.) With dF = 0 only, the
    directions in G alone (a scaling the rows do not see); with dF, also points whose function values can absorb any
    move (measured: 4 directions at FedNMap's contraction PEP, 1 of them in G alone). Empty when there is none or its
    span is not rational (denominators <= 1000, to 1e-3)."""
    import cvxpy as cp

    n = pb.points
    AG, AF, _, ineq = _matrices(pb)
    D = cp.Variable((n, n), PSD=True)
    dF = cp.Variable(pb.values)
    lin = AG.T @ cp.reshape(D, (n * n,), order="C") + AF.T @ dF
    cons = [cp.trace(D) <= 1, dF[pb.objective] >= 0]
    if ineq.any():
        cons.append(lin[np.flatnonzero(ineq)] <= 0)
    if (~ineq).any():
        cons.append(lin[np.flatnonzero(~ineq)] == 0)
    prob = cp.Problem(cp.Maximize(cp.trace(D)), cons)
    with contextlib.suppress(Exception), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    if D.value is None or prob.value is None or prob.value < 1e-6:
        return []
    ev, V = np.linalg.eigh((D.value + D.value.T) / 2)
    V = V[:, ev > 1e-4 * ev.max()]
    return _rationalize_basis(V) or []


def interior_dual(pb: Problem, target: float, W: list[list[Fraction]] | None = None) -> tuple[np.ndarray, float] | None:
    """Multipliers y (numpy) with dual value <= ``target`` and the largest margin t (S - t P >= 0), or None."""
    import cvxpy as cp

    n = pb.points
    AG, AF, c, ineq = _matrices(pb)
    K = len(pb.rows)
    N = _kernel(AG, n)
    if W:
        N, _ = np.linalg.qr(np.hstack([N, np.array([[float(x) for x in w] for w in W]).T]))
    P = np.eye(n) - N @ N.T
    y = cp.Variable(K)
    t = cp.Variable()
    S = cp.reshape(AG @ y, (n, n), order="C")
    e = np.zeros(pb.values)
    e[pb.objective] = 1.0
    cons = [AF @ y == e, -c @ y <= target, (S + S.T) / 2 - t * P >> 0, t <= 1.0]
    if ineq.any():
        cons.append(y[np.flatnonzero(ineq)] >= 0)
    prob = cp.Problem(cp.Maximize(t), cons)
    # Clarabel first; where it fails (it does on some well-scaled problems with many rows), SCS: the exact check decides
    for solver, opts in (("CLARABEL", {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}),
                         ("SCS", {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 20000})):
        with contextlib.suppress(Exception), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "Solution may be inaccurate": the exact check decides
            prob.solve(solver=solver, **opts)
        if prob.status in ("optimal", "optimal_inaccurate") and y.value is not None and t.value is not None and t.value > 0:
            return np.asarray(y.value, dtype=float), float(t.value)
    return None


def _face_columns(pb: Problem, W: list[list[Fraction]]) -> list[dict[int, Fraction]]:
    """Per row k, the entries of A_k w (w in W), indexed after the F entries: the equations S w = 0."""
    n = pb.points
    out = []
    for r in pb.rows:
        col: dict[int, Fraction] = {}
        for a, w in enumerate(W):
            for i, j, c in r.gram:
                pairs = ((i, j, c),) if i == j else ((i, j, c / 2), (j, i, c / 2))
                for u, v, cc in pairs:
                    if w[v] != 0:
                        key = pb.values + a * n + u
                        col[key] = col.get(key, Fraction(0)) + cc * w[v]
        out.append({k: v for k, v in col.items() if v != 0})
    return out


def _restore(pb: Problem, y: list[Fraction], W: list[list[Fraction]] | None = None,
             floor: Fraction = Fraction(1, 10**7)) -> list[Fraction] | None:
    """Correct y so that sum_k y_k a_k = e_tau exactly (and S w = 0 for w in ``W``), changing only multipliers >=
    ``floor`` (and equality rows): a basic solution of the residual system over the largest ones, in exact arithmetic."""
    extra = _face_columns(pb, W) if W else [{} for _ in pb.rows]
    m = pb.values + (len(W) * pb.points if W else 0)
    need = [Fraction(int(k == pb.objective)) for k in range(m)]
    for r, e, yk in zip(pb.rows, extra, y, strict=True):
        for k, c in (*r.values, *e.items()):
            need[k] -= yk * c
    if all(x == 0 for x in need):
        return y
    free = sorted((k for k, r in enumerate(pb.rows) if (r.values or extra[k]) and
                   (r.kind == "equality" or y[k] >= floor)), key=lambda k: -abs(y[k]))
    # Gaussian elimination on [A_free | need], columns in order of size (pivots on the largest multipliers first)
    cols = {k: {**dict(pb.rows[k].values), **extra[k]} for k in free}
    rows = [dict() for _ in range(m)]  # row i: {col: coef}
    for k in free:
        for i, c in cols[k].items():
            rows[i][k] = c
    rhs = need[:]
    pivot_of: dict[int, int] = {}  # row -> col
    used_rows: set[int] = set()
    for k in free:
        cand = [i for i in range(m) if i not in used_rows and rows[i].get(k, 0) != 0]
        if not cand:
            continue
        i = cand[0]
        used_rows.add(i)
        pivot_of[i] = k
        pv = rows[i][k]
        for i2 in range(m):
            if i2 != i and rows[i2].get(k, 0) != 0:
                f = rows[i2][k] / pv
                for kk, cc in rows[i].items():
                    rows[i2][kk] = rows[i2].get(kk, 0) - f * cc
                    if rows[i2][kk] == 0:
                        del rows[i2][kk]
                rhs[i2] -= f * rhs[i]
    if any(rhs[i] != 0 for i in range(m) if i not in used_rows):
        return None
    out = y[:]
    for i, k in pivot_of.items():  # reduced form: each pivot row holds its pivot column and non-pivot columns only
        out[k] += rhs[i] / rows[i][k]
    for k, r in enumerate(pb.rows):
        if r.kind == "inequality" and out[k] < 0:
            return None
    return out


def _exact(pb: Problem, yf: np.ndarray, W: list[list[Fraction]] | None = None) -> list[Fraction] | None:
    """Round multipliers to denominator :data:`DENOMINATOR`, drop the tiny ones, restore the F-part (and S W = 0)."""
    y = [Fraction(round(float(v) * DENOMINATOR), DENOMINATOR) for v in yf]
    y = [Fraction(0) if (r.kind == "inequality" and v < Fraction(1, 10**13)) or
         (r.kind == "equality" and abs(v) < Fraction(1, 10**13)) else v for r, v in zip(pb.rows, y, strict=True)]
    out = _restore(pb, y, W)
    if out is None and W:  # S W = 0 adds equations the large multipliers alone may not span: let the small ones move
        out = _restore(pb, y, W, floor=Fraction(1, 10**13))
    return out


def _candidates(pb: Problem, value: float, delta: float, starts: list[np.ndarray],
                W: list[list[Fraction]] | None = None) -> list[tuple[np.ndarray, float]]:
    """Float multipliers worth rounding, with their margin estimate: each solver dual y* (given in ``starts``) moved
    towards a strictly interior dual y_int (margin t_int, value V_int, from :func:`interior_dual` at a generous
    target) by theta = the share of delta/2 that V_int - V* leaves; and the interior dual at value + delta/2 itself."""
    _, _, c, ineq = _matrices(pb)
    out = []
    wide = interior_dual(pb, value + max(abs(value), 1e-3), W) if starts else None
    for ys in starts:
        if wide is None or ys is None or len(ys) != len(pb.rows):
            continue
        yi, ti = wide
        ys = np.where(ineq, np.maximum(ys, 0.0), ys)
        vs, vi = float(-c @ ys), float(-c @ yi)
        room = value + delta / 2 - vs
        if room <= 0:
            continue
        theta = min(1.0, room / max(vi - vs, 1e-300))
        out.append(((1 - theta) * ys + theta * yi, theta * ti))
    direct = interior_dual(pb, value + delta / 2, W)
    if direct is not None:
        out.append(direct)
    return out


def prove(pb: Problem, value: float, starts: list[np.ndarray] | None = None, delta_rel: float = DELTA_REL,
          delta_abs: float = DELTA_ABS, widen: int = 2) -> dict[str, Any] | None:
    """A verified certificate of ``worst case <= value + delta`` (a JSON-ready dict), or None when none is found.

    ``starts``: solver multipliers of ``pb``'s rows (in order) to start from. delta = delta_rel |value| + delta_abs,
    widened x10 up to ``widen`` times when no candidate passes the exact check."""
    t0 = time.perf_counter()
    faces: list[list[list[Fraction]] | None] = [None]
    for attempt in range(widen + 1):
        delta = (delta_rel * abs(value) + delta_abs) * 10**attempt
        bound = rational(value) + Fraction(delta).limit_denominator(10**15)
        if attempt == 1 and faces == [None] and (found := face(pb)):
            faces = [found, None]  # no interior dual at the first delta: look for a face every dual lies on
        tries = [(yf, m, fw) for fw in faces for yf, m in _candidates(pb, float(value), delta, list(starts or []), fw)]
        for yf, margin, fw in tries:
            cert = checked_certificate(pb, yf, bound, float(value), float(delta), margin, fw)
            if cert is not None:
                cert["seconds_to_prove"] = round(time.perf_counter() - t0, 3)
                return cert
    return None


def checked_certificate(pb: Problem, yf: np.ndarray, bound: Fraction, value: float, delta: float, margin: float | None,
                        W: list[list[Fraction]] | None = None) -> dict[str, Any] | None:
    """The certificate of ``worst case <= bound`` made from the float multipliers ``yf`` of ``pb``'s rows (rounded,
    restored: :func:`_exact`) when the verifier accepts it, else None."""
    y = _exact(pb, yf, W)
    return None if y is None else certificate_of(pb, y, bound, value, delta, margin)


def certificate_of(pb: Problem, y: list[Fraction], bound: Fraction, value: float, delta: float,
                   margin: float | None) -> dict[str, Any] | None:
    """The certificate of ``worst case <= bound`` with the exact multipliers ``y`` of ``pb``'s rows when the verifier
    accepts it, else None."""
    keep = [k for k, v in enumerate(y) if v != 0]
    cert = {"format": FORMAT, "points": pb.points, "values": pb.values, "objective": pb.objective,
            "bound": str(bound), "rows": [pb.rows[k].record(y[k]) for k in keep],
            "problem": {"hash": pb.digest, "rows_total": len(pb.rows)},
            "value_float": value, "delta": delta, "margin_t": margin}
    try:
        summary = verify(cert)
    except CertificateError:
        return None
    cert["proved_value"] = str(summary["value"])
    return cert


def stored(digest: str, store: Path | None = None) -> Path:
    """The path of the certificate of the PEP with this row hash."""
    return (STORE if store is None else store) / f"{digest}.json.gz"


def _write(path: Path, cert: Mapping[str, Any]) -> None:
    from fedbounds.checks.runtime.install import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, gzip.compress(json.dumps(cert, separators=(",", ":")).encode(), mtime=0))


def check_stored(pb: Problem, cert: Mapping[str, Any]) -> dict[str, Any]:
    """Verify a stored certificate exactly *and* that every row it uses is a row of ``pb`` (so it bounds this PEP)."""
    if cert.get("points") != pb.points or cert.get("values") != pb.values or cert.get("objective") != pb.objective:
        raise CertificateError("the certificate's sizes differ from this PEP's")
    from fedbounds.checks.pep.verify_certificate import _index, _q

    keys = {r.key() for r in pb.rows}
    rows = cert.get("rows")
    if not isinstance(rows, list):
        raise Unreadable("'rows' must be a list")
    for k, rec in enumerate(rows):
        try:
            row = Row(rec["kind"], tuple((_index(i, "a Gram index"), _index(j, "a Gram index"), _q(c)) for i, j, c in rec["gram"]),
                      tuple((_index(i, "a value index"), _q(c)) for i, c in rec["values"]), _q(rec["constant"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise Unreadable(f"row {k} is malformed: {str(exc)[:80]}") from None
        if row.key() not in keys:
            raise CertificateError(f"row {k} of the certificate is not a row of this PEP")
    return verify(dict(cert))


def _exact_problem(build: Callable[[], Any], pb: Problem) -> Problem | None:
    """The PEP built under :func:`exact_arithmetic` when its rows differ from ``pb``'s (some coefficient of ``pb`` is
    a double, not a short rational), else None (also when the builder cannot be built that way)."""
    if all(c.denominator <= 10**6 for r in pb.rows for c in (*(g[2] for g in r.gram), *(v[1] for v in r.values),
                                                               r.constant)):
        return None
    try:
        pbx = problem_of(build, exact=True)
    except (TypeError, ValueError, ArithmeticError, AttributeError, AssertionError):
        return None
    return None if pbx.digest == pb.digest or len(pbx.rows) != len(pb.rows) else pbx


def _describe_stored(path: Path, cert: dict[str, Any], build: Callable[[], Any], pb: Problem) -> None:
    """The one-off migration to self-contained certificates (``FEDBOUNDS_DESCRIBE_STORE=1``): a stored certificate of
    ``pb`` that names no builder gets ``build``'s description, when the rebuilt problem accepts it (docs/provenance.md §7)."""
    desc = describe(build)
    if desc is None or (cert.get("problem") or {}).get("builder"):
        return
    data = (cert.get("problem") or {}).get("data", "binary64")
    new = {**cert, "problem": {**(cert.get("problem") or {}), **desc, "hash": pb.digest, "data": data}}
    try:
        check_problem(new, path.name)
    except CertificateError:
        return
    _write(path, new)
    cert.update(new)


def attach(build: Callable[[], Any], value: float, starts: list[np.ndarray] | None = None,
           store: Path | None = None) -> dict[str, Any] | None:
    """The exact proof record of a certified worst case ``value`` of the PEP ``build`` makes, or None.

    Looks up the stored certificate by the rows' hash and re-verifies it (and that it bounds this PEP); with the
    environment variable ``FEDBOUNDS_PROVE=1`` and none stored, proves one and stores it. The rows are PEPit's
    binary64 coefficients read as rationals; when those admit no certificate, the same PEP built under
    :func:`exact_arithmetic` (looked up, or proved, by its own hash). The record: ``status`` ("proved" or
    "not proved: why"), ``bound`` (float; the exact rational in ``bound_exact``), ``delta``, ``file``, ``rows``,
    ``max_denominator``, ``verify_seconds``, ``data`` ("binary64" or "exact")."""
    try:
        pb = problem_of(build)
    except ValueError as exc:
        return {"status": f"not proved: {exc}"}
    path = stored(pb.digest, store)
    cert = None
    if path.exists():
        cert = load(path)
    else:
        pbx = _exact_problem(build, pb)
        if pbx is not None and stored(pbx.digest, store).exists():
            pb, path = pbx, stored(pbx.digest, store)
            cert = load(path)
        elif os.environ.get("FEDBOUNDS_PROVE") == "1":
            cert = prove(pb, value, starts)
            if cert is None and pbx is not None:  # the binary64 rows have no dual: the exactly built ones may
                cert = prove(pbx, value, starts)
                if cert is not None:
                    pb, path = pbx, stored(pbx.digest, store)
                    cert["problem"]["data"] = "exact"
            if cert is None:
                return {"status": "not proved: no exact certificate found", "hash": pb.digest}
            if (desc := describe(build)) is not None:
                cert["problem"].update(desc)
            _write(path, cert)
    if cert is None:
        return None
    if os.environ.get("FEDBOUNDS_DESCRIBE_STORE") == "1":
        _describe_stored(path, cert, build, pb)
    try:
        s = check_stored(pb, cert)
    except CertificateError as exc:
        return {"status": f"not proved: {exc}", "file": path.name}
    return {"status": "proved", "bound": float(s["bound"]), "bound_exact": str(s["bound"]),
            "value_exact": str(s["value"]), "delta": float(s["bound"]) - float(value), "file": path.name,
            "rows": s["rows"], "max_denominator": s["max_denominator"], "verify_seconds": round(s["seconds"], 4),
            "min_pivot": None if s.get("min_pivot") is None else float(s["min_pivot"]),
            "data": cert.get("problem", {}).get("data", "binary64")}
