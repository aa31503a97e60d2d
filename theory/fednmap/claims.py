"""FedNMap's claims (Huang, Pu, Johansson; arXiv 2602.03357), with provenance and status.

Sources: the partial copy ``fednmap-2602.03357-partial.md`` (verbatim text, cut off in Section 4) and the
reconstruction note ``docs/fednmap-reconstruction.md`` (sections cited as "note §k"). Formulas live in
:mod:`fedbounds.theory.fednmap.formulas`; derived claims name their proof steps in :mod:`fedbounds.theory.core.proofs`.

Problem (1): min_x psi(x) = f(x) + phi(x), f = (1/n) sum_i f_i; Algorithm 1 (FedNMap) runs Q local normal-map
steps per round with a correction term c_{i,t}, uploads y_{i,t}, and the server takes z_{t+1} = z_t - eta_hat ybar_t,
x_{t+1} = prox_{gamma phi}(z_{t+1}).
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.claims import Claim, Provenance, Status
from fedbounds.theory.core.printing import latex as _latex
from fedbounds.theory.core.symbols import (
    C_0,
    EL_0,
    C_c,
    Fnat2,
    Fnor2,
    L,
    L_t,
    Q,
    T,
    eta_a,
    eta_hat,
    gamma,
    m,
    n,
    rho,
    sigma2,
)
from fedbounds.theory.fednmap import PAPER as FEDNMAP
from fedbounds.theory.fednmap import formulas as core
from fedbounds.theory.fednmap import recovered
from fedbounds.theory.fednmap.claims_inside import CLAIMS as INSIDE_CLAIMS
from fedbounds.theory.fednmap.table1 import TABLE1, Table1Entry

NOTE = "docs/fednmap-reconstruction.md"
PAPER_COPY = "fednmap-2602.03357-partial.md"


def _prov(label: str, section: str, equation: str = "", note: str = "") -> Provenance:
    return Provenance(FEDNMAP, label, f"{NOTE} {section}", note, equation)


def _le(lhs: sp.Expr, rhs: sp.Expr) -> sp.Basic:
    """``lhs <= rhs`` kept unevaluated (a hypothesis, not a fact)."""
    return sp.Le(lhs, rhs, evaluate=False)


THEOREM5_HYPOTHESES = tuple(_le(sym, bound) for sym, bound in core.theorem5_conditions.items())

ASSUMPTION1 = Claim(
    id="fednmap.assumption1",
    title="Assumption 1: unbiased stochastic gradients with bounded variance",
    provenance=_prov("Assumption 1", "§1", note="only the left cell E[||g_i(x; xi_i) - grad f_i(x)||^2 | x] survives; <= sigma^2 and "
                     "unbiasedness are our reading (high confidence: sigma^2 appears in every rate)"),
    status=Status.RECONSTRUCTED,
    quantity="E[||g_i(x; xi_i) - grad f_i(x)||^2 | x]",
    quantity_latex=r"\mathbb{E}\left[\|g_i(x;\xi_i)-\nabla f_i(x)\|^2\,\middle|\,x\right]",
    conclusion=sigma2,
    statement="E[g_i(x; xi_i) | x] = grad f_i(x) and E[||g_i(x; xi_i) - grad f_i(x)||^2 | x] <= sigma^2",
)

ASSUMPTION2 = Claim(
    id="fednmap.assumption2",
    title="Assumption 2: L-smooth f_i on dom(phi); psi bounded below",
    provenance=_prov("Assumption 2", "§1", note="the v2 introduction says 'on an open set containing dom(phi)'"),
    status=Status.VERBATIM,
    quantity="||grad f_i(x) - grad f_i(x')|| / ||x - x'||",
    conclusion=L,
    statement="||grad f_i(x) - grad f_i(x')|| <= L ||x - x'|| for x, x' in dom(phi); psi(x) >= psi* := inf psi > -inf",
    latex_text=r"\|\nabla f_i(x)-\nabla f_i(x')\|\le L\|x-x'\|\ \ \forall x,x'\in\mathrm{dom}(\varphi),\qquad "
    r"\psi(x)\ge\psi^*:=\inf_{x}\psi(x)>-\infty",
)

ASSUMPTION3 = Claim(
    id="fednmap.assumption3",
    title="Assumption 3: phi is rho-weakly convex, lsc, lower bounded, proper",
    provenance=_prov("Assumption 3", "§1"),
    status=Status.VERBATIM,
    quantity="weak-convexity modulus of phi",
    conclusion=rho,
    relation="==",
    statement="phi: R^p -> (-inf, inf] is rho-weakly convex (phi + (rho/2)||.||^2 convex), lower semicontinuous, lower bounded, proper",
    latex_text=r"\varphi+\tfrac{\rho}{2}\|\cdot\|^2\ \text{convex},\ \varphi\ \text{lsc, lower bounded, proper}",
)

ASSUMPTION4 = Claim(
    id="fednmap.assumption4",
    title="Assumption 4: proximal PL inequality (used only in Theorem 8)",
    provenance=_prov("Assumption 4", "§1", equation="(2)", note="the quantifier (presumably for all x in dom(phi)) is lost"),
    status=Status.VERBATIM,
    quantity="2 mu (psi(x) - psi*)",
    quantity_latex=r"2\mu\,(\psi(x)-\psi^*)",
    conclusion=sp.Symbol("dist(0, d psi(x))^2", nonnegative=True),
    statement="2 mu (psi(x) - psi*) <= dist(0, d psi(x))^2",
    latex_text=r"2\mu\left(\psi(x)-\psi^{*}\right)\leq\left[\mathrm{dist}\left(0,\partial\psi(x)\right)\right]^{2}",
)

ETA_HAT = Claim(
    id="fednmap.eta_hat",
    title="Effective step eta_hat = eta_s eta_a Q",
    provenance=_prov("Section 2 / Theorem 5", "§2.4", note="the definition is lost; the server step is printed as Q eta_s eta_a"),
    status=Status.RECONSTRUCTED,
    quantity="eta_hat",
    quantity_latex=r"\hat\eta",
    conclusion=core.eta_hat_definition,
    relation="==",
    statement="eta_hat := eta_s eta_a Q, so z_{t+1} = z_t - eta_hat ybar_t (high confidence)",
)

THEOREM5_CONDITIONS = Claim(
    id="fednmap.theorem5.conditions",
    title="Theorem 5: step-size conditions",
    provenance=_prov("Theorem 5", "§4", note="verbatim display before the (lost) bound"),
    status=Status.VERBATIM,
    quantity="(gamma, eta_hat, eta_a) admissible",
    conclusion=None,
    hypotheses=THEOREM5_HYPOTHESES,
    depends_on=("fednmap.eta_hat",),
    statement="gamma <= 1/(5(rho+L)), eta_hat <= (1-gamma rho)/(100 m sqrt(L^2+1/gamma^2)), "
    "eta_a <= (1-gamma rho)/(100 Q sqrt(m (L^2+1/gamma^2)))",
    latex_text=r",\quad ".join(_latex(h) for h in THEOREM5_HYPOTHESES),
    extra={"conditions": core.theorem5_conditions},
)

WINDOW = Claim(
    id="fednmap.theorem5.window",
    title="The window m and its largest value m_max(eta_hat)",
    provenance=_prov("Theorem 5 / Section 4", "§4 (observations), §5", note="m >= 1 is an analysis parameter ('intervals of m >= 1 "
                     "communication rounds', verbatim); m_max solves the eta_hat condition for m"),
    status=Status.DERIVED,
    quantity="m",
    conclusion=core.m_max,
    hypotheses=(sp.Ge(m, 1, evaluate=False), _le(eta_hat, core.eta_hat_max_window1)),
    depends_on=("fednmap.theorem5.conditions",),
    statement="1 <= m <= m_max(eta_hat) = floor((1 - gamma rho)/(100 eta_hat sqrt(L^2 + 1/gamma^2)))",
    proof=("fednmap_m_max",),
    extra={"window_real": core.window_real, "eta_hat_max_window1": core.eta_hat_max_window1},
    reaches=(("fednmap_m_max", "m_max", "conclusion"),),
)

ETA_S_FREE = Claim(
    id="fednmap.theorem5.eta_s_free",
    title="Theorem 5 leaves the server step eta_s free",
    provenance=_prov("Theorem 5", "§4 (observations)"),
    status=Status.DERIVED,
    quantity="eta_hat_max / (Q eta_a_max)",
    conclusion=core.eta_s_at_maxima,
    relation="==",
    depends_on=("fednmap.theorem5.conditions", "fednmap.eta_hat"),
    statement="eta_a Q <= (...)/sqrt(m) while eta_hat <= (...)/m, so eta_s = 1/sqrt(m) at both maxima, and every eta_s > 0 "
    "is admissible with a suitable eta_a",
    proof=("fednmap_eta_s_free",),
    reaches=(("fednmap_eta_s_free", "eta_s_at_maxima", "conclusion"),),
)

ONE_MINUS_GAMMA_RHO = Claim(
    id="fednmap.theorem5.one_minus_gamma_rho",
    title="gamma <= 1/(5(rho+L)) gives 1 - gamma rho >= 4/5",
    provenance=_prov("Theorem 5", "§4 (observations)"),
    status=Status.DERIVED,
    quantity="1 - gamma rho",
    conclusion=sp.Rational(4, 5),
    relation=">=",
    hypotheses=(_le(gamma, core.theorem5_gamma_max),),
    depends_on=("fednmap.theorem5.conditions",),
    statement="gamma <= 1/(5(rho+L)) implies 1 - gamma rho >= 4/5",
    proof=("fednmap_one_minus_gamma_rho",),
    reaches=(("fednmap_one_minus_gamma_rho", "four_fifths", "conclusion"),),
)

THEOREM5_BOUND = Claim(
    id="fednmap.theorem5.bound",
    title="Theorem 5 bound (form only; constants lost)",
    provenance=_prov("Theorem 5", "§4", note="only the first cell 'eta_hat' of the display survives; this is the note's likely form "
                     "by analogy with Theorem 8; constants unknown, so it cannot be checked quantitatively"),
    status=Status.RECONSTRUCTED,
    quantity="(1/T) sum_t E||F_nor(z_t)||^2",
    quantity_latex=r"\frac{1}{T}\sum_{t<T}\mathbb{E}\|\mathrm{F}^{\gamma}_{\rm nor}(z_t)\|^2",
    conclusion=EL_0 / (eta_hat * T) + sigma2 / (m * n * Q) + eta_a**2 * Q * L**2 * sigma2 / (1 - gamma * rho) ** 2,
    relation="O",
    hypotheses=THEOREM5_HYPOTHESES,
    depends_on=("fednmap.theorem5.conditions",),
    unknowns=(EL_0,),
    statement="(1/T) sum E||F_nor(z_t)||^2 = O(E[L_0]/(eta_hat T) + sigma^2/(m n Q) + eta_a^2 Q L^2 sigma^2/(1-gamma rho)^2) "
    "(low confidence); its hypotheses, Theorem 5's step-size conditions, are verbatim",
    hypotheses_status=Status.VERBATIM,
)

THEOREM5_RATE = Claim(
    id="fednmap.theorem5.rate",
    title="Theorem 5 / Table 1 rate (nonconvex)",
    provenance=Provenance(FEDNMAP, "Table 1 (FedNMap, f NCVX)", f"{NOTE} §4, §7; {PAPER_COPY}"),
    status=Status.VERBATIM,
    quantity="rate",
    conclusion=core.theorem5_rate,
    relation="O",
    depends_on=("fednmap.theorem5.conditions",),
    statement="O(sqrt(sigma^2/(n Q T)) + 1/T)",
)

THEOREM5_COMPLEXITY = Claim(
    id="fednmap.theorem5.complexity",
    title="Communication complexity (nonconvex), Section 1.2 / after Theorem 5",
    provenance=_prov("Section 1.2 / Theorem 5 corollary", "§4", note="epsilon-solution definition lost; Delta_f := f(x_0) - f* as printed"),
    status=Status.VERBATIM,
    quantity="communication rounds for an epsilon-solution",
    conclusion=core.theorem5_complexity,
    relation="O",
    depends_on=("fednmap.theorem5.rate",),
    statement="O(L Delta_f sigma^2/(n Q eps^4) + L Delta_f/eps^2 + (1/n) sum ||grad f_i(x_0)||^2/eps^2), Delta_f := f(x_0) - f*",
)

NAT_NOR_RELATION = Claim(
    id="fednmap.nat_nor_relation",
    title="Natural residual vs normal map",
    provenance=_prov("Section 3 (after Theorem 5's proof)", "§3", note="left side '(1 - gamma rho)||F_nat(prox(z))||' verbatim; the right "
                     "side gamma ||F_nor(z)|| is reconstructed and proved here"),
    status=Status.DERIVED,
    quantity="||F_nat(prox(z))||^2",
    quantity_latex=r"\|\mathrm{F}^{\gamma}_{\rm nat}(\mathrm{prox}_{\gamma\varphi}(z))\|^2",
    conclusion=core.nat_nor_sq_bound,
    hypotheses=(sp.Lt(gamma * rho, 1),),
    depends_on=("fednmap.assumption3",),
    statement="(1 - gamma rho) ||F_nat(prox(z))|| <= gamma ||F_nor(z)|| for gamma < 1/rho (tight: equality for phi = -rho y^2/2)",
    proof=("fednmap_nat_nor_relation", "fednmap_nat_nor_tight"),
    reaches=(("fednmap_nat_nor_relation", "bound", "conclusion"), ("fednmap_nat_nor_tight", "bound", "conclusion")),
    extra={"factor": core.nat_nor_factor, "reverse_factor": core.nor_nat_reverse_factor, "Fnat2": Fnat2},
)

NOR_IN_SUBDIFFERENTIAL = Claim(
    id="fednmap.nor_in_subdifferential",
    title="F_nor(z) lies in d psi(prox(z))",
    provenance=_prov("Section 3", "§3"),
    status=Status.DERIVED,
    quantity="dist(0, d psi(prox(z)))^2",
    conclusion=Fnor2,
    hypotheses=(sp.Lt(gamma * rho, 1),),
    depends_on=("fednmap.assumption3",),
    statement="(z - prox(z))/gamma is in d phi(prox(z)), so F_nor(z) is in d psi(prox(z)) and dist(0, d psi(x_t)) <= ||F_nor(z_t)||",
    proof=("fednmap_nor_in_subdifferential",),
    reaches=(("fednmap_nor_in_subdifferential", "bound", "conclusion"),),
)

THEOREM8 = Claim(
    id="fednmap.theorem8",
    title="Theorem 8 (proximal PL)",
    provenance=_prov("Theorem 8", "§4, §4.2", note="the bound is verbatim; Theorem 8's own step-size conditions are lost, and Theorem 5's "
                     "conditions stand in for them (hypotheses reconstructed); C_0 and L_t not defined in the surviving text"),
    status=Status.VERBATIM,
    hypotheses_status=Status.RECONSTRUCTED,
    quantity="E[psi(x_T)] - psi*",
    quantity_latex=r"\mathbb{E}[\psi(x_T)]-\psi^*",
    conclusion=core.theorem8_bound,
    hypotheses=THEOREM5_HYPOTHESES,
    depends_on=("fednmap.assumption1", "fednmap.assumption2", "fednmap.assumption3", "fednmap.assumption4", "fednmap.theorem5.conditions"),
    unknowns=(C_0, EL_0),
    statement="E[psi(x_T)] - psi* <= exp(-2 eta_hat mu T/(9(1 + gamma mu C_0))) E[L_0] + 36 sigma^2/(m n mu Q) "
    "+ 12100 eta_a^2 Q L^2 sigma^2/(mu (1 - gamma rho)^2) (bound verbatim; hypotheses: Theorem 5's conditions, reconstructed)",
    extra={"transient": core.theorem8_transient, "variance": core.theorem8_variance, "drift": core.theorem8_drift},
)

THEOREM8_FLOOR = Claim(
    id="fednmap.theorem8.floor",
    title="Theorem 8: what remains as T grows",
    provenance=_prov("Theorem 8", "§4, §8 item 4"),
    status=Status.DERIVED,
    quantity="lim_{T -> inf} (Theorem 8 bound)",
    conclusion=core.theorem8_floor,
    relation="==",
    depends_on=("fednmap.theorem8",),
    statement="36 sigma^2/(m n mu Q) + 12100 eta_a^2 Q L^2 sigma^2/(mu (1 - gamma rho)^2)",
    proof=("fednmap_theorem8_floor",),
    reaches=(("fednmap_theorem8_floor", "floor", "conclusion"),),
)

THEOREM8_FLOOR_COUPLED = Claim(
    id="fednmap.theorem8.floor_coupled",
    title="Theorem 8 floor with m = m_max(eta_hat): O(eta_hat) + drift",
    provenance=_prov("Theorem 8", "§4, §8 item 4", note="the variance term has no step size; it is small only through m <= m_max(eta_hat)"),
    status=Status.DERIVED,
    quantity="Theorem 8 floor at m = m_max(eta_hat)",
    conclusion=core.theorem8_floor_coupled_upper,
    hypotheses=(_le(eta_hat, core.eta_hat_max_window1),),
    depends_on=("fednmap.theorem8.floor", "fednmap.theorem5.window"),
    statement="with m = m_max(eta_hat) the variance term is <= 7200 eta_hat sqrt(L^2+1/gamma^2) sigma^2/((1-gamma rho) n mu Q), "
    "linear in eta_hat (linear speedup in n Q); the drift term is governed by eta_a alone",
    proof=("fednmap_floor_coupled", "fednmap_m_max"),
    extra={"floor_at_m_max": core.theorem8_floor_coupled},
    reaches=(("fednmap_floor_coupled", "upper", "conclusion"),),
)

THEOREM8_COMPLEXITY = Claim(
    id="fednmap.theorem8.complexity",
    title="PL communication complexity, Section 1.2 / after Theorem 8",
    provenance=_prov("Section 1.2 / Theorem 8 corollary", "§4, §8 item 5"),
    status=Status.VERBATIM,
    quantity="communication rounds for E[psi(x_T) - psi*] <= eps",
    conclusion=core.theorem8_complexity,
    relation="O~",
    depends_on=("fednmap.theorem8",),
    statement="O~((L + rho) sigma^2/(n Q eps mu^2) + sqrt(L^2 sigma^2/(eps mu (L + rho + mu)^2)))",
)

THEOREM8_COMPLEXITY_DERIVED = Claim(
    id="fednmap.theorem8.complexity_derived",
    title="PL complexity as Theorem 8's bound gives it (m = m_max(eta_hat), eta_s free)",
    provenance=_prov("Theorem 8", "§4, §8 item 5"),
    status=Status.DERIVED,
    quantity="rounds T with E[psi(x_T)] - psi* <= eps",
    conclusion=core.theorem8_complexity_derived,
    depends_on=("fednmap.theorem8", "fednmap.theorem8.floor_coupled", "fednmap.theorem5.eta_s_free"),
    unknowns=(C_0, EL_0),
    statement="each term <= eps/3: eta_hat <= (1-gamma rho) n mu Q eps/(21600 S sigma^2) and <= (1-gamma rho)/(100 S), "
    "eta_a <= (1-gamma rho) sqrt(eps mu/(36300 Q L^2 sigma^2)) (no effect on T: eta_s free; with eta_s = Q^(-1/2) instead it costs "
    "O~(sqrt(L^2 sigma^2/(eps mu^3))) rounds), "
    "T >= 9(1+gamma mu C_0)/(2 eta_hat mu) log(3 E[L_0]/eps); S = sqrt(L^2+1/gamma^2)",
    proof=("fednmap_pl_complexity_derived", "fednmap_pl_complexity"),
    extra={
        "eta_hat_for_variance": core.theorem8_eta_hat_for_variance,
        "eta_a_for_drift": core.theorem8_eta_a_for_drift,
        "rounds_for_transient": core.theorem8_rounds_for_transient,
        "drift_term_eta_s1": core.theorem8_complexity_drift_term_eta_s1,
        "drift_term_Q_half": core.theorem8_complexity_drift_term_Q_half,
    },
    reaches=(("fednmap_pl_complexity_derived", "complexity", "conclusion"),
             ("fednmap_pl_complexity_derived", "eta_hat_for_variance", "eta_hat_for_variance"),
             ("fednmap_pl_complexity_derived", "eta_a_for_drift", "eta_a_for_drift"),
             ("fednmap_pl_complexity_derived", "rounds_for_transient", "rounds_for_transient"),
             ("fednmap_pl_complexity", "drift_term", "drift_term_Q_half")),
)

THEOREM8_RATE = Claim(
    id="fednmap.theorem8.rate",
    title="Theorem 8 / Table 1 rate (proximal PL)",
    provenance=Provenance(FEDNMAP, "Table 1 (FedNMap, psi PL)", f"{NOTE} §4, §7; {PAPER_COPY}"),
    status=Status.VERBATIM,
    quantity="rate",
    conclusion=core.theorem8_rate,
    relation="O~",
    depends_on=("fednmap.theorem8",),
    statement="O~(sigma^2/(n Q T) + sigma^2/T^2)",
)

LYAPUNOV = Claim(
    id="fednmap.lyapunov",
    title="Lyapunov function L_t and the per-window decrease Theorem 8 needs",
    provenance=_prov("Section 4 / Appendix C.2", "§4 (Lyapunov structure), §5", note="L_t and C_0 are lost; this is the note's reading: "
                     "the Qiu-Milzarek merit psi(prox z) + (tau gamma/2)||F_nor||^2 with tau = C_0, plus the correction error"),
    status=Status.RECONSTRUCTED,
    quantity="L_{t+m}",
    quantity_latex=r"\mathcal{L}_{t+m}",
    conclusion=core.lyapunov_window_bound,
    hypotheses=(*THEOREM5_HYPOTHESES, _le(m * core.theorem8_rate_exponent, 1)),
    depends_on=("fednmap.theorem8", "fednmap.nor_in_subdifferential", "fednmap.assumption4"),
    unknowns=(C_0, C_c),
    statement="L_t = psi(x_t) - psi* + (gamma C_0/2)||F_nor(z_t)||^2 + C_c (1/n) sum_i ||c_{i,t} + grad f_i(x_t) - grad f(x_t)||^2; "
    "Theorem 8's exponent and floor follow from L_{t+m} <= (1 - 2 eta_hat mu m/(9(1+gamma mu C_0))) L_t "
    "+ (2 eta_hat mu m/(9(1+gamma mu C_0))) * floor (per round: factor 1 - 2 eta_hat mu/(9(1+gamma mu C_0)))",
    proof=("fednmap_lyapunov_contraction", "fednmap_lyapunov_unroll"),
    extra={
        "L_t": core.lyapunov,
        "merit": core.lyapunov_merit,
        "merit_pl_upper": core.lyapunov_merit_pl_upper,
        "descent_per_round": core.lyapunov_descent_per_round,
        "round_factor": core.lyapunov_round_factor,
        "window_factor": core.lyapunov_window_factor,
        "window_noise": core.lyapunov_window_noise,
        "window_bound": core.lyapunov_window_bound,
        "L_t_symbol": L_t,
    },
)

COMPACT_FORM = Claim(
    id="fednmap.compact_form",
    title="Compact form of Algorithm 1 and the tracking identity",
    provenance=_prov("Section 2, Section 2.1", "§2.2, §2.5, §7", note="local update derived from the verbatim y_{i,t} and the Section 2.1 "
                     "identity; checked on a symbolic run with n = 2, Q = 2, three rounds"),
    status=Status.DERIVED,
    quantity="z_{t+1}",
    conclusion=sp.Symbol("z_t") - eta_hat * (sp.Symbol("gbar_t") + sp.Symbol("v_t")),
    relation="==",
    depends_on=("fednmap.eta_hat",),
    statement="y_i = gbar_i + v + c_i, sum_i c_i = 0, c_{i,t} = gbar_{t-1} - gbar_{i,t-1}, ybar = gbar + v, "
    "z_{t+1} = z_t - eta_hat (gbar_t + (z_t - x_t)/gamma); y_{i,t+1} = ybar_t + (gbar_{i,t+1} + v_{t+1}) - (gbar_{i,t} + v_t)",
    proof=("fednmap_compact_form",),
    reaches=(("fednmap_compact_form", "z_next", "conclusion"),),
)

FIXED_POINT = Claim(
    id="fednmap.fixed_point",
    title="Exact fixed point under arbitrary heterogeneity",
    provenance=_prov("Section 2 (design)", "§2.5"),
    status=Status.DERIVED,
    quantity="local direction at (z*, c*)",
    conclusion=sp.S.Zero,
    relation="==",
    depends_on=("fednmap.compact_form",),
    statement="if F_nor(z*) = 0 and c_i = grad f(x*) - grad f_i(x*), exact local steps do not move",
    proof=("fednmap_fixed_point",),
    extra={"correction": sp.Symbol("gf", real=True) - sp.Symbol("gf_i", real=True)},
    reaches=(("fednmap_fixed_point", "correction", "correction"),),
)


def _table1_claim(row: Table1Entry) -> Claim:
    rate = row.rate
    return Claim(
        id=f"fednmap.table1.{row.key}",
        title=f"Table 1: {row.method} ({row.reference})",
        provenance=Provenance(FEDNMAP, "Table 1", f"{NOTE} §7; {PAPER_COPY}"),
        status=Status.VERBATIM,
        quantity="convergence rate" if rate is not None else "convergence rate: not established",
        conclusion=rate,
        relation=row.rate_kind or "O",
        statement=f"{row.objective}, phi {row.regularizer}, assumptions {row.assumptions}: {row.rate_text}",
        extra={"requires": row.requires},
        latex_text="" if rate is not None else r"\text{" + row.method + r" (" + row.objective + r"): not established}",
    )


def _window_text() -> str:
    """Both ends of the committed C_0 window at the first (n, Q), for titles and statements."""
    w = recovered.c0_window_summary()
    if not w:
        return "C_0 window not computed"
    lo, up = w[0]["lower"], w[0]["upper"]
    f = lambda v: "?" if v is None else f"{v:.3g}"  # noqa: E731
    return (f"C_0 from ({f(lo[0])}, {f(lo[1])}] to [{f(up[0])}, {f(up[1])}) at (n, Q) = ({w[0]['n']}, {w[0]['Q']})")


PEP_LYAPUNOV_CONSTANTS = Claim(
    id="fednmap.pep.lyapunov_constants",
    title="The reconstructed descent with eta_hat/9 holds over the whole class for C_0 in a window (PEP); C_c is not "
    "identified at sigma = 0",
    provenance=_prov("Section 4 / Appendix C.2", "§10", note="C_0 and C_c are lost with the text; the PEP certifies the window of "
                     "C_0 in which the reconstructed descent holds (a principled reconstruction, not the paper's numbers); "
                     "the grid's (C_0, C_c) = (1, 1) is a point inside it, not a recovered value"),
    status=Status.RECONSTRUCTED,
    quantity="(L_0 - L_T)/T over T rounds (||F_nor||^2: min_t ||F_nor(z_t)||^2), C_0 in the certified window; the grid at "
    "C_0 = C_c = 1 from c_0 = 0",
    quantity_latex=r"(\mathcal{L}_0 - \mathcal{L}_T)/T\ (C_0 \in \text{window})",
    conclusion=core.lyapunov_descent_per_round,
    relation=">=",
    hypotheses=(*THEOREM5_HYPOTHESES, sp.Eq(C_0, 1, evaluate=False), sp.Eq(C_c, 1, evaluate=False)),
    depends_on=("fednmap.lyapunov", "fednmap.theorem5.conditions"),
    evidence=recovered.lyapunov_constants_evidence(),
    evidence_kinds=("numeric",),
    statement="L_{t+1} <= L_t - (eta_hat/9) ||F_nor(z_t)||^2 over every L-smooth f_i and rho-weakly convex phi (deterministic "
    f"rounds) holds for {_window_text()} (T = 1 from free corrections, steps 16 x printed, C_c = 1), and in its T-round form "
    "from c_0 = 0 at (C_0, C_c) = (1, 1) at "
    f"{recovered.descent_summary()['certified']}/{recovered.descent_summary()['total']} grid points (worst ratio "
    f"{recovered.descent_summary()['worst_ratio'] or float('nan'):.3f}, a reading at C_0 = 1 of the curve d*(C_0) in the "
    "evidence). C_c is not identified by sigma = 0 rounds",
)

def _theorem8_exponent_claim() -> Claim:
    """Theorem 8's exponent on the searched Lyapunov family at the printed steps (its text built from the front)."""
    from fedbounds.theory.fednmap import theorem8_c0 as T8

    fr = T8.front()
    lo, hi = fr.get("tau_low"), fr.get("tau_high")
    t8 = T8.theorem_tau(fr) if fr else None
    room = (f"with room x{lo / t8:.3g} (the family's largest rate in [x{lo / t8:.3g}, x{hi / t8:.3g}) of it)"
            if lo and hi and t8 else "(no decided front committed)")
    return Claim(
        id="fednmap.pep.theorem8_exponent",
        title=f"Theorem 8's per-round exponent at the printed steps: a searched Lyapunov function contracts at its largest "
        f"rate 2 eta_hat mu/9 (C_0 = 0) {room}",
        provenance=_prov("Theorem 8", "§10.9", note="L_t and C_0 are lost with the text; the Lyapunov function is a decision "
                         "variable (psi - psi* + p ||F_nor||^2 + alpha corr, p, alpha >= 0 found by the SDP), so no C_0 or "
                         "C_c is chosen by us; the exponent is compared at C_0 = 0, its largest value, so it holds for "
                         "every C_0 >= 0; hypotheses: Theorem 5's step conditions (Theorem 8's are lost)"),
        status=Status.RECONSTRUCTED,
        quantity="e8(0)/(tau_family eta_hat): Theorem 8's exponent at C_0 = 0 over the largest rate at which some member "
        "of the searched family is proved to contract (K* finite), at the front's point",
        conclusion=T8.exponent_ratio,
        relation="<=",
        hypotheses=(sp.Ge(C_0, 0, evaluate=False), *THEOREM5_HYPOTHESES),
        hypotheses_status=Status.RECONSTRUCTED,
        depends_on=("fednmap.theorem8",),
        unknowns=(T8.tau_family,),
        evidence="numeric: the front of the committed table theorem8_c0.json (regenerated by python -m "
        "fedbounds.checks.fednmap.spep.existence --write), at Theorem 5's printed steps (k = 1), L = 1, mu = 0.1: "
        + T8.exponent_text() + ". fedbounds check --claim fednmap.pep.theorem8_exponent re-verifies the largest proved "
        "rate's exact certificate against the rebuilt PEP (no SDP solved for it) and solves one SDP at tau_high for its "
        "control (Theorem 8's tau replaced by tau_high: unbounded, violated). The chosen-constant figures this claim "
        "used to give (C_0 = C_c = 1, 16 x the printed steps) are the study fednmap.pep.shape_exponent",
        evidence_kinds=("numeric",),
        statement="at Theorem 5's printed steps some V >= psi - psi* of the searched family has E[V_{t+1}] <= (1 - r) V_t "
        "+ K sigma^2 over the (proximal-PL) class with r = 2 eta_hat mu/9, Theorem 8's exponent at C_0 = 0, hence at every "
        "r = 2 eta_hat mu/(9 (1 + gamma mu C_0)), C_0 >= 0; " + room,
    )


