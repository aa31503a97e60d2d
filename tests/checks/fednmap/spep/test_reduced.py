"""The client-symmetric reduced PEP of one stochastic FedNMap round (:mod:`fedbounds.checks.fednmap.spep.reduced`,
docs/fednmap-reconstruction.md §10.10): the same worst case as the PEPit-built PEP, a size that does not grow with n,
and exact certificates that verify against the rows rebuilt from the file's stated problem."""

from __future__ import annotations

import dataclasses
import time
from fractions import Fraction
from typing import Any

import pytest
from fedbounds.checks.fednmap.spep import existence as E
from fedbounds.checks.fednmap.spep import reduced as R
from fedbounds.checks.pep import precondition as P

TAU = 2 * E.MU / 9
#: Clarabel at tight tolerances: the PEPit-built PEP's value to about 1e-8 (the default tolerances give 1e-3)
TIGHT = {"tol_gap_abs": 1e-14, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "max_iter": 500}


def _args(n: int, Q: int) -> tuple[Any, ...]:
    p = E.steps(Q)
    return (E.L, 0.1, p["gamma"], p["eta_a"], p["eta_s"], n, Q, TAU, E.MU)


def _reduced_value(n: int, Q: int) -> float:
    """K* from the reduced PEP as :func:`reduced.point` solves it (at the variance n Q / eta_hat^2, then divided)."""
    s2 = n * Q / E.steps(Q)["eta_hat"] ** 2
    runs = P.solve_preconditioned(R.build_reduced_search(*_args(n, Q), sigma2=s2)())
    run = runs[-1]
    assert run.status == "optimal", [r.status for r in runs]
    return float(run.dual) / s2


@pytest.mark.parametrize(("n", "Q"), [(2, 1), (3, 1), (2, 2), (3, 2)])
def test_the_reduced_pep_has_the_pepit_peps_value(n: int, Q: int) -> None:
    """The reduced SDP and the PEP PEPit builds for n clients (the full form at n = 2, the block form above) have the
    same worst case, to the solvers' accuracy (measured: 1e-8 to 3e-7 relative)."""
    from fedbounds.checks.fednmap.spep.search import build_search_spep
    from fedbounds.checks.pep.solve import solve_once
    from fedbounds.checks.pep.symmetric import solve_symmetric

    sym = n >= 3
    run, _ = (solve_symmetric if sym else solve_once)(build_search_spep(*_args(n, Q), symmetric=sym), "CLARABEL", TIGHT)
    assert run.status == "optimal"
    assert _reduced_value(n, Q) == pytest.approx(run.dual, rel=2e-6)


