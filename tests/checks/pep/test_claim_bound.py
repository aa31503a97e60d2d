"""`proved` in a report needs the claim's bound: every caller of certificate_record states it (or says it has none),
and a verified certificate whose exact bound is above the claim's reads `certified` (docs/provenance.md §7).

No solver: each certificate here is a record with a verified-proof entry whose exact bound is placed just above or
just below the claim's bound, so only the comparison can tell them apart."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest

pytest.importorskip("PEPit")

from fedbounds.checks.pep.solve import NOT_COMPARED, Certificate, certificate_record

#: how far the exact bound sits from the claim's: far below the proof's room (delta = 1e-6 |v| + 1e-9)
TINY = Fraction(1, 10**15)


def _proved(value: float, bound_exact: Fraction) -> Certificate:
    """A certified worst case ``value`` with a verified exact certificate of ``worst case <= bound_exact``."""
    return Certificate(values={"CLARABEL": value, "SCS": value}, statuses={"CLARABEL": "optimal", "SCS": "optimal"},
                       gaps={}, seconds={}, gram_dim=4, rel_tol=1e-3, abs_tol=1e-6, certified=True, unbounded=False,
                       value=value, disagreement=0.0, agree=True, runs=(),
                       proof={"status": "proved", "bound": float(bound_exact), "bound_exact": str(bound_exact),
                              "file": "0000000000000000.json.gz"})


def test_the_claims_bound_is_a_required_argument_and_none_never_reads_proved() -> None:
    cert = _proved(0.1, Fraction(1, 10))
    with pytest.raises(TypeError):
        certificate_record(cert)  # type: ignore[call-arg]
    rec = certificate_record(cert, None)
    assert rec["pep_status"] == "certified"
    assert rec["proof"]["decides_claim"] is False and rec["proof"]["claim"] == NOT_COMPARED
    assert certificate_record(cert, 0.1)["pep_status"] == "proved"  # the same certificate, compared: it decides


def _fednmap_point(K: float, above: bool) -> tuple[tuple[int, int, float], dict[str, Any]]:
    """A synthetic solved point of fednmap.spep (n, Q, C_0) = (2, 1, 1), C_c = 1e-3: certified K, and an exact bound
    just above (``above``) or at K_8, the allowance."""
    from fedbounds.checks.fednmap.spep.constants import theorem8_comparison

    cmp = theorem8_comparison(K, 2, 1, 1.0, 1e-3, 0.9 * K, 0.1 * K / 1e-3)
    b = Fraction(cmp["allowance"]) + (TINY if above else 0)
    cert = _proved(K, b)
    return (2, 1, 1.0), {"certs": [cert, cert], "K": K, "K_var": 0.9 * K, "kappa": 0.1 * K / 1e-3, "C_c": 1e-3,
                         "cmp": cmp}


def test_a_fednmap_floor_verdict_reads_proved_only_when_the_exact_bound_is_the_allowance_or_below() -> None:
    from fedbounds.checks.fednmap.spep import family

    K_8 = _fednmap_point(1e-3, False)[1]["cmp"]["allowance"]
    for above, want in ((True, "certified"), (False, "proved")):
        (n, Q, C_0), r = _fednmap_point(K_8 * (1 - 1e-9), above)  # the float K holds; the proof's bound decides
        v = family._window_verdict(n, Q, C_0, r)
        assert v.status == "holds"
        assert v.details["pep"]["pep_status"] == want, above
        assert v.details["pep"]["proof"]["decides_claim"] is (not above)


@pytest.mark.parametrize("above", [True, False])
def test_the_ds_certificate_at_the_certified_threshold_reads_proved_only_when_it_proves_the_descent(monkeypatch,
                                                                                                    above: bool) -> None:
    # ds.pep.absorption's pep_at_certified: the claim there is the descent w <= -eta Phi at the certified gamma_r
    from fedbounds.checks.ds_fedproxgrad.pep import family
    from fedbounds.checks.pep.certificate import describe
    from fedbounds.checks.verdicts.threshold import Window

    def certify(build: Any) -> Certificate:
        p = {name: float(Fraction(text)) for name, kind, text in describe(build)["parameters"] if kind == "rational"}
        tv = family.theory_values(p["L_f"], p["L_r"], p["lam"], p["B"], p["eta"], p["gamma_r"])
        claim = -p["eta"] * tv["Phi"]
        return _proved(claim * (1 + 1e-9), Fraction(claim) + (TINY if above else 0))

    monkeypatch.setattr(family, "_certify", certify)
    monkeypatch.setattr(family, "absorbed_gamma_window",
                        lambda *a, gamma_max, **k: (Window(low=gamma_max * 3 / 8, high=gamma_max / 2), gamma_max / 4))
    v, found = family._absorption_verdict("ds.pep.absorption", 1.0, 2, 1e-2)
    assert found is not None and math.isclose(v.observed * 1.5, found)
    rec = v.details["pep_at_certified"]
    assert rec["pep_status"] == ("certified" if above else "proved")
    assert rec["proof"]["decides_claim"] is (not above)
