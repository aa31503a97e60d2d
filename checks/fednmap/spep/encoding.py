"""Stochastic performance estimation of one FedNMap round (Huang, Pu, Johansson, arXiv 2602.03357; Theorem 8's noise).

Problem class and algorithm: those of :mod:`fedbounds.checks.fednmap.pep.encoding` (Assumptions 1 to 3, Algorithm 1 as
reconstructed), with Assumption 2's oracle: every local gradient is grad f_i(x_i^l) + e_i^l, E[e | past] = 0,
E||e||^2 <= sigma^2, the clients' samples independent given the round's start. Noise enters the local steps only
(the Lyapunov function at z_1 uses true gradients: it is an analysis quantity, not an oracle call).

Encoding: the expected-Gram PEP of :mod:`fedbounds.checks.pep.stochastic` (one noise leaf per client and local step,
orthogonal to every leaf fixed before it is drawn and to the other clients' leaves of the round; E||e||^2 <= sigma^2).
A valid upper bound on the worst expectation; not exact.

Measure (the per-round descent with noise), one round T = 1 from a *free* correction state (any c_i with
sum_i c_i = 0, a superset of the reachable ones, so the certificate telescopes to every T):

    K*(C_0, C_c, d, d_c) = sup over the class and the noise law of
        E[Lyap_1] - Lyap_0 + d ||F_nor(z_0)||^2 + d_c C_c corr_err_0      s.t. E||e||^2 <= 1,

so E[Lyap_1] <= Lyap_0 - d ||F_nor(z_0)||^2 - d_c C_c corr_err_0 + K* sigma^2 over the whole class. By homogeneity
(every vector scaled by s, every function value by s^2) the sup at variance sigma^2 is K* sigma^2 when the sigma = 0
sup is <= 0 (the deterministic descent with (d, d_c) holds) and +inf otherwise: K* is finite exactly where the
deterministic descent holds, and then it is the noise coefficient. Lyap is the reconstructed Lyapunov function
psi(prox z) + (gamma C_0/2)||F_nor(z)||^2 + C_c (1/n) sum_i ||c_i + grad f_i(x) - grad f(x)||^2.
The translation of (d = eta_hat/9, d_c = Theorem 8's exponent, K*) into Theorem 8's floor is sympy,
:mod:`fedbounds.theory.fednmap.stochastic`.

``scenario``: the finite-scenario lower bound (one sign pattern per trajectory, e = s u, s = +-1, u chosen from the
past; :func:`fedbounds.checks.pep.stochastic.sign_patterns`), at Q = 1 (n clients, 2^n trajectories of the server
step): an admissible instance with an admissible noise law, so its value is a lower bound on the true K*.

``symmetric``: the client-symmetric block form (:mod:`fedbounds.checks.pep.symmetric`): noise leaves and free
corrections are client slots (the corrections' slot zero-mean), the cross-client orthogonality a B-block row. The PEP
the builder makes (the one an exact certificate is of) is the full PEP in a normal form: the zero means are PEPit rows
(``Labels.impose_zero_mean``: the corrections', the start's gradients'), every cross-client orthogonality row is built
(up to :data:`FULL_ROWS_UP_TO` clients), and the start's corrections are pinned to 0 (``Labels.pin_zero``). The pin
loses no instance: the class, the algorithm and the measure are invariant under tilts f_i -> f_i + <a_i, .>,
c_i -> c_i - a_i with sum_i a_i = 0 (the local steps see g_i + c_i, the correction error c_i + grad f_i - grad f, psi
and grad f do not move, and the next correction is c_{i,1} - a_i), and a_i = c_i lies in the span of the leaves fixed
before any noise, so E<e, v> = 0 still holds: every free correction state is the zero one for tilted f_i. The block
solve leaves the pin rows out (free corrections, the same value; measured equal to 1e-9 at n = 3, 4) and its lifted
multipliers are a dual of the pinned PEP. The pin is what makes that PEP provable: free, the tilt in a new direction is
a recession direction, a face every dual lies on (two directions at n = 3), and the exact certificate's restoration
fails on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from fedbounds.checks.fednmap.pep.encoding import _basis_scale, _check, _Round
from fedbounds.checks.pep.certificate import pep_builder
from fedbounds.checks.pep.solve import DEFAULT_REL_TOL, DEFAULT_SOLVERS, Certificate, certify, check_nonnegative, with_proof
from fedbounds.checks.pep.stochastic import NoiseLedger, sign_patterns

__all__ = ["FULL_ROWS_UP_TO", "build_round_spep", "noise_coefficient", "spep_gram_dimension"]

#: block form: up to this n the builder's PEP is the full PEP (every cross-client orthogonality row, the zero means
#: and the corrections' pin as rows; an exact certificate of it is read from the block multipliers); above it, one
#: representative pair per orbit and no such rows (the same block SDP, far fewer rows to build: the speedup table's
#: n = 64, where the full PEP is too large for the exact prover anyway): certified, not provable
FULL_ROWS_UP_TO = 8


class _NoisyRound(_Round):
    """:class:`_Round` whose local gradients carry a noise leaf (the same steps as ``_Round.step``, Algorithm 1)."""

    def noisy_step(self, pt: dict[str, Any], c: list[Any], eta_a: float, eta_s: float, Q: int, variant: str,
                   noise: Callable[[int, int], Any]) -> tuple[Any, list[Any]]:
        z_t, v = pt["z"], pt["v"]
        ys = []
        h_round = self.h_ref
        for i in range(self.n):
            zi = z_t
            self.owner = i
            # each client's prox leaves are increments of the round's shared subgradient, in both forms: chained
            # through the clients (as _Round.step does for the full form), client j's leaf would contain client i's
            # last subgradient, which may depend on e_i, and E<e_i, leaf_j> = 0 would not be valid
            self.h_ref = h_round
            for ell in range(Q):
                if ell == 0:
                    g = pt["grads"][i]
                elif variant == "A":
                    xi, _, _ = self._prox(zi)
                    g, _ = self._grad(i, xi)
                else:
                    g, _ = self._grad(i, zi - self.gamma * v)
                zi = zi - eta_a * (g + noise(i, ell) + v + c[i])  # the stochastic gradient g + e_i^l
            ys.append((z_t - zi) / (eta_a * Q))
        self.owner = None
        self.h_ref = h_round
        ybar = sum(ys[1:], ys[0]) / self.n
        z_next = z_t - (eta_s * eta_a * Q) * ybar
        c_next = [c[i] - ys[i] + ybar for i in range(self.n)]
        return z_next, c_next


def round_start(problem: Any, L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int,
                symmetric: bool) -> tuple[Any, Any, dict[str, Any], list[Any]]:
    """The start of one stochastic round in ``problem``: the n smooth f_i and the convex h, the round (its
    :class:`_NoisyRound`), the start point ``p0`` and the corrections ``c0`` (free with zero sum, or the block form's
    labelled points with the zero mean imposed). Returns ``(rd, labels, p0, c0)``; ``labels`` is None in the full form."""
    from fedbounds.checks.pep.symmetric import Labels
    from PEPit import Point
    from PEPit.functions import ConvexFunction, SmoothFunction

    fs = [problem.declare_function(SmoothFunction, L=L, name=f"f{i}") for i in range(n)]
    h = problem.declare_function(ConvexFunction, name="h")
    labels = Labels(n) if symmetric else None
    rd = _NoisyRound(problem, fs, h, gamma, rho, _basis_scale(L, gamma, eta_a, eta_s, Q), labels)
    p0 = rd.start()
    if labels is None:
        free = [problem.set_initial_point() for _ in range(n - 1)]
        c0 = [*free, -sum(free[1:], free[0]) if free else 0 * p0["z"]]
    else:
        c0 = [labels.point(Point(), i) for i in range(n)]
        labels.zero_mean.add(labels.points[c0[0]][2])
    return rd, labels, p0, c0


def noisy_round(rd: Any, labels: Any, p0: dict[str, Any], c0: list[Any], eta_a: float, eta_s: float, Q: int,
                variant: str) -> tuple[NoiseLedger, dict[str, Any], list[Any]]:
    """The round's Q noisy local steps from ``(p0, c0)``, one noise per client and step drawn from a
    :class:`NoiseLedger` (its rows not yet applied). Returns ``(ledger, p1, c1)``: ``p1`` the end point's quantities."""
    ledger = NoiseLedger(labels)
    current: list[int | None] = [None]

    def noise(i: int, ell: int) -> Any:
        if current[0] != i:
            if current[0] is not None:
                ledger.end()
            ledger.begin(i)
            current[0] = i
        return ledger.draw(owner=i, tag=f"e{i}_{ell}")

    z1, c1 = rd.noisy_step(p0, c0, eta_a, eta_s, Q, variant, noise)
    ledger.end()
    ledger.close_round()
    return ledger, rd.at(z1), c1


