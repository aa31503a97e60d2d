"""Planted faults in the exact pipeline behind ``fednmap.theorem8.complexity_inside`` fail here.

The claim's own verdict (a slope of rounds in nQ) restates the step rule, so it cannot see a wrong noise level, a
wrong covariance or a wrong update as long as the floor stays below the target. These tests hold the pipeline
(``affine_round`` probing the engine's ``step``, then ``closed_form``) to a reference written from the paper's round
(docs/fednmap-reconstruction.md, pseudocode of section 2.6) and the oracle's definition (xi ~ N(0, (sigma2/p) I) per
client and call), with its own moment recursion, at one cell of the check (n = 2, Q = 2, p = 1, printed steps):

* the mean and the variance of x_t, and the mean corrections c_t, at t = 1, 10, 1000 (relative 1e-6: all are exact
  up to rounding);
* the floor's variance part against the reference's (its own projection of the conserved mean correction, its own
  doubling sum; relative 1e-3, the probe's rounding at 1 - radius ~ 1e-6);
* the limit's fixed point against x*, the certified minimiser of f + phi (FedNMap's fixed point is exactly x*).

Each planted fault (one monkeypatch each) must break at least one of them; the unpatched pipeline passes all.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from fedbounds.algorithms import closed_form as cf_module
from fedbounds.algorithms import exact as exact_module
from fedbounds.algorithms.closed_form import closed_form
from fedbounds.algorithms.exact import affine_round
from fedbounds.algorithms.fednmap import FedNMap
from fedbounds.algorithms.instances.quadratic import weakly_convex_quadratic
from fedbounds.algorithms.oracles import GaussianOracle
from fedbounds.checks.fednmap.complexity_inside import EPS, FIXED_POINT_TOL, SIGMA2, Z0, ZETA
from fedbounds.checks.fednmap.inside import inside_steps

N, Q = 2, 2
TIMES = (1, 10, 1000)


def _cell() -> tuple:
    prob = weakly_convex_quadratic(n=N, p=1, heterogeneity=ZETA)
    c = prob.constants
    st = inside_steps(L=c["L"].value, rho=c["rho"].value, mu=c["mu"].value, sigma2=SIGMA2, n=N, Q=Q, eps=EPS)
    return prob, {"gamma": st["gamma"], "eta_a": st["eta_a"], "eta_s": st["eta_s"], "Q": Q, "z0": np.array([Z0])}


def _reference(prob, P: dict) -> dict:
    """The round written from the pseudocode on the state s = (z, c_1..c_n) (p = 1), as an affine map read off by
    unit inputs (no engine, no prober), and its moments by a plain loop and a doubling sum for the limit."""
    g, ea, es, q = P["gamma"], P["eta_a"], P["eta_s"], P["Q"]
    n = prob.n
    K = n * q  # one noise coordinate per client and local step

    def rnd(s: np.ndarray, xi: np.ndarray) -> np.ndarray:
        z, c = s[0], s[1:]
        x = prob.phi.prox(np.array([[z]]), g)[0, 0]
        v = (z - x) / g
        zi = np.full(n, z)
        for ell in range(q):
            xl = prob.phi.prox(zi[:, None], g)[:, 0]
            grad = prob.grad(xl.reshape(1, n, 1)).reshape(n) + xi[ell * n : (ell + 1) * n]
            zi = zi - ea * (grad + v + c)
        y = (z - zi) / (ea * q)
        return np.concatenate([[z - es * ea * q * y.mean()], c - y + y.mean()])

    d = 1 + n
    b = rnd(np.zeros(d), np.zeros(K))
    M = np.column_stack([rnd(e, np.zeros(K)) - b for e in np.eye(d)])
    Nm = np.column_stack([rnd(np.zeros(d), e) - b for e in np.eye(K)])
    Sigma = (SIGMA2 / 1) * Nm @ Nm.T
    s0 = np.concatenate([[P["z0"][0]], np.zeros(n)])
    px = prob.phi.prox(np.array([[1.0]]), g)[0, 0]  # x = px z (a linear prox)
    m, C, out = s0.copy(), np.zeros((d, d)), {}
    for t in range(1, max(TIMES) + 1):
        m, C = M @ m + b, M @ C @ M.T + Sigma
        if t in TIMES:
            out[t] = (px * m[0], px * px * C[0, 0], m[1:].copy())
    # the limit on mean_i c_i = 0 (the correction's conserved mean, by its definition), by doubling: sum_k M^k Sigma M^kT
    U = np.linalg.qr(np.column_stack([np.eye(d)[:, 0], np.r_[0.0, 1.0, -1.0]]))[0] if n == 2 else None
    Mr, Sr = U.T @ M @ U, U.T @ Sigma @ U
    Pk, Ck = Mr.copy(), Sr.copy()
    for _ in range(60):
        Ck, Pk = Ck + Pk @ Ck @ Pk.T, Pk @ Pk
    Cz = (U @ Ck @ U.T)[0, 0]
    _, _, A = prob_quadratic(prob)
    out["floor_var"] = 0.5 * A * px * px * Cz
    return out


def prob_quadratic(prob) -> tuple[float, float, float]:
    """psi(x) = c + a x + A x^2 / 2 at p = 1, by three evaluations."""
    v = [float(np.asarray(prob.psi(np.array([[x]]))).reshape(-1)[0]) for x in (-1.0, 0.0, 1.0)]
    return v[1], (v[2] - v[0]) / 2, v[2] - 2 * v[1] + v[0]


def _pipeline(prob, P: dict) -> dict:
    rnd = affine_round("fednmap", prob, P, oracle=GaussianOracle(SIGMA2))
    cf = closed_form(rnd)
    x0, Px = cf.metrics["dist_sq"].y0, cf.metrics["dist_sq"].R  # x - x* = y0 + R s
    a, b, _ = rnd.layout["c"]
    out = {}
    for t in TIMES:
        m, C = cf.moments(t)
        out[t] = (float((x0 + Px @ m)[0]) + float(prob.solution().x_star[0]), float((Px @ C @ Px.T)[0, 0]), m[a:b])
    m, C = cf.limit()
    out["fixed_point"] = float((x0 + Px @ m)[0]) + float(prob.solution().x_star[0])
    _, _, A = prob_quadratic(prob)
    out["floor_var"] = 0.5 * A * float((Px @ C @ Px.T)[0, 0])
    out["floor"] = cf.expectation("psi_gap", np.inf)
    return out


def _failures(prob, P: dict) -> list[str]:
    """The checks of the module docstring that fail (empty: all pass)."""
    ref, got = _reference(prob, P), _pipeline(prob, P)
    bad = []
    for t in TIMES:
        if not got[t][0] == pytest.approx(ref[t][0], rel=1e-6, abs=0.0):
            bad.append(f"mean at t = {t}")
        if not got[t][1] == pytest.approx(ref[t][1], rel=1e-6, abs=0.0):
            bad.append(f"variance at t = {t}")
        if not np.linalg.norm(got[t][2] - ref[t][2]) <= 1e-6 * np.linalg.norm(ref[t][2]):
            bad.append(f"mean corrections at t = {t}")
    if not got["floor_var"] == pytest.approx(ref["floor_var"], rel=1e-3, abs=0.0):
        bad.append("floor variance")
    if not abs(got["fixed_point"] - float(prob.solution().x_star[0])) <= FIXED_POINT_TOL:
        bad.append("fixed point")
    return bad


def test_the_pipeline_matches_the_reference_round():
    prob, P = _cell()
    assert _failures(prob, P) == []


def _noise_x4(monkeypatch):
    original = exact_module.check_linear_gaussian
    monkeypatch.setattr(exact_module, "check_linear_gaussian", lambda problem, oracle: 4.0 * original(problem, oracle))


def _limit_cov_x2(monkeypatch):
    original = cf_module.ClosedForm._limit_reduced
    monkeypatch.setattr(cf_module.ClosedForm, "_limit_reduced", lambda self: (lambda mc: (mc[0], 2.0 * mc[1]))(original(self)))


def _moment_cov_x2(monkeypatch):
    original = cf_module.ClosedForm.moments
    monkeypatch.setattr(cf_module.ClosedForm, "moments", lambda self, t: (lambda mc: (mc[0], 2.0 * mc[1]))(original(self, t)))


def _step_wrapper(monkeypatch, before, after):
    original = FedNMap.step

    def step(self, state, t):
        new = original(self, before(state), t)
        return after(state, new)

    monkeypatch.setattr(FedNMap, "step", step)


def _correction_halved(monkeypatch):
    _step_wrapper(monkeypatch, lambda s: s, lambda s, new: dataclasses.replace(new, c=s.c + 0.5 * (new.c - s.c)))


def _correction_removed(monkeypatch):
    _step_wrapper(monkeypatch, lambda s: s, lambda s, new: dataclasses.replace(new, c=s.c))


def _normal_map_term_removed(monkeypatch):
    """v_t = (z_t - x_t)/gamma dropped from the local steps (x_t := z_t inside the round): FedNMap then minimises f."""
    _step_wrapper(monkeypatch, lambda s: dataclasses.replace(s, x=s.z), lambda s, new: new)


FAULTS = {"noise variance x4 (exact.py)": _noise_x4, "limit covariance x2 (closed form)": _limit_cov_x2,
          "moment covariance x2 (closed form)": _moment_cov_x2, "correction step halved": _correction_halved,
          "correction removed": _correction_removed, "normal-map term removed": _normal_map_term_removed}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_planted_fault_fails(monkeypatch, fault):
    prob, P = _cell()
    FAULTS[fault](monkeypatch)
    assert _failures(prob, P), f"{fault}: every check passed"
