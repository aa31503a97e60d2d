"""The scope of a verdict (design.md, principle 5): where its evidence lies.

* ``inside``: every point the check ran at meets the theorem's printed hypotheses;
* ``certified``: some point is past them, but inside a region a certificate covers (FedNMap: the steps the PEP
  certifies, :func:`fedbounds.theory.fednmap.pep_steps.certified_steps`); the verdict still reads ``holds*``
  (:func:`scoped_verdict`): no point is inside the printed hypotheses;
* ``outside``: some point is past both; the scope names each hypothesis broken and by how much (the factor
  left side / right side of ``a <= b``, over the points: ``eta_hat 4-16x past the conditions of Theorem 5``);
* ``unstated``: the check did not record the parameters its hypotheses need (said, never guessed).

The hypotheses are the claim's own (:mod:`fedbounds.theory.registry`); a claim that states none (a rate, a
complexity) inherits the first set found along its ``depends_on``; a claim whose hypotheses are reconstructed
says whose conditions stand in for the lost ones. They are evaluated at the values the check actually ran at,
which each verdict records as ``details["at"]``: a mapping symbol name -> value (or a list of them, one per
configuration of a sweep); names are the theory's Python or sympy names (``eta_hat`` or ``etahat``).

A check may set :attr:`CheckResult.scope` itself where no computation is possible, and
:attr:`CheckResult.scope_caveat` to add what else limits the evidence (a proxy of an asymptotic claim).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

__all__ = ["CERTIFIED", "INSIDE", "OUTSIDE", "UNSTATED", "Scope", "at_values", "hypothesis_ratios", "scope_of", "scoped_verdict"]

INSIDE, CERTIFIED, OUTSIDE, UNSTATED = "inside", "certified", "outside", "unstated"

#: relative tolerance when a point sits on a hypothesis' boundary (steps set to exactly the maximum)
BOUNDARY_RTOL = 1e-9


@dataclass(frozen=True)
class Scope:
    """Where a verdict's evidence lies. ``factors``: hypothesis name -> (smallest, largest) ratio left / right
    side over the points, for the hypotheses some point breaks; ``basis``: whose hypotheses were evaluated;
    ``points``/``inside_points``: how many parameter points, and how many met every hypothesis."""

    kind: str
    basis: str = ""
    factors: dict[str, tuple[float, float]] = field(default_factory=dict)
    points: int = 0
    inside_points: int = 0
    caveat: str = ""
    certificate: str = ""
    reason: str = ""
    tag: str = ""

    @property
    def text(self) -> str:
        """One line: ``outside: eta_hat 4-16x, eta_a 222x past the conditions of Theorem 5``."""
        if self.kind == UNSTATED:
            head = f"unstated: {self.reason or 'the check records no parameters'}"
        elif self.kind == INSIDE:
            head = f"inside {self.basis}" if self.basis else "inside (no conditions beyond the assumptions)"
            if self.points and self.inside_points < self.points:
                others = f"the others past it ({_factors_text(self.factors)})"
                head += f" at {self.inside_points} of {self.points} points; " + (f"{others}, within {self.certificate}" if self.certificate
                                                                                   else others)
        else:
            past = f"{_factors_text(self.factors)} past {self.basis}"
            head = f"{self.kind}: {past}" + (f", within {self.certificate}" if self.certificate else "")
        return head + (f"; {self.caveat}" if self.caveat else "")

    @property
    def short(self) -> str:
        """The table cell: the kind and the factors (``outside (eta_hat 4-16x, eta_a 222x)``), without the basis and
        the caveat (the notes and the page give :attr:`text` in full)."""
        tag = f" [{self.tag}]" if self.tag else ""
        if self.kind in (CERTIFIED, OUTSIDE) or (self.kind == INSIDE and self.factors):
            if self.kind == INSIDE:
                others = "others certified" if self.certificate else "others"
                return f"inside at {self.inside_points} of {self.points} points ({others}: {_factors_text(self.factors)}){tag}"
            return f"{self.kind} ({_factors_text(self.factors)}){tag}"
        return self.kind + tag

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "short": self.short, "text": self.text, "basis": self.basis,
                "factors": {k: list(v) for k, v in self.factors.items()}, "points": self.points, "inside_points": self.inside_points,
                "caveat": self.caveat, "tag": self.tag, "certificate": self.certificate}


def _factors_text(factors: Mapping[str, tuple[float, float]]) -> str:
    def fmt(x: float) -> str:
        return f"{x:.3g}" if x < 10 else f"{x:.0f}"

    parts = []
    for name, (lo, hi) in factors.items():
        parts.append(f"{name} {fmt(hi)}x" if hi <= lo * 1.05 else f"{name} {fmt(lo)}-{fmt(hi)}x")
    return ", ".join(parts) if parts else "-"


def at_values(values: Mapping[Any, Any]) -> dict[str, float]:
    """``values`` (symbol or name -> number) as the ``details["at"]`` record: Python names, floats."""
    from fedbounds.theory.core import symbols as S

    names = {v: k for k, v in reversed(list(S.BY_NAME.items()))}
    out: dict[str, float] = {}
    for key, value in values.items():
        name = names.get(key, str(key)) if isinstance(key, sp.Symbol) else str(key)
        try:
            out[name] = float(value)
        except (TypeError, ValueError):
            continue
    return out


def _symbol_values(at: Mapping[str, Any], symbols: Iterable[sp.Symbol]) -> dict[sp.Symbol, float]:
    """The values in ``at`` of ``symbols``, looked up by the symbol's name or any Python name the theory gives it
    (``eta_hat`` or ``etahat``); a new paper's own symbols by their names."""
    from fedbounds.theory.core import symbols as S

    vals: dict[sp.Symbol, float] = {}
    for sym in symbols:
        names = [sym.name, *(k for k, v in S.BY_NAME.items() if v == sym)]
        for name in names:
            value = at.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool):
                vals[sym] = float(value)
                break
    return vals


