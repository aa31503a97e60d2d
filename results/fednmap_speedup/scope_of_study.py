"""How far the speedup study runs past Theorem 5's printed step conditions (results/README.md, "Scope").

Evaluates the theory layer's own hypotheses (claim ``fednmap.theorem5.conditions``) at every FedNMap cell of
``checks/specs/fednmap_speedup.toml`` (gamma = 1, eta_a = 0.5/Q, eta_s = min(s n Q, 2), m = 1, the study's Lasso
instance at each n for L; rho = 0) and prints, per condition, the range of left side / right side.

Run: python results/fednmap_speedup/scope_of_study.py
"""

from __future__ import annotations

from fedbounds.algorithms.instances.least_squares import lasso
from fedbounds.checks.verdicts.scope import hypothesis_ratios
from fedbounds.theory.registry import get_claim


def study_ratios() -> dict[str, tuple[float, float]]:
    """condition -> (smallest, largest) ratio over the study's cells (> 1: past the condition by that factor)."""
    hyps = get_claim("fednmap.theorem5.conditions").hypotheses
    ratios = []
    for n in (1, 2, 4, 8, 16, 32, 64):
        L = lasso(n=n, p=8, m=100, heterogeneity=0.5, weight=0.02, seed=1).constants["L"].value
        for Q in (1, 2, 4, 8, 16, 32):
            for s in (0.0014, 0.002):
                at = {"L": L, "rho": 0.0, "m": 1, "Q": Q, "gamma": 1.0, "eta_a": 0.5 / Q, "eta_hat": 0.5 * min(s * n * Q, 2.0)}
                ratios.append(hypothesis_ratios(hyps, at))
    return {k: (min(r[k] for r in ratios), max(r[k] for r in ratios)) for k in ratios[0]}


if __name__ == "__main__":
    for name, (lo, hi) in study_ratios().items():
        print(f"{name}: {lo:.3g}x to {hi:.3g}x its bound")
