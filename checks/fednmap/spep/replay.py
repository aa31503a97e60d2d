"""Replaying a stochastic FedNMap worst case through the engine (the stochastic PEP's loop closed; docs/fednmap-reconstruction.md §10.5).

The expected-Gram PEP of :mod:`fedbounds.checks.fednmap.spep.encoding` bounds E[Lyap_1] - Lyap_0 + margin from above (K*,
per sigma^2), but its optimal expected Gram matrix need not factor into one deterministic f plus a noise law. Its
finite-scenario lower bound does: the noise of client i is e_i = s_i u_i with fair independent signs (one trajectory
per sign pattern, one set of functions for all; ``scenario=True``, Q = 1). So the replay realises that problem's
optimum:

1. Solve the scenario PEP (Clarabel, at the sigma^2 scales :func:`~fedbounds.checks.fednmap.spep.encoding.noise_coefficient`
   tries) and read its solution: the start z_0, the free corrections c_{i,0}, the noise directions u_i, and the
   triplets of every f_i and of h over all 2^n patterns' points at once.
2. Make it concrete with :func:`fedbounds.checks.fednmap.pep.replay.realise` (the max-affine regulariser and the
   Taylor-Hendrickx-Glineur smooth interpolant, or a quadratic where one interpolates).
3. Run one round of the engine (``algorithms/fednmap.py``) from (z_0, c_0) with the finite-support noise
   :class:`fedbounds.algorithms.oracles.SignOracle` (u_i, signs +-1): exact enumeration, one replica per sign pattern
   (the mean is exact, no interval), and optionally Monte Carlo with random signs (mean and a two-sided 95% t-interval).
4. Measure E[Lyap_1] - Lyap_0 + d ||F_nor(z_0)||^2 + d_c C_c corr_err_0 on the engine's states
   (:func:`fedbounds.checks.fednmap.pep.replay.lyapunov_terms`), per sigma^2.

What is compared (:class:`ScenarioReplay`): the replayed mean against the solved scenario PEP (the same instance: equal
up to the interpolant's misfit), against the two-solver scenario certificate (the lower bound) and against the
expected-Gram certificate (the upper bound). The relaxation's gap is upper - scenario: where it is at solver accuracy
(``tight``) the replay meets the certificate; elsewhere the replay meets the scenario value and the gap is reported,
never called a failure (the upper bound may be loose, or the scenario family too small: it cannot tell which).

Controls (``controls=True``: the same instance, one thing changed). ``"none"`` replays with exact gradients (the noise
removed) and must miss by the noise's share. ``"worst"`` gives every replica the sign pattern with the largest Lyap_1:
a noise that is not mean-zero given the past (chosen after its effect is known); it must exceed even the
expected-Gram upper bound wherever the patterns differ (at n = 1 the worst case is symmetric in the sign, so it
cannot, and does not, miss there).

The validation point of :mod:`fedbounds.checks.pep.sgd` (one SGD step, tight by construction at L eta^2/2) is
replayed the same way (:func:`replay_sgd`: FedNMap with n = Q = 1 and phi = 0 is that step).

Run ``python -m fedbounds.checks.fednmap.spep.replay --write`` (about 10 minutes on 2 loaded cores, most of it the
two-solver scenario certificate at n = 3) to rewrite :data:`TARGET` (Monte Carlo seeded).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from fedbounds.checks.fednmap.pep.encoding import theorem8_exponent
from fedbounds.checks.fednmap.pep.replay import lyapunov_terms, realise
from fedbounds.checks.fednmap.spep.constants import MU, RHO, L, point_steps, round_noise
from fedbounds.checks.fednmap.spep.encoding import build_round_spep
from fedbounds.checks.pep.solve import solve_once
from fedbounds.checks.pep.stochastic import sign_patterns
from fedbounds.checks.runtime.jsonsafe import json_safe

__all__ = ["POINTS", "SGD_POINTS", "TARGET", "TIGHT_REL", "SGDReplay", "ScenarioReplay", "evidence", "main", "replay_scenario",
           "replay_sgd"]

#: (n, C_0, C_c) of the evidence (Q = 1: the scenario lower bound is built for Q = 1 only)
POINTS: tuple[tuple[int, float, float], ...] = ((1, 1.0, 1e-2), (1, 4.0, 1e-2), (2, 1.0, 1e-2), (2, 1.0, 1e-3), (3, 1.0, 1e-2))
#: (L, eta) of the SGD validation point's replays (:func:`replay_sgd`)
SGD_POINTS: tuple[tuple[float, float], ...] = ((1.0, 0.5), (2.0, 0.3), (1.0, 1.5))
#: relative gap (upper - scenario)/upper up to which the relaxation counts as tight at a point: the certificates' own
#: agreement tolerance (two solvers within DEFAULT_REL_TOL = 1e-3), so a smaller gap is not resolved by them
TIGHT_REL = 1e-3
TARGET = "theory/fednmap/spep_replay.json"
_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


@dataclass(frozen=True)
class ScenarioReplay:
    """One point's figures, all per sigma^2 (module docstring).

    ``upper`` / ``scenario``: the expected-Gram and scenario certificates' values (None unless certified), with their
    ``*_status``; ``solved``: the primal value of the scenario PEP solve that was replayed (``solve_status``);
    ``replay_mean``: the engine's exact mean over the 2^n patterns; ``controls``: the same measure on the same
    instance with the noise removed (``"none"``) and with every replica on the worst pattern (``"worst"``), empty
    unless asked; ``mc_mean``, ``mc_ci``: Monte Carlo with random signs (None unless asked); ``per_pattern``: (PEP,
    engine) Lyap_1 per sign pattern, unnormalised; ``fit_residual`` the interpolant's worst misfit; ``seconds``
    the whole point (the certificates included).
    """

    n: int
    C_0: float
    C_c: float
    upper: float | None
    upper_status: str
    scenario: float | None
    scenario_status: str
    solved: float
    solve_status: str
    replay_mean: float
    mc_mean: float | None
    mc_ci: tuple[float, float] | None
    mc_replicas: int
    fit_residual: float
    dimension: int
    construction: str
    sigma2: float
    seconds: float
    per_pattern: list[tuple[float, float]] = field(default_factory=list)
    controls: dict[str, float] = field(default_factory=dict)

    @property
    def replay_error(self) -> float:
        """|replay_mean - solved| / |solved|: the engine against the instance it replays (solver and QP accuracy)."""
        return abs(self.replay_mean - self.solved) / abs(self.solved)

    @property
    def gap(self) -> float | None:
        """upper - scenario (the relaxation's gap), None unless both certified."""
        return None if self.upper is None or self.scenario is None else self.upper - self.scenario

    @property
    def rel_gap(self) -> float | None:
        return None if self.gap is None or self.upper is None else self.gap / abs(self.upper)

    @property
    def rel_gap_solved(self) -> float | None:
        """(upper - solved)/upper: the gap against the one-solver (Clarabel) scenario value that was replayed; not
        certified, reported where the scenario certificate is not."""
        return None if self.upper is None else (self.upper - self.solved) / abs(self.upper)

    @property
    def tight(self) -> bool | None:
        """The relaxation meets its lower bound here (rel_gap <= :data:`TIGHT_REL`); None unless both certified."""
        return None if self.rel_gap is None else self.rel_gap <= TIGHT_REL

    def record(self) -> dict[str, Any]:
        """A JSON-ready dict with the derived figures."""
        out = asdict(self)
        out.update(replay_error=self.replay_error, gap=self.gap, rel_gap=self.rel_gap, tight=self.tight,
                   rel_gap_solved=self.rel_gap_solved, patterns=sign_patterns(self.n),
                   replay_vs_upper=None if self.upper is None else (self.replay_mean - self.upper) / abs(self.upper),
                   replay_vs_scenario=None if self.scenario is None else (self.replay_mean - self.scenario) / abs(self.scenario))
        return out


class _FixedNoise:
    """The ``"worst"`` control's oracle: replica r gets the fixed noise E[r] (not mean-zero: not a SignOracle)."""

    sigma2 = 0.0

    def __init__(self, E: np.ndarray) -> None:
        self.E = E

    def sample(self, problem: Any, X: np.ndarray, rng: Any = None) -> np.ndarray:
        return problem.grad(X) + self.E


def _solve_scenario(n: int, C_0: float, C_c: float, k: float, mu: float) -> tuple[Any, float]:
    """The scenario PEP's first optimal Clarabel solve over the sigma^2 scales (tight tolerances, then defaults)."""
    p = point_steps(n, 1, k)
    d_c = theorem8_exponent(p["eta_hat"], mu, p["gamma"], C_0)
    best = None
    for s2 in (1.0 / p["eta_hat"] ** 2, 1.0, 100.0 / p["eta_hat"] ** 2):
        build = build_round_spep(L, RHO, p["gamma"], p["eta_a"], p["eta_s"], n, 1, C_0, C_c, p["d"], d_c, sigma2=s2,
                                 scenario=True)
        for opts in (_TIGHT, None):
            r, _ = solve_once(build, "CLARABEL", opts)
            if r.primal is not None and r.evaluations and (best is None or (r.optimal and not best[0].optimal)):
                best = (r, s2)
            if r.optimal:
                return r, s2
    if best is None:
        raise RuntimeError(f"the scenario PEP did not solve at n={n}, C_0={C_0}, C_c={C_c}; nothing to replay")
    return best


def replay_scenario(n: int, C_0: float, C_c: float, k: float = 16.0, mu: float = MU, controls: bool = False,
                    mc_replicas: int = 0, seed: int = 0, certificates: bool = True) -> ScenarioReplay:
    """Replay the scenario worst case at (n, Q = 1, C_0, C_c), steps k times Theorem 5's (module docstring).

    ``controls``: also replay the same instance with the noise removed and with the worst pattern for every replica.
    ``mc_replicas`` > 0 adds a Monte Carlo run with random signs (seeded by ``seed``). ``certificates``: also certify
    the expected-Gram and the scenario values with two solvers (:func:`fedbounds.checks.fednmap.spep.constants.round_noise`)."""
    from fedbounds.algorithms.oracles import ExactOracle, SignOracle
    from fedbounds.algorithms.run import run

    t0 = time.perf_counter()
    p = point_steps(n, 1, k)
    d_c = theorem8_exponent(p["eta_hat"], mu, p["gamma"], C_0)
    sr, s2 = _solve_scenario(n, C_0, C_c, k, mu)
    ev = sr.evaluations
    inst = realise(ev, n, L, RHO, extra=(*(f"c0_{i}" for i in range(n)), *(f"u{i}" for i in range(n))))
    prob, proj = inst.problem, inst.project
    z0 = proj(ev["z0"])
    c0 = np.array([proj(ev[f"c0_{i}"]) for i in range(n)])
    U = np.array([proj(ev[f"u{i}"]) for i in range(n)])
    pats = np.array(sign_patterns(n), dtype=float)
    params = {"gamma": p["gamma"], "eta_a": p["eta_a"], "eta_s": p["eta_s"], "Q": 1, "z0": z0, "c0": c0}

    def lyap1(oracle: Any, replicas: int, seed: int = 0) -> np.ndarray:
        states: list[Any] = []
        traj = run("fednmap", prob, params, rounds=1, replicas=replicas, seed=seed, oracle=oracle, metrics=(),
                   callback=lambda t, s: states.append(s))
        traj.raise_if_diverged()
        return lyapunov_terms(prob, states[-1].z, states[-1].c, p["gamma"], C_0, C_c)[0]

    v0, fn2_0, corr_0 = (float(a[0]) for a in lyapunov_terms(prob, z0[None, :], c0[None], p["gamma"], C_0, C_c))
    base = -v0 + p["d"] * fn2_0 + d_c * C_c * corr_0
    per = lyap1(SignOracle(U, signs=pats), len(pats))
    ctl: dict[str, float] = {}
    if controls:
        ctl["none"] = (float(lyap1(ExactOracle(), 1)[0]) + base) / s2
        worst = pats[int(np.argmax(per))][:, None] * U
        ctl["worst"] = (float(lyap1(_FixedNoise(worst[None]), 1)[0]) + base) / s2
    mc_mean = mc_ci = None
    if mc_replicas > 0:
        from fedbounds.checks.verdicts.stats import mean_ci

        draws = lyap1(SignOracle(U), int(mc_replicas), seed)
        m, lo, hi = mean_ci(draws, level=0.95, one_sided=False)
        mc_mean, mc_ci = (float(m) + base) / s2, ((float(lo) + base) / s2, (float(hi) + base) / s2)
    up = sc = None
    if certificates:
        up, sc = round_noise(n, 1, C_0, C_c, k, mu), round_noise(n, 1, C_0, C_c, k, mu, scenario=True)
    return ScenarioReplay(
        n=n, C_0=C_0, C_c=C_c,
        upper=up.value if up is not None and up.certified else None, upper_status=up.status if up else "not run",
        scenario=sc.value if sc is not None and sc.certified else None, scenario_status=sc.status if sc else "not run",
        solved=float(sr.primal) / s2, solve_status=sr.status, replay_mean=(float(per.mean()) + base) / s2,
        mc_mean=mc_mean, mc_ci=mc_ci, mc_replicas=int(mc_replicas), fit_residual=inst.fit_residual,
        dimension=inst.dimension, construction=inst.construction, sigma2=s2, seconds=time.perf_counter() - t0,
        per_pattern=[(float(ev[f"lyap1_{j}"]), float(per[j])) for j in range(len(pats))], controls=ctl,
    )


@dataclass(frozen=True)
class SGDReplay:
    """The validation point (:mod:`fedbounds.checks.pep.sgd`): one SGD step, E f(x_+) - f(x) + eta (1 - L eta/2)
    ||grad f(x)||^2 per sigma^2. ``exact`` = L eta^2/2 (the descent lemma, tight: both PEPs must return it),
    ``upper`` / ``scenario`` the two certificates' values, ``solved`` the replayed scenario solve, ``replay_mean`` the
    engine's exact two-pattern mean, ``control_none`` the same with exact gradients."""

    L: float
    eta: float
    exact: float
    upper: float | None
    scenario: float | None
    solved: float
    replay_mean: float
    control_none: float
    fit_residual: float
    construction: str
    seconds: float

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "replay_vs_exact": (self.replay_mean - self.exact) / self.exact}


