"""Theorem 8's strict form in exact rational arithmetic (docs/provenance.md): where the corrections start matters.

The instance: two clients on the line, f_i(x) = a_i x^2/2 - b_i x with curvatures a = (1, 1/2) and b = (1, -1)
(heterogeneous minimisers), phi = 0, Q = 2, sigma = 0, Theorem 5's largest steps (L = 1, rho = 0) taken as the
exact rationals of their binary floats. Algorithm 1 runs through :class:`fedbounds.algorithms.fednmap.FedNMap`'s own
``step`` on object arrays of :class:`fractions.Fraction` (no floating point anywhere: every number below is exact).

* From x_0 = x* (z_0 = z*) with Algorithm 1's c_{i,0} = 0: psi(x_1) - psi* > 0 exactly, against the psi-gap-only
  "strictest form" bound exp(-kappa) * 0 + floor(sigma = 0) = 0. Theorem 8 does not say that: its E[L_0] carries
  C_c (1/n) sum ||grad f_i(x_0) - grad f(x_0)||^2 > 0 there (the uncorrected client drift of round 1).
* From the fixed point (z*, c*), c_i* = grad f(x*) - grad f_i(x*): psi(x_t) - psi* = 0 at every round exactly,
  E[L_0] = 0 and the floor check is exact.
* Started a little off it, z_0 = z* + 1e-8 with c_{i,0} = 0, it is the PEP's unbounded direction of the Lyapunov
  window claim at C_c = 0 (``fednmap.pep.lyapunov_constants``): the drift raises L in round 1, L_1 > L_0 > 0, with
  F_nor nonzero, so E[L_{t+m}] <= (1 - m kappa) E[L_t] + m kappa floor fails, for C_0 = 0 and C_0 = 1.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp
from fedbounds.algorithms.fednmap import FedNMap, FedNMapState
from fedbounds.algorithms.run import Context
from fedbounds.checks.fednmap.common import theorem5_parameters
from fedbounds.checks.verdicts.controls import THEOREM, control
from fedbounds.checks.verdicts.verdict import Verdict
from fedbounds.theory.core import symbols as S
from fedbounds.theory.fednmap import formulas as fc

__all__ = ["CURVATURES", "REPLAY_OFFSET", "TARGETS", "ExactTwoClients", "exact_gaps", "exact_trajectory",
           "heterogeneity_at_optimum", "lyapunov_replay", "strict_form_control", "theorem8_exact", "window_violation"]

#: the instance of the issue: client curvatures 1 and 1/2, and their linear terms (distinct minimisers)
CURVATURES = (Fraction(1), Fraction(1, 2))
TARGETS = (Fraction(1), Fraction(-1))
#: local steps
Q = 2


class _Identity:
    """phi = 0: prox is the identity, kept on object arrays (Fractions stay exact)."""

    rho = 0.0

    def prox(self, z: np.ndarray, gamma: object) -> np.ndarray:
        return np.array(z, dtype=object, copy=True)


class _ExactOracle:
    """sigma = 0: the exact gradient, without the float cast of the library's oracle."""

    def sample(self, problem: ExactTwoClients, X: np.ndarray, rng: object = None) -> np.ndarray:
        return problem.grad(X)


class ExactTwoClients:
    """f_i(x) = a_i x^2/2 - b_i x on R (n = 2, p = 1), phi = 0, in Fractions (duck-typed for FedNMap.step)."""

    n, p = 2, 1
    phi = _Identity()

    def __init__(self, a: tuple[Fraction, ...] = CURVATURES, b: tuple[Fraction, ...] = TARGETS) -> None:
        self.a, self.b = a, b
        self.x_star = sum(b, Fraction(0)) / sum(a, Fraction(0))

    def grad(self, X: np.ndarray) -> np.ndarray:
        """grad f_i(X[..., i, :]) = a_i x - b_i, object array (..., n, p)."""
        G = np.empty(X.shape, dtype=object)
        for i in range(self.n):
            G[..., i, :] = X[..., i, :] * self.a[i] - self.b[i]
        return G

    def psi(self, x: Fraction) -> Fraction:
        return sum((ai * x * x / 2 - bi * x for ai, bi in zip(self.a, self.b, strict=True)), Fraction(0)) / self.n

    def grad_f(self, x: Fraction) -> Fraction:
        return sum((ai * x - bi for ai, bi in zip(self.a, self.b, strict=True)), Fraction(0)) / self.n


