"""``fedbounds check``: run the bound-checking suite, print the claims table, write report.json and plots.

Exit status: 0 when no claim is violated (except claims recorded as errata, whose violation is the
finding) and every negative control came out violated; 1 otherwise; 2 on bad input (an unknown claim id, an
output folder that cannot be written, tested before any check runs).

The report is written whole or not at all: report.json and the plots go to a temporary folder inside the
output folder (same file system, so a rename is atomic), then move into place with report.json last. A
report.json in the output folder therefore always describes the plots beside it; an interrupted run leaves
the previous report as it was.

The first line of output comes before the heavy imports: the claims, the profile, the processes and an estimate of
the time, from the cost table that benchmarks/bench_quick_check.py measures (:mod:`fedbounds.checks.runtime.costs`).
``--jobs N`` runs the claims in N spawned worker processes, longest first; the report is the serial one (each
claim is seeded from the same context wherever it runs), only faster.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedbounds.checks.commands import path_arg, seed_arg
from fedbounds.checks.runtime import costs
from fedbounds.checks.runtime.profiles import PROFILES, Profile, get_profile

if TYPE_CHECKING:  # the registry imports numpy/scipy/sympy: the first line is printed before that
    from fedbounds.checks.registry import CheckResult, CheckSpec


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES), help=f"budget: quick (default; {costs.figure()}) or full")
    parser.add_argument("--claim", action="append", metavar="ID", help="run only this claim (an id or a family prefix); repeatable")
    parser.add_argument("--out", default="reports", type=path_arg, metavar="DIR",
        help="output folder for report.json and plots (default: reports/)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="base seed of every Monte Carlo run (default 0)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--strict", action="store_true",
                        help="an inconclusive verdict fails the run (exit 1); by default it passes and the result line names it")
    parser.add_argument("--verbose", action="store_true",
                        help="print the full tables (notes, negative controls, PEP certificates); by default one line per claim")
    from fedbounds.checks.report.table import add_width_option

    add_width_option(parser)
    parser.add_argument("--jobs", default="auto", type=jobs_arg, metavar="N",
                        help=f"run the claims in N worker processes (default 'auto': one per core, at most {MAX_AUTO_JOBS}; "
                             "1: in this process); the report is the same")


#: ``--jobs auto`` uses at most this many workers: each pays the imports (a few CPU-seconds), and the longest claim
#: bounds the wall time whatever the count
MAX_AUTO_JOBS = 4


def jobs_arg(text: str) -> int:
    """``--jobs``: a positive integer, or ``auto`` (the cores this process may use, at most :data:`MAX_AUTO_JOBS`)."""
    if text.strip().lower() == "auto":
        return min(available_cores(), MAX_AUTO_JOBS)
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs takes a positive integer or 'auto', got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--jobs takes a positive integer or 'auto', got {text!r}")
    return n


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def run_checks(specs: list[CheckSpec], ctx_kwargs: dict, progress: bool = True, jobs: int = 1) -> list[tuple[CheckSpec, CheckResult]]:
    """Run ``specs``; an exception inside a check becomes a result with ``error`` set. Pairs come back in the order of
    ``specs`` whatever ``jobs`` is.

    ``jobs`` > 1 runs the claims in that many worker processes (:func:`_run_parallel`), the longest first (by the cost
    table of :mod:`fedbounds.checks.runtime.costs`). Each claim gets the same context (profile, seed) as in a serial run
    and every Monte Carlo run is seeded from it, so the results are the same; the per-process cache of shared runs
    (:mod:`fedbounds.checks.runtime.cache`) only saves time. BLAS runs single-threaded in both modes (the matrices are
    small; a second thread per process only spins, and both modes then do the same floating-point operations)."""
    from fedbounds.checks.report.progress import LineProgress
    from fedbounds.checks.report.progress import progress as make_progress

    bar = make_progress(len(specs), unit="claim", enabled=progress)

    def done(spec: CheckSpec, res: CheckResult) -> None:
        if isinstance(bar, LineProgress):
            bar.set_description(spec.check_id)
            bar.update(1, result="error" if res.error else res.verdict)
        else:
            bar.update(1)

    try:
        if jobs > 1 and len(specs) > 1 and all(map(_portable, specs)):
            return _run_parallel(specs, ctx_kwargs, min(jobs, len(specs)), done)
        pairs: list[tuple[CheckSpec, CheckResult]] = []
        with _one_blas_thread():
            for spec in specs:
                bar.set_description(spec.check_id)

                def tick(msg: str, _spec: CheckSpec = spec) -> None:
                    bar.set_postfix_str(msg[:40], refresh=True)

                res = _run_one(spec, ctx_kwargs, tick)
                pairs.append((spec, res))
                done(spec, res)
        return pairs
    finally:
        bar.close()


def _run_one(spec: CheckSpec, ctx_kwargs: dict, tick=None) -> CheckResult:
    """One claim, timed (wall ``elapsed`` and this process's ``cpu``); a crash becomes ``error``."""
    from fedbounds.checks.registry import CheckContext, CheckResult

    ctx = CheckContext(**ctx_kwargs) if tick is None else CheckContext(tick=tick, **ctx_kwargs)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        res = spec.func(ctx)
    except Exception as exc:  # a crashing check is reported, not fatal
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        res = CheckResult(spec.check_id, error=f"{type(exc).__name__}: {exc} ({Path(tb.filename).name}:{tb.lineno})")
    res.elapsed = time.perf_counter() - t0
    res.cpu = time.process_time() - c0
    return res


class _one_blas_thread:
    """BLAS (OpenBLAS/MKL through threadpoolctl, when installed) limited to one thread inside the block."""

    def __enter__(self) -> None:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
            self._limits = None
        else:
            self._limits = threadpool_limits(limits=1)

    def __exit__(self, *exc: object) -> None:
        if self._limits is not None:
            self._limits.restore_original_limits()


def _portable(spec: CheckSpec) -> bool:
    """Whether a worker process registers ``spec`` too: a check of one of the paper packages (its modules register it
    on import). A check registered by hand in this process (the Python API, a test) runs here, serially."""
    from fedbounds.checks.registry import PAPER_PACKAGES

    module = getattr(spec.func, "__module__", "") or ""
    return any(module == p or module.startswith(p + ".") for p in PAPER_PACKAGES)


def _worker_init(papers: list[str], parent: int | None = None) -> None:
    """Pool initializer: killed with the parent process ``parent`` however it dies
    (:func:`fedbounds.checks.runtime.pool.die_with_parent`), Ctrl-C and SIGTERM unblocked (the command line routes them
    through one thread of the parent), the papers registered at run time in the parent, BLAS on one thread."""
    from fedbounds.checks.cli import unblock_interrupts
    from fedbounds.checks.registry import PAPER_PACKAGES, register_paper
    from fedbounds.checks.runtime.pool import die_with_parent

    if parent is not None:
        die_with_parent(parent)
    unblock_interrupts()
    for package in papers:
        if package not in PAPER_PACKAGES:
            register_paper(package)
    _one_blas_thread().__enter__()


def _worker_run(check_id: str, ctx_kwargs: dict) -> CheckResult:
    """In a worker process: the claim ``check_id`` of the worker's registry."""
    from fedbounds.checks.registry import CheckResult, get_check

    try:
        spec = get_check(check_id)
    except (KeyError, ValueError):
        return CheckResult(check_id, error=f"no check {check_id!r} in a worker process (registered in the parent only? use --jobs 1)")
    return _run_one(spec, ctx_kwargs)


class _clean_sys_path:
    """While worker processes start: the current folder out of ``sys.path`` (``''``, ``.``, the cwd), so that a
    worker imports fedbounds and its dependencies from where they are installed, never from a folder that happens to
    hold a ``fedbounds/`` or ``checks/`` (the repository root, say). A spawned worker takes this list as its path."""

    def __enter__(self) -> None:
        self._saved = list(sys.path)
        cwd = os.path.realpath(os.getcwd())
        sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.realpath(p) != cwd]

    def __exit__(self, *exc: object) -> None:
        sys.path[:] = self._saved


