"""Performance estimation (PEP) of FedNMap's deterministic rounds (Huang, Pu, Johansson, arXiv 2602.03357).

Problem class
    psi = f + phi, f = (1/n) sum_i f_i, each f_i L-smooth and possibly nonconvex (PEPit ``SmoothFunction``);
    phi rho-weakly convex, written phi(x) = h(x) - (rho/2)||x||^2 with h convex (PEPit ``ConvexFunction``).
    This is exactly the class of Assumption 3 (phi is rho-weakly convex iff phi + (rho/2)||.||^2 is convex), and
    its prox is a prox of h (checked in the tests):

        prox_{gamma phi}(z) = prox_{gamma' h}(z / (1 - gamma rho)),   gamma' = gamma / (1 - gamma rho),

    with phi's subgradient at x = prox_{gamma phi}(z) equal to (z - x)/gamma = (h's subgradient) - rho x.
    Lower boundedness of phi and psi is not imposed (it is implied wherever the measure is finite).

Algorithm (Algorithm 1 as reconstructed, ``algorithms/fednmap.py``; deterministic gradients)
    x_t = prox(z_t), v_t = (z_t - x_t)/gamma (frozen in the round); client i: z_i^0 = z_t,
    z_i^{l+1} = z_i^l - eta_a (grad f_i(x_i^l) + v_t + c_i), with x_i^l = prox(z_i^l) (variant "A", default)
    or x_i^l = z_i^l - gamma v_t (variant "B"); y_i = (z_t - z_i^Q)/(eta_a Q); z_{t+1} = z_t - eta_s eta_a Q ybar;
    c_i <- c_i - y_i + ybar, c_{i,0} = 0. eta_hat = eta_s eta_a Q.

Lyapunov function (reconstruction, section 4 [I]; C_0 and C_c are the constants the paper lost)
    Lyap(z, c) = psi(prox z) + (gamma C_0/2) ||F_nor(z)||^2 + C_c (1/n) sum_i ||c_i + grad f_i(x) - grad f(x)||^2,
    F_nor(z) = grad f(prox z) + (z - prox z)/gamma.

Measure (a), :func:`lyapunov_pep`
    maximise  min_{t<T} ||F_nor(z_t)||^2   (``measure="min"``; ``"mean"``: (1/T) sum_t)
    subject to  Lyap_0 - Lyap_T <= 1,  over every instance of the class and every z_0.
    Normalisation: the class is invariant under f_i -> s^2 f_i(./s), h -> s^2 h(./s), z -> s z, which multiplies
    every term of Lyap and every ||F_nor||^2 by s^2. So the worst ratio sup ||F_nor||^2 / (Lyap_0 - Lyap_T) equals
    the value w of this PEP, and w = +inf exactly when some instance has Lyap_0 - Lyap_T <= 0 with F_nor != 0
    (the Lyapunov function does not decrease). Nothing else is fixed (no bound on z_0 or psi gap).
    Guarantee checked: the reconstructed per-round descent Lyap_{t+1} <= Lyap_t - d ||F_nor(z_t)||^2 with
    d = eta_hat/9 telescopes to Lyap_0 - Lyap_T >= d T min_t ||F_nor(z_t)||^2, i.e. w <= 1/(d T). The ratio
    w d T <= 1 is therefore necessary for the descent (over T rounds from c_0 = 0); at T = 1 with
    ``initial_correction="free"`` (any c_i with sum_i c_i = 0) it is the per-round descent from an arbitrary
    correction state, a superset of the reachable ones.
    :func:`smallest_constants` searches, for each C_c of a grid, the smallest C_0 with w d T <= 1 (the recovered,
    *reconstructed* constants), and :func:`largest_certified_step` the largest eta_hat (eta_a in fixed ratio)
    for which some (C_0, C_c) of a grid meets it.

Measure (b), :func:`pl_contraction_pep`
    One round from an arbitrary state (z_0, c_i with sum 0), Lyapunov function taken relative to psi* (psi
    replaced by psi - psi*): maximise Lyap_1 - Lyap_0 subject to Lyap_0 = 1. The value is q - 1, q the worst
    one-round contraction factor (the difference form keeps the small exponent 1 - q to solver accuracy,
    where q itself would lose it in the leading 0.999...). Theorem 8's deterministic part needs
    1 - q >= 2 eta_hat mu/(9 (1 + gamma mu C_0)); the certified exponent is -value.
    Class used for the PL condition: PEPit has no composite proximal-PL class (its
    ``SmoothQuadraticLojasiewiczFunctionCheap/Expensive`` are for one smooth function with nothing added, and
    neither is an interpolation class). We add the proximal-PL inequality (2) of the paper as constraints, in the
    form of ``SmoothQuadraticLojasiewiczFunctionCheap``'s first condition but for psi, at the points the round
    evaluates: psi(x_t) - psi* <= ||F_nor(z_t)||^2/(2 mu) for t = 0, 1 (valid since F_nor(z) is in d psi(prox z),
    so dist(0, d psi(x_t)) <= ||F_nor(z_t)||), and psi(x_t) >= psi*; psi* is psi at a stationary point x* (grad
    f(x*) + s* = 0, s* in d phi(x*)), which PL makes a global minimiser. These are necessary conditions only, so
    q is an upper bound on the true worst contraction over the proximal-PL class (a valid certificate, perhaps
    not tight).

Size. Leaves of the Gram matrix (:func:`gram_dimension`): n at the normal-form start, 1 + n per round at
z_{t+1}, 2 per client and local step l >= 1 (variant A): n + T (1 + n) + 2 T n (Q - 1), i.e. 16 at
(n, Q, T) = (2, 2, 2) and 51 at (3, 3, 3). Lean formulation: the first point is put in a normal form
(x_0 = 0, grad f(x_0) = 0, f_i(x_0) = h(x_0) = 0; three invariances of the class and the algorithm, see
``_Round.start``) and new (sub)gradients are leaves in a difference basis (``_Round.__init__``); both only
remove or re-parametrise directions of the SDP, never instances. Client symmetry: the SDP is convex and
invariant under permuting clients, so a client-symmetric optimum exists. ``symmetric=True`` solves the block
form of :mod:`fedbounds.checks.pep.symmetric` (PEPit has no symmetry reduction): two blocks whose sizes do
not depend on n, 19 and 16 at Q = T = 3 instead of one 51 x 51 matrix at n = 3, and n-fold fewer rows.
Its leaves must be client-symmetric, so each client's local prox subgradients are increments of the round's
shared one (the full form chains them through the clients, an equivalent basis for the full SDP but not a
symmetric one: measured 1.2% too low at (2, 3, 2) before this was fixed). Measured: the block form reproduces the
full SDP's value to 1e-6 wherever both certify, and the worst case is the n = 1 value (identical clients) at
every (n, Q, T) we ran, n up to 6: the worst case has D = A - B = 0.

Numerics (measured; docs/fednmap-reconstruction.md §10). At Theorem 5's printed steps (eta_hat L ~ 2e-3) these
SDPs are badly conditioned, and whether a solver reports ``optimal`` depends on the scale of the budget: at one
budget SCS says ``unbounded_inaccurate`` where at 100 times it is ``optimal`` and agrees with Clarabel.
:func:`descent_check` therefore retries at budgets 1, 10, 100 and 1000 (exact by homogeneity). With that, 20 of the
24 points of the committed grid certify, among them every Q = 1 point at the printed steps; the Q = 2 points at the
printed steps stay ``inconclusive``, as they must when no solver converges. The margin form
(``build_lyapunov_pep(margin_coef=...)``: compact, value 0 when the claim holds) solves at n = Q = T = 1 only.
Measure (b) at the printed steps (contraction of order 1e-4) is below SCS's accuracy: inconclusive.

Reference: PEP: Drori and Teboulle (2014), Taylor, Hendrickx, Glineur (2017); PEPit (Goujaud et al. 2024);
normal map: Qiu, Milzarek et al. (2023); the algorithm: docs/fednmap-reconstruction.md §2 and §4; the results: §10.
Parameters (L, rho, gamma, eta_a, eta_s, the descent coefficient d, mu) are passed in as numbers; the paper's
values come from the theory layer through :func:`theorem5_steps`, :func:`descent_coefficient` and
:func:`theorem8_exponent` (``fedbounds.theory.fednmap.formulas``), never retyped here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from fedbounds.checks.pep.certificate import pep_builder
from fedbounds.checks.pep.solve import DEFAULT_REL_TOL, DEFAULT_SOLVERS, Certificate, certify, check_nonnegative, check_positive

__all__ = [
    "ConstantsResult",
    "StepResult",
    "build_lyapunov_pep",
    "build_pl_contraction_pep",
    "descent_check",
    "descent_coefficient",
    "descent_proof",
    "descent_ratio",
    "gram_dimension",
    "largest_certified_step",
    "lyapunov_pep",
    "pl_contraction_pep",
    "prox_weakly_convex",
    "smallest_constants",
    "theorem5_steps",
    "theorem8_exponent",
]


# --------------------------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------------------------
_positive, _nonneg = check_positive, check_nonnegative


def _int(name: str, value: int, low: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _check(L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, T: int, variant: str,
           initial_correction: str) -> tuple[float, float, float, float, float, int, int, int]:
    L, rho, gamma = _positive("L", L), _nonneg("rho", rho), _positive("gamma", gamma)
    if gamma * rho >= 1:
        raise ValueError(f"gamma must be < 1/rho = {1 / rho:.6g} (prox of a rho-weakly convex phi), got {gamma}")
    eta_a, eta_s = _positive("eta_a", eta_a), _positive("eta_s", eta_s)
    n, Q, T = _int("n", n, 1), _int("Q", Q, 1), _int("T", T, 1)
    if variant not in ("A", "B"):
        raise ValueError(f"variant must be 'A' (gradient at prox(z_i)) or 'B' (shifted point), got {variant!r}")
    if initial_correction not in ("zero", "free"):
        raise ValueError(f"initial_correction must be 'zero' (c_i,0 = 0) or 'free' (any, sum 0), got {initial_correction!r}")
    return L, rho, gamma, eta_a, eta_s, n, Q, T


# --------------------------------------------------------------------------------------------------------------
# the paper's numbers, evaluated from the theory layer (each formula lives once, as sympy, in fedbounds.theory)
# --------------------------------------------------------------------------------------------------------------
def theorem5_steps(L: float, rho: float, Q: int, m: int = 1, gamma: float | None = None) -> dict[str, float]:
    """Theorem 5's printed step bounds at (L, rho, Q, m): ``gamma`` (its maximum unless given), ``eta_hat``,
    ``eta_a`` (their maxima), ``eta_s`` = eta_hat/(eta_a Q), and ``descent_coef`` = eta_hat/9 at that eta_hat."""
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.fednmap import formulas as fm

    v: dict[str, float] = {"L": L, "rho": rho, "Q": Q, "m": m}
    v["gamma"] = evaluate(fm.theorem5_gamma_max, v) if gamma is None else float(gamma)
    eta_hat = evaluate(fm.theorem5_eta_hat_max, v)
    eta_a = evaluate(fm.theorem5_eta_a_max, v)
    return {"gamma": v["gamma"], "eta_hat": eta_hat, "eta_a": eta_a, "eta_s": eta_hat / (eta_a * Q),
            "descent_coef": descent_coefficient(eta_hat)}


def descent_coefficient(eta_hat: float) -> float:
    """d in the reconstructed per-round descent Lyap_{t+1} <= Lyap_t - d ||F_nor(z_t)||^2 (theory: eta_hat/9)."""
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.core.symbols import Fnor2
    from fedbounds.theory.fednmap import formulas as fm

    return evaluate(fm.lyapunov_descent_per_round, {"eta_hat": eta_hat, Fnor2: 1.0})


def theorem8_exponent(eta_hat: float, mu: float, gamma: float, C_0: float) -> float:
    """Theorem 8's per-round exponent 2 eta_hat mu / (9 (1 + gamma mu C_0)), from the theory layer."""
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.fednmap import formulas as fm

    return evaluate(fm.theorem8_rate_exponent, {"eta_hat": eta_hat, "mu": mu, "gamma": gamma, "C_0": C_0})


