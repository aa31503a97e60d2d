"""FedNMap's findings (arXiv 2602.03357, surviving text), each with evidence (docs/provenance.md §1.4-§1.5):

* status ``erratum``: a printed claim that is false or needs an unstated condition, with a counterexample or a proof
  (``erratum.fednmap_delta_f``, ``erratum.fednmap_complexity_rho``);
* status ``remark``: true but notable (``erratum.fednmap_pl_complexity``, ``erratum.fednmap_theorem8_m_coupling``,
  ``erratum.fednmap_sum_index``); the ids keep their historical ``erratum.`` prefix.

``depends_on`` names the claim corrected or commented on; ``proof`` the sympy steps.
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.claims import Claim, Provenance, Status
from fedbounds.theory.core.symbols import (
    L,
    Q,
    eta_hat,
    m,
    mu,
    n,
    rho,
    sigma2,
)
from fedbounds.theory.fednmap import PAPER as FEDNMAP
from fedbounds.theory.fednmap import formulas as fn

NOTE = "docs/fednmap-reconstruction.md"


def _fn(label: str, section: str, equation: str = "") -> Provenance:
    return Provenance(FEDNMAP, label, f"{NOTE} {section}", "", equation)


FN_DELTA_F = Claim(
    id="erratum.fednmap_delta_f",
    title="Delta_f = f(x_0) - f* where psi(x_0) - psi* is meant",
    provenance=_fn("Section 1.2 / Theorem 5 complexity", "§4, §8 item 1"),
    status=Status.ERRATUM,
    quantity="Delta",
    quantity_latex=r"\Delta",
    conclusion=sp.Symbol("psi(x_0) - psi*", nonnegative=True),
    relation="==",
    depends_on=("fednmap.theorem5.complexity",),
    statement="for a composite objective the initial gap is psi(x_0) - psi* (Theorem 8 uses E[L_0]); f* is never defined. With f* = inf f "
    "the printed complexity can be 0 at a non-stationary x_0: n = 1, f = x^2/2, phi = |x - 1|, x_0 = 0 gives Delta_f = 0 and "
    "||grad f(x_0)||^2 = 0 while psi(x_0) - psi* = 1/2 and F_nat(x_0) = -gamma. Erratum (false as printed, with a counterexample)",
    evidence="counterexample: proof step fednmap_delta_f (the printed complexity evaluates to 0; psi(x_0) - psi* = 1/2; "
    "F_nat(x_0) = -gamma); textual: f* undefined.",
    evidence_kinds=("counterexample", "textual"),
    proof=("fednmap_delta_f",),
)

FN_NONCONVEX_L = Claim(
    id="erratum.fednmap_complexity_rho",
    title="The nonconvex complexity shows L where the conditions give L + rho",
    provenance=_fn("Section 1.2 / Theorem 5 complexity", "§8 item 6"),
    status=Status.ERRATUM,
    quantity="1/eta_hat_max at gamma = 1/(5(rho + L))",
    quantity_latex=r"1/\hat\eta_{\max}",
    conclusion=500 * m * (rho + L),
    relation=">=",
    depends_on=("fednmap.theorem5.complexity",),
    statement="Theorem 5's conditions force 1/eta_hat >= 100 m sqrt(L^2 + 1/gamma^2)/(1 - gamma rho) >= 500 m (rho + L), so the "
    "round count grows with rho at fixed L; the printed O(L Delta_f sigma^2/(n Q eps^4) + L Delta_f/eps^2 + ...) has no rho "
    "(the PL complexity has L + rho). Erratum (needs an unstated condition): the printed form follows from Theorem 5's conditions only "
    "if rho = O(L), which is not assumed; probably an O-simplification",
    evidence="sympy: proof step fednmap_rho_in_complexity; textual: compare the PL complexity's (L + rho).",
    evidence_kinds=("sympy", "textual"),
    proof=("fednmap_rho_in_complexity",),
)

FN_PL_COMPLEXITY = Claim(
    id="erratum.fednmap_pl_complexity",
    title="The PL complexity's second term: its eps and Q powers follow from Theorem 8 with eta_s = Q^(-1/2), its mu dependence does not",
    provenance=_fn("Section 1.2 / Theorem 8 complexity", "§4 (PL complexity), §8 item 5"),
    status=Status.REMARK,
    quantity="rounds the drift term costs with eta_s = Q^(-1/2)",
    conclusion=fn.theorem8_complexity_drift_term_Q_half,
    relation="O~",
    depends_on=("fednmap.theorem8.complexity", "fednmap.theorem8.complexity_derived", "fednmap.theorem5.eta_s_free"),
    statement="from Theorem 8's bound with m = m_max(eta_hat) and eta_s free, T = O~((1 + gamma mu C_0)/mu * max(S sigma^2/((1-gamma rho) "
    "n Q mu eps), S/(1-gamma rho))): eps powers -1 and 0, and no eps^(-1/2) term is needed. With eta_s = Q^(-1/2), which Theorem 5 allows "
    "(fednmap.theorem5.eta_s_free), eta_hat = eta_a sqrt(Q) and the drift term costs O~((1 + gamma mu C_0)/(1 - gamma rho) "
    "sqrt(L^2 sigma^2/(eps mu^3))) rounds: eps^(-1/2) and Q-free, like the printed sqrt(L^2 sigma^2/(eps mu (L + rho + mu)^2)). Only the "
    "mu and (L + rho + mu) dependence is unexplained: the printed term is smaller by the factor (L + rho + mu)/mu >= 1, which Theorem "
    "8's printed bound does not give (the lost proof may). Remark, not erratum: nothing shows the printed complexity false, and with "
    "eta_s free its second term is not needed",
    evidence="sympy: proof step fednmap_pl_complexity (eps powers of the eta_s-free complexity; with eta_s = Q^(-1/2) the drift rounds "
    "equal (9/2) sqrt(36300) (1 + gamma mu C_0)/(1 - gamma rho) sqrt(L^2 sigma^2/(eps mu^3)) log(3 E[L_0]/eps); the printed term has the "
    "same eps, Q and sigma powers and differs by the factor (L + rho + mu)/mu) and proof step fednmap_pl_complexity_derived (each term of "
    "the bound <= eps/3).",
    evidence_kinds=("sympy",),
    proof=("fednmap_pl_complexity", "fednmap_pl_complexity_derived"),
    extra={"printed": fn.theorem8_complexity, "derived": fn.theorem8_complexity_derived,
           "drift_term_eta_s1": fn.theorem8_complexity_drift_term_eta_s1},
)

FN_M_COUPLING = Claim(
    id="erratum.fednmap_theorem8_m_coupling",
    title="Theorem 8's variance term has no step size: the speedup needs m tied to eta_hat",
    provenance=_fn("Theorem 8", "§8 item 4"),
    status=Status.REMARK,
    quantity="Theorem 8 floor at m = 1, eta_a -> 0",
    conclusion=36 * sigma2 / (n * mu * Q),
    relation="==",
    depends_on=("fednmap.theorem8",),
    statement="m = 1 is admissible for every eta_hat <= (1 - gamma rho)/(100 S), and then the floor 36 sigma^2/(n mu Q) does not shrink "
    "with the step; the statement needs m = m_max(eta_hat) (variance term O(eta_hat)) to give the linear speedup it claims. Remark "
    "(a reading note): the bound is true for every admissible m, and m = m_max(eta_hat) is admissible",
    evidence="sympy: proof step fednmap_m_coupling and proof step fednmap_floor_coupled.",
    evidence_kinds=("sympy",),
    proof=("fednmap_m_coupling", "fednmap_floor_coupled"),
    extra={"m_max": fn.m_max, "eta_hat": eta_hat},
)

FN_SUM_INDEX = Claim(
    id="erratum.fednmap_sum_index",
    title="Section 2.1 reuses i as the summation index inside client i's expression",
    provenance=_fn("Section 2.1", "§2.1, §8 item 2"),
    status=Status.REMARK,
    quantity="y_{i,t+1}",
    conclusion=None,
    depends_on=("fednmap.compact_form",),
    statement="(1/n) sum_{i=1}^n y_{i,t} should read (1/n) sum_{j=1}^n y_{j,t} (the c_{i,t} definition uses j); with that reading the "
    "identity holds exactly. Remark (notation): the bound index shadows the client index, but a bound index is a dummy, so the printed "
    "identity is not false",
    evidence="textual: the display; sympy: proof step fednmap_compact_form checks the corrected identity on a symbolic run.",
    evidence_kinds=("textual", "sympy"),
    proof=("fednmap_compact_form",),
)


CLAIMS: tuple[Claim, ...] = (
    FN_DELTA_F,
    FN_NONCONVEX_L,
    FN_PL_COMPLEXITY,
    FN_M_COUPLING,
    FN_SUM_INDEX,
)
