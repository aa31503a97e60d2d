"""The reconstructed FedNMap Lyapunov function (fedbounds.theory.fednmap.formulas.lyapunov, [I]) against trajectories.

``fednmap.lyapunov``: L_t = psi(x_t) - psi* + (gamma C_0/2) ||F_nor(z_t)||^2 + C_c (1/n) sum_i ||c_{i,t} +
grad f_i(x_t) - grad f(x_t)||^2 (C_0, C_c lost with the text). Theorem 8 follows from the per-window decrease
E[L_{t+m}] <= (1 - m kappa) E[L_t] + m kappa floor, kappa = 2 eta_hat mu/(9 (1 + gamma mu C_0)) (the claim's
``window_bound``). Checked on windows of m rounds along Monte Carlo trajectories (paired replicas) at the
constants the PEP recovers, C_0 = C_c = 1 (fednmap.pep.lyapunov_constants): the claim's rows. The correction error,
which carries the stochastic-gradient noise of the previous round, makes the paired differences too noisy for a
decision at the quick budget (measured: upper confidence bound ~6.6e-3 against a window noise ~1.8e-5), so the claim's
row is decided exactly on the linear-Gaussian twin (ridge: quadratic f_i, linear prox; :func:`exact_lyapunov` propagates
the state's mean and covariance through the round's affine map) and the Monte Carlo rows on Lasso and MCP are recorded
in the tightness (``monte_carlo_rows``). At C_c = 0 the class admits no descent (UNBOUNDED_AT_ZERO; the replayed PEP
direction, a control, violates the claim exactly), so the trajectories' windows at (C_0, C_c) = (0, 0) and (1, 0)
are recorded in the tightness (``instance_only_C_c_0``) and plotted, never counted as the claim's rows: a claim
whose rows include a refuted reading cannot hold. Also measured: the smallest C_0 for which
Theorem 8's bound (with E[L_0] = psi(x_0) - psi* + (gamma C_0/2)||F_nor(z_0)||^2) holds on each instance (a
measured stand-in for the lost constant; the bound grows with C_0, so it is 0 whenever the strictest form holds).
"""

from __future__ import annotations

import numpy as np
from fedbounds.checks.fednmap.checks import FRESH, SIGMA2, _searched, theorem8_curve, theorem8_values
from fedbounds.checks.fednmap.common import checkpoints, gaussian_oracle, make_instance, pl_constant, theorem5_parameters, theorem8_start
from fedbounds.checks.fednmap.strict_form import lyapunov_replay
from fedbounds.checks.registry import CheckContext, CheckResult, Curve, Plot, register
from fedbounds.checks.runtime.cache import cached
from fedbounds.checks.verdicts.controls import MACHINERY, control
from fedbounds.checks.verdicts.formulas import evaluate
from fedbounds.checks.verdicts.scope import at_values
from fedbounds.checks.verdicts.stats import mean_ci
from fedbounds.checks.verdicts.verdict import Verdict, compare
from fedbounds.theory.core import symbols as S
from fedbounds.theory.fednmap import formulas as fc

#: what a verdict at C_c = 0 means over the class: the PEP's worst case there is unbounded (fednmap.pep.lyapunov_constants'
#: control, C_0 = 0: psi alone is no Lyapunov function of the class), and its direction replayed as an instance
#: (fednmap.strict_form.lyapunov_replay: two clients from (z* + 1e-8, c_i,0 = 0), L_1 > L_0, exact) violates the window
#: claim for C_0 = 0 and C_0 = 1 alike; the trajectories' "holds" is a property of these instances only
UNBOUNDED_AT_ZERO = ("refuted over the class: at C_c = 0 the PEP's worst case is unbounded and its direction, replayed "
                     "exactly (negative control 'PEP direction replayed'), violates the window claim; this verdict "
                     "covers these instances only")

