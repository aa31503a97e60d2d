"""The client-symmetric reduced PEP of one stochastic FedNMap round (:mod:`fedbounds.checks.fednmap.spep.reduced`,
docs/fednmap-reconstruction.md §10.10): the same worst case as the PEPit-built PEP, a size that does not grow with n,
and exact certificates that verify against the rows rebuilt from the file's stated problem."""

from __future__ import annotations

import dataclasses
import math
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


def test_the_reduced_pep_has_the_pepit_peps_value_at_l_2() -> None:
    """The same equality away from L = 1 (every other test builds at L = 1, where 1/(4 L) and 1/(4/L) agree): the scaled
    point L = 2, rho and mu doubled, the steps halved, (n, Q) = (2, 1)."""
    from fedbounds.checks.fednmap.spep.search import build_search_spep
    from fedbounds.checks.pep.solve import solve_once

    p = E.steps(1)
    args = (2 * E.L, 0.2, p["gamma"] / 2, p["eta_a"] / 2, p["eta_s"], 2, 1, TAU, 2 * E.MU)
    run, _ = solve_once(build_search_spep(*args), "CLARABEL", TIGHT)
    assert run.status == "optimal"
    s2 = 2 / (p["eta_hat"] / 2) ** 2
    runs = P.solve_preconditioned(R.build_reduced_search(*args, sigma2=s2)())
    assert runs[-1].status == "optimal"
    assert float(runs[-1].dual) / s2 == pytest.approx(run.dual, rel=2e-6)


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
    PEP's at (n, Q) = (3, 1) (block form, tight Clarabel) and at most the ``merit`` value (measured 2.2 times smaller).
    Both are in the normal frame, where wide's added forms are not functions of the state: this checks the reduction,
    not a Lyapunov bound (see test_from_the_free_start_wide_and_quad_are_merit)."""
    from fedbounds.checks.fednmap.spep.search import build_search_spep
    from fedbounds.checks.pep.symmetric import solve_symmetric

    n, Q = 3, 1
    s2 = n * Q / E.steps(Q)["eta_hat"] ** 2
    wide = P.solve_preconditioned(R.build_reduced_search(*_args(n, Q), family="wide", sigma2=s2)())[-1]
    run, _ = solve_symmetric(build_search_spep(*_args(n, Q), family="wide", symmetric=True), "CLARABEL", TIGHT)
    assert wide.status == "optimal" and run.status == "optimal"
    assert wide.dual / s2 == pytest.approx(run.dual, rel=2e-6)
    assert wide.dual / s2 < _reduced_value(n, Q) / 2


# --------------------------------------------------------------------------------------------------------------
# n = infinity: the limit SDP (every 1/n coefficient 0), docs/fednmap-reconstruction.md §10.10
# --------------------------------------------------------------------------------------------------------------
def _rows_at(n: Any, Q: int, s2: float = 1.0) -> Any:
    return R.build_reduced_search(*_args(2, Q)[:5], n, Q, TAU, E.MU, sigma2=s2)()


def test_the_rows_at_n_inf_are_the_limit_of_the_rows_at_n() -> None:
    """Each row at n depends on n through 1/n only (row_n = row_inf + Delta/n), exactly: n1 (row_n1 - row_inf) equals
    n2 (row_n2 - row_inf) for n1 = 64, n2 = 1024, coefficient by coefficient, and some Delta is not 0 (the cross-client
    rows: the test is not vacuous). Planted, the next test: 1/n = 1/64 at 'inf'."""
    inf, a, b = _rows_at(R.INF, 2), _rows_at(64, 2), _rows_at(1024, 2)
    assert len(inf.rows) == len(a.rows) == len(b.rows)
    moved = 0
    for ri, ra, rb in zip(inf.rows, a.rows, b.rows, strict=True):
        gi, ga, gb = ({(i, j): c for i, j, c in r.gram} for r in (ri, ra, rb))
        for key in set(gi) | set(ga) | set(gb):
            da, db = ga.get(key, 0) - gi.get(key, 0), gb.get(key, 0) - gi.get(key, 0)
            assert 64 * da == 1024 * db, key
            moved += da != 0
        assert ri.values == ra.values == rb.values and ri.constant == ra.constant == rb.constant
    assert moved > 0


def test_k_star_of_n_falls_to_k_star_of_inf_and_a_planted_one_over_64_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Q = 2 (Clarabel, preconditioned): K*(64) > K*(256) > K*(1024) > K*(inf) > 0, the distance to the limit falling
    (K*(1024) - K*(inf) < K*(64) - K*(inf) / 8; measured 0.075). Control, changed: the layout's 1/n at 'inf' set to 1/64;
    K*("inf") is then K*(64) and the chain breaks at K*(1024) > K*(inf)."""
    def K(n: Any) -> float:
        return float(R.point(n, 2, TAU)["K"])

    k64, k256, k1024, kinf = K(64), K(256), K(1024), K(R.INF)
    assert k64 > k256 > k1024 > kinf > 0
    assert k1024 - kinf < (k64 - kinf) / 8
    init = R._Layout.__init__

    def planted(self: Any, leaves: Any, n: Any) -> None:
        init(self, leaves, n)
        if n == R.INF:
            self.inv_n = Fraction(1, 64)

    monkeypatch.setattr(R._Layout, "__init__", planted)
    assert K(R.INF) > K(1024)


