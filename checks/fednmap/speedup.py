"""Linear speedup (FedNMap, Theorem 5 / Theorem 8 and Table 1: rates sigma^2/(nQT)): rounds to a target.

In the noise-dominated regime the rounds needed to reach a fixed target accuracy fall as 1/(nQ), so the
log-log slopes of rounds-to-target against n and against Q should both be -1. This module holds the
measurement (:func:`rounds_to_target`, imported by the sweeps) and the check built on it
(:func:`check_linear_speedup`, registered below).
"""

from __future__ import annotations

import numpy as np
from fedbounds.checks.verdicts.stats import mean_ci

__all__ = ["rounds_to_target", "target_curve"]


def target_curve(metric: np.ndarray, *, upper: bool = False, level: float = 0.95) -> np.ndarray:
    """The per-round curve that is compared with a target: the replica mean of ``metric`` (shape
    ``(rounds + 1, R)``), or its one-sided upper confidence bound when ``upper``."""
    m = np.asarray(metric, dtype=float)
    if m.ndim == 1:
        m = m[:, None]
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"metric must have shape (rounds + 1, R), got {np.shape(metric)}")
    mean, _low, high = mean_ci(m.T, level=level, one_sided=True)
    return np.atleast_1d(high if upper else mean)


def rounds_to_target(metric: np.ndarray, target: float, *, upper: bool = False, level: float = 0.95) -> int | None:
    """First round t such that the replica mean of ``metric`` (or, with ``upper``, its one-sided upper
    confidence bound at ``level``) is <= ``target`` at t and at every later recorded round.

    ``metric`` has shape ``(rounds + 1, R)`` (row t = after t rounds; a 1-d array is one replica). Returns
    ``None`` when the curve never stays below the target within the recorded rounds (a plateau above the
    target, or a non-finite value at the end: non-finite rounds never count as below).
    """
    if not np.isfinite(target):
        raise ValueError(f"target must be finite, got {target!r}")
    c = target_curve(metric, upper=upper, level=level)
    below = np.isfinite(c) & (c <= target)
    if not below[-1]:
        return None
    bad = np.flatnonzero(~below)
    return int(bad[-1] + 1) if bad.size else 0


# ---------------------------------------------------------------------------------------------- the check


def replicate_clients(problem, k: int):
    """The same problem with every client repeated ``k`` times: n -> k n, with f, psi*, x* and the
    heterogeneity pattern unchanged (so an n-sweep changes nothing but the number of clients)."""
    from fedbounds.algorithms.instances.least_squares import LeastSquares

    rep = LeastSquares(np.tile(problem.A, (k, 1, 1)), np.tile(problem.b, (k, 1)), problem.phi)
    rep.name = f"{problem.name}x{k}"
    return rep


def bootstrap_slope(xs: list[float], curves: list[np.ndarray], target: float, *, B: int, seed: int, level: float):
    """Point estimate and percentile interval of the log-log slope of rounds-to-target against ``xs``; each
    curve is (rounds + 1, R); replicas are resampled independently per configuration. Returns (fit or None,
    rounds per configuration, low, high, fraction of bootstrap draws in which every configuration reached
    the target)."""
    from fedbounds.checks.verdicts.stats import loglog_slope

    rounds = [rounds_to_target(c, target) for c in curves]
    if any(r is None or r == 0 for r in rounds):
        return None, rounds, float("nan"), float("nan"), 0.0
    fit = loglog_slope(np.array(xs, dtype=float), np.array(rounds, dtype=float), level=level)
    rng = np.random.default_rng([seed, 2718])
    slopes = []
    for _ in range(B):
        rs = []
        for c in curves:
            idx = rng.integers(0, c.shape[1], c.shape[1])
            rs.append(rounds_to_target(c[:, idx], target))
        if all(r is not None and r > 0 for r in rs):
            slopes.append(loglog_slope(np.array(xs, dtype=float), np.array(rs, dtype=float)).slope)
    if not slopes:
        return fit, rounds, float("nan"), float("nan"), 0.0
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(slopes, [a, 1.0 - a])
    return fit, rounds, float(lo), float(hi), len(slopes) / B


