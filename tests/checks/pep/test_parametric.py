"""The exact sign prover and the identity check of parametric certificates (fedbounds.checks.pep.parametric)."""

from __future__ import annotations

import json

import pytest
import sympy as sp
from fedbounds.checks.ds_fedproxgrad.pep import parametric as DS
from fedbounds.checks.fednmap.pep import parametric as FN
from fedbounds.checks.pep.parametric import (
    STORE,
    Basis,
    Box,
    ParametricCertificate,
    ParametricError,
    ParametricProblem,
    Row,
    dumps,
    loads,
    prove_nonnegative,
    verify,
    verify_file,
)

x, y = sp.symbols("x y", positive=True)
UNIT = Box(((x, sp.S.Zero, sp.S.One, True, False),))
SQUARE = Box(((x, sp.S.Zero, sp.S.One, True, False), (y, sp.S.Zero, sp.S.One, True, False)))


def test_univariate_signs() -> None:
    prove_nonnegative((1 - x) * (2 - x) / (x + 1), UNIT, "p")  # zero at the closed end: fine
    with pytest.raises(ParametricError, match="changes sign"):
        prove_nonnegative(x - sp.Rational(1, 3), UNIT, "p")
    with pytest.raises(ParametricError, match="negative"):
        prove_nonnegative(x - 2, UNIT, "p")
    with pytest.raises(ParametricError, match="denominator"):
        prove_nonnegative(1 / (x - sp.Rational(1, 2)) ** 2, UNIT, "p")


def test_algebraic_end_decides_exactly() -> None:
    """x^2 + 10 x - 8 vanishes at sqrt(33) - 5: nonpositive up to there, positive just beyond."""
    p = 8 - 10 * x - x**2
    prove_nonnegative(p, Box(((x, sp.S.Zero, sp.sqrt(33) - 5, True, False),)), "p")
    with pytest.raises(ParametricError, match="changes sign"):
        prove_nonnegative(p, Box(((x, sp.S.Zero, sp.sqrt(33) - 5 + sp.Rational(1, 10**6), True, False),)), "p")


def test_bivariate_signs() -> None:
    prove_nonnegative(1 + x - y / 2, SQUARE, "p")
    with pytest.raises(ParametricError, match="changes sign"):
        prove_nonnegative(x - y, SQUARE, "p")
    with pytest.raises(ParametricError, match="changes sign"):  # a closed oval inside the box, no zero on its edges
        prove_nonnegative((x - sp.Rational(1, 2)) ** 2 + (y - sp.Rational(1, 2)) ** 2 - sp.Rational(1, 100), SQUARE, "p")
    prove_nonnegative((x - sp.Rational(1, 2)) ** 2 + (y - sp.Rational(1, 2)) ** 2, SQUARE, "p")  # an isolated zero


def _descent_lemma(coefficient: sp.Expr) -> ParametricCertificate:
    """f(x - t g) <= f(x) - t (1 - t/2) ||g||^2 for 1-smooth f: one interpolation row, multiplier 1."""
    basis = Basis(("g", "h"))
    g, h = basis.vec("g"), basis.vec("h")
    fp = sp.Symbol("fp")
    xp = basis.comb((-x, g))
    dx, dg = basis.comb((-1, xp)), basis.comb((1, g), (-1, h))
    w = basis.comb((1, dx), (-1, dg))
    row = -fp - basis.ip(h, dx) - basis.ip(dg, dg) / 2 + basis.ip(w, w) / 4
    pb = ParametricProblem("descent lemma", basis, (fp,), -fp - coefficient * basis.ip(g, g), (Row("interp", row, "interp"),), UNIT)
    return ParametricCertificate(pb, {"interp": sp.S.One})


def test_identity_and_remainder() -> None:
    proof = verify(_descent_lemma(x * (1 - x / 2)))
    assert sp.simplify(proof.remainder.det()) == 0
    with pytest.raises(ParametricError, match="minor"):
        verify(_descent_lemma(x * (1 - x / 2) + x**2 / 100))
    cert = _descent_lemma(x * (1 - x / 2))
    with pytest.raises(ParametricError, match="does not cancel"):
        verify(ParametricCertificate(cert.problem, {"interp": sp.Rational(1, 2)}))


STORED = {
    "ds_lemma5_2.json": lambda: dumps(DS.lemma_certificate(), definite=True),
    "ds_lemma5_2_tight.json": lambda: dumps(DS.tight_certificate()),
    "fednmap_descent_n2_q1.json": lambda: dumps(FN.certificate(), FN.KERNEL),
}


@pytest.mark.parametrize("name", sorted(STORED))
def test_stored_certificate_is_the_codes(name: str) -> None:
    """The committed file is what the code builds (regenerate: write dumps(...) to STORE); the code's certificate is
    proved by the papers' tests (tests/checks/*/test_parametric_*.py)."""
    assert (STORE / name).read_text() == STORED[name](), f"{name} is stale"


def test_a_stored_certificate_proves_itself_from_the_file_alone() -> None:
    proof = verify_file(STORE / "ds_lemma5_2_tight.json")
    assert sp.simplify(proof.remainder.det()) == 0


def test_a_tampered_stored_certificate_fails() -> None:
    doc = json.loads((STORE / "ds_lemma5_2.json").read_text())
    doc["multipliers"]["error (10)"] = sp.srepr(sp.Rational(1, 100))  # the multiplier of (10), changed
    cert, kernel, definite = loads(json.dumps(doc))
    with pytest.raises(ParametricError, match="minor"):
        verify(cert, kernel, definite)
    with pytest.raises(ParametricError, match="format"):
        loads(json.dumps({**doc, "format": "other"}))
