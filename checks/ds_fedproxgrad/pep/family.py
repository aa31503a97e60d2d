"""PEP checks of DS FedProxGrad's Lemma 5.2 (Arif, arXiv 2512.08671): the worst case over the whole class.

The measure, the class and the one-round algorithm are those of :mod:`fedbounds.checks.ds_fedproxgrad.pep.encoding` (its
docstring: f_i L_f-smooth, r L_r-smooth, dissimilarity (8) at x with G = 0, the relative error (10), sigma = 0). Every
number of the paper (Phi = 1/4, 1/(6 L_F), 1/(sqrt(10) B), the remainder Xi) comes from the theory layer through
:func:`~fedbounds.checks.ds_fedproxgrad.pep.encoding.theory_values`.

* ``ds.pep.lemma5_2`` (remark on Lemma 5.2, eq. (14)): at each grid point (eta, gamma_r, N) inside the paper's
  conditions, the certified worst case w = sup (F(x+) - F(x) - Xi_det) / ||grad F(x)||^2 must satisfy
  w <= -eta Phi with Phi = 1/4 (the descent holds over the whole class). Each verdict compares ``observed`` = w with
  ``bound`` = -eta Phi: the semantics "worst case <= bound" of
  :func:`~fedbounds.checks.pep.solve.pep_verdict`. Both numbers are negative, so bound / observed would read the
  wrong way round; the verdict's ``slack`` is therefore set to w / (-eta Phi) = Phi_PEP / Phi (> 1: room to spare,
  < 1: violated), which is also pep_verdict's ``ratio`` (worst / bound) here. The corner (eta = 1/(6 L_F), gamma_r =
  1/(sqrt(10) B)) also gets the margin form (:func:`~fedbounds.checks.ds_fedproxgrad.pep.encoding.lemma52_margin_pep`, value 0
  iff the descent with Phi = 1/4 holds, with no normalisation of grad F(x), so grad F(x) = 0 is covered); its slack
  is nan (a value-0 form has none).
* ``ds.pep.absorption`` (remark on the absorption threshold, eq. (21)): at eta in the grid, the largest gamma_r with
  certified Phi_PEP >= 1/4 (bisection, :func:`~fedbounds.checks.ds_fedproxgrad.pep.encoding.absorbed_gamma_window`, each probe
  with the SCS fallbacks; a probe still not certified is undecided, narrows nothing, and is listed in
  ``uncertified_probes``; the window's upper end is ``gamma_certified_high``)
  against the paper's 1/(sqrt(10) B). ``observed`` = the printed threshold, ``bound`` = the certified one, slack =
  certified / printed (the tightness). The status is decided by the certificate AT the printed threshold (Phi_PEP >=
  1/4 there; the class grows with gamma_r, so this covers every gamma_r below), so it is never ``holds`` unless that
  certificate is optimal for both solvers (and ``holds`` also needs certified >= printed).

Verdicts carry in ``details``: ``pep`` (:func:`~fedbounds.checks.pep.solve.certificate_record`: ``pep_status``,
``value``, ``gram_dim``, and per solver ``value`` / ``status`` / ``gap`` / ``seconds``), ``ratio`` (worst / bound, as
pep_verdict defines it), ``Phi_PEP``, ``Phi_paper``, ``Phi_r`` (the proof's coefficient before absorption),
``eta``, ``gamma_r``, ``N``, ``solver_options`` (per solver, the settings of the certificate used, see :data:`SCS_FALLBACKS`);
absorption verdicts add ``gamma_paper``, ``gamma_certified``, ``gamma_proof_exact`` (the proof's own threshold at
this eta), ``pep_at_certified`` (the certificate at the certified threshold), ``bisection_probes``,
``bisection_tol`` and ``uncertified_probes``.

Negative controls (each changes one thing on the check's own experiment, measured):
* lemma5_2: eta from 1/(6 L_F) to :data:`ETA_CONTROL` x 1/(6 L_F) at the corner. Measured (N = 2): Phi_PEP = 0.564,
  0.508, 0.444, 0.291, 0.135 at 1, 4, 6, 7, 8 x 1/(6 L_F) (at gamma_r = 0 it is 1 - L_F eta/2, >= 1/4 up to 9x);
  8x is the first integer multiple past the edge.
* absorption: gamma_r from the printed threshold to :data:`GAMMA_CONTROL` x the certified threshold found by the
  same run (calibrated from the measurement, just past it). Measured at eta = 1/(6 L_F), N = 2: certified threshold
  0.648 = 2.05 x 1/(sqrt(10) B), Phi_PEP = 0.219, 0.187, 0.091 at 1.05, 1.1, 1.25 x it.

Grids (:data:`GRIDS`, by the profile's name; an unknown name uses ``quick``). Measured on 2 shared cores
(``fedbounds check --claim ds.pep``): quick 8 s for both checks (5 grid points, 1 threshold, 11 bisection probes);
full 115-145 s (30 points, 4 thresholds of 14 probes each; most of it SCS's tight fallbacks near the thresholds).

Reference: Arif, DS FedProxGrad (arXiv 2512.08671) Lemma 5.2, eqs. (10), (14), (20)-(22); docs/ds-fedproxgrad-notes.md
§1.4 (row (21)); theory claims ``ds.pep.lemma5_2`` and ``ds.pep.absorption`` (status remark).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from fedbounds.checks.ds_fedproxgrad.pep.encoding import (
    absorbed_gamma_window,
    build_lemma52_pep,
    lemma52_margin_pep,
    theory_values,
)
from fedbounds.checks.pep.solve import Certificate, certificate_record, certify, pep_verdict
from fedbounds.checks.registry import CheckContext, CheckResult, Curve, Plot, register
from fedbounds.checks.verdicts.controls import control
from fedbounds.checks.verdicts.verdict import Verdict

__all__ = ["CLASS", "ETA_CONTROL", "GAMMA_CONTROL", "GRIDS", "SCS_FALLBACKS", "check_absorption", "check_lemma5_2"]

#: the grid per profile: ``N`` clients, ``eta_frac`` (eta / (1/(6 L_F))), ``gamma_frac`` (gamma_r / (1/(sqrt(10) B))),
#: and for the absorption threshold ``absorb_eta_frac``, ``absorb_N`` and the bisection tolerance ``absorb_tol``
#: (relative to 1/(sqrt(10) B)). eta below 1/4 of the cap is left out: SCS stalls at ``optimal_inaccurate`` there
#: (the measure is O(eta) on an O(1) Gram matrix); at eta = 0.1/(6 L_F), gamma_r = 0.5/(sqrt(10) B), N = 5 none of
#: tolerances 1e-6 to 1e-8, scale 1 or 10, or no acceleration returned ``optimal``.
GRIDS: dict[str, dict[str, Any]] = {
    "quick": {"N": (2,), "eta_frac": (1.0, 0.5), "gamma_frac": (0.0, 1.0),
              "absorb_eta_frac": (1.0,), "absorb_N": (2,), "absorb_tol": 1e-2},
    "full": {"N": (2, 3, 5), "eta_frac": (1.0, 0.5, 0.25), "gamma_frac": (0.0, 0.5, 1.0),
             "absorb_eta_frac": (1.0, 0.5), "absorb_N": (2, 3), "absorb_tol": 1e-3},
}
#: the class's constants (the PEP is invariant under scaling L_f, so eta enters through L_F eta; measured: Phi_PEP at
#: the corner is 0.5636 for lambda in {0.5, 1, 2}, B in {1, 1.5, 2}, L_r in {1, 4}, and 0.645 at lambda = 0)
CLASS: dict[str, float] = {"L_f": 1.0, "L_r": 1.0, "lam": 0.5, "B": 1.0}
def class_at(eta: float, gamma_r: float, cls: dict[str, float] = CLASS) -> dict[str, float]:
    """The scope's point (``details["at"]``) of a PEP verdict on the class ``cls`` (default :data:`CLASS`; L_F from the
    theory's A1(i))."""
    from fedbounds.checks.verdicts.formulas import evaluate
    from fedbounds.theory.core import symbols as S
    from fedbounds.theory.ds_fedproxgrad import formulas as dc

    L_F = evaluate(dc.L_F_definition, {S.L_f: cls["L_f"], S.L_r: cls["L_r"], S.lam: cls["lam"]})
    return {"eta": float(eta), "gamma_r": float(gamma_r), "L_F": L_F, "B": float(cls["B"])}