# --------------------------------------------------------------------------------------------------------------
# the weakly convex regulariser through a convex one
# --------------------------------------------------------------------------------------------------------------
def prox_weakly_convex(z: Any, h: Any, gamma: float, rho: float) -> tuple[Any, Any, Any]:
    """prox_{gamma phi}(z) for phi = h - (rho/2)||.||^2, h a PEPit convex function; needs gamma rho < 1.

    Returns ``(x, s, phi_x)``: the prox point, phi's subgradient s = (z - x)/gamma at x (= h's subgradient
    minus rho x), and phi(x) = h(x) - (rho/2)||x||^2, via prox_{gamma' h}(z/(1 - gamma rho)), gamma' = gamma/(1 - gamma rho).
    """
    from PEPit.primitive_steps import proximal_step

    a = 1.0 - gamma * rho
    x, gh, hx = proximal_step(z / a, h, gamma / a)
    return x, gh - rho * x, hx - (rho / 2) * x**2


def _basis_scale(L: float, gamma: float, eta_a: float, eta_s: float, Q: int) -> float:
    """Typical size of a (sub)gradient increment in one round, eta_hat (L + 1/gamma) |F_nor|, capped at 1."""
    return min(1.0, eta_s * eta_a * Q * (L + 1.0 / gamma))