def test_n_inf_is_stated_as_inf_and_other_ns_are_refused() -> None:
    """math.inf is read as 'inf'; a float n, 0 or a negative n are refused (one line, ValueError)."""
    assert R._clients(math.inf) == R.INF == R._clients("inf")
    for bad in (0, -1, 2.5, "many", True):
        with pytest.raises(ValueError, match="n must be"):
            R._clients(bad)
    assert R.full_gram_dimension(R.INF, 2) is None


def _check_inf_file(path: Any, K: float | None = None) -> None:
    """The file at n = inf: it states n = 'inf', re-verifies against the rebuilt limit rows; with the stated n changed
    (inf -> 64, inf -> 1024) the rebuilt rows have another hash and it is refused."""
    from fedbounds.checks.pep import certificate as C
    from fedbounds.checks.pep.verify_certificate import CertificateError

    cert = C.load(path)
    assert ["n", "text", "inf"] in cert["problem"]["parameters"]
    summary = C.check_problem(cert, path.name)
    s2 = R.variance(R.INF, 2)
    assert 0 < Fraction(summary["bound"]) / Fraction(s2) < Fraction(1, 10**9)
    if K is not None:
        assert float(Fraction(summary["bound"]) / Fraction(s2)) == pytest.approx(K, rel=1e-12)
    for stated in (["n", "integer", "64"], ["n", "integer", "1024"]):
        bad = C.load(path)
        bad["problem"]["parameters"] = [stated if p[0] == "n" else p for p in bad["problem"]["parameters"]]
        with pytest.raises(CertificateError, match="hash"):
            C.check_problem(bad, path.name)


def test_the_committed_proof_at_n_inf_verifies_from_its_file_and_a_changed_n_is_refused() -> None:
    """The committed certificate of K*(inf) at Q = 2 (theorem8_families.json's row): re-verified from its file alone."""
    from fedbounds.checks.pep import certificate as C

    path = C.stored(_rows_at(R.INF, 2, R.variance(R.INF, 2)).digest)
    assert path.exists()
    _check_inf_file(path)


@pytest.mark.slow
def test_a_proof_at_n_inf_is_made_and_verifies_from_its_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """(n, Q) = (inf, 2): the proof is made (about 5 CPU-s) and stored with n = 'inf' in its problem; then as above."""
    from fedbounds.checks.pep import certificate as C

    monkeypatch.setattr(C, "STORE", tmp_path)
    rec = R.point(R.INF, 2, TAU, make=True)
    assert rec["status"] == "proved"
    (path,) = tmp_path.glob("*.json.gz")
    _check_inf_file(path, rec["K"])


# --------------------------------------------------------------------------------------------------------------
# larger families: the tilt-invariant forms, the quad grid, the free start (docs/fednmap-reconstruction.md §10.10)
# --------------------------------------------------------------------------------------------------------------
def _value(n: int, Q: int, family: str, start: str) -> float:
    s2 = R.variance(n, Q)
    runs = P.solve_preconditioned(R.build_reduced_search(*_args(n, Q), family=family, sigma2=s2, start=start)())
    run = next(r for r in reversed(runs) if r.status == "optimal")
    return float(run.dual) / s2


def test_the_quad_grid_contains_wide_and_its_directions_are_exact() -> None:
    assert len(R.QUAD_DIRECTIONS) == 16 and len(set(R.QUAD_DIRECTIONS)) == 16
    assert {(1, 1), (1, 0), (0, 1), (1, -1)} <= set(R.QUAD_DIRECTIONS)
    assert all(isinstance(a, int) and isinstance(b, int) and math.gcd(a, b) == 1 for a, b in R.QUAD_DIRECTIONS)
    assert R.tilt_invariant("merit") and not R.tilt_invariant("wide") and not R.tilt_invariant("quad")
    assert R.start_for("merit") == "normal" and R.start_for("quad") == "free"


def test_in_the_normal_frame_quad_le_wide_le_merit() -> None:
    """(n, Q) = (2, 2), normal form: a larger family has a smaller value (measured: quad 0.4536 x merit, wide 0.4538 x)."""
    merit, wide, quad = (_value(2, 2, f, "normal") for f in ("merit", "wide", "quad"))
    assert quad <= wide * (1 + 1e-6) and wide <= merit * (1 + 1e-6)
    assert wide < merit / 2


