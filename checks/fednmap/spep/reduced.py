"""The searched-Lyapunov PEP of one stochastic FedNMap round, built directly in its client-symmetric reduced form.

docs/fednmap-reconstruction.md §10.10. The PEP is the one of :func:`fedbounds.checks.fednmap.spep.search.build_search_spep`
(Algorithm 1 of arXiv 2602.03357, variant A, Assumption 2's noise, the Lyapunov weights as multipliers; the families
``merit`` and ``wide``, and here ``quad``, :func:`families`), in the normal
form that module's builder makes with ``symmetric=True`` and n <= 8 (start gradients of zero mean, the start's
corrections pinned to 0), or from a free start (``start="free"``). That builder writes the PEP for n clients through
PEPit, so its size and the cost of its exact certificate grow with n. This module writes the reduced SDP itself, with
n a number in its coefficients (or n = :data:`INF`, the limit SDP: every 1/n coefficient 0):

* Every client runs the same loop from the same server state, so the PEP is invariant under permuting the clients,
  and the average of an optimal point over all permutations is optimal (Gatermann and Parrilo 2004): the worst case
  is attained at a client-symmetric Gram matrix. Its client slots have a mean mode m_a = (1/n) sum_i leaf(i, a) and
  difference modes, and

      <s_k, s_l> = M[k, l],   <s_k, leaf(i, a)> = <s_k, m_a> = M[k, a],   <leaf(i, a), m_b> = <m_a, m_b> = M[a, b],
      <leaf(i, a), leaf(i, b)> = M[a, b] + (1 - 1/n) D[a, b],   <leaf(i, a), leaf(j, b)> = M[a, b] - D[a, b]/n  (i != j),

  with M >= 0 the Gram matrix of the shared leaves and the mean modes and D >= 0 (any such pair is the symmetric Gram
  matrix of vectors leaf(i, a) = m_a + (e_i - 1/n) (x) R_a, D = R'R). A slot of zero mean (the start's gradients) has
  no mean mode. Function values are the same for every client (one value per slot).
* Each orbit of rows under the permutations is one row: an interpolation or noise row of one client (client "0"),
  one of two different clients (clients "0" and "1"), or a shared one.

So the reduced SDP has the value of the full PEP, and a certificate of the reduced SDP (multipliers y >= 0 of its rows,
sum y A = S >= 0 on the block-diagonal Gram matrix diag(M, D), exactly) bounds the full PEP's worst case through that
lemma. Its size does not depend on n: (2 + 3Q - 1) + 3Q Gram points and about 2 (Q + 1)^2 + 3 Q^2 rows, at n = 64 as
at n = 2. The builder returns a :class:`fedbounds.checks.pep.certificate.Problem` (exact rational rows: the parameters
read once by :func:`fedbounds.checks.pep.certificate.rational`, every combination exact), which the prover, the store
and the verifier take as they take a PEPit problem's rows.

The normal form loses no instance only for forms invariant under the class's tilts (f_i + <a, .>, h - <a, .>, and
f_i + <a_i, .>, c_i - a_i with sum a_i = 0; :data:`INVARIANT_FORMS`): ||F_nor||^2 and the correction error, i.e. merit,
which is every such PSD quadratic form of the round's state. The other forms (wide's, quad's grid) are measured in the
round's normal frame there, which is not a Lyapunov bound; from the free start the tilts are recession directions that
make their rows slack, and their value is merit's (docs/fednmap-reconstruction.md §10.10).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from fedbounds.checks.pep.precondition import prove_rescaled, solve_preconditioned

__all__ = ["INF", "INVARIANT_FORMS", "QUAD", "build_reduced_search", "families", "full_gram_dimension", "point", "start_for",
           "tilt_invariant", "variance"]

#: n = infinity, as a builder argument and a certificate file state it
INF = "inf"

# basis keys of a vector: ("s", k) a shared leaf, ("c", who, a) slot a of client who (0 or 1, two different clients),
# ("m", a) the mean over the clients of slot a. A scalar: ("F", k) a shared value, ("f", a) a client value slot (the
# same for every client), (u, v) a Gram entry of two vector keys, 1 the constant.
Vec = dict
Sca = dict


def _clients(n: Any) -> int | str:
    """n as the builder takes it: an integer >= 1, or :data:`INF` (``math.inf`` or "inf")."""
    if n == INF or (isinstance(n, float) and n == math.inf):
        return INF
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1 or 'inf', got {n!r}")
    return n


def _add(d: dict, key: Any, c: Fraction) -> None:
    if c:
        v = d.get(key, Fraction(0)) + c
        if v:
            d[key] = v
        else:
            d.pop(key, None)


def lin(*terms: tuple[Fraction | int, dict]) -> dict:
    """sum c * x over (c, x) (vectors or scalars)."""
    out: dict = {}
    for c, x in terms:
        c = Fraction(c)
        for k, v in x.items():
            _add(out, k, c * v)
    return out


def dot(x: Vec, y: Vec) -> Sca:
    """<x, y> as a scalar of Gram entries."""
    out: Sca = {}
    for k1, a in x.items():
        for k2, b in y.items():
            _add(out, tuple(sorted((k1, k2), key=repr)), a * b)
    return out


def other(x: Vec) -> Vec:
    """The same vector for another client (client 0's slots moved to client 1)."""
    return {(("c", 1, k[2]) if k[:2] == ("c", 0) else k): v for k, v in x.items()}


def mean_over_clients(x: Vec) -> Vec:
    """(1/n) sum_i x_i for an expression x of client 0 (its slots become mean modes)."""
    out: Vec = {}
    for k, v in x.items():
        _add(out, ("m", k[2]) if k[0] == "c" else k, v)
    return out


class _Leaves:
    """The leaves made so far: shared vector leaves, client vector slots (and which have zero mean), value slots."""

    def __init__(self) -> None:
        self.shared, self.slots, self.fshared, self.fslots = 0, 0, 0, 0
        self.zero_mean: set[int] = set()

    def s(self) -> Vec:
        self.shared += 1
        return {("s", self.shared - 1): Fraction(1)}

    def c(self, zero_mean: bool = False) -> Vec:
        self.slots += 1
        if zero_mean:
            self.zero_mean.add(self.slots - 1)
        return {("c", 0, self.slots - 1): Fraction(1)}

    def F(self) -> Sca:
        self.fshared += 1
        return {("F", self.fshared - 1): Fraction(1)}

    def f(self) -> Sca:
        self.fslots += 1
        return {("f", self.fslots - 1): Fraction(1)}


def _smooth(L: Fraction, p: tuple, q: tuple) -> Sca:
    """PEPit's L-smooth interpolation row between (x_i, g_i, f_i) and (x_j, g_j, f_j), as 'expression <= 0':
    -L/4 ||xi - xj||^2 + 1/2 <gi + gj, xi - xj> + 1/(4L) ||gi - gj||^2 - (fi - fj) <= 0."""
    (xi, gi, fi), (xj, gj, fj) = p, q
    dx, dg = lin((1, xi), (-1, xj)), lin((1, gi), (-1, gj))
    return lin((-L / 4, dot(dx, dx)), (Fraction(1, 2), dot(lin((1, gi), (1, gj)), dx)), (1 / (4 * L), dot(dg, dg)),
               (-1, fi), (1, fj))


def _convex(p: tuple, q: tuple) -> Sca:
    """Convex interpolation: <g_j, x_i - x_j> - (f_i - f_j) <= 0."""
    (xi, _, fi), (xj, gj, fj) = p, q
    return lin((1, dot(gj, lin((1, xi), (-1, xj)))), (-1, fi), (1, fj))


class _Layout:
    """The reduced problem's indices: the Gram matrix diag(M, D) (M over the shared leaves and the mean modes of the
    slots without zero mean, D over every client slot) and the values (0: the objective tau, then shared, then slots)."""

    def __init__(self, leaves: _Leaves, n: int | str) -> None:
        self.inv_n = Fraction(0) if n == INF else 1 / Fraction(n)  # n = INF: the limit SDP, every 1/n coefficient 0
        means = [a for a in range(leaves.slots) if a not in leaves.zero_mean]
        self.M = {("s", k): k for k in range(leaves.shared)}
        self.M.update({("m", a): leaves.shared + j for j, a in enumerate(means)})
        self.dM = len(self.M)
        self.dD = leaves.slots if _many(n) else 0
        self.points = self.dM + self.dD
        self.values = 1 + leaves.fshared + leaves.fslots
        self.fshared = leaves.fshared

    def _mkey(self, k: tuple) -> tuple | None:
        """A vector key's M index key: shared, or the mean mode of a slot (None for a zero-mean slot)."""
        key = k if k[0] == "s" else ("m", k[-1])
        return key if key in self.M else None

    def row(self, kind: str, expr: Sca) -> Any:
        from fedbounds.checks.pep.certificate import Row

        gram: dict[tuple[int, int], Fraction] = {}
        vals: dict[int, Fraction] = {}
        const = Fraction(0)

        def put(i: int, j: int, c: Fraction) -> None:
            _add(gram, (min(i, j), max(i, j)), c)

        for key, c in expr.items():
            if key == 1:
                const += c
            elif key == "tau":
                _add(vals, 0, c)
            elif key[0] == "F":
                _add(vals, 1 + key[1], c)
            elif key[0] == "f":
                _add(vals, 1 + self.fshared + key[1], c)
            else:
                u, v = key
                mu, mv = self._mkey(u), self._mkey(v)
                if mu is not None and mv is not None:
                    put(self.M[mu], self.M[mv], c)
                if u[0] == "c" and v[0] == "c" and self.dD:
                    w = (1 - self.inv_n) if u[1] == v[1] else -self.inv_n
                    put(self.dM + u[2], self.dM + v[2], c * w)
        return Row(kind, tuple((i, j, c) for (i, j), c in sorted(gram.items()) if c),
                   tuple((k, c) for k, c in sorted(vals.items()) if c), const)


def _rows(L: Fraction, rho: Fraction, gamma: Fraction, eta_a: Fraction, eta_s: Fraction, n: int | str, Q: int, r: Fraction,
          mu: Fraction, sigma2: Fraction, scale_rows: Fraction, objective_scale: Fraction,
          family: Sequence[str], start: str = "normal") -> tuple[_Leaves, list[tuple[str, Sca]]]:
    """The reduced rows of one round (module docstring), in the order the PEPit builder adds them. ``start``: the
    normal form ("normal") or a free start ("free": the start gradients' mean and the corrections free)."""
    from fedbounds.checks.fednmap.pep.encoding import _basis_scale

    lv = _Leaves()
    a = 1 - gamma * rho
    scale = Fraction(_basis_scale(float(L), float(gamma), float(eta_a), float(eta_s), Q))
    rows: list[tuple[str, Sca]] = []
    h_pts: list[tuple[tuple, bool]] = []  # (point, owned by client 0)
    f_pts: list[tuple] = []
    # the start: x_0 = 0, h's subgradient g, h(0) = 0, f_i(0) = 0; in normal form the gradients of zero mean and c = 0
    g = lv.s()
    zero: Vec = {}
    h0 = lv.F()
    h_pts.append(((zero, g, h0), False))
    rows.append(("equality", h0))
    g0 = lv.c(zero_mean=start == "normal")
    f0 = lv.f()
    f_pts.append((zero, g0, f0))
    rows.append(("equality", f0))
    c0 = lv.c(zero_mean=True) if start == "free" else {}  # free: the corrections, of zero sum
    z0, v0 = lin((gamma, g)), g
    # client 0's local loop (every client's, by symmetry), noise e^l after the leaves of step l
    noise: list[tuple[Vec, list[Vec]]] = []
    zi, h_ref, f_ref = z0, g, g0
    for ell in range(Q):
        if ell == 0:
            gl = g0
        else:
            gh = lin((1, h_ref), (scale, lv.c()))
            x = lin((1 / a, zi), (-gamma / a, gh))
            h_pts.append(((x, gh, lv.f()), True))
            h_ref = gh
            gl = lin((1, f_ref), (scale, lv.c()))
            f_pts.append((x, gl, lv.f()))
            f_ref = gl
        e = lv.c()
        noise.append((e, [{("c", 0, b): Fraction(1)} for b in range(lv.slots - 1)]))
        zi = lin((1, zi), (-eta_a, gl), (-eta_a, e), (-eta_a, v0), (-eta_a, c0))
    round_slots = lv.slots
    y0 = lin((1 / (eta_a * Q), z0), (-1 / (eta_a * Q), zi))
    ybar = mean_over_clients(y0)
    z1 = lin((1, z0), (-(eta_s * eta_a * Q), ybar))
    c1 = lin((1, c0), (-1, y0), (1, ybar))
    # the end point: prox at z_1 (a shared leaf), every client's gradient at x_1
    gh1 = lin((1, g), (scale, lv.s()))
    x1 = lin((1 / a, z1), (-gamma / a, gh1))
    hx1 = lv.F()
    h_pts.append(((x1, gh1, hx1), False))
    s1 = lin((1, gh1), (-rho, x1))
    phi1 = lin((1, hx1), (-rho / 2, dot(x1, x1)))
    g1 = lin((1, f_ref), (scale, lv.c()))
    f1 = lv.f()
    f_pts.append((x1, g1, f1))
    gbar1 = mean_over_clients(g1)
    psi1 = lin((1, f1), (1, phi1))
    # the rows, in PEPit's order: the functions' interpolation, then the constraints added to the problem
    for i, p in enumerate(f_pts):
        for j, q in enumerate(f_pts):
            if i != j:
                rows.append(("inequality", _smooth(L, p, q)))
    for i, (p, own_p) in enumerate(h_pts):
        for j, (q, own_q) in enumerate(h_pts):
            if i != j:
                rows.append(("inequality", _convex(p, q)))
            if own_p and own_q and _many(n):  # client 0's point against another client's (every pair of points)
                rows.append(("inequality", _convex(p, (other(q[0]), other(q[1]), q[2]))))
    for e, _ in noise:
        rows.append(("inequality", lin((1, dot(e, e)), (-sigma2, {1: Fraction(1)}))))
    for e, own in noise:
        for v in [g, *own]:
            rows.append(("equality", dot(e, v)))
        if _many(n):
            for b in range(round_slots):
                rows.append(("equality", dot(e, {("c", 1, b): Fraction(1)})))
    gbar0 = {} if start == "normal" else mean_over_clients(g0)
    forms0 = _forms(gbar0, v0, c0, g0)
    forms1 = _forms(gbar1, s1, c1, g1)
    for name in family:
        if _per_client(name) and not _many(n):  # n = 1: a per-client difference is identically 0
            continue
        rows.append(("inequality", lin((-scale_rows, forms1(name)), (scale_rows * (1 - r), forms0(name)))))
    metric = lin((1, psi1), (r / (2 * mu), forms0("Fnor2")))
    rows.append(("inequality", lin((1, {"tau": Fraction(1)}), (-objective_scale, metric))))
    return lv, rows


def _many(n: int | str) -> bool:
    """More than one client (n = INF included)."""
    return n == INF or n > 1


def _per_client(name: str) -> bool:
    """A form of the clients' differences from their mean (0 at n = 1)."""
    return name == "corr" or name.startswith("diff")


def _direction_of(name: str) -> tuple[int, int]:
    """The integer pair (a, b) of a ``mean a,b`` or ``diff a,b`` form's name."""
    a, b = name[4:].split(",")
    return int(a), int(b)


def _forms(gbar: Vec, s: Vec, c: Vec, grad: Vec) -> Callable[[str], Sca]:
    """The family's forms at a state (gbar = grad f(x), s = v the prox subgradient part of F_nor, client 0's correction
    c and gradient grad), by name: ``Fnor2`` ||gbar + s||^2, ``corr`` ||c + grad - gbar||^2 (client 0's; by symmetry the
    mean over the clients), ``grad2``, ``v2``, ``gminusv2``, and the grid ``mean a,b`` ||a gbar + b s||^2, ``diff a,b``
    ||a (c + grad - gbar) + b (grad - gbar)||^2 (integers a, b: exact directions)."""
    corr = lin((1, c), (1, grad), (-1, gbar))
    dev = lin((1, grad), (-1, gbar))

    def sq(x: Vec) -> Sca:
        return dot(x, x)

    def form(name: str) -> Sca:
        if name == "Fnor2":
            return sq(lin((1, gbar), (1, s)))
        if name == "corr":
            return sq(corr)
        if name == "grad2":
            return sq(gbar)
        if name == "v2":
            return sq(s)
        if name == "gminusv2":
            return sq(lin((1, gbar), (-1, s)))
        if name.startswith("mean"):
            p, q = _direction_of(name)
            return sq(lin((p, gbar), (q, s)))
        if name.startswith("diff"):
            p, q = _direction_of(name)
            return sq(lin((p, corr), (q, dev)))
        raise ValueError(f"unknown form {name!r}")

    return form


def _problem(lv: _Leaves, rows: list[tuple[str, Sca]], n: int | str) -> Any:
    from fedbounds.checks.pep.certificate import problem_from_rows

    lay = _Layout(lv, n)
    out, seen = [], set()
    for kind, expr in rows:
        row = lay.row(kind, expr)
        if n == INF and not (row.gram or row.values or row.constant):  # 0 = 0: a row of -D/n terms only (n = 1 keeps
            continue  # its empty rows: the committed certificates' hashes are of them)
        key = _direction(row)
        if key not in seen:  # a row parallel to an earlier one (an equality up to a factor) adds nothing
            seen.add(key)
            out.append(row)
    return problem_from_rows(out, lay.points, lay.values)


def _direction(row: Any) -> tuple:
    """A row up to a positive factor (any nonzero factor for an equality): its coefficients over the first one's."""
    coefs = [c for *_, c in row.gram] + [c for _, c in row.values] + [row.constant]
    lead = next((c for c in coefs if c), Fraction(1))
    if row.kind == "inequality":
        lead = abs(lead)
    return (row.kind, tuple((i, j, c / lead) for i, j, c in row.gram), tuple((k, c / lead) for k, c in row.values),
            row.constant / lead)


#: integer directions (a, b) of the ``quad`` family's grid: every primitive pair with max(|a|, |b|) <= 3, one per line
#: through 0 (16 angles in [0, pi))
QUAD_DIRECTIONS: tuple[tuple[int, int], ...] = tuple(
    (a, b) for a in range(4) for b in range(-3, 4) if max(a, abs(b)) > 0 and math.gcd(a, b) == 1 and (a > 0 or b > 0))
#: the families of the reduced PEP: :data:`fedbounds.checks.fednmap.spep.search.FAMILIES` and ``quad``, the grid of
#: PSD forms ||a gbar + b v||^2 (the mean part) and (1/n) sum_i ||a corr_i + b (grad f_i - gbar)||^2 (the difference
#: part) over :data:`QUAD_DIRECTIONS` (it contains ``wide``: the directions (1, 1), (1, 0), (0, 1), (1, -1) and corr)
QUAD: tuple[str, ...] = tuple(f"mean{a},{b}" for a, b in QUAD_DIRECTIONS) + tuple(f"diff{a},{b}" for a, b in QUAD_DIRECTIONS)
#: the forms invariant under the class's tilts (f_i + <a, .>, h - <a, .>; f_i + <a_i, .>, c_i - a_i with sum a_i = 0;
#: docs/fednmap-reconstruction.md §10.10): only these are Lyapunov terms of a state; the others are measured in the
#: round's normal frame (where grad f(x_0) = 0 and c_0 = 0) and are not a function of the state
INVARIANT_FORMS: frozenset[str] = frozenset({"Fnor2", "corr", "mean1,1", "diff1,0"})


def families() -> dict[str, tuple[str, ...]]:
    """Every family the reduced PEP takes, by name."""
    from fedbounds.checks.fednmap.spep.search import FAMILIES

    return {**FAMILIES, "quad": QUAD}


def tilt_invariant(family: str) -> bool:
    """Whether every form of ``family`` is tilt invariant (:data:`INVARIANT_FORMS`): then the normal-form PEP is the PEP
    of every start state and its value is the family's K*; else only the ``free`` start's is (the others' value is
    below it, and bounds no Lyapunov function of the state)."""
    return set(_family_forms(family)) <= INVARIANT_FORMS


def start_for(family: str) -> str:
    """The start a family's K* is measured from: ``normal`` for a tilt-invariant family (provable), else ``free``."""
    return "normal" if tilt_invariant(family) else "free"


def _family_forms(family: str) -> tuple[str, ...]:
    known = families()
    if family not in known:
        raise ValueError(f"unknown Lyapunov family {family!r}; known: {', '.join(known)}")
    return known[family]


def _pep_builder(factory: Callable[..., Any]) -> Callable[..., Any]:
    from fedbounds.checks.pep.certificate import pep_builder

    return pep_builder("fednmap", "fednmap.spep: the searched Lyapunov function, client-symmetric reduced form", 1)(factory)


@_pep_builder
def build_reduced_search(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int | str, Q: int, tau: float, mu: float,
    family: str = "merit", sigma2: float = 1.0, row_scale: float | None = None, objective_scale: float = 1.0,
    start: str = "normal",
) -> Callable[[], Any]:
    """A builder of the reduced searched-Lyapunov PEP at rate r = tau eta_hat (module docstring; the arguments are
    :func:`fedbounds.checks.fednmap.spep.search.build_search_spep`'s, variant A): ``build()`` returns its exact rows
    as a :class:`fedbounds.checks.pep.certificate.Problem`, whose value is K*(r) sigma2.

    ``n``: a number of clients, or :data:`INF` (the text "inf", as a certificate file states it; ``math.inf`` is
    read as it, but only "inf" gives a build a certificate file can name) for the limit SDP: every 1/n coefficient is
    0 exactly, the rows of two different clients stay.
    ``family``: a name of :func:`families`. ``start``: "normal" (the start gradients of zero mean, the start's
    corrections 0: no instance lost for the tilt-invariant forms, :data:`INVARIANT_FORMS`) or "free" (both free:
    the PEP of every start state, in which a form that is not tilt invariant constrains nothing)."""
    from fedbounds.checks.fednmap.pep.encoding import _check
    from fedbounds.checks.pep.certificate import rational
    from fedbounds.checks.pep.solve import check_nonnegative

    n = _clients(n)
    if start not in ("normal", "free"):
        raise ValueError(f"start must be 'normal' or 'free', got {start!r}")
    L, rho, gamma, eta_a, eta_s, _, Q, _ = _check(L, rho, gamma, eta_a, eta_s, 2 if n == INF else n, Q, 1, "A", "free")
    tau, sigma2 = check_nonnegative("tau", tau), check_nonnegative("sigma2", sigma2)
    if not mu > 0:
        raise ValueError(f"mu must be > 0, got {mu!r}")
    forms = _family_forms(family)
    q = {k: rational(v) for k, v in (("L", L), ("rho", rho), ("gamma", gamma), ("eta_a", eta_a), ("eta_s", eta_s),
                                     ("tau", tau), ("mu", mu), ("sigma2", sigma2), ("objective_scale", objective_scale))}
    eta_hat = q["eta_s"] * q["eta_a"] * Q
    r = q["tau"] * eta_hat
    if not r < 1:
        raise ValueError(f"the rate tau eta_hat must be < 1, got {float(r)!r}")
    scale_rows = 1 / eta_hat if row_scale is None else rational(float(row_scale))

    def build() -> Any:
        lv, rows = _rows(q["L"], q["rho"], q["gamma"], q["eta_a"], q["eta_s"], n, Q, r, q["mu"], q["sigma2"], scale_rows,
                         q["objective_scale"], forms, start)
        return _problem(lv, rows, n)

    return build


def full_gram_dimension(n: int | str, Q: int) -> int | None:
    """The Gram size of the full PEP the reduced one stands for: 2 shared leaves and 3Q client slots per client, less
    the start gradients' zero mean (one dimension); None at n = INF."""
    return None if _clients(n) == INF else 2 + int(n) * 3 * Q - 1


def variance(n: int | str, Q: int, m: int = 1, rho: float = 0.1, k: float = 1.0) -> float:
    """The variance bound sigma2 = n Q / eta_hat^2 that :func:`point` writes the PEP at (its value K* sigma2 is then of
    order 1 at Theorem 5's steps); a certificate of the point is of the PEP at this sigma2. At n = INF (where n Q /
    eta_hat^2 diverges) it is Q / eta_hat^2, the n = 1 value: any finite sigma2 gives K* = value / sigma2."""
    from fedbounds.checks.fednmap.spep.existence import steps

    return (1 if _clients(n) == INF else n) * Q / steps(Q, m, rho, k)["eta_hat"] ** 2


def point(n: int | str, Q: int, tau: float, m: int = 1, rho: float = 0.1, k: float = 1.0, mu: float = 0.1,
          make: bool = False, family: str = "merit", start: str = "normal", room_abs: float | None = None) -> dict[str, Any]:
    """K*(tau eta_hat) at Theorem 5's printed steps (times k, window m) from the reduced PEP of ``family`` (n an integer
    or INF/math.inf): the stored exact
    certificate re-verified against the rebuilt rows (``status`` proved, ``K`` its bound), or, with ``make``, one made
    from three preconditioned Clarabel solves and stored first; else Clarabel's value with status ``single solver``
    (never counted as proved), or ``unbounded`` (K = inf) when every solve reads unbounded. The PEP is solved at
    the variance sigma2 = :func:`variance` (values of order 1; the
    value is K* sigma2 by homogeneity), so K = bound / sigma2. Records the solver values and the proof's room.
    ``room_abs``: where no relative room proves the value (K* about 0, as at n = INF, Q = 1), K <= value + room_abs
    is proved instead."""
    from fedbounds.checks.fednmap.spep.existence import L, steps
    from fedbounds.checks.pep.certificate import _write, attach, describe, stored

    n = _clients(n)
    p = steps(Q, m, rho, k)
    s2 = variance(n, Q, m, rho, k)
    build = build_reduced_search(L, rho, p["gamma"], p["eta_a"], p["eta_s"], n, Q, tau, mu, family=family, sigma2=s2,
                                 start=start)
    t0 = time.process_time()
    pb = build()
    runs = solve_preconditioned(pb)
    value = next((r.dual for r in reversed(runs) if r.status == "optimal"), None)
    rec: dict[str, Any] = {"n": n, "Q": Q, "m": m, "rho": rho, "tau": tau, "sigma2": s2, "hash": pb.digest,
                           "blocks": list(runs[-1].options.get("blocks", ())), "rows": len(pb.rows),
                           "gram_dim": full_gram_dimension(n, Q), "statuses": [r.status for r in runs],
                           "values": [None if r.dual is None else r.dual / s2 for r in runs],
                           "gaps": [None if r.gap is None else r.gap / s2 for r in runs]}
    if family != "merit" or start != "normal":
        rec.update(family=family, start=start)
    if make and value is not None and not stored(pb.digest).exists():
        cert = prove_rescaled(pb, runs)
        if cert is None and room_abs is not None and room_abs > 0:  # the value + room_abs (K* ~ 0: no relative room)
            import dataclasses

            cert = prove_rescaled(pb, [dataclasses.replace(r, dual=r.dual + room_abs * s2) if r.dual is not None else r
                                       for r in runs], widths=(1e-6, 1e-3))
            if cert is not None:
                cert["room_abs"] = room_abs
        if cert is not None:
            cert["problem"].update(describe(build) or {})
            _write(stored(pb.digest), cert)
            rec["room"] = cert["width"]
            rec["room_abs"] = cert.get("room_abs")
            rec["seconds_to_prove"] = cert["seconds_to_prove"]
    proof = attach(build, value if value is not None else 0.0) if stored(pb.digest).exists() else None
    if proof is not None and proof.get("status") == "proved":
        rec.update(status="proved", K=proof["bound"] / s2, proof=proof)
    elif value is not None:
        rec.update(status="single solver", K=value / s2)
    elif all(r.unbounded for r in runs):  # no member of the family contracts at this rate (Clarabel's reading)
        rec.update(status="unbounded", K=math.inf)
    else:
        rec.update(status="inconclusive", K=None)
    rec["cpu_s"] = round(time.process_time() - t0, 2)
    return rec