def replay_sgd(L: float = 1.0, eta: float = 0.5, certificates: bool = True) -> SGDReplay:
    """Replay the SGD step's two-scenario worst case through the engine: FedNMap with n = Q = 1, phi = 0, eta_s = 1,
    eta_a = eta is x_+ = x - eta (g + e) (v = 0, c = 0), the noise :class:`~fedbounds.algorithms.oracles.SignOracle`."""
    from fedbounds.algorithms.oracles import ExactOracle, SignOracle
    from fedbounds.algorithms.run import run
    from fedbounds.checks.pep.sgd import sgd_noise_coefficient, sgd_step_pep, sgd_step_scenario_pep

    t0 = time.perf_counter()
    cert = sgd_step_scenario_pep(L, eta, solvers=("CLARABEL",))
    sr = cert.runs[0]
    if not sr.optimal or not sr.evaluations:
        raise RuntimeError(f"the SGD scenario PEP did not solve ({sr.status}); nothing to replay")
    ev = sr.evaluations
    inst = realise(ev, 1, L, 0.0, extra=("u0",))
    prob = inst.problem
    z0, U = inst.project(ev["z0"]), inst.project(ev["u0"])[None, :]
    params = {"gamma": 1.0, "eta_a": eta, "eta_s": 1.0, "Q": 1, "z0": z0}

    def f1(oracle: Any, replicas: int) -> np.ndarray:
        states: list[Any] = []
        run("fednmap", prob, params, rounds=1, replicas=replicas, oracle=oracle, metrics=(),
            callback=lambda t, st: states.append(st)).raise_if_diverged()
        return prob.f(states[-1].x)

    g0 = prob.grad_f(z0[None, :])[0]
    base = -float(prob.f(z0[None, :])[0]) + eta * (1 - L * eta / 2) * float(g0 @ g0)
    up = sc = None
    if certificates:
        up_c, sc_c = sgd_step_pep(L, eta), sgd_step_scenario_pep(L, eta)
        up, sc = (up_c.value if up_c.certified else None), (sc_c.value if sc_c.certified else None)
    return SGDReplay(L=L, eta=eta, exact=sgd_noise_coefficient(L, eta), upper=up, scenario=sc, solved=float(sr.primal),
                     replay_mean=float(f1(SignOracle(U, signs=np.array([[1.0], [-1.0]])), 2).mean()) + base,
                     control_none=float(f1(ExactOracle(), 1)[0]) + base, fit_residual=inst.fit_residual,
                     construction=inst.construction, seconds=time.perf_counter() - t0)


