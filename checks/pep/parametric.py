"""Parametric PEP certificates: one exact proof of a PEP inequality over a whole box of parameters.

A PEP certificate at one point (:mod:`fedbounds.checks.pep.certificate`) proves ``worst case <= bound`` for one choice
of the step sizes. Here the multipliers are rational functions of the parameters, and the proof covers a box of them:

    target  =  sum_k y_k(p) row_k  +  v^T S(p) v                                           (the identity)

where ``target`` (>= 0 is the claim) and the ``row_k`` (interpolation inequalities, algorithm constraints, each
``>= 0`` or ``== 0``) are linear in the function values and quadratic in the vectors v of the PEP's Gram basis. The
certificate holds for every parameter p in the box when

1. the identity holds as rational functions of p (the function values cancel, and S is the remainder),
2. y_k(p) >= 0 on the box for every inequality row, and
3. S(p) is PSD on the box: every principal minor of S (a rational function of p) is >= 0 there.

Signs on the box are decided exactly (:func:`prove_nonnegative`): a rational function is factored over Q; a factor of
even multiplicity is >= 0; a factor of odd multiplicity must keep one sign on the open box, shown by counting its real
zeros there (Sturm sequences in one variable; in two variables a cylindrical decomposition: the zeros of
p(x, .) in (c, d) can only change number where x crosses a root of lc_y(p) disc_y(p) p(x, c) p(x, d), so one
count at a rational sample between consecutive roots decides them all; isolated zeros, which do not change sign,
are allowed). Its sign is then read at a rational interior point. A denominator factor must not vanish on the box
(closed ends included). Box ends may be rational or real algebraic (sqrt(33) - 5): signs at algebraic points are
decided from their exact expanded form.

The approach follows Naldi, Safey El Din, Taylor and Wang ("generic-param-lmi": LMIs of algorithm analysis proved
over parameter ranges by exact real algebra), in the small: the multipliers come from solving the PEP at sample
points and reading the active rows (docs/parametric-proofs.md), and positivity is closed by root counting, not by a
numerical solver. :func:`latex` writes the proof as a paper would: the weighted sum of the named rows plus the
remainder as a sum of squares (S = L D L^T, rational-function pivots).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sympy as sp

__all__ = ["FORMAT", "STORE", "Basis", "Box", "ParametricCertificate", "ParametricError", "ParametricProblem", "Proof", "Row",
           "dumps", "latex", "loads", "prove_nonnegative", "sample_multipliers", "verify", "verify_file"]

#: digits used to read the sign of a nonzero algebraic number
_DIGITS = 60


class ParametricError(ValueError):
    """A parametric certificate that does not verify; the message names the failing piece."""


class Basis:
    """The Gram basis of a PEP: named vectors; a vector is a dict name -> coefficient; <a, b> is linear in the
    Gram symbols ``G_a_b`` (a <= b in basis order)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self._index = {n: i for i, n in enumerate(self.names)}
        self.gram = {(a, b): sp.Symbol(f"G_{a}_{b}") for i, a in enumerate(self.names) for b in self.names[i:]}

    def vec(self, name: str) -> dict[str, sp.Expr]:
        return {name: sp.S.One}

    @staticmethod
    def comb(*terms: tuple[sp.Expr | int, Mapping[str, sp.Expr]]) -> dict[str, sp.Expr]:
        """sum_k c_k v_k."""
        out: dict[str, sp.Expr] = {}
        for c, v in terms:
            for k, a in v.items():
                out[k] = out.get(k, sp.S.Zero) + sp.sympify(c) * a
        return out

    def ip(self, u: Mapping[str, sp.Expr], v: Mapping[str, sp.Expr]) -> sp.Expr:
        """<u, v> as a linear form in the Gram symbols."""
        total = sp.S.Zero
        for a, ca in u.items():
            for b, cb in v.items():
                key = (a, b) if self._index[a] <= self._index[b] else (b, a)
                total += ca * cb * self.gram[key]
        return total

    def matrix(self, form: sp.Expr) -> sp.Matrix:
        """The symmetric matrix S with form = sum_ab S_ab <v_a, v_b> (off-diagonal Gram symbols count twice)."""
        n = len(self.names)
        S = sp.zeros(n, n)
        expanded = sp.expand(form)
        for (a, b), g in self.gram.items():
            i, j = self._index[a], self._index[b]
            c = expanded.coeff(g)
            if i == j:
                S[i, i] = c
            else:
                S[i, j] = S[j, i] = c / 2
        return S


