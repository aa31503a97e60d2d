"""PEPit-style entry points to DS FedProxGrad's PEP certificates (``fedbounds check --claim ds.pep``).

The functions follow the convention of PEPit's examples (keyword arguments, a ``verbose`` level, and a return
value ``(pepit_tau, theoretical_tau)``: the worst case the PEP certifies beside the value the paper's lemma
gives). They call the PEP encoding of :mod:`fedbounds.checks.ds_fedproxgrad.pep.encoding` and the theory layer's formulas
(through :func:`~fedbounds.checks.ds_fedproxgrad.pep.encoding.theory_values`); they retype neither.

``pepit_tau`` is ``nan`` when the two-solver certificate is not ``certified`` (the worst case is then unknown,
never a pass or a fail) and ``inf`` when every solver reports the worst case unbounded.

Paper: Arif, DS FedProxGrad, arXiv 2512.08671; notes: the repository's docs/ds-fedproxgrad-notes.md, section 1.4.
"""

from __future__ import annotations

import math

from fedbounds.checks.ds_fedproxgrad.pep.encoding import largest_absorbed_gamma, lemma52_pep, theory_values
from fedbounds.checks.pep.examples import check_integer, check_number, check_verbose, print_guarantees, tau

__all__ = ["wc_ds_fedproxgrad_absorption", "wc_ds_fedproxgrad_lemma52"]


def wc_ds_fedproxgrad_lemma52(
    L_f: float = 1.0,
    L_r: float = 1.0,
    lam: float = 0.5,
    B: float = 1.0,
    N: int = 2,
    eta: float | None = None,
    gamma_r: float | None = None,
    verbose: int = 1,
) -> tuple[float, float]:
    """Worst case of DS FedProxGrad's one-round descent (Lemma 5.2, eq. (14)), deterministic part.

    **Problem class.** F = f + lambda r with f = (1/N) sum_i f_i, each f_i L_f-smooth and r L_r-smooth (A1(i));
    the dissimilarity (8) in its homogeneous part (G = 0) at the round's point, (1/N) sum_i ||grad f_i(x)||^2 <=
    B^2 ||grad f(x)||^2; no gradient noise (sigma = 0).

    **Algorithm.** One round, eqs. (3)-(6): each client returns an inexact local prox point
    y_i = x - eta grad f_i(x) + eta e_i with ||e_i|| <= gamma_r ||grad f_i(x)|| (the relative error (10)); the
    server averages and takes the fairness step x+ = (1/N) sum_i y_i - eta lambda grad r(x).

    **Performance measure.** The worst value of F(x+) - F(x) - Xi_det over the class, subject to
    ||grad F(x)||^2 = 1, where Xi_det = xi ||grad r(x)||^2 is the deterministic part of the remainder (22)
    (xi evaluated by the theory layer).

    **Theoretical guarantee** (Lemma 5.2, as printed, under eta <= 1/(6 L_F) (A4(iv)) and
    gamma_r <= 1/(sqrt(10) B) (the absorption threshold, eq. (21))):

        F(x+) - F(x) <= -eta Phi ||grad F(x)||^2 + Xi,   Phi = 1/4,

    so ``theoretical_tau`` = -eta Phi and the lemma holds over the class iff ``pepit_tau <= theoretical_tau``.
    Claim ``ds.pep.lemma5_2``: at the corner (eta = 1/(6 L_F), gamma_r = 1/(sqrt(10) B), N = 2, L_f = L_r = 1,
    lambda = 1/2, B = 1) the certified worst case is -0.0626221, i.e. Phi_PEP = -pepit_tau/eta = 0.5636,
    2.25 x the printed 1/4.

    **References.** Arif, DS FedProxGrad (arXiv 2512.08671), Lemma 5.2, eqs. (10), (14), (20)-(22); PEP: Drori and
    Teboulle (2014), Taylor, Hendrickx, Glineur (2017); PEPit: Goujaud et al. (2024).

    Args:
        L_f: smoothness of every f_i, > 0.
        L_r: smoothness of the fairness regulariser r, > 0.
        lam: the fairness weight lambda, >= 0.
        B: the dissimilarity constant B of (8), > 0.
        N: number of clients, integer >= 1.
        eta: the step; default the paper's largest, 1/(6 L_F) with L_F = L_f + lambda L_r.
        gamma_r: the relative inexactness of (10); default the paper's threshold 1/(sqrt(10) B).
        verbose: -1 silent; 0 print the two guarantees; 1 also the solvers' statuses, values and gaps.

    Returns:
        ``(pepit_tau, theoretical_tau)``: the certified worst (F(x+) - F(x) - Xi_det) / ||grad F(x)||^2 (nan if not
        certified by both Clarabel and SCS, inf if unbounded) and -eta Phi = -eta/4.

    Example:
        >>> pepit_tau, theoretical_tau = wc_ds_fedproxgrad_lemma52(L_f=1, L_r=1, lam=0.5, B=1, N=2, verbose=0)
        *** Example file: worst-case one-round descent of DS FedProxGrad (N=2, eta=0.1111, gamma_r=0.3162) ***
            PEP guarantee (proved):	F(x+) - F(x) - Xi <= -0.06262 ||grad F(x)||^2
            Theoretical guarantee:	F(x+) - F(x) - Xi <= -0.02778 ||grad F(x)||^2
    """
    verbose = check_verbose(verbose)
    L_f, L_r, B = check_number("L_f", L_f), check_number("L_r", L_r), check_number("B", B)
    lam, N = check_number("lam", lam, strict=False), check_integer("N", N)
    paper = theory_values(L_f, L_r, lam, B, 1.0, 0.0)
    eta = paper["eta_max"] if eta is None else check_number("eta", eta)
    gamma_r = paper["gamma_absorb"] if gamma_r is None else check_number("gamma_r", gamma_r, strict=False)
    tv = theory_values(L_f, L_r, lam, B, eta, gamma_r)
    cert = lemma52_pep(L_f, L_r, lam, B, eta, gamma_r, tv["xi"], N)
    pepit_tau = tau(cert, cert.value)
    theoretical_tau = -eta * tv["Phi"]
    print_guarantees(verbose, f"worst-case one-round descent of DS FedProxGrad (N={N}, eta={eta:.4g}, gamma_r={gamma_r:.4g})", cert,
                     f"F(x+) - F(x) - Xi <= {pepit_tau:.4g} ||grad F(x)||^2",
                     f"F(x+) - F(x) - Xi <= {theoretical_tau:.4g} ||grad F(x)||^2")
    return pepit_tau, theoretical_tau


