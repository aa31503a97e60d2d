"""Shared machinery for performance-estimation (PEP) certificates: one PEP, two solvers, one honest verdict.

A *performance estimation problem* (Drori and Teboulle 2014; Taylor, Hendrickx and Glineur 2017) computes the
exact worst case of a performance measure of a first-order method over a whole function class, as a small
semidefinite program (SDP) in the Gram matrix of the iterates and (sub)gradients. PEPit (Goujaud, Moucer,
Glineur, Hendrickx, Taylor, Dieuleveut; Math. Prog. Comp. 2024) builds that SDP from code that reads like the
method; we solve it through PEPit's ``"cvxpy"`` wrapper.

Why two solvers. An SDP solver can stop early, report ``optimal_inaccurate``, or fail on a badly scaled
instance, and a single number then looks like a certificate when it is not. :func:`certify` builds the same
PEP twice (a fresh :class:`PEPit.PEP` for each solver, since PEPit keeps global counters) and solves it with
Clarabel (interior point) and SCS (first-order splitting). The result is a :class:`Certificate` that records,
per solver, the status, PEPit's dual value (a valid upper bound on the worst case, rebuilt from the solver's
dual variables), the primal value (a lower bound: the objective at the Gram matrix found), their gap, and the
solve time. It is ``certified`` only when every solver reports ``optimal`` and the dual values agree to the
stated relative tolerance; the value used is then the largest dual value (the conservative one).

Unbounded worst cases. When the measure is not bounded over the class (for example a step past its stability
condition), cvxpy reports the maximisation as ``unbounded`` (or the dual as ``infeasible``). A certificate is
``unbounded`` when every solver says so; one solver alone saying so is ``inconclusive``.

:func:`verdict` turns a certificate and a bound into ``holds`` / ``violated`` / ``inconclusive``; a
certificate that is not certified is never ``holds``.

Reference: PEPit, https://pepit.readthedocs.io; its wrapper ``PEPit.wrappers.cvxpy_wrapper``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import re
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fedbounds.checks.pep.bounded import SolverLimit, bounded

__all__ = [
    "DEFAULT_ABS_TOL",
    "DEFAULT_REL_TOL",
    "DEFAULT_SOLVERS",
    "NOT_COMPARED",
    "RETRY_OPTIONS",
    "SCS_OPTIONS",
    "VIOLATION_REL_TOL",
    "Certificate",
    "SolverRun",
    "certificate_record",
    "certify",
    "check_nonnegative",
    "check_positive",
    "dual_feasibility",
    "pep_verdict",
    "proof_decides",
    "solve_once",
    "verdict",
    "with_proof",
]

#: the two solvers every certificate uses (cvxpy names)
DEFAULT_SOLVERS: tuple[str, ...] = ("CLARABEL", "SCS")
#: two solvers' dual values must agree to this relative tolerance (of the larger magnitude, floor 1e-6)
DEFAULT_REL_TOL = 1e-3
#: ... plus this absolute tolerance (for values near 0, as in margin-form PEPs whose value is 0 when a claim holds)
DEFAULT_ABS_TOL = 1e-6
#: SCS is a first-order method: tighten its default 1e-4 tolerances (at 1e-5 it still differs from Clarabel by ~1e-3 relative on Lemma 5.2)
SCS_OPTIONS: Mapping[str, Any] = {"eps_abs": 1e-6, "eps_rel": 1e-6, "max_iters": 100_000}
#: when a solver's first answer is not ``optimal``, :func:`certify` retries once with these settings (stated
#: tolerances; Clarabel's default 1e-8 is often reported ``optimal_inaccurate`` on the degenerate faces of PEPs
#: with several rounds, and 1e-7 then converges). The run records the options it finally used.
RETRY_OPTIONS: Mapping[str, Mapping[str, Any]] = {
    "CLARABEL": {"tol_gap_abs": 1e-7, "tol_gap_rel": 1e-7, "tol_feas": 1e-7},
    "SCS": {"eps_abs": 1e-7, "eps_rel": 1e-7, "max_iters": 50_000},
}

_OPTIMAL = "optimal"
_UNBOUNDED = ("unbounded", "infeasible_or_unbounded")  # "unbounded_inaccurate" is not trusted
_INFEASIBLE = ("infeasible",)

#: a builder returns a fresh PEP, or a PEP and named Points/Expressions to evaluate at the solution
Builder = Callable[[], Any]


@dataclass(frozen=True)
class SolverRun:
    """One solver's answer to one PEP.

    ``status`` is cvxpy's (``optimal``, ``optimal_inaccurate``, ``unbounded``, ``infeasible``, ...) or
    ``error: <message>`` when the solver raised, ``limit: <reason>`` when its solve was stopped by a time or memory
    limit or its solver process died (:mod:`fedbounds.checks.pep.bounded`). ``dual`` is PEPit's reconstructed dual value (an upper bound on
    the worst case when the status is optimal), ``primal`` the objective at the returned Gram matrix (a lower
    bound, up to the primal feasibility error ``primal_violation``), ``gap = dual - primal``.
    ``gram`` is the Gram matrix found (None when unbounded/failed), ``evaluations`` the values of the named
    Points (coordinates in a factor of ``gram``) and Expressions the builder asked for.
    """

    solver: str
    status: str
    dual: float | None
    primal: float | None
    seconds: float
    primal_violation: float | None = None
    gram_min_eig: float | None = None
    gram: np.ndarray | None = field(default=None, repr=False, compare=False)
    options: Mapping[str, Any] = field(default_factory=dict)
    evaluations: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: PEPit's dual-feasibility figures for this solve (:func:`dual_feasibility`): ``psd_residual`` (how far the
    #: residual matrix is below PSD, >= 0), ``min_multiplier`` (the most negative inequality multiplier, as a
    #: positive error), ``reconstitution`` (the error in rebuilding the bound from the multipliers); None if absent
    dual_feasibility: Mapping[str, float] | None = None
    #: the solver's multipliers of PEPit's prepared scalar constraints, in their order (the input of an exact
    #: certificate, :mod:`fedbounds.checks.pep.certificate`); None when the solve gave none
    multipliers: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def optimal(self) -> bool:
        return self.status == _OPTIMAL and self.dual is not None and math.isfinite(self.dual)

    @property
    def unbounded(self) -> bool:
        return self.status in _UNBOUNDED or (self.status in _INFEASIBLE and self.dual is None)

    @property
    def gap(self) -> float | None:
        if self.dual is None or self.primal is None:
            return None
        return self.dual - self.primal


@dataclass(frozen=True)
class Certificate:
    """The same PEP solved by several solvers (see the module docstring).

    ``values``: PEPit dual value per solver (None if the solver gave none); ``statuses``: cvxpy status per
    solver; ``gaps``: dual - primal per solver; ``seconds``: solve time per solver (build + solve);
    ``gram_dim``: size of the Gram matrix; ``rel_tol``, ``abs_tol``: the agreement tolerances used;
    ``certified``: every solver optimal and the values agree (|v_a - v_b| <= rel_tol max(|v_a|, |v_b|) +
    abs_tol); ``unbounded``: every solver reports an unbounded worst case; ``value``: the largest dual value
    when certified (the conservative upper bound), +inf when unbounded, else None; ``disagreement``:
    max |v_a - v_b| over solver pairs (absolute); ``agree``: every solver returned a value and they agree
    within the tolerances, whatever their statuses (informative only: agreeing ``optimal_inaccurate``
    answers are still not certified).
    """

    values: Mapping[str, float | None]
    statuses: Mapping[str, str]
    gaps: Mapping[str, float | None]
    seconds: Mapping[str, float]
    gram_dim: int
    rel_tol: float
    abs_tol: float
    certified: bool
    unbounded: bool
    value: float | None
    disagreement: float | None
    agree: bool
    runs: tuple[SolverRun, ...] = field(repr=False, compare=False)
    #: the exact rational certificate's record (:func:`fedbounds.checks.pep.certificate.attach`), or None
    proof: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def proved(self) -> bool:
        """Certified, and an exact rational certificate of ``worst case <= proof["bound"]`` verified; or such a
        certificate found without any solver's optimum (``proof["solver_free"]``: the interior dual at a bound with
        room, e.g. :func:`fedbounds.checks.fednmap.pep.encoding.descent_proof`), where the solvers read nothing."""
        return bool(self.proof and self.proof.get("status") == "proved"
                    and (self.certified or self.proof.get("solver_free") is True))

    @property
    def status(self) -> str:
        """``proved`` (exact certificate verified), ``certified``, ``unbounded`` or ``inconclusive``."""
        if self.proved:
            return "proved"
        if self.certified:
            return "certified"
        if self.unbounded:
            return "unbounded"
        return "inconclusive"

    def run(self, solver: str) -> SolverRun:
        """The :class:`SolverRun` of ``solver`` (a cvxpy solver name)."""
        for r in self.runs:
            if r.solver == solver.upper():
                return r
        raise KeyError(f"no run for solver {solver!r}; have {[r.solver for r in self.runs]}")

    def summary(self) -> str:
        """One line: status, value, and per solver value / status / gap / seconds."""
        parts = []
        for r in self.runs:
            v = "None" if r.dual is None else f"{r.dual:.6g}"
            g = "" if r.gap is None else f" gap={r.gap:.1e}"
            parts.append(f"{r.solver}: {v} ({r.status}{g}, {r.seconds:.2f}s)")
        val = "None" if self.value is None else f"{self.value:.6g}"
        return f"{self.status} value={val} gram={self.gram_dim} | " + "; ".join(parts)


def _max_violation(pep: Any) -> float | None:
    try:
        errs = []
        for c in pep._list_of_prepared_constraints:
            v = float(c.eval())
            errs.append(v if c.equality_or_inequality == "inequality" else abs(v))
        return max(errs) if errs else 0.0
    except Exception:
        return None


def _evaluate(named: Mapping[str, Any]) -> dict[str, Any]:
    """Values at the solution: a Point -> vector, an Expression -> float, a PEPit Function -> its list of
    (x, gradient, value) triplets (what an interpolating instance must reproduce)."""
    out: dict[str, Any] = {}
    for key, obj in named.items():
        try:
            if hasattr(obj, "list_of_points"):
                out[key] = [(np.asarray(x.eval()), np.asarray(g.eval()), float(f.eval())) for x, g, f in obj.list_of_points]
                continue
            val = obj.eval()
        except Exception:
            val = None
        out[key] = float(val) if isinstance(val, float | np.floating | int) else val
    return out


def solve_once(build: Builder, solver: str, solver_options: Mapping[str, Any] | None = None) -> tuple[SolverRun, int]:
    """Build a fresh PEP with ``build()`` and solve it with one cvxpy ``solver``; return the run and Gram size.

    ``build`` returns a :class:`PEPit.PEP` or ``(pep, named)`` where ``named`` maps names to PEPit Points or
    Expressions to evaluate at the solution (for replays). PEPit's printing is silenced.
    """
    solver = solver.upper()
    opts = dict(solver_options or {})
    if solver == "SCS" and not solver_options:
        opts = dict(SCS_OPTIONS)
    t0 = time.perf_counter()
    built = build()
    pep, named = (built if isinstance(built, tuple) else (built, {}))
    from PEPit.point import Point  # local: PEPit is imported only when a PEP is solved

    dual: float | None = None
    primal: float | None = None
    status = ""
    gram = None
    viol = None
    min_eig = None
    evaluations: dict[str, Any] = {}
    multipliers = None
    printed = io.StringIO()
    # PEPit prints (its dual-feasibility figures among it: parsed), and cvxpy warns "Solution may be inaccurate":
    # both are captured as the status instead
    # the solve itself runs in the solver process, under its time and memory limits (fedbounds.checks.pep.bounded)
    with contextlib.redirect_stdout(printed), warnings.catch_warnings(), bounded():
        warnings.simplefilter("ignore", UserWarning)
        try:
            dual = pep.solve(wrapper="cvxpy", solver=solver, verbose=1, **opts)
        except SolverLimit as exc:
            status = f"limit: {exc}"
        except Exception as exc:
            status = f"error: {type(exc).__name__}: {str(exc)[:120]}"
        wrapper = getattr(pep, "wrapper", None)
        prob = getattr(wrapper, "prob", None)
        if not status and prob is None:
            status = "error: the solver produced no problem"
        if prob is not None and not status:
            status = str(prob.status)
            pv = prob.value
            primal = float(pv) if pv is not None and np.isfinite(pv) else None
            if dual is not None:
                dual = float(dual)
            gram = getattr(pep, "G_value", None)
            if gram is not None and dual is not None:
                with contextlib.suppress(Exception):
                    multipliers = np.array([float(c.eval_dual()) for c in pep._list_of_prepared_constraints])
                min_eig = float(np.linalg.eigvalsh(gram).min())
                viol = _max_violation(pep)
                evaluations = _evaluate(named)
            else:
                dual = None
    dim = int(Point.counter)
    run = SolverRun(
        solver=solver,
        status=status,
        dual=dual,
        primal=primal,
        seconds=time.perf_counter() - t0,
        primal_violation=viol,
        gram_min_eig=min_eig,
        gram=None if gram is None else np.array(gram),
        options=opts,
        evaluations=evaluations,
        dual_feasibility=dual_feasibility(printed.getvalue()) if dual is not None else None,
        multipliers=multipliers,
    )
    return run, dim


_FIGURES = {
    "psd_residual": "residual matrix that is positive semi-definite",
    "min_multiplier": "associated with inequality constraints are nonnegative",
    "reconstitution": "proof is perfectly reconstituted",
}


def dual_feasibility(printed: str) -> dict[str, float]:
    """PEPit's dual-feasibility figures from what ``pep.solve(verbose=1)`` printed (its ``check_feasibility``): each
    line reads "... <what>" (exact: figure 0) or "... <what> up to an error of <x>" (figure x)."""
    out: dict[str, float] = {}
    for line in printed.splitlines():
        for key, what in _FIGURES.items():
            if what in line:
                m = re.search(r"up to an error of ([-+0-9.eE]+|nan|inf)", line)
                out[key] = float(m.group(1)) if m else 0.0
    return out


def certify(
    build: Builder,
    solvers: Sequence[str] = DEFAULT_SOLVERS,
    rel_tol: float = DEFAULT_REL_TOL,
    solver_options: Mapping[str, Mapping[str, Any]] | None = None,
    abs_tol: float = DEFAULT_ABS_TOL,
    retry: bool = True,
    solve: Callable[..., tuple[SolverRun, int]] | None = None,
    prove: bool = True,
) -> Certificate:
    """Solve the PEP made by ``build`` with every solver in ``solvers`` and cross-check them.

    Problem: whatever ``build`` encodes (a fresh :class:`PEPit.PEP` per call, or ``(pep, named)``).
    Guarantee: ``certified`` means every solver returned ``optimal`` and their PEPit dual values agree:
    |v_a - v_b| <= ``rel_tol`` max(|v_a|, |v_b|) + ``abs_tol``; ``value`` is then the largest of them.
    ``solver_options`` maps a solver name to its keyword arguments (SCS defaults to :data:`SCS_OPTIONS`).
    With ``retry`` (and no ``solver_options`` for that solver), a solver whose answer is not ``optimal`` and not
    ``unbounded`` is run once more with :data:`RETRY_OPTIONS`; the second answer is kept, with its options (a solve
    stopped by a limit, status ``limit: ...``, is not retried: it would only hit the limit again).
    ``solve(build, solver, options) -> (run, gram size)`` replaces :func:`solve_once` (for instance the
    client-symmetric block form of :mod:`fedbounds.checks.pep.symmetric`). ``prove=False`` leaves the exact
    certificate to the caller (:func:`with_proof`), for a PEP whose certificate is of another builder's problem.
    """
    solve = solve_once if solve is None else solve
    if not solvers:
        raise ValueError("solvers must name at least one cvxpy solver")
    if not (0 < rel_tol < 1):
        raise ValueError(f"rel_tol must be in (0, 1), got {rel_tol}")
    if not (0 <= abs_tol < math.inf):
        raise ValueError(f"abs_tol must be finite and >= 0, got {abs_tol}")
    runs = []
    dim = 0
    for s in solvers:
        given = (solver_options or {}).get(s.upper())
        run, dim = solve(build, s, given)
        retryable = not run.optimal and not run.unbounded and not run.status.startswith("limit:")
        if retry and given is None and retryable and s.upper() in RETRY_OPTIONS:
            again, dim = solve(build, s, RETRY_OPTIONS[s.upper()])
            run = dataclasses.replace(again, seconds=again.seconds + run.seconds)
        runs.append(run)
    values = {r.solver: r.dual for r in runs}
    finite = [r.dual for r in runs if r.dual is not None]
    disagreement = None
    agree = False
    if len(finite) == len(runs) and finite:
        disagreement = max(abs(a - b) for a in finite for b in finite)
        agree = all(abs(a - b) <= rel_tol * max(abs(a), abs(b)) + abs_tol for a in finite for b in finite)
    all_optimal = all(r.optimal for r in runs)
    certified = bool(all_optimal and agree)
    unbounded = all(r.unbounded for r in runs)
    value: float | None
    if certified:
        value = max(finite)
    elif unbounded:
        value = math.inf
    else:
        value = None
    cert = Certificate(
        values=values,
        statuses={r.solver: r.status for r in runs},
        gaps={r.solver: r.gap for r in runs},
        seconds={r.solver: r.seconds for r in runs},
        gram_dim=dim,
        rel_tol=rel_tol,
        abs_tol=abs_tol,
        certified=certified,
        unbounded=unbounded,
        value=value,
        disagreement=disagreement,
        agree=agree,
        runs=tuple(runs),
    )
    return with_proof(cert, build) if prove else cert


def with_proof(cert: Certificate, build: Builder) -> Certificate:
    """``cert`` with its exact rational certificate attached when certified and one is stored (or, with
    ``FEDBOUNDS_PROVE=1``, found): :func:`fedbounds.checks.pep.certificate.attach`. ``build`` must make the PEP whose
    worst case ``cert.value`` is (for a rescaled certificate, the PEP at the rescaled budget)."""
    if not cert.certified or cert.value is None or not math.isfinite(cert.value):
        return cert
    from fedbounds.checks.pep.certificate import attach

    runs = sorted((r for r in cert.runs if r.multipliers is not None and r.dual is not None), key=lambda r: r.dual)
    proof = attach(build, cert.value, [r.multipliers for r in runs])
    return cert if proof is None else dataclasses.replace(cert, proof=proof)


#: an admissible instance shows a violation when its value exceeds the bound by more than this share of |bound| (plus
#: the absolute tolerance): the scale of a primal point's feasibility error, far below the solvers' agreement rel_tol
VIOLATION_REL_TOL = 1e-6


def proof_decides(cert: Certificate, bound: float) -> bool:
    """Whether ``cert``'s verified exact certificate proves the claim ``worst case <= bound``: its exact bound B (a
    rational) is <= the claim's bound read exactly (the binary64 ``bound`` as the rational it is). A certificate of
    ``<= 1.77e-9`` does not prove a claim ``<= 0`` (docs/provenance.md §7)."""
    from fractions import Fraction

    if not cert.proved or cert.proof is None or not math.isfinite(bound):
        return False
    exact = cert.proof.get("bound_exact")
    return exact is not None and Fraction(str(exact)) <= Fraction(float(bound))


def verdict(cert: Certificate, bound: float, rel_tol: float | None = None, abs_tol: float | None = None, *,
            relaxed: bool = False) -> str:
    """Verdict on the claim ``worst case <= bound`` from a certificate, in this order:

    * ``violated``: the PEP is certified unbounded, or an admissible instance exceeds the bound
      (:func:`fedbounds.checks.pep.lower.primal_lower`, the smallest feasible primal value: a lower bound on the worst
      case) by more than its feasibility scale, tol_v = min(``rel_tol``, :data:`VIOLATION_REL_TOL`) |bound| +
      ``abs_tol``;
    * ``holds``: an exact certificate proves the bound (:func:`proof_decides`), or the PEP is certified and the
      conservative value (an upper bound on the worst case, up to the solvers' accuracy) is <= bound + tol,
      tol = ``rel_tol`` |bound| + ``abs_tol`` (defaults: the certificate's own tolerances) and no admissible instance
      exceeds the bound (above). The tolerance lets a tight bound hold on the solvers' values; it never outweighs an
      instance: a one-step gradient descent whose worst case is 1/6 does not hold for the claim 1/6 - 1e-4;
    * ``inconclusive``: anything else. A certificate whose solvers are not all optimal, or disagree, is never
      ``holds``; a dual value above the bound is never ``violated`` on its own.

    ``relaxed``: the PEP relaxes its class (a condition imposed at the visited points only), so its primal points
    need not be instances. A violation is then one of the relaxed class only, read from every solver's value
    exceeding bound + tol (the machinery controls of such families say so).
    """
    from fedbounds.checks.pep.lower import primal_lower

    if not math.isfinite(bound):
        raise ValueError(f"bound must be finite, got {bound}")
    rel = cert.rel_tol if rel_tol is None else rel_tol
    ab = cert.abs_tol if abs_tol is None else abs_tol
    tol = rel * abs(bound) + ab
    if cert.unbounded:
        return "violated"
    if proof_decides(cert, bound):
        return "holds"
    low = None if relaxed else primal_lower(cert)
    if low is not None and low > bound + min(rel, VIOLATION_REL_TOL) * abs(bound) + ab:
        return "violated"
    if cert.certified and cert.value is not None and cert.value <= bound + tol:
        return "holds"
    if relaxed and cert.certified and all(v is not None and v > bound + tol for v in cert.values.values()):
        return "violated"
    return "inconclusive"


def check_positive(name: str, value: float) -> float:
    """``value`` as a float, or a ValueError naming ``name`` unless it is finite and > 0."""
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_nonnegative(name: str, value: float) -> float:
    """``value`` as a float, or a ValueError naming ``name`` unless it is finite and >= 0."""
    v = float(value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


#: what a proof record says when no claim's bound was compared with it
NOT_COMPARED = "certificate verified, claim not compared"


def certificate_record(cert: Certificate, bound: float | None) -> dict[str, Any]:
    """What a report shows of a certificate: status, value, per-solver value / status / duality gap / seconds,
    the Gram dimension and the agreement tolerances (JSON-safe, no Gram matrices).

    ``bound`` (required): the claim's bound on this PEP's worst case. ``pep_status`` is ``proved`` only when the exact
    certificate proves that bound (:func:`proof_decides`); a verified certificate of a larger bound leaves it
    ``certified``, and its proof record says so (``decides_claim``: false, ``claim_bound``). ``None`` where the claim
    is not a bound on this worst case (a certificate shown beside a claim it does not decide): a verified certificate
    then reads ``certified``, never ``proved``, and its proof record says :data:`NOT_COMPARED`."""
    status = cert.status
    proof = None if cert.proof is None else dict(cert.proof)
    if status == "proved":
        decides = proof is not None and bound is not None and proof_decides(cert, bound)
        if proof is not None:
            proof["decides_claim"] = decides
            proof["claim_bound"] = None if bound is None else float(bound)
            if bound is None:
                proof["claim"] = NOT_COMPARED
        if not decides:
            status = "certified"
    return {
        "pep_status": status,
        "value": cert.value,
        "gram_dim": cert.gram_dim,
        "rel_tol": cert.rel_tol,
        "abs_tol": cert.abs_tol,
        "solvers": {
            r.solver: {"value": r.dual, "status": r.status, "gap": r.gap, "seconds": round(r.seconds, 3),
                       "primal_violation": r.primal_violation, "dual_feasibility": r.dual_feasibility}
            for r in cert.runs
        },
        "proof": proof,
    }


def pep_verdict(claim_id: str, instance: str, cert: Certificate, bound: float, *, relaxed: bool = False,
                **details: Any) -> Any:
    """A :class:`fedbounds.checks.verdicts.verdict.Verdict` for the claim ``worst case <= bound`` from a certificate.

    The status is :func:`verdict`'s (never ``holds`` unless certified, never ``violated`` on an upper bound alone);
    ``pep_status`` reads ``proved`` only when the exact certificate proves ``bound`` itself (:func:`certificate_record`);
    ``observed`` is the certified worst case (+inf when unbounded, nan when inconclusive), ``ci_high`` the same upper
    bound and ``ci_low`` the admissible instance's value (:func:`fedbounds.checks.pep.lower.primal_lower`; nan when
    none, or when the PEP is ``relaxed``); the details carry :func:`certificate_record`, the ratio worst / bound and
    what a violation rests on (``violation_evidence``), so the report shows the worst case, the paper's bound, their
    ratio, the solver statuses and the duality gaps.
    """
    from fedbounds.checks.pep.lower import primal_lower
    from fedbounds.checks.verdicts.verdict import Verdict, slack_of

    status = verdict(cert, bound, relaxed=relaxed)
    observed = math.nan if cert.value is None else float(cert.value)
    low = None if relaxed else primal_lower(cert)
    slack = math.nan if cert.value is None else slack_of(bound, observed)
    ratio = None if cert.value is None or bound == 0 else observed / bound
    evidence = ("the relaxed class only (its primal points need not be instances)" if relaxed
                else "an admissible instance (a solver's feasible primal point)")
    return Verdict(claim_id=claim_id, instance=instance, observed=observed, bound=float(bound),
                   ci_low=math.inf if cert.unbounded else (math.nan if low is None else float(low)),
                   ci_high=observed, status=status, slack=slack, exact=True,
                   details={"pep": certificate_record(cert, bound), "ratio": ratio, "violation_evidence": evidence, **details})