#: window length m of the Lyapunov check (Theorem 5's conditions are taken at this m)
WINDOW = 4
#: the claim's rows: the reconstructed constants the PEP recovers (fednmap.pep.lyapunov_constants, C_0 = C_c = 1)
CLAIM_CONSTANTS: tuple[tuple[float, float], ...] = ((1.0, 1.0),)
#: measured on the same trajectories and recorded in the tightness, never as the claim's rows: at C_c = 0 the class
#: admits no descent (UNBOUNDED_AT_ZERO), so a trajectory's "holds" there is a property of these instances only
INSTANCE_ONLY: tuple[tuple[float, float], ...] = ((0.0, 0.0), (1.0, 0.0))


def lyapunov_run(problem, params: dict, *, rounds: int, replicas: int, seed: int, sigma2: float) -> dict[str, np.ndarray]:
    """psi gap, ||F_nor||^2 and the correction error corr_err at every round, shape (rounds + 1, R) each (cached)."""
    from fedbounds.algorithms.run import run

    def make() -> dict[str, np.ndarray]:
        corr = []

        def corr_err(x: np.ndarray, c: np.ndarray) -> np.ndarray:
            X = np.broadcast_to(x[:, None, :], (x.shape[0], problem.n, problem.p))
            gi = problem.grad(X)
            d = c + gi - gi.mean(axis=1, keepdims=True)
            return np.einsum("rip,rip->ri", d, d).mean(axis=1)

        z0 = np.broadcast_to(params["z0"], (replicas, problem.p))
        shape = (replicas, problem.n, problem.p)
        c0 = np.zeros(shape) if params.get("c0") is None else np.broadcast_to(params["c0"], shape)
        corr.append(corr_err(problem.phi.prox(z0, params["gamma"]), c0))
        traj = run("fednmap", problem, params, rounds=rounds, replicas=replicas, seed=seed, oracle=gaussian_oracle(sigma2),
                   metrics=("psi_gap", "normal_map_sq"), callback=lambda t, st: corr.append(corr_err(st.x, st.c)))
        traj.raise_if_diverged()
        return {"psi_gap": traj.metrics["psi_gap"], "Fnor2": traj.metrics["normal_map_sq"], "corr_err": np.asarray(corr)}

    key = ("lyap", problem.name, repr(sorted((k, str(v)) for k, v in params.items())), rounds, replicas, seed, sigma2)
    return cached(key, make)  # type: ignore[return-value]


def lyapunov_values(data: dict[str, np.ndarray], gamma: float, C0: float, Cc: float) -> np.ndarray:
    """L_t per round and replica from the theory layer's expression."""
    f = {S.gamma: gamma, S.C_0: C0, S.C_c: Cc}
    # L_t is affine in the three measured quantities; evaluate its coefficients once through the theory expression
    a = evaluate(fc.lyapunov, {**f, S.psi_gap: 1.0, S.Fnor2: 0.0, S.corr_err: 0.0})
    b = evaluate(fc.lyapunov, {**f, S.psi_gap: 0.0, S.Fnor2: 1.0, S.corr_err: 0.0})
    c = evaluate(fc.lyapunov, {**f, S.psi_gap: 0.0, S.Fnor2: 0.0, S.corr_err: 1.0})
    return a * data["psi_gap"] + b * data["Fnor2"] + c * data["corr_err"]