def spep_gram_dimension(n: int, Q: int, variant: str = "A") -> int:
    """Full Gram size of one stochastic round from free corrections: the deterministic round's leaves
    (:func:`fedbounds.checks.fednmap.pep.encoding.gram_dimension` at T = 1, free) plus n Q noise leaves."""
    from fedbounds.checks.fednmap.pep.encoding import gram_dimension

    return gram_dimension(n, Q, 1, variant, "free") + n * Q


@pep_builder("fednmap", "fednmap.spep: one stochastic round", 1)
def build_round_spep(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, C_0: float, C_c: float,
    d: float, d_c: float = 0.0, variant: str = "A", sigma2: float = 1.0, orthogonality: bool = True,
    symmetric: bool = False, scenario: bool = False, ratio_budget: float | None = None,
) -> Callable[[], tuple[Any, dict[str, Any]]]:
    """A builder of the per-round noise PEP (module docstring); its value is K* sigma2 (or +inf).

    ``ratio_budget`` b: build measure (a) of the deterministic PEP instead (maximise ||F_nor(z_0)||^2 subject to
    Lyap_0 - E[Lyap_1] <= b), with the noise leaves present; at ``sigma2 = 0`` it must reproduce
    :func:`fedbounds.checks.fednmap.pep.encoding.lyapunov_pep` (T = 1, free corrections, budget b): the sigma = 0 validation.
    ``orthogonality=False`` drops E<e, v> = 0 (the negative control: the value must grow or be unbounded).
    ``scenario=True`` builds the sign-pattern lower bound instead (Q = 1 only; not with ``symmetric``).
    """
    L, rho, gamma, eta_a, eta_s, n, Q, _ = _check(L, rho, gamma, eta_a, eta_s, n, Q, 1, variant, "free")
    C_0, C_c, d, d_c = (check_nonnegative(k, v) for k, v in (("C_0", C_0), ("C_c", C_c), ("d", d), ("d_c", d_c)))
    sigma2 = check_nonnegative("sigma2", sigma2)
    if scenario and (Q != 1 or symmetric):
        raise ValueError("scenario=True is built for Q = 1 and the full (not symmetric) form")

    def build() -> tuple[Any, dict[str, Any]]:
        from PEPit import PEP

        problem = PEP()
        rd, labels, p0, c0 = round_start(problem, L, rho, gamma, eta_a, eta_s, n, Q, symmetric)
        lyap0 = rd.lyap(p0, c0, C_0, C_c)
        margin = d * p0["Fnor"] ** 2 + d_c * C_c * rd.corr_err(p0, c0)
        if scenario:
            return _scenario(problem, rd, p0, c0, lyap0, margin, eta_a, eta_s, n, sigma2, C_0, C_c)
        ledger, p1, c1 = noisy_round(rd, labels, p0, c0, eta_a, eta_s, Q, variant)
        lyap1 = rd.lyap(p1, c1, C_0, C_c)
        full_pep = n <= FULL_ROWS_UP_TO
        ledger.apply(problem, sigma2=sigma2, orthogonality=orthogonality, prune=not full_pep)
        if labels is not None and full_pep:  # the zero means as rows, the corrections pinned to 0 (module docstring)
            labels.impose_zero_mean(problem)
            labels.pin_zero(problem, labels.points[c0[0]][2])
        if ratio_budget is not None:
            problem.set_initial_condition(lyap0 - lyap1 <= ratio_budget)
            problem.set_performance_metric(p0["Fnor"] ** 2)
        else:
            problem.set_performance_metric(lyap1 - lyap0 + margin)
        named: dict[str, Any] = {"labels": labels} if labels is not None else {"lyap0": lyap0, "lyap1": lyap1,
                                                                               "Fnor2_0": p0["Fnor"] ** 2}
        return problem, named

    return build