class _Round:
    """Building blocks shared by the PEPs: prox, psi, F_nor and the correction error at a global point."""

    def __init__(self, problem: Any, fs: list[Any], h: Any, gamma: float, rho: float, scale: float,
                 labels: Any = None) -> None:
        self.problem, self.fs, self.h, self.gamma, self.rho = problem, fs, h, gamma, rho
        # labels (fedbounds.checks.pep.symmetric.Labels): whose each leaf is, for the client-symmetric solve
        self.labels, self.owner = labels, None
        self.n = len(fs)
        # difference basis: each new (sub)gradient is the previous one of the same function plus scale * (new
        # leaf). An invertible triangular change of the Gram basis, so the same SDP; but the leaves are now the
        # O(step) increments, not O(1) vectors that nearly cancel, which the solvers need at small steps.
        self.scale = scale
        self.h_ref: Any = None
        self.f_ref: list[Any] = []

    def _prox(self, z: Any) -> tuple[Any, Any, Any]:
        """prox_weakly_convex(z, h, gamma, rho) written in the difference basis."""
        from PEPit import Expression, Point

        a = 1.0 - self.gamma * self.rho
        gh = self.h_ref + self.scale * self._leaf(Point(), self.owner)
        x = z / a - (self.gamma / a) * gh
        hx = self._value(Expression(), self.owner)
        self.h.add_point((x, gh, hx))
        self.h_ref = gh
        return x, gh - self.rho * x, hx - (self.rho / 2) * x**2

    def _grad(self, i: int, x: Any) -> tuple[Any, Any]:
        from PEPit import Expression, Point

        g = self.f_ref[i] + self.scale * self._leaf(Point(), i)
        fv = self._value(Expression(), i)
        self.fs[i].add_point((x, g, fv))
        self.f_ref[i] = g
        return g, fv

    def _leaf(self, p: Any, owner: int | None) -> Any:
        return p if self.labels is None else self.labels.point(p, owner)

    def _value(self, e: Any, owner: int | None) -> Any:
        return e if self.labels is None else self.labels.value(e, owner)

    def start(self) -> dict[str, Any]:
        """The first point, in normal form: x_0 = 0, grad f(x_0) = 0, f_i(x_0) = 0, h(x_0) = 0.

        No instance is lost. The class and the algorithm are invariant under (i) translation (f_i(. + a),
        phi(. + a), z - a); (ii) adding constants to each f_i and to h; (iii) f_i + <a, .>, h - <a, .>,
        z - gamma a, which leaves psi, every x_t, F_nor(z_t) and c_{i,t} unchanged (prox_{gamma(phi - <a,.>)}(w) =
        prox_{gamma phi}(w + gamma a)). Each invariance is a direction in which the SDP's feasible set is
        unbounded while nothing measured changes; fixing them makes the SDP far better conditioned (without
        it both solvers fail at Theorem 5's small steps). Leaves: h's subgradient g at 0 (= v_0 = F_nor(z_0)),
        and n - 1 gradients (the last is minus their sum); z_0 = gamma g. With labels (the client-symmetric
        solve), n gradient leaves instead, one per client, in a slot marked zero-mean (the block form imposes
        their sum = 0 by dropping that slot's mean mode).
        """
        from PEPit import Expression, Point

        g = self._leaf(Point(), None)
        x = 0 * g
        h0 = self._value(Expression(), None)
        self.h.add_point((x, g, h0))
        self.problem.add_constraint(h0 == 0)
        if self.labels is None:
            free = [Point() for _ in range(self.n - 1)]
            grads = [*free, -sum(free[1:], free[0]) if free else 0 * g]
        else:
            grads = [self._leaf(Point(), i) for i in range(self.n)]
            self.labels.zero_mean.add(self.labels.points[grads[0]][2])
        for i, (f, gi) in enumerate(zip(self.fs, grads, strict=True)):
            fi = self._value(Expression(), i)
            f.add_point((x, gi, fi))
            self.problem.add_constraint(fi == 0)
        gbar = 0 * g
        self.h_ref, self.f_ref = g, list(grads)
        return {"z": self.gamma * g, "x": x, "v": g, "grads": grads, "gbar": gbar, "psi": 0 * h0, "Fnor": g}

    def at(self, z: Any) -> dict[str, Any]:
        x, s, phi_x = self._prox(z)
        gv = [self._grad(i, x) for i in range(self.n)]
        grads = [g for g, _ in gv]
        gbar = sum(grads[1:], grads[0]) / self.n
        fbar = sum((fv for _, fv in gv[1:]), gv[0][1]) / self.n
        return {"z": z, "x": x, "v": s, "grads": grads, "gbar": gbar, "psi": fbar + phi_x, "Fnor": gbar + s}

    def corr_err(self, pt: dict[str, Any], c: list[Any]) -> Any:
        terms = [(c[i] + pt["grads"][i] - pt["gbar"]) ** 2 for i in range(self.n)]
        return sum(terms[1:], terms[0]) / self.n

    def lyap(self, pt: dict[str, Any], c: list[Any], C_0: float, C_c: float, psi_star: Any = 0) -> Any:
        return pt["psi"] - psi_star + (self.gamma * C_0 / 2) * pt["Fnor"] ** 2 + C_c * self.corr_err(pt, c)

    def step(self, pt: dict[str, Any], c: list[Any], eta_a: float, eta_s: float, Q: int, variant: str) -> tuple[Any, list[Any]]:
        """One round of Algorithm 1 from the global point ``pt`` with corrections ``c``: (z_{t+1}, c_{t+1})."""
        z_t, v = pt["z"], pt["v"]
        ys = []
        h_round = self.h_ref
        for i in range(self.n):
            zi = z_t
            self.owner = i  # the prox leaves of client i's local steps are client i's
            if self.labels is not None:  # and, for the symmetric form, increments of the round's shared subgradient
                self.h_ref = h_round
            for ell in range(Q):
                if ell == 0:
                    g = pt["grads"][i]  # x_i^0 = x_t (both variants)
                elif variant == "A":
                    xi, _, _ = self._prox(zi)
                    g, _ = self._grad(i, xi)
                else:
                    g, _ = self._grad(i, zi - self.gamma * v)
                zi = zi - eta_a * (g + v + c[i])
            ys.append((z_t - zi) / (eta_a * Q))
        self.owner = None
        if self.labels is not None:
            self.h_ref = h_round
        ybar = sum(ys[1:], ys[0]) / self.n
        z_next = z_t - (eta_s * eta_a * Q) * ybar
        c_next = [c[i] - ys[i] + ybar for i in range(self.n)]
        return z_next, c_next


