"""FedNMap's deterministic per-round descent at (n, Q) = (2, 1), proved for every eta_hat in (0, Theorem 5's maximum].

One round of Algorithm 1 (docs/fednmap-reconstruction.md §2; :mod:`fedbounds.checks.fednmap.pep.encoding`) at Q = 1
from z_0 with corrections c_i (sum 0): x_0 = prox_{gamma phi}(z_0), y_i = grad f_i(x_0) + v_0 + c_i with
v_0 = (z_0 - x_0)/gamma, so ybar = F_nor(z_0) and

    z_1 = z_0 - eta_hat F_nor(z_0),      c_i^+ = grad f(x_0) - grad f_i(x_0),

whatever eta_a, eta_s and the incoming corrections. The reconstructed Lyapunov function (§10.1)

    Lyap(z, c) = psi(prox z) + (gamma C_0/2) ||F_nor(z)||^2 + C_c (1/n) sum_i ||c_i + grad f_i(x) - grad f(x)||^2

should decrease by (eta_hat/9) ||F_nor(z_0)||^2 (the descent the paper's Section 4 needs). The incoming corrections
only add C_c (1/n) sum_i ||c_i + grad f_i(x_0) - grad f(x_0)||^2 >= 0 to Lyap_0, which is 0 for c_i = grad f(x_0) -
grad f_i(x_0) (allowed: they sum to 0), the worst case; so the claim, for every instance of the class, is

    psi(x_0) + (gamma C_0/2)||F_0||^2 - psi(x_1) - (gamma C_0/2)||F_1||^2
        - C_c (1/2) sum_i ||(grad f_i(x_1) - grad f(x_1)) - (grad f_i(x_0) - grad f(x_0))||^2 - (eta_hat/9)||F_0||^2 >= 0.

Class: f_1, f_2 L-smooth (possibly nonconvex), phi rho-weakly convex. Constants: L = 1 (scaling), rho = 1/11 (then
Theorem 5's gamma_max = 1/(5 (rho + L)) = 11/60 and sqrt(L^2 + 1/gamma^2) = 61/11 are rational, so the printed
eta_hat_max = (1 - gamma rho)/(100 sqrt(L^2 + 1/gamma^2)) = 649/366000 is too), gamma = gamma_max, C_0 = C_c = 1 (the
point of the committed family ``fednmap.pep``: "the reconstructed descent at C_0 = C_c = 1").

Gram basis (a difference basis, as in encoding.py): s_0 (phi's subgradient at x_0), u = (s_1 - s_0)/eta_hat, g_i0
(f_i's gradients at x_0), d_i = (grad f_i(x_1) - g_i0)/eta_hat; x_0 = 0, z_0 = gamma s_0, x_1 = z_1 - gamma s_1 (an
invertible change of basis for eta_hat > 0, so the claim is the same). Rows: f_i's smooth interpolation both ways
between x_0 and x_1 (4 rows), phi's weakly convex interpolation both ways (2 rows).

The proof (:func:`certificate`, verified by :func:`prove`): multipliers y[f_i(x0; x1)] = 1/2 + 1/(10 eta_hat),
y[f_i(x1; x0)] = 1/(10 eta_hat), y[phi(x0; x1)] = 1 + 1/(20 eta_hat), y[phi(x1; x0)] = 1/(20 eta_hat). S annihilates
the two invariances of :data:`KERNEL`; the rest (4 x 4) is positive definite for every eta_hat in (0, 649/366000]
by its leading minors (Sturm). The same multipliers still prove the descent at 10 x the printed maximum and break
at eta_hat = 2/15 (the last leading minor carries the factor 15 eta_hat - 2). The descent coefficient: the PEP's
worst case at the printed maximum is about 0.814 eta_hat (Clarabel), so eta_hat/9 is met with room; a claimed
(9/10) eta_hat must fail, and does.
"""

from __future__ import annotations

import sympy as sp
from fedbounds.checks.pep.parametric import Basis, Box, ParametricCertificate, ParametricProblem, Proof, Row, latex, verify
from fedbounds.theory.core.symbols import eta_hat

__all__ = ["C_0", "C_C", "ETA_HAT_MAX", "GAMMA", "KERNEL", "LATEX_SYMBOLS", "RHO", "L", "certificate", "multipliers", "problem", "prove"]

