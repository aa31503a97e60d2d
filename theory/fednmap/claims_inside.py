"""FedNMap's PL complexity checked where the theorem applies: inside Theorem 5's printed conditions (arXiv 2602.03357).

Kept apart from :mod:`fedbounds.theory.fednmap.claims` (which lists it in ``CLAIMS``) so that the claim, its step rule
and its evidence read together. The complexity O~((L + rho) sigma^2/(n Q eps mu^2) + ...) promises rounds to
E[psi(x_T)] - psi* <= eps that fall as 1/(nQ) once eta_hat grows with nQ; the committed Monte Carlo study sees it
at practical steps, far outside the conditions. This claim is the same promise with Theorem 5's printed hypotheses
enforced: eta_hat = min(theorem8_eta_hat_for_variance, eta_hat_max_window1) (proportional to n Q eps, below its cap),
m = m_max(eta_hat), eta_a = theorem5_eta_a_max at that m, gamma = theorem5_gamma_max.
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.claims import Claim, Provenance, Status
from fedbounds.theory.fednmap import PAPER as FEDNMAP
from fedbounds.theory.fednmap import formulas as core

__all__ = ["CLAIMS", "THEOREM8_COMPLEXITY_INSIDE"]

THEOREM8_COMPLEXITY_INSIDE = Claim(
    id="fednmap.theorem8.complexity_inside",
    title="PL complexity inside Theorem 5's printed conditions: rounds to eps ~ 1/(nQ) with eta_hat ~ n Q eps below its cap",
    provenance=Provenance(FEDNMAP, "Section 1.2 / Theorem 8 corollary", "docs/fednmap-reconstruction.md §4, §8 item 5",
                          "the printed complexity's 1/(nQ) dependence, with the step rule derived from Theorem 8's bound "
                          "(theorem8_eta_hat_for_variance) and Theorem 5's conditions enforced", ""),
    status=Status.VERBATIM,
    hypotheses_status=Status.RECONSTRUCTED,
    quantity="log-log slope in nQ of the rounds T with E[psi(x_T)] - psi* <= eps",
    conclusion=core.theorem8_complexity,
    relation="O~",
    hypotheses=tuple(sp.Le(sym, bound, evaluate=False) for sym, bound in core.theorem5_conditions.items()),
    depends_on=("fednmap.theorem8.complexity", "fednmap.theorem8.complexity_derived", "fednmap.theorem5.conditions"),
    statement="inside Theorem 5's printed conditions (gamma, eta_hat, eta_a at or below their printed bounds, m = m_max(eta_hat)) "
    "and with eta_hat = min((1-gamma rho) n mu Q eps/(21600 S sigma^2), (1-gamma rho)/(100 S)), the rounds to E[psi - psi*] <= eps "
    "fall as 1/(nQ): slope -1 in nQ while the cap does not bind",
    extra={"eta_hat_rule": core.theorem8_eta_hat_for_variance, "eta_hat_cap": core.eta_hat_max_window1, "window": core.m_max,
           "eta_a_max": core.theorem5_eta_a_max, "gamma_max": core.theorem5_gamma_max},
    evidence="exact (closed-form moments, no replicas): fedbounds check --claim fednmap.theorem8.complexity_inside; "
    "study: results/fednmap_speedup_inside/",
)

CLAIMS: tuple[Claim, ...] = (THEOREM8_COMPLEXITY_INSIDE,)
