"""DS FedProxGrad Lemma 5.2, proved over a box of (gamma_r, eta) by one parametric PEP certificate.

The slice: one client (N = 1, so (8) holds with B = 1), lambda = 0, G = sigma = 0, the erratum's setting
(``erratum.ds_phi_prefix``; docs/ds-fedproxgrad-notes.md §1.5 item 2). There Xi_r = 0 and Lemma 5.2 reads

    F(x+) - F(x) <= -eta Phi ||grad F(x)||^2,        x+ = x - eta grad f(x) + eta e,  ||e|| <= gamma_r ||grad f(x)||  (10)

for every L_F-smooth f (L_F = 1 w.l.o.g.: f -> f(./s)/s^2 scaling; eta then stands for L_F eta, so the range
eta <= 1/(6 L_F) of A4(iv) is eta in (0, 1/6]). The PEP's rows at x = 0 (f(x) = 0), x+ (f(x+) = f+), with the Gram
basis g = grad f(x), e, h = grad f(x+):

* ``interp(x, x+)``: the smooth interpolation inequality with i = x, j = x+ (Taylor, Hendrickx, Glineur 2017,
  mu = -L): f(x) >= f(x+) + <h, x - x+> + ||g - h||^2/2 - ||x - x+ - (g - h)||^2/4;
* ``interp(x+, x)``: the same with i and j swapped;
* ``error (10)``: gamma_r^2 ||g||^2 - ||e||^2 >= 0.

Multipliers (derived by :func:`derive` from the worst case, the quadratic f = ||y - c||^2/2 with the uphill error
e = gamma_r g, which makes ``interp(x, x+)`` and (10) tight; the remainder S must annihilate its Gram vector
(1, gamma_r, 1 - eta (1 - gamma_r))):

    y[interp(x, x+)] = 1,   y[interp(x+, x)] = 0,   y[error (10)] = eta (1 - eta (1 - gamma_r)) / (2 gamma_r).

Two claims, both proved by :func:`verify`:

* :func:`tight_certificate`: Phi = Phi*(gamma_r, eta) = (1 - gamma_r) - (eta/2)(1 - gamma_r)^2, the exact worst
  case (the certificate's S is singular: the quadratic attains it), over gamma_r in (0, 1), eta in (0, 1/6].
* :func:`lemma_certificate`: Phi = 1/4 as printed, over gamma_r in (0, gamma_max], eta in (0, 1/6]. It verifies for
  gamma_max = sqrt(33) - 5 (:data:`THRESHOLD`) and for no larger gamma_max: the minor det S carries the factor
  2 eta (1 - gamma_r)^2 + 4 gamma_r - 3 = -4 (Phi* - 1/4), which changes sign on the box exactly when the box passes
  the threshold; beyond it the erratum's counterexample (the same quadratic) has Phi* < 1/4. Proof and counterexample
  meet at gamma_r = sqrt(33) - 5, eta = 1/6.
"""

from __future__ import annotations

import sympy as sp
from fedbounds.checks.pep.parametric import Basis, Box, ParametricCertificate, ParametricProblem, Proof, Row, latex, verify
from fedbounds.theory.core.symbols import eta, gamma_r

__all__ = ["LATEX_SYMBOLS", "THRESHOLD", "derive", "lemma_certificate", "phi_star", "problem", "tight_certificate"]

#: the erratum's threshold: Phi*(gamma_r, 1/6) = 1/4 there
THRESHOLD = sp.sqrt(33) - 5
#: eta's range, in units of 1/L_F (A4(iv))
ETA_MAX = sp.Rational(1, 6)
#: Lemma 5.2's printed Phi
QUARTER = sp.Rational(1, 4)
#: the paper's symbols for the Gram basis
LATEX_SYMBOLS = {"g": r"\nabla f(\mathbf{x}^r)", "e": r"\mathbf{e}^r", "h": r"\nabla f(\mathbf{x}^{r+1})"}

#: the exact worst case of the slice (the quadratic with the uphill error): Phi* = (1 - gamma_r) - (eta/2)(1 - gamma_r)^2
phi_star = (1 - gamma_r) - eta / 2 * (1 - gamma_r) ** 2


def _interp(B: Basis, xi: dict, gi: dict, fi: sp.Expr, xj: dict, gj: dict, fj: sp.Expr) -> sp.Expr:
    """f_i - f_j - <g_j, x_i - x_j> - ||g_i - g_j||^2/2 + ||x_i - x_j - (g_i - g_j)||^2/4 >= 0 (L = 1)."""
    dx, dg = B.comb((1, xi), (-1, xj)), B.comb((1, gi), (-1, gj))
    w = B.comb((1, dx), (-1, dg))
    return fi - fj - B.ip(gj, dx) - B.ip(dg, dg) / 2 + B.ip(w, w) / 4