#: the step control: eta = ETA_CONTROL x 1/(6 L_F) at the corner (measured Phi_PEP = 0.135 < 1/4; 0.291 at 7x)
ETA_CONTROL = 8.0
#: steps past the condition (x 1/(6 L_F)) at the corner, certified for the plot and the notes: where Phi_PEP crosses 1/4
ETA_SWEEP = (2.0, 4.0, 6.0, 7.0)
#: the inexactness control: gamma_r = GAMMA_CONTROL x the certified threshold of the same run
GAMMA_CONTROL = 1.1
#: SCS settings tried in turn when the default certificate (:func:`~fedbounds.checks.pep.solve.certify`, with its own
#: retry) is neither certified nor unbounded; Clarabel is re-run unchanged and the two must still agree. Measured:
#: eta = 1/4 x 1/(6 L_F), gamma_r = 1/(sqrt(10) B), N = 2 is ``optimal_inaccurate`` at 1e-6 and 1e-7 (50k iterations),
#: ``optimal`` at 1e-8 (200k iterations); near the certified threshold at eta = 1/(12 L_F) only 1e-9 (500k iterations,
#: 3-5 s) is ``optimal``; a few other stalls resolve with SCS's ``scale`` = 1.
SCS_FALLBACKS: tuple[Mapping[str, Any], ...] = (
    {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200_000},
    {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 500_000},
    {"eps_abs": 1e-6, "eps_rel": 1e-6, "max_iters": 100_000, "scale": 1.0},
)