@dataclass(frozen=True)
class Row:
    """One constraint of the PEP, ``expr >= 0`` (or ``== 0`` when ``equality``), with its name and its LaTeX."""

    name: str
    expr: sp.Expr
    latex: str
    equality: bool = False


@dataclass(frozen=True)
class Box:
    """A box of parameters: for each symbol (lo, hi, lo_open, hi_open); ends exact (rational or real algebraic)."""

    sides: tuple[tuple[sp.Symbol, sp.Expr, sp.Expr, bool, bool], ...]

    @property
    def symbols(self) -> tuple[sp.Symbol, ...]:
        return tuple(s[0] for s in self.sides)

    def side(self, x: sp.Symbol) -> tuple[sp.Symbol, sp.Expr, sp.Expr, bool, bool]:
        return next(s for s in self.sides if s[0] == x)

    def describe(self) -> str:
        return ", ".join(f"{x} in {'(' if lo_o else '['}{lo}, {hi}{')' if hi_o else ']'}" for x, lo, hi, lo_o, hi_o in self.sides)


@dataclass(frozen=True)
class ParametricProblem:
    """``target >= 0`` claimed for every Gram and function values meeting ``rows``, at every parameter in ``box``."""

    title: str
    basis: Basis
    values: tuple[sp.Symbol, ...]
    target: sp.Expr
    rows: tuple[Row, ...]
    box: Box
    target_latex: str = ""


@dataclass(frozen=True)
class ParametricCertificate:
    """Multipliers y_k(p) (rational functions of the box's symbols) by row name; rows left out have y = 0."""

    problem: ParametricProblem
    multipliers: Mapping[str, sp.Expr]


@dataclass
class Proof:
    """What :func:`verify` established: the remainder S, the sign facts it proved, and how long it took."""

    remainder: sp.Matrix
    facts: list[str] = field(default_factory=list)
    seconds: float = 0.0


# ---------------------------------------------------------------- exact signs


def _sign_at(expr: sp.Expr) -> int:
    """The sign of an exact real algebraic number (expanded; zero is decided structurally)."""
    v = sp.nsimplify(sp.expand(expr)) if not expr.is_Rational else expr
    v = sp.expand(sp.radsimp(v))
    if v == 0:
        return 0
    if v.is_Rational:
        return 1 if v > 0 else -1
    f = sp.N(v, _DIGITS)
    if abs(f) < sp.Float(10) ** (-_DIGITS + 10):
        raise ParametricError(f"cannot decide the sign of {v} (|value| < 1e-{_DIGITS - 10})")
    return 1 if f > 0 else -1


def _rational_between(lo: sp.Expr, hi: sp.Expr) -> sp.Rational:
    """A rational strictly between two exact reals lo < hi."""
    a, b = sp.N(lo, _DIGITS), sp.N(hi, _DIGITS)
    mid = sp.Rational(str(sp.N((a + b) / 2, _DIGITS)))
    for _ in range(200):
        if _sign_at(mid - lo) > 0 and _sign_at(hi - mid) > 0:
            return mid
        mid = sp.nsimplify((mid + lo) / 2) if _sign_at(mid - lo) > 0 else sp.nsimplify((mid + hi) / 2)
    raise ParametricError(f"no rational found between {lo} and {hi}")


