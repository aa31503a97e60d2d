"""The one printer of the theory layer's expressions: LaTeX (claims, the calculator, the report page) and plain
text (the terminal), so that a formula reads the same everywhere.

Two habits of sympy's default printers read badly in the papers' formulas, and both are fixed here rather than in
each caller:

* terms ordering: sympy prints ``1 - gamma rho`` as ``- \\gamma \\rho + 1`` (the number last); here the terms with a
  positive sign come first, in sympy's order, then the negative ones, so it prints ``1 - \\gamma \\rho``;
* the variance symbol ``sigma^2`` is one symbol (the papers' sigma^2), so sympy cannot simplify its powers and
  prints ``\\sqrt{\\sigma^{2}}`` and ``\\sqrt[3]{\\sigma^{2}}``; here a power of a symbol named ``<x>^2`` is printed
  as a power of ``x``: ``\\sigma``, ``\\sigma^{2/3}`` (``sigma``, ``sigma^(2/3)`` in plain text).
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

__all__ = ["latex", "text"]


def _signs_first(terms: list[sp.Basic]) -> list[sp.Basic]:
    """Terms with a positive sign first (each group in sympy's order): ``1 - a`` rather than ``-a + 1``."""
    pos = [t for t in terms if not t.could_extract_minus_sign()]
    neg = [t for t in terms if t.could_extract_minus_sign()]
    return pos + neg if pos else list(terms)


def _square_root_of(expr: sp.Pow) -> tuple[sp.Symbol, sp.Rational] | None:
    """(x, 2 e) when ``expr`` is ``(x^2)^e`` for a symbol named ``<x>^2`` and a rational ``e``, else None."""
    base, exp = expr.base, expr.exp
    if isinstance(base, sp.Symbol) and base.name.endswith("^2") and len(base.name) > 2 and exp.is_Rational and exp != 0:
        return sp.Symbol(base.name[:-2], **base.assumptions0), sp.Rational(2) * exp
    return None


class _Latex(LatexPrinter):
    def _as_ordered_terms(self, expr, order=None):
        terms = super()._as_ordered_terms(expr, order=order)
        return _signs_first(terms) if isinstance(expr, sp.Add) else terms

    def _print_Float(self, expr: sp.Float) -> str:
        """A whole number without its ``.0`` (``6000``), others as ``1.889 \\times 10^{4}`` (never ``6000.0`` or ``\\cdot``)."""
        if expr.is_finite and float(expr).is_integer() and abs(float(expr)) < 1e15:
            return str(int(expr))
        mant, sep, rest = super()._print_Float(expr).partition(r" \cdot 10^")
        if sep:
            mant = mant[:-2] if mant.endswith(".0") else mant
            return rf"{mant} \times 10^{rest}"
        return mant

    def _print_Pow(self, expr: sp.Pow) -> str:
        root = _square_root_of(expr)
        if root is None:
            return super()._print_Pow(expr)
        x, e = root
        if e < 0:
            return r"\frac{1}{" + self._print_Pow(sp.Pow(expr.base, -expr.exp, evaluate=False)) + "}"
        name = self._print(x)
        if e == 1:
            return name
        return f"{name}^{{{e.p}/{e.q}}}" if e.q != 1 else f"{name}^{{{e.p}}}"


class _Text(StrPrinter):
    """The terminal's form: ``^`` for powers, ``sqrt(x)``, ``1/x``, a symbol whose name is not a plain identifier
    bracketed before a power (``(L_F eta)^2``), and powers of ``sigma^2`` as powers of sigma (``sigma^(2/3)``)."""

    def _as_ordered_terms(self, expr, order=None):
        terms = super()._as_ordered_terms(expr, order=order)
        return _signs_first(terms) if isinstance(expr, sp.Add) else terms

    def _print_Float(self, expr: sp.Float) -> str:
        """A whole number below 10^7 without its ``.0`` (``250000``), others to 6 significant digits (``65.61``, not
        ``65.6100000001``; ``4.93827e+14``): the terminal shows a number, not sympy's 15 digits of binary noise."""
        x = float(expr)
        if expr.is_finite and x.is_integer() and abs(x) < 1e7:
            return str(int(x))
        return f"{x:.6g}"

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        root = _square_root_of(expr)
        if root is not None:
            x, e = root
            if e < 0:
                return "1/" + self._print(sp.Pow(expr.base, -expr.exp, evaluate=False))
            return x.name if e == 1 else (f"{x.name}^{e}" if e.q == 1 else f"{x.name}^({e})")
        b, e = expr.as_base_exp()
        if e == sp.S.Half:
            return f"sqrt({self._print(b)})"
        if e.is_Rational and e < 0:
            pos = b if e == -1 else sp.Pow(b, -e, evaluate=False)
            return f"1/{self.parenthesize(pos, PRECEDENCE['Mul'], strict=True)}"
        if isinstance(b, sp.Symbol) and not b.name.isidentifier():
            base = f"({b.name})"
        else:
            base = self.parenthesize(b, PRECEDENCE["Pow"], strict=True)
        exp = self._print(e)
        if not (e.is_Integer and e > 0) and not isinstance(e, sp.Symbol):
            exp = f"({exp})"
        return f"{base}^{exp}"


def latex(expr: sp.Basic, symbol_names: dict[sp.Symbol, str] | None = None) -> str:
    """``expr`` as LaTeX, with the papers' symbol names (:data:`fedbounds.theory.core.symbols.LATEX_NAMES` by default)."""
    if symbol_names is None:
        from fedbounds.theory.core.symbols import LATEX_NAMES

        symbol_names = LATEX_NAMES
    return _Latex({"symbol_names": symbol_names}).doprint(sp.sympify(expr))


def text(expr: sp.Basic | str) -> str:
    """``expr`` as one line of plain text (the terminal's form of :func:`latex`); a string is returned as it is."""
    if isinstance(expr, str):
        return expr
    return _Text().doprint(sp.sympify(expr))
