"""The printed constants, pinned by numbers worked out by hand (issue 12, item 5).

Each formula of theory/fednmap/formulas.py and theory/ds_fedproxgrad/formulas.py is evaluated exactly (sympy
rationals) at one generic point, and compared with a value derived by hand from the paper's printed text, with the
derivation in a comment. The points avoid 1 for every symbol a constant multiplies or an exponent acts on, so that a
constant or an exponent doubled or halved changes the value. The derived formulas are also pinned by their proof
steps (tests/theory/test_derived_reach.py, test_proof_steps.py); this file is the transcription check.
"""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.theory.core import symbols as S
from fedbounds.theory.ds_fedproxgrad import formulas as ds
from fedbounds.theory.fednmap import formulas as fn

R_ = sp.Rational

# FedNMap point: L = 2, rho = 1, gamma = 1/20 (<= 1/(5 (rho + L)) = 1/15), m = 4, Q = 3, n = 5, mu = 1/2, sigma^2 = 7,
# eta_a = 1/100, eta_hat = 1/1000, T = 10, C_0 = 2, E[L_0] = 11, eps = 1/10, Delta_f = 3, grad0_sq = 13.
# Then 1 - gamma rho = 19/20 and S = sqrt(L^2 + 1/gamma^2) = sqrt(404) = 2 sqrt(101).
FN_POINT = {S.L: 2, S.rho: 1, S.gamma: R_(1, 20), S.m: 4, S.Q: 3, S.n: 5, S.mu: R_(1, 2), S.sigma2: 7, S.eta_a: R_(1, 100),
            S.eta_hat: R_(1, 1000), S.T: 10, S.C_0: 2, S.EL_0: 11, S.epsilon: R_(1, 10), S.Delta_f: 3, S.grad0_sq: 13}
SQ101 = sp.sqrt(101)

FN_EXPECTED = {
    # 1/(5 (1 + 2))
    "theorem5_gamma_max": R_(1, 15),
    # (19/20)/(100 * 4 * 2 sqrt(101)) = 19/(16000 sqrt(101))
    "theorem5_eta_hat_max": 19 / (16000 * SQ101),
    # (19/20)/(100 * 3 * sqrt(4 * 404)) = (19/20)/(1200 sqrt(101)) = 19/(24000 sqrt(101))
    "theorem5_eta_a_max": 19 / (24000 * SQ101),
    # window: (19/20)/(100 * (1/1000) * 2 sqrt(101)) = (19/20) * 5/sqrt(101) = 19/(4 sqrt(101)) ~ 0.47, floor 0
    "window_real": 19 / (4 * SQ101),
    # 2 * (1/1000) * (1/2) / (9 (1 + (1/20)(1/2) 2)) = (1/1000)/(9 * 21/20) = 1/9450
    "theorem8_rate_exponent": R_(1, 9450),
    # 36 * 7/(4 * 5 * (1/2) * 3) = 252/30
    "theorem8_variance": R_(42, 5),
    # 12100 * (1/100)^2 * 3 * 2^2 * 7/((1/2)(19/20)^2) = (121/100) * 84 * 800/361 = 81312/361
    "theorem8_drift": R_(81312, 361),
    # exp(-10/9450) * 11
    "theorem8_transient": 11 * sp.exp(-R_(1, 945)),
    # sqrt(7/(5 * 3 * 10)) + 1/10
    "theorem5_rate": sp.sqrt(R_(7, 150)) + R_(1, 10),
    # 2 * 3 * 7/(5 * 3 * 10^-4) + 2 * 3 * 100 + 13 * 100 = 28000 + 600 + 1300
    "theorem5_complexity": 29900,
    # (3) 7/(5 * 3 * (1/10)(1/4)) + sqrt(4 * 7/((1/10)(1/2)(7/2)^2)) = 56 + sqrt(320/7)
    "theorem8_complexity": 56 + sp.sqrt(R_(320, 7)),
    # 7/(5 * 3 * 10) + 7/100 = 7/60
    "theorem8_rate": R_(7, 60),
    # 72 * 7/((19/(4 sqrt(101))) * 5 * (1/2) * 3) = 504 * 8 sqrt(101)/285 = 1344 sqrt(101)/95, plus the drift
    "theorem8_floor_coupled_upper": 1344 * SQ101 / 95 + R_(81312, 361),
    # (19/20) * 5 * (1/2) * 3 * (1/10)/(21600 * 2 sqrt(101) * 7) = (57/80)/(302400 sqrt(101))
    "theorem8_eta_hat_for_variance": R_(57, 80) / (302400 * SQ101),
    # (19/20) sqrt((1/10)(1/2)/(36300 * 3 * 4 * 7)) = (19/20)/sqrt(60984000)
    "theorem8_eta_a_for_drift": R_(19, 20) / sp.sqrt(60984000),
    # 9 (1 + 1/20)/(2 (1/1000)(1/2)) log(3 * 11 * 10) = 9450 log(330)
    "theorem8_rounds_for_transient": 9450 * sp.log(330),
    # (19/20) sqrt(3 (1/2)(1/10)/36300)/(2 sqrt(7)) = (19/20) sqrt(1/242000)/(2 sqrt 7)
    "theorem8_eta_hat_for_drift_eta_s1": R_(19, 40) / sp.sqrt(242000 * 7),
    # (19/20)/(100 * 1 * 2 sqrt(101)): the eta_hat cap at m = 1
    "eta_hat_max_window1": 19 / (4000 * SQ101),
    # rounds at eta_hat = 1: 9 (21/20)/(2 * 1/2) log 330 = (189/20) log 330, times max(1/eta_hat_for_variance, 1/cap at m = 1)
    # = max(24192000 sqrt(101)/57, 4000 sqrt(101)/19) = 24192000 sqrt(101)/57; product 76204800 sqrt(101) log(330)/19
    "theorem8_complexity_derived": R_(76204800, 19) * SQ101 * sp.log(330),
    # (1/20)/(19/20)
    "nat_nor_factor": R_(1, 19),
    # (1/19)^2 ||F_nor||^2
    "nat_nor_sq_bound": S.Fnor2 / 361,
    # psi_gap + (1/20)(2)/2 ||F_nor||^2
    "lyapunov_merit": S.psi_gap + S.Fnor2 / 20,
    # 1 - 1/9450
    "lyapunov_round_factor": R_(9449, 9450),
    # 2 + 20
    "nor_nat_reverse_factor": 22,
}