def _scenario(problem: Any, rd: _NoisyRound, p0: dict[str, Any], c0: list[Any], lyap0: Any, margin: Any, eta_a: float,
              eta_s: float, n: int, sigma2: float, C_0: float, C_c: float) -> tuple[Any, dict[str, Any]]:
    """Q = 1: client i's noise is s_i u_i (u_i a free leaf, ||u_i||^2 <= sigma2, fair independent signs); one server
    step per sign pattern, one set of functions for all; the measure averaged over the 2^n patterns. ``named``: the
    Points ``z0``, ``c0_{i}``, ``u{i}``, the functions ``f{i}``, ``h``, the Expressions ``lyap0``, ``margin``,
    ``lyap1_{k}`` (pattern k of :func:`~fedbounds.checks.pep.stochastic.sign_patterns`)."""
    from PEPit import Point

    us = [Point() for _ in range(n)]
    for u in us:
        problem.add_constraint(u**2 <= sigma2)
    pats = sign_patterns(n)
    total = None
    lyap1 = []
    for pat in pats:
        ys = [p0["grads"][i] + pat[i] * us[i] + p0["v"] + c0[i] for i in range(n)]  # Q = 1: y_i = the local direction
        ybar = sum(ys[1:], ys[0]) / n
        z1 = p0["z"] - (eta_s * eta_a) * ybar
        c1 = [c0[i] - ys[i] + ybar for i in range(n)]
        p1 = rd.at(z1)
        val = rd.lyap(p1, c1, C_0, C_c)
        lyap1.append(val)
        total = val if total is None else total + val
    problem.set_performance_metric(total / len(pats) - lyap0 + margin)
    # what a replay needs (fedbounds.checks.fednmap.spep.replay): the start, the noise directions, the functions'
    # triplets over every pattern's trajectory, and the measure's parts (Lyap_1 per pattern in sign_patterns order)
    named: dict[str, Any] = {"z0": p0["z"], "lyap0": lyap0, "margin": margin, "h": rd.h}
    named.update({f"c0_{i}": c0[i] for i in range(n)})
    named.update({f"u{i}": us[i] for i in range(n)})
    named.update({f"f{i}": f for i, f in enumerate(rd.fs)})
    named.update({f"lyap1_{k}": v for k, v in enumerate(lyap1)})
    return problem, named