def worker_pool(jobs: int) -> Any:
    """The pool of ``jobs`` spawned worker processes of ``check --jobs`` (each killed with this process however it
    dies, :func:`_worker_init`)."""
    import concurrent.futures as cf
    import multiprocessing

    from fedbounds.checks.registry import PAPER_PACKAGES

    return cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_worker_init, initargs=(list(PAPER_PACKAGES), os.getpid()))


def _run_parallel(specs: list[CheckSpec], ctx_kwargs: dict, jobs: int, done) -> list[tuple[CheckSpec, CheckResult]]:
    """Run ``specs`` in ``jobs`` spawned worker processes, longest claim first; results in the order of ``specs``.

    Spawned, not forked: a fresh interpreter per worker (no copy of this process's threads or solver state), its
    ``sys.path`` without the current folder (:class:`_clean_sys_path`). A worker that dies (killed, out of memory)
    turns the claims it had not finished into errors; Ctrl-C cancels what has not started and is re-raised."""
    import concurrent.futures as cf

    from fedbounds.checks.registry import CheckResult

    order = sorted(range(len(specs)), key=lambda i: -costs.QUICK_CPU_S.get(specs[i].check_id, costs.DEFAULT_CPU_S))
    results: dict[int, CheckResult] = {}
    kwargs = {k: v for k, v in ctx_kwargs.items() if k != "tick"}
    pool = worker_pool(jobs)
    try:
        with _clean_sys_path():  # workers start during submit
            futures = {pool.submit(_worker_run, specs[i].check_id, kwargs): i for i in order}
        for fut in cf.as_completed(futures):
            i = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # the worker died (BrokenProcessPool) or the result did not come back
                res = CheckResult(specs[i].check_id, error=f"worker process failed: {type(exc).__name__}: {exc}")
            results[i] = res
            done(specs[i], res)
    except BaseException:
        from fedbounds.checks.runtime.pool import abort

        abort(pool)
        raise
    pool.shutdown(wait=True)
    return [(spec, results[i]) for i, spec in enumerate(specs)]