def test_from_the_free_start_wide_and_quad_are_merit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The PEP of every start state (the start gradients' mean and the corrections free): merit's value is the normal
    form's (merit is tilt invariant), and wide's and quad's equal it (their other forms change along a tilt, which
    moves nothing else: their rows constrain nothing). Measured at (3, 2): 1e-7 apart. Control, changed: the start
    gradients' mean pinned to 0 in the free start (the mean tilt no longer free): wide falls below merit again."""
    n, Q = 3, 2
    merit = _value(n, Q, "merit", "normal")
    assert _value(n, Q, "merit", "free") == pytest.approx(merit, rel=1e-5)
    assert _value(n, Q, "wide", "free") == pytest.approx(merit, rel=1e-5)
    assert _value(n, Q, "quad", "free") == pytest.approx(merit, rel=1e-5)
    c = R._Leaves.c

    def pinned(self: Any, zero_mean: bool = False) -> Any:
        return c(self, zero_mean=zero_mean or self.slots == 0)  # slot 0: the start gradients

    monkeypatch.setattr(R._Leaves, "c", pinned)
    assert _value(n, Q, "wide", "free") < 0.9 * merit


def test_a_quad_certificate_verifies_from_its_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """The quad family's reduced PEP (normal form, (n, Q) = (2, 1)) is proved and re-verified from the file like
    merit's: the family is a text parameter of the builder."""
    from fedbounds.checks.pep import certificate as C

    monkeypatch.setattr(C, "STORE", tmp_path)
    rec = R.point(2, 1, TAU, make=True, family="quad")
    assert rec["status"] == "proved"
    (path,) = tmp_path.glob("*.json.gz")
    cert = C.load(path)
    assert ["family", "text", "quad"] in cert["problem"]["parameters"]
    assert Fraction(C.check_problem(cert, path.name)["bound"]) / Fraction(rec["sigma2"]) == pytest.approx(rec["K"], rel=1e-12)


def test_existence_solves_a_family_from_its_start() -> None:
    """existence.solve routes quad to the reduced PEP from the free start: its K is merit's (2, 1)."""
    quad = E.solve(2, 1, TAU, family="quad")
    assert quad["form"] == "reduced" and quad["status"] == "single solver"
    assert quad["K"] == pytest.approx(E.solve(2, 1, TAU)["K"], rel=1e-5)


def _tilt_changes(monkeypatch: pytest.MonkeyPatch, n: int, Q: int, family: str,
                  direction: Any = None) -> tuple[list[Fraction], Any]:
    """Each row's change along the tilts of the free start's PEP, exactly: a fresh direction a added to the start
    gradients' mean and taken from h's subgradient g (f_i + <a, .>, h - <a, .>: Gram change d d' on the M block), and
    one added to the clients' start gradients and taken from their corrections (sum a_i = 0: d d' on the D block).
    ``direction``: another (M-block) direction instead, for the control."""
    seen: dict[str, Any] = {}
    problem = R._problem

    def spy(lv: Any, rows: Any, n_: Any) -> Any:
        seen["lay"] = R._Layout(lv, n_)
        return problem(lv, rows, n_)

    monkeypatch.setattr(R, "_problem", spy)
    pb = R.build_reduced_search(*_args(n, Q), family=family, start="free")()
    lay = seen["lay"]
    dirs = [direction(lay)] if direction is not None else [
        {lay.M[("m", 0)]: 1, lay.M[("s", 0)]: -1}, {lay.dM + 0: 1, lay.dM + 1: -1}]
    changes = [sum((Fraction(c) * d.get(i, 0) * d.get(j, 0) for i, j, c in row.gram), Fraction(0)) for d in dirs
               for row in pb.rows]
    return changes, pb


def test_the_tilts_are_exact_recession_directions_of_the_free_start() -> None:
    """Why wide and quad from the free start are merit, exactly (not only to Clarabel's accuracy, which fails there at
    Q >= 4): along both tilts no row of merit's PEP moves (merit is tilt invariant: the normal form loses nothing),
    and in quad's only inequality rows move, each towards slack (the forms that are not invariant). So any feasible
    point of merit's PEP, tilted far enough, is feasible for quad's with the same objective. Control, changed: the
    start gradients' mean moved alone (h's subgradient kept): interpolation rows move."""
    mp = pytest.MonkeyPatch()
    try:
        for n, Q in ((2, 1), (3, 2)):
            merit, _ = _tilt_changes(mp, n, Q, "merit")
            assert all(c == 0 for c in merit)
            quad, pb = _tilt_changes(mp, n, Q, "quad")
            moved = [i % len(pb.rows) for i, c in enumerate(quad) if c != 0]
            assert moved and all(c <= 0 for c in quad)
            assert all(pb.rows[i].kind == "inequality" and not pb.rows[i].values for i in moved)
        wrong, pb = _tilt_changes(mp, 3, 2, "merit", direction=lambda lay: {lay.M[("m", 0)]: 1})
        assert any(c != 0 for c in wrong)
    finally:
        mp.undo()


def test_the_cli_refuses_a_family_outside_the_speedup_table(capsys: pytest.CaptureFixture[str]) -> None:
    """--family is for --speedup only (the C_0 table is merit's): one line, exit 2; an unknown family: argparse's exit 2."""
    assert E.main(["--family", "quad"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    with pytest.raises(SystemExit) as exc:
        E.main(["--speedup", "--family", "nope"])
    assert exc.value.code == 2