def noise_coefficient(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, C_0: float, C_c: float,
    d: float, d_c: float = 0.0, variant: str = "A", orthogonality: bool = True, symmetric: bool = False,
    scenario: bool = False, solvers: Sequence[str] = DEFAULT_SOLVERS, rel_tol: float = DEFAULT_REL_TOL,
    scales: Sequence[float] | None = None,
) -> Certificate:
    """The certificate of K* (module docstring), value = K* (the coefficient of sigma^2), +inf when unbounded.

    The SDP is solved at variance bounds sigma2 in ``scales`` (default 1/eta_hat^2, then 1, 100/eta_hat^2: exact by
    homogeneity) until one certifies; values are divided by that sigma2. The exact certificate (when stored, or proved
    with ``FEDBOUNDS_PROVE=1``) is of the sigma2 = 1 PEP, whatever scale was solved: with ``symmetric`` (block form)
    of the block builder's PEP (the full PEP in a normal form, module docstring), from the lifted block multipliers,
    else (or when that one is not found) of the full-form builder's."""
    eta_hat = eta_s * eta_a * Q
    tried = [1.0 / eta_hat**2, 1.0, 100.0 / eta_hat**2] if scales is None else list(scales)

    def at(s2: float) -> Certificate:
        """The certificate solved at the variance bound ``s2``, rescaled to sigma2 = 1."""
        build = build_round_spep(L, rho, gamma, eta_a, eta_s, n, Q, C_0, C_c, d, d_c, variant, s2, orthogonality,
                                 symmetric, scenario)
        if symmetric:
            from fedbounds.checks.pep.symmetric import solve_symmetric

            cert = certify(build, solvers=solvers, rel_tol=rel_tol, solve=solve_symmetric, prove=s2 == 1.0)
        else:
            cert = certify(build, solvers=solvers, rel_tol=rel_tol, prove=s2 == 1.0)
        cert = _rescaled(cert, 1.0 / s2)
        if cert.certified and not cert.proved and (s2 != 1.0 or symmetric):
            # the exact certificate is of the sigma2 = 1 PEP (the multipliers do not depend on sigma2, the value is
            # linear in it). In block form, of the block builder's PEP (its PEPit rows carry the zero means,
            # Labels.impose_zero_mean: it is the full PEP), proved from the lifted block multipliers; when that is
            # not stored (or not found), of the full-form builder's PEP (the files proved before those rows existed)
            for form in ((True, False) if symmetric and s2 != 1.0 else (False,)):
                cert = with_proof(cert, build_round_spep(L, rho, gamma, eta_a, eta_s, n, Q, C_0, C_c, d, d_c, variant,
                                                         1.0, orthogonality, form, scenario))
                if cert.proved:
                    break
        return cert

    return first_decided(at(s2) for s2 in tried)


def first_decided(certs: Iterable[Certificate]) -> Certificate:
    """The first of ``certs`` that is certified or unbounded, else the first one: the same SDP solved at several scales
    (exact rescalings of one another) until one decides; the later scales are not solved once one has."""
    first = None
    for cert in certs:
        if cert.certified or cert.unbounded:
            return cert
        first = cert if first is None else first
    assert first is not None, "no scale to solve at"
    return first


def _rescaled(cert: Certificate, factor: float) -> Certificate:
    from fedbounds.checks.fednmap.pep.encoding import _rescaled as rescale

    return rescale(cert, factor) if factor != 1.0 else cert


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)