def exact_lyapunov(problem, params: dict, *, rounds: int, sigma2: float, gamma: float, C0: float, Cc: float) -> np.ndarray:
    """E[L_t], t = 0..rounds, exactly on a linear-Gaussian instance (ridge: quadratic f_i, linear prox): one round is
    the affine map s -> M s + b + N xi read off the engine (:func:`fedbounds.algorithms.exact.affine_round`), the
    state's mean and covariance propagate exactly, and each term of L_t is a quadratic form u^T u of an affine u = o +
    A s, so E[u^T u] = ||o + A m||^2 + tr(A C A^T). The correction error's u_i = c_i + grad f_i(x) - grad f(x) uses the
    instance's H_i, h_i (grad f_i(x) = H_i x - h_i). No sampling error: the window claim is decided exactly."""
    from fedbounds.algorithms.exact import affine_round

    ar = affine_round("fednmap", problem, params, oracle=gaussian_oracle(sigma2))
    d, n, p = ar.s0.size, problem.n, problem.p
    x0, Px = ar.readouts["x"]
    f0, Pf = ar.readouts["nor"]
    c_lo, c_hi, c_shape = ar.layout["c"]
    if tuple(c_shape) != (n, p) or c_hi - c_lo != n * p:
        raise ValueError(f"exact Lyapunov: unexpected layout of the corrections {ar.layout['c']}")
    dH, dh = problem.hessians - problem.hessians.mean(axis=0), problem.linear - problem.linear.mean(axis=0)
    corr = []  # (offset, matrix) of u_i per client
    for i in range(n):
        A = dH[i] @ Px
        A[:, c_lo + i * p:c_lo + (i + 1) * p] += np.eye(p)
        corr.append((dH[i] @ x0 - dh[i], A))
    psi_c, psi_a, psi_A = ar.psi_quadratic

    def quad(o: np.ndarray, A: np.ndarray, m: np.ndarray, C: np.ndarray) -> float:
        u = o + A @ m
        return float(u @ u + np.sum((A @ C) * A))

    m, C = ar.s0.astype(float), np.zeros((d, d))
    gap, fnor, cerr = [], [], []
    for t in range(rounds + 1):
        mx, Cx = Px @ m + x0, Px @ C @ Px.T
        gap.append(psi_c + psi_a @ mx + 0.5 * mx @ psi_A @ mx + 0.5 * np.sum(psi_A * Cx) - ar.psi_star)
        fnor.append(quad(f0, Pf, m, C))
        cerr.append(sum(quad(o, A, m, C) for o, A in corr) / n)
        if t < rounds:
            m, C = ar.M @ m + ar.b, ar.M @ C @ ar.M.T + ar.Sigma
            C = 0.5 * (C + C.T)
    data = {"psi_gap": np.array(gap)[:, None], "Fnor2": np.array(fnor)[:, None], "corr_err": np.array(cerr)[:, None]}
    return lyapunov_values(data, gamma, C0, Cc)[:, 0]


def _window_starts(T: int) -> np.ndarray:
    return np.unique(np.concatenate([np.arange(0, min(T - WINDOW, 8 * WINDOW) + 1, WINDOW), checkpoints(T - WINDOW, 30)]))


def exact_window_verdict(problem, setup, EL: np.ndarray, *, C0: float, Cc: float, sigma2: float, name: str) -> Verdict:
    """The window claim E[L_{t+m}] <= window_factor E[L_t] + window_noise at every window start, on exact moments
    (:func:`exact_lyapunov`): an exact verdict (holds or violated, never inconclusive)."""
    starts = _window_starts(EL.shape[0] - 1)
    vals = {**setup.values(), S.mu: pl_constant(problem), S.sigma2: sigma2, S.n: problem.n, S.C_0: C0, S.m: WINDOW}
    factor = evaluate(fc.lyapunov_window_factor, vals)
    noise = evaluate(fc.lyapunov_window_noise, vals)
    v = compare("fednmap.lyapunov", name, EL[starts + WINDOW] - factor * EL[starts], np.full(starts.size, noise), exact=True,
                details={"C_0": C0, "C_c": Cc, "m": WINDOW, "window_factor": factor, "window_noise": noise, "exact": True,
                         "at": at_values(vals), "E[L_t]": EL[starts].tolist(), "window_starts": starts.tolist(),
                         "quantity": "E[L_{t+m}] - window_factor E[L_t] (exact moments) against window_noise"})
    return v.with_details(worst_window=int(starts[v.details["worst_index"]]))


