"""The deterministic descent PEP at Theorem 5's printed steps (k = 1), solved by continuation and proved exactly.

docs/fednmap-reconstruction.md §10. At (n, Q) = (2, 2) and k = 1 the ratio PEP of
:func:`fedbounds.checks.fednmap.pep.encoding.descent_check` defeats both solvers (Clarabel raises, SCS raises or stops
far off, at every budget) and its solver-free proof at the claims 1/2 and 1 finds no certificate. Here the same PEP
(:func:`~fedbounds.checks.fednmap.pep.encoding.build_lyapunov_pep` at budget d T, the budget row scaled by 1/(d T))
is read as exact rows (:func:`fedbounds.checks.pep.certificate.problem_of`) and

* solved along the path of step multiples :data:`PATH` down to k (:func:`fedbounds.checks.pep.precondition.solve_path`:
  each solve rescaled by the previous solution, exactly, by powers of two), then by SCS in the final basis;
* proved by :func:`fedbounds.checks.pep.precondition.prove_robust` (with ``FEDBOUNDS_PROVE=1`` when no certificate is
  stored); the certificate is stored under the rows' hash with the builder's description and the conditioning the
  solves reached, and re-verified exactly against the rebuilt rows on every check
  (:func:`fedbounds.checks.pep.certificate.attach`).

The :class:`~fedbounds.checks.pep.solve.Certificate` returned is ``certified`` when the two solvers' readings agree, and
``proved`` when the stored certificate verifies; its ``value`` is then the proved bound (an upper bound on w d T; the
solvers' readings stay in ``runs`` and in the record's ``conditioning``)."""

from __future__ import annotations

import math
import os
from typing import Any

from fedbounds.checks.fednmap.pep.encoding import build_lyapunov_pep, theorem5_steps
from fedbounds.checks.pep.solve import DEFAULT_ABS_TOL, DEFAULT_REL_TOL, Certificate

__all__ = ["PATH", "build_printed", "final_run", "printed_descent", "printed_path"]

#: the step multiples the continuation passes through before the target (largest first)
PATH = (16.0, 8.0, 4.0, 2.0)
L = 1.0


def build_printed(rho: float, n: int, Q: int, T: int, k: float, C_0: float = 1.0, C_c: float = 1.0) -> Any:
    """The builder of the ratio PEP w d T at k times Theorem 5's printed steps, budget d T, its row scaled by 1/(d T)."""
    st = theorem5_steps(L, rho, Q)
    dT = k * st["descent_coef"] * T
    return build_lyapunov_pep(L, rho, st["gamma"], k * st["eta_a"], st["eta_s"], n, Q, T, C_0, C_c, budget=dT,
                              budget_row_scale=1.0 / dT)


def printed_path(rho: float, n: int, Q: int, T: int, k: float = 1.0, C_0: float = 1.0,
                 C_c: float = 1.0) -> tuple[Any, Any, list[Any], Any, list[float], list[float | None]]:
    """The continuation solve of :func:`printed_descent`: (the builder at k, its exact rows, the last problem's Clarabel
    runs, SCS's run in the final basis, the path's step multiples, the value read at each). Each run's ``gram`` is in
    the original basis (the power-of-two rescaling undone by :func:`fedbounds.checks.pep.precondition.solve_problem`)."""
    from fedbounds.checks.pep.certificate import problem_of
    from fedbounds.checks.pep.precondition import solve_path

    build = build_printed(rho, n, Q, T, k, C_0, C_c)
    pb = problem_of(build)
    path_ks = [p for p in PATH if p > k] + [k]
    problems = [problem_of(build_printed(rho, n, Q, T, p, C_0, C_c)) for p in path_ks[:-1]] + [pb]
    runs, scs, path = solve_path(problems)
    return build, pb, runs, scs, path_ks, path


def final_run(runs: list[Any]) -> Any:
    """The run whose reading is the path's value: the last optimal one, else the last."""
    return next((r for r in reversed(runs) if r.optimal), runs[-1])


def printed_descent(rho: float, n: int, Q: int, T: int, k: float = 1.0, C_0: float = 1.0, C_c: float = 1.0,
                    store: Any = None) -> tuple[Certificate, dict[str, Any]]:
    """(the certificate of w d T at the point, the conditioning record: solver values along the path, gaps, the
    smallest Gram eigenvalue, the basis' scale, and, when proved, the proof's route, room and smallest pivot)."""
    from fedbounds.checks.pep.certificate import _write, attach, describe, stored
    from fedbounds.checks.pep.precondition import conditioning, prove_robust

    build, pb, runs, scs, path_ks, path = printed_path(rho, n, Q, T, k, C_0, C_c)
    cond = {"path_k": path_ks, "path_values": path, **conditioning(runs, scs)}
    clar = final_run(runs)
    final = (clar,) if scs is None else (clar, scs)
    values = {r.solver: r.dual for r in final}
    finite = [v for v in values.values() if v is not None]
    agree = len(finite) == len(final) and all(abs(a - b) <= DEFAULT_REL_TOL * max(abs(a), abs(b)) + DEFAULT_ABS_TOL
                                              for a in finite for b in finite)
    certified = agree and all(r.optimal for r in final)
    path_file = stored(pb.digest, store)
    if clar.optimal and not path_file.exists() and os.environ.get("FEDBOUNDS_PROVE") == "1":
        cert = prove_robust(pb, runs)
        if cert is not None:
            cert["problem"].update(describe(build) or {})
            cert["conditioning"] = cond
            _write(path_file, cert)
    proof = attach(build, clar.dual, store=store) if clar.optimal and path_file.exists() else None
    value = max(finite) if certified else None
    if proof is not None and proof.get("status") == "proved":
        from fedbounds.checks.pep.verify_certificate import load

        saved = load(path_file)
        proof = {**proof, "route": saved.get("route"), "room": saved.get("width"), "solver_free": True,
                 "from": "fedbounds.checks.pep.precondition.prove_robust on the exact rows, stored and re-verified"}
        cond["proof"] = {k_: proof.get(k_) for k_ in ("route", "room", "min_pivot", "bound", "file")}
        value = proof["bound"]
    cert = Certificate(values=values, statuses={r.solver: r.status for r in final}, gaps={r.solver: r.gap for r in final},
                       seconds={r.solver: r.seconds for r in final}, gram_dim=pb.points, rel_tol=DEFAULT_REL_TOL,
                       abs_tol=DEFAULT_ABS_TOL, certified=certified, unbounded=False,
                       value=value if value is None or math.isfinite(value) else None,
                       disagreement=max((abs(a - b) for a in finite for b in finite), default=None), agree=agree,
                       runs=final, proof=proof)
    return cert, cond