def _real_roots_in(p: sp.Poly, lo: sp.Expr, hi: sp.Expr, lo_open: bool, hi_open: bool) -> list[tuple[sp.Rational, sp.Rational]]:
    """The real roots of a univariate rational polynomial in the interval, as rational isolating intervals (exact:
    each root is decided against the ends by refining its interval until the end lies outside it, or by p(end) = 0
    when the end is inside the interval of the one root there)."""
    if p.is_zero:
        raise ParametricError("a polynomial vanishes identically on an interval")
    if p.degree() <= 0:
        return []
    x = p.gens[0]
    zero_at = {e: _sign_at(p.as_expr().subs(x, e)) == 0 for e in (lo, hi)}
    out = []
    for (a, b), _ in p.intervals():
        a, b = sp.Rational(a), sp.Rational(b)
        sides = []
        for end in (lo, hi):
            while True:
                if _sign_at(end - b) > 0 or (a != b and _sign_at(end - b) == 0 and p.eval(b) != 0):
                    sides.append(-1)  # the root is below the end
                    break
                if _sign_at(a - end) > 0 or (a != b and _sign_at(a - end) == 0 and p.eval(a) != 0):
                    sides.append(1)
                    break
                if a == b or zero_at[end]:
                    sides.append(0)  # the root is the end (the only root in [a, b] when p(end) = 0)
                    break
                a, b = (sp.Rational(q) for q in p.refine_root(a, b, eps=(b - a) / 16))
        low, high = sides
        inside_low = low > 0 or (low == 0 and not lo_open)
        inside_high = high < 0 or (high == 0 and not hi_open)
        if inside_low and inside_high:
            out.append((a, b))
    return out


def _interior_point(box: Box) -> dict[sp.Symbol, sp.Rational]:
    return {x: _rational_between(lo, hi) for x, lo, hi, _, _ in box.sides}


def _univariate_zero_free(p: sp.Expr, x: sp.Symbol, lo: sp.Expr, hi: sp.Expr, lo_open: bool, hi_open: bool) -> bool:
    return not _real_roots_in(sp.Poly(p, x), lo, hi, lo_open, hi_open)


def _bivariate_sign_constant(p: sp.Expr, box: Box) -> bool:
    """An irreducible p(x, y) keeps one sign on the open box (isolated zeros allowed): the number of zeros of p(x0, .)
    in the open y-interval is 0 for a rational x0 in every cell between the critical x (module docstring).

    y is a side with rational ends (the projection needs p(x, c), p(x, d) with rational coefficients)."""
    sides = list(box.sides)
    if not (sides[1][1].is_Rational and sides[1][2].is_Rational):
        sides.reverse()
    (x, a, b, _, _), (y, c, d, _, _) = sides
    if not (c.is_Rational and d.is_Rational):
        raise ParametricError(f"two algebraic sides: {box.describe()}")
    P = sp.Poly(p, y)
    crit = P.LC() * (sp.discriminant(P.as_expr(), y) if P.degree() > 1 else 1) * p.subs(y, c) * p.subs(y, d)
    crit = sp.Poly(sp.expand(crit), x)
    if crit.is_zero:
        raise ParametricError(f"the projection of {p} vanishes identically")
    for x0 in _cell_samples(crit, a, b):
        if _real_roots_in(sp.Poly(p.subs(x, x0), y), c, d, True, True):
            return False
    return True


def _cell_samples(crit: sp.Poly, lo: sp.Expr, hi: sp.Expr) -> list[sp.Rational]:
    """One rational point in each open cell between lo, the roots of crit in (lo, hi), and hi."""
    roots = _real_roots_in(crit, lo, hi, True, True) if crit.degree() > 0 else []
    tight = []
    for a, b in roots:  # refine until each interval lies strictly inside (lo, hi)
        while a != b and (_sign_at(a - lo) <= 0 or _sign_at(hi - b) <= 0):
            a, b = (sp.Rational(q) for q in crit.refine_root(a, b, eps=(b - a) / 16))
        tight.append((a, b))
    edges = [lo] + [q for ab in tight for q in ab] + [hi]
    return [_rational_between(edges[2 * k], edges[2 * k + 1]) if edges[2 * k] != edges[2 * k + 1] else edges[2 * k]
            for k in range(len(tight) + 1)]


