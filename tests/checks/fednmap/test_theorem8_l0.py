"""Theorem 8's E[L_0] carries the correction heterogeneity C_c (1/n) sum ||grad f_i(x_0) - grad f(x_0)||^2 (corrections
start at 0): the psi gap alone is not implied by the theorem."""

from __future__ import annotations

import math

import numpy as np
from fedbounds.checks.fednmap import checks as fc
from fedbounds.checks.fednmap.common import make_instance, start_point, theorem5_parameters
from fedbounds.checks.registry import CheckContext
from fedbounds.checks.runtime.profiles import QUICK


def test_heterogeneity_is_zero_for_identical_clients_and_positive_otherwise() -> None:
    from fedbounds.algorithms.instances.least_squares import LeastSquares
    from fedbounds.algorithms.regularizers import Zero

    rng = np.random.default_rng(0)
    A = rng.standard_normal((1, 20, 3))
    b = rng.standard_normal((1, 20))
    same = LeastSquares(np.repeat(A, 3, axis=0), np.repeat(b, 3, axis=0), phi=Zero())
    assert fc.correction_heterogeneity(same, np.ones(3), 0.1) == 0.0
    problem = make_instance("ridge", seed=0)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=fc.Q8, m=fc.M8)
    z0, _ = start_point(problem, setup.gamma, 1.0, 0)
    assert fc.correction_heterogeneity(problem, z0, setup.gamma) > 0.1


def test_theorem8_bound_uses_psi_gap_plus_correction_term() -> None:
    v, _, _ = fc._theorem8_instance("ridge", CheckContext(profile=QUICK, seed=0), start="away")
    d = v.details
    assert d["correction_heterogeneity_0"] > 0 and d["C_c"] == fc.C_C8 == 1.0
    assert math.isclose(d["E[L_0]"], d["psi_gap_0"] + d["C_c"] * d["correction_heterogeneity_0"], rel_tol=1e-12)
    assert v.status == "holds"