#: the algorithms compared: name -> (engine name, extra params)
SPEEDUP_ALGORITHMS: dict[str, tuple[str, dict]] = {
    "FedNMap": ("fednmap", {}),
    "FedNMap without correction": ("fednmap", {"correction": False}),
    "FedAvg + server prox": ("fedavg_prox", {}),
}

#: speedup instance and step rule (see check_linear_speedup)
SPEEDUP_SETUP = {"heterogeneity": 3.0, "hessian_het": 0.8, "sigma2": 1.0, "n0": 2, "Q0": 2, "eta_hat_factor": 4.0,
                 "eta_a_Q": 0.2, "target_factor": 2.0, "T_base": 3000, "band": 0.2}


def _speedup_params(engine: str, extra: dict, gamma: float, eta_hat: float, eta_a: float, Q: int) -> dict:
    """Parameters at effective step eta_hat = eta_s eta_a Q (eta_s from the theory's definition)."""
    from fedbounds.checks.fednmap.common import _ETA_S
    from fedbounds.checks.verdicts.formulas import evaluate
    from fedbounds.theory.core import symbols as S

    eta_s = evaluate(_ETA_S, {S.eta_hat: eta_hat, S.eta_a: eta_a, S.Q: Q})
    if engine == "fednmap":
        return {"gamma": gamma, "eta_a": eta_a, "eta_s": eta_s, "Q": Q, **extra}
    return {"eta_a": eta_a, "eta_s": eta_s, "Q": Q, **extra}


def _gap_curve(engine: str, problem, params: dict, *, rounds: int, replicas: int, seed: int, sigma2: float) -> np.ndarray:
    from fedbounds.algorithms.run import run
    from fedbounds.checks.fednmap.common import gaussian_oracle
    from fedbounds.checks.runtime.cache import cached

    key = ("speedup", engine, problem.name, repr(sorted((k, str(v)) for k, v in params.items())), rounds, replicas, seed, sigma2)

    def make() -> np.ndarray:
        traj = run(engine, problem, params, rounds=rounds, replicas=replicas, seed=seed, oracle=gaussian_oracle(sigma2),
                   metrics=("psi_gap",))
        g = traj.metrics["psi_gap"]
        if traj.divergence is not None:  # a diverged run never stays below a target
            g = np.vstack([g, np.full((1, g.shape[1]), np.inf)])
        return g

    return cached(key, make)  # type: ignore[return-value]


def _sweep_verdict(name: str, xs: list[int], curves: list[np.ndarray], target: float, *, axis: str, seed: int, level: float,
                   band: float, B: int):
    from fedbounds.checks.verdicts.verdict import Verdict

    fit, rounds, lo, hi, frac = bootstrap_slope([float(x) for x in xs], curves, target, B=B, seed=seed, level=level)
    details = {"axis": axis, "values": xs, "rounds_to_target": rounds, "target": target, "band": [-1 - band, -1 + band],
               "bootstrap_complete": frac, "quantity": f"log-log slope of rounds-to-target in {axis} (claim: -1)"}
    if fit is None:
        return Verdict("fednmap.theorem8.complexity", f"{name}, {axis} sweep", float("nan"), -1.0, float("nan"), float("nan"),
                       "violated", 0.0, False, {**details, "reason": "never reaches the target in some configuration (plateau above it)"})
    details.update({"ols_ci": [fit.ci_low, fit.ci_high]})
    if -1 - band <= lo and hi <= -1 + band:
        status = "holds"
    elif hi < -1 - band or lo > -1 + band or frac < 0.5:
        status = "violated"
    else:
        status = "inconclusive"
    return Verdict("fednmap.theorem8.complexity", f"{name}, {axis} sweep", fit.slope, -1.0, lo, hi, status,
                   float(-1.0 / fit.slope) if fit.slope < 0 else float("nan"), False, details)


def step_ratios(L: float, rho: float, eta_hat_base: float, configs: list[tuple[int, int]]) -> dict[str, dict[str, float]]:
    """eta_hat / eta_hat_max and eta_a / eta_a_max (Theorem 5's conditions at m = 1, from the theory's expressions
    via theorem5_parameters) for each (k, Q) of the sweep: eta_hat = eta_hat_base k Q / Q0, eta_a = eta_a_Q / Q."""
    from fedbounds.checks.fednmap.common import theorem5_parameters

    cfg = SPEEDUP_SETUP
    out = {}
    for k, Q in configs:
        su = theorem5_parameters(L, rho, Q=Q, m=1)
        out[f"n={cfg['n0'] * k},Q={Q}"] = {"eta_hat/eta_hat_max": eta_hat_base * k * Q / cfg["Q0"] / su.eta_hat_max,
                                           "eta_a/eta_a_max": cfg["eta_a_Q"] / Q / su.eta_a_max}
    return out


