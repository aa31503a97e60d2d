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
# # Parametric proofs: one exact certificate for a whole range of step sizes
#
# A PEP certificate at one point proves a bound for one choice of the steps. Here the multipliers are rational
# functions of the parameters and the proof covers a box of them (`fedbounds.checks.pep.parametric`,
# docs/parametric-proofs.md): the identity
# $$\text{claim} = \sum_k y_k(p)\,\text{row}_k + v^\top S(p)\,v$$
# holds as rational functions, every $y_k(p)\ge0$ on the box and $S(p)\succeq0$ there, each shown exactly
# (factor over $\mathbb Q$, count real roots: Sturm sequences in one variable, a cylindrical decomposition in two).
# Nothing below calls a numerical solver to *prove* anything; one cell reads the dual at a sample point as a guide.
#
# 1. DS FedProxGrad Lemma 5.2 over $\gamma_r\in(0,\sqrt{33}-5]$, $\eta\in(0,1/(6L_F)]$, beside the paper's proof;
#    where it meets the erratum's counterexample.
# 2. FedNMap's per-round descent at $(n,Q)=(2,1)$ over $\hat\eta\in(0,\text{Theorem 5's maximum}]$.

# %%
import time

import sympy as sp
from fedbounds.checks.ds_fedproxgrad.pep import parametric as DS
from fedbounds.checks.fednmap.pep import parametric as FN
from fedbounds.checks.pep.parametric import ParametricError, sample_multipliers, verify
from fedbounds.theory.core.symbols import L_F, B, eta, eta_hat, gamma_r
from fedbounds.theory.ds_fedproxgrad import formulas as ds
from fedbounds.theory.ds_fedproxgrad.errata import DS_PHI_PREFIX
from IPython.display import Markdown, Math, display

# %% [markdown]
# ## 1. DS FedProxGrad Lemma 5.2 [derived]
#
# The slice: $N=1$ (so (8) holds with $B=1$), $\lambda=0$, $G=\sigma=0$, where $\Xi_r=0$ and the lemma reads
# $F(x^{r+1})-F(x^r)\le-\eta\Phi\|\nabla F(x^r)\|^2$ with $x^{r+1}=x^r-\eta\nabla f(x^r)+\eta e^r$,
# $\|e^r\|\le\gamma_r\|\nabla f(x^r)\|$ (10). $L_F=1$ by scaling. The multipliers come from the worst case (the
# quadratic with the uphill error $e=\gamma_r\nabla f$): $S$ must annihilate its Gram vector.

# %%
t0 = time.perf_counter()
mult = DS.derive()
display(Math(r"y_{\rm interp}=" + sp.latex(mult["interp(x, x+)"]) + r",\qquad y_{(10)}=" + sp.latex(mult["error (10)"])))
tight, tight_tex = DS.prove(DS.tight_certificate(), definite=False)
display(Markdown("**The tight descent** $\\Phi^\\star(\\gamma_r,\\eta)=(1-\\gamma_r)-\\frac{\\eta}{2}(1-\\gamma_r)^2$, "
                 "proved for $\\gamma_r\\in(0,1)$, $\\eta\\in(0,1/6]$ (S is singular: the quadratic attains it):"))
display(Math(tight_tex.replace(r"\begin{aligned}", r"\begin{aligned}[t]")))
lemma, lemma_tex = DS.prove(DS.lemma_certificate())
display(Markdown("**Lemma 5.2 as printed** ($\\Phi=1/4$), proved for $\\gamma_r\\in(0,\\sqrt{33}-5]$, $\\eta\\in(0,1/6]$:"))
display(Math(lemma_tex))
print("\n".join(lemma.facts))
print(f"DS proofs: {time.perf_counter() - t0:.1f} s")

# %% [markdown]
# **Beside the paper's proof.** The paper bounds $\|x^{r+1}-x^r\|^2$ by (19) ($\|a+b+c\|^2\le3(\dots)$) and Lemma 5.1,
# which gives the coefficient (20), i.e. $\Phi_r=\frac34-\frac32L_F\eta-(1+\frac32L_F\eta)C_e\gamma_r^2$ with
# $C_e=2B^2$, and absorbs the error once $\gamma_r\le1/(\sqrt{10}B)$. The certificate uses one interpolation
# inequality and (10), and its constant is the exact worst case. At $\eta=1/(6L_F)$, $B=1$:

