"""DS FedProxGrad's findings (arXiv 2512.08671), each with evidence (docs/provenance.md §1.4-§1.5):

* status ``erratum``: a printed claim that is false or needs an unstated condition, with a counterexample or a proof
  (``erratum.ds_lower_bound_unstated``, ``erratum.ds_phi_prefix``, ``erratum.ds_schedule_at_zero``);
* status ``remark``: a printed claim that is true but notable (sufficient not necessary, loose, unused, a modelling
  consequence). Their ids keep the historical ``erratum.`` prefix, which other layers cite.

``depends_on`` names the claim corrected or commented on; ``proof`` the sympy steps.
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.claims import Claim, Provenance, Status
from fedbounds.theory.core.symbols import (
    L_F,
    B,
    R,
    c,
    c_gamma,
    eta,
    gamma_r,
    rho_f,
)
from fedbounds.theory.ds_fedproxgrad import PAPER as DS_FEDPROXGRAD
from fedbounds.theory.ds_fedproxgrad import formulas as ds

NOTE = "docs/ds-fedproxgrad-notes.md"


def _ds(label: str, section: str, equation: str = "") -> Provenance:
    return Provenance(DS_FEDPROXGRAD, label, f"{NOTE} {section}", "", equation)


DS_LOWER_BOUND = Claim(
    id="erratum.ds_lower_bound_unstated",
    title="F bounded below is used, never assumed",
    provenance=_ds("Theorem 5.3 (proof)", "§1.4 row (25), §1.5 item 1", "(25)"),
    status=Status.ERRATUM,
    quantity="F*",
    quantity_latex=r"F^\star=\inf F",
    conclusion=-sp.oo,
    relation=">",
    depends_on=("ds.theorem5_3",),
    statement="(25) uses F(x^{R+1}) >= F* but no assumption says F* > -inf (nor E F(x^0) < inf). Without it the theorem is false: "
    "N = 1, f_1(x) = -x, r = 0 meets every stated assumption and has ||grad F||^2 = 1 in every round. Erratum (an unstated "
    "condition, with a counterexample)",
    evidence="counterexample: proof step ds_unbounded_below (f_1 = -x: smooth, 0-weakly convex, (8) with G = B = 1, exact prox has "
    "gamma_r = 0, ||grad F||^2 = 1 forever); textual: no assumption of Section 4 bounds F below. Fix: add F* > -inf.",
    evidence_kinds=("counterexample", "textual"),
    proof=("ds_unbounded_below",),
)

DS_PHI_PREFIX = Claim(
    id="erratum.ds_phi_prefix",
    title="Phi_r >= 1/4 holds only from r_0 on; the telescoping must start there",
    provenance=_ds("Lemma 5.2 / Theorem 5.3 (proof)", "§1.4 rows 'Lemma 5.2 statement', (24)-(25); §1.5 item 2", "(14)"),
    status=Status.ERRATUM,
    quantity="Phi of the one-client quadratic f = L_F x^2/2 with the uphill error e = gamma_r grad f, lambda = 0, "
    "eta = 1/(6 L_F)",
    quantity_latex=r"\Phi=(1-\gamma_r)-\tfrac{L_F\eta}{2}(1-\gamma_r)^2",
    conclusion=(1 - gamma_r) - sp.Rational(1, 12) * (1 - gamma_r) ** 2,
    relation="==",
    hypotheses=(sp.Eq(eta, ds.eta_max_smooth, evaluate=False),),
    depends_on=("ds.lemma5_2",),
    statement="Lemma 5.2 states Phi_r >= 1/4 for all r and (24) telescopes from r = 0, but the proof only gives Phi_r = 1/4 once "
    "gamma_r <= 1/(sqrt(10) B) (r >= r_0), and the lemma itself fails before: with lambda = 0, N = 1, f = L_F x^2/2 and the "
    "uphill error e = gamma_r grad f (allowed by (10); gamma_r <= c_gamma eta with c_gamma large), F(x^+) - F(x) = -eta Phi "
    "||grad F||^2 with Phi = (1 - gamma_r) - (L_F eta/2)(1 - gamma_r)^2 and Xi_r = 0, below 1/4 at eta = 1/(6 L_F) exactly "
    "for gamma_r > sqrt(33) - 5 ~ 0.745 (gamma_r = 4/5: Phi = 59/300). Fix: state the lemma for r >= r_0 (ds.r0) and "
    "telescope from r_0 (the prefix is finite). Erratum (false as printed, with a counterexample)",
    evidence="sympy: proof step ds_phi_prefix (the instance's Phi in closed form, Xi_r = 0 there, Phi = 1/4 exactly at "
    "gamma_r = sqrt(33) - 5 and decreasing, 59/300 at gamma_r = 4/5); counterexample: that instance, run for one round by the "
    "check with the injected uphill error (violated). The earlier 'coefficient (20) = +1/48 at gamma_r = 1/2' refutes "
    "the proof's bound only: the instance's Phi there is 23/48 > 1/4.",
    evidence_kinds=("sympy", "counterexample"),
    proof=("ds_phi_prefix", "ds_absorption"),
    extra={"r0_power": ds.r0_power, "threshold": ds.absorption_gamma_max, "counterexample_gamma": sp.sqrt(33) - 5},
)

DS_WEAK_CONVEXITY = Claim(
    id="erratum.ds_weak_convexity_unused",
    title="Weak convexity is unused, and implied by smoothness; A4(iv) implies A4(ii)",
    provenance=_ds("Assumption 1(ii), Assumption 4(ii)", "§1.5 item 3"),
    status=Status.REMARK,
    quantity="rho",
    quantity_latex=r"\rho",
    conclusion=L_F,
    relation="<=",
    depends_on=("ds.assumption.weak_convexity", "ds.assumption.strong_convexity"),
    statement="every L_f-smooth f_i is L_f-weakly convex, so rho <= L_f <= L_F and eta <= 1/(6 L_F) already gives eta <= 1/(2 rho); "
    "the paper's own remark says weak convexity does not appear in Lemmas 5.1-5.2; the analysis constrains only the solver output (10). "
    "Remark (unused, implied): nothing printed is false",
    evidence="sympy: proof step ds_weak_convexity_implied (grad f + L_f id is monotone for an L_f-smooth f, through Cauchy-Schwarz "
    "proved by the Lagrange identity; L_F - L_f >= 0; 1/(2 rho) >= 3/(6 L_F) for rho <= L_F, equality at rho = L_F); "
    "textual: Remark 'On weak convexity'.",
    evidence_kinds=("sympy", "textual"),
    proof=("ds_weak_convexity_implied",),
    extra={"eta_max_weak": ds.eta_max_weak, "eta_max_smooth": ds.eta_max_smooth, "rho": rho_f},
)

DS_MU_R = Claim(
    id="erratum.ds_mu_r_unspecified",
    title="mu_r in A4(ii) is never given",
    provenance=_ds("Assumption 4(ii)", "§1.2 row A4(ii)"),
    status=Status.REMARK,
    quantity="mu_r",
    quantity_latex=r"\mu_r",
    conclusion=ds.mu_r,
    relation="==",
    depends_on=("ds.assumption.strong_convexity",),
    statement="A4(ii) says h_i(.; x^r) is mu_r-strongly convex without giving mu_r; it is 1/eta_r - rho >= 1/(2 eta_r). Remark (an "
    "omission that breaks nothing: mu_r is used nowhere else)",
    evidence="sympy: proof step ds_mu_r; textual: mu_r appears nowhere else.",
    evidence_kinds=("sympy", "textual"),
    proof=("ds_mu_r",),
)

DS_SCHEDULE_AT_ZERO = Claim(
    id="erratum.ds_schedule_at_zero",
    title="c/r^alpha is undefined at r = 0; c <= 1/(6 L_F) is also needed",
    provenance=_ds("Corollary (i)", "§1.4 row 'Cor. (i)'"),
    status=Status.ERRATUM,
    quantity="eta_r",
    quantity_latex=r"\eta_r",
    conclusion=ds.schedule_power,
    relation="==",
    hypotheses=(sp.Le(c, ds.eta_max_smooth, evaluate=False),),
    depends_on=("ds.corollary_i",),
    statement="the sums start at r = 0, where c/r^alpha is infinite; use eta_r = c/(r+1)^alpha, with c <= 1/(6 L_F) for A4(iv). "
    "Erratum (undefined as printed; needs an unstated condition on c)",
    evidence="sympy: proof step ds_schedule_at_zero ((c/r^alpha) at r = 0 is zoo; c/(r+1)^alpha is c).",
    evidence_kinds=("sympy",),
    proof=("ds_schedule_at_zero",),
)

DS_INEXACTNESS = Claim(
    id="erratum.ds_inexactness_gradient_step",
    title="(10) measures distance from a gradient step: the exact prox has gamma = L eta/(1 - L eta) > 0",
    provenance=_ds("Assumption 4(iii)", "§1.5 item 4", "(10)"),
    status=Status.REMARK,
    quantity="gamma_r of the exact prox",
    quantity_latex=r"\gamma_r^{\rm exact}",
    conclusion=ds.exact_prox_gamma,
    hypotheses=(sp.Lt(L_F * eta, 1),),
    depends_on=("ds.assumption.inexactness",),
    statement="for the exact prox point (y* - x)/eta = -grad f_i(y*), so e = grad f_i(x) - grad f_i(y*) != 0: the exact prox "
    "satisfies (10) "
    "only with gamma = L_f eta/(1 - L_f eta) (<= (6/5) L_f eta), attained by f_i = -L_f w^2/2, while one local gradient step "
    "has gamma = 0. The analysis treats FedProx as a perturbed gradient method; (10) is met by exact solves iff c_gamma >= (6/5) L_f. "
    "Remark (a proved modelling consequence): the analysis is correct for every solver meeting (10)",
    evidence="sympy: proof step ds_exact_prox_gamma (the bound, (6/5) L_f eta under L_f eta <= 1/6, tight example).",
    evidence_kinds=("sympy",),
    proof=("ds_exact_prox_gamma",),
)

DS_INEXACTNESS_RELATIVE = Claim(
    id="erratum.ds_inexactness_relative",
    title="(10) is relative: at a stationary point of f_i it forces an exact local solve",
    provenance=_ds("Assumption 4(iii)", "§1.5 item 7", "(10)"),
    status=Status.REMARK,
    quantity="||e_{f,i}^r|| when grad f_i(x^r) = 0",
    quantity_latex=r"\|\mathbf{e}_{f,i}^r\|\ \text{at}\ \nabla f_i(\mathbf{x}^r)=0",
    conclusion=sp.S.Zero,
    relation="==",
    depends_on=("ds.assumption.inexactness",),
    statement="(10) is relative: where grad f_i(x^r) = 0 it reads ||e_{f,i}|| <= 0, so a stochastic local solver cannot satisfy it near "
    "stationary points of f_i. The proof only uses E[||e_{f,i}||^2 | x^r], so E||e_{f,i}||^2 <= gamma_r^2 ||grad f_i||^2 + delta_r^2 "
    "with sum eta_r delta_r^2 < inf suffices: coefficient (20) is unchanged and the remainder gains eta_r (1 + 3 L_F eta_r/2) delta_r^2. "
    "Remark (a restrictive, sufficient condition)",
    evidence="sympy: proof step ds_inexactness_relaxed (Lemma 5.1 with the additive delta^2, the descent bound's coefficient (20) "
    "unchanged, the extra remainder eta (1 + 3 L_F eta/2) delta^2 <= (5/4) eta delta^2); textual: (10) is used only through Lemma 5.1, "
    "squared.",
    evidence_kinds=("sympy", "textual"),
    proof=("ds_inexactness_relaxed",),
)

CONSTANT_GAMMA_FLOOR = Claim(
    id="erratum.constant_gamma_floor",
    title="gamma_r = O(eta_r) is sufficient, not necessary; a constant gamma leaves a floor",
    provenance=_ds("Assumption 4(iii) / Theorem 5.3", "§1.5 item 6, §1.6, §3.6", "(10)"),
    status=Status.REMARK,
    quantity="limsup of (1/R) sum E||grad F||^2 with constant gamma (eta -> 0)",
    quantity_latex=r"\limsup\frac{1}{R}\sum_{r<R}\mathbb{E}\|\nabla F(\mathbf{x}^r)\|^2\ (\gamma\ \text{constant})",
    conclusion=ds.constant_gamma_floor,
    hypotheses=(sp.Le(gamma_r, ds.absorption_gamma_max, evaluate=False),),
    depends_on=("ds.assumption.inexactness", "ds.theorem5_3"),
    statement="the proof needs only sum_r eta_r gamma_r^2 < inf and eventual absorption (gamma_r <= 1/(sqrt(10) B)): "
    "gamma_r = c sqrt(eta_r) "
    "also gives Xi_r = O(eta_r^2); a constant gamma leaves the floor 5 C_e K_e^2 gamma^2 = gamma^2 (5 G^2 + 10 B^2 lambda^2 G_r^2). "
    "Remark (sufficient, not necessary)",
    evidence="sympy: proof step ds_gamma_relaxed (Xi/eta^2 bounded for gamma = c sqrt(eta); Xi/eta -> C_e K_e^2 gamma^2 for constant "
    "gamma; the floor as the R -> inf, eta -> 0 limit of the constant-step bound); numeric: see checks claim erratum.constant_gamma_floor "
    "(injected constant gamma plateaus, gamma = c sqrt(eta) converges).",
    evidence_kinds=("sympy", "numeric"),
    proof=("ds_gamma_relaxed",),
    extra={"relaxed_conditions": "sum eta_r gamma_r^2 < inf and gamma_r <= 1/(sqrt(10) B) eventually"},
)

DS_LOOSE_19 = Claim(
    id="erratum.ds_loose_19",
    title="(19) is loose: with e_f fixed before e^stoch the factor 3 becomes 2 and the noise term halves",
    provenance=_ds("Lemma 5.2 (proof)", "§1.4 row (19), 'Tighter variant of (19)'", "(19)"),
    status=Status.REMARK,
    quantity="coefficient of ||g||^2 (tight)",
    quantity_latex=r"[\|\mathbf{g}\|^2]_{\rm tight}",
    conclusion=ds.coefficient20_tight,
    relation="==",
    depends_on=("ds.coefficient20", "ds.lemma5_2"),
    statement="E||x^{r+1} - x^r||^2 = eta^2 ||-g + e_f||^2 + eta^2 E||e^stoch||^2 <= 2 eta^2 (||g||^2 + ||e_f||^2) + eta^2 sigma^2; "
    "then Phi_r -> 7/12 as gamma -> 0 at eta = 1/(6 L_F) (1/2 with (19), 1/4 as stated). Constants change, conclusions do not. "
    "Remark (loose)",
    evidence="sympy: proof step ds_quadratic_term (exact expectation) and proof step ds_tight_19 (coefficients, tight <= printed, "
    "Phi limits 7/12 and 1/2).",
    evidence_kinds=("sympy",),
    proof=("ds_quadratic_term", "ds_tight_19"),
    extra={"Xi_tight": ds.Xi_tight},
)

DS_COROLLARY_II_HORIZON = Claim(
    id="erratum.ds_corollary_ii_horizon",
    title="Corollary (ii)'s explicit bound holds only from R >= max(36 L_F^2 c^2, 10 B^2 c_gamma^2 c^2)",
    provenance=_ds("Corollary (ii)", "§1.4 row 'Cor. (ii)', §1.6", "(26)"),
    status=Status.REMARK,
    quantity="R",
    conclusion=ds.corollary_ii_horizon_min,
    relation=">=",
    depends_on=("ds.corollary_ii.rate",),
    statement="eta = c/sqrt(R) meets A4(iv) only for R >= 36 L_F^2 c^2, and gamma = c_gamma eta is absorbed in every round only for "
    "R >= 10 B^2 c_gamma^2 c^2; the explicit bound (ds.corollary_ii) holds from R >= max of the two (with a constant step there is no "
    "prefix to absorb). Remark, not erratum: the printed O(1/sqrt(R)) is a statement about large R, and every R beyond the horizon "
    "meets both conditions, so nothing printed is false; what is unstated is the horizon from which the constant applies",
    evidence="sympy: proof step ds_corollary_ii (both thresholds, the explicit bound and its sqrt(R) limit).",
    evidence_kinds=("sympy",),
    proof=("ds_corollary_ii",),
    extra={"eta": c / sp.sqrt(R), "gamma": c_gamma * c / sp.sqrt(R), "B": B},
)

DS_LEMMA_A1 = Claim(
    id="erratum.ds_lemma_a1_unused",
    title="Lemma A.1 is unused and its heading 'Iterate Boundedness' is a misnomer",
    provenance=_ds("Lemma A.1 / Appendix A.1", "§1.3, §1.4 row 'Lemma A.1'", "(27)"),
    status=Status.REMARK,
    quantity="use of (27) in Sections 5.1-5.3",
    conclusion=None,
    depends_on=("ds.lemma_a1",),
    statement="(27) bounds the local movement ||y_i - x||, not the iterates, and no step of Lemmas 5.1-5.2 or Theorem 5.3 cites it "
    "(the lemma itself is correct: proof step ds_lemmaA1). Remark (unused; a misnamed heading)",
    evidence="textual: Sections 5.1-5.3 never cite Lemma A.1; sympy: proof step ds_lemmaA1 (the lemma holds).",
    evidence_kinds=("textual", "sympy"),
    proof=("ds_lemmaA1",),
)



CLAIMS: tuple[Claim, ...] = (
    DS_LOWER_BOUND,
    DS_PHI_PREFIX,
    DS_WEAK_CONVEXITY,
    DS_MU_R,
    DS_SCHEDULE_AT_ZERO,
    DS_INEXACTNESS,
    DS_INEXACTNESS_RELATIVE,
    CONSTANT_GAMMA_FLOOR,
    DS_LOOSE_19,
    DS_COROLLARY_II_HORIZON,
    DS_LEMMA_A1,
)
