"""Theorem 8's strict form (issue 22, item 3): the artefact of c_{i,0} = 0 at x*, reproduced in exact rational
arithmetic; the fixed-point start (z*, c*); one E[L_0] for verdicts and worst-case search; the PEP's unbounded
direction at C_c = 0 replayed as a control; fednmap.lyapunov's rows at C_c = 1, its C_c = 0 measurements recorded only."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from fedbounds.algorithms.run import run
from fedbounds.checks.fednmap import checks as fchecks
from fedbounds.checks.fednmap import strict_form as sf
from fedbounds.checks.fednmap import worst
from fedbounds.checks.fednmap.common import (
    fixed_point_corrections,
    gaussian_oracle,
    initial_lyapunov,
    make_instance,
    start_point,
    theorem5_parameters,
    theorem8_start,
)
from fedbounds.checks.registry import CheckContext
from fedbounds.checks.runtime.profiles import QUICK
from fedbounds.checks.verdicts.controls import counts_as_evidence


def test_zero_corrections_at_x_star_move_off_the_optimum_exactly() -> None:
    """The issue's artefact: from x* with c_i,0 = 0 the gap at round 1 is a positive rational (not round-off)."""
    gaps = sf.exact_gaps("zero", rounds=2)
    assert all(isinstance(g, Fraction) for g in gaps)
    assert gaps[0] == 0 and gaps[1] > 0 and gaps[2] > 0
    assert 1e-14 < float(gaps[1]) < 1e-13


def test_fixed_point_start_stays_at_the_optimum_exactly() -> None:
    assert sf.exact_gaps("fixed", rounds=6) == [0] * 7


def test_psi_gap_only_form_is_violated_and_the_correction_term_repairs_it() -> None:
    neg = sf.strict_form_control()
    assert neg.status == "violated" and counts_as_evidence(neg)  # the old E[L_0] = psi gap: bound 0 < gap
    assert sf.heterogeneity_at_optimum() == 1
    _, _, ok = sf.theorem8_exact(sf.heterogeneity_at_optimum(), rounds=4)
    assert all(ok)
    # the correction term is what repairs it: a term much smaller than the drift it must cover fails again
    _, _, ok_small = sf.theorem8_exact(Fraction(1, 10**15), rounds=1)
    assert not all(ok_small)


@pytest.mark.parametrize("C_0", [0, 1])
def test_pep_direction_at_cc_zero_violates_the_window_claim(C_0: int) -> None:
    """The PEP's direction (psi rises in round 1 while F_nor != 0) as an exact instance: L_1 > L_0 > 0."""
    v = sf.lyapunov_replay(C_0)
    assert v.status == "violated" and v.observed > v.bound > 0 and counts_as_evidence(v)
    assert v.details["L_1/L_0"] > 100 and v.details["Fnor2_0"] > 0 and v.details["Fnor2_1"] > 0
    L0, L1, _ = sf.window_violation(C_0)
    assert isinstance(L0, Fraction) and L1 > L0 > 0
    # with the corrections at the fixed point (C_c's term zero there) the same offset start descends: no drift
    fixed = sf.exact_trajectory("fixed", rounds=1, offset=sf.REPLAY_OFFSET)
    assert fixed[1][0] < fixed[0][0]


def test_algorithm_started_at_fixed_point_corrections_stays_put() -> None:
    """FedNMap's c0 parameter: from (z*, c*) with exact gradients the ridge run stays at psi*; from c = 0 it does not."""
    problem = make_instance("ridge", seed=0)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=fchecks.Q8, m=fchecks.M8)
    st = theorem8_start(problem, setup.gamma, 0.0, 0)
    assert st.c0 is not None and st.EL0 < 1e-20
    np.testing.assert_allclose(st.c0, fixed_point_corrections(problem, problem.solution().x_star))
    kw = {"rounds": 3, "replicas": 1, "seed": 0, "oracle": gaussian_oracle(0.0), "metrics": ("normal_map_sq",)}
    fixed = run("fednmap", problem, setup.params(**st.params()), **kw).metrics["normal_map_sq"][:, 0]
    zero = run("fednmap", problem, setup.params(z0=st.z0), **kw).metrics["normal_map_sq"][:, 0]
    assert np.max(fixed) < 1e-28 < 1e-16 < zero[1]  # ||F_nor||^2: round-off of z* vs the round-1 client drift
    with pytest.raises(ValueError, match="c0"):
        run("fednmap", problem, setup.params(z0=st.z0, c0=np.zeros((1, problem.p))), **kw)


