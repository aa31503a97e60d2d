"""A Lyapunov function searched, not chosen: one stochastic FedNMap round with the Lyapunov weights as SDP variables.

docs/fednmap-reconstruction.md §10.9. Theorem 8 (arXiv 2602.03357) claims that *some* Lyapunov function L_t, with
E[L_{t+1}] <= (1 - r) E[L_t] + K sigma^2 and L >= psi - psi*, gives E psi(x_T) - psi* <= (1 - r)^T E[L_0] + K sigma^2/r,
at the rate r = e8(C_0) = 2 eta_hat mu/(9 (1 + gamma mu C_0)) and a floor K sigma^2/r within the printed one. The
earlier checks fixed one function (psi - psi* + (gamma C_0/2)||F_nor||^2 + C_c corr with C_c picked by us). Here the
function is a decision variable, in the spirit of AutoLyap (Upadhyaya, Taylor, Banert, Giselsson, arXiv 2506.24076):

    V(z, c) = psi(prox z) - psi* + sum_j p_j q_j(z, c),   p_j >= 0,

with q_j nonnegative quadratic forms in the round's state, client-symmetric and invariant under the class's
translations (so no minimiser needs to be represented): family ``"merit"``: ||F_nor(z)||^2 and the correction error
(1/n) sum_i ||c_i + grad f_i(x) - grad f(x)||^2 (it contains every reconstructed shape); family ``"wide"`` adds
||grad f(x)||^2, ||v||^2 and ||grad f(x) - v||^2, v = (z - x)/gamma, a polyhedral inner part of the PSD cone of
quadratic forms in (grad f(x), v, corrections) (by client symmetry the corrections' cross terms with shared vectors
vanish: they sum to 0).

The per-round condition, with the proximal-PL inequality used at x_0 with the subgradient F_nor(z_0) (psi(x_0) - psi*
<= ||F_nor(z_0)||^2/(2 mu): the multiplier of this one row must be exactly r, or psi* is free and the sup infinite):

    E[psi_1] - psi_0 + (r/(2 mu)) ||F_nor(z_0)||^2 + sum_j p_j (E[q_j(1)] - (1 - r) q_j(0)) <= K sigma^2  (class-wide).

By Lagrange duality the smallest K over the p_j is the value of one PEP, a plain PEPit problem (scalar rows only, so
the two-solver certificate, the client-symmetric block form and the exact rational certificate all apply):

    K*(r) sigma^2 = sup  E[psi_1] - psi_0 + (r/(2 mu)) ||F_nor(z_0)||^2
                    s.t. E[q_j(1)] - (1 - r) q_j(0) >= 0 for every j      (the multiplier of row j is p_j),
                         the class, the noise law (E||e||^2 <= sigma^2, orthogonality), one round of Algorithm 1.

K*(r) = +inf exactly when no V of the family contracts at rate r with sigma = 0. The reconstructed shape at
(C_0, C_c) with the descent eta_hat/9 is the member p = (gamma C_0/2, C_c) at r = e8(C_0) (the old measure of
:mod:`fedbounds.checks.fednmap.spep.encoding` with d = eta_hat/9, d_c = e8: its K is >= K*(e8(C_0)), the test).

The rate is written r = tau eta_hat (tau the unknown of the front) and the rows are scaled: the constraint rows by
1/eta_hat (they are O(eta_hat) differences), which keeps the multipliers O(1) at Theorem 5's printed steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fedbounds.checks.fednmap.pep.encoding import _check
from fedbounds.checks.fednmap.spep.encoding import FULL_ROWS_UP_TO, noisy_round, round_start
from fedbounds.checks.pep.certificate import pep_builder
from fedbounds.checks.pep.solve import DEFAULT_REL_TOL, DEFAULT_SOLVERS, Certificate, certify, check_nonnegative

__all__ = ["FAMILIES", "build_search_spep", "family_forms", "searched_noise"]

#: the quadratic forms q_j of each family (module docstring), by name. ``wide``'s three added forms are not invariant
#: under the tilt f_i + <a, .>, h - <a, .> that the normal form (grad f(x_0) = 0) uses, so its value here is not a
#: Lyapunov bound; from a free start it equals merit's (docs/fednmap-reconstruction.md §10.10; the reduced PEP's
#: ``start="free"``)
FAMILIES: dict[str, tuple[str, ...]] = {
    "merit": ("Fnor2", "corr"),
    "wide": ("Fnor2", "corr", "grad2", "v2", "gminusv2"),
}


def family_forms(rd: Any, pt: dict[str, Any], c: list[Any], family: str) -> dict[str, Any]:
    """The family's quadratic forms q_j at the global point ``pt`` with corrections ``c`` (PEPit Expressions)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown Lyapunov family {family!r}; known: {', '.join(FAMILIES)}")
    out: dict[str, Any] = {}
    for name in FAMILIES[family]:
        if name == "Fnor2":
            out[name] = pt["Fnor"] ** 2
        elif name == "corr":
            if rd.n > 1:  # n = 1: the correction error is identically 0 (sum_i c_i = 0)
                out[name] = rd.corr_err(pt, c)
        elif name == "grad2":
            out[name] = pt["gbar"] ** 2
        elif name == "v2":
            out[name] = pt["v"] ** 2
        elif name == "gminusv2":
            out[name] = (pt["gbar"] - pt["v"]) ** 2
    return out