def _initial_corrections(problem: Any, n: int, mode: str, z0: Any) -> list[Any]:
    """c_{i,0}: zero (a fresh zero combination, never PEPit's shared null_point, whose value is cached) or free with sum 0."""
    if mode == "zero":
        return [0 * z0 for _ in range(n)]
    free = [problem.set_initial_point() for _ in range(n - 1)]
    last = -sum(free[1:], free[0]) if free else 0 * z0
    return [*free, last]


# --------------------------------------------------------------------------------------------------------------
# measure (a): min_t ||F_nor(z_t)||^2 against the Lyapunov decrease
# --------------------------------------------------------------------------------------------------------------
@pep_builder("fednmap", "fednmap.pep: measure (a), the Lyapunov descent", 1)
def build_lyapunov_pep(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, T: int,
    C_0: float, C_c: float, variant: str = "A", measure: str = "min", initial_correction: str = "zero",
    budget: float = 1.0, margin_coef: float | None = None, symmetric: bool = False, budget_row_scale: float = 1.0,
) -> Callable[[], tuple[Any, dict[str, Any]]]:
    """A builder (for :func:`fedbounds.checks.pep.solve.certify`) of measure (a); see the module docstring.

    Two forms. Ratio form (``margin_coef`` None): maximise min_t ||F_nor(z_t)||^2 s.t. Lyap_0 - Lyap_T <=
    ``budget``. Margin form (``margin_coef`` = d T): maximise min_t ||F_nor(z_t)||^2 - (Lyap_0 - Lyap_T)/(d T)
    s.t. trace(Gram) <= 1; by homogeneity its value is 0 when the descent holds and > 0 when it fails, and its
    feasible set is compact, which keeps the SDP solvable at Theorem 5's small steps where the ratio form is
    numerically degenerate (both solvers fail or report inaccurate there).

    The builder returns ``(pep, named)``; ``named`` holds what a replay needs: Points ``z{t}``, ``x{t}``,
    ``c{t}_{i}``, Expressions ``Fnor2_{t}``, ``lyap0``, ``lyap{T}``, ``decrease``, and the functions ``f{i}``
    and ``h`` (evaluated to their (x, gradient, value) triplets).

    ``budget_row_scale``: the budget row is multiplied by this positive factor (the same feasible set and value; its
    multiplier divided by it). 1 (default): the row as before. :func:`descent_proof` uses 1/budget, which keeps that
    multiplier O(1) at small steps (it is the ratio w, of order 1/eta_hat, otherwise).

    ``symmetric``: label the leaves by client for :func:`fedbounds.checks.pep.symmetric.solve_symmetric`
    (``named["labels"]``); such a build is solved only in block form (the start's zero-sum gradients are imposed
    there), in the ratio form from zero corrections.
    """
    L, rho, gamma, eta_a, eta_s, n, Q, T = _check(L, rho, gamma, eta_a, eta_s, n, Q, T, variant, initial_correction)
    C_0, C_c, budget = _nonneg("C_0", C_0), _nonneg("C_c", C_c), _positive("budget", budget)
    budget_row_scale = _positive("budget_row_scale", budget_row_scale)
    if margin_coef is not None:
        margin_coef = _positive("margin_coef", margin_coef)
    if measure not in ("min", "mean"):
        raise ValueError(f"measure must be 'min' or 'mean', got {measure!r}")
    if symmetric and (margin_coef is not None or initial_correction != "zero"):
        raise ValueError("symmetric=True supports the ratio form from zero corrections only")

    def build() -> tuple[Any, dict[str, Any]]:
        from fedbounds.checks.pep.symmetric import Labels
        from PEPit import PEP
        from PEPit.functions import ConvexFunction, SmoothFunction

        problem = PEP()
        fs = [problem.declare_function(SmoothFunction, L=L, name=f"f{i}") for i in range(n)]
        h = problem.declare_function(ConvexFunction, name="h")
        labels = Labels(n) if symmetric else None
        rd = _Round(problem, fs, h, gamma, rho, _basis_scale(L, gamma, eta_a, eta_s, Q), labels)
        pt = rd.start()
        c = _initial_corrections(problem, n, initial_correction, pt["z"])
        named: dict[str, Any] = {}
        lyap0 = rd.lyap(pt, c, C_0, C_c)
        fnor2 = []
        for t in range(T):
            named[f"z{t}"], named[f"x{t}"] = pt["z"], pt["x"]
            fnor2.append(pt["Fnor"] ** 2)
            named[f"Fnor2_{t}"] = fnor2[-1]
            for i in range(n):
                named[f"c{t}_{i}"] = c[i]
            z_next, c = rd.step(pt, c, eta_a, eta_s, Q, variant)
            pt = rd.at(z_next)
        lyapT = rd.lyap(pt, c, C_0, C_c)
        named[f"z{T}"], named[f"x{T}"] = pt["z"], pt["x"]
        named["lyap0"], named[f"lyap{T}"] = lyap0, lyapT
        named["decrease"] = lyap0 - lyapT
        named["h"] = h
        for i, f in enumerate(fs):
            named[f"f{i}"] = f
        if labels is not None:
            named = {"labels": labels}
        if measure == "mean":
            fnor2 = [sum(fnor2[1:], fnor2[0]) / T]
        if margin_coef is None:
            if budget_row_scale == 1.0:
                problem.set_initial_condition(lyap0 - lyapT <= budget)
            else:
                problem.set_initial_condition(budget_row_scale * (lyap0 - lyapT) <= budget_row_scale * budget)
            for m in fnor2:
                problem.set_performance_metric(m)
        else:
            from PEPit import Point

            leaves = list(Point.list_of_leaf_points)
            problem.set_initial_condition(sum((p**2 for p in leaves[1:]), leaves[0] ** 2) <= 1)
            for m in fnor2:
                problem.set_performance_metric(m - (lyap0 - lyapT) / margin_coef)
        return problem, named

    return build