L = sp.S.One
RHO = sp.Rational(1, 11)
GAMMA = 1 / (5 * (RHO + L))
ETA_HAT_MAX = (1 - GAMMA * RHO) / (100 * sp.sqrt(L**2 + 1 / GAMMA**2))
C_0 = sp.S.One
C_C = sp.S.One
#: the descent coefficient the reconstruction needs (theory: lyapunov_descent_per_round)
DESCENT = eta_hat / 9

LATEX_SYMBOLS = {"s0": r"s_0", "u": r"\tfrac{s_1 - s_0}{\hat\eta}", "g10": r"\nabla f_1(x_0)", "g20": r"\nabla f_2(x_0)",
                 "d1": r"\tfrac{\nabla f_1(x_1) - \nabla f_1(x_0)}{\hat\eta}", "d2": r"\tfrac{\nabla f_2(x_1) - \nabla f_2(x_0)}{\hat\eta}"}


def _smooth(B: Basis, xi: dict, gi: dict, fi: sp.Expr, xj: dict, gj: dict, fj: sp.Expr) -> sp.Expr:
    """L-smooth interpolation, i against j: f_i - f_j - <g_j, x_i - x_j> - ||g_i - g_j||^2/(2L) + (L/4)||x_i - x_j - (g_i - g_j)/L||^2."""
    dx, dg = B.comb((1, xi), (-1, xj)), B.comb((1, gi), (-1, gj))
    w = B.comb((1, dx), (-1 / L, dg))
    return fi - fj - B.ip(gj, dx) - B.ip(dg, dg) / (2 * L) + L / 4 * B.ip(w, w)


def _weakly_convex(B: Basis, xi: dict, fi: sp.Expr, xj: dict, sj: dict, fj: sp.Expr) -> sp.Expr:
    """rho-weakly convex interpolation: phi_i - phi_j - <s_j, x_i - x_j> + (rho/2)||x_i - x_j||^2 >= 0."""
    dx = B.comb((1, xi), (-1, xj))
    return fi - fj - B.ip(sj, dx) + RHO / 2 * B.ip(dx, dx)


def problem(descent: sp.Expr = DESCENT, eta_hat_max: sp.Expr = ETA_HAT_MAX) -> ParametricProblem:
    B = Basis(("s0", "u", "g10", "g20", "d1", "d2"))
    s0 = B.vec("s0")
    s1 = B.comb((1, s0), (eta_hat, B.vec("u")))
    g0 = [B.vec("g10"), B.vec("g20")]
    g1 = [B.comb((1, g0[i]), (eta_hat, B.vec(f"d{i + 1}"))) for i in range(2)]
    f0 = [sp.Symbol("f1_0"), sp.Symbol("f2_0")]
    f1 = [sp.Symbol("f1_1"), sp.Symbol("f2_1")]
    p0, p1 = sp.Symbol("phi_0"), sp.Symbol("phi_1")
    half = sp.Rational(1, 2)
    x0: dict = {}
    gbar0 = B.comb((half, g0[0]), (half, g0[1]))
    gbar1 = B.comb((half, g1[0]), (half, g1[1]))
    F0 = B.comb((1, gbar0), (1, s0))
    z1 = B.comb((GAMMA, s0), (-eta_hat, F0))
    x1 = B.comb((1, z1), (-GAMMA, s1))
    F1 = B.comb((1, gbar1), (1, s1))
    rows = []
    for i in range(2):
        for (a, b), (xa, ga, fa, xb, gb, fb) in (((0, 1), (x0, g0[i], f0[i], x1, g1[i], f1[i])),
                                                  ((1, 0), (x1, g1[i], f1[i], x0, g0[i], f0[i]))):
            k = i + 1
            tex = (rf"f_{k}(x_{a}) - f_{k}(x_{b}) - \langle \nabla f_{k}(x_{b}), x_{a} - x_{b}\rangle"
                   rf" - \tfrac{{1}}{{2L}}\|\nabla f_{k}(x_{a}) - \nabla f_{k}(x_{b})\|^2"
                   rf" + \tfrac{{L}}{{4}}\|x_{a} - x_{b} - \tfrac{{1}}{{L}}(\nabla f_{k}(x_{a}) - \nabla f_{k}(x_{b}))\|^2")
            rows.append(Row(f"f{k}(x{a}; x{b})", _smooth(B, xa, ga, fa, xb, gb, fb), tex))
    rows.append(Row("phi(x0; x1)", _weakly_convex(B, x0, p0, x1, s1, p1),
                    r"\varphi(x_0) - \varphi(x_1) - \langle s_1, x_0 - x_1\rangle + \tfrac{\rho}{2}\|x_0 - x_1\|^2"))
    rows.append(Row("phi(x1; x0)", _weakly_convex(B, x1, p1, x0, s0, p0),
                    r"\varphi(x_1) - \varphi(x_0) - \langle s_0, x_1 - x_0\rangle + \tfrac{\rho}{2}\|x_1 - x_0\|^2"))
    psi0 = (f0[0] + f0[1]) / 2 + p0
    psi1 = (f1[0] + f1[1]) / 2 + p1
    corr = sum(B.ip(d, d) for d in (B.comb((1, g1[i]), (-1, gbar1), (-1, g0[i]), (1, gbar0)) for i in range(2))) / 2
    target = (psi0 + GAMMA * C_0 / 2 * B.ip(F0, F0) - psi1 - GAMMA * C_0 / 2 * B.ip(F1, F1) - C_C * corr
              - descent * B.ip(F0, F0))
    box = Box(((eta_hat, sp.S.Zero, sp.sympify(eta_hat_max), True, False),))
    return ParametricProblem(
        title=f"FedNMap descent at (n, Q) = (2, 1), L = 1, rho = {RHO}, gamma = {GAMMA}, C_0 = {C_0}, C_c = {C_C}",
        basis=B, values=(*f0, *f1, p0, p1), target=target, rows=tuple(rows), box=box,
        target_latex=r"\mathcal{L}_0 - \mathcal{L}_1 - " + sp.latex(descent) + r"\,\|F_{\rm nor}(z_0)\|^2")