def wc_ds_fedproxgrad_absorption(
    L_f: float = 1.0,
    L_r: float = 1.0,
    lam: float = 0.5,
    B: float = 1.0,
    N: int = 2,
    eta: float | None = None,
    tol: float = 1e-2,
    verbose: int = 1,
) -> tuple[float, float]:
    """The largest inexactness gamma_r at which Lemma 5.2's Phi = 1/4 still holds over the class, and the paper's.

    **Problem class and algorithm.** As in :func:`wc_ds_fedproxgrad_lemma52` (f_i L_f-smooth, r L_r-smooth, the
    dissimilarity (8) with G = 0 at x, the relative error (10), sigma = 0; one round of eqs. (3)-(6)).

    **Performance measure.** The largest gamma_r in [0, 4] for which the certified Phi_PEP(gamma_r) =
    -w(gamma_r)/eta is at least the printed Phi = 1/4, by bisection to ``tol`` (relative to the printed
    threshold). Phi_PEP decreases as gamma_r grows (the class grows). A probe the two solvers do not certify
    counts as failing, so the result is a certified lower bound on the threshold (possibly below it).

    **Theoretical guarantee** (Lemma 5.2's proof, the absorption step (21)): Phi = 1/4 once
    gamma_r <= 1/(sqrt(10) B), so ``theoretical_tau`` = 1/(sqrt(10) B) (from the theory layer) and the printed
    threshold is sufficient over the class iff ``pepit_tau >= theoretical_tau``. Claim ``ds.pep.absorption``:
    0.648 = 2.05 x 1/(sqrt(10) B) at eta = 1/(6 L_F), N = 2, L_f = L_r = 1, lambda = 1/2, B = 1.

    **References.** Arif, DS FedProxGrad (arXiv 2512.08671), Lemma 5.2 and eq. (21); PEPit: Goujaud et al. (2024).

    Args:
        L_f: smoothness of every f_i, > 0.
        L_r: smoothness of the fairness regulariser r, > 0.
        lam: the fairness weight lambda, >= 0.
        B: the dissimilarity constant B of (8), > 0.
        N: number of clients, integer >= 1.
        eta: the step; default the paper's largest, 1/(6 L_F).
        tol: bisection tolerance relative to 1/(sqrt(10) B), > 0 (each halving is one more pair of solves).
        verbose: -1 silent; 0 print the two thresholds; 1 also the number of solves.

    Returns:
        ``(pepit_tau, theoretical_tau)``: the certified threshold (nan if even gamma_r = 0 is not certified) and
        1/(sqrt(10) B).

    Example:
        >>> pepit_tau, theoretical_tau = wc_ds_fedproxgrad_absorption(L_f=1, L_r=1, lam=0.5, B=1, N=2, tol=0.05, verbose=0)
        *** Example file: absorption threshold of DS FedProxGrad's Lemma 5.2 (N=2, eta=0.1111) ***
            PEP guarantee:	Phi_PEP >= 1/4 for gamma_r <= 0.6406
            Theoretical guarantee:	Phi >= 1/4 for gamma_r <= 0.3162
    """
    verbose = check_verbose(verbose)
    L_f, L_r, B = check_number("L_f", L_f), check_number("L_r", L_r), check_number("B", B)
    lam, N, tol = check_number("lam", lam, strict=False), check_integer("N", N), check_number("tol", tol)
    paper = theory_values(L_f, L_r, lam, B, 1.0, 0.0)
    eta = paper["eta_max"] if eta is None else check_number("eta", eta)
    gamma, printed, solves = largest_absorbed_gamma(L_f, L_r, lam, B, eta, N, tol=tol * paper["gamma_absorb"])
    pepit_tau = math.nan if gamma is None else float(gamma)
    if verbose >= 0:
        if verbose >= 1:
            print(f"(PEP) {solves} certificates (Clarabel and SCS each) in the bisection")
        print(f"*** Example file: absorption threshold of DS FedProxGrad's Lemma 5.2 (N={N}, eta={eta:.4g}) ***")
        print(f"\tPEP guarantee:\tPhi_PEP >= 1/4 for gamma_r <= {pepit_tau:.4g}")
        print(f"\tTheoretical guarantee:\tPhi >= 1/4 for gamma_r <= {printed:.4g}")
    return pepit_tau, printed