def lyapunov_pep(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, T: int,
    C_0: float, C_c: float, variant: str = "A", measure: str = "min", initial_correction: str = "zero",
    budget: float = 1.0, solvers: Sequence[str] = DEFAULT_SOLVERS, rel_tol: float = DEFAULT_REL_TOL,
    symmetric: bool = False,
) -> Certificate:
    """Measure (a): the worst case of min_t ||F_nor(z_t)||^2 subject to Lyap_0 - Lyap_T <= ``budget``.

    By homogeneity (module docstring) the value is ``budget`` times w, the worst ratio. With ``budget`` = d T
    (d the descent coefficient) the value is directly the ratio w d T that the descent needs <= 1, and the SDP
    is well scaled (values of order 1); :func:`descent_check` does that. Certified by every solver in
    ``solvers`` (:func:`fedbounds.checks.pep.solve.certify`); ``value`` is +inf when every solver reports it
    unbounded. ``symmetric``: solve the client-symmetric block form (:mod:`fedbounds.checks.pep.symmetric`;
    the same worst case, smaller SDPs for n >= 2).
    """
    build = build_lyapunov_pep(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, variant, measure, initial_correction,
                               budget, symmetric=symmetric)
    if symmetric:
        from fedbounds.checks.pep.symmetric import solve_symmetric

        return certify(build, solvers=solvers, rel_tol=rel_tol, solve=solve_symmetric)
    return certify(build, solvers=solvers, rel_tol=rel_tol)


def descent_ratio(w: float | None, descent_coef: float, T: int) -> float | None:
    """w d T: the reconstructed descent with coefficient d (= eta_hat/9 in the paper) requires this <= 1.

    ``w`` is the value of :func:`lyapunov_pep` at budget 1 (None when inconclusive, +inf when unbounded).
    """
    _positive("descent_coef", descent_coef)
    T = _int("T", T, 1)
    if w is None:
        return None
    return w * descent_coef * T


def _rescaled(cert: Certificate, factor: float) -> Certificate:
    """The certificate of the same PEP at a budget ``factor`` times larger (values scale exactly, homogeneity)."""
    import dataclasses

    def sc(v: float | None) -> float | None:
        return None if v is None or not math.isfinite(v) else v * factor

    runs = tuple(dataclasses.replace(r, dual=sc(r.dual), primal=sc(r.primal)) for r in cert.runs)
    return dataclasses.replace(
        cert, runs=runs, values={k: sc(v) for k, v in cert.values.items()}, gaps={k: sc(v) for k, v in cert.gaps.items()},
        value=cert.value if cert.value is None or math.isinf(cert.value) else cert.value * factor,
        disagreement=sc(cert.disagreement), proof=None,  # a proof is of the PEP it was built for: not rescaled
    )


def descent_check(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, T: int,
    C_0: float, C_c: float, descent_coef: float, variant: str = "A", measure: str = "min",
    initial_correction: str = "zero", solvers: Sequence[str] = DEFAULT_SOLVERS, rel_tol: float = DEFAULT_REL_TOL,
    budgets: Sequence[float] | None = None, symmetric: bool = False, prove_small: bool = True,
) -> Certificate:
    """Certificate whose value is the ratio w d T (:func:`lyapunov_pep` with budget d T); the descent needs <= 1.

    ``descent_coef`` = d, the reconstructed per-round coefficient (eta_hat/9, from the theory layer). Use
    :func:`fedbounds.checks.pep.solve.verdict` with bound 1. Whether a solver reports ``optimal`` depends on the
    scale of the SDP, not only on the problem (measured: the same (2,2,2) PEP is ``optimal`` at budget 1 and
    ``optimal_inaccurate`` at budget d T). So when the first certificate is neither certified nor unbounded,
    the same PEP is solved at the budgets in ``budgets`` (default 1, 10, 100, 1000) and the first certified one is
    returned, its values rescaled by homogeneity to budget d T (exact: the PEP is homogeneous of degree 1 in
    the budget). Otherwise the first certificate is returned. ``symmetric``: as in :func:`lyapunov_pep`.

    Each budget is first solved by the first solver alone: when it is neither optimal nor unbounded, no certificate
    can be certified or unbounded there (both need every solver), so the other solvers are not run at that budget.
    The certificates returned are the same; measured on the quick grid, most of the SCS time had gone to such
    budgets (SCS running to its iteration cap on a PEP Clarabel had already failed): 24 -> 8 CPU s.

    Small steps (``prove_small``; eta_hat within Theorem 5's printed maximum at this gamma, m = 1, measure ``min``):
    where the solvers still read ``unbounded`` or nothing certified, :func:`descent_proof` is tried at the claims 1/2,
    then 1 (the ratio form is degenerate for the solvers there: at 0.001x both read ``unbounded``, falsely). When it
    proves w d T <= claim, the certificate returned says so: status ``proved``, ``value`` the proved bound (an upper
    bound on w d T, not the worst case itself), ``unbounded`` false (a finite bound is proved), ``certified`` false
    (no solver's optimum), the solvers' own readings kept in ``runs``, and its ``proof`` record (exact bound, smallest
    pivot, ``solver_free``). When it does not prove, the solvers' certificate is returned as it was: an unproved probe
    is never turned into a failure here.
    """
    d = _positive("descent_coef", descent_coef)
    T = _int("T", T, 1)
    dT = d * T

    def at(b: float) -> Certificate | None:
        """The certificate at budget ``b``, or None when the first solver alone already rules out certified and
        unbounded (both need every solver: the others are then not run, the outcome is the same)."""
        if len(solvers) > 1:
            screen = lyapunov_pep(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, variant, measure, initial_correction,
                                  budget=b, solvers=solvers[:1], rel_tol=rel_tol, symmetric=symmetric).runs[0]
            if not (screen.optimal or screen.unbounded):
                return None
        return lyapunov_pep(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, variant, measure, initial_correction,
                            budget=b, solvers=solvers, rel_tol=rel_tol, symmetric=symmetric)

    def solved() -> Certificate:
        first = at(dT)
        if first is not None and (first.certified or first.unbounded):
            return first
        for b in (1.0, 10.0, 100.0, 1000.0) if budgets is None else budgets:
            cert = at(b)
            if cert is not None and (cert.certified or cert.unbounded):
                return _rescaled(cert, dT / b)
        if first is None:  # nothing certified: the full certificate at d T, every solver's answer, is the record
            first = lyapunov_pep(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, variant, measure, initial_correction,
                                 budget=dT, solvers=solvers, rel_tol=rel_tol, symmetric=symmetric)
        return first

    cert = solved()
    if cert.certified or not prove_small or measure != "min" or not _small_step(L, rho, gamma, eta_a, eta_s, Q):
        return cert
    for claim in (0.5, 1.0):
        proof = descent_proof(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, d, claim=claim, variant=variant)
        if proof["status"] == "proved":
            return _with_solver_free_proof(cert, proof, claim)
    return cert