def test_the_cross_client_rows_bite(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control, changed: the Gram entry of two different clients' slots read as if they were one client's
    (<leaf(i, a), leaf(j, b)> = M + (1 - 1/n) D instead of M - D/n). The value moves by more than the tolerance of
    the agreement test above, so that test would catch it."""
    good = _reduced_value(3, 1)
    row = R._Layout.row

    def wrong(self: Any, kind: str, expr: dict) -> Any:
        moved = {(tuple(("c", 0, u[2]) if isinstance(u, tuple) and u[:2] == ("c", 1) else u for u in k)
                  if isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], tuple) else k): v for k, v in expr.items()}
        return row(self, kind, moved)

    monkeypatch.setattr(R._Layout, "row", wrong)
    assert abs(_reduced_value(3, 1) - good) > 1e-4 * good


def test_its_size_does_not_grow_with_n() -> None:
    """The same blocks and row count at n = 4 and n = 64, Q = 4 (n enters the coefficients only), and fewer than
    2 (3Q)^2 rows; the full PEP at (64, 8) would have a Gram matrix of size 1537."""
    a, b = (R.build_reduced_search(*_args(n, 4))() for n in (4, 64))
    assert (a.points, a.values, len(a.rows)) == (b.points, b.values, len(b.rows))
    assert a.digest != b.digest
    assert [len(c) for c in P.blocks(a)] == [2 + 3 * 4 - 1, 3 * 4]
    assert a.values == 1 + 2 + 2 * 4  # tau, h's two shared values, f_i(x_0), h and f_i at Q - 1 local points, f_i(x_1)
    assert len(a.rows) < 2 * (3 * 4) ** 2
    assert R.full_gram_dimension(64, 8) == 1537


def test_n_is_1_has_no_difference_block() -> None:
    pb = R.build_reduced_search(*_args(1, 2))()
    assert [len(c) for c in P.blocks(pb)] == [2 + 3 * 2 - 1]


def test_a_proof_at_n_64_verifies_from_its_file_in_under_a_minute(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """(n, Q) = (64, 1): the proof is made (preconditioned solves, the interior dual on the rescaled rows), stored with
    its problem, and the standalone verifier rebuilds the rows from the file and checks them exactly, in seconds."""
    from fedbounds.checks.pep import certificate as C

    monkeypatch.setattr(C, "STORE", tmp_path)
    rec = R.point(64, 1, TAU, make=True)
    assert rec["status"] == "proved"
    assert rec["K"] >= rec["values"][-1] * (1 - 1e-6)  # a proved bound is an upper bound on the solver's value
    (path,) = tmp_path.glob("*.json.gz")
    t0 = time.perf_counter()
    summary = C.check_problem(C.load(path), path.name)
    assert time.perf_counter() - t0 < 60
    assert Fraction(summary["bound"]) / Fraction(rec["sigma2"]) == pytest.approx(rec["K"], rel=1e-12)


def test_a_file_whose_stated_n_is_changed_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Control, changed: the file's stated n (64 -> 32). The rows rebuilt at n = 32 have another hash: refused."""
    from fedbounds.checks.pep import certificate as C
    from fedbounds.checks.pep.verify_certificate import CertificateError

    monkeypatch.setattr(C, "STORE", tmp_path)
    R.point(64, 1, TAU, make=True)
    (path,) = tmp_path.glob("*.json.gz")
    cert = C.load(path)
    for p in cert["problem"]["parameters"]:
        if p[0] == "n":
            p[2] = "32"
    with pytest.raises(CertificateError, match="hash"):
        C.check_problem(cert, path.name)


def test_a_bound_below_the_worst_case_is_not_proved() -> None:
    """Control, changed: the value handed to the prover (0.9 of the solver's). No room makes a certificate of a bound
    below the worst case: none is found."""
    pb = R.build_reduced_search(*_args(2, 1), sigma2=2 / E.steps(1)["eta_hat"] ** 2)()
    runs = P.solve_preconditioned(pb)
    good = P.prove_rescaled(pb, runs, widths=(1e-6,))
    assert good is not None
    low = [dataclasses.replace(r, dual=0.9 * r.dual) if r.dual is not None else r for r in runs]
    assert P.prove_rescaled(pb, low, widths=(1e-6, 1e-2)) is None


def _speedup_verdicts(monkeypatch: pytest.MonkeyPatch, **patch: Any) -> list[Any]:
    from fedbounds.checks.fednmap.spep import existence_check as X
    from fedbounds.checks.registry import CheckContext, CheckResult
    from fedbounds.checks.runtime.profiles import QUICK

    for name, value in patch.items():
        monkeypatch.setattr(E, name, value)
    monkeypatch.setattr(X, "SPEEDUP_QUICK", ((64, 1),))  # Q = 8 verifies too (the check does it), in 2 s more
    res = CheckResult(X.EXISTENCE)
    X._speedup_verdicts(CheckContext(profile=QUICK), res, full=False)
    return res.verdicts


def test_the_check_reverifies_the_speedup_tables_n_64_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check re-verifies the committed certificate at n = 64 against the rebuilt reduced rows, no solver: it holds,
    proved, at 0.0011 of the printed floor."""
    vs = _speedup_verdicts(monkeypatch)
    assert len(vs) == 1 and vs[0].status == "holds" and vs[0].details["evidence"] == "proved"
    assert 1e-3 < vs[0].observed < 1.2e-3


def test_a_printed_floor_1000x_smaller_reads_violated_and_a_file_that_does_not_reverify_gives_no_number(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Controls, changed: the printed floor (/1000: the certified floor exceeds it: violated), then the certificate
    (not re-verified: no number, never holds)."""
    floor = E.printed_floor
    vs = _speedup_verdicts(monkeypatch, printed_floor=lambda *a, **k: floor(*a, **k) / 1000)
    assert [v.status for v in vs] == ["violated"]
    vs = _speedup_verdicts(monkeypatch, _exact=lambda *a, **k: {"status": "not proved: planted"})
    assert all(v.status == "inconclusive" and v.details["evidence"] == "unknown" for v in vs)


def test_the_wide_family_is_the_pepit_peps_and_contains_merit() -> None:
    """Family ``wide`` (three more forms: ||grad f||^2, ||v||^2, ||grad f - v||^2): the reduced value is the PEPit-built
    PEP's at (n, Q) = (3, 1) (block form, tight Clarabel) and at most the ``merit`` value (measured 2.2 times smaller)."""
    from fedbounds.checks.fednmap.spep.search import build_search_spep
    from fedbounds.checks.pep.symmetric import solve_symmetric

    n, Q = 3, 1
    s2 = n * Q / E.steps(Q)["eta_hat"] ** 2
    wide = P.solve_preconditioned(R.build_reduced_search(*_args(n, Q), family="wide", sigma2=s2)())[-1]
    run, _ = solve_symmetric(build_search_spep(*_args(n, Q), family="wide", symmetric=True), "CLARABEL", TIGHT)
    assert wide.status == "optimal" and run.status == "optimal"
    assert wide.dual / s2 == pytest.approx(run.dual, rel=2e-6)
    assert wide.dual / s2 < _reduced_value(n, Q) / 2
