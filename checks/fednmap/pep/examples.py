"""PEPit-style entry points to FedNMap's PEP certificates (``fedbounds check --claim fednmap.pep``).

Each function follows the convention of PEPit's examples (one function per method and measure, keyword
arguments, a ``verbose`` level, and a return value ``(pepit_tau, theoretical_tau)``: the worst case the PEP
certifies beside the value the paper's guarantee gives). They call the PEP encodings of
:mod:`fedbounds.checks.fednmap.pep.encoding` and the theory layer's formulas; they retype neither.

``pepit_tau`` is ``nan`` when the two-solver certificate is not ``certified`` (the worst case is then unknown,
never a pass or a fail) and ``inf`` when every solver reports the worst case unbounded.

Paper: Huang, Pu, Johansson, FedNMap, arXiv 2602.03357; the reconstruction and the PEP results: the
repository's docs/fednmap-reconstruction.md, sections 4 and 10.
"""

from __future__ import annotations

import math

from fedbounds.checks.fednmap.pep.encoding import (
    descent_check,
    largest_certified_step,
    pl_contraction_pep,
    theorem5_steps,
    theorem8_exponent,
)
from fedbounds.checks.pep.examples import check_integer, check_number, check_verbose, print_guarantees, tau

__all__ = ["wc_fednmap_descent", "wc_fednmap_largest_step", "wc_fednmap_pl_contraction"]


def wc_fednmap_descent(
    L: float = 1.0,
    rho: float = 0.1,
    n: int = 2,
    Q: int = 1,
    T: int = 1,
    step_multiple: float = 1.0,
    C_0: float = 1.0,
    C_c: float = 1.0,
    symmetric: bool = False,
    verbose: int = 1,
) -> tuple[float, float]:
    """Worst case of FedNMap's reconstructed Lyapunov descent over T deterministic rounds.

    **Problem class.** psi = f + phi with f = (1/n) sum_i f_i, every f_i L-smooth (possibly nonconvex;
    Assumption 2) and phi rho-weakly convex (Assumption 3), deterministic gradients (sigma = 0).

    **Algorithm.** FedNMap (Algorithm 1 as reconstructed): x_t = prox_{gamma phi}(z_t); each client takes Q
    normal-map steps z_i <- z_i - eta_a (grad f_i(x_i) + v_t + c_i) with its correction c_i; the server moves
    z_{t+1} = z_t - eta_s eta_a Q ybar. The steps are ``step_multiple`` times Theorem 5's printed maxima at
    (L, rho, Q), window m = 1: gamma = 1/(5(rho + L)), eta_a and eta_hat = eta_s eta_a Q at their bounds,
    all scaled by ``step_multiple`` except gamma and eta_s.

    **Performance measure.** The worst value of min_{t<T} ||F_nor(z_t)||^2 over every instance of the class and
    every start z_0 (corrections c_i = 0), subject to Lyap_0 - Lyap_T <= 1, with the Lyapunov function
    Lyap = psi(prox z) + (gamma C_0/2) ||F_nor(z)||^2 + C_c (1/n) sum_i ||c_i + grad f_i(x) - grad f(x)||^2.

    **Theoretical guarantee** (reconstructed, docs/fednmap-reconstruction.md section 4): the per-round descent
    Lyap_{t+1} <= Lyap_t - (eta_hat/9) ||F_nor(z_t)||^2 telescopes to

        min_{t<T} ||F_nor(z_t)||^2 <= 9 / (eta_hat T) (Lyap_0 - Lyap_T),

    so ``theoretical_tau`` = 9/(eta_hat T) (the descent coefficient from the theory layer) and the guarantee
    holds over the class iff ``pepit_tau <= theoretical_tau``. C_0 = C_c = 1 are the constants the PEP
    recovered (claim ``fednmap.pep.lyapunov_constants``; committed grid in
    ``fedbounds.theory.fednmap.pep_evidence``).

    **References.** Huang, Pu, Johansson, FedNMap (arXiv 2602.03357), Theorem 5 and Appendix C.2; PEP: Drori
    and Teboulle (2014), Taylor, Hendrickx, Glineur (2017); PEPit: Goujaud et al. (2024).

    Args:
        L: smoothness of every f_i, > 0.
        rho: weak-convexity modulus of phi, >= 0.
        n: number of clients, integer >= 1.
        Q: local steps per round, integer >= 1.
        T: rounds, integer >= 1.
        step_multiple: eta_a and eta_hat as this multiple of Theorem 5's printed maxima, > 0.
        C_0: the Lyapunov weight of ||F_nor||^2, >= 0.
        C_c: the Lyapunov weight of the correction error, >= 0.
        symmetric: solve the client-symmetric block form (same worst case, smaller SDP for n >= 3).
        verbose: -1 silent; 0 print the two guarantees; 1 also the solvers' statuses, values and gaps.

    Returns:
        ``(pepit_tau, theoretical_tau)``: the certified worst ratio min_t ||F_nor(z_t)||^2 / (Lyap_0 - Lyap_T)
        (nan if not certified by both Clarabel and SCS, inf if unbounded) and 9/(eta_hat T).

    Example:
        >>> pepit_tau, theoretical_tau = wc_fednmap_descent(L=1, rho=0.1, n=2, Q=1, T=1, verbose=0)
        *** Example file: worst-case Lyapunov descent of FedNMap (n=2, Q=1, T=1, steps 1x printed) ***
            PEP guarantee (certified):	min_t ||F_nor(z_t)||^2 <= 698.1 (Lyap_0 - Lyap_T)
            Theoretical guarantee:	min_t ||F_nor(z_t)||^2 <= 5124 (Lyap_0 - Lyap_T)
    """
    verbose = check_verbose(verbose)
    L, rho = check_number("L", L), check_number("rho", rho, strict=False)
    n, Q, T = check_integer("n", n), check_integer("Q", Q), check_integer("T", T)
    step_multiple = check_number("step_multiple", step_multiple)
    C_0, C_c = check_number("C_0", C_0, strict=False), check_number("C_c", C_c, strict=False)
    steps = theorem5_steps(L, rho, Q)
    d = step_multiple * steps["descent_coef"]
    cert = descent_check(L, rho, steps["gamma"], step_multiple * steps["eta_a"], steps["eta_s"], n, Q, T, C_0, C_c, d,
                         symmetric=symmetric)
    pepit_tau = tau(cert, None if cert.value is None else cert.value / (d * T))
    theoretical_tau = 1.0 / (d * T)
    print_guarantees(verbose, f"worst-case Lyapunov descent of FedNMap (n={n}, Q={Q}, T={T}, steps {step_multiple:g}x printed)", cert,
           f"min_t ||F_nor(z_t)||^2 <= {pepit_tau:.4g} (Lyap_0 - Lyap_T)",
           f"min_t ||F_nor(z_t)||^2 <= {theoretical_tau:.4g} (Lyap_0 - Lyap_T)")
    return pepit_tau, theoretical_tau