def _grid(ctx: CheckContext) -> dict[str, Any]:
    return GRIDS.get(ctx.profile.name, GRIDS["quick"])


def _certify(build: Callable[[], Any]) -> Certificate:
    """:func:`certify`, then each of :data:`SCS_FALLBACKS` while the certificate is inconclusive."""
    cert = certify(build)
    for opts in SCS_FALLBACKS:
        if cert.certified or cert.unbounded:
            break
        cert = certify(build, solver_options={"SCS": dict(opts)})
    return cert


def _point(eta_frac: float, gamma_frac: float, N: int) -> tuple[Certificate, dict[str, float], float, float]:
    """The ratio-form certificate at eta = eta_frac/(6 L_F), gamma_r = gamma_frac/(sqrt(10) B); the theory values."""
    base = theory_values(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], 1.0, 0.0)
    eta, gamma_r = eta_frac * base["eta_max"], gamma_frac * base["gamma_absorb"]
    tv = theory_values(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], eta, gamma_r)
    build = build_lemma52_pep(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], eta, gamma_r, tv["xi"], N)
    return _certify(build), tv, eta, gamma_r


def _phi_of(cert: Certificate, eta: float) -> float | None:
    """Phi_PEP = -w/eta (-inf when unbounded, None when not certified)."""
    if cert.certified and cert.value is not None:
        return -cert.value / eta
    return -math.inf if cert.unbounded else None


def _scs_options(cert: Certificate) -> dict[str, Any]:
    return {r.solver: dict(r.options) for r in cert.runs}


def _label(eta_frac: float, gamma_frac: float, N: int) -> str:
    return f"N = {N}, eta = {eta_frac:g} x 1/(6 L_F), gamma_r = {gamma_frac:.3g} x 1/(sqrt(10) B)"


def descent_verdict(claim_id: str, instance: str, cert: Certificate, tv: Mapping[str, float], eta: float,
                    gamma_r: float, N: int, **extra: Any) -> Verdict:
    """The verdict "w <= -eta Phi" from a ratio-form certificate, with slack Phi_PEP / Phi (module docstring)."""
    phi = _phi_of(cert, eta)
    v = pep_verdict(claim_id, instance, cert, -eta * tv["Phi"], Phi_PEP=phi, Phi_paper=tv["Phi"], Phi_r=tv["Phi_r"],
                    xi=tv["xi"], eta=eta, gamma_r=gamma_r, N=N, solver_options=_scs_options(cert), at=class_at(eta, gamma_r), **extra)
    slack = math.nan if phi is None else (0.0 if math.isinf(phi) else phi / tv["Phi"])
    return replace(v, slack=slack)