@pytest.mark.parametrize("name", sorted(FN_EXPECTED))
def test_fednmap_formula_at_a_point(name: str) -> None:
    value = getattr(fn, name).subs(FN_POINT)
    assert sp.simplify(value - FN_EXPECTED[name]) == 0, f"fednmap {name} = {value}, hand value {FN_EXPECTED[name]}"


def test_fednmap_complexity_derived_cap_branch() -> None:
    # sigma^2 = 1/1000: 1/eta_hat_for_variance = 43200 * 80 sqrt(101)/(57 * 1000) = 3456 sqrt(101)/57 < 1/cap = 12000 sqrt(101)/57,
    # so the m = 1 cap binds: (189/20) log(330) * 12000 sqrt(101)/57 = 37800 sqrt(101) log(330)/19
    value = fn.theorem8_complexity_derived.subs({**FN_POINT, S.sigma2: R_(1, 1000)})
    assert sp.simplify(value - R_(37800, 19) * SQ101 * sp.log(330)) == 0


def test_fednmap_lyapunov_pieces_at_a_point() -> None:
    F2, psi, corr, Cc, Lt = S.Fnor2, S.psi_gap, S.corr_err, S.C_c, S.L_t
    # L_t = psi_gap + (gamma C_0/2) F2 + C_c corr = psi_gap + F2/20 + C_c corr
    assert sp.expand(fn.lyapunov.subs(FN_POINT) - (psi + F2 / 20 + Cc * corr)) == 0
    # (1 + gamma mu C_0)/(2 mu) F2 = (21/20) F2
    assert sp.expand(fn.lyapunov_merit_pl_upper.subs(FN_POINT) - R_(21, 20) * F2) == 0
    # eta_hat/9 F2 = F2/9000
    assert sp.expand(fn.lyapunov_descent_per_round.subs(FN_POINT) - F2 / 9000) == 0
    # window factor 1 - 4/9450; bound = factor L_t + (4/9450) floor, floor = 42/5 + 81312/361
    frac = R_(4, 9450)
    assert sp.expand(fn.lyapunov_window_bound.subs(FN_POINT) - ((1 - frac) * Lt + frac * (R_(42, 5) + R_(81312, 361)))) == 0