def selected_checks(claims: list[str] | None) -> list[CheckSpec]:
    """The checks named by ``--claim``: an id, or a family prefix with or without its trailing dot (``ds.``)."""
    from fedbounds.checks.registry import select_checks

    if claims is None:
        return select_checks(None)
    return select_checks([c[:-1] if c.endswith(".") and len(c) > 1 else c for c in claims])


def prepare_out(out: Path) -> Path:
    """Create the output folder and a staging folder inside it (which proves it writable); returns the staging
    folder. Raises OSError naming the folder when it cannot be used."""
    from fedbounds.checks.runtime.install import staging

    return staging(out, "check")


def install(tmp: Path, out: Path) -> tuple[Path, list[Path]]:
    """Move the report written in ``tmp`` into ``out`` (:func:`fedbounds.checks.runtime.install.install`): report.json
    last, the previous report kept until the new one is whole. Returns (report.json, plots) at their final places."""
    from fedbounds.checks.runtime.install import install as install_files

    old = [*sorted(_listed_plots(out / "report.json")), "index.html"]
    new = [*sorted(_listed_plots(tmp / "report.json")), *(["index.html"] if (tmp / "index.html").exists() else [])]
    placed = install_files(tmp, out, [*new, "report.json"], old, index="report.json")
    return out / "report.json", [p for p in placed if p.suffix == ".png"]


def _listed_plots(report: Path) -> set[str]:
    """Plot file names a report.json lists (plain names only; an unreadable report lists none)."""
    try:
        claims = json.loads(report.read_text(encoding="utf-8")).get("claims", [])
        names = {str(n) for c in claims for n in c.get("plot_files", [])}
    except (OSError, ValueError, AttributeError, TypeError):
        return set()
    return {n for n in names if n == Path(n).name and n.endswith(".png")}


