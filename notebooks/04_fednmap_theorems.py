# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # FedNMap: Theorem 5's step sizes, Theorem 8's bound and floor, and linear speedup
#
# Paper: Huang, Pu, Johansson, arXiv 2602.03357 (v2). Our copy is **cut off in Section 4** (see notebook 03 and
# `fednmap-reconstruction.md`). What survives of the two theorems:
#
# * **Theorem 5** (nonconvex): the three step-size conditions [verbatim]; the bound itself is **lost** (only its
#   first cell "$\hat\eta$" survives), and the claim `fednmap.theorem5.bound` is a low-confidence reconstruction of its
#   *form* [reconstructed], which we do not check quantitatively;
# * **Theorem 8** (proximal PL): the bound [verbatim], with two constants, $\mathcal C_0$ and $\mathbb E[\mathcal L_0]$, whose
#   definitions are lost; its step-size conditions are not visible (we take Theorem 5's, as the checks do).
#
# Linear speedup (Table 1, Theorem 5, Theorem 8) [verbatim claim]: the rates $\sigma^2/(nQT)$ mean the rounds to a
# fixed accuracy fall as $1/(nQ)$. The paper's experiments are lost with Section 5: the speedup figure below is **our
# reproduction** of the claim on a constructed instance, not the paper's figure.

# %%
# Parameters: enlarge for a reader.
SIGMA2 = 0.05            # gradient-noise variance (Assumption 1) for the Theorem 8 runs
N_CLIENTS, Q8 = 4, 2     # clients and local steps of the Theorem 8 runs
WINDOWS = (1, 2, 4)      # eta_hat = eta_hat_max(m = 1)/M with window m = m_max = M
T8 = 6000                # rounds of the Theorem 8 runs (exact expectations: no replicas needed)
SPEEDUP_N = (1, 2, 4, 8)  # clients in the speedup sweep (Q = 1)
SPEEDUP_Q = (1, 2, 4, 8)  # local steps in the speedup sweep (n = 2)
SIGMA2_SPEEDUP = 0.1     # noise of the speedup sweep
TARGET = 5e-4            # target E[psi(x_T)] - psi*
SEED = 0

# %%
import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
from fedbounds.algorithms.closed_form import closed_form
from fedbounds.algorithms.exact import affine_round, run_exact
from fedbounds.algorithms.instances.least_squares import LeastSquares
from fedbounds.algorithms.oracles import GaussianOracle
from fedbounds.algorithms.regularizers import SquaredL2
from fedbounds.checks.fednmap.common import initial_lyapunov, make_instance, pl_constant
from fedbounds.checks.fednmap.speedup import rounds_to_target
from fedbounds.checks.report.notebook import proved, show
from fedbounds.checks.verdicts.stats import loglog_slope
from fedbounds.theory.core import symbols as S
from fedbounds.theory.core.evaluate import evaluate, to_function
from fedbounds.theory.fednmap import formulas as core
from fedbounds.theory.registry import get_claim
from IPython.display import Markdown, Math, display

# %% [markdown]
# ## 1. Theorem 5: the step-size conditions [verbatim]

# %%
show("fednmap.theorem5.conditions")
show("fednmap.eta_hat")

# %% [markdown]
# $m\ge1$ is the analysis window ("intervals of $m\ge1$ communication rounds", verbatim, Section 4), not a parameter of
# the algorithm. The conditions on two instances (heterogeneous least squares with $\ell_1$, $\rho=0$, and with
# MCP, $\rho=1/\theta>0$), evaluated from `fedbounds.theory.fednmap.formulas.theorem5_conditions`:

# %%
instances = {kind: make_instance(kind, n=N_CLIENTS, p=5, heterogeneity=0.5, seed=SEED) for kind in ("lasso", "mcp", "ridge")}
cond = {sym: to_function(expr, [S.L, S.rho, S.gamma, S.m, S.Q]) for sym, expr in core.theorem5_conditions.items()}
rows = []
for kind in ("lasso", "mcp"):
    c = instances[kind].constants
    L, rho = c["L"].value, c["rho"].value
    g = cond[S.gamma](L, rho, 1.0, 1, 1)  # gamma_max depends on L, rho only
    for m in (1, 4, 16):
        for Q in (1, 8):
            rows.append(f"| {kind} | {L:.3f} | {rho:.3f} | {g:.4f} | {m} | {Q} | {cond[S.eta_hat](L, rho, g, m, Q):.2e} | "
                        f"{cond[S.eta_a](L, rho, g, m, Q):.2e} |")