def wc_fednmap_pl_contraction(
    L: float = 1.0,
    rho: float = 0.1,
    n: int = 2,
    Q: int = 1,
    mu: float = 0.1,
    step_multiple: float = 16.0,
    C_0: float = 1.0,
    C_c: float = 1.0,
    verbose: int = 1,
) -> tuple[float, float]:
    """Worst one-round contraction of FedNMap's Lyapunov function under the proximal-PL condition.

    **Problem class.** As in :func:`wc_fednmap_descent` (f_i L-smooth, phi rho-weakly convex, sigma = 0), plus
    the proximal-PL inequality (2) of the paper with constant mu (Assumption 4), imposed at the points the round
    visits: psi(x_t) - psi* <= ||F_nor(z_t)||^2 / (2 mu), t = 0, 1. These are necessary conditions only (PEPit has
    no composite proximal-PL interpolation class), so the certified factor is an upper bound on the true one.

    **Algorithm.** One FedNMap round from an arbitrary state (z_0 and corrections c_i with sum 0), steps
    ``step_multiple`` times Theorem 5's printed maxima at (L, rho, Q), window m = 1 (as in
    :func:`wc_fednmap_descent`).

    **Performance measure.** The worst factor q = Lyap_1 / Lyap_0, the Lyapunov function taken relative to psi*
    (Lyap = psi(prox z) - psi* + (gamma C_0/2) ||F_nor(z)||^2 + C_c (1/n) sum_i ||c_i + grad f_i(x) - grad f(x)||^2).

    **Theoretical guarantee** (Theorem 8, deterministic part, with the reconstructed Lyapunov function):

        Lyap_1 <= (1 - 2 eta_hat mu / (9 (1 + gamma mu C_0))) Lyap_0,

    so ``theoretical_tau`` = 1 - 2 eta_hat mu / (9 (1 + gamma mu C_0)) (the exponent from the theory layer) and
    the guarantee holds over the class iff ``pepit_tau <= theoretical_tau``. The study
    ``fednmap.pep.shape_exponent`` (our reconstructed shape at the C_0 = C_c = 1 we chose, 16 x the printed steps):
    the certified exponent 1 - q is about 7.4 times that exponent at C_0 = 1 where the SDP solves (a point of a
    curve over C_0). Theorem 8's exponent itself is checked on a searched Lyapunov function at the printed steps
    (``fednmap.pep.theorem8_exponent``). At the printed steps (``step_multiple=1``) the contraction, of order 1e-4, is below SCS's accuracy
    and the certificate is inconclusive (``pepit_tau`` nan).

    **References.** Huang, Pu, Johansson, FedNMap (arXiv 2602.03357), Theorem 8; PEPit: Goujaud et al. (2024).

    Args:
        L: smoothness of every f_i, > 0.
        rho: weak-convexity modulus of phi, >= 0.
        n: number of clients, integer >= 1.
        Q: local steps per round, integer >= 1.
        mu: proximal-PL constant, > 0.
        step_multiple: eta_a and eta_hat as this multiple of Theorem 5's printed maxima, > 0.
        C_0: the Lyapunov weight of ||F_nor||^2, >= 0.
        C_c: the Lyapunov weight of the correction error, >= 0.
        verbose: -1 silent; 0 print the two guarantees; 1 also the solvers' statuses, values and gaps.

    Returns:
        ``(pepit_tau, theoretical_tau)``: the certified worst factor q (nan if not certified by both Clarabel and
        SCS, inf if unbounded) and Theorem 8's factor 1 - 2 eta_hat mu / (9 (1 + gamma mu C_0)).

    Example:
        >>> pepit_tau, theoretical_tau = wc_fednmap_pl_contraction(L=1, rho=0.1, n=2, Q=1, mu=0.1, step_multiple=16, verbose=0)
        *** Example file: worst-case PL contraction of FedNMap (n=2, Q=1, mu=0.1, steps 16x printed) ***
            PEP guarantee (proved):	Lyap_1 <= 0.99543 Lyap_0
            Theoretical guarantee:	Lyap_1 <= 0.99939 Lyap_0
    """
    verbose = check_verbose(verbose)
    L, rho, mu = check_number("L", L), check_number("rho", rho, strict=False), check_number("mu", mu)
    n, Q = check_integer("n", n), check_integer("Q", Q)
    step_multiple = check_number("step_multiple", step_multiple)
    C_0, C_c = check_number("C_0", C_0, strict=False), check_number("C_c", C_c, strict=False)
    steps = theorem5_steps(L, rho, Q)
    cert = pl_contraction_pep(L, rho, steps["gamma"], step_multiple * steps["eta_a"], steps["eta_s"], n, Q, mu, C_0, C_c)
    pepit_tau = tau(cert, None if cert.value is None else 1.0 + cert.value)
    theoretical_tau = 1.0 - theorem8_exponent(step_multiple * steps["eta_hat"], mu, steps["gamma"], C_0)
    print_guarantees(verbose, f"worst-case PL contraction of FedNMap (n={n}, Q={Q}, mu={mu:g}, steps {step_multiple:g}x printed)", cert,
           f"Lyap_1 <= {pepit_tau:.5g} Lyap_0", f"Lyap_1 <= {theoretical_tau:.5g} Lyap_0")
    return pepit_tau, theoretical_tau


