"""The stochastic Lemma 5.2 of DS FedProxGrad (Arif, arXiv 2512.08671) by expected-Gram performance estimation.

Lemma 5.2, eq. (14) with (22):  E F(x+) - F(x) <= -eta Phi ||grad F(x)||^2 + Xi,
    Xi = eta (1 + 3 L_F eta/2) C_e gamma_r^2 K_e^2 + (3/2) L_F eta^2 sigma^2,  C_e K_e^2 = G^2 + 2 B^2 lambda^2 G_r^2.
So the printed remainder has a sigma^2 coefficient (3/2) L_F eta^2 and a G^2 coefficient eta (1 + 3 L_F eta/2)
gamma_r^2 (both from the theory layer: ``Xi_sigma2_coefficient``, ``Xi_G2_coefficient``). This module certifies the
smallest coefficients the whole class admits at Phi = 1/4, with the G_r part of Xi kept as printed (as in the
deterministic PEP of :mod:`fedbounds.checks.ds_fedproxgrad.pep.encoding`, G_r^2 replaced by ||grad r(x)||^2).

Class and round: those of :mod:`fedbounds.checks.ds_fedproxgrad.pep.encoding` (f_i L_f-smooth, r L_r-smooth, the relative
error (10), x = 0 and F(x) = 0 by invariance), with two changes:

* the dissimilarity (8) in full, (1/N) sum_i ||grad f_i(x)||^2 <= G^2 + B^2 ||grad f(x)||^2, with G^2 a free scalar of
  the SDP (``G2``, >= 0);
* the fairness noise (9): x+ = x - eta grad F(x) + eta e_f + eta e, e one noise leaf with E||e||^2 <= sigma^2
  (``sigma2``, a free scalar) and E<e, v> = 0 for every v fixed before e is drawn. Which v that is, is the modelling
  question the paper leaves open (notes §1.4, "Tighter variant of (19)"):
  - ``noise="correlated"`` (the paper's (9) as stated, E[e | x^r] = 0): v ranges over grad f_i(x) and grad r(x); the
    local errors e_i may correlate with e;
  - ``noise="independent"``: the clients finish before the server draws e, so v also ranges over the e_i;
  - ``noise="free"``: no orthogonality at all (the negative control: the value must grow).

Expected-Gram relaxation (Rubbens, Colla, Hendrickx, arXiv 2507.05466): the Gram matrix is E[V V^T] and the values
are expectations. Every interpolation inequality holds per realisation and is linear in (V V^T, values), so the
true expectations of any instance and noise law are feasible: the value is a valid upper bound on the worst case
(not exact: one f for all realisations, independence beyond second moments). :func:`scenario_pep` gives admissible
instances instead (e = +-u with probability 1/2, the errors per scenario when ``noise="correlated"``): a lower bound.

Measures (homogeneous of degree 2, so one normalisation fixes the scale):
* ``"sigma2"``: maximise E F(x+) - F(x) + eta Phi ||grad F||^2 - xi_r ||grad r||^2 - a_G G^2 subject to sigma^2 = 1,
  with G^2 = 0 (``a_G`` None) or free and charged at ``a_G``: the value is the smallest sigma^2 coefficient K_sigma
  for which the descent holds over the class;
* ``"G2"``: the same with sigma = 0 (no noise leaf) subject to G^2 = 1: the smallest G^2 coefficient K_G.

Noise leaves: :class:`fedbounds.checks.pep.stochastic.NoiseLedger` (a leaf is orthogonal to every leaf existing when
it is drawn, so the model is chosen by drawing e before or after the local errors); scenarios:
:func:`fedbounds.checks.pep.stochastic.sign_patterns`.

Reference: Arif, DS FedProxGrad (arXiv 2512.08671) Lemma 5.2, eqs. (8)-(10), (14), (19), (22); docs/ds-fedproxgrad-notes.md §1.4.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fedbounds.checks.pep.certificate import pep_builder
from fedbounds.checks.pep.solve import DEFAULT_REL_TOL, DEFAULT_SOLVERS, Certificate, certify, check_nonnegative, check_positive

__all__ = ["NOISE_MODELS", "SPoint", "build_stochastic_pep", "printed_coefficients", "scenario_pep", "stochastic_pep"]

NOISE_MODELS = ("correlated", "independent", "free")
_positive, _nonneg = check_positive, check_nonnegative


@dataclass(frozen=True)
class SPoint:
    """A parameter point: the class (L_f, L_r, lam, B), the step eta, the inexactness gamma_r, N clients."""

    L_f: float
    L_r: float
    lam: float
    B: float
    eta: float
    gamma_r: float
    N: int = 2

    def __post_init__(self) -> None:
        for name in ("L_f", "L_r", "B", "eta"):
            _positive(name, getattr(self, name))
        _nonneg("lam", self.lam)
        _nonneg("gamma_r", self.gamma_r)
        if isinstance(self.N, bool) or int(self.N) != self.N or self.N < 1:
            raise ValueError(f"N must be an integer >= 1, got {self.N!r}")


def printed_coefficients(p: SPoint) -> dict[str, float]:
    """The paper's numbers at ``p``, from the theory layer: ``Phi`` (1/4), ``xi_r`` (Xi per ||grad r||^2 at
    G = sigma = 0), ``K_sigma`` ((3/2) L_F eta^2), ``K_G`` (eta (1 + 3 L_F eta/2) gamma_r^2), ``L_F``, and
    ``K_sigma_tight`` (L_F eta^2/2, the tighter (19) of the notes, Xi_tight)."""
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.ds_fedproxgrad import formulas as ds

    base = {"L_f": p.L_f, "L_r": p.L_r, "lambda": p.lam, "lam": p.lam, "B": p.B, "eta": p.eta, "gamma_r": p.gamma_r}
    L_F = evaluate(ds.L_F_definition, base)
    v = {**base, "L_F": L_F, "G": 0.0, "sigma2": 0.0, "G_r": 1.0}
    return {"L_F": L_F, "Phi": evaluate(ds.Phi, v), "xi_r": evaluate(ds.Xi, v),
            "K_sigma": evaluate(ds.Xi_sigma2_coefficient, v), "K_G": evaluate(ds.Xi_G2_coefficient, v),
            "K_sigma_tight": evaluate(ds.Xi_tight_sigma2_coefficient, v)}


@pep_builder("ds_fedproxgrad", "ds.spep: the expected-Gram round", 1)
def build_stochastic_pep(p: SPoint, measure: str = "sigma2", noise: str = "correlated", a_G: float | None = None,
                         Phi: float | None = None, xi_r: float | None = None) -> Callable[[], tuple[Any, dict[str, Any]]]:
    """A builder of the expected-Gram PEP (module docstring); ``Phi``/``xi_r`` default to the printed ones."""
    if measure not in ("sigma2", "G2"):
        raise ValueError(f"measure must be 'sigma2' or 'G2', got {measure!r}")
    if noise not in NOISE_MODELS:
        raise ValueError(f"noise must be one of {NOISE_MODELS}, got {noise!r}")
    pc = printed_coefficients(p)
    Phi = pc["Phi"] if Phi is None else _nonneg("Phi", Phi)
    xi_r = pc["xi_r"] if xi_r is None else _nonneg("xi_r", xi_r)
    a_G = None if a_G is None else _nonneg("a_G", a_G)

    def build() -> tuple[Any, dict[str, Any]]:
        from fedbounds.checks.pep.stochastic import NoiseLedger
        from PEPit import PEP, Expression

        problem = PEP()
        fs, r, x, gr, grads = _round_start(problem, p)
        G2 = Expression()
        problem.add_constraint(G2 >= 0)
        _dissimilarity(problem, p, grads, G2)
        grad_F = sum(grads[1:], grads[0]) / p.N + p.lam * gr
        ledger, e = NoiseLedger(), None
        if measure == "sigma2" and noise == "correlated":
            e = ledger.draw(tag="e_stoch")  # drawn before the local errors exist: orthogonal to grad f_i(x), grad r(x) only
        errs = _errors(problem, p, grads)
        if measure == "sigma2" and noise != "correlated":
            e = ledger.draw(tag="e_stoch")  # after the local errors: orthogonal to them too (unless the control drops it)
        x_plus = _plus_mean_error(x - p.eta * grad_F, errs, p.N, p.eta)
        if e is not None:
            x_plus = x_plus + p.eta * e
            ledger.apply(problem, sigma2=1.0, orthogonality=noise != "free")  # sigma^2 = 1: the value is K_sigma*
            if a_G is None:
                problem.add_constraint(G2 == 0)
        else:
            problem.set_initial_condition(G2 == 1)
        F_plus = _F_at(fs, r, x_plus, p)
        objective = F_plus + p.eta * Phi * grad_F**2 - xi_r * gr**2
        if measure == "sigma2" and a_G is not None:
            objective = objective - a_G * G2
        problem.set_performance_metric(objective)
        return problem, {"x_plus": x_plus, "grad_F": grad_F, "G2": G2}

    return build


def _round_start(problem: Any, p: SPoint) -> tuple[list[Any], Any, Any, Any, list[Any]]:
    """The round start of the deterministic encoding (:func:`fedbounds.checks.ds_fedproxgrad.pep.encoding.round_start`)."""
    from fedbounds.checks.ds_fedproxgrad.pep.encoding import round_start

    return round_start(problem, p.L_f, p.L_r, p.N)


def _errors(problem: Any, p: SPoint, grads: list[Any]) -> list[Any | None]:
    """The local errors e_i of (10), ||e_i||^2 <= gamma_r^2 ||grad f_i(x)||^2 (None when gamma_r = 0)."""
    from PEPit import Point

    if p.gamma_r == 0:
        return [None] * p.N
    errs = []
    for g in grads:
        e = Point()
        problem.add_constraint(e**2 <= p.gamma_r**2 * g**2)
        errs.append(e)
    return errs


def _plus_mean_error(point: Any, errs: list[Any | None], N: int, eta: float) -> Any:
    """point + eta e_f, e_f = (1/N) sum_i e_i (point itself when gamma_r = 0: no error leaves)."""
    present = [e for e in errs if e is not None]
    return point if not present else point + eta * sum(present[1:], present[0]) / N


def _dissimilarity(problem: Any, p: SPoint, grads: list[Any], G2: Any) -> None:
    grad_f = sum(grads[1:], grads[0]) / p.N
    problem.add_constraint(sum((g**2 for g in grads[1:]), grads[0] ** 2) / p.N <= G2 + p.B**2 * grad_f**2)


def _F_at(fs: list[Any], r: Any, x: Any, p: SPoint) -> Any:
    return sum((f.value(x) for f in fs[1:]), fs[0].value(x)) / p.N + p.lam * r.value(x)


def stochastic_pep(p: SPoint, measure: str = "sigma2", noise: str = "correlated", a_G: float | None = None,
                   Phi: float | None = None, xi_r: float | None = None, solvers: Sequence[str] = DEFAULT_SOLVERS,
                   rel_tol: float = DEFAULT_REL_TOL) -> Certificate:
    """The two-solver certificate of :func:`build_stochastic_pep`: its value is K_sigma* (``measure="sigma2"``) or
    K_G* (``"G2"``), the smallest coefficient for which the descent with ``Phi`` holds over the class."""
    return certify(build_stochastic_pep(p, measure, noise, a_G, Phi, xi_r), solvers=solvers, rel_tol=rel_tol)


@pep_builder("ds_fedproxgrad", "ds.spep: the two-scenario lower bound", 1)
def build_scenario_pep(p: SPoint, noise: str = "correlated", Phi: float | None = None,
                       xi_r: float | None = None) -> Callable[[], tuple[Any, dict[str, Any]]]:
    """Two-scenario instances: e = +u or -u with probability 1/2 (E e = 0, E||e||^2 = ||u||^2 = 1), G = 0; with
    ``noise="correlated"`` each scenario has its own local errors (any law of e_i given the scenario satisfies (10)
    pointwise), with ``"independent"`` they are shared. One f_i, r for both scenarios: every feasible point is an
    instance of the class and a noise law of (9), so the value is a lower bound on the sigma^2 coefficient."""
    if noise not in ("correlated", "independent"):
        raise ValueError(f"noise must be 'correlated' or 'independent', got {noise!r}")
    pc = printed_coefficients(p)
    Phi = pc["Phi"] if Phi is None else Phi
    xi_r = pc["xi_r"] if xi_r is None else xi_r

    def build() -> tuple[Any, dict[str, Any]]:
        from fedbounds.checks.pep.stochastic import sign_patterns
        from PEPit import PEP, Point

        problem = PEP()
        fs, r, x, gr, grads = _round_start(problem, p)
        errs = _errors(problem, p, grads)
        problem.add_constraint(sum((g**2 for g in grads[1:]), grads[0] ** 2) / p.N
                               <= p.B**2 * (sum(grads[1:], grads[0]) / p.N) ** 2)
        grad_F = sum(grads[1:], grads[0]) / p.N + p.lam * gr
        u = Point()
        problem.set_initial_condition(u**2 == 1)
        values = []
        for j, (sign,) in enumerate(sign_patterns(1)):
            own = errs if j == 0 or noise == "independent" else _errors(problem, p, grads)
            x_s = _plus_mean_error(x - p.eta * grad_F, own, p.N, p.eta) + sign * p.eta * u
            values.append(_F_at(fs, r, x_s, p))
        objective = sum(values[1:], values[0]) / len(values) + p.eta * Phi * grad_F**2 - xi_r * gr**2
        problem.set_performance_metric(objective)
        return problem, {"grad_F": grad_F, "u": u}

    return build


def scenario_pep(p: SPoint, noise: str = "correlated", solvers: Sequence[str] = DEFAULT_SOLVERS,
                 rel_tol: float = DEFAULT_REL_TOL) -> Certificate:
    """The certificate of :func:`build_scenario_pep` (a lower bound on K_sigma*)."""
    return certify(build_scenario_pep(p, noise), solvers=solvers, rel_tol=rel_tol)