def F0_squared() -> sp.Expr:
    """||F_nor(z_0)||^2 in the Gram symbols (the slack direction when searching the largest descent)."""
    B = problem().basis
    half = sp.Rational(1, 2)
    F0 = B.comb((half, B.vec("g10")), (half, B.vec("g20")), (1, B.vec("s0")))
    return B.ip(F0, F0)


def prove(cert: ParametricCertificate) -> tuple[Proof, str]:
    """Verify exactly (with the invariance's kernel) and write the proof in LaTeX."""
    proof = verify(cert, KERNEL)
    return proof, latex(cert, LATEX_SYMBOLS, proof)


#: two invariances, which S annihilates: f_i + <a, .>, phi - <a, .>, z - gamma a (encoding.py, ``_Round.start``);
#: f_1 + <a, .>, f_2 - <a, .> (f, hence psi, the round and the corrections' errors unchanged)
KERNEL = ((-1, 0, 1, 1, 0, 0), (0, 0, 1, -1, 0, 0))
#: the common parts of the interpolation multipliers, times eta_hat
ALPHA, BETA = sp.Rational(1, 10), sp.Rational(1, 20)


def multipliers(alpha: sp.Expr = ALPHA, beta: sp.Expr = BETA) -> dict[str, sp.Expr]:
    """y[f_i(x0; x1)] = 1/2 + alpha/eta_hat, y[f_i(x1; x0)] = alpha/eta_hat, y[phi(x0; x1)] = 1 + beta/eta_hat,
    y[phi(x1; x0)] = beta/eta_hat: the differences 1/2 and 1 cancel psi's values; the common parts, read off the
    dual solutions at sample steps (about 0.087/eta_hat and 0.03-0.05/eta_hat), are rounded to simple rationals."""
    a, b = alpha / eta_hat, beta / eta_hat
    half = sp.Rational(1, 2)
    return {"f1(x0; x1)": half + a, "f1(x1; x0)": a, "f2(x0; x1)": half + a, "f2(x1; x0)": a,
            "phi(x0; x1)": 1 + b, "phi(x1; x0)": b}


def certificate(descent: sp.Expr = DESCENT, eta_hat_max: sp.Expr = ETA_HAT_MAX) -> ParametricCertificate:
    """The descent Lyap_0 - Lyap_1 >= ``descent`` ||F_nor(z_0)||^2 over eta_hat in (0, ``eta_hat_max``]."""
    return ParametricCertificate(problem(descent, eta_hat_max), multipliers())
