"""FedNMap's Table 1 (arXiv 2602.03357, section 1.1) as data: each method's assumptions and rate.

Verbatim from the partial copy (``fednmap-2602.03357-partial.md``; transcribed in the reconstruction note,
section 7). CVX / SCVX / NCVX / WCVX: convex / strongly convex / nonconvex / weakly convex; zeta: bounded
heterogeneity ``||grad f_i(x) - grad f(x)||^2 <= zeta^2``; "Quadratic": quadratic objectives; BI: bounded
iterates; B_psi: bounded subgradients of psi. O~ hides logarithmic factors.

``requires`` spells each row's assumptions as flags (the vocabulary of a problem class: ``f_convex``,
``f_strongly_convex``, ``f_nonconvex``, ``pl``, ``phi_convex``, ``phi_weakly_convex``, ``bounded_heterogeneity``,
``quadratic``, ``single_local_step``, ``bounded_iterates``, ``bounded_subgradients``), so that a caller can
decide whether a problem meets a row (``f_nonconvex`` means that no convexity is needed). The rates use the
symbols of :mod:`fedbounds.theory.core.symbols` (sigma^2, zeta^2, n, Q, T; ``B_BI`` for the bounded-iterates constant of the
Fast-FedDA row, which is not DS FedProxGrad's B).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from fedbounds.theory.core.printing import latex as _latex
from fedbounds.theory.core.symbols import B_bi, B_psi, Q, T, n, sigma2, zeta2
from fedbounds.theory.fednmap import formulas as core

__all__ = ["TABLE1", "Table1Entry", "get_row"]


@dataclass(frozen=True)
class Table1Entry:
    """One row of Table 1."""

    key: str
    method: str
    reference: str
    objective: str          # "f CVX", "f SCVX", "f NCVX", "psi PL" (as printed)
    regularizer: str        # "CVX" or "WCVX" (as printed)
    assumptions: str        # the "Additional Assumptions" cell as printed ("/" for none)
    requires: tuple[str, ...]
    rate: sp.Expr | None    # None: "Not established"
    rate_kind: str | None   # "O", "O~", or None

    @property
    def established(self) -> bool:
        return self.rate is not None

    @property
    def rate_text(self) -> str:
        if self.rate is None:
            return "Not established"
        return f"{self.rate_kind}({self.rate})"

    def rate_latex(self) -> str:
        if self.rate is None:
            return r"\text{Not established}"
        op = r"\tilde{\mathcal{O}}" if self.rate_kind == "O~" else r"\mathcal{O}"
        return op + r"\!\left(" + _latex(self.rate) + r"\right)"


_third = sp.Rational(1, 3)

TABLE1: tuple[Table1Entry, ...] = (
    Table1Entry(
        "fedda", "FedDA", "Yuan et al., 2021", "f CVX", "CVX", "zeta, Quadratic",
        ("f_convex", "phi_convex", "bounded_heterogeneity", "quadratic"),
        sp.sqrt(sigma2 / (n * Q * T)) + (zeta2**_third + sigma2**_third / Q**_third) / T ** (2 * _third), "O",
    ),
    Table1Entry(
        "econtrolda", "EControlDA", "Gao et al., 2025", "f CVX", "CVX", "Q=1",
        ("f_convex", "phi_convex", "single_local_step"),
        sp.sqrt(sigma2 / (n * T)) + sigma2**_third / T ** (2 * _third) + 1 / T, "O",
    ),
    Table1Entry(
        "fast_fedda", "Fast-FedDA", "Bao et al., 2022", "f SCVX", "CVX", "zeta, BI",
        ("f_strongly_convex", "phi_convex", "bounded_heterogeneity", "bounded_iterates"),
        sigma2 / T + Q**2 * (zeta2 + B_bi**2) / T**2, "O~",
    ),
    Table1Entry(
        "zhang2024a", "Zhang", "Zhang et al., 2024a", "f SCVX", "CVX", "B_psi",
        ("f_strongly_convex", "phi_convex", "bounded_subgradients"),
        (sigma2 + B_psi**2) / (n * T), "O~",
    ),
    Table1Entry(
        "zhang2026", "Zhang", "Zhang et al., 2026", "psi PL", "CVX", "B_psi",
        ("pl", "phi_convex", "bounded_subgradients"), None, None,
    ),
    Table1Entry(
        "fedcanon", "FedCanon", "Zhou et al., 2025", "psi PL", "WCVX", "B_psi",
        ("pl", "phi_weakly_convex", "bounded_subgradients"), None, None,
    ),
    Table1Entry(
        "fednmap_ncvx", "FedNMap", "This work (Theorem 5)", "f NCVX", "WCVX", "/",
        ("f_nonconvex", "phi_weakly_convex"), core.theorem5_rate, "O",
    ),
    Table1Entry(
        "fednmap_pl", "FedNMap", "This work (Theorem 8)", "psi PL", "WCVX", "/",
        ("pl", "phi_weakly_convex"), core.theorem8_rate, "O~",
    ),
)


def get_row(key: str) -> Table1Entry:
    """The row with this key; ValueError listing the keys otherwise."""
    for row in TABLE1:
        if row.key == key:
            return row
    raise ValueError(f"unknown Table 1 row {key!r}; rows: {', '.join(r.key for r in TABLE1)}")