def run(args: argparse.Namespace) -> int:
    from fedbounds.checks.pep.bounded import limits

    limits()  # FEDBOUNDS_SOLVER_SECONDS / _MEMORY: a malformed one is bad input before anything runs, not a claim's error
    profile = get_profile(args.profile)
    jobs = int(getattr(args, "jobs", 1))
    out = Path(args.out)
    tmp = prepare_out(out)  # an unusable --out is refused alone, before the first line says what would run
    try:
        early = announce(args.claim, profile.name, jobs)  # the first line, before the registry's heavy imports
        specs = selected_checks(args.claim)
        if not early:
            announce(args.claim, profile.name, jobs, [s.check_id for s in specs])
        return _run(args, profile, specs, out, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        from fedbounds.checks.runtime.install import remove_if_empty

        remove_if_empty(out)


def announce(claims: list[str] | None, profile: str, jobs: int, ids: list[str] | None = None) -> bool:
    """Print the run's first line (how many claims, the profile, the processes, the estimated time) and flush it.
    Without ``ids`` it is printed only when the cost table knows what ``claims`` selects (nothing heavy is imported
    yet); returns whether it was printed. An unknown claim is then reported by the registry, alone."""
    if ids is None:
        ids = costs.matching_ids(claims, costs.QUICK_CPU_S)
        if not ids:
            return False
    try:
        print(costs.estimate(ids, profile, min(jobs, max(1, len(ids)))).line(), flush=True)
    except BrokenPipeError:  # the reader is gone (| head): run on and write the report; the table's print ends it (141)
        pass
    return True


#: committed evidence file -> the check ids (prefixes) whose verdict rests on it
EVIDENCE_CLAIMS: dict[str, tuple[str, ...]] = {
    "pep_evidence.json": ("fednmap.pep",),
    "pep_c0_window.json": ("fednmap.pep",),
    "spep_grid.json": ("fednmap.spep",),
    "spep_speedup.json": ("fednmap.spep",),
    "spep_replay.json": ("fednmap.spep",),
    "theorem8_c0.json": ("fednmap.spep.theorem8_existence", "fednmap.spep.constant_36", "fednmap.spep.constant_12100",
                         "fednmap.pep.theorem8_exponent"),
    "theorem8_speedup.json": ("fednmap.spep.theorem8_existence",),
    "theorem8_families.json": ("fednmap.spep.theorem8_existence",),
    "theorem8_lower.json": ("fednmap.spep.theorem8_existence",),
    "theorem8_front_families.json": (),  # read by no claim: the docs' table (§10.10)
}
#: exit status when a claim could not be checked because of the environment (damaged evidence, out of memory)
EXIT_ENVIRONMENT = 3


def solver_limit(res: CheckResult) -> str | None:
    """The first solver limit (``limit: ...`` status, :mod:`fedbounds.checks.pep.bounded`) met by ``res``'s PEP solves, or
    None: a claim left undecided by ``FEDBOUNDS_SOLVER_SECONDS`` or ``_MEMORY`` is the environment's, not the claim's."""
    import re

    text = json.dumps([v.details for v in [*res.verdicts, *res.negatives]], default=str)
    found = re.search(r'"limit: ([^"]*)"', text)
    return found.group(1) if found else None


def _environment_error(error: str) -> bool:
    """Whether a claim's error is the environment's (memory, a solver's limit, a worker killed), not the claim's."""
    return error.startswith(("MemoryError", "SolverLimit")) or "BrokenProcessPool" in error or "failed to map segment" in error


def blocked_by_evidence(specs: list[CheckSpec]) -> dict[str, str]:
    """check id -> why it is not checked, for each of ``specs`` resting on a missing or damaged evidence file."""
    from fedbounds.theory.core.evidence import survey

    out: dict[str, str] = {}
    for path, reason in survey().items():
        prefixes = EVIDENCE_CLAIMS.get(Path(path).name, ("fednmap.",))
        for spec in specs:
            if any(spec.check_id == p or spec.check_id.startswith(p + ".") for p in prefixes):
                out.setdefault(spec.check_id, f"not checked: {reason}")
    return out


def _run(args: argparse.Namespace, profile: Profile, specs: list[CheckSpec], out: Path, tmp: Path) -> int:
    from fedbounds.checks.registry import CheckResult
    from fedbounds.checks.report.html import write_index_html
    from fedbounds.checks.report.suite import format_table, run_metadata, write_report

    started = run_metadata()  # the commit and date the run starts from
    blocked = blocked_by_evidence(specs)
    for reason in dict.fromkeys(blocked.values()):
        print(f"fedbounds: {reason}", file=sys.stderr)
    t0 = time.perf_counter()
    pairs = run_checks([s for s in specs if s.check_id not in blocked], {"profile": profile, "seed": int(args.seed)},
                       progress=not args.no_progress, jobs=int(getattr(args, "jobs", 1)))
    ran = {spec.check_id: (spec, res) for spec, res in pairs}
    pairs = [ran.get(s.check_id) or (s, CheckResult(s.check_id, error=blocked[s.check_id])) for s in specs]
    elapsed = time.perf_counter() - t0
    ok, line = result_line(pairs, strict=bool(getattr(args, "strict", False)))
    meta = {
        **started,
        "profile": profile.to_dict(),
        "seed": int(args.seed),
        "elapsed_s": elapsed,
        "python": platform.python_version(),
        "passed": ok,
    }
    write_report(tmp, pairs, meta)
    write_index_html(tmp, json.loads((tmp / "report.json").read_text(encoding="utf-8")))
    json_path, pngs = install(tmp, out)
    if getattr(args, "verbose", False):
        print(format_table(pairs, getattr(args, "width", None)))
    else:
        from fedbounds.checks.report.suite import format_compact

        print(format_compact(pairs, getattr(args, "width", None)))
    print(f"\nprofile {profile.name}, seed {args.seed}: {_count(len(pairs), 'claim')} in {elapsed:.1f} s")
    print(f"report: {json_path}")
    print(f"plots:  {len(pngs)} PNG files in {json_path.parent}/ (and index.html)")
    limited = {s.check_id: why for s, r in pairs if not s.accepts(r) and (why := solver_limit(r))}
    if limited and not any(r.verdict == "violated" for s, r in pairs if s.check_id in limited):
        for check_id, why in limited.items():
            print(f"fedbounds: error: {check_id} not checked: the solver ran out of time or memory ({why})", file=sys.stderr)
        print(f"result: NOT CHECKED ({', '.join(limited)}: a solver limit stopped them; exit status 3)")
        return EXIT_ENVIRONMENT
    short = [s.check_id for s, r in pairs if r.error and s.check_id not in blocked and _environment_error(r.error)]
    if short:
        from fedbounds.checks.cli import memory_limit

        print(f"result: NOT CHECKED ({', '.join(short)}: the environment stopped them; exit status 3)")
        print(f"fedbounds: error: {', '.join(short)} not checked: out of memory or a solver limit under {memory_limit()} "
              f"({next(r.error for s, r in pairs if s.check_id == short[0])[:200]})", file=sys.stderr)
        return EXIT_ENVIRONMENT
    if blocked:
        print(f"result: NOT CHECKED ({len(blocked)} claims rest on missing or damaged committed evidence; exit status 3)")
        return EXIT_ENVIRONMENT
    print("result: " + line)
    return 0 if ok else 1


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


def result_line(pairs: list[tuple[CheckSpec, CheckResult]], strict: bool = False) -> tuple[bool, str]:
    """Whether the run passes, and its result line: ``PASS``, ``PASS (1 inconclusive: fednmap.lyapunov)``, or
    ``FAIL (...)`` naming why. An inconclusive verdict (neither held nor violated at the confidence asked) passes
    unless ``strict``; either way the line names it."""
    inconclusive = [spec.check_id for spec, res in pairs if not res.error and res.verdict == "inconclusive"]
    named = f"{len(inconclusive)} inconclusive: {', '.join(inconclusive)}" if inconclusive else ""
    if not all(spec.accepts(res) for spec, res in pairs):
        why = "a claim is violated, a check errored, or a negative control passed"
        return False, f"FAIL ({why}" + (f"; {named})" if named else ")")
    if strict and inconclusive:
        return False, f"FAIL (--strict: {named})"
    return True, "PASS" + (f" ({named})" if named else "")