PEP_THEOREM8_EXPONENT = _theorem8_exponent_claim()

PEP_SHAPE_EXPONENT = Claim(
    id="fednmap.pep.shape_exponent",
    title="Study, not a verdict on Theorem 8: the one-round contraction of the reconstructed Lyapunov shape at chosen C_0 = "
    "C_c = 1 and 16x the printed steps (PEP); its room is a curve over C_0",
    provenance=_prov("reconstructed Lyapunov shape (§4.2), a study at chosen constants", "§10",
                     note="C_0 and C_c are lost with the text; here they are chosen by us (C_0 = C_c = 1), at 16 x Theorem "
                     "5's printed steps, so scope outside: a study of our shape, never evidence for Theorem 8 (that is "
                     "fednmap.pep.theorem8_exponent, on a searched Lyapunov function at the printed steps); the "
                     "proximal-PL class is relaxed to the PL inequality at the points the round visits, so the certified "
                     "exponent is a lower bound"),
    status=Status.RECONSTRUCTED,
    quantity="1 - L_1/L_0 (one round, sigma = 0, the shape at C_0 = C_c = 1)",
    conclusion=core.theorem8_rate_exponent.subs(C_0, 1),
    relation=">=",
    hypotheses=(*THEOREM5_HYPOTHESES, sp.Eq(C_0, 1, evaluate=False), sp.Eq(C_c, 1, evaluate=False)),
    hypotheses_status=Status.RECONSTRUCTED,
    depends_on=("fednmap.lyapunov", "fednmap.pep.lyapunov_constants"),
    evidence="numeric: recomputed at every run by fedbounds check --claim fednmap.pep.shape_exponent (quick: two points "
    "at 16x the printed steps; --profile full: 12 points, k in 4, 16, mu in 0.1, 0.5, (n, Q) in (1, 1), (2, 1), (2, 2)). "
    "The ratio certified / 2 eta_hat mu/(9 (1 + gamma mu C_0)) depends on the C_0 we chose; over C_0 (committed, "
    "pep_c0_window.json): "
    + "; ".join(f"C_0={r['C_0']:g} (n={r['n']}, Q={r['Q']}, mu={r['mu']:g}): "
                + ("x{:.3g}".format(r["ratio"]) if r["ratio"] is not None else r["status"])
                for r in recovered.exponent_curve())
    + ". So no single factor is a property of the theorem",
    evidence_kinds=("numeric",),
    statement="on our reconstructed shape with C_0 = C_c = 1 (chosen, a point of the certified C_0 window), at 16 x the "
    "printed steps, the worst one-round contraction of L_t over the (relaxed) proximal-PL class is at least "
    "2 eta_hat mu/(9 (1 + gamma mu)) where the SDP solves; the room is published as a curve over C_0, not as one factor",
)

