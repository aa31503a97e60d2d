"""How a certificate file's problem is read back (docs/provenance.md §7): PEP coefficients as exact rationals (within
2 ulp of a rational with denominator <= 10^6, else the double's exact value), a description's bounded parameters,
a parameter point (a record) rebuilt field by field, and the proof record that ``attach`` returns. No solver."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

pytest.importorskip("PEPit")

from fedbounds.checks.pep import certificate as C
from fedbounds.checks.pep.verify_certificate import CertificateError, Unreadable


def _ulps(x: float, k: int) -> float:
    for _ in range(k):
        x = math.nextafter(x, math.inf)
    return x


def test_a_coefficient_is_the_short_rational_within_2_ulp_else_the_doubles_exact_value() -> None:
    assert C.rational(0.1) == Fraction(1, 10) and C.rational(1 / 6) == Fraction(1, 6)
    assert C.rational(1 / 100003) == Fraction(1, 100003)  # a denominator between 10^3 and 10^6
    assert C.rational(1 / 1000003) == Fraction(1 / 1000003)  # above 10^6: the double itself
    assert C.rational(1 / math.sqrt(10)) == Fraction(1 / math.sqrt(10))
    assert C.rational(_ulps(0.1, 2)) == Fraction(1, 10)  # 2 ulp away: still 1/10
    assert C.rational(_ulps(0.1, 3)) == Fraction(_ulps(0.1, 3))  # 3 ulp away: the double


def test_a_parameter_text_is_at_most_200_characters() -> None:
    assert C._decode("text", "a" * 200) == "a" * 200
    with pytest.raises(Unreadable, match="at most 200 characters"):
        C._decode("text", "a" * 201)


def test_a_description_has_at_most_64_parameters() -> None:
    desc = dict(C.load(C.stored("f5f1b760880b146f"))["problem"])
    extra = [[f"x{k}", "integer", "1"] for k in range(64)]
    with pytest.raises(CertificateError, match="refuses the file's parameters") as exc:  # 64: read, then refused
        C.rebuild({**desc, "parameters": extra})
    assert not isinstance(exc.value, Unreadable)
    with pytest.raises(Unreadable, match="at most 64"):
        C.rebuild({**desc, "parameters": [*extra, ["x64", "integer", "1"]]})


def test_a_parameter_point_is_rebuilt_field_by_field() -> None:
    # DS FedProxGrad's SPoint travels as a record and one parameter per field ("p.L_f", ...)
    desc = C.load(C.stored("b7c930612458a1a6"))["problem"]
    assert any(kind == "record" for _, kind, _ in desc["parameters"])
    build = C.rebuild(desc)
    assert C.describe(build)["parameters"] == desc["parameters"]


def test_attach_reports_the_proof_of_the_stored_certificate() -> None:
    cert = C.load(C.stored("f5f1b760880b146f"))
    rec = C.attach(C.rebuild(cert["problem"]), cert["value_float"])
    assert rec is not None and rec["status"] == "proved" and rec["file"] == "f5f1b760880b146f.json.gz"
    assert Fraction(rec["bound_exact"]) == Fraction(cert["bound"])
    assert 0 < rec["delta"] == float(Fraction(cert["bound"])) - cert["value_float"] < 1e-6
