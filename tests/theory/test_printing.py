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


def test_text_prints_numbers_not_binary_noise() -> None:
    """The terminal's rounds line read ``250000.0*(32.4*Delta_0 + (65.6100000001*...``: whole numbers lose ``.0``
    and the rest show 6 significant digits; a symbol's coefficient keeps its value to that precision."""
    d = sp.Symbol("Delta_0", positive=True)
    assert text(sp.Float(250000.0) * d) == "250000*Delta_0"
    assert text(sp.Float(65.6100000001) * d) == "65.61*Delta_0"
    assert text(sp.Float(0.00123456790123) + d) == "Delta_0 + 0.00123457"
    assert text(sp.Float(4.93827152412672e14) * d) == "4.93827e+14*Delta_0"
    assert text(sp.Float(6000.0)) == "6000" and text(sp.Float(2.5)) == "2.5"
    assert text(sp.Float(9999999.0)) == "9999999" and text(sp.Float(1e7)) == "1e+07"  # whole numbers below 10^7 only