PEP_LARGEST_STEP = Claim(
    id="fednmap.pep.largest_step",
    title="The largest step the deterministic PEP certifies is the frozen shift's stability limit, eta_hat ~ 1.85 gamma "
    "(192-200 x Theorem 5's printed steps)",
    provenance=_prov("Theorem 5", "§10", note="the printed 1/100, m, sqrt(m) and Q pay for the window, the noise and the drift, "
                     "which deterministic rounds with T <= 2 do not contain; the certified multiple is not a measure of how "
                     "conservative they are"),
    status=Status.REMARK,
    quantity="k = largest certified eta_hat / printed eta_hat",
    conclusion=None,
    hypotheses=THEOREM5_HYPOTHESES,
    depends_on=("fednmap.theorem5.conditions",),
    evidence=recovered.largest_step_evidence(),
    evidence_kinds=("numeric",),
    statement="the descent with eta_hat/9 stays certified in deterministic rounds up to k = "
    f"{recovered.largest_step_summary()['k_min'] or float('nan'):.4g}..{recovered.largest_step_summary()['k_max'] or float('nan'):.4g}"
    " times Theorem 5's printed (eta_hat, eta_a) on the grid, i.e. eta_hat* = "
    + ("?" if recovered.stability_summary()["eta_hat_over_gamma"] is None else
       "{:.3g}..{:.3g}".format(*recovered.stability_summary()["eta_hat_over_gamma"]))
    + " gamma: the stability limit 2 gamma of the frozen shift v_t, not the price of noise, window or drift that the "
    "printed factors pay (fedbounds feasible fednmap reports the certified steps per point)",
)


