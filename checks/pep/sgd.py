"""The validation example of the stochastic PEP: one SGD step on an L-smooth, possibly nonconvex f.

Problem: f L-smooth (PEPit ``SmoothFunction``), x_+ = x - eta (grad f(x) + e), E[e | x] = 0, E||e||^2 <= sigma^2.
Measure: E f(x_+) - f(x) + eta (1 - L eta/2) ||grad f(x)||^2, normalised by sigma^2 = 1.
Guarantee (the descent lemma): f(x_+) <= f(x) + <grad f(x), x_+ - x> + (L/2)||x_+ - x||^2; in expectation, with
E<grad f(x), e> = 0, the measure is at most (L eta^2/2) sigma^2. It is tight: on f = (L/2)||x||^2 with e along any
direction, every inequality used is an equality. So the sigma^2 coefficient is exactly L eta^2/2
(:func:`sgd_noise_coefficient`), the expected-Gram PEP (:func:`sgd_step_pep`) must return it, and so must the
two-scenario lower bound (e = +-u, :func:`sgd_step_scenario_pep`). Without the orthogonality constraint the cross
term <grad f(x), e> is free and the worst case is unbounded (the negative control).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fedbounds.checks.pep.solve import DEFAULT_SOLVERS, Certificate, certify, check_positive
from fedbounds.checks.pep.stochastic import NoiseLedger, sign_patterns

__all__ = ["sgd_noise_coefficient", "sgd_step_pep", "sgd_step_scenario_pep"]


def sgd_noise_coefficient(L: float, eta: float) -> float:
    """The descent lemma's sigma^2 coefficient L eta^2/2 (what both PEPs must return)."""
    return check_positive("L", L) * check_positive("eta", eta) ** 2 / 2


def sgd_step_pep(L: float, eta: float, orthogonality: bool = True, solvers: Sequence[str] = DEFAULT_SOLVERS) -> Certificate:
    """Expected-Gram PEP of one SGD step (module docstring); ``orthogonality=False`` is the negative control."""
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

    return certify(build, solvers=solvers)


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
        return problem, {"z0": x0, "u0": u, "f0": f}  # for a replay (fedbounds.checks.fednmap.spep_replay)

    return certify(build, solvers=solvers)
