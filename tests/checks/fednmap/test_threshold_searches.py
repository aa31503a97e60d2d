"""The three threshold searches of the PEP layer never count an undecided probe as failing.

``smallest_constants`` and ``largest_certified_step`` (checks/fednmap/pep/encoding.py) and ``absorbed_gamma_window`` /
``largest_absorbed_gamma`` (checks/ds_fedproxgrad/pep/encoding.py) are driven here by synthetic certificates (no SDP): a known
threshold, and a band of parameter values where the solver answers ``optimal_inaccurate``. Before the fix the band was
read as "fails", which moved each threshold by the width of the band (the committed SMALLEST_C0 had n = 1 above
n = 2); each test asserts the window still contains the true threshold.
"""

from __future__ import annotations

import math

import pytest
from fedbounds.checks.ds_fedproxgrad.pep import encoding as ds_pep
from fedbounds.checks.fednmap.pep import encoding as fn_pep
from fedbounds.checks.pep.solve import Certificate, SolverRun


def fake_cert(value: float | None, status: str = "optimal") -> Certificate:
    """A one-solver certificate: ``value`` None with status 'unbounded' for an unbounded worst case."""
    run = SolverRun("CLARABEL", status, value, value, 0.0)
    ok = status == "optimal" and value is not None
    return Certificate(values={"CLARABEL": value}, statuses={"CLARABEL": status}, gaps={"CLARABEL": 0.0},
                       seconds={"CLARABEL": 0.0}, gram_dim=3, rel_tol=1e-3, abs_tol=1e-6, certified=ok,
                       unbounded=status == "unbounded", value=value if ok else (math.inf if status == "unbounded" else None),
                       disagreement=0.0, agree=value is not None, runs=(run,))


ARGS = dict(L=1.0, rho=0.1, gamma=0.18, eta_a=0.01, eta_s=1.0, n=1, Q=1, T=1)


def _smallest(monkeypatch, threshold: float, band: tuple[float, float]) -> fn_pep.ConstantsResult:
    """smallest_constants on: ratio = threshold/C_0 (<= 1 iff C_0 >= threshold), C_0 = 0 unbounded, the search
    solver inaccurate on the open ``band``."""

    def descent_check(*a, **k):
        C_0 = a[8]
        if C_0 == 0.0:
            return fake_cert(None, "unbounded")
        return fake_cert(threshold / C_0, "optimal_inaccurate" if band[0] < C_0 < band[1] else "optimal")

    monkeypatch.setattr(fn_pep, "descent_check", descent_check)
    (res,) = fn_pep.smallest_constants(**ARGS, descent_coef=0.001, C_c_grid=(1.0,), C_0_min=1 / 64, C_0_tol=0.01,
                                       search_solvers=("CLARABEL",), solvers=("CLARABEL",))
    return res


def test_smallest_constants_unknown_grid_probe_is_not_a_failure(monkeypatch):
    # threshold 0.11; only the grid probe 0.125 is undecided. Read as "fails", it became the lower end of the
    # bisection and the result came out about 0.127, above the threshold
    res = _smallest(monkeypatch, 0.11, (0.12, 0.13))
    assert res.C_0 == pytest.approx(0.11, rel=0.02) and res.C_0 >= 0.11
    assert res.C_0_low <= 0.11
    assert len(res.unknown) == 1 and res.unknown[0] == pytest.approx(0.125)
    assert res.certificate.certified and res.ratio <= 1.0


def test_smallest_constants_unknown_band_widens_the_window(monkeypatch):
    # the solver is undecided on all of (0.1, 0.2), threshold 0.128 inside: the window cannot be narrowed there,
    # and its lower end stays a decided failure below the band (not an undecided probe inside it)
    res = _smallest(monkeypatch, 0.128, (0.1, 0.2))
    assert res.C_0_low is not None and res.C_0 is not None
    assert res.C_0_low <= 0.1 and 0.128 <= res.C_0
    assert res.unknown and all(0.1 < c < 0.2 for c in res.unknown)


def test_largest_certified_step_unknown_probe_is_not_a_failure(monkeypatch):
    # meets iff k <= 195; inaccurate at k = 32 and k = 64 (the old search stopped at k = 16)
    def descent_check(*a, **k):
        mult = a[3] / ARGS["eta_a"]
        status = "optimal_inaccurate" if round(mult) in (32, 64) else "optimal"
        return fake_cert(0.5 if mult <= 195 else 2.0, status)

    monkeypatch.setattr(fn_pep, "descent_check", descent_check)
    res = fn_pep.largest_certified_step(**{k: v for k, v in ARGS.items() if k != "eta_a"}, eta_a_ref=ARGS["eta_a"],
                                        descent_coef_ref=0.001, C_0_grid=(1.0,), C_c_grid=(1.0,), k_start=16.0,
                                        k_max=4096.0, search_solvers=("CLARABEL",), solvers=("CLARABEL",))
    assert res.k is not None and res.k_high is not None
    assert res.k <= 195 < res.k_high
    assert res.k > 150
    assert 32.0 in res.unknown and 64.0 in res.unknown


@pytest.mark.parametrize("fn", ["window", "largest"])
def test_absorbed_gamma_unknown_band_is_not_a_failure(monkeypatch, fn):
    # Phi_PEP = 1 - gamma (>= 1/4 iff gamma <= 0.75); not certified on (0.4, 0.6): the old bisection on [0, 1]
    # met an undecided midpoint 0.5 and returned a gamma below 0.5
    def largest_phi(L_f, L_r, lam, B, eta, g, *a, **k):
        phi = None if 0.4 < g < 0.6 else 1.0 - g
        return ds_pep.PhiResult(eta, g, phi, 0.25, 0.25, fake_cert(None))

    monkeypatch.setattr(ds_pep, "largest_phi", largest_phi)
    if fn == "window":
        w, thr = ds_pep.absorbed_gamma_window(1.0, 1.0, 0.5, 1.0, 0.1, gamma_max=1.0, tol=1e-3)
        assert w.low <= 0.75 <= w.high and w.high - w.low <= 1e-3 and 0.5 in w.unknown
        assert thr == pytest.approx(1 / 10**0.5)
    else:
        g, _, solves = ds_pep.largest_absorbed_gamma(1.0, 1.0, 0.5, 1.0, 0.1, gamma_max=1.0, tol=1e-3)
        assert 0.749 <= g <= 0.75 and solves > 3