def _steps() -> dict[str, Fraction]:
    """Theorem 5's largest steps at L = 1, rho = 0, Q = 2 (m = 1), as exact rationals of their floats."""
    st = theorem5_parameters(1.0, 0.0, Q=Q, m=1)
    return {"gamma": Fraction(st.gamma), "eta_a": Fraction(st.eta_a), "eta_s": Fraction(st.eta_s), "Q": Q,
            "eta_hat": Fraction(st.eta_hat)}


def exact_trajectory(start: str, rounds: int = 4, offset: Fraction = Fraction(0)) -> list[tuple[Fraction, Fraction]]:
    """(psi(x_t) - psi*, ||F_nor(z_t)||^2) for t = 0..rounds, exactly, from z_0 = z* + ``offset`` with corrections
    ``start``: ``"zero"`` (c_{i,0} = 0, Algorithm 1's) or ``"fixed"`` (c* = grad f(x*) - grad f_i(x*)). With phi = 0,
    x = prox(z) = z and F_nor(z) = grad f(z)."""
    if start not in ("zero", "fixed"):
        raise ValueError(f"start must be 'zero' or 'fixed', got {start!r}")
    prob, P = ExactTwoClients(), _steps()
    params = {"gamma": P["gamma"], "eta_a": P["eta_a"], "eta_s": P["eta_s"], "Q": Q, "variant": "A", "correction": True}
    xs = prob.x_star
    z = np.array([[xs - P["gamma"] * prob.grad_f(xs) + offset]], dtype=object)  # z* + offset (phi = 0: z* = x*)
    G = prob.grad(np.array([[[xs], [xs]]], dtype=object))
    c = (G.mean(axis=1, keepdims=True) - G) if start == "fixed" else np.full((1, 2, 1), Fraction(0), dtype=object)
    state = FedNMapState(Context(prob, params, _ExactOracle(), 0, 1), 0, z, prob.phi.prox(z, P["gamma"]), c)
    psi_star = prob.psi(xs)

    def observe(st: FedNMapState) -> tuple[Fraction, Fraction]:
        x = st.x[0, 0]
        return prob.psi(x) - psi_star, prob.grad_f(x) ** 2

    out = [observe(state)]
    alg = FedNMap()
    for t in range(rounds):
        state = alg.step(state, t)
        out.append(observe(state))
    return out


def exact_gaps(start: str, rounds: int = 4) -> list[Fraction]:
    """psi(x_t) - psi* for t = 0..rounds, exactly, from z* (:func:`exact_trajectory`)."""
    return [g for g, _ in exact_trajectory(start, rounds)]


def heterogeneity_at_optimum() -> Fraction:
    """(1/n) sum_i (grad f_i(x*) - grad f(x*))^2: the correction error E[L_0] carries from x* with c_{i,0} = 0."""
    prob = ExactTwoClients()
    g = [ai * prob.x_star - bi for ai, bi in zip(prob.a, prob.b, strict=True)]
    return sum((gi * gi for gi in g), Fraction(0)) / prob.n


#: the replay's start offset from z*: small enough that the uncorrected drift of round 1 outweighs the descent
REPLAY_OFFSET = Fraction(1, 10**8)


def window_violation(C_0: int, m: int = 1, offset: Fraction = REPLAY_OFFSET) -> tuple[Fraction, Fraction, sp.Expr]:
    """(L_0, L_m, the window claim's bound on L_m) from (z* + offset, c_{i,0} = 0) at C_c = 0, sigma = 0, exactly
    (sympy, rational; exp stays symbolic). L_t = psi gap + (gamma C_0/2) ||F_nor(z_t)||^2 through the theory's L."""
    P = _steps()
    prob = ExactTwoClients()
    mu = sum(prob.a, Fraction(0)) / prob.n  # f is a quadratic of curvature mean(a): its PL constant
    vals = {S.gamma: sp.Rational(P["gamma"]), S.eta_hat: sp.Rational(P["eta_hat"]), S.eta_a: sp.Rational(P["eta_a"]),
            S.Q: Q, S.m: m, S.L: 1, S.rho: 0, S.mu: sp.Rational(mu), S.sigma2: 0, S.n: prob.n, S.C_0: C_0}
    traj = exact_trajectory("zero", rounds=m, offset=offset)

    def lyap(t: int) -> sp.Expr:
        gap, fnor2 = traj[t]
        return fc.lyapunov.subs({S.gamma: vals[S.gamma], S.C_0: C_0, S.C_c: 0, S.psi_gap: sp.Rational(gap),
                                 S.Fnor2: sp.Rational(fnor2), S.corr_err: 0})

    L0, Lm = lyap(0), lyap(m)
    bound = fc.lyapunov_window_bound.subs({**vals, S.L_t: L0})
    return Fraction(int(sp.fraction(L0)[0]), int(sp.fraction(L0)[1])), Fraction(int(sp.fraction(Lm)[0]), int(sp.fraction(Lm)[1])), bound