def evidence(points: tuple[tuple[int, float, float], ...] = POINTS, mc_replicas: int = 256, seed: int = 0) -> dict[str, Any]:
    """Every point replayed, with its controls and a Monte Carlo run (``mc_replicas`` random-sign replicas)."""
    rows = []
    for n, c0, cc in points:
        rep = replay_scenario(n, c0, cc, controls=True, mc_replicas=mc_replicas, seed=seed)
        rows.append(rep.record())
        print(f"n={n} C_0={c0:g} C_c={cc:g}: upper={rep.upper} scenario={rep.scenario} replay={rep.replay_mean:.6g} "
              f"(err {rep.replay_error:.1e}) rel_gap={rep.rel_gap} controls={rep.controls} {rep.seconds:.1f}s",
              file=sys.stderr, flush=True)
    sgd = [replay_sgd(L_, eta).record() for L_, eta in SGD_POINTS]
    return {"command": "python -m fedbounds.checks.fednmap.spep.replay --write", "seed": seed, "mc_replicas": mc_replicas,
            "mc_level": "two-sided 95% t-interval",
            "point": {"L": L, "rho": RHO, "mu": MU, "k": 16.0, "Q": 1, "T": 1, "corrections": "free",
                      "d": "eta_hat/9", "d_c": "Theorem 8's exponent", "per": "sigma^2 = 1"},
            "tight_rel": TIGHT_REL, "rows": rows, "sgd": sgd}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedbounds.checks.fednmap.spep.replay", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {TARGET} (atomically) instead of printing")
    args = ap.parse_args(argv)
    from fedbounds.checks.runtime.install import evidence_path, refuse_unwritable, write_evidence

    target = evidence_path(TARGET)
    if args.write and refuse_unwritable(target):
        return 2
    text = json.dumps(json_safe(evidence()), indent=1, sort_keys=True)
    if not args.write:
        print(text)
        return 0
    return write_evidence(target, text)


if __name__ == "__main__":
    sys.exit(main())