def test_floor_check_starts_at_the_fixed_point() -> None:
    v, _, _ = fchecks._theorem8_instance("ridge", CheckContext(profile=QUICK, seed=0), start="opt", claim="fednmap.theorem8.floor")
    assert v.details["start_corrections"].startswith("c*") and v.details["E[L_0]"] < 1e-20
    assert v.status == "holds"


def test_worst_case_search_uses_the_verdicts_EL0() -> None:
    """One E[L_0]: the search's experiment carries the correction term exactly as the verdict's start does."""
    exp = worst.build(worst.DEFAULT_POINT, T_cap=10**6)
    st = theorem8_start(exp.problem, exp.setup.gamma, float(worst.DEFAULT_POINT["offset"]), int(worst.DEFAULT_POINT["seed"]))
    assert exp.EL0 == st.EL0 and st.corr_err > 0.1 and exp.EL0 > st.psi_gap + 0.1
    floor = worst.build(worst.DEFAULT_POINT, T_cap=50, start=False, clamp=True)
    assert "c0" in floor.params() and floor.EL0 < 1e-20


def test_start_point_with_zero_corrections_carries_the_heterogeneity() -> None:
    """What tightness.py (fednmap.theorem5.conditions, sigma = 0) uses: E[L_0] = psi gap + correction error at
    c_i,0 = 0, so a violation there cannot be the psi-gap-only artefact."""
    problem = make_instance("lasso", seed=0)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=2, m=1)
    z0, EL0 = start_point(problem, setup.gamma, 1.0, 0)
    st = initial_lyapunov(problem, z0, setup.gamma)
    assert EL0 == st.EL0 and st.corr_err > 0 and EL0 > st.psi_gap
    _, EL0_at = start_point(problem, setup.gamma, 0.0, 0)  # x* with c_i,0 = 0: not zero
    assert EL0_at > 0.1


@pytest.mark.slow  # 32 s at load 5-7 (pytest --durations, 2026-12-04)
def test_lyapunov_rows_are_at_the_reconstructed_constants_and_c_c_zero_is_recorded_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """fednmap.lyapunov's rows are at (C_0, C_c) = (1, 1), where the PEP recovers a descent; the C_c = 0 measurements,
    refuted over the class by the replayed PEP direction (violated, among the controls), are recorded in the tightness
    with that label and are none of the claim's rows, so the summary cannot read "holds" on them (the old check had
    only C_c = 0 rows and read "holds"). The worst-case search is skipped here: it does not touch either."""
    from fedbounds.checks.fednmap import lyapunov
    from fedbounds.checks.fednmap.lyapunov import UNBOUNDED_AT_ZERO, check_lyapunov

    monkeypatch.setattr(lyapunov, "_searched", lambda *a, **k: None)
    res = check_lyapunov(CheckContext(profile=QUICK, seed=0))
    assert res.verdicts and all(v.details["C_c"] > 0 and "class_evidence" not in v.details for v in res.verdicts)
    recorded = res.tightness["instance_only_C_c_0"]
    assert len(recorded) == 4 and all(r["class_evidence"] == UNBOUNDED_AT_ZERO for r in recorded)
    replays = [v for v in res.negatives if v.instance.startswith("PEP direction replayed")]
    assert len(replays) == 2 and all(v.status == "violated" and counts_as_evidence(v) for v in replays)