def step_ratio_note(ratios: dict[str, dict[str, float]]) -> str:
    """The note on how far past Theorem 5's conditions the sweep runs (the real ratios, from the formula)."""
    eh = [r["eta_hat/eta_hat_max"] for r in ratios.values()]
    ea = [r["eta_a/eta_a_max"] for r in ratios.values()]
    ea_txt = f"{min(ea):.0f}x" if max(ea) / min(ea) < 1.001 else f"{min(ea):.0f}x to {max(ea):.0f}x"
    return (f"steps past Theorem 5's conditions (its 1/100 factors make T impractical): eta_hat {min(eh):.0f}x to {max(eh):.0f}x "
            f"its maximum (it grows with nQ), eta_a {ea_txt} its maximum (eta_a = {SPEEDUP_SETUP['eta_a_Q']}/Q, the 1/Q cancels)")


def _speedup_control(name: str, axis: str, xs: list[int], curves: list[np.ndarray], v):
    """A speedup sweep of another algorithm recorded as a control: the one thing changed (the correction, or the
    normal-map update replaced by FedAvg's), where it failed (a configuration that never reaches the target, or
    the slope), and divergence (a diverged run ends in an inf row, see _gap_curve)."""
    from fedbounds.checks.verdicts.controls import control

    diverged = [x for x, c in zip(xs, curves) if not np.all(np.isfinite(c[-1]))]
    never = [x for x, r in zip(xs, v.details["rounds_to_target"]) if r is None]
    where = (f"{axis} = {never[0]} never reaches the target" if never else f"slope in {axis}") if v.violated else None
    changed, before, after = (("correction", True, False) if "correction" in name else ("algorithm", "fednmap", "fedavg_prox"))
    return control(v, changed=changed, what=f"{name}, {axis} sweep: same steps, heterogeneous l1 data", before=before, after=after,
                   violated_at=where, diverged=f"{axis} = {diverged}" if diverged else None)