# DS point: L_f = 1, lambda = 2, L_r = 1/2 (so L_F = 2), rho = 1/2, B = 3, G = 2, G_r = 5, sigma^2 = 7, eta = 1/20
# (<= 1/(6 L_F) = 1/12), gamma = 1/100, c_gamma = 2, ||grad F||^2 = 4, ||grad f||^2 = 6, ||e_f||^2 = 1/2, R = 100, Delta_0 = 10.
# Then C_e = 2 B^2 = 18 and K_e^2 = G^2/(2 B^2) + lambda^2 G_r^2 = 4/18 + 100 = 902/9; 1 + 3 L_F eta/2 = 23/20.
DS_POINT = {S.L_f: 1, S.lam: 2, S.L_r: R_(1, 2), S.L_F: 2, S.rho_f: R_(1, 2), S.B: 3, S.G: 2, S.G_r: 5, S.sigma2: 7, S.eta: R_(1, 20),
            S.gamma_r: R_(1, 100), S.c_gamma: 2, S.g2: 4, S.gradf2: 6, S.ef2: R_(1, 2), S.R: 100, S.Delta_0: 10}

DS_EXPECTED = {
    "L_F_definition": 2,  # 1 + 2 * (1/2)
    "eta_max_smooth": R_(1, 12),  # 1/(6 * 2)
    "eta_max_weak": 1,  # 1/(2 * 1/2)
    "gamma_r_max": R_(1, 10),  # 2 * (1/20)
    "mu_r": R_(39, 2),  # 20 - 1/2
    "lemma5_1_bound": R_(29, 5000),  # 10^-4 (4 + 9 * 6)
    "eq13_bound": 208,  # 2 * 4 + 2 * 4 * 25
    "C_e": 18,
    "K_e2": R_(902, 9),
    "eq16_bound": R_(469, 2500),  # 18 * 10^-4 (4 + 902/9) = 1876/10^4
    # -1/20 + 1/80 + (3/2) 2 (1/400) + (1/20)(23/20)(18/10^4) = -3/100 + 207/2000000
    "coefficient20": R_(-59793, 2000000),
    "absorption_gamma_max": 1 / (3 * sp.sqrt(10)),
    # sqrt((1/2 - 3/20)/((23/20) 18)) = sqrt((7/20)/(414/20))
    "absorption_gamma_exact": sp.sqrt(R_(7, 414)),
    "Phi": R_(1, 4),
    # 3/4 - 3/20 - (23/20)(18/10^4) = 3/5 - 207/100000
    "Phi_r": R_(59793, 100000),
    # (1/20)(23/20)(18/10^4)(902/9) + (3/2) 2 (1/400) 7 = 41492/4000000 + 21/400
    "Xi": R_(62873, 1000000),
    # (5/4) 4 (4 + 2 * 9 * 4 * 25)(1/8000) + (3/2) 2 * 7 (1/400) = 9020/8000 + 21/400
    "Xi_explicit": R_(59, 50),
    # -(1/20)(1/4) 4 + Xi
    "lemma5_2_bound": R_(12873, 1000000),
    # -59793/2000000 * 4 + 62873/1000000
    "descent_unabsorbed_bound": R_(-59793, 500000) + R_(62873, 1000000),
    "lemmaA1_factor": R_(101, 2000),  # (1/20)(1 + 1/100)
    "exact_prox_gamma": R_(1, 19),  # (1/20)/(19/20)
    # -1/20 + 1/80 + 2/400 + (1/20)(11/10)(18/10^4)
    "coefficient20_tight": R_(-32401, 1000000),
    # (1/20)(11/10)(18/10^4)(902/9) + 2 (1/400) 7/2 = 19844/2000000 + 7/400
    "Xi_tight": R_(13711, 500000),
    # (-1/20 + 1/80 + 3/400) 4 + (1/20 + 3/400)(1/2) + (3/400) 7 = -12/100 + 23/800 + 21/400
    "descent_before_16": R_(-31, 800),
    "constant_gamma_floor": R_(451, 500),  # 5 * 18 * (902/9) * 10^-4
}


