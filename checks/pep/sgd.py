"""The validation example of the stochastic PEP: one SGD step on an L-smooth, possibly nonconvex f.

Problem: f L-smooth (PEPit ``SmoothFunction``), x_+ = x - eta (grad f(x) + e), E[e | x] = 0, E||e||^2 <= sigma^2.
Measure: E f(x_+) - f(x) + eta (1 - L eta/2) ||grad f(x)||^2, normalised by sigma^2 = 1.
Guarantee (the descent lemma): f(x_+) <= f(x) + <grad f(x), x_+ - x> + (L/2)||x_+ - x||^2; in expectation, with
E<grad f(x), e> = 0, the measure is at most (L eta^2/2) sigma^2. It is tight: on f = (L/2)||x||^2 with e along any
direction, every inequality used is an equality. So the sigma^2 coefficient is exactly L eta^2/2
(:func:`sgd_noise_coefficient`), the expected-Gram PEP (:func:`sgd_step_pep`) must return it, and so must the
two-scenario lower bound (e = +-u, :func:`sgd_step_scenario_pep`). Without the orthogonality constraint the cross
term <grad f(x), e> is free and the worst case is unbounded (the negative control).

The comparison with PEPit's own stochastic example (``wc_sgd``, finite-sum SGD on L-smooth mu-strongly convex
f_1..f_N, measure E||x_1 - x_*||^2, ||x_0 - x_*|| <= R, variance at x_* at most v^2): :func:`sgd_distance_pep` is the
expected-Gram PEP of the same step and measure under *our* noise model (one f, E[e | x_0] = 0, E||e||^2 <= v^2 at the
query point). By orthogonality E||x_1 - x_*||^2 = ||x_0 - x_* - gamma grad f(x_0)||^2 + gamma^2 E||e||^2, so its value
is :func:`sgd_distance_bound`, max(1 - gamma mu, gamma L - 1)^2 R^2 + gamma^2 v^2. PEPit's value (its printed
guarantee, from PESTO) is (gamma (L - mu) R/2 + sqrt((1 - gamma (L + mu)/2)^2 R^2 + gamma^2 v^2))^2, larger: its noise
grad f_i(x_0) - grad F(x_0) depends on x_0 and its variance is bounded at x_* only. The two coincide where the noise
models do: v = 0 (PEPit's ``wc_sgd_overparametrized``), R = 0, and mu = L (then every grad f_i - grad F is constant,
additive noise of variance exactly v^2; PEPit's strongly convex class divides by 1 - mu/L and cannot be run there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fedbounds.checks.pep.certificate import pep_builder
from fedbounds.checks.pep.solve import DEFAULT_SOLVERS, Certificate, certify, check_nonnegative, check_positive
from fedbounds.checks.pep.stochastic import NoiseLedger, sign_patterns

__all__ = ["build_sgd_step_pep", "sgd_distance_bound", "sgd_distance_pep", "sgd_noise_coefficient", "sgd_step_pep", "sgd_step_scenario_pep"]


def sgd_noise_coefficient(L: float, eta: float) -> float:
    """The descent lemma's sigma^2 coefficient L eta^2/2 (what both PEPs must return)."""
    return check_positive("L", L) * check_positive("eta", eta) ** 2 / 2


@pep_builder("fednmap", "fednmap.spep: validation, one SGD step", 1)
def build_sgd_step_pep(L: float, eta: float, orthogonality: bool = True) -> Callable[[], Any]:
    """A builder of the expected-Gram PEP of one SGD step (module docstring); ``orthogonality=False`` is the negative
    control."""
    L, eta = check_positive("L", L), check_positive("eta", eta)

    def build() -> Any:
        from PEPit import PEP
        from PEPit.functions import SmoothFunction

        problem = PEP()
        f = problem.declare_function(SmoothFunction, L=L)
        ledger = NoiseLedger()
        x0 = problem.set_initial_point()
        g0, f0 = f.oracle(x0)
        e = ledger.draw(tag="e")
        x1 = x0 - eta * (g0 + e)
        ledger.apply(problem, sigma2=1.0, orthogonality=orthogonality)
        problem.set_performance_metric(f(x1) - f0 + eta * (1 - L * eta / 2) * g0**2)
        return problem

    return build