def problem(Phi: sp.Expr, gamma_max: sp.Expr = THRESHOLD, gamma_open: bool = False) -> ParametricProblem:
    """The claim -eta Phi ||g||^2 - (f(x+) - f(x)) >= 0 over gamma_r in (0, gamma_max], eta in (0, 1/6]."""
    B = Basis(("g", "e", "h"))
    g, e, h = B.vec("g"), B.vec("e"), B.vec("h")
    x0: dict = {}
    xp = B.comb((-eta, g), (eta, e))
    fp = sp.Symbol("f_plus")
    rows = (
        Row("interp(x, x+)", _interp(B, x0, g, sp.S.Zero, xp, h, fp),
            r"f(\mathbf{x}^r) - f(\mathbf{x}^{r+1}) - \langle \nabla f(\mathbf{x}^{r+1}), \mathbf{x}^r - \mathbf{x}^{r+1}\rangle"
            r" - \tfrac{1}{2L_F}\|\nabla f(\mathbf{x}^r) - \nabla f(\mathbf{x}^{r+1})\|^2"
            r" + \tfrac{L_F}{4}"
            r"\|\mathbf{x}^r - \mathbf{x}^{r+1} - \tfrac{1}{L_F}(\nabla f(\mathbf{x}^r) - \nabla f(\mathbf{x}^{r+1}))\|^2"),
        Row("interp(x+, x)", _interp(B, xp, h, fp, x0, g, sp.S.Zero),
            r"f(\mathbf{x}^{r+1}) - f(\mathbf{x}^r) - \langle \nabla f(\mathbf{x}^r), \mathbf{x}^{r+1} - \mathbf{x}^r\rangle - \dots"),
        Row("error (10)", gamma_r**2 * B.ip(g, g) - B.ip(e, e),
            r"\gamma_r^2\|\nabla f(\mathbf{x}^r)\|^2 - \|\mathbf{e}^r\|^2"),
    )
    box = Box(((gamma_r, sp.S.Zero, sp.sympify(gamma_max), True, gamma_open), (eta, sp.S.Zero, ETA_MAX, True, False)))
    target = -eta * Phi * B.ip(g, g) - fp
    return ParametricProblem(
        title=f"DS FedProxGrad Lemma 5.2 (N = 1, lambda = 0, L_F = 1), Phi = {Phi}",
        basis=B, values=(fp,), target=target, rows=rows, box=box,
        target_latex=rf"f(\mathbf{{x}}^r) - f(\mathbf{{x}}^{{r+1}}) - \eta_r\left({sp.latex(Phi)}\right)\|\nabla f(\mathbf{{x}}^r)\|^2")


def derive() -> dict[str, sp.Expr]:
    """The multipliers from the worst case: y[interp(x, x+)] = 1 cancels f(x+); y[error (10)] solves S v* = 0 for the
    quadratic's Gram vector v* = (1, gamma_r, 1 - eta (1 - gamma_r)) at Phi = Phi*."""
    y = sp.Symbol("y_error")
    pb = problem(phi_star, gamma_max=1, gamma_open=True)
    R = pb.target - pb.rows[0].expr - y * pb.rows[2].expr
    S = pb.basis.matrix(sp.expand(R - sp.expand(R).coeff(pb.values[0]) * pb.values[0]))
    v = sp.Matrix([1, gamma_r, 1 - eta * (1 - gamma_r)])
    eqs = [sp.numer(sp.together(q)) for q in S * v if sp.simplify(q) != 0]
    (sol,) = sp.solve(eqs[:1], [y], dict=True)
    if any(sp.simplify(q.subs(sol)) != 0 for q in eqs):
        raise AssertionError("the worst case's Gram vector is not in the kernel of S")
    return {"interp(x, x+)": sp.S.One, "error (10)": sp.factor(sol[y])}


#: the multipliers, as printed in the module docstring
MULTIPLIERS = {"interp(x, x+)": sp.S.One, "error (10)": eta * (1 - eta * (1 - gamma_r)) / (2 * gamma_r)}


def tight_certificate() -> ParametricCertificate:
    """Phi = Phi*(gamma_r, eta) over gamma_r in (0, 1), eta in (0, 1/6]: the slice's exact worst case, proved."""
    return ParametricCertificate(problem(phi_star, gamma_max=1, gamma_open=True), MULTIPLIERS)


def lemma_certificate(gamma_max: sp.Expr = THRESHOLD, Phi: sp.Expr = QUARTER) -> ParametricCertificate:
    """Lemma 5.2 as printed (Phi = 1/4) over gamma_r in (0, gamma_max], eta in (0, 1/6]."""
    return ParametricCertificate(problem(Phi, gamma_max=gamma_max), MULTIPLIERS)


def prove(cert: ParametricCertificate, definite: bool = True) -> tuple[Proof, str]:
    """Verify exactly and write the proof in LaTeX. ``definite``: S is shown positive definite on the open box by its
    leading minors (Lemma 5.2's Phi = 1/4); False for the tight Phi*, whose S is singular (every principal minor)."""
    proof = verify(cert, definite=definite)
    return proof, latex(cert, LATEX_SYMBOLS, proof)