def _register() -> None:
    from fedbounds.checks.registry import CheckContext, CheckResult, Curve, Plot, register

    @register("fednmap.theorem8.complexity", title="Linear speedup: rounds to a fixed target ~ 1/(nQ) (slopes in n and Q vs -1)",
              label="PL complexity (after Theorem 8)", status="verbatim", family="fednmap")
    def check_linear_speedup(ctx: CheckContext) -> CheckResult:
        """The PL complexity O~((L + rho) sigma^2/(n Q eps mu^2)) at a fixed target eps in the noise-dominated regime.

        Instance: Lasso, n0 = 2 clients with heterogeneous targets and Hessians (replicated for the n sweep, so
        f is unchanged), sigma^2 = 1. Step rule (the linear-speedup choice, as in the complexity's derivation:
        the variance term is O(eta_hat/(nQ)), so eta_hat can grow with nQ at a fixed floor): eta_hat =
        4 eta_hat_max(Theorem 5, m = 1) (n Q)/(n0 Q0), eta_a = 0.2/Q, eta_s from eta_hat = eta_s eta_a Q. The
        target eps is twice FedNMap's plateau at (n0, Q0). Rounds to target: the first round after which the
        replica mean stays <= eps. Log-log slopes in n (Q = 2) and in Q (n = 2), percentile bootstrap intervals
        over replicas; holds if the interval lies within -1 +- band, violated if it misses the band or a
        configuration never reaches eps. Negative controls: FedNMap without its correction and FedAvg with a
        server prox, same steps: their client-drift bias is a floor above eps (they lose the speedup)."""
        from fedbounds.checks.fednmap.common import make_instance, theorem5_parameters

        prof = ctx.profile
        cfg = SPEEDUP_SETUP
        base = make_instance("lasso", n=cfg["n0"], seed=ctx.seed, heterogeneity=cfg["heterogeneity"], hessian_het=cfg["hessian_het"])
        c = base.constants
        su = theorem5_parameters(c["L"].value, c["rho"].value, Q=cfg["Q0"], m=1)
        eh0 = cfg["eta_hat_factor"] * su.eta_hat
        full = prof.name != "quick"
        ks = [1, 2, 4, 8] if full else [1, 2, 4]
        Qs = [2, 4, 8, 16] if full else [2, 4, 8]
        T_base = int(prof.get("fednmap.theorem8.complexity", "T_base", cfg["T_base"]))  # set by convergence, not budget
        R = int(prof.replicas)

        def curve(name: str, k: int, Q: int) -> np.ndarray:
            eng, extra = SPEEDUP_ALGORITHMS[name]
            prob = replicate_clients(base, k) if k > 1 else base
            mult = k * Q / cfg["Q0"]
            params = _speedup_params(eng, extra, su.gamma, eh0 * mult, cfg["eta_a_Q"] / Q, Q)
            return _gap_curve(eng, prob, params, rounds=int(np.ceil(T_base / mult)), replicas=R, seed=ctx.seed, sigma2=cfg["sigma2"])

        ctx.tick("speedup: FedNMap base")
        g0 = curve("FedNMap", 1, cfg["Q0"])
        plateau = float(g0[-max(1, g0.shape[0] // 4):].mean())
        target = cfg["target_factor"] * plateau
        res = CheckResult("fednmap.theorem8.complexity")
        plot_n = Plot("speedup_n", f"Rounds to E[psi - psi*] <= {target:.2e} against n (Q = 2)", "n", "rounds to target", logx=True)
        plot_q = Plot("speedup_q", f"Rounds to E[psi - psi*] <= {target:.2e} against Q (n = 2)", "Q", "rounds to target", logx=True)
        for name in SPEEDUP_ALGORITHMS:
            ctx.tick(f"speedup: {name}")
            cn = [curve(name, k, cfg["Q0"]) for k in ks]
            cq = [curve(name, 1, Q) for Q in Qs]
            ns = [cfg["n0"] * k for k in ks]
            for axis, xs, curves, plot in (("n", ns, cn, plot_n), ("Q", Qs, cq, plot_q)):
                v = _sweep_verdict(name, xs, curves, target, axis=axis, seed=ctx.seed, level=prof.level, band=cfg["band"],
                                   B=int(prof.get("fednmap.theorem8.complexity", "bootstrap", 200)))
                if name == "FedNMap":
                    res.verdicts.append(v)
                else:
                    res.negatives.append(_speedup_control(name, axis, xs, curves, v))
                rounds = [r if r is not None else float("nan") for r in v.details["rounds_to_target"]]
                label = name if any(r is not None for r in v.details["rounds_to_target"]) else f"{name}: never reaches the target"
                plot.curves.append(Curve(label, xs, rounds, role="observed" if name == "FedNMap" else "negative"))
        r0 = res.verdicts[0].details["rounds_to_target"][0] if res.verdicts else None
        if r0:
            plot_n.curves.append(Curve("slope -1", [cfg["n0"] * k for k in ks], [r0 / k for k in ks], role="bound"))
            plot_q.curves.append(Curve("slope -1", Qs, [r0 * cfg["Q0"] / Q for Q in Qs], role="bound"))
        res.plots += [plot_n, plot_q]
        ratios = step_ratios(c["L"].value, c["rho"].value, eh0, [(k, cfg["Q0"]) for k in ks] + [(1, Q) for Q in Qs])
        configs = {"n": [(k, cfg["Q0"]) for k in ks], "Q": [(1, Q) for Q in Qs]}
        res.verdicts = [v.with_details(at=[{"L": c["L"].value, "rho": c["rho"].value, "gamma": su.gamma, "m": 1, "n": cfg["n0"] * k, "Q": Q,
                                            "eta_hat": eh0 * k * Q / cfg["Q0"], "eta_a": cfg["eta_a_Q"] / Q}
                                           for k, Q in configs[v.details["axis"]]]) for v in res.verdicts]
        res.tightness = {"target": target, "fednmap_plateau_base": plateau, "eta_hat_base": eh0, "step_ratios": ratios,
                         "not_applicable": "a slope claim (rounds to a target against n and Q): no observed / bound ratio"}
        res.notes.append(step_ratio_note(ratios))
        return res


_register()
