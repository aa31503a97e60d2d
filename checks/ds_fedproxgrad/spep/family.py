"""``ds.spep.*``: Lemma 5.2's noise and heterogeneity coefficients over the whole class (expected-Gram PEP).

The encoding is :mod:`fedbounds.checks.ds_fedproxgrad.spep.encoding`; the printed coefficients come from the theory layer
(``Xi_sigma2_coefficient`` = (3/2) L_F eta^2, ``Xi_G2_coefficient`` = eta (1 + 3 L_F eta/2) gamma_r^2). At each grid
point (eta, gamma_r, N; inside the paper's conditions eta <= 1/(6 L_F), gamma_r <= 1/(sqrt(10) B)) with Phi = 1/4 and the
G_r part of Xi as printed:

* ``ds.spep.sigma2`` (remark on eq. (22)): the certified smallest sigma^2 coefficient K_sigma* against (3/2) L_F eta^2,
  under the paper's noise model (9) (``correlated``: E[e | x] = 0 only; the local errors may correlate with e), with
  G = 0 and with G^2 free and charged at its printed coefficient (the joint form), and under the tighter reading
  (``independent``: e also orthogonal to the local errors). ``observed`` = K_sigma*, ``bound`` = the printed one,
  slack = printed / certified (the room). Each point also carries the two-scenario lower bound (e = +-u; admissible
  instances) and lower/upper, which is 1 where the relaxation is tight.
* ``ds.spep.G2`` (remark on eq. (22)): the certified smallest G^2 coefficient K_G* (sigma = 0, G^2 = 1) against
  eta (1 + 3 L_F eta/2) gamma_r^2.

Negative controls, each changing one thing on the check's own experiment:
* sigma2: the orthogonality constraints dropped (noise free to align with the gradient): K_sigma* grows past the
  printed coefficient (measured 4.54 L_F eta^2 at the corner, against 1.5);
* both: the printed coefficient divided by twice its measured room at the first point (the bound becomes half the
  certified worst case): the verdict must flip to violated. This tests that a constant off by that much is caught.

Which evidence decides which verdict. The expected-Gram value, certified or proved (an exact rational certificate of
value + delta), is an *upper* bound: it decides ``holds``. ``violated`` needs an admissible instance above the bound
(:mod:`fedbounds.checks.pep.lower`): the two-scenario instance's value for the sigma^2 measures (the relaxation's own
primal point is not an instance), the PEP's primal value where the PEP is exact (the G^2 measure has no noise leaf; the
orthogonality-free control's noise leaves are plain vectors). A verdict's ``ci_low`` is that lower bound (nan when there
is none: then it can read ``holds`` or ``inconclusive``, never ``violated``), ``ci_high`` the certified upper bound.

Measured (2 cores, under load; ``fedbounds check --claim ds.spep``): quick about 2-4 CPU-s (two points, N = 2).

Reference: Arif, DS FedProxGrad (arXiv 2512.08671) Lemma 5.2, eqs. (9), (14), (19), (22); docs/ds-fedproxgrad-notes.md
§1.4 and §1.7; theory claims ``ds.spep.sigma2`` and ``ds.spep.G2`` (status remark).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from fedbounds.checks.ds_fedproxgrad.pep.encoding import theory_values
from fedbounds.checks.ds_fedproxgrad.pep.family import class_at
from fedbounds.checks.ds_fedproxgrad.spep.encoding import SPoint, printed_coefficients, scenario_pep, stochastic_pep
from fedbounds.checks.pep.lower import primal_lower
from fedbounds.checks.pep.solve import Certificate, pep_verdict
from fedbounds.checks.registry import CheckContext, CheckResult, register
from fedbounds.checks.verdicts.controls import control
from fedbounds.checks.verdicts.verdict import Verdict, decide

__all__ = ["CLASS", "GRIDS", "check_G2", "check_sigma2", "grid_point"]

SIGMA2, G2 = "ds.spep.sigma2", "ds.spep.G2"
#: the class's constants (those of the deterministic ds.pep checks)
CLASS: dict[str, float] = {"L_f": 1.0, "L_r": 1.0, "lam": 0.5, "B": 1.0}
#: per profile: (eta / (1/(6 L_F)), gamma_r / (1/(sqrt(10) B)), N)
GRIDS: dict[str, list[tuple[float, float, int]]] = {
    "quick": [(1.0, 1.0, 2), (0.5, 1.0, 2)],
    "full": [(ef, gf, N) for N in (2, 3) for ef in (1.0, 0.5, 0.25) for gf in (0.5, 1.0)],
}
#: the sigma^2 measures: (noise model, G^2 charged at its printed coefficient?)
SIGMA2_MODELS: tuple[tuple[str, bool], ...] = (("correlated", False), ("correlated", True), ("independent", False))


def grid_point(eta_frac: float, gamma_frac: float, N: int) -> SPoint:
    """eta = eta_frac x 1/(6 L_F), gamma_r = gamma_frac x 1/(sqrt(10) B), from the theory layer."""
    base = theory_values(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], 1.0, 0.0)
    return SPoint(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], eta_frac * base["eta_max"],
                  gamma_frac * base["gamma_absorb"], N)


def _grid(ctx: CheckContext) -> list[tuple[float, float, int]]:
    return GRIDS.get(ctx.profile.name, GRIDS["quick"])


def _label(ef: float, gf: float, N: int) -> str:
    return f"N = {N}, eta = {ef:g} x 1/(6 L_F), gamma_r = {gf:g} x 1/(sqrt(10) B), Phi = 1/4"


def _at(p: SPoint) -> dict[str, float]:
    """The scope's point (``details["at"]``) of a verdict at ``p``: the step and inexactness of Lemma 5.2's hypotheses."""
    return class_at(p.eta, p.gamma_r, {"L_f": p.L_f, "L_r": p.L_r, "lam": p.lam, "B": p.B})


def _room(v: Verdict) -> float:
    """printed / certified (nan when not certified)."""
    return v.bound / v.observed if math.isfinite(v.observed) and v.observed > 0 else math.nan


def _coef_verdict(cid: str, instance: str, cert: Certificate, printed: float, scale: float, lower: float | None = None,
                  **extra: Any) -> Verdict:
    """worst coefficient <= printed; slack = printed / certified; ``scale`` (L_F eta^2 or the printed K_G) for reports.

    ``lower``: an admissible instance's coefficient (module docstring), the only evidence that can make it ``violated``;
    the certified value (an upper bound) makes it ``holds``, or nothing."""
    v = pep_verdict(cid, instance, cert, printed, certified_over_scale=None if cert.value is None else cert.value / scale,
                    printed_over_scale=printed / scale, lower=lower,
                    violation_evidence="the scenario instance (ci_low); the expected-Gram PEP is a relaxation", **extra)
    return replace(v, slack=_room(v), **_bounded(v, lower, printed))


def _bounded(v: Verdict, lower: float | None, bound: float) -> dict[str, Any]:
    """ci_low = the admissible lower bound (nan: none), ci_high = the certified upper bound (nan: not certified, +inf:
    certified unbounded), and the status they decide: ``holds`` on the upper bound, ``violated`` on the lower bound."""
    pep = v.details["pep"]["pep_status"]
    upper = v.observed if pep in ("certified", "proved") else (math.inf if pep == "unbounded" else math.nan)
    low = math.nan if lower is None else float(lower)
    status = "inconclusive"
    if math.isfinite(upper) and decide(upper, upper, bound, exact=True) == "holds":
        status = "holds"
    elif not math.isnan(low) and decide(low, low, bound, exact=True) == "violated":
        status = "violated"
    return {"ci_low": low, "ci_high": upper, "status": status}


def sigma2_verdicts(p: SPoint, label: str) -> list[Verdict]:
    """One verdict per noise model of :data:`SIGMA2_MODELS`, with the scenario lower bound where it applies."""
    pc = printed_coefficients(p)
    scale = pc["L_F"] * p.eta**2
    out = []
    lows: dict[str, tuple[float | None, str]] = {}
    for noise, joint in SIGMA2_MODELS:
        cert = stochastic_pep(p, "sigma2", noise, a_G=pc["K_G"] if joint else None)
        extra: dict[str, Any] = {"noise": noise, "G2": "free, charged at the printed coefficient" if joint else "0",
                                 "unit": "L_F eta^2", "K_sigma_tight_printed": pc["K_sigma_tight"], "at": _at(p)}
        if noise not in lows:
            scen = scenario_pep(p, noise)
            lows[noise] = (primal_lower(scen), scen.status)  # the two-scenario instance: admissible (module docstring)
        lower, scen_status = lows[noise]
        # the joint measure's G^2 = 0 is feasible, so the G = 0 scenario instance bounds it from below too
        extra.update(scenario_lower=lower, scenario_status=scen_status,
                     lower_over_upper=lower / cert.value if lower is not None and cert.certified and cert.value else None)
        what = f"{noise} noise, G^2 {'charged at printed' if joint else '= 0'}"
        out.append(_coef_verdict(SIGMA2, f"{label}: {what}", cert, pc["K_sigma"], scale, lower, **extra))
    return out


@register(SIGMA2, title="Lemma 5.2's sigma^2 coefficient (3/2) L_F eta^2 over the whole class (expected-Gram PEP)",
          label="Lemma 5.2, eq. (22)", status="remark", erratum=True, family="ds.spep", expect="holds")
def check_sigma2(ctx: CheckContext) -> CheckResult:
    """Certified K_sigma* per grid point and noise model against (3/2) L_F eta^2; controls (module docstring)."""
    res = CheckResult(SIGMA2)
    grid = _grid(ctx)
    for point in grid:
        ctx.tick(f"stochastic PEP, sigma^2 coefficient, {_label(*point)}")
        res.verdicts.extend(sigma2_verdicts(grid_point(*point), _label(*point)))
    p = grid_point(*grid[0])
    pc = printed_coefficients(p)
    free = stochastic_pep(p, "sigma2", "free")
    res.negatives.append(control(
        _coef_verdict(SIGMA2, f"control: {_label(*grid[0])}, orthogonality dropped", free, pc["K_sigma"], pc["L_F"] * p.eta**2,
                      primal_lower(free)),  # no orthogonality: the noise leaves are plain vectors, the PEP is exact
        changed="orthogonality", what="E<e, v> = 0 dropped (the noise may align with the gradient)", before="imposed",
        after="dropped", violated_at=_label(*grid[0])))
    res.negatives.append(_halved_room_control(SIGMA2, res.verdicts[0], "(3/2) L_F eta^2"))
    _summary(res, "L_F eta^2")
    return res


@register(G2, title="Lemma 5.2's G^2 coefficient eta (1 + 3 L_F eta/2) gamma_r^2 over the whole class (PEP)",
          label="Lemma 5.2, eq. (22)", status="remark", erratum=True, family="ds.spep", expect="holds")
def check_G2(ctx: CheckContext) -> CheckResult:
    """Certified K_G* (sigma = 0, G^2 = 1) per grid point against the printed coefficient; control (module docstring)."""
    res = CheckResult(G2)
    for point in _grid(ctx):
        ctx.tick(f"PEP, G^2 coefficient, {_label(*point)}")
        p = grid_point(*point)
        pc = printed_coefficients(p)
        cert = stochastic_pep(p, "G2")
        # no noise leaf at sigma = 0: a deterministic PEP, exact for the class, so its primal point is an instance
        res.verdicts.append(_coef_verdict(G2, _label(*point), cert, pc["K_G"], pc["K_G"], primal_lower(cert), unit="printed K_G",
                                          at=_at(p)))
    res.negatives.append(_halved_room_control(G2, res.verdicts[0], "eta (1 + 3 L_F eta/2) gamma_r^2"))
    _summary(res, "printed")
    return res


def _halved_room_control(cid: str, v: Verdict, name: str) -> Verdict:
    """The first verdict's printed coefficient divided by twice its measured room: the bound becomes half the
    certified worst case, and the verdict must flip (the same experiment; a calibrated control, labelled so).

    ``violated`` is decided by the admissible lower bound (``details["lower"]``, module docstring), never by the
    certified or proved value: an upper bound above the halved bound shows nothing."""
    room = _room(v)
    if not math.isfinite(room):
        return control(replace(v, status="inconclusive"), changed="bound", what="no certified room to divide by",
                       before=v.bound, after=None)
    bound = v.bound / (2 * room)
    lower = v.details.get("lower")
    details = {**v.details, "ratio": v.observed / bound, "calibrated": "from the measured room",
               "decided_by": "admissible lower bound" if lower is not None else "none (no admissible lower bound)"}
    flipped = replace(v, instance=f"control: {v.instance}, printed {name} / (2 x room {room:.3g})", bound=bound,
                      slack=bound / v.observed, details=details)
    flipped = replace(flipped, **_bounded(flipped, lower, bound))
    return control(flipped, changed="bound", what=f"printed {name} divided by twice its measured room (calibrated)",
                   before=v.bound, after=bound, violated_at=v.instance)


def _summary(res: CheckResult, unit: str) -> None:
    rooms = [v.slack for v in res.verdicts if math.isfinite(v.slack)]
    certified = [v.details.get("certified_over_scale") for v in res.verdicts if math.isfinite(v.slack)]
    if not rooms:
        res.tightness = {"summary": "no point certified"}
        return
    res.tightness = {"room_min": min(rooms), "room_max": max(rooms),
                     "certified_over_" + unit.replace(" ", "_"): [min(certified), max(certified)],
                     "summary": f"printed / certified in [{min(rooms):.3g}, {max(rooms):.3g}] (loose)"}
    res.notes.append(f"certified coefficient {min(certified):.4g}..{max(certified):.4g} x {unit}; the printed one holds with "
                     f"room x{min(rooms):.3g}..x{max(rooms):.3g} at every certified point")