def sgd_step_pep(L: float, eta: float, orthogonality: bool = True, solvers: Sequence[str] = DEFAULT_SOLVERS) -> Certificate:
    """Expected-Gram PEP of one SGD step (module docstring); ``orthogonality=False`` is the negative control."""
    return certify(build_sgd_step_pep(L, eta, orthogonality), solvers=solvers)


def sgd_step_scenario_pep(L: float, eta: float, solvers: Sequence[str] = DEFAULT_SOLVERS) -> Certificate:
    """The two-scenario lower bound: e = s u, s = +-1 with probability 1/2, ||u||^2 <= 1, one f for both. Its builder
    names the start ``z0``, the direction ``u0`` and the function ``f0`` (evaluated in each run's ``evaluations``)."""
    L, eta = check_positive("L", L), check_positive("eta", eta)

    def build() -> Any:
        from PEPit import PEP, Point
        from PEPit.functions import SmoothFunction

        problem = PEP()
        f = problem.declare_function(SmoothFunction, L=L)
        x0 = problem.set_initial_point()
        g0, f0 = f.oracle(x0)
        u = Point()
        problem.add_constraint(u**2 <= 1.0)
        pats = sign_patterns(1)
        mean_f1 = sum(f(x0 - eta * (g0 + s * u)) for (s,) in pats) / len(pats)
        problem.set_performance_metric(mean_f1 - f0 + eta * (1 - L * eta / 2) * g0**2)
        return problem, {"z0": x0, "u0": u, "f0": f}  # for a replay (fedbounds.checks.fednmap.spep.replay)

    return certify(build, solvers=solvers)


def sgd_distance_bound(L: float, mu: float, gamma: float, v: float, R: float) -> float:
    """max(1 - gamma mu, gamma L - 1)^2 R^2 + gamma^2 v^2: one SGD step's E||x_1 - x_*||^2 under additive noise
    (module docstring); the gradient step's contraction factor (Taylor, Hendrickx, Glineur 2018) plus the noise."""
    L, gamma = check_positive("L", L), check_positive("gamma", gamma)
    mu, v, R = (check_nonnegative(k, x) for k, x in (("mu", mu), ("v", v), ("R", R)))
    return max(1 - gamma * mu, gamma * L - 1) ** 2 * R**2 + gamma**2 * v**2


def sgd_distance_pep(L: float, mu: float, gamma: float, v: float, R: float, orthogonality: bool = True,
                     solvers: Sequence[str] = DEFAULT_SOLVERS) -> Certificate:
    """Expected-Gram PEP of E||x_1 - x_*||^2 for x_1 = x_0 - gamma (grad f(x_0) + e), f L-smooth mu-strongly convex
    (mu < L), ||x_0 - x_*|| <= R, E||e||^2 <= v^2 (module docstring); its value must be :func:`sgd_distance_bound`."""
    L, gamma = check_positive("L", L), check_positive("gamma", gamma)
    mu, v, R = (check_nonnegative(k, x) for k, x in (("mu", mu), ("v", v), ("R", R)))
    if not mu < L:
        raise ValueError(f"mu must be < L = {L} (PEPit's strongly convex class), got {mu}")

    def build() -> Any:
        from PEPit import PEP
        from PEPit.functions import SmoothStronglyConvexFunction

        problem = PEP()
        f = problem.declare_function(SmoothStronglyConvexFunction, L=L, mu=mu)
        xs = f.stationary_point()
        x0 = problem.set_initial_point()
        problem.set_initial_condition((x0 - xs) ** 2 <= R**2)
        ledger = NoiseLedger()
        g0 = f.gradient(x0)
        e = ledger.draw(tag="e")
        ledger.apply(problem, sigma2=v**2, orthogonality=orthogonality)
        problem.set_performance_metric((x0 - gamma * (g0 + e) - xs) ** 2)
        return problem

    return certify(build, solvers=solvers)