def _hyp_name(h: sp.Basic) -> str:
    from fedbounds.theory.core import symbols as S
    from fedbounds.theory.core.printing import text

    lhs = h.lhs
    if isinstance(lhs, sp.Symbol):
        for py, sym in S.BY_NAME.items():
            if sym == lhs and py.isidentifier():
                return py
        return lhs.name
    return text(h)


def hypothesis_ratios(hypotheses: Iterable[sp.Basic], at: Mapping[str, Any]) -> dict[str, float | None]:
    """Each relation's ratio at ``at``: left / right for ``a <= b`` and ``a < b`` (right / left for ``>=``, ``>``),
    so a ratio <= 1 meets it and 4.0 means "4x past"; an equality gives left / right too. None where a symbol has
    no value (or the ratio is undefined)."""
    out: dict[str, float | None] = {}
    for h in hypotheses:
        if not isinstance(h, sp.core.relational.Relational):
            continue
        vals = _symbol_values(at, h.free_symbols)
        name = _hyp_name(h)
        if not h.free_symbols <= set(vals):
            out[name] = None
            continue
        lhs, rhs = (float(h.lhs.subs(vals)), float(h.rhs.subs(vals)))
        if isinstance(h, sp.GreaterThan | sp.StrictGreaterThan):
            lhs, rhs = rhs, lhs
        if isinstance(h, sp.Equality):
            out[name] = 1.0 if lhs == rhs else (lhs / rhs if rhs else math.inf)
        elif rhs > 0 and lhs >= 0:
            out[name] = lhs / rhs
        elif lhs <= rhs:
            out[name] = 1.0
        else:
            out[name] = math.inf
    return out


def _claim(check_id: str):
    try:
        from fedbounds.theory.registry import get_claim

        return get_claim(check_id)
    except (ImportError, KeyError, ValueError):
        return None