def _margin_verdict(claim_id: str, N: int) -> Verdict:
    """The margin form at the corner with the paper's Phi (value 0 iff the descent holds; covers grad F(x) = 0)."""
    base = theory_values(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], 1.0, 0.0)
    eta, gamma_r = base["eta_max"], base["gamma_absorb"]
    tv = theory_values(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], eta, gamma_r)
    cert = lemma52_margin_pep(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], eta, gamma_r, tv["xi"], tv["Phi"], N)
    v = pep_verdict(claim_id, f"margin form, Phi = 1/4, {_label(1.0, 1.0, N)} (covers grad F(x) = 0)", cert, 0.0,
                    Phi_paper=tv["Phi"], eta=eta, gamma_r=gamma_r, N=N, at=class_at(eta, gamma_r),
                    form="margin: sup F(x+) - F(x) + eta Phi "
                    "||grad F||^2 - Xi_det over trace(Gram) <= 1", solver_options=_scs_options(cert))
    return replace(v, slack=math.nan)


@register("ds.pep.lemma5_2", title="Lemma 5.2's Phi = 1/4 over the whole class (PEP): sufficient, with room",
          label="Lemma 5.2", status="remark", erratum=True, family="ds.pep", expect="holds")
def check_lemma5_2(ctx: CheckContext) -> CheckResult:
    """Ratio-form PEP at every grid point (w <= -eta/4), the margin form at the corner, and the step control."""
    cid, grid = "ds.pep.lemma5_2", _grid(ctx)
    res = CheckResult(cid)
    rows: list[tuple[int, float, float, float | None]] = []
    for N in grid["N"]:
        for gf in grid["gamma_frac"]:
            for ef in grid["eta_frac"]:
                ctx.tick(f"PEP Lemma 5.2 at {_label(ef, gf, N)}")
                cert, tv, eta, g = _point(ef, gf, N)
                v = descent_verdict(cid, _label(ef, gf, N), cert, tv, eta, g, N, eta_frac=ef, gamma_frac=gf)
                res.verdicts.append(v)
                rows.append((N, ef, gf, v.details["Phi_PEP"]))
        res.verdicts.append(_margin_verdict(cid, N))
    res.negatives.append(_eta_control(cid, min(grid["N"])))
    past = _past_the_condition(min(grid["N"]), res.negatives[0])
    certified = [r for r in rows if r[3] is not None]
    worst = min(certified, key=lambda r: r[3]) if certified else None
    res.tightness = {"Phi_paper": theory_values(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], 1.0, 0.0)["Phi"],
                     "points": [{"N": n, "eta_frac": ef, "gamma_frac": gf, "Phi_PEP": p} for n, ef, gf, p in rows],
                     "class": dict(CLASS), "past_condition": [{"eta_frac": ef, "Phi_PEP": p} for ef, p in past]}
    if worst is not None:
        ratio = worst[3] / res.tightness["Phi_paper"]
        res.tightness.update(worst_Phi_PEP=worst[3], worst_point=_label(*worst[1:3], worst[0]), Phi_ratio=ratio,
                             summary=f"Phi_PEP/Phi >= {ratio:.3g} (loose x{ratio:.3g})")
        res.notes.append(f"smallest certified Phi_PEP over the grid: {worst[3]:.4g} at {_label(*worst[1:3], worst[0])}, "
                         f"{ratio:.3g} x the paper's 1/4 (Phi_PEP at gamma_r = 0 is the descent lemma's 1 - L_F eta/2)")
    uncertified = [_label(ef, gf, n) for n, ef, gf, p in rows if p is None]
    if uncertified:
        res.notes.append(f"not certified (inconclusive): {uncertified}")
    res.notes.append("past A4(iv) at the corner: " + ", ".join(f"Phi_PEP = {p:.3g} at {ef:g} x 1/(6 L_F)" for ef, p in past
                                                               if p is not None))
    res.plots.append(_phi_plot(rows, past, res.tightness["Phi_paper"]))
    return res


