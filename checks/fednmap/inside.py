"""FedNMap's steps inside Theorem 5's printed conditions, tuned as Theorem 8 suggests, and the exact rounds to a target.

Every number comes from :mod:`fedbounds.theory.fednmap.formulas` (evaluated, never retyped):

* gamma = ``theorem5_gamma_max`` = 1/(5(rho + L));
* eta_hat = min(``theorem8_eta_hat_for_variance``, ``eta_hat_max_window1``): proportional to n Q eps (the variance
  term of Theorem 8 with the window m = m_max(eta_hat) is then <= eps/3) up to Theorem 5's cap at m = 1;
* m = ``m_max`` = floor((1 - gamma rho)/(100 eta_hat sqrt(L^2 + 1/gamma^2))), the largest window the eta_hat
  condition admits, and eta_a = ``theorem5_eta_a_max`` at that m (the largest admissible client step);
* eta_s from ``eta_hat_definition`` (eta_hat = eta_s eta_a Q).

``kind = "pep"`` scales that tuned step by the largest multiplier k the PEP grid certifies
(``fedbounds.theory.fednmap.pep_steps.certified_steps``: k times Theorem 5's printed (eta_hat, eta_a) at m = 1, eta_s
at its printed value there, which is 1): eta_hat_pep = k eta_hat, eta_a = eta_hat_pep / Q, eta_s = 1. The scope
is "inside PEP-certified steps" where the grid covers (rho/L, gamma L, n, Q); elsewhere k is the grid's smallest
certified k at that rho/L, carried off the grid, and the scope says "outside".
"""

from __future__ import annotations

import math
from typing import Any

from fedbounds.checks.verdicts.formulas import evaluate
from fedbounds.theory.core import symbols as S
from fedbounds.theory.fednmap import formulas as fm

__all__ = ["SCOPE_INSIDE", "SCOPE_OUTSIDE", "SCOPE_PEP", "inside_steps"]

SCOPE_INSIDE = "inside Theorem 5's printed conditions"
SCOPE_PEP = "inside PEP-certified steps (outside the printed conditions)"
SCOPE_OUTSIDE = "outside both (PEP multiplier carried off its grid)"


def _eta_s(eta_hat: float, eta_a: float, Q: int) -> float:
    from fedbounds.checks.fednmap.common import _ETA_S

    return evaluate(_ETA_S, {S.eta_hat: eta_hat, S.eta_a: eta_a, S.Q: Q})


def inside_steps(*, L: float, rho: float, mu: float, sigma2: float, n: int, Q: int, eps: float, kind: str = "printed",
                 cap: bool = True) -> dict[str, Any]:
    """The steps of the module docstring at (L, rho, mu, sigma2, n, Q, eps), with Theorem 8's terms there.

    ``cap = False`` drops the cap (eta_hat = the variance rule alone: a negative control). Returns gamma, eta_hat,
    eta_a, eta_s, m, the scope, ``cap_binds``, ``eta_hat_over_cap``, ``nQ_cap`` (the n Q at which the variance rule
    reaches the cap), Theorem 8's variance and drift terms at these steps (``variance_bound``, ``drift_bound``) and
    for ``kind = "pep"`` the multiplier ``k``."""
    if kind not in ("printed", "pep"):
        raise ValueError(f"kind must be 'printed' or 'pep', got {kind!r}")
    v: dict[Any, float] = {S.L: L, S.rho: rho, S.mu: mu, S.sigma2: sigma2, S.n: n, S.Q: Q, S.epsilon: eps}
    v[S.gamma] = evaluate(fm.theorem5_gamma_max, v)
    eta_var = evaluate(fm.theorem8_eta_hat_for_variance, v)
    eta_cap = evaluate(fm.eta_hat_max_window1, v)
    eta_hat = min(eta_var, eta_cap) if cap else eta_var
    out: dict[str, Any] = {"gamma": v[S.gamma], "eta_hat_rule": eta_var, "eta_hat_cap": eta_cap,
                           "cap_binds": bool(cap and eta_var > eta_cap),
                           "eta_hat_over_cap": eta_var / eta_cap, "nQ_cap": n * Q * eta_cap / eta_var}
    v[S.eta_hat] = eta_hat
    m = max(1, int(evaluate(fm.m_max, v))) if eta_hat <= eta_cap else 1
    v[S.m] = m
    eta_a = evaluate(fm.theorem5_eta_a_max, v)
    scope = SCOPE_INSIDE if eta_hat <= eta_cap * (1 + 1e-12) else "outside Theorem 5's printed conditions (cap removed)"
    if kind == "pep":
        from fedbounds.theory.fednmap import recovered
        from fedbounds.theory.fednmap.pep_steps import certified_steps

        cs = certified_steps(L, rho, n, Q, v[S.gamma])
        if getattr(cs, "covered", True) and hasattr(cs, "k"):
            k, scope = float(cs.k), SCOPE_PEP
        else:
            at_rho = [r["k"] for r in recovered.certified(recovered.ev.STEPS)
                      if math.isclose(r["rho"] / r["L"], rho / L, rel_tol=1e-9) and r.get("k") is not None]
            if not at_rho:
                raise ValueError(f"the PEP grid has no certified step at rho/L = {rho / L:g}")
            k, scope = float(min(at_rho)), SCOPE_OUTSIDE
        eta_hat = k * eta_hat
        eta_a = eta_hat / Q
        m = 1
        v[S.m], v[S.eta_hat] = 1, eta_hat
        out["k"] = k
    v[S.eta_a] = eta_a
    out.update(eta_hat=eta_hat, eta_a=eta_a, eta_s=_eta_s(eta_hat, eta_a, Q), m=m, scope=scope,
               variance_bound=evaluate(fm.theorem8_variance, v), drift_bound=evaluate(fm.theorem8_drift, v))
    return out