@pep_builder("fednmap", "fednmap.spep: the searched Lyapunov function (Theorem 8 existence)", 1)
def build_search_spep(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, tau: float, mu: float,
    family: str = "merit", variant: str = "A", sigma2: float = 1.0, symmetric: bool = False, row_scale: float | None = None,
    objective_scale: float = 1.0,
) -> Callable[[], tuple[Any, dict[str, Any]]]:
    """A builder of the searched-Lyapunov PEP at rate r = tau eta_hat (module docstring); its value is K*(r) sigma2.

    ``row_scale``: the family's rows are multiplied by it (default 1/eta_hat; any positive factor gives the same value,
    the multipliers p_j divided by it). ``objective_scale``: the measure is multiplied by it (the value too; the
    caller divides it back). ``named["rows"]`` maps each form's name to its PEPit constraint."""
    L, rho, gamma, eta_a, eta_s, n, Q, _ = _check(L, rho, gamma, eta_a, eta_s, n, Q, 1, variant, "free")
    tau, sigma2 = check_nonnegative("tau", tau), check_nonnegative("sigma2", sigma2)
    if not mu > 0:
        raise ValueError(f"mu must be > 0, got {mu!r}")
    if family not in FAMILIES:
        raise ValueError(f"unknown Lyapunov family {family!r}; known: {', '.join(FAMILIES)}")
    eta_hat = eta_s * eta_a * Q
    r = tau * eta_hat
    if not r < 1:
        raise ValueError(f"the rate tau eta_hat must be < 1, got {r!r}")
    scale_rows = 1.0 / eta_hat if row_scale is None else float(row_scale)

    def build() -> tuple[Any, dict[str, Any]]:
        from PEPit import PEP

        problem = PEP()
        rd, labels, p0, c0 = round_start(problem, L, rho, gamma, eta_a, eta_s, n, Q, symmetric)
        ledger, p1, c1 = noisy_round(rd, labels, p0, c0, eta_a, eta_s, Q, variant)
        full_pep = n <= FULL_ROWS_UP_TO
        ledger.apply(problem, sigma2=sigma2, prune=not full_pep)
        q0, q1 = family_forms(rd, p0, c0, family), family_forms(rd, p1, c1, family)
        rows = {}
        for name in q0:
            row = (scale_rows * (q1[name] - (1.0 - r) * q0[name])) >= 0
            problem.add_constraint(row)
            rows[name] = row
        if labels is not None and full_pep:
            labels.impose_zero_mean(problem)
            labels.pin_zero(problem, labels.points[c0[0]][2])
        problem.set_performance_metric(objective_scale * (p1["psi"] - p0["psi"] + (r / (2.0 * mu)) * p0["Fnor"] ** 2))
        named: dict[str, Any] = {"rows": rows}
        if labels is not None:
            named["labels"] = labels
        return problem, named

    return build


def searched_noise(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, tau: float, mu: float,
    family: str = "merit", variant: str = "A", symmetric: bool = False, solvers: Sequence[str] = DEFAULT_SOLVERS,
    rel_tol: float = DEFAULT_REL_TOL, scales: Sequence[float] | None = None,
) -> Certificate:
    """The certificate of K*(tau eta_hat) (module docstring): value = K* (the coefficient of sigma^2), +inf when no
    member of the family contracts at that rate. The SDP is solved at the variance bounds ``scales`` (default 1,
    then 1/eta_hat^2) until one certifies, and rescaled exactly (homogeneity); the exact certificate, when stored, is
    of the sigma2 = 1 PEP."""
    from fedbounds.checks.fednmap.spep.encoding import _rescaled, first_decided

    eta_hat = eta_s * eta_a * Q
    tried = [1.0, 1.0 / eta_hat**2] if scales is None else list(scales)
    kw: dict[str, Any] = {}
    if symmetric:
        from fedbounds.checks.pep.symmetric import solve_symmetric

        kw["solve"] = solve_symmetric

    def at(s2: float) -> Certificate:
        build = build_search_spep(L, rho, gamma, eta_a, eta_s, n, Q, tau, mu, family, variant, s2, symmetric)
        return _rescaled(certify(build, solvers=solvers, rel_tol=rel_tol, prove=s2 == 1.0, **kw), 1.0 / s2)

    return first_decided(at(s2) for s2 in tried)