TABLE1_CLAIMS: tuple[Claim, ...] = tuple(_table1_claim(row) for row in TABLE1)

CLAIMS: tuple[Claim, ...] = (
    ASSUMPTION1,
    ASSUMPTION2,
    ASSUMPTION3,
    ASSUMPTION4,
    ETA_HAT,
    THEOREM5_CONDITIONS,
    WINDOW,
    ETA_S_FREE,
    ONE_MINUS_GAMMA_RHO,
    THEOREM5_BOUND,
    THEOREM5_RATE,
    THEOREM5_COMPLEXITY,
    NAT_NOR_RELATION,
    NOR_IN_SUBDIFFERENTIAL,
    THEOREM8,
    THEOREM8_FLOOR,
    THEOREM8_FLOOR_COUPLED,
    THEOREM8_COMPLEXITY,
    THEOREM8_COMPLEXITY_DERIVED,
    THEOREM8_RATE,
    LYAPUNOV,
    COMPACT_FORM,
    FIXED_POINT,
    PEP_LYAPUNOV_CONSTANTS,
    PEP_LARGEST_STEP,
    PEP_THEOREM8_EXPONENT,
    PEP_SHAPE_EXPONENT,
    *TABLE1_CLAIMS,
    *INSIDE_CLAIMS,
)