def _window_verdict(problem, setup, data, *, C0: float, Cc: float, sigma2: float, level: float, name: str,
                    kappa_times: float = 1.0, informative_only: bool = False):
    """E[L_{t+m} - window_factor L_t] against window_noise (paired per replica) at log-spaced window starts.
    ``kappa_times`` multiplies the rate exponent m kappa, in the factor 1 - m kappa and in the noise m kappa floor
    (the one thing a calibrated control changes); ``informative_only`` keeps the windows whose E[L_t] exceeds the
    floor (below it the claim's right-hand side exceeds E[L_t] and any non-increasing run meets it)."""
    L = lyapunov_values(data, setup.gamma, C0, Cc)  # (T + 1, R)
    T = L.shape[0] - 1
    starts = _window_starts(T)
    vals = {**setup.values(), S.mu: pl_constant(problem), S.sigma2: sigma2, S.n: problem.n, S.C_0: C0, S.m: WINDOW}
    factor = 1.0 - kappa_times * (1.0 - evaluate(fc.lyapunov_window_factor, vals))
    noise = kappa_times * evaluate(fc.lyapunov_window_noise, vals)
    floor = evaluate(fc.theorem8_floor, vals)
    if informative_only:
        starts = starts[(starts >= 1) & (L[starts].mean(axis=1) > floor)]
    samples = (L[starts + WINDOW] - factor * L[starts]).T
    v = compare("fednmap.lyapunov", name, samples, np.full(starts.size, noise), exact=False, level=level,
                details={"C_0": C0, "C_c": Cc, "m": WINDOW, "window_factor": factor, "window_noise": noise, "kappa_times": kappa_times,
                         "floor": floor, "at": at_values(vals),
                         "quantity": "E[L_{t+m} - window_factor L_t] against window_noise, windows starting at log-spaced t"})
    return v.with_details(worst_window=int(starts[v.details["worst_index"]])), starts, L


def promised_over_achieved(problem, setup, data, *, C0: float, sigma2: float) -> float:
    """The largest ratio, over the windows with mean L_t > floor, of the decrease the window claim promises,
    m kappa (E[L_t] - floor), to the decrease achieved, E[L_t] - E[L_{t+m}] (Monte Carlo means; > 1 violates)."""
    from fedbounds.checks.fednmap.worst import promised_over_achieved as ratio

    v, starts, L = _window_verdict(problem, setup, data, C0=C0, Cc=0.0, sigma2=sigma2, level=0.95, name="", informative_only=True)
    EL = L.mean(axis=1)
    return float(ratio(EL[starts], EL[starts + WINDOW], v.details["window_factor"], v.details["window_noise"]).max())


def _calibrated_window(problem, setup, ctx: CheckContext, z0, T: int, r: float) -> Verdict:
    """The Lasso experiment re-run with fresh noise, the rate exponent m kappa times 2 / r (r: the worst promised /
    achieved decrease measured on the first run), at the informative windows."""
    c = 2.0 / r
    fresh = lyapunov_run(problem, setup.params(z0=z0), rounds=T, replicas=int(ctx.profile.replicas), seed=ctx.seed + FRESH,
                         sigma2=SIGMA2)
    v, _, _ = _window_verdict(problem, setup, fresh, C0=0.0, Cc=0.0, sigma2=SIGMA2, level=ctx.profile.level, kappa_times=c,
                              informative_only=True, name=f"lasso, m kappa x {c:.3g} (fresh noise)")
    v = v.with_details(noise=f"fresh Monte Carlo noise (seed {ctx.seed + FRESH})")
    return control(v, changed="kappa", what=f"rate exponent m kappa x {c:.3g} = 2 / worst promised-over-achieved decrease "
                   f"{r:.3g} (lasso, C_0 = C_c = 0, fresh noise)", before=1.0, after=c, kind=MACHINERY,
                   violated_at=f"window starting at round {v.details['worst_window']}" if v.violated else None)