def _step_hypotheses(claim) -> tuple[tuple[sp.Basic, ...], str, str]:
    """(hypotheses, basis, caveat) for ``claim``: its own, or the first set along ``depends_on`` (assumptions
    skipped: the instances meet them by construction)."""
    from fedbounds.theory.core.claims import Status

    def relations(c) -> tuple[sp.Basic, ...]:
        return tuple(h for h in c.hypotheses if isinstance(h, sp.core.relational.Relational))

    own = relations(claim)
    if own:
        if claim.hypotheses_status is Status.RECONSTRUCTED and claim.status is not Status.RECONSTRUCTED:
            for dep in claim.depends_on:
                d = _claim(dep)
                if d is not None and relations(d) == own:
                    return own, f"the conditions of {d.provenance.label}", (f"{claim.provenance.label}'s own conditions are "
                                                                             f"lost; run under {d.provenance.label}'s")
            return own, f"the reconstructed hypotheses of {claim.provenance.label}", ""
        return own, f"the hypotheses of {claim.provenance.label}", ""
    seen, queue = {claim.id}, list(claim.depends_on)
    while queue:
        cid = queue.pop(0)
        if cid in seen or "assumption" in cid:
            continue
        seen.add(cid)
        d = _claim(cid)
        if d is None:
            continue
        if relations(d):
            hyps, basis, caveat = _step_hypotheses(d)
            return hyps, basis, caveat
        queue.extend(d.depends_on)
    return (), "", ""


def _points(verdicts: Iterable[Any]) -> list[tuple[dict[str, Any], Any]]:
    """(parameter point, verdict) pairs: each verdict's ``details["at"]`` (one point or a list); where a verdict has
    none, its details' entries with a number as value (used where named like a hypothesis' symbol: ``gamma``...)."""
    pts: list[tuple[dict[str, Any], Any]] = []
    for v in verdicts:
        details = v.details if isinstance(v.details, Mapping) else {}
        at = details.get("at")
        if at is None:
            at = {k: x for k, x in details.items() if isinstance(x, int | float) and not isinstance(x, bool)} or None
        if isinstance(at, Mapping):
            pts.append((dict(at), v))
        elif isinstance(at, Sequence) and not isinstance(at, str):
            pts.extend((dict(a), v) for a in at if isinstance(a, Mapping))
    return pts


def _own_certificate(verdict: Any) -> str | None:
    """A PEP verdict certified at its own point (worst case over the whole class, two solvers agreeing)."""
    pep = verdict.details.get("pep") if isinstance(getattr(verdict, "details", None), Mapping) else None
    if isinstance(pep, Mapping) and pep.get("pep_status") in ("certified", "proved"):
        return "each point's own PEP certificate (worst case over the class, two solvers)"
    return None


def _certified(check_id: str, point: Mapping[str, Any], ratios: Mapping[str, float | None]) -> str | None:
    """The certificate covering ``point`` past the printed conditions, or None. FedNMap's Theorem 5 steps: the PEP's
    largest certified multiple k of the printed (eta_hat, eta_a) at the point's (L, rho, n, Q, gamma), m = 1."""
    if not check_id.startswith("fednmap.") or not {"eta_hat", "eta_a"} <= set(ratios):
        return None
    broken = {k for k, r in ratios.items() if r is not None and r > 1 + BOUNDARY_RTOL}
    if not broken <= {"eta_hat", "eta_a"} or float(point.get("m", 1)) != 1:
        return None
    try:
        from fedbounds.theory.fednmap.pep_steps import CertifiedSteps, certified_steps

        cert = certified_steps(float(point["L"]), float(point["rho"]), int(point["n"]), int(point["Q"]), float(point["gamma"]))
    except (ImportError, KeyError, TypeError, ValueError):
        return None
    if not isinstance(cert, CertifiedSteps) or any((ratios[k] or 0.0) > cert.k * (1 + BOUNDARY_RTOL) for k in broken):
        return None
    return f"the PEP-certified steps (x{cert.k:.3g} the printed ones)"