def _eta_control(cid: str, N: int) -> Verdict:
    """The corner with eta = ETA_CONTROL x 1/(6 L_F), everything else unchanged: must be violated."""
    cert, tv, eta, g = _point(ETA_CONTROL, 1.0, N)
    label = f"eta = {ETA_CONTROL:g} x 1/(6 L_F)"
    v = descent_verdict(cid, f"control: {_label(ETA_CONTROL, 1.0, N)}", cert, tv, eta, g, N, eta_frac=ETA_CONTROL,
                        gamma_frac=1.0)
    return control(v, changed="eta", what=f"step past A4(iv): {label} (corner otherwise unchanged)",
                   before="eta = 1 x 1/(6 L_F)", after=label, violated_at=label)


def _past_the_condition(N: int, ctrl: Verdict) -> list[tuple[float, float | None]]:
    """Phi_PEP at the corner with eta = 1 (the corner itself), :data:`ETA_SWEEP` and the control's multiple."""
    out: list[tuple[float, float | None]] = []
    for ef in (1.0, *ETA_SWEEP):
        cert, _, eta, _ = _point(ef, 1.0, N)
        out.append((ef, _phi_of(cert, eta)))
    return [*out, (ETA_CONTROL, ctrl.details.get("Phi_PEP"))]


def _phi_plot(rows: list[tuple[int, float, float, float | None]], past: list[tuple[float, float | None]],
              phi_paper: float) -> Plot:
    plot = Plot("phi_pep", "Lemma 5.2: largest Phi over the class (PEP) against the paper's 1/4", "eta x 6 L_F",
                "Phi_PEP", logy=False)
    for N, gf in sorted({(r[0], r[2]) for r in rows}):
        pts = sorted((ef, p) for n, ef, g, p in rows if n == N and g == gf and p is not None)
        plot.curves.append(Curve(f"N = {N}, gamma_r = {gf:.3g}/(sqrt(10) B)", [x for x, _ in pts], [y for _, y in pts]))
    xs = [r[1] for r in rows] + [ETA_CONTROL]
    plot.curves.append(Curve("Phi = 1/4 (paper)", [min(xs), max(xs)], [phi_paper, phi_paper], role="bound"))
    pts = [(ef, p) for ef, p in past if p is not None and math.isfinite(p)]
    plot.curves.append(Curve("corner, eta past 1/(6 L_F) (control at the right end)", [x for x, _ in pts],
                             [y for _, y in pts], role="negative"))
    return plot


def _absorption_verdict(cid: str, ef: float, N: int, tol: float) -> tuple[Verdict, float | None]:
    """At eta = ef/(6 L_F): the certified threshold (bisection) against 1/(sqrt(10) B); status from the
    certificate at the printed threshold. Returns the verdict and the certified threshold (None if none)."""
    cert, tv, eta, thr = _point(ef, 1.0, N)
    at_printed = descent_verdict(cid, "", cert, tv, eta, thr, N)
    uncertified: list[str] = []

    def certifier(build: Callable[[], Any]) -> Certificate:
        cert = _certify(build)
        if not (cert.certified or cert.unbounded):
            uncertified.append(cert.summary())
        return cert

    window, _ = absorbed_gamma_window(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], eta, N,
                                      gamma_max=4.0 * thr, tol=tol * thr, certifier=certifier)
    found, probes = window.low, len(window.probes)
    extra: dict[str, Any] = {"gamma_paper": thr, "gamma_certified": found, "gamma_certified_high": window.high,
                             "gamma_proof_exact": tv["gamma_absorb_exact"], "bisection_probes": probes,
                             "bisection_tol": tol * thr, "uncertified_probes": uncertified,
                             "undecided_gammas": list(window.unknown),
                             "Phi_PEP_at_printed": at_printed.details["Phi_PEP"]}
    if found is not None:
        c2, tv2, _, _ = _point(ef, found / thr, N)
        # the claim at the certified threshold: the descent w <= -eta Phi (the bisection's criterion Phi_PEP >= Phi)
        extra.update(pep_at_certified=certificate_record(c2, -eta * tv2["Phi"]), Phi_PEP_at_certified=_phi_of(c2, eta))
    bound = math.nan if found is None else found
    status = at_printed.status
    if status == "holds" and not (found is not None and found >= thr):  # the two must agree for "printed <= certified"
        status = "inconclusive"
    v = replace(at_printed, instance=f"N = {N}, eta = {ef:g} x 1/(6 L_F): certified threshold vs 1/(sqrt(10) B)",
                observed=thr, bound=bound, ci_low=thr, ci_high=thr, slack=bound / thr, status=status,
                details={**at_printed.details, **extra, "ratio": thr / bound if found else None})
    return v, found


