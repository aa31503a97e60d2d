"""The one printer (fedbounds.theory.core.printing): no sympy artefacts in the papers' formulas."""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.theory.core import symbols as S
from fedbounds.theory.core.printing import latex, text
from fedbounds.theory.registry import all_claims, get_claim


def test_one_minus_gamma_rho_reads_naturally() -> None:
    assert latex(1 - S.gamma * S.rho) == r"1 - \gamma \rho"
    assert text(1 - S.gamma * S.rho) == "1 - gamma*rho"
    assert latex((1 - S.gamma * S.rho) / S.L) == r"\frac{1 - \gamma \rho}{L}"


@pytest.mark.parametrize(("expr", "tex", "txt"), [
    (sp.sqrt(S.sigma2), r"\sigma", "sigma"),
    (S.sigma2 ** sp.Rational(1, 3), r"\sigma^{2/3}", "sigma^(2/3)"),
    (1 / sp.sqrt(S.sigma2), r"\frac{1}{\sigma}", "1/sigma"),
    (S.sigma2 / S.n, r"\frac{\sigma^{2}}{n}", "sigma^2/n"),
])
def test_powers_of_sigma_squared_print_as_powers_of_sigma(expr: sp.Expr, tex: str, txt: str) -> None:
    assert latex(expr) == tex and text(expr) == txt


def test_no_claim_prints_a_sympy_artefact() -> None:
    for c in all_claims():
        tex = c.latex()
        assert r"\sqrt{\sigma^{2}}" not in tex and r"\sqrt[3]{\sigma^{2}}" not in tex, c.id
        assert r"- \gamma \rho + 1" not in tex, c.id
    assert r"\frac{1 - \gamma \rho}{100 m" in get_claim("fednmap.theorem8").latex()
    assert r"\frac{\sigma}{\sqrt{Q} \sqrt{T} \sqrt{n}}" in get_claim("fednmap.theorem5.rate").latex()