def scope_of(check_id: str, verdicts: Sequence[Any], *, given: Scope | None = None, caveat: str = "", tag: str = "") -> Scope:
    """The scope of the verdicts of ``check_id`` (see the module docstring); ``given`` (a check's own) wins.
    ``caveat``: what else limits the evidence, in a sentence; ``tag``: the same in a word or two, for the table."""
    if given is not None:
        return given if not caveat or given.caveat else Scope(**{**given.__dict__, "caveat": caveat, "tag": tag or given.tag})
    claim = _claim(check_id)
    if claim is None:
        return Scope(UNSTATED, reason="no claim of this id in the theory registry", caveat=caveat, tag=tag)
    hyps, basis, inherited = _step_hypotheses(claim)
    caveat = "; ".join(x for x in (inherited, caveat) if x)
    tag = ", ".join(x for x in ("hypotheses reconstructed" if inherited else "", tag) if x)
    if not hyps:
        return Scope(INSIDE, caveat=caveat, tag=tag)
    points = _points(verdicts)
    if not points:
        return Scope(UNSTATED, basis=basis, reason=f"the check records no parameters to evaluate {basis} at", caveat=caveat, tag=tag)
    factors: dict[str, list[float]] = {}
    inside = 0
    certs: list[str | None] = []
    missing: set[str] = set()
    evaluated = 0
    for p, verdict in points:
        ratios = hypothesis_ratios(hyps, p)
        missing |= {k for k, r in ratios.items() if r is None}
        if all(r is None for r in ratios.values()):
            continue  # nothing of the hypotheses recorded at this verdict: not a point of the scope
        evaluated += 1
        broken = {k: r for k, r in ratios.items() if r is not None and r > 1 + BOUNDARY_RTOL}
        if not broken:
            inside += 1 if not any(r is None for r in ratios.values()) else 0
            continue
        for k, r in broken.items():
            lo_hi = factors.setdefault(k, [r, r])
            lo_hi[0], lo_hi[1] = min(lo_hi[0], r), max(lo_hi[1], r)
        certs.append(_own_certificate(verdict) or _certified(check_id, p, ratios))
    fac = {k: (v[0], v[1]) for k, v in factors.items()}
    if missing and not fac and inside == 0:
        return Scope(UNSTATED, basis=basis, points=evaluated, caveat=caveat, tag=tag,
                     reason=f"no value recorded for {', '.join(sorted(missing))} ({basis})")
    if not fac or inside > 0:
        cert = str(certs[0]) if certs and all(certs) else ""
        return Scope(INSIDE, basis=basis, factors=fac, points=evaluated, inside_points=inside, caveat=caveat, tag=tag, certificate=cert)
    if certs and all(certs):
        return Scope(CERTIFIED, basis=basis, factors=fac, points=evaluated, caveat=caveat, tag=tag, certificate=str(certs[0]))
    return Scope(OUTSIDE, basis=basis, factors=fac, points=evaluated, caveat=caveat, tag=tag)


def scoped_verdict(verdict: str, scope: Scope | Mapping[str, Any] | None) -> str:
    """The verdict word as printed: ``holds*`` (any verdict with a star) when the evidence lies only outside the
    printed hypotheses, so a claim checked only there never reads a bare ``holds``; otherwise the verdict itself.
    A certificate covering those points (``certified``) does not remove the star: a PEP certificate at 16x the
    printed steps is evidence at a different point, not the theorem's."""
    kind = scope.kind if isinstance(scope, Scope) else (scope or {}).get("kind")
    return f"{verdict}*" if kind in (OUTSIDE, CERTIFIED) and verdict in ("holds", "violated", "inconclusive") else verdict