def _zero_free_closed(p: sp.Expr, box: Box) -> bool:
    """A denominator factor has no zero anywhere on the box (its closed ends included): on the open box (as for a
    numerator, but without isolated zeros) and on each closed face."""
    free = [s for s in box.sides if s[0] in p.free_symbols]
    if not free:
        return p != 0
    if len(free) == 1:
        x, lo, hi, lo_o, hi_o = free[0]
        return _univariate_zero_free(p, x, lo, hi, lo_o, hi_o)
    raise ParametricError(f"a denominator depends on two parameters (not supported): {p}")


def prove_nonnegative(expr: sp.Expr, box: Box, what: str, strict: bool = False) -> str:
    """Prove expr >= 0 on the open box, exactly (>= 0 then holds on the box by continuity); returns a one-line account
    of the proof, raises :class:`ParametricError` naming ``what`` otherwise.

    ``strict``: > 0 off at most finitely many isolated points of a two-parameter box (every factor, even or odd, keeps
    one nonzero sign there). For leading minors that is enough: S is then positive definite on a dense subset of the
    box, hence PSD on all of it by continuity."""
    expr = sp.factor(sp.cancel(sp.together(expr)))
    if expr == 0:
        if strict:
            raise ParametricError(f"{what} vanishes identically (a kernel direction not stated?)")
        return f"{what} = 0"
    num, den = sp.fraction(expr)
    for poly in sp.factor_list(den)[1]:
        if not _zero_free_closed(poly[0], box):
            raise ParametricError(f"{what}: the denominator factor {poly[0]} vanishes on {box.describe()}")
    point = _interior_point(box)
    sign = 1 if _sign_at(sp.factor_list(den)[0]) >= 0 else -1
    c_num, factors = sp.factor_list(num)
    sign *= 1 if c_num > 0 else -1
    account = []
    for f, m in factors:
        syms = [s for s in box.symbols if s in f.free_symbols]
        if m % 2 == 0 and not strict:
            account.append(f"({f})^{m} >= 0")
            continue
        if len(syms) == 1:
            x, lo, hi, _, _ = box.side(syms[0])
            ok = _univariate_zero_free(f, x, lo, hi, True, True)
            how = "Sturm"
        elif len(syms) == 2:
            ok = _bivariate_sign_constant(f, box)
            how = "CAD"
        else:
            raise ParametricError(f"{what}: a factor in {len(syms)} parameters is not supported: {f}")
        if not ok:
            raise ParametricError(f"{what}: the factor {f} changes sign on {box.describe()}")
        s = _sign_at(f.subs(point))
        for shift in range(2, 9):  # an isolated zero at the sample: read the sign at another interior point
            if s != 0:
                break
            other = {v: (q * shift + _rational_between(q, box.side(v)[2])) / (shift + 1) for v, q in point.items()}
            s = _sign_at(f.subs(other))
        if s == 0:
            raise ParametricError(f"{what}: the factor {f} vanishes at every sample")
        sign *= s ** m
        account.append(f"{f} {'>' if s > 0 else '<'} 0 ({how})")
    if sign < 0:
        raise ParametricError(f"{what} = {expr} is negative on {box.describe()}")
    return f"{what} >= 0: " + "; ".join(account) if account else f"{what} = {expr} > 0"


# ---------------------------------------------------------------- the certificate


def residual(cert: ParametricCertificate) -> sp.Expr:
    """target - sum_k y_k row_k, as a rational function of the parameters times the Gram symbols and values."""
    pb = cert.problem
    unknown = set(cert.multipliers) - {r.name for r in pb.rows}
    if unknown:
        raise ParametricError(f"multipliers for rows the problem does not have: {sorted(unknown)}")
    R = pb.target
    for row in pb.rows:
        R -= sp.sympify(cert.multipliers.get(row.name, 0)) * row.expr
    return sp.expand(R)