def _small_step(L: float, rho: float, gamma: float, eta_a: float, eta_s: float, Q: int) -> bool:
    """eta_hat within Theorem 5's printed maximum at this gamma and m = 1 (theory layer): where the solvers' readings of
    the ratio form are unreliable and :func:`descent_proof` is tried (:func:`descent_check`)."""
    printed = theorem5_steps(L, rho, Q, 1, gamma=gamma)["eta_hat"]
    return eta_s * eta_a * Q <= printed * (1 + 1e-9)


def _with_solver_free_proof(cert: Certificate, proof: dict[str, Any], claim: float) -> Certificate:
    """``cert`` (the solvers' readings, kept) carrying :func:`descent_proof`'s exact bound (:func:`descent_check`)."""
    import dataclasses

    record = {**proof, "solver_free": True, "claim": claim, "solvers_read": cert.status,
              "from": "descent_proof: the interior dual at the claim, rounded and verified in exact arithmetic"}
    return dataclasses.replace(cert, unbounded=False, value=proof["bound"], proof=record)


def descent_proof(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, T: int,
    C_0: float, C_c: float, descent_coef: float, claim: float = 0.5, variant: str = "A",
) -> dict[str, Any]:
    """An exact rational proof that the ratio w d T of :func:`descent_check` is <= ``claim`` (< 1: the descent with
    room), found without a solver's optimum: the interior dual at the target ``claim`` (:func:`fedbounds.checks.pep.
    certificate.prove`), then rounded and checked in exact arithmetic. ``{"status": "proved", "bound", "bound_exact",
    "min_pivot", "seconds"}`` or ``{"status": "not proved"}`` (never a failure of the descent: a false claim is simply
    not provable).

    Why: at small steps (0.1x Theorem 5's printed eta_hat and below, n = 2, Q = 1) the ratio form's SDP is degenerate
    for the solvers. Its multipliers are of order 1/eta_hat (the budget row) and 1/eta_hat^2 (the interpolation rows:
    the descent is O(eta_hat) and rests on |grad f_i(x_1) - grad f_i(x_0)|^2 <= L^2 |x_1 - x_0|^2, an O(eta_hat^2)
    row), and Clarabel fails or reports ``unbounded`` while SCS reports ``unbounded_inaccurate``; at 0.001x both say
    ``unbounded``, a false reading (the parametric proof, :mod:`fedbounds.checks.fednmap.pep.parametric`, shows the
    descent over the whole range). Rescaling the rows (1/eta_hat to 1/eta_hat^2), the objective or the budget, and a
    Taylor basis for the function values did not make the solvers converge (docs/fednmap-reconstruction.md §10). What
    works is to ask for a bound with room: with the budget row scaled by about 1/eta_hat the interior dual at ``claim``
    is well posed, and the certificate's smallest pivot stays O(0.1 to 1) down to 0.001x. Which scale lets the
    interior-dual solve succeed varies from point to point (measured: 1/eta_hat at 1x to 0.001x, 9/eta_hat not at
    0.01x), so the scales 1/eta_hat, 0.1/eta_hat, 1/(d T) and 100/eta_hat are tried in turn; any verified
    certificate proves the same claim (the rows are positive multiples of the PEP's).

    The PEP proved is the zero-correction one: the free-correction PEP has the same value (the class, the algorithm
    and the measure are invariant under the tilts f_i -> f_i + <a_i, .>, c_i -> c_i - a_i with sum_i a_i = 0, and
    a_i = c_{i,0} maps any correction state to the zero one; fednmap.spep.encoding pins its corrections by the same
    argument), but its tilt is a recession direction every dual lies on, which the exact restoration cannot round."""
    from fedbounds.checks.pep.certificate import problem_of, prove
    from fedbounds.checks.pep.verify_certificate import verify

    d = _positive("descent_coef", descent_coef)
    T = _int("T", T, 1)
    claim = _positive("claim", claim)
    t0 = time.process_time()
    dT = d * T
    eta_hat = eta_s * eta_a * Q
    for scale in (1.0 / eta_hat, 0.1 / eta_hat, 1.0 / dT, 100.0 / eta_hat):
        build = build_lyapunov_pep(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, variant, "min", "zero", budget=dT,
                                   budget_row_scale=scale)
        cert = prove(problem_of(build), claim, [], widen=1)
        if cert is not None:
            s = verify(cert)
            return {"status": "proved", "bound": float(Fraction(cert["bound"])), "bound_exact": cert["bound"],
                    "budget_row_scale": scale, "min_pivot": None if s.get("min_pivot") is None else float(s["min_pivot"]),
                    "seconds": round(time.process_time() - t0, 3)}
    return {"status": "not proved", "seconds": round(time.process_time() - t0, 3)}


def gram_dimension(n: int, Q: int, T: int, variant: str = "A", initial_correction: str = "zero") -> int:
    """Size of measure (a)'s Gram matrix: h's subgradient at x_0 and n - 1 gradients there (normal form), per
    round one prox leaf and n gradient leaves at z_{t+1}, per client and local step l >= 1 one prox leaf
    (variant A) and one gradient leaf, and n - 1 free corrections if ``initial_correction="free"``."""
    n, Q, T = _int("n", n, 1), _int("Q", Q, 1), _int("T", T, 1)
    per_local = 2 if variant == "A" else 1
    free = (n - 1) if initial_correction == "free" else 0
    return n + T * (1 + n) + T * n * (Q - 1) * per_local + free