# %%
paper_phi = ds.Phi_r.subs({L_F: 1, B: 1})
for g in (sp.Rational(1, 10), sp.Rational(3, 10), sp.Rational(1, 2), sp.Rational(7, 10)):
    print(f"gamma_r = {g}: paper's Phi_r = {float(paper_phi.subs({eta: DS.ETA_MAX, gamma_r: g})):+.4f}, "
          f"certificate's Phi* = {float(DS.phi_star.subs({eta: DS.ETA_MAX, gamma_r: g})):.4f}")
paper_threshold = ds.absorption_gamma_max.subs(B, 1)
print(f"largest gamma_r with Phi >= 1/4 at eta = 1/6: paper's proof {float(paper_threshold):.4f} (1/sqrt(10)), "
      f"certificate {float(DS.THRESHOLD):.4f} (sqrt(33) - 5)")
assert all(DS.phi_star.subs({eta: DS.ETA_MAX, gamma_r: g}) >= paper_phi.subs({eta: DS.ETA_MAX, gamma_r: g})
           for g in (sp.Rational(1, 10), sp.Rational(3, 10)))

# %% [markdown]
# **Where the proof meets the counterexample.** Past $\sqrt{33}-5$ the certificate cannot be extended (the minor
# $\det S$ carries the factor $2\eta(1-\gamma_r)^2+4\gamma_r-3=-4(\Phi^\star-\tfrac14)$), and the erratum's
# instance (`erratum.ds_phi_prefix`) has $\Phi<1/4$ there: the two meet at $\gamma_r=\sqrt{33}-5$, $\eta=1/6$.

# %%
try:
    verify(DS.lemma_certificate(gamma_max=DS.THRESHOLD + sp.Rational(1, 1000)), definite=True)
    raise AssertionError("the widened range verified")
except ParametricError as exc:
    print("widened to sqrt(33) - 5 + 1/1000:", exc)
phi = DS_PHI_PREFIX.conclusion
assert sp.expand(phi.subs(gamma_r, DS.THRESHOLD) - sp.Rational(1, 4)) == 0
print("counterexample's Phi at sqrt(33) - 5 + 1/1000:", float(phi.subs(gamma_r, DS.THRESHOLD + sp.Rational(1, 1000))))

# %% [markdown]
# ## 2. FedNMap: the per-round descent at $(n,Q)=(2,1)$ [reconstructed]
#
# At $Q=1$ a round is $z_{t+1}=z_t-\hat\eta F_{\rm nor}(z_t)$ and $c_i^+=\nabla f(x_t)-\nabla f_i(x_t)$. The claim:
# the reconstructed Lyapunov function ($C_0=C_c=1$) decreases by $\frac{\hat\eta}9\|F_{\rm nor}(z_t)\|^2$, for
# $L=1$, $\rho=1/11$, $\gamma=11/60$ (Theorem 5's maximum) and every $\hat\eta\in(0,649/366000]$ (Theorem 5's
# printed maximum, rational at this $\rho$). The multipliers' form was read off dual solutions at sample steps:

# %%
y_max, t_max = sample_multipliers(FN.problem(descent=0), {eta_hat: FN.ETA_HAT_MAX}, slack=FN.F0_squared())
print(f"at the printed maximum: worst descent {t_max / float(FN.ETA_HAT_MAX):.3f} eta_hat (the claim: 1/9 = 0.111)")
print({k: round(v * float(FN.ETA_HAT_MAX), 4) for k, v in y_max.items()}, "(times eta_hat)")

# %%
t0 = time.perf_counter()
fn, fn_tex = FN.prove(FN.certificate())
display(Math(fn_tex))
print("\n".join(fn.facts))
print(f"FedNMap proof: {time.perf_counter() - t0:.1f} s")

# %% [markdown]
# **Constants compared.** The reconstruction needs the descent coefficient $\hat\eta/9$; the worst case over the
# class at the printed maximum is about $0.81\,\hat\eta$ (above), so the printed step has room: the same
# multipliers still prove $\hat\eta/9$ at ten times the printed maximum, and they break at $\hat\eta=2/15$ (the
# last leading minor's factor $15\hat\eta-2$). A claimed $\frac9{10}\hat\eta$ fails:

# %%
try:
    verify(FN.certificate(descent=sp.Rational(9, 10) * eta_hat), FN.KERNEL)
    raise AssertionError("a 9/10 descent verified")
except ParametricError as exc:
    print("descent 9/10 eta_hat:", exc)
verify(FN.certificate(eta_hat_max=10 * FN.ETA_HAT_MAX), FN.KERNEL)
print("descent eta_hat/9 proved up to 10 x the printed maximum")
