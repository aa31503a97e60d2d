"""Property tests: hypothesis draws constants and step sizes from inside each theorem's feasible region (the
theory layer's conditions, evaluated through ``fedbounds.checks.verdicts.formulas``), builds a small instance, and asserts that the
claim's verdict is not ``violated``. Fixed seeds (the ``ci`` hypothesis profile is derandomised)."""

from __future__ import annotations

import numpy as np
from fedbounds.checks.ds_fedproxgrad.checks import lemma5_2_verdict
from fedbounds.checks.ds_fedproxgrad.common import ds_record, fairness_instance, measured_constants
from fedbounds.checks.fednmap.checks import _start, fednmap_run, theorem8_curve, theorem8_values
from fedbounds.checks.fednmap.common import checkpoints, make_instance, theorem5_parameters
from fedbounds.checks.verdicts.formulas import evaluate
from fedbounds.checks.verdicts.verdict import compare
from fedbounds.theory.core import symbols as S
from fedbounds.theory.ds_fedproxgrad import formulas as dc
from fedbounds.theory.fednmap import formulas as fc
from hypothesis import given, settings
from hypothesis import strategies as st

frac = st.floats(min_value=0.2, max_value=1.0)


@settings(max_examples=25)
@given(kind=st.sampled_from(["lasso", "mcp"]), gamma_frac=frac, seed=st.integers(0, 50), scale=st.floats(0.01, 10.0))
def test_nat_nor_relation_at_random_points(kind: str, gamma_frac: float, seed: int, scale: float) -> None:
    """(1 - gamma rho) ||F_nat(prox z)|| <= gamma ||F_nor(z)|| at random z for gamma inside Theorem 5's condition."""
    from fedbounds.algorithms.base import natural_residual, normal_map

    problem = make_instance(kind, n=3, p=4, m=40, seed=seed)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=1, gamma_frac=gamma_frac)
    z = scale * np.random.default_rng(seed).standard_normal((64, problem.p))
    nat = np.sum(natural_residual(problem, problem.phi.prox(z, setup.gamma), setup.gamma) ** 2, axis=-1)
    nor = np.sum(normal_map(problem, z, setup.gamma) ** 2, axis=-1)
    bound = np.array([evaluate(fc.nat_nor_sq_bound, {S.gamma: setup.gamma, S.rho: setup.rho, S.Fnor2: float(v)}) for v in nor])
    assert compare("fednmap.nat_nor_relation", kind, nat, bound, exact=True).status != "violated"


@settings(max_examples=4)
@given(kind=st.sampled_from(["lasso", "mcp"]), eta_frac=frac, eta_a_frac=frac, Q=st.integers(1, 3), het=st.floats(0.0, 1.5),
       seed=st.integers(0, 20))
def test_theorem8_inside_the_conditions(kind: str, eta_frac: float, eta_a_frac: float, Q: int, het: float, seed: int) -> None:
    """Theorem 8 (C_0 = 0, E[L_0] = psi(x_0) - psi*) with steps drawn inside Theorem 5's conditions."""
    problem = make_instance(kind, n=3, p=4, m=60, heterogeneity=het, seed=seed)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=Q, m=1, frac=eta_frac, eta_a_frac=eta_a_frac)
    z0, EL0 = _start(problem, setup.gamma, 1.0, seed)
    T = 300
    traj = fednmap_run(problem, setup.params(z0=z0), rounds=T, replicas=8, seed=seed, sigma2=0.05, metrics=("psi_gap",))
    ts = checkpoints(T, 15)
    bound = theorem8_curve(theorem8_values(problem, setup, sigma2=0.05, EL0=EL0), ts)
    v = compare("fednmap.theorem8", kind, traj.metrics["psi_gap"][ts].T, bound, exact=False)
    assert v.status != "violated", v


@settings(max_examples=4)
@given(c_frac=frac, alpha=st.floats(0.55, 1.0), c_gamma=st.floats(0.0, 3.0), direction=st.sampled_from(["uphill", "random"]),
       seed=st.integers(0, 20))
def test_lemma5_1_and_5_2_inside_the_conditions(c_frac: float, alpha: float, c_gamma: float, direction: str, seed: int) -> None:
    """Lemma 5.2 from r_0 on and Lemma 5.1 pointwise, with eta_r = c/(r+1)^alpha, c <= 1/(6 L_F), alpha in the
    Robbins-Monro range and gamma_r = c_gamma eta_r (deterministic: sigma^2 = 0)."""
    problem = fairness_instance(seed)
    L_F = float(problem.constants["L_F"].value)
    c = c_frac * evaluate(dc.eta_max_smooth, {S.L_F: L_F})
    params = {"schedule": {"kind": "power", "c": c, "alpha": alpha},
              "solver": {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": c_gamma}, "direction": direction},
              "estimator": {"kind": "gaussian", "sigma2": 0.0}}
    rec = ds_record(problem, params, rounds=60, replicas=1, seed=seed, B=float(problem.constants["B"].value))
    v, _ = lemma5_2_verdict("ds.lemma5_2", "prop", problem, rec, sigma2=0.0, level=0.95, exact=True)
    assert v.status != "violated", v
    vals = measured_constants(problem, rec, sigma2=0.0)
    bound = np.array([evaluate(dc.lemma5_1_bound, {**vals, S.gamma_r: float(g), S.gradf2: float(gf)})
                      for g, gf in zip(rec.gamma_emp[:, 0], rec.gradf2[:-1, 0])])
    assert compare("ds.lemma5_1", "prop", rec.ef2[:, 0], bound, exact=True).status != "violated"