def verify(cert: ParametricCertificate, kernel: Sequence[Sequence[int]] = (), definite: bool = False) -> Proof:
    """Check the identity, the multipliers' signs and S >= 0 over the whole box, exactly (module docstring).

    ``kernel``: integer vectors w with S w = 0 identically (an invariance of the class: a direction of the Gram basis
    that nothing sees). Each is checked exactly, and one coordinate where it is nonzero is dropped; the reduced S is
    then shown positive definite on the open box by its leading principal minors (Sylvester), which is far cheaper
    than every principal minor. ``definite`` (no kernel): S itself is shown positive definite on the open box the same
    way. Otherwise every principal minor is shown >= 0 (S may be singular)."""
    t0 = time.perf_counter()
    pb = cert.problem
    R = residual(cert)
    proof = Proof(remainder=sp.zeros(1, 1))
    for v in pb.values:
        c = sp.cancel(sp.together(R.coeff(v)))
        if c != 0:
            raise ParametricError(f"the function value {v} does not cancel: coefficient {c}")
    rest = sp.expand(R - sum(R.coeff(v) * v for v in pb.values))
    constant = sp.cancel(rest.subs({g: 0 for g in pb.basis.gram.values()}))
    if constant != 0:
        raise ParametricError(f"a constant term is left: {constant}")
    S = pb.basis.matrix(rest).applyfunc(lambda e: sp.factor(sp.cancel(sp.together(e))))
    proof.remainder = S
    proof.facts.append("identity: the function values cancel, S is the remainder")
    for row in pb.rows:
        if row.equality or row.name not in cert.multipliers:
            continue
        proof.facts.append(prove_nonnegative(cert.multipliers[row.name], pb.box, f"y[{row.name}]"))
    n = S.shape[0]
    if kernel or definite:
        keep = list(range(n))
        for w in kernel:
            if any(sp.cancel(q) != 0 for q in S * sp.Matrix(w)):
                raise ParametricError(f"S w != 0 for the stated kernel vector {list(w)}")
            keep.remove(next(i for i in keep if w[i] != 0))
        if kernel:
            proof.facts.append(f"S w = 0 for {[list(w) for w in kernel]}; PSD iff the rest ({len(keep)} x {len(keep)}) is")
        for k in range(1, len(keep) + 1):
            idx = keep[:k]
            minor = S.extract(idx, idx).det(method="berkowitz")
            names = ",".join(pb.basis.names[i] for i in idx)
            proof.facts.append(prove_nonnegative(minor, pb.box, f"leading minor[{names}]", strict=True))
    else:
        for k in range(1, n + 1):
            for idx in itertools.combinations(range(n), k):
                minor = S.extract(list(idx), list(idx)).det(method="berkowitz")
                names = ",".join(pb.basis.names[i] for i in idx)
                proof.facts.append(prove_nonnegative(minor, pb.box, f"minor[{names}]"))
    proof.seconds = time.perf_counter() - t0
    return proof


# ---------------------------------------------------------------- the proof a person reads


def ldlt(S: sp.Matrix) -> tuple[sp.Matrix, list[sp.Expr]]:
    """S = L diag(d) L^T with rational-function pivots; a pivot that is identically 0 must have a zero column."""
    n = S.shape[0]
    A = S.copy()
    L = sp.eye(n)
    d: list[sp.Expr] = []
    for j in range(n):
        piv = sp.factor(sp.cancel(A[j, j]))
        d.append(piv)
        if piv == 0:
            if any(sp.cancel(A[i, j]) != 0 for i in range(j + 1, n)):
                raise ParametricError(f"zero pivot {j} with a nonzero column: S is not PSD")
            continue
        for i in range(j + 1, n):
            L[i, j] = sp.factor(sp.cancel(A[i, j] / piv))
        for i in range(j + 1, n):
            for k in range(j + 1, n):
                A[i, k] = sp.cancel(A[i, k] - L[i, j] * piv * L[k, j])
    return L, d