@register("ds.pep.absorption", title="Absorption threshold 1/(sqrt(10) B) against the largest gamma_r the class admits (PEP)",
          label="Lemma 5.2 (proof), eq. (21)", status="remark", erratum=True, family="ds.pep", expect="holds")
def check_absorption(ctx: CheckContext) -> CheckResult:
    """Certified absorption threshold per (eta, N) of the grid against 1/(sqrt(10) B), and the gamma_r control."""
    cid, grid = "ds.pep.absorption", _grid(ctx)
    res = CheckResult(cid)
    first: tuple[float, int, float] | None = None
    for N in grid["absorb_N"]:
        for ef in grid["absorb_eta_frac"]:
            ctx.tick(f"PEP absorption threshold at N = {N}, eta = {ef:g} x 1/(6 L_F)")
            v, found = _absorption_verdict(cid, ef, N, grid["absorb_tol"])
            res.verdicts.append(v)
            if v.details["uncertified_probes"]:
                res.notes.append(f"N = {N}, eta = {ef:g} x 1/(6 L_F): {len(v.details['uncertified_probes'])} bisection probe(s) not "
                                 "certified (undecided: never counted as failing, they narrow nothing); the threshold lies in "
                                 f"[{v.details['gamma_certified']}, {v.details['gamma_certified_high']}]")
            if found is not None and first is None:
                first = (ef, N, found)
    ratios = [v.slack for v in res.verdicts if math.isfinite(v.slack)]
    res.tightness = {"points": [{"N": v.details["N"], "eta": v.details["eta"], "gamma_paper": v.observed,
                                 "gamma_certified": v.details["gamma_certified"], "gamma_proof_exact": v.details["gamma_proof_exact"]}
                                for v in res.verdicts], "class": dict(CLASS)}
    if ratios:
        res.tightness.update(ratio=min(ratios), summary=f"certified/printed >= {min(ratios):.3g}")
        res.notes.append(f"certified absorption threshold / 1/(sqrt(10) B) >= {min(ratios):.3g} over the grid; the proof's own "
                         "threshold equals 1/(sqrt(10) B) at eta = 1/(6 L_F) (ds.absorption)")
    if first is None:
        res.notes.append("no certified threshold: no gamma_r control (nothing measured to step past)")
        return res
    res.negatives.append(_gamma_control(cid, *first))
    return res


def _gamma_control(cid: str, ef: float, N: int, found: float) -> Verdict:
    """gamma_r = GAMMA_CONTROL x the certified threshold at (ef, N), everything else unchanged: must be violated."""
    thr = theory_values(CLASS["L_f"], CLASS["L_r"], CLASS["lam"], CLASS["B"], 1.0, 0.0)["gamma_absorb"]
    gf = GAMMA_CONTROL * found / thr
    cert, tv, eta, g = _point(ef, gf, N)
    label = f"gamma_r = {GAMMA_CONTROL:g} x certified threshold = {gf:.3g} x 1/(sqrt(10) B)"
    v = descent_verdict(cid, f"control: {_label(ef, gf, N)}", cert, tv, eta, g, N, gamma_certified=found)
    return control(v, changed="gamma_r", what=f"inexactness past the measured threshold: {label}",
                   before="gamma_r = 1 x 1/(sqrt(10) B)", after=label, violated_at=label)