# --------------------------------------------------------------------------------------------------------------
# the recovered constants: smallest C_0 per C_c
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConstantsResult:
    """The smallest C_0 (within ``C_0_tol``, by bisection) at which w d T <= 1, for one C_c.

    ``C_0`` is None when no C_0 up to ``C_0_max`` meets the descent. ``certificate`` is the two-solver
    certificate at (C_0, C_c) (the search itself uses one solver); ``ratio`` = w d T there; ``solves`` counts
    PEP solves, ``seconds`` their total time. The threshold lies in the window (``C_0_low``, ``C_0``]:
    ``C_0_low`` is the largest probe below ``C_0`` the search solver *decided* fails (None: none did, e.g. every
    smaller probe was undecided), ``unknown`` the probes it could not decide (never counted as failing).
    """

    C_c: float
    C_0: float | None
    ratio: float | None
    certificate: Certificate | None
    solves: int
    seconds: float
    C_0_low: float | None = None
    unknown: tuple[float, ...] = ()


def _probe_outcome(cert: Certificate) -> str:
    """A search probe's outcome (:mod:`fedbounds.checks.verdicts.threshold`) from a certificate of the ratio w d T:
    every solver optimal and agreeing, all values <= 1, or an exact certificate of w d T <= 1 (:func:`descent_check`'s
    solver-free proof at small steps): meets; agreeing with all values > 1, or unbounded for every solver: fails;
    anything else (an inaccurate or failed solve, a disagreement): unknown."""
    from fedbounds.checks.pep.solve import proof_decides
    from fedbounds.checks.verdicts.threshold import FAILS, MEETS, UNKNOWN

    if proof_decides(cert, 1.0):
        return MEETS
    if cert.unbounded:
        return FAILS
    if all(r.optimal for r in cert.runs) and cert.agree:
        if all(r.dual <= 1.0 for r in cert.runs):
            return MEETS
        if all(r.dual > 1.0 for r in cert.runs):
            return FAILS
    return UNKNOWN


def smallest_constants(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, T: int,
    descent_coef: float, C_c_grid: Sequence[float], C_0_max: float = 64.0, C_0_tol: float = 0.02,
    variant: str = "A", measure: str = "min", initial_correction: str = "zero",
    search_solvers: Sequence[str] = ("CLARABEL",), solvers: Sequence[str] = DEFAULT_SOLVERS,
    rel_tol: float = DEFAULT_REL_TOL, C_0_min: float = 1.0 / 16, grid_factor: float = math.sqrt(2.0),
) -> list[ConstantsResult]:
    """For each C_c in ``C_c_grid``, the smallest C_0 in [0, C_0_max] with w(C_0, C_c) d T <= 1.

    Search (:func:`fedbounds.checks.verdicts.threshold.smallest_meeting`): C_0 = 0, then the geometric grid
    C_0_min * grid_factor^k up to ``C_0_max``; the first grid value that *meets* is refined by bisection against
    the largest one *decided* to fail below it, down to a relative width ``C_0_tol``. A probe meets when every
    solver in ``search_solvers`` is ``optimal`` (after its one retry), they agree, and the value is <= 1; it fails
    when they agree on a value > 1 or all find the worst case unbounded; anything else is *unknown*, which narrows
    nothing (an unknown probe counted as failing pushed the committed n = 1 thresholds above the n = 2 ones, which
    contain them). The proposal is then certified by every solver in ``solvers``; if that certificate is not
    ``certified`` (solvers struggle at the boundary, where the ratio is 1), C_0 is raised by factors (1 + C_0_tol)
    up to 4 times, then by ``grid_factor`` up to 4 times, until a two-solver certificate with ratio <= 1 is found
    (else the last certificate is returned, and its status says it is not evidence). The set of meeting C_0 need
    not be an interval (measured: the worst case is finite only between thresholds, C_0 >= 1/(gamma L) being
    unbounded at the scoping point); the result is the smallest *probed* one. It is a *reconstructed* constant
    (the smallest the PEP certifies at this grid point), not the paper's.
    """
    from fedbounds.checks.verdicts.threshold import smallest_meeting

    _positive("C_0_max", C_0_max)
    _positive("C_0_tol", C_0_tol)
    out = []
    for C_c in C_c_grid:
        solves, t0 = 0, time.perf_counter()

        def cert_at(C_0: float, who: Sequence[str], C_c: float = float(C_c)) -> Certificate:
            nonlocal solves
            solves += 1
            return descent_check(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, descent_coef, variant, measure,
                                 initial_correction, solvers=who, rel_tol=rel_tol)

        grid = [0.0]
        c0 = C_0_min
        while c0 <= C_0_max * (1 + 1e-12):
            grid.append(c0)
            c0 *= grid_factor
        window = smallest_meeting(lambda C_0: _probe_outcome(cert_at(C_0, search_solvers)), grid, rel_tol=C_0_tol)
        hi = window.high
        if hi is None:
            out.append(ConstantsResult(float(C_c), None, None, None, solves, time.perf_counter() - t0, window.low,
                                       window.unknown))
            continue
        cert = cert_at(hi, solvers)
        steps = [1 + C_0_tol] * 4 + [grid_factor] * 4  # small bumps, then up the probe grid's ratio
        for factor in steps:
            if cert.certified and cert.value is not None and cert.value <= 1.0:
                break
            hi *= factor
            cert = cert_at(hi, solvers)
        out.append(ConstantsResult(float(C_c), hi, cert.value, cert, solves, time.perf_counter() - t0, window.low,
                                   window.unknown))
    return out


@dataclass(frozen=True)
class StepResult:
    """The largest multiplier k (bisection, relative width ``tol``) such that at eta_hat = k eta_hat_ref,
    eta_a = k eta_a_ref (eta_s fixed), some (C_0, C_c) of the grid meets w d(k) T <= 1; d(k) = k d_ref.

    ``k`` is None when even the smallest probed multiplier is not certified. ``C_0``, ``C_c``: the pair that
    certified it; ``certificate``: its two-solver certificate. The largest multiplier lies in the window
    [``k``, ``k_high``): ``k_high`` is the smallest probe above ``k`` at which every pair was *decided* to fail
    (None: none was); ``unknown``: the probes the search solver could not decide (never counted as failing).
    """

    k: float | None
    C_0: float | None
    C_c: float | None
    certificate: Certificate | None
    solves: int
    seconds: float
    k_high: float | None = None
    unknown: tuple[float, ...] = ()