def latex(cert: ParametricCertificate, symbols: Mapping[str, str], proof: Proof | None = None) -> str:
    """The proof as a paper writes it: target = sum_k y_k (row_k) + sum_j d_j (l_j^T v)^2, in LaTeX.

    ``symbols`` maps the basis' vector names to their LaTeX (e.g. ``{"g": r"\\nabla f(x^r)"}``)."""
    pb = cert.problem
    proof = proof or verify(cert)
    lines = [rf"\text{{For }} {sp.latex(sp.And(*[_side_latex(s) for s in pb.box.sides]))}:", r"\begin{aligned}"]
    lines.append(rf"{pb.target_latex or sp.latex(pb.target)} \;&=\; ")
    first = True
    for row in pb.rows:
        y = cert.multipliers.get(row.name)
        if y is None or sp.simplify(y) == 0:
            continue
        lead = "" if first else "&+ "
        rel = "=" if row.equality else r"\geq"
        lines.append(rf"{lead}{_coef(y)}\,\underbrace{{\Big[{row.latex}\Big]}}_{{\text{{{row.name}}}\;{rel} 0}} \\")
        first = False
    L, d = ldlt(proof.remainder)
    names = pb.basis.names
    for j, dj in enumerate(d):
        if dj == 0:
            continue
        terms = [(sp.factor(L[i, j]), symbols.get(names[i], names[i])) for i in range(j, len(names)) if L[i, j] != 0]
        comb = " + ".join(v if c == 1 else rf"{_coef(c)}\,{v}" for c, v in terms)
        lines.append(rf"&+ {_coef(dj)}\,\Big\|{comb}\Big\|^2 \\")
    lines.append(r"\end{aligned}")
    return "\n".join(lines)


def _coef(y: sp.Expr) -> str:
    y = sp.factor(y)
    s = sp.latex(y)
    return s if y.is_Atom else rf"\left({s}\right)"


def _side_latex(side: tuple[sp.Symbol, sp.Expr, sp.Expr, bool, bool]) -> sp.Basic:
    x, lo, hi, lo_o, hi_o = side
    return sp.And(sp.Gt(x, lo) if lo_o else sp.Ge(x, lo), sp.Lt(x, hi) if hi_o else sp.Le(x, hi))


# ---------------------------------------------------------------- finding multipliers at a sample point


def sample_multipliers(pb: ParametricProblem, at: Mapping[sp.Symbol, sp.Expr], slack: sp.Expr | None = None,
                       solver: str = "CLARABEL") -> tuple[dict[str, float], float | None]:
    """Solve the dual at one parameter point (floating point, cvxpy): multipliers y >= 0 (free for equalities) with
    S(y) PSD and the function values cancelled. With ``slack`` (a Gram form, e.g. ||F_nor||^2), maximise t such that
    target - t slack has a certificate, and return t too. The values are a guide for the rational form, never a proof."""
    import cvxpy as cp
    import numpy as np

    sub = {k: sp.nsimplify(v) for k, v in at.items()}
    y = {r.name: cp.Variable(name=r.name) for r in pb.rows}
    t = cp.Variable() if slack is not None else None
    n = len(pb.basis.names)

    def parts(expr: sp.Expr) -> tuple[np.ndarray, list[float]]:
        e = sp.expand(sp.sympify(expr).subs(sub))
        S = np.array(pb.basis.matrix(e).tolist(), dtype=float)
        return S, [float(e.coeff(v)) for v in pb.values]

    S_t, v_t = parts(pb.target)
    S_expr = S_t
    v_expr = [cp.Constant(c) for c in v_t]
    for r in pb.rows:
        S_r, v_r = parts(r.expr)
        S_expr = S_expr - y[r.name] * S_r
        v_expr = [a - y[r.name] * b for a, b in zip(v_expr, v_r, strict=True)]
    if t is not None:
        S_s, _ = parts(slack)
        S_expr = S_expr - t * S_s
    M = cp.Variable((n, n), PSD=True)
    cons = [M == S_expr, *[c == 0 for c in v_expr], *[y[r.name] >= 0 for r in pb.rows if not r.equality]]
    prob = cp.Problem(cp.Maximize(t) if t is not None else cp.Minimize(0), cons)
    prob.solve(solver=solver)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise ParametricError(f"no certificate at {dict(at)}: {prob.status}")
    return {k: float(v.value) for k, v in y.items()}, (float(t.value) if t is not None else None)