@pytest.mark.parametrize("name", sorted(DS_EXPECTED))
def test_ds_formula_at_a_point(name: str) -> None:
    value = sp.sympify(getattr(ds, name)).subs(DS_POINT)
    assert sp.simplify(value - DS_EXPECTED[name]) == 0, f"ds {name} = {value}, hand value {DS_EXPECTED[name]}"


def test_ds_bounds_at_a_point() -> None:
    c_ = R_(1, 13)
    # constant step: 4 * 10/((1/20) 100) + 6 * 2 * 7 (1/20) + 5 * 18 (902/9)(1/100)^2 = 8 + 21/5 + 451/500
    assert ds.constant_step_bound(S.Delta_0).subs(DS_POINT) == R_(6551, 500)
    # Corollary (ii), c = 1/13, R = 100: 4 * 10 * 13/10 + 6 * 2 * 7/(13 * 10) + 5 * 18 (902/9) 4/(169 * 100) = 52 + 42/65 + 1804/845
    pt = {**DS_POINT, S.c: c_}
    assert sp.simplify(ds.corollary_ii_bound(S.Delta_0).subs(pt) - R_(9258, 169)) == 0
    # horizon: max(36 * 4/169, 10 * 9 * 4/169)
    assert ds.corollary_ii_horizon_min.subs(pt) == R_(360, 169)
    # with c_gamma = 1/10 the step term wins: max(144/169, 10 * 9 * (1/100)/169)
    assert ds.corollary_ii_horizon_min.subs({**pt, S.c_gamma: R_(1, 10)}) == R_(144, 169)
    # r_0 at c = 1, c_gamma = 2, B = 3, alpha = 1: ceil(6 sqrt(10) - 1) = ceil(17.97...) = 18
    assert ds.r0_power.subs({S.c: 1, S.c_gamma: 2, S.B: 3, S.alpha: 1}) == 18
    # schedules at r = 3, c = 1/13, alpha = 3/4: (1/13)/4^(3/4), (1/13)/3^(3/4); sqrt-horizon (1/13)/10
    assert sp.simplify(ds.schedule_power.subs({S.c: c_, S.r: 3, S.alpha: R_(3, 4)}) - c_ / 4 ** R_(3, 4)) == 0
    assert sp.simplify(ds.schedule_power_printed.subs({S.c: c_, S.r: 3, S.alpha: R_(3, 4)}) - c_ / 3 ** R_(3, 4)) == 0
    assert ds.schedule_sqrt_horizon.subs(pt) == R_(1, 130)


def test_ds_decaying_at_a_point() -> None:
    # R = 3, r_0 = 0, c = 1, alpha = 1: sum_{r=0}^3 1/(r+1) = 25/12; 4 (1 + 1)/(25/12) = 96/25
    pt = {S.R: 3, S.r_0: 0, S.c: 1, S.alpha: 1, S.Delta_r0: 1, S.Xi_sum: 1}
    assert sp.simplify(ds.decaying_bound.subs(pt).doit() - R_(96, 25)) == 0
    # alpha = 1/2: ((3 + 2)^(1/2) - 1)/(1/2) = 2 (sqrt 5 - 1); alpha = 1: log(5/1)
    assert sp.simplify(ds.decaying_sum_lower.subs({**pt, S.alpha: R_(1, 2)}) - 2 * (sp.sqrt(5) - 1)) == 0
    assert sp.simplify(ds.decaying_sum_lower_alpha1.subs(pt) - sp.log(5)) == 0
    # R = 5, r_0 = 2, alpha = 1/2: (7^(1/2) - 3^(1/2))/(1/2); alpha = 1: log(7/3)
    pt2 = {S.R: 5, S.r_0: 2, S.c: 1}
    assert sp.simplify(ds.decaying_sum_lower.subs(pt2).subs(S.alpha, R_(1, 2)) - 2 * (sp.sqrt(7) - sp.sqrt(3))) == 0
    assert sp.simplify(ds.decaying_sum_lower_alpha1.subs(pt2) - sp.log(R_(7, 3))) == 0


def test_ds_robbins_monro_region() -> None:
    region = ds.robbins_monro_power_region
    assert [bool(region.subs(S.alpha, a)) for a in (R_(2, 5), R_(3, 5), 1, R_(3, 2))] == [False, True, True, False]