def exact_row(ctx: CheckContext, C0: float, Cc: float, T: int) -> Verdict:
    """The claim's row: the window claim at (C_0, C_c) on the ridge instance (linear-Gaussian: quadratic f_i, linear
    prox, Gaussian oracle), from exact moments (:func:`exact_lyapunov`), steps at Theorem 5's maxima for m = WINDOW,
    started away from x* with c_i,0 = 0 as Theorem 8's runs."""
    problem = make_instance("ridge", seed=ctx.seed)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=2, m=WINDOW)
    st = theorem8_start(problem, setup.gamma, 1.0, ctx.seed)
    EL = exact_lyapunov(problem, setup.params(z0=st.z0), rounds=T, sigma2=SIGMA2, gamma=setup.gamma, C0=C0, Cc=Cc)
    return exact_window_verdict(problem, setup, EL, C0=C0, Cc=Cc, sigma2=SIGMA2,
                                name=f"ridge (exact moments), C_0 = {C0:g}, C_c = {Cc:g}")


@register("fednmap.lyapunov", title="Reconstructed Lyapunov function: E[L_{t+m}] <= (1 - m kappa) E[L_t] + m kappa floor; smallest C_0",
          label="Section 4 / Appendix C.2", status="reconstructed", family="fednmap")
def check_lyapunov(ctx: CheckContext) -> CheckResult:
    """Windows of m = WINDOW rounds, steps at Theorem 5's maxima for that m. The claim's row: (C_0, C_c) = (1, 1) on
    the ridge instance from exact moments (:func:`exact_row`); the Monte Carlo windows on Lasso and MCP at (1, 1)
    (``tightness["monte_carlo_rows"]``: undecidable at this budget) and at (0, 0) and (1, 0) recorded only. Negative controls:
    the rate exponent m kappa multiplied by 2 / (worst promised-over-achieved decrease), on the Lasso experiment
    with fresh noise and at the searched worst case (one thing changed: the contraction; the old "/ 10" scaled the
    contraction and the noise together and was violated whatever the bound); the PEP's unbounded direction at
    C_c = 0 replayed exactly for C_0 = 0 and 1 (:func:`fedbounds.checks.fednmap.strict_form.lyapunov_replay`:
    L_1 > L_0, theorem kind), so the C_c = 0 windows are recorded in the tightness with ``class_evidence``
    (refuted over the class), not as rows. Tightness: the worst case searched, and the smallest C_0 for Theorem 8's
    bound."""
    prof = ctx.profile
    T = prof.rounds(int(prof.get("fednmap.lyapunov", "T", 1500)))
    res = CheckResult("fednmap.lyapunov")
    plot = Plot("lyapunov", f"FedNMap: E[L_t] (C_0 = C_c = 0) and the window bound (m = {WINDOW})", "round t", "E[L_t]")
    c0_star: dict[str, float] = {}
    instance_only: list[dict] = []
    monte_carlo: list[dict] = []
    ctx.tick("lyapunov ridge (exact moments)")
    res.verdicts += [exact_row(ctx, C0, Cc, T) for C0, Cc in CLAIM_CONSTANTS]
    for kind in ("lasso", "mcp"):
        ctx.tick(f"lyapunov {kind}")
        problem = make_instance(kind, seed=ctx.seed)
        c = problem.constants
        setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=2, m=WINDOW)
        st = theorem8_start(problem, setup.gamma, 1.0, ctx.seed)
        z0, gap0 = st.z0, st.psi_gap  # smallest_C0 takes C_c = 0: the psi gap, not E[L_0]
        data = lyapunov_run(problem, setup.params(z0=z0), rounds=T, replicas=int(prof.replicas), seed=ctx.seed, sigma2=SIGMA2)
        for C0, Cc in (*CLAIM_CONSTANTS, *INSTANCE_ONLY):
            v, starts, L = _window_verdict(problem, setup, data, C0=C0, Cc=Cc, sigma2=SIGMA2, level=prof.level,
                                           name=f"{kind}, C_0 = {C0:g}, C_c = {Cc:g}")
            if (C0, Cc) in CLAIM_CONSTANTS:  # Monte Carlo: cannot decide at this budget (module docstring); recorded
                monte_carlo.append({"instance": v.instance, "status": str(v.status), "ci": [v.ci_low, v.ci_high],
                                    "bound": v.bound, "replicas": int(prof.replicas)})
            else:  # refuted over the class (the replay controls below): recorded, not one of the claim's rows
                instance_only.append({"instance": v.instance, "status": str(v.status), "slack": v.slack,
                                      "class_evidence": UNBOUNDED_AT_ZERO})
            if (C0, Cc) == (0.0, 0.0):
                m_ = mean_ci(L.T, level=prof.level)[0]
                plot.curves.append(Curve(f"{kind}: E[L_t]", list(range(L.shape[0])), m_.tolist()))
                nxt = v.details["window_factor"] * m_[starts] + v.details["window_noise"]
                plot.curves.append(Curve(f"{kind}: window bound on E[L_(t+m)]", (starts + WINDOW).tolist(), nxt.tolist(), role="bound"))
        if kind == "lasso":
            r_lasso = promised_over_achieved(problem, setup, data, C0=0.0, sigma2=SIGMA2)
            res.negatives.append(_calibrated_window(problem, setup, ctx, z0, T, r_lasso))
        c0_star[kind] = smallest_C0(problem, setup, data, gap0, level=prof.level)
    res.plots.append(plot)
    res.tightness = {"smallest_C0_for_theorem8": c0_star, "window_m": WINDOW, "promised_over_achieved_lasso": r_lasso,
                     "instance_only_C_c_0": instance_only, "monte_carlo_rows": monte_carlo,
                     "note": "C_0 = 0 already makes Theorem 8's bound hold (its bound grows with C_0), so the stand-in is 0"}
    _searched("fednmap.lyapunov", ctx, res, slack_before=1.0 / r_lasso,
              quantity="max over windows with E[L_t] > floor of the promised decrease m kappa (E[L_t] - floor) over the "
                       "achieved E[L_t] - E[L_{t+m}] (exact, C_c = 0)")
    res.notes.append(f"smallest C_0 for Theorem 8's bound (Lyapunov E[L_0] with C_c = 0): {c0_star}")
    ctx.tick("lyapunov: PEP direction replayed (exact)")
    res.negatives += [lyapunov_replay(0), lyapunov_replay(1)]
    res.notes.append("C_c = 0 (recorded in the tightness, not the claim's rows): " + UNBOUNDED_AT_ZERO)
    res.notes.append("decided exactly on the ridge instance (linear-Gaussian: exact moments, no sampling error); the "
                     "Lasso and MCP windows at (C_0, C_c) = (1, 1) are Monte Carlo and cannot see a per-window decrease of "
                     "~1e-5 against an interval of ~1e-2 at this budget: recorded in tightness['monte_carlo_rows']")
    res.scope_tag = f"chosen: C_0=1, C_c=1, m={WINDOW}, steps at Theorem 5's maxima, Q=2"
    return res