def wc_fednmap_largest_step(
    L: float = 1.0,
    rho: float = 0.1,
    n: int = 2,
    Q: int = 1,
    T: int = 1,
    C_0: float = 2.0,
    C_c: float = 1.0,
    k_start: float = 16.0,
    k_max: float = 4096.0,
    tol: float = 0.05,
    verbose: int = 1,
) -> tuple[float, float]:
    """The largest effective step eta_hat at which FedNMap's reconstructed descent is still certified over the class,
    beside Theorem 5's printed bound.

    **Problem class, algorithm, measure.** As in :func:`wc_fednmap_descent`, with eta_a and eta_hat both scaled by
    a multiplier k of Theorem 5's printed maxima (gamma and eta_s fixed), and the descent coefficient eta_hat/9 with
    them. A multiplier is certified when the worst ratio w (eta_hat/9) T is <= 1 with the Lyapunov constants
    (``C_0``, ``C_c``): during the search by Clarabel alone (optimal, agreeing, <= 1), at the end by Clarabel and SCS.
    The search doubles k from ``k_start`` up to ``k_max``, then bisects to the relative width ``tol``; it assumes the
    certified set is an interval [0, k*].

    **Theoretical guarantee** (Theorem 5, verbatim): eta_hat <= (1 - gamma rho) / (100 m sqrt(L^2 + 1/gamma^2)) with
    m = 1, from the theory layer; ``theoretical_tau`` is that bound and ``pepit_tau`` = k* times it. Claim
    ``fednmap.pep.largest_step`` (a remark: the printed steps are conservative): k* = 192 at rho = 0.1, n = 2, Q = 1,
    T = 1 with (C_0, C_c) = (2, 1) (committed in ``fedbounds.theory.fednmap.pep_evidence.STEPS``).

    **References.** Huang, Pu, Johansson, FedNMap (arXiv 2602.03357), Theorem 5; PEPit: Goujaud et al. (2024).

    Args:
        L: smoothness of every f_i, > 0.
        rho: weak-convexity modulus of phi, >= 0.
        n: number of clients, integer >= 1.
        Q: local steps per round, integer >= 1.
        T: rounds, integer >= 1.
        C_0: the Lyapunov weight of ||F_nor||^2, >= 0.
        C_c: the Lyapunov weight of the correction error, >= 0.
        k_start: the first multiplier tried, > 0 (the SDPs at the printed steps are badly conditioned).
        k_max: the largest multiplier tried, >= k_start.
        tol: relative width of the final bisection, > 0.
        verbose: -1 silent; 0 print the two bounds; 1 also the final certificate and the number of solves.

    Returns:
        ``(pepit_tau, theoretical_tau)``: the largest certified eta_hat (nan if k_start is not certified or the final
        two-solver certificate is not) and Theorem 5's printed bound on eta_hat.

    Example:
        >>> pepit_tau, theoretical_tau = wc_fednmap_largest_step(L=1, rho=0.1, n=2, Q=1, T=1, verbose=0)
        *** Example file: largest certified step of FedNMap (n=2, Q=1, T=1, C_0=2, C_c=1) ***
            PEP guarantee (proved):	eta_hat <= 0.3372 (192 x printed)
            Theoretical guarantee:	eta_hat <= 0.001756
    """
    verbose = check_verbose(verbose)
    L, rho = check_number("L", L), check_number("rho", rho, strict=False)
    n, Q, T = check_integer("n", n), check_integer("Q", Q), check_integer("T", T)
    C_0, C_c = check_number("C_0", C_0, strict=False), check_number("C_c", C_c, strict=False)
    k_start, tol = check_number("k_start", k_start), check_number("tol", tol)
    k_max = check_number("k_max", k_max, low=k_start, strict=False)
    steps = theorem5_steps(L, rho, Q)
    res = largest_certified_step(L, rho, steps["gamma"], steps["eta_a"], steps["eta_s"], n, Q, T, steps["descent_coef"],
                                 [C_0], [C_c], k_max=k_max, tol=tol, k_start=k_start)
    theoretical_tau = steps["eta_hat"]
    certified = res.certificate is not None and res.certificate.certified and res.k is not None
    pepit_tau = res.k * theoretical_tau if certified else math.nan
    if verbose >= 0:
        if verbose >= 1 and res.certificate is not None:
            print(f"(PEP) {res.certificate.summary()}; {res.solves} solves")
        status = res.certificate.status if res.certificate is not None else "inconclusive"
        k = f"{res.k:g}" if res.k is not None else "no"
        print(f"*** Example file: largest certified step of FedNMap (n={n}, Q={Q}, T={T}, C_0={C_0:g}, C_c={C_c:g}) ***")
        print(f"\tPEP guarantee ({status}):\teta_hat <= {pepit_tau:.4g} ({k} x printed)")
        print(f"\tTheoretical guarantee:\teta_hat <= {theoretical_tau:.4g}")
    return pepit_tau, theoretical_tau