def largest_certified_step(
    L: float, rho: float, gamma: float, eta_a_ref: float, eta_s: float, n: int, Q: int, T: int,
    descent_coef_ref: float, C_0_grid: Sequence[float], C_c_grid: Sequence[float], k_max: float = 1024.0,
    tol: float = 0.05, k_start: float = 1.0, variant: str = "A", measure: str = "min",
    search_solvers: Sequence[str] = ("CLARABEL",), solvers: Sequence[str] = DEFAULT_SOLVERS,
    rel_tol: float = DEFAULT_REL_TOL,
) -> StepResult:
    """Scale eta_a (and so eta_hat = eta_s eta_a Q and d = eta_hat/9) by k; find the largest certified k.

    ``eta_a_ref`` and ``descent_coef_ref`` are the values at k = 1 (e.g. Theorem 5's printed bounds and
    their eta_hat/9, evaluated by the theory layer). A multiplier k *meets* when some (C_0, C_c) in the grids
    gives w d(k) T <= 1 (every one of ``search_solvers`` optimal with a value <= 1), *fails* when every pair is
    decided to fail (values > 1 or unbounded), and is *unknown* otherwise; unknown multipliers narrow nothing
    (:func:`fedbounds.checks.verdicts.threshold.largest_meeting`). The search doubles k from ``k_start`` up to
    ``k_max``, then bisects between the largest meeting and the smallest failing multiplier; it assumes the
    certified set is [0, k*]. The final point is certified by every solver in ``solvers`` (see
    ``certificate.status``). (Start above 1 where the SDPs at the printed steps are too ill-conditioned to solve.)
    """
    from fedbounds.checks.verdicts.threshold import FAILS, MEETS, UNKNOWN, largest_meeting

    solves, t0 = 0, time.perf_counter()
    found: dict[float, tuple[float, float]] = {}

    def probe(k: float) -> str:
        nonlocal solves
        undecided = False
        for C_c in C_c_grid:
            for C_0 in C_0_grid:
                solves += 1
                cert = descent_check(L, rho, gamma, k * eta_a_ref, eta_s, n, Q, T, C_0, C_c, k * descent_coef_ref,
                                     variant, measure, solvers=search_solvers, rel_tol=rel_tol)
                out = _probe_outcome(cert)
                if out == MEETS:
                    found[k] = (float(C_0), float(C_c))
                    return MEETS
                undecided = undecided or out == UNKNOWN
        return UNKNOWN if undecided else FAILS

    window = largest_meeting(probe, k_start, k_max, factor=2.0, rel_tol=tol)
    if window.low is None:
        return StepResult(None, None, None, None, solves, time.perf_counter() - t0, None, window.unknown)
    lo = window.low
    best = found[lo]
    cert = descent_check(L, rho, gamma, lo * eta_a_ref, eta_s, n, Q, T, best[0], best[1], lo * descent_coef_ref,
                         variant, measure, solvers=solvers, rel_tol=rel_tol)
    return StepResult(lo, best[0], best[1], cert, solves + 1, time.perf_counter() - t0, window.high, window.unknown)


# --------------------------------------------------------------------------------------------------------------
# measure (b): one-round Lyapunov contraction under the proximal PL condition
# --------------------------------------------------------------------------------------------------------------
@pep_builder("fednmap", "fednmap.pep: measure (b), the PL contraction", 1)
def build_pl_contraction_pep(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, mu: float,
    C_0: float, C_c: float, variant: str = "A", initial_correction: str = "free",
) -> Callable[[], tuple[Any, dict[str, Any]]]:
    """A builder of measure (b) (module docstring): maximise Lyap_1 - Lyap_0 subject to Lyap_0 = 1 (psi - psi*)."""
    L, rho, gamma, eta_a, eta_s, n, Q, _ = _check(L, rho, gamma, eta_a, eta_s, n, Q, 1, variant, initial_correction)
    mu, C_0, C_c = _positive("mu", mu), _nonneg("C_0", C_0), _nonneg("C_c", C_c)

    def build() -> tuple[Any, dict[str, Any]]:
        from PEPit import PEP, Expression, Point
        from PEPit.functions import ConvexFunction, SmoothFunction

        problem = PEP()
        fs = [problem.declare_function(SmoothFunction, L=L, name=f"f{i}") for i in range(n)]
        h = problem.declare_function(ConvexFunction, name="h")
        rd = _Round(problem, fs, h, gamma, rho, _basis_scale(L, gamma, eta_a, eta_s, Q))
        # a stationary point x*: grad f(x*) + s* = 0 with s* in d phi(x*), i.e. h's subgradient s* + rho x*
        xs = Point()
        gs = [f.gradient(xs) for f in fs]
        s_star = -(sum(gs[1:], gs[0]) / n)
        hs = Expression()
        h.add_point((xs, s_star + rho * xs, hs))
        psi_star = sum((f.value(xs) for f in fs[1:]), fs[0].value(xs)) / n + hs - (rho / 2) * xs**2
        p0 = rd.start()
        z0 = p0["z"]
        c = _initial_corrections(problem, n, initial_correction, z0)
        z1, c1 = rd.step(p0, c, eta_a, eta_s, Q, variant)
        p1 = rd.at(z1)
        for p in (p0, p1):
            problem.add_constraint(p["psi"] - psi_star <= p["Fnor"] ** 2 / (2 * mu))
            problem.add_constraint(p["psi"] - psi_star >= 0)
        lyap0 = rd.lyap(p0, c, C_0, C_c, psi_star)
        lyap1 = rd.lyap(p1, c1, C_0, C_c, psi_star)
        problem.set_initial_condition(lyap0 == 1)
        problem.set_performance_metric(lyap1 - lyap0)
        return problem, {"z0": z0, "z1": z1, "x0": p0["x"], "x1": p1["x"], "x_star": xs, "lyap0": lyap0, "lyap1": lyap1}

    return build


def pl_contraction_pep(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, mu: float,
    C_0: float, C_c: float, variant: str = "A", initial_correction: str = "free",
    solvers: Sequence[str] = DEFAULT_SOLVERS, rel_tol: float = DEFAULT_REL_TOL,
) -> Certificate:
    """Measure (b): value q - 1, q the worst one-round factor Lyap_1/Lyap_0 under the proximal-PL relaxation.

    Theorem 8's deterministic part needs -value >= 2 eta_hat mu / (9 (1 + gamma mu C_0))
    (:func:`theorem8_exponent`); the certified exponent is -value (the conservative, smallest one).
    """
    build = build_pl_contraction_pep(L, rho, gamma, eta_a, eta_s, n, Q, mu, C_0, C_c, variant, initial_correction)
    return certify(build, solvers=solvers, rel_tol=rel_tol)