def _theorem8_values(EL0: Fraction) -> dict:
    P = _steps()
    prob = ExactTwoClients()
    mu = sum(prob.a, Fraction(0)) / prob.n
    return {S.gamma: sp.Rational(P["gamma"]), S.eta_hat: sp.Rational(P["eta_hat"]), S.eta_a: sp.Rational(P["eta_a"]),
            S.Q: Q, S.m: 1, S.L: 1, S.rho: 0, S.mu: sp.Rational(mu), S.sigma2: 0, S.n: prob.n, S.C_0: 0,
            S.EL_0: sp.Rational(EL0)}


def theorem8_exact(EL0: Fraction, rounds: int = 4) -> tuple[list[Fraction], list[sp.Expr], list[bool]]:
    """From (z*, c_{i,0} = 0): the exact gaps at rounds 1..rounds, Theorem 8's bound there with the given E[L_0]
    (sympy, exact: exp stays symbolic) and whether gap <= bound, decided exactly."""
    gaps = exact_gaps("zero", rounds)[1:]
    vals = _theorem8_values(EL0)
    bounds = [fc.theorem8_bound.subs({**vals, S.T: t}) for t in range(1, rounds + 1)]
    return gaps, bounds, [bool(sp.Rational(g) <= b) for g, b in zip(gaps, bounds, strict=True)]


def strict_form_control() -> Verdict:
    """The psi-gap-only E[L_0] (C_c = 0 in L_0, the former "strictest form") from x* with c_{i,0} = 0: a negative
    control of ``fednmap.theorem8`` that changes one input of the theorem (E[L_0] loses its correction term) and
    is violated at round 1, exactly. (With the term, E[L_0] = 1 here and the bound holds at every round.)"""
    gaps, bounds, ok = theorem8_exact(Fraction(0), rounds=1)
    v = Verdict("fednmap.theorem8", "two clients (a = 1, 1/2), Q = 2, sigma = 0, from (z*, c_i,0 = 0), exact rational",
                float(gaps[0]), float(bounds[0]), float(gaps[0]), float(gaps[0]), "holds" if ok[0] else "violated",
                0.0 if not ok[0] else float("inf"), True,
                {"psi_gap_1": str(gaps[0]), "bound_1": str(bounds[0]), "E[L_0]": 0, "correction_error_0": str(heterogeneity_at_optimum())})
    return control(v, changed="E[L_0]", what="E[L_0] = psi gap only (C_c dropped from L_0) from x* with c_i,0 = 0, exact",
                   before="psi gap + C_c (1/n) sum ||grad f_i - grad f||^2 = 1", after="psi gap = 0", violated_at=1, kind=THEOREM)


def lyapunov_replay(C_0: int) -> Verdict:
    """The PEP's unbounded direction of ``fednmap.lyapunov`` at C_c = 0 as an instance: from (z* + 1e-8, c_{i,0} = 0)
    the uncorrected client drift raises the Lyapunov value in round 1, L_1 > L_0 > 0, while ||F_nor(z_t)|| > 0 at
    t = 0, 1: a point of the PEP's measure with L_0 - L_1 < 0, so (scaling the instance) the PEP's ratio is unbounded
    there, and the window claim L_1 <= (1 - kappa) L_0 fails (exact). C_c = 0 is no Lyapunov weight over the class,
    whatever C_0 (a theorem control of the reconstruction's constants)."""
    L0, L1, bound = window_violation(C_0, m=1)
    traj = exact_trajectory("zero", rounds=1, offset=REPLAY_OFFSET)
    ok = bool(sp.Rational(L1) <= bound)
    v = Verdict("fednmap.lyapunov", f"PEP direction replayed: two clients, (z* + 1e-8, c_i,0 = 0), sigma = 0, C_0 = {C_0}, "
                "C_c = 0, exact", float(L1), float(bound), float(L1), float(L1), "holds" if ok else "violated",
                float(bound) / float(L1), True,
                {"L_0": str(L0), "L_1": str(L1), "window_bound": str(bound), "window_m": 1, "L_1/L_0": float(L1 / L0),
                 "Fnor2_0": float(traj[0][1]), "Fnor2_1": float(traj[1][1]), "offset": str(REPLAY_OFFSET)})
    return control(v, changed="C_c", what=f"(C_0, C_c) = ({C_0}, 0) at the PEP's unbounded direction (L_1 > L_0), exact rational",
                   before="C_c = 1 (recovered by the PEP)", after="C_c = 0", violated_at=1, kind=THEOREM)