display(Markdown("| instance | L | rho | gamma_max | m | Q | eta_hat_max | eta_a_max |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(rows)))

# %% [markdown]
# Three consequences [derived]:
#
# * $\gamma\le1/(5(\rho+L))$ gives $1-\gamma\rho\ge4/5$;
# * at both maxima $\eta_s=\hat\eta/(\eta_aQ)=1/\sqrt m$, and since only $\hat\eta$ and $\eta_a$ are constrained, **the server step
#   $\eta_s$ is free**: any $\eta_s>0$ is admissible with a small enough $\eta_a$;
# * the window is limited by the step: $m\le m_{\max}(\hat\eta)=\lfloor(1-\gamma\rho)/(100\hat\eta\sqrt{L^2+1/\gamma^2})\rfloor$.

# %%
for step in ("fednmap_one_minus_gamma_rho", "fednmap_eta_s_free", "fednmap_m_max"):
    assert proved(step)
display(Math(r"\eta_s\big|_{\rm maxima} = " + sp.latex(core.eta_s_at_maxima) + r",\qquad m_{\max} = " + sp.latex(core.m_max)))
# numbers: random (L, rho, Q, m): 1 - gamma_max rho >= 4/5; the ratio of the two raw bounds is 1/sqrt(m);
# the largest integer m with eta_hat <= eta_hat_max(m), found by scanning, is floor(window_real)
rng = np.random.default_rng(SEED)
window = to_function(core.m_max, [S.L, S.rho, S.gamma, S.eta_hat])
for _ in range(200):
    L_, rho_ = rng.uniform(0.1, 10), rng.uniform(0, 10)
    Q_, m_ = int(rng.integers(1, 50)), int(rng.integers(1, 50))
    g_ = cond[S.gamma](L_, rho_, 1.0, 1, 1)
    assert 1 - g_ * rho_ >= float(get_claim("fednmap.theorem5.one_minus_gamma_rho").conclusion) - 1e-12
    ratio = cond[S.eta_hat](L_, rho_, g_, m_, Q_) / (Q_ * cond[S.eta_a](L_, rho_, g_, m_, Q_))
    assert abs(ratio - evaluate(core.eta_s_at_maxima, {"m": m_, "L": L_, "rho": rho_, "gamma": g_, "Q": Q_})) < 1e-12
    eh = cond[S.eta_hat](L_, rho_, g_, 1, Q_) / rng.uniform(1, 60)
    scan = max(m for m in range(1, 200) if eh <= cond[S.eta_hat](L_, rho_, g_, m, Q_))
    assert scan == window(L_, rho_, g_, eh)
print("checked at 200 random points: 1 - gamma rho >= 4/5, eta_s = 1/sqrt(m) at the maxima, m_max by scanning")

# %% [markdown]
# The factors $1/100$ make these steps small. How much room they leave on an instance is measured by the checks
# layer (`checks/fednmap/tightness.py`: the largest multiple of the maximal steps at which Theorem 8's bound still holds).

# %% [markdown]
# ## 2. Theorem 8 [verbatim] and its floor [derived]

# %%
show("fednmap.theorem8")
# the bound is verbatim; Theorem 8's own step-size conditions are lost and Theorem 5's stand in for them, so the
# hypotheses are marked reconstructed (the underbrace in the LaTeX above)
t8 = get_claim("fednmap.theorem8")
assert t8.status == "verbatim" and t8.hypotheses_status == "reconstructed" and r"\text{[reconstructed]}" in t8.latex()

# %% [markdown]
# Three terms: a transient $\exp(-\frac{2\hat\eta\mu T}{9(1+\gamma\mu\mathcal C_0)})\mathbb E[\mathcal L_0]$, a variance term
# $\frac{36\sigma^2}{mn\mu Q}$, and a client-drift term $\frac{12100\eta_a^2QL^2\sigma^2}{\mu(1-\gamma\rho)^2}$. As $T\to\infty$ the bound
# tends to the **floor** (the sum of the last two):

# %%
floor = sp.limit(core.theorem8_bound, S.T, sp.oo)
assert sp.simplify(floor - core.theorem8_floor) == 0
show("fednmap.theorem8.floor")
assert proved("fednmap_theorem8_floor")

# %% [markdown]
# The variance term contains **no step size**: it is small only because the window $m$ may be taken as large as
# $m_{\max}(\hat\eta)\propto1/\hat\eta$. With $m=1$ (always admissible for small steps) the floor stays at $36\sigma^2/(n\mu Q)$
# however small the step [remark `erratum.fednmap_theorem8_m_coupling`]; with $m=m_{\max}(\hat\eta)$ it is $O(\hat\eta)$ [derived]:

# %%
show("fednmap.theorem8.floor_coupled")
show("erratum.fednmap_theorem8_m_coupling")
for step in ("fednmap_floor_coupled", "fednmap_m_coupling"):
    assert proved(step)
# the coupled floor's upper bound is linear in eta_hat (the drift term does not involve eta_hat)
variance_part = sp.expand(core.theorem8_floor_coupled_upper - core.theorem8_drift)
assert sp.simplify(sp.diff(variance_part, S.eta_hat, 2)) == 0 and sp.simplify(variance_part.subs(S.eta_hat, 0)) == 0
display(Math(r"\text{variance part of the coupled floor} \le " + sp.latex(sp.factor(variance_part))))

# %% [markdown]
# **Numbers.** A ridge instance ($\varphi=\frac w2\|x\|^2$) is *linear-Gaussian*: with the additive Gaussian oracle the
# state's mean and covariance propagate in closed form (`fedbounds.algorithms.exact.run_exact`), so $\mathbb E[\psi(x_t)]-\psi^*$ is
# **exact**, with no Monte Carlo error. We run FedNMap at Theorem 5's largest steps for the windows $m=M$,
# $\hat\eta=\hat\eta_{\max}(1)/M$ (then $m_{\max}(\hat\eta)=M$), and compare with Theorem 8 at $\mathcal C_0=0$ and
# $\mathbb E[\mathcal L_0]=\psi(x_0)-\psi^*+\mathcal C_c\frac1n\sum_i\|\nabla f_i(x_0)-\nabla f(x_0)\|^2$ ($\mathcal C_c=1$, the
# corrections start at $c_{i,0}=0$; `initial_lyapunov`). The psi gap alone, once called the strictest form, is not implied:
# from $x^*$ with $c_{i,0}=0$ the first round moves off the optimum (exact rational replay, `fednmap.strict_form`). The bound
# grows with $\mathcal C_0$, so if this form holds, the printed bound holds for any admissible $\mathcal C_0$. $\mu$ is the PL constant of $\psi$ (here the
# strong convexity of $\psi=f+\frac w2\|x\|^2$, `pl_constant`).

# %%
ridge = instances["ridge"]
rc = ridge.constants
L, rho, mu = rc["L"].value, rc["rho"].value, pl_constant(ridge)
sol = ridge.solution()
gamma = evaluate(core.theorem5_gamma_max, {"L": L, "rho": rho})
z0 = sol.x_star - gamma * ridge.grad_f(sol.x_star) + 1.0       # a start away from the solution
# E[L_0] with C_0 = 0: the psi gap plus C_c = 1 times the correction heterogeneity (corrections start at c_i,0 = 0)
EL0 = initial_lyapunov(ridge, z0, gamma).EL0
bound8 = to_function(core.theorem8_bound, [S.T, S.eta_hat, S.eta_a, S.gamma, S.rho, S.L, S.mu, S.sigma2, S.m, S.n, S.Q, S.C_0, S.EL_0])
floor8 = to_function(core.theorem8_floor, [S.eta_a, S.gamma, S.rho, S.L, S.mu, S.sigma2, S.m, S.n, S.Q])
eh1 = cond[S.eta_hat](L, rho, gamma, 1, Q8)
ts = np.unique(np.geomspace(1, T8, 40).astype(int))
results = {}
for M in WINDOWS:
    eta_hat = eh1 / M
    m_here = int(window(L, rho, gamma, eta_hat * (1 - 1e-12)))
    assert m_here == M
    eta_a = cond[S.eta_a](L, rho, gamma, M, Q8)
    eta_s = eta_hat / (eta_a * Q8)
    ex = run_exact("fednmap", ridge, {"gamma": gamma, "eta_a": eta_a, "eta_s": eta_s, "Q": Q8, "z0": z0}, rounds=T8,
                   oracle=GaussianOracle(sigma2=SIGMA2))
    gap = np.asarray(ex.E_psi_gap)
    b = np.array([bound8(t, eta_hat, eta_a, gamma, rho, L, mu, SIGMA2, M, N_CLIENTS, Q8, 0.0, EL0) for t in ts])
    assert np.all(gap[ts] <= b), f"Theorem 8 fails at M = {M}"
    results[M] = {"eta_hat": eta_hat, "gap": gap, "bound": b,
                  "floor_m": floor8(eta_a, gamma, rho, L, mu, SIGMA2, M, N_CLIENTS, Q8),
                  "floor_1": floor8(eta_a, gamma, rho, L, mu, SIGMA2, 1, N_CLIENTS, Q8)}
    print(f"M = {M}: eta_hat = {eta_hat:.2e}, eta_a = {eta_a:.2e}, eta_s = {eta_s:.3f};  E gap at T = {T8}: {gap[-1]:.2e}, "
          f"bound {b[-1]:.2e} (slack {b[-1] / gap[-1]:.0f}x)")

# %% [markdown]
# The floors: Theorem 8's floor with the coupled window ($m=M$) against the same with $m=1$, beside the exact
# stationary gap, found by running from the solution (where the transient is absent) until it settles.

# %%
observed_floor = []
z_star = sol.x_star - gamma * ridge.grad_f(sol.x_star)
for M in WINDOWS:
    eta_hat = results[M]["eta_hat"]
    eta_a = cond[S.eta_a](L, rho, gamma, M, Q8)
    rounds = int(6 / (eta_hat * mu))
    # the closed form of the exact moments (no round loop): E gap after `rounds` rounds, 10% earlier, and in the limit
    cf = closed_form(affine_round("fednmap", ridge, {"gamma": gamma, "eta_a": eta_a, "eta_s": eta_hat / (eta_a * Q8), "Q": Q8,
                                                     "z0": z_star}, oracle=GaussianOracle(sigma2=SIGMA2)))
    end, before, limit = (cf.expectation("psi_gap", t) for t in (rounds, rounds - rounds // 10, np.inf))
    assert abs(end - before) <= 0.05 * end and abs(end - limit) <= 0.05 * limit  # settled
    observed_floor.append(end)
    assert end <= results[M]["floor_m"]
ehs = np.array([results[M]["eta_hat"] for M in WINDOWS])
fit_obs = loglog_slope(ehs, np.array(observed_floor))
fit_cpl = loglog_slope(ehs, np.array([results[M]["floor_m"] for M in WINDOWS]))
print(f"log-log slope of the floor in eta_hat: exact {fit_obs.slope:.2f}, Theorem 8 with m = m_max {fit_cpl.slope:.2f}, "
      f"with m = 1: {loglog_slope(ehs, np.array([results[M]['floor_1'] for M in WINDOWS])).slope:.2f}")
assert fit_obs.slope > 0.5 and fit_cpl.slope > 0.5

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for M in WINDOWS:
    line, = axes[0].loglog(np.arange(T8 + 1) + 1, results[M]["gap"], label=f"exact E gap, m = {M}")
    axes[0].loglog(ts + 1, results[M]["bound"], "--", color=line.get_color(), lw=1, label=f"Theorem 8 bound, m = {M}")
axes[0].set_xlabel("round T + 1")
axes[0].set_ylabel(r"$\mathbb{E}[\psi(x_T)]-\psi^*$")
axes[0].legend(fontsize=7)
axes[0].set_title(f"Theorem 8 (C_0 = 0, E[L_0] = psi gap + C_c corr.), ridge, n = {N_CLIENTS}, Q = {Q8}")
axes[1].loglog(ehs, observed_floor, "o-", label=f"exact stationary gap (slope {fit_obs.slope:.2f})")
axes[1].loglog(ehs, [results[M]["floor_m"] for M in WINDOWS], "s--", label=f"Theorem 8 floor, m = m_max (slope {fit_cpl.slope:.2f})")
axes[1].loglog(ehs, [results[M]["floor_1"] for M in WINDOWS], "^:", label="Theorem 8 floor, m = 1")
axes[1].set_xlabel(r"$\hat\eta$")
axes[1].legend(fontsize=7)
axes[1].set_title("The floor shrinks with the step only through m")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 3. Linear speedup
#
# Table 1 [verbatim]: $O(\sqrt{\sigma^2/(nQT)}+1/T)$ (nonconvex) and $\tilde O(\sigma^2/(nQT)+\sigma^2/T^2)$ (PL). Solving the leading
# term for the rounds $T(\varepsilon)$ gives the predicted exponents of $n$ and $Q$:

# %%
show("fednmap.theorem8.rate")
lead = core.theorem8_rate.as_ordered_terms()
lead = next(t for t in lead if t.has(S.n))
T_eps = sp.solve(sp.Eq(lead, S.epsilon), S.T)[0]
expected = {ax: sp.simplify(ax * sp.diff(sp.log(T_eps), ax)) for ax in (S.n, S.Q)}
display(Math(r"T(\varepsilon)\propto " + sp.latex(T_eps) + r":\quad \frac{\partial\log T}{\partial\log n}=" + sp.latex(expected[S.n])
             + r",\ \frac{\partial\log T}{\partial\log Q}=" + sp.latex(expected[S.Q])))

# %% [markdown]
# **Protocol** (ours; the theory fixes the shape of the steps, not their constants). The step that Theorem 8 allows for a
# target $\varepsilon$ grows as $nQ$ (`fednmap.theorem8.complexity_derived`: $\hat\eta\le(1-\gamma\rho)n\mu Q\varepsilon/(21600S\sigma^2)$),
# and the client step must fall as $1/Q$ (drift term $\propto\eta_a^2Q$). So at each $(n,Q)$: $\eta_a=a_0/Q$ and $\hat\eta=k\,nQ$,
# $\eta_s=\hat\eta/(\eta_aQ)$, with $k$ calibrated (the theorem's 21600 is conservative) so that the floor sits well below the
# target. Clients are the first $n$ of one pool of heterogeneous least-squares clients with a ridge regulariser
# (linear-Gaussian: exact expectations); $\gamma=1/(5(\rho+L))$ (Theorem 5). Rounds to the target:
# `fedbounds.checks.fednmap.speedup.rounds_to_target` (first round after which the curve stays below). Beside FedNMap:
# **FedAvg with a server prox** (`fedavg_prox`, our composite adaptation, `baselines.md`) with the same $\eta_a,\eta_s,Q$.

# %%
pool = make_instance("ridge", n=max(max(SPEEDUP_N), 2), p=5, heterogeneity=1.0, seed=SEED)
w_ridge = pool.phi.weight
A0, K_STEP = 0.6, 5e-3            # eta_a Q = A0; eta_hat = K_STEP * n * Q


def clients(n: int) -> LeastSquares:
    prob = LeastSquares(pool.A[:n], pool.b[:n], SquaredL2(w_ridge))
    prob.name = f"ridge pool[:{n}]"
    return prob


def sweep_point(algorithm: str, n: int, Q: int) -> tuple[int | None, float, float]:
    prob = clients(n)
    Lp = prob.constants["L"].value
    eta_hat = K_STEP * n * Q
    eta_a = A0 / Q
    params = {"eta_a": eta_a, "Q": Q, "eta_s": eta_hat / (eta_a * Q)}
    if algorithm == "fednmap":
        params.update(gamma=evaluate(core.theorem5_gamma_max, {"L": Lp, "rho": 0.0}), z0=np.ones(prob.p))
    else:
        params.update(x0=np.ones(prob.p))
    rounds = int(30 / (eta_hat * prob.constants["mu"].value))   # a few times the expected count
    gap = np.asarray(run_exact(algorithm, prob, params, rounds=rounds, oracle=GaussianOracle(sigma2=SIGMA2_SPEEDUP)).E_psi_gap)
    return rounds_to_target(gap, TARGET), float(gap[-1]), eta_hat


sweeps = {}
for alg in ("fednmap", "fedavg_prox"):
    sweeps[(alg, "n")] = [sweep_point(alg, n, 1) for n in SPEEDUP_N]
    sweeps[(alg, "Q")] = [sweep_point(alg, 2, Q) for Q in SPEEDUP_Q]
rows = []
for (alg, ax), pts in sweeps.items():
    grid = SPEEDUP_N if ax == "n" else SPEEDUP_Q
    rows += [f"| {alg} | {ax} = {v} | {r if r is not None else 'not reached'} | {fin:.2e} |" for v, (r, fin, _) in zip(grid, pts)]
display(Markdown(f"target {TARGET:g}\n\n| algorithm | point | rounds to target | final E gap |\n|---|---|---|---|\n" + "\n".join(rows)))

# %%
fits = {}
for (alg, ax), pts in sweeps.items():
    grid = np.array(SPEEDUP_N if ax == "n" else SPEEDUP_Q, dtype=float)
    ok = np.array([r is not None for r, _, _ in pts])
    if ok.sum() >= 2:
        fits[(alg, ax)] = loglog_slope(grid[ok], np.array([r for r, _, _ in pts if r is not None], dtype=float))
for key, fit in fits.items():
    print(f"{key[0]:12s} rounds ~ {key[1]}^slope: slope {fit.slope:+.3f}, 95% CI [{fit.ci_low:+.3f}, {fit.ci_high:+.3f}]")
# FedNMap: linear speedup in n and in Q (the predicted exponents), every point reached
for ax, sym in (("n", S.n), ("Q", S.Q)):
    assert all(r is not None for r, _, _ in sweeps[("fednmap", ax)])
    assert abs(fits[("fednmap", ax)].slope - float(expected[sym])) < 0.15
# FedAvg + server prox: the same in n (Q = 1: no local drift), but with Q > 1 its heterogeneity bias sits above the target
assert abs(fits[("fedavg_prox", "n")].slope - float(expected[S.n])) < 0.15
assert all(r is None for r, _, _ in sweeps[("fedavg_prox", "Q")][1:])

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for k, (ax, grid) in enumerate((("n", SPEEDUP_N), ("Q", SPEEDUP_Q))):
    top = max(r for (a, x), pts in sweeps.items() if x == ax for r, _, _ in pts if r is not None) * 2
    for alg, marker in (("fednmap", "o-"), ("fedavg_prox", "s--")):
        pts = sweeps[(alg, ax)]
        g_ok = [v for v, (r, _, _) in zip(grid, pts) if r is not None]
        r_ok = [r for r, _, _ in pts if r is not None]
        label = alg if (alg, ax) not in fits else f"{alg} (slope {fits[(alg, ax)].slope:.2f})"
        line, = axes[k].loglog(g_ok, r_ok, marker, label=label)
        miss = [v for v, (r, _, _) in zip(grid, pts) if r is None]
        if miss:
            axes[k].loglog(miss, [top] * len(miss), "x", color=line.get_color(), ms=10, label=f"{alg}: target not reached")
    ref = np.array(grid, dtype=float)
    r0 = sweeps[("fednmap", ax)][0][0]
    axes[k].loglog(ref, r0 * (ref / ref[0]) ** float(expected[S.n if ax == "n" else S.Q]), ":", color="0.5", label="slope -1 (Table 1)")
    axes[k].set_xlabel(ax + (" (Q = 1)" if ax == "n" else " (n = 2)"))
    axes[k].set_ylabel(f"rounds to E gap <= {TARGET:g}")
    axes[k].legend(fontsize=7)
axes[0].set_title("Rounds to target against clients n")
axes[1].set_title("Rounds to target against local steps Q")
plt.tight_layout()
plt.show()

# %% [markdown]
# FedNMap's rounds fall as $1/n$ and $1/Q$ (the predicted exponents, within the fitted intervals). FedAvg with a server
# prox matches it in $n$ when $Q=1$ (it is then proximal SGD on the averaged gradient, which for this linear prox has the right
# fixed point), but with local steps on heterogeneous clients its fixed point moves away from $x^\star$ (the client drift that
# FedNMap's correction removes, notebook 03), and the target is out of reach at every $Q>1$, however many rounds it is given.
#
# This is a small, exactly computed instance. The same experiment on a nonsmooth problem (Lasso, Monte Carlo, a grid of
# $n\le64$, $Q\le32$, one seed with sequential replicas) is the checks layer's sweep `checks/specs/fednmap_speedup.toml` (`fedbounds sweep
# fednmap_speedup`, then `fedbounds report`), too large for a notebook run in the test suite.

# %% [markdown]
# ## Summary
#
# | statement | status | numbers |
# |---|---|---|
# | Theorem 5's three step-size conditions | verbatim | evaluated on Lasso and MCP instances |
# | $1-\gamma\rho\ge4/5$; $\eta_s$ free; $m\le m_{\max}(\hat\eta)$ | derived | 200 random constants; scanning $m$ |
# | Theorem 5's bound | **lost**; only a low-confidence reconstruction of its form | not checked |
# | Theorem 8's bound | verbatim ($\mathcal C_0$, $\mathcal L_0$ lost) | exact expectations on ridge, $\mathcal C_0=0$, $\mathcal L_0$ with the correction term, 3 windows |
# | floor as $T\to\infty$; $O(\hat\eta)$ only with $m=m_{\max}(\hat\eta)$ | derived; remark (the coupling is unstated) | exact stationary gaps, slopes in $\hat\eta$ |
# | linear speedup in $n$ and $Q$ | verbatim claim; our reproduction | exact rounds to target, fitted slopes; FedAvg + server prox beside it |
