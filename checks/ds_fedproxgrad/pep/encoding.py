"""Performance estimation (PEP) of DS FedProxGrad's one-round descent, Lemma 5.2 (Arif, arXiv 2512.08671).

Problem class (deterministic part: sigma = 0)
    F = f + lambda r, f = (1/N) sum_i f_i; each f_i L_f-smooth (PEPit ``SmoothFunction``; L_f-smooth implies
    L_f-weakly convex, so A1(ii) adds nothing with rho = L_f), r L_r-smooth (``SmoothFunction``).
    Heterogeneity (8) in its homogeneous part (G = 0): (1/N) sum_i ||grad f_i(x)||^2 <= B^2 ||grad f(x)||^2 at the
    round's point x (the only point where the proof uses it). A3 (||grad r|| <= G_r) enters the proof only
    through (13) at x, so G_r is replaced by ||grad r(x)||, the tightest value valid at x.

Algorithm (one round, eqs. (3)-(6))
    y_i = x - eta grad f_i(x) + eta e_i with ||e_i|| <= gamma_r ||grad f_i(x)||        (the relative error (10))
    x+ = (1/N) sum_i y_i - eta lambda grad r(x)                                        (eq. (5), sigma = 0)
    Why not PEPit's ``inexact_proximal_step``: its accuracy criteria (primal-dual gaps relative to the prox
    subproblem) are not (10), which constrains y_i only relative to the gradient step x - eta grad f_i(x); the
    admissible set of (10) is exactly "e_i free with ||e_i||^2 <= gamma_r^2 ||grad f_i(x)||^2", one linear
    constraint on the Gram matrix, so we encode it directly. ``local="exact_prox"`` instead takes the exact
    local prox y_i = prox_{eta f_i}(x) (PEPit ``proximal_step``; needs eta L_f < 1), a narrower class.

Measure, :func:`lemma52_pep`
    maximise  F(x+) - F(x) - Xi_det  subject to  ||grad F(x)||^2 = 1,
    where Xi_det = xi ||grad r(x)||^2 is the deterministic remainder of (22) (G = 0, sigma = 0, G_r^2 ->
    ||grad r(x)||^2), xi = Xi / G_r^2 evaluated by the theory layer. Every term is homogeneous of degree 2
    under f_i -> s^2 f_i(./s), so the value w is the worst ratio and Lemma 5.2's descent
    F(x+) - F(x) <= -eta Phi ||grad F(x)||^2 + Xi holds over the class iff Phi <= -w/eta. The largest Phi the
    class admits is therefore Phi_PEP = -w/eta (:func:`largest_phi`); the paper claims Phi = 1/4 once
    gamma_r <= 1/(sqrt(10) B) and eta <= 1/(6 L_F). (A configuration with grad F(x) = 0 and F(x+) > F(x) + Xi_det
    would be missed by the equality normalisation; :func:`lemma52_margin_pep` checks the descent at a given
    Phi without it, with trace(Gram) <= 1, value 0 iff it holds.)

Absorption threshold, :func:`largest_absorbed_gamma` and :func:`absorbed_gamma_window`
    Phi_PEP decreases as gamma_r grows (the class grows), so the largest gamma_r with Phi_PEP >= 1/4 is found
    by bisection and compared with 1/(sqrt(10) B); an undecided probe narrows nothing (never counted as failing),
    so the result is a window with both ends certified.

Measured (closing report): with ``remainder=False`` (Xi dropped) and lambda > 0 the worst case is unbounded
(SCS) / unsolved (Clarabel): grad f = grad F - lambda grad r is not controlled by grad F, so the G_r part of
Xi is needed; with lambda = 0 no remainder is needed. ``local="exact_prox"`` did not solve (Clarabel fails,
SCS inaccurate) in our runs; the inexact class (10) with gamma_r = L_f eta/(1 - L_f eta) contains it.

Size: the Gram matrix has 3N + 2 leaves (N gradients at x, N errors, N gradients at x+, grad r at x and x+),
8 at N = 2; each certificate takes well under a second.

Reference: Arif, DS FedProxGrad (arXiv 2512.08671) Lemma 5.2, eqs. (10), (16), (20)-(22);
docs/ds-fedproxgrad-notes.md §1.4 (the threshold 1/(sqrt(10) B) is derived there, row (21)); PEPit (Goujaud et al.).
The checks built on this module (``fedbounds check --claim ds.pep``): :mod:`fedbounds.checks.ds_fedproxgrad.pep.family`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fedbounds.checks.pep.certificate import pep_builder
from fedbounds.checks.pep.solve import (
    DEFAULT_ABS_TOL,
    DEFAULT_REL_TOL,
    DEFAULT_SOLVERS,
    Certificate,
    certify,
    check_nonnegative,
    check_positive,
)
from fedbounds.checks.verdicts.threshold import Window

__all__ = [
    "Certifier",
    "PhiResult",
    "absorbed_gamma_window",
    "build_lemma52_pep",
    "largest_absorbed_gamma",
    "largest_phi",
    "lemma52_margin_pep",
    "lemma52_pep",
    "theory_values",
]


_positive, _nonneg = check_positive, check_nonnegative

#: what solves a PEP: a builder (:func:`build_lemma52_pep`) -> its :class:`Certificate`
Certifier = Callable[[Callable[[], Any]], Certificate]


def theory_values(L_f: float, L_r: float, lam: float, B: float, eta: float, gamma_r: float) -> dict[str, float]:
    """The paper's numbers at these parameters, evaluated from the theory layer's sympy (never retyped here).

    ``L_F`` (A1(i)), ``eta_max`` = 1/(6 L_F) (A4(iv)), ``Phi`` = 1/4 (Lemma 5.2), ``Phi_r`` (the proof's
    coefficient before absorption), ``gamma_absorb`` = 1/(sqrt(10) B), ``gamma_absorb_exact`` (the proof's own
    threshold at this eta, ds.absorption's extra 'exact'; nan when 3 L_F eta > 1, where the proof never absorbs),
    ``xi`` = Xi / G_r^2 at G = sigma = 0 (the deterministic remainder per unit ||grad r(x)||^2),
    ``exact_prox_gamma`` = L_f eta/(1 - L_f eta) (inf when L_f eta >= 1: no strongly convex local problem).
    """
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.ds_fedproxgrad import formulas as ds

    base = {"L_f": L_f, "L_r": L_r, "lambda": lam, "lam": lam, "B": B, "eta": eta, "gamma_r": gamma_r}
    L_F = evaluate(ds.L_F_definition, base)
    v = {**base, "L_F": L_F, "G": 0.0, "sigma2": 0.0, "G_r": 1.0}
    return {
        "L_F": L_F,
        "eta_max": evaluate(ds.eta_max_smooth, v),
        "Phi": evaluate(ds.Phi, v),
        "Phi_r": evaluate(ds.Phi_r, v),
        "gamma_absorb": evaluate(ds.absorption_gamma_max, v),
        "gamma_absorb_exact": _real_or_nan(evaluate, ds.absorption_gamma_exact, v),
        "xi": evaluate(ds.Xi, v),
        "exact_prox_gamma": evaluate(ds.exact_prox_gamma, v) if L_f * eta < 1 else math.inf,
    }


def _real_or_nan(evaluate: Callable[..., float], expr: Any, values: dict[str, float]) -> float:
    """``evaluate(expr, values)``, or nan where the expression is not real there (a negative radicand)."""
    try:
        return evaluate(expr, values)
    except TypeError:
        return math.nan


def round_start(problem: Any, L_f: float, L_r: float, N: int) -> tuple[list[Any], Any, Any, Any, list[Any]]:
    """Lemma 5.2's round start in ``problem``: the N smooth f_i and r, x = 0 with F(x) = 0 (translation and constants
    are invariances of the class), r's gradient at x and each f_i's. Shared by the deterministic and the stochastic
    encodings (:mod:`fedbounds.checks.ds_fedproxgrad.spep.encoding`)."""
    from PEPit import Expression, Point
    from PEPit.functions import SmoothFunction

    fs = [problem.declare_function(SmoothFunction, L=L_f, name=f"f{i}") for i in range(N)]
    r = problem.declare_function(SmoothFunction, L=L_r, name="r")
    gr = Point()
    x = 0 * gr
    r0 = Expression()
    r.add_point((x, gr, r0))
    problem.add_constraint(r0 == 0)
    grads = []
    for f in fs:
        g, v = Point(), Expression()
        f.add_point((x, g, v))
        problem.add_constraint(v == 0)
        grads.append(g)
    return fs, r, x, gr, grads


def _check(L_f: float, L_r: float, lam: float, B: float | None, eta: float, gamma_r: float, N: int,
           local: str) -> tuple[float, float, float, float | None, float, float, int]:
    L_f, L_r, lam = _positive("L_f", L_f), _positive("L_r", L_r), _nonneg("lam", lam)
    if B is not None:
        B = _positive("B", B)
    eta, gamma_r = _positive("eta", eta), _nonneg("gamma_r", gamma_r)
    if isinstance(N, bool) or int(N) != N or N < 1:
        raise ValueError(f"N must be an integer >= 1, got {N!r}")
    if local not in ("inexact", "exact_prox"):
        raise ValueError(f"local must be 'inexact' (the relative error (10)) or 'exact_prox', got {local!r}")
    if local == "exact_prox" and eta * L_f >= 1:
        raise ValueError(f"local='exact_prox' needs eta L_f < 1 (a strongly convex local problem), got {eta * L_f}")
    return L_f, L_r, lam, B, eta, gamma_r, int(N)


@pep_builder("ds_fedproxgrad", "ds.pep: Lemma 5.2 descent", 1)
def build_lemma52_pep(
    L_f: float, L_r: float, lam: float, B: float | None, eta: float, gamma_r: float, xi: float,
    N: int = 2, local: str = "inexact", Phi: float | None = None,
) -> Callable[[], tuple[Any, dict[str, Any]]]:
    """A builder (for :func:`fedbounds.checks.pep.solve.certify`) of the Lemma 5.2 PEP (module docstring).

    ``Phi`` None: ratio form (maximise F(x+) - F(x) - xi ||grad r(x)||^2 s.t. ||grad F(x)||^2 = 1).
    ``Phi`` given: margin form (maximise F(x+) - F(x) + eta Phi ||grad F(x)||^2 - xi ||grad r(x)||^2 s.t.
    trace(Gram) <= 1; value 0 iff the descent with this Phi holds). ``B`` None drops the dissimilarity (8).
    """
    L_f, L_r, lam, B, eta, gamma_r, N = _check(L_f, L_r, lam, B, eta, gamma_r, N, local)
    xi = _nonneg("xi", xi)

    def build() -> tuple[Any, dict[str, Any]]:
        from PEPit import PEP, Point
        from PEPit.primitive_steps import proximal_step

        problem = PEP()
        fs, r, x, gr, grads = round_start(problem, L_f, L_r, N)
        grad_f = sum(grads[1:], grads[0]) / N
        grad_F = grad_f + lam * gr
        ys = []
        for i, f in enumerate(fs):
            if local == "inexact" and gamma_r == 0:
                ys.append(x - eta * grads[i])  # (10) with gamma_r = 0 forces e_i = 0 (no degenerate leaf)
            elif local == "inexact":
                e = Point()
                problem.add_constraint(e**2 <= gamma_r**2 * grads[i] ** 2)
                ys.append(x - eta * grads[i] + eta * e)
            else:
                y, _, _ = proximal_step(x, f, eta)
                ys.append(y)
        if B is not None:
            problem.add_constraint(sum((g**2 for g in grads[1:]), grads[0] ** 2) / N <= B**2 * grad_f**2)
        x_plus = sum(ys[1:], ys[0]) / N - eta * lam * gr
        F_plus = sum((f.value(x_plus) for f in fs[1:]), fs[0].value(x_plus)) / N + lam * r.value(x_plus)
        increase = F_plus - xi * gr**2
        if Phi is None:
            problem.add_constraint(grad_F**2 == 1)
            problem.set_performance_metric(increase)
        else:
            leaves = list(Point.list_of_leaf_points)
            problem.add_constraint(sum((p**2 for p in leaves[1:]), leaves[0] ** 2) <= 1)
            problem.set_performance_metric(increase + eta * Phi * grad_F**2)
        return problem, {"x_plus": x_plus, "grad_F": grad_F, "grad_r": gr, "F_plus": F_plus}

    return build


def lemma52_pep(
    L_f: float, L_r: float, lam: float, B: float | None, eta: float, gamma_r: float, xi: float,
    N: int = 2, local: str = "inexact", solvers: Sequence[str] = DEFAULT_SOLVERS, rel_tol: float = DEFAULT_REL_TOL,
    certifier: Certifier | None = None,
) -> Certificate:
    """Worst w = max F(x+) - F(x) - xi ||grad r(x)||^2 over ||grad F(x)||^2 = 1; Phi_PEP = -w/eta.

    ``xi`` is the deterministic remainder coefficient (``theory_values(...)["xi"]``; 0 drops the remainder).
    ``certifier`` (a builder -> :class:`Certificate`, e.g. one that retries SCS with other settings) replaces
    ``certify(build, solvers, rel_tol)`` when given.
    """
    build = build_lemma52_pep(L_f, L_r, lam, B, eta, gamma_r, xi, N, local)
    if certifier is not None:
        return certifier(build)
    return certify(build, solvers=solvers, rel_tol=rel_tol)


def lemma52_margin_pep(
    L_f: float, L_r: float, lam: float, B: float | None, eta: float, gamma_r: float, xi: float, Phi: float,
    N: int = 2, local: str = "inexact", solvers: Sequence[str] = DEFAULT_SOLVERS, rel_tol: float = DEFAULT_REL_TOL,
    abs_tol: float = DEFAULT_ABS_TOL,
) -> Certificate:
    """The descent at a given ``Phi`` in margin form: value 0 (within ``abs_tol``) iff it holds over the class."""
    Phi = _nonneg("Phi", Phi)
    return certify(build_lemma52_pep(L_f, L_r, lam, B, eta, gamma_r, xi, N, local, Phi), solvers=solvers,
                   rel_tol=rel_tol, abs_tol=abs_tol)


@dataclass(frozen=True)
class PhiResult:
    """``Phi`` = -w/eta (None unless certified; -inf when unbounded), ``Phi_paper`` (1/4), the proof's
    ``Phi_r`` before absorption, and the certificate."""

    eta: float
    gamma_r: float
    Phi: float | None
    Phi_paper: float
    Phi_r: float
    certificate: Certificate


def largest_phi(
    L_f: float, L_r: float, lam: float, B: float | None, eta: float, gamma_r: float, N: int = 2,
    local: str = "inexact", remainder: bool = True, solvers: Sequence[str] = DEFAULT_SOLVERS,
    rel_tol: float = DEFAULT_REL_TOL, certifier: Certifier | None = None,
) -> PhiResult:
    """The largest Phi for which Lemma 5.2's deterministic descent holds over the class, beside the paper's.

    ``remainder`` False drops Xi (then the descent must hold with no additive term).
    """
    tv = theory_values(L_f, L_r, lam, B if B is not None else 1.0, eta, gamma_r)
    cert = lemma52_pep(L_f, L_r, lam, B, eta, gamma_r, tv["xi"] if remainder else 0.0, N, local, solvers, rel_tol, certifier)
    if cert.certified and cert.value is not None:
        phi: float | None = -cert.value / eta
    elif cert.unbounded:
        phi = -math.inf
    else:
        phi = None
    return PhiResult(eta, gamma_r, phi, tv["Phi"], tv["Phi_r"], cert)


def absorbed_gamma_window(
    L_f: float, L_r: float, lam: float, B: float, eta: float, N: int = 2, gamma_max: float = 4.0,
    tol: float = 1e-3, remainder: bool = True, solvers: Sequence[str] = DEFAULT_SOLVERS,
    rel_tol: float = DEFAULT_REL_TOL, certifier: Certifier | None = None,
) -> tuple[Window, float]:
    """Where the largest gamma_r in [0, gamma_max] with certified Phi_PEP >= Phi_paper (1/4) lies: a window.

    A probe *meets* when Phi_PEP is certified >= 1/4, *fails* when it is certified < 1/4 (or the worst case is
    unbounded), and is *unknown* otherwise; bisection on [0, gamma_max] to ``tol``
    (:func:`fedbounds.checks.verdicts.threshold.largest_meeting`). An unknown probe narrows nothing: the window's
    ``low`` is the largest certified-meeting gamma_r, its ``high`` the smallest certified-failing one above it (None
    when none was certified), and ``unknown`` lists the undecided probes. Returns the window and
    1/(sqrt(10) B) from the theory layer.
    """
    from fedbounds.checks.verdicts.threshold import FAILS, MEETS, UNKNOWN, largest_meeting

    def probe(g: float) -> str:
        res = largest_phi(L_f, L_r, lam, B, eta, g, N, "inexact", remainder, solvers, rel_tol, certifier)
        if res.Phi is None:
            return UNKNOWN
        return MEETS if res.Phi >= res.Phi_paper else FAILS

    thr = theory_values(L_f, L_r, lam, B, eta, 0.0)["gamma_absorb"]
    window = largest_meeting(probe, 0.0, gamma_max, rel_tol=0.0, abs_tol=tol, bisect_from_start=True)
    return window, thr


def largest_absorbed_gamma(
    L_f: float, L_r: float, lam: float, B: float, eta: float, N: int = 2, gamma_max: float = 4.0,
    tol: float = 1e-3, remainder: bool = True, solvers: Sequence[str] = DEFAULT_SOLVERS,
    rel_tol: float = DEFAULT_REL_TOL, certifier: Certifier | None = None,
) -> tuple[float | None, float, int]:
    """Largest gamma_r in [0, gamma_max] with certified Phi_PEP >= Phi_paper (1/4), by bisection to ``tol``.

    Returns (gamma, 1/(sqrt(10) B) from the theory layer, number of solves): gamma is the lower end of
    :func:`absorbed_gamma_window` (a certified lower bound on the threshold); None when gamma_r = 0 is not
    certified, ``gamma_max`` when it never fails. An undecided probe is not counted as failing (it once stopped the
    search at 1.70 instead of about 2.0 x 1/(sqrt(10) B) at eta = 1/(12 L_F), N = 2, where SCS stalls at
    ``optimal_inaccurate``); use :func:`absorbed_gamma_window` for both ends and the undecided probes.
    ``certifier``: as in :func:`lemma52_pep` (e.g. one that retries SCS with other settings).
    """
    window, thr = absorbed_gamma_window(L_f, L_r, lam, B, eta, N, gamma_max, tol, remainder, solvers, rel_tol, certifier)
    return window.low, thr, len(window.probes)