def smallest_C0(problem, setup, data, gap0: float, *, level: float) -> float:
    """The smallest C_0 >= 0 (bisection on [0, 1e6]) for which every upper confidence bound of E[psi(x_t)] - psi*
    lies below Theorem 8's bound with E[L_0] = psi gap + (gamma C_0/2) ||F_nor(z_0)||^2 (C_c = 0); inf if none."""
    gaps = data["psi_gap"]
    ts = checkpoints(gaps.shape[0] - 1, 40)
    _, _, hi = mean_ci(gaps[ts].T, level=1 - (1 - level) / ts.size)
    F0 = float(data["Fnor2"][0].mean())

    def ok(C0: float) -> bool:
        EL0 = float(lyapunov_values({"psi_gap": np.array(gap0), "Fnor2": np.array(F0), "corr_err": np.array(0.0)}, setup.gamma, C0, 0.0))
        bound = theorem8_curve(theorem8_values(problem, setup, sigma2=SIGMA2, EL0=EL0, C0=C0), ts)
        return bool(np.all(hi <= bound))

    if ok(0.0):
        return 0.0
    lo, hi_c = 0.0, 1e6
    if not ok(hi_c):
        return float("inf")
    for _ in range(60):
        mid = 0.5 * (lo + hi_c)
        lo, hi_c = (lo, mid) if ok(mid) else (mid, hi_c)
    return hi_c