# ---------------------------------------------------------------- the file format

#: the format tag of a stored parametric certificate (JSON; every expression a sympy string)
FORMAT = "fedbounds-parametric-certificate/1"
#: where the committed parametric certificates live
STORE = Path(__file__).resolve().parent / "parametric_certificates"


def dumps(cert: ParametricCertificate, kernel: Sequence[Sequence[int]] = (), definite: bool = False) -> str:
    """The certificate as JSON: the problem (basis, values, target, rows, box) and the multipliers, each a sympy
    string, so that :func:`loads` rebuilds and :func:`verify` re-proves it from the file alone."""
    pb = cert.problem
    doc = {
        "format": FORMAT, "title": pb.title, "basis": list(pb.basis.names), "values": [str(v) for v in pb.values],
        "params": [{"symbol": sp.srepr(x), "lo": sp.srepr(lo), "hi": sp.srepr(hi), "lo_open": lo_o, "hi_open": hi_o}
                   for x, lo, hi, lo_o, hi_o in pb.box.sides],
        "target": sp.srepr(pb.target), "target_latex": pb.target_latex,
        "rows": [{"name": r.name, "expr": sp.srepr(r.expr), "latex": r.latex, "equality": r.equality} for r in pb.rows],
        "multipliers": {k: sp.srepr(sp.sympify(v)) for k, v in cert.multipliers.items()},
        "kernel": [list(w) for w in kernel], "definite": definite,
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def loads(text: str) -> tuple[ParametricCertificate, tuple[tuple[int, ...], ...], bool]:
    """A certificate from :func:`dumps`' JSON: (certificate, kernel, definite). Raises :class:`ParametricError` on a
    file of another format."""
    doc = json.loads(text)
    if doc.get("format") != FORMAT:
        raise ParametricError(f"not a parametric certificate (format {doc.get('format')!r}, expected {FORMAT!r})")
    basis = Basis(doc["basis"])
    names = {k: v for k, v in vars(sp).items() if not k.startswith("_")}

    def expr(s: str) -> sp.Expr:
        return sp.sympify(eval(s, {"__builtins__": {}}, names))  # srepr strings: sympy constructors, no builtins

    sides = tuple((expr(p["symbol"]), expr(p["lo"]), expr(p["hi"]), bool(p["lo_open"]), bool(p["hi_open"])) for p in doc["params"])

    rows = tuple(Row(r["name"], expr(r["expr"]), r["latex"], bool(r["equality"])) for r in doc["rows"])
    pb = ParametricProblem(doc["title"], basis, tuple(sp.Symbol(v) for v in doc["values"]), expr(doc["target"]), rows,
                           Box(sides), doc.get("target_latex", ""))
    cert = ParametricCertificate(pb, {k: expr(v) for k, v in doc["multipliers"].items()})
    return cert, tuple(tuple(w) for w in doc["kernel"]), bool(doc["definite"])


def verify_file(path: str | Path) -> Proof:
    """Load a stored parametric certificate and prove it again, exactly."""
    cert, kernel, definite = loads(Path(path).read_text())
    return verify(cert, kernel, definite)
