"""Run the cells of a spec that the store does not hold yet: serially, in local worker processes, or on Dask.

Workers compute, the parent writes: :func:`execute` runs one cell anywhere (a local process, a Dask worker on
another machine) and returns its result already serialised (canonical JSON + float64 bytes), and only the
parent process, the one holding the :class:`~fedbounds.checks.sweep.store.Store`, writes it, one transaction per cell,
as each finishes. Every cell runs with its BLAS limited to one thread, so that a matrix product sums in the
same order in a pool process, a Dask worker or the serial loop, and the stored bytes agree bit for bit.

At most ``window`` cells are in flight at once, so a killed sweep loses at most those. Before computing a
cell the sweep claims it in the store (a lease row), so two sweeps on one store share the cells instead of
computing each twice; a sweep waits for cells another one is computing. Local workers watch the sweep's
process and exit as soon as it is gone, however it died.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import logging
import multiprocessing
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fedbounds.checks.sweep.spec import DEFAULT_CELL, Cell, Spec, canonical_json
from fedbounds.checks.sweep.store import Store, encode_curves

__all__ = ["Outcome", "SweepSummary", "execute", "resolve_cell_function", "run_sweep"]


@dataclass(frozen=True)
class Outcome:
    """A computed cell, serialised where it ran: ``result`` is canonical JSON, ``curves`` float64 bytes.

    ``error`` is set (and ``result`` empty) when the cell raised a ValueError, ArithmeticError or
    MemoryError; such a cell is not stored, so a later run retries it.
    """

    result: str
    curves: bytes
    elapsed: float
    error: str | None = None


@dataclass
class SweepSummary:
    """What a sweep did."""

    spec: str
    store: str
    total: int
    already: int
    computed: int = 0
    elsewhere: int = 0
    repaired: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    backend: str = ""

    @property
    def remaining(self) -> int:
        """Cells still missing from the store after this run."""
        return self.total - self.already - self.computed - self.elsewhere

    def lines(self) -> list[str]:
        """A human-readable account, one fact per line."""
        st = ", ".join(f"{v} {k}" for k, v in sorted(self.statuses.items())) or "none"
        out = [
            f"sweep {self.spec}: {self.total} cells; {self.already} already stored, {self.computed} computed "
            f"in {self.seconds:.1f} s ({self.backend}); {self.remaining} left",
            *([f"{self.elsewhere} cells computed by another sweep on the same store"] if self.elsewhere else []),
            *([f"{self.repaired} stored cells failed their checksum and were computed again"] if self.repaired else []),
            f"computed cells: {st}",
            f"store: {self.store}",
        ]
        for key, message in self.errors[:5]:
            out.append(f"error in cell {key[:12]}: {message}")
        if len(self.errors) > 5:
            out.append(f"... and {len(self.errors) - 5} more errors")
        return out


def resolve_cell_function(path: str) -> Callable[[Mapping[str, Any]], Mapping[str, Any]]:
    """Import ``"module:function"`` (a spec's ``cell``, checked against the registered cells when the spec was read:
    :func:`fedbounds.checks.sweep.spec.cell_allowed`; a Dask worker need not share the user's environment); a
    ValueError names what is missing. If the module defines ``prepare()``, it is called once first (to import
    what the cell needs before the BLAS thread limit is taken)."""
    module_name, _, func_name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cell function {path!r}: cannot import {module_name!r}: {exc}") from None
    fn = getattr(module, func_name, None)
    if not callable(fn):
        raise ValueError(f"cell function {path!r}: {module_name!r} has no function {func_name!r}")
    if module_name not in _prepared:
        prepare = getattr(module, "prepare", None)
        if callable(prepare):
            prepare()
        _prepared.add(module_name)
    return fn


_prepared: set[str] = set()


def _pack(result: Mapping[str, Any]) -> tuple[str, bytes]:
    body = dict(result)
    layout, blob = encode_curves(dict(body.pop("curves", {}) or {}))
    body["curves"] = layout
    try:
        text = canonical_json(body)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cell result is not JSON without NaN/infinity: {exc}") from None
    return text, blob


def execute(config: Mapping[str, Any]) -> Outcome:
    """Compute one cell (in whatever process this runs) and serialise its result.

    The cell function is ``config["cell"]`` (``"module:function"``) or :func:`fedbounds.checks.sweep.cell.compute_cell`;
    it runs with BLAS/OpenMP pools limited to one thread. A ValueError or ArithmeticError from it (bad
    parameters for this cell) is returned as ``Outcome.error``; anything else propagates and stops the sweep.
    """
    fn = resolve_cell_function(str(config.get("cell", DEFAULT_CELL)))
    t0 = time.perf_counter()
    try:
        with _one_thread():
            result = fn(config)
        text, blob = _pack(result)
    except (ValueError, ArithmeticError, MemoryError) as exc:
        return Outcome("", b"", time.perf_counter() - t0, f"{type(exc).__name__}: {exc}")
    return Outcome(text, blob, time.perf_counter() - t0)


_limit_lock = threading.Lock()
_limit_state: dict[str, Any] = {"depth": 0, "ctx": None}


class _one_thread:
    """BLAS/OpenMP pools limited to one thread (threadpoolctl, which comes with scikit-learn) while any cell
    runs in this process; reference-counted, so concurrent cells in threads of one Dask worker share it. The
    loaded libraries are scanned afresh each time (a few ms), so a library imported by an earlier cell is
    covered too."""

    def __enter__(self) -> None:
        with _limit_lock:
            if _limit_state["depth"] == 0:
                try:
                    from threadpoolctl import threadpool_limits
                except ImportError:  # pragma: no cover
                    _limit_state["ctx"] = None
                else:
                    _limit_state["ctx"] = threadpool_limits(limits=1)
            _limit_state["depth"] += 1

    def __exit__(self, *exc: object) -> None:
        with _limit_lock:
            _limit_state["depth"] -= 1
            if _limit_state["depth"] == 0 and _limit_state["ctx"] is not None:
                _limit_state["ctx"].restore_original_limits()
                _limit_state["ctx"] = None


def _watch_sweep(sweep_pid: int) -> None:
    """Pool initializer: exit as soon as the sweep process ``sweep_pid`` is gone, however it died (SIGKILL
    included). Workers fork from the forkserver, so their parent is not the sweep: they watch its pid, through
    a pidfd where Linux has one (woken at its exit), else by polling every half second. Ctrl-C and SIGTERM, which
    the sweep's command line routes through one thread, stop a worker again."""
    from fedbounds.checks.cli import unblock_interrupts
    from fedbounds.checks.runtime.pool import die_with_parent

    die_with_parent(os.getppid())  # the forkserver, which itself leaves when the sweep's pipe to it closes
    unblock_interrupts()
    try:
        pidfd: int | None = os.pidfd_open(sweep_pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        pidfd = None

    def watch() -> None:
        if pidfd is not None:
            select.select([pidfd], [], [])
            os._exit(1)
        while True:
            time.sleep(0.5)
            try:
                os.kill(sweep_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass

    threading.Thread(target=watch, name="sweep-watch", daemon=True).start()


# ---------------------------------------------------------------------------------------------- backends


class _Backend:
    """submit / wait-for-any / close over some executor; this base class runs each cell in this process."""

    name = "serial"
    window = 1

    def submit(self, config: dict) -> Any:
        done: cf.Future = cf.Future()
        done.set_result(execute(config))
        return done

    def wait_any(self, futures: Iterable[Any]) -> set[Any]:
        return set(futures)

    def outcome(self, future: Any) -> Outcome:
        return future.result()

    def cancel(self, futures: Iterable[Any]) -> None:
        for f in futures:
            f.cancel()

    def close(self, abort: bool = False) -> None:
        """Release the executor; ``abort`` (an error or Ctrl-C) does not wait for cells still running."""


class _PoolBackend(_Backend):
    def __init__(self, processes: int, preload: Iterable[str] = ()) -> None:
        self.name = f"{processes} local processes"
        self.window = 2 * processes
        if "forkserver" in multiprocessing.get_all_start_methods():
            # workers fork from a server that imported numpy/scipy and the cell module once: no per-worker
            # import cost, and no fork of this (possibly threaded) parent
            ctx = multiprocessing.get_context("forkserver")
            modules = ["fedbounds.checks.sweep.quiet", "fedbounds.checks.sweep.runner", "fedbounds.checks.sweep.cell",
                       "fedbounds.checks.fednmap.speedup"]
            ctx.set_forkserver_preload([*modules, *preload])
            _start_forkserver_without_cwd()
        else:  # pragma: no cover - Windows
            ctx = multiprocessing.get_context("spawn")
        self._pool = cf.ProcessPoolExecutor(max_workers=processes, mp_context=ctx, initializer=_watch_sweep, initargs=(os.getpid(),))

    def submit(self, config: dict) -> Any:
        return self._pool.submit(execute, config)

    def wait_any(self, futures: Iterable[Any]) -> set[Any]:
        done, _ = cf.wait(list(futures), return_when=cf.FIRST_COMPLETED)
        return set(done)

    def close(self, abort: bool = False) -> None:
        """Shut the pool down; on ``abort`` kill the workers first (:func:`fedbounds.checks.runtime.pool.abort`)."""
        if abort:
            from fedbounds.checks.runtime.pool import abort as abort_pool

            abort_pool(self._pool)
        else:
            self._pool.shutdown(wait=True, cancel_futures=True)


def _start_forkserver_without_cwd() -> None:
    """Start the forkserver with ``PYTHONSAFEPATH=1``: it runs as ``python -c``, which would otherwise put the
    current folder first on ``sys.path``, so a user's ``random.py`` or ``csv.py`` there would be imported (and run)
    by the server and every worker. Only the project's registered cell modules (and those named in
    ``$FEDBOUNDS_CELLS``, found through ``PYTHONPATH``) are imported."""
    from multiprocessing import forkserver

    old = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        forkserver.ensure_running()
    finally:
        if old is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = old


class _DaskBackend(_Backend):
    def __init__(self, *, client: Any = None, scheduler: str | None = None, workers: int | None = None) -> None:
        try:
            import distributed
        except ImportError:
            raise ValueError("--scheduler/--workers need dask.distributed: pip install 'fedbounds[dask]'") from None
        from fedbounds.checks.report.quiet import quiet_distributed

        # Dask's own logs (tracebacks on Ctrl-C; a worker's heartbeat error when the cluster shuts down) would break the
        # one-line contract; a cell's failure reaches the sweep through its future
        quiet_distributed(logging.CRITICAL)
        self._distributed = distributed
        self._owned: list[Any] = []
        if client is None:
            if scheduler is not None:
                try:
                    client = distributed.Client(scheduler, timeout="30s")
                except (OSError, TimeoutError) as exc:
                    raise ValueError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
                self.name = f"Dask scheduler {scheduler}"
            else:
                cluster = distributed.LocalCluster(
                    n_workers=int(workers or 1), threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._owned.append(cluster)
                client = distributed.Client(cluster)
                self.name = f"local Dask cluster, {workers} workers"
            self._owned.insert(0, client)
        else:
            self.name = "Dask client"
        self._client = client
        threads = sum(client.nthreads().values()) or 1
        self.window = max(4 * threads, 8)

    def submit(self, config: dict) -> Any:
        return self._client.submit(execute, config, pure=False)

    def wait_any(self, futures: Iterable[Any]) -> set[Any]:
        done, _ = self._distributed.wait(list(futures), return_when="FIRST_COMPLETED")
        return set(done)

    def close(self, abort: bool = False) -> None:
        for obj in self._owned:
            obj.close()


# ---------------------------------------------------------------------------------------------- the sweep


def _progress(total: int, initial: int, desc: str, enabled: bool) -> Any:
    """A bar on a terminal, one line per finished cell in a log (``fedbounds.checks.report.progress``)."""
    from fedbounds.checks.report.progress import progress

    return progress(total, initial=initial, desc=desc, unit="cell", enabled=enabled)


def run_sweep(
    spec: Spec,
    store_path: str | Path,
    *,
    processes: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    progress: bool = True,
    limit: int | None = None,
) -> SweepSummary:
    """Compute every cell of ``spec`` missing from the store at ``store_path``, writing each as it finishes.

    The store must hold ``spec``'s configuration or none (a StoreError otherwise); stored cells that fail
    their checksum are computed again. Backend: a Dask ``client`` if given; else ``scheduler`` (a Dask
    scheduler address); else ``workers`` (a local Dask cluster of that many worker processes); else
    ``processes`` local worker processes (default: the CPU count), run serially in this process when it is 1.
    ``limit`` caps the cells computed this time.
    """
    t0 = time.perf_counter()
    cells: dict[str, Cell] = {}
    for c in spec.iter_cells():
        cells.setdefault(c.key, c)
    with Store(store_path) as store:
        store.bind(spec.fingerprint, spec.name)
        repaired = store.verify(repair=True)
        store.add_spec(spec.name, spec.source)
        done = store.has_keys(cells)
        todo = [c for k, c in cells.items() if k not in done]
        if limit is not None:
            todo = todo[: max(int(limit), 0)]
        summary = SweepSummary(spec.name, str(store_path), total=len(cells), already=len(done), repaired=repaired)

        backend: _Backend
        if client is not None or scheduler is not None or workers is not None:
            backend = _DaskBackend(client=client, scheduler=scheduler, workers=workers) if todo else _Backend()
        else:
            nproc = int(processes or os.cpu_count() or 1)
            preload = [spec.cell.partition(":")[0]]
            if spec.cell == DEFAULT_CELL:
                preload += ["fedbounds.algorithms.run", "fedbounds.algorithms.instances", "fedbounds.algorithms.oracles"]
            backend = _PoolBackend(min(nproc, len(todo)), preload) if nproc > 1 and len(todo) > 1 else _Backend()
        summary.backend = backend.name

        bar = _progress(len(cells), len(done), spec.name, progress)
        bar.set_postfix(left=len(cells) - len(done), refresh=False)

        def record(cell: Cell, out: Outcome | None) -> None:
            if out is None:  # stored meanwhile by another sweep
                summary.elsewhere += 1
            elif out.error is not None:
                summary.errors.append((cell.key, out.error))
                store.release(cell.key)
            else:
                store.put(
                    cell.key,
                    spec=spec.name,
                    config=canonical_json(cell.config),
                    coords=canonical_json(cell.coords),
                    result=out.result,
                    curves=out.curves,
                    elapsed=out.elapsed,
                )
                summary.computed += 1
                status = _status_of(out.result)
                summary.statuses[status] = summary.statuses.get(status, 0) + 1
            bar.set_postfix(left=summary.remaining - len(summary.errors), refresh=False)
            bar.update(1)

        try:
            _drive(backend, todo, store.claim, record)
        except BaseException:
            bar.close()
            backend.close(abort=True)
            raise
        bar.close()
        backend.close()
    summary.seconds = time.perf_counter() - t0
    return summary


def _status_of(result_json: str) -> str:
    import json

    return str(json.loads(result_json).get("status", "done"))


def _drive(
    backend: _Backend,
    todo: list[Cell],
    claim: Callable[[str], str],
    record: Callable[[Cell, Outcome | None], None],
    poll: float = 0.25,
) -> None:
    """Keep ``backend.window`` cells in flight, each claimed first; record each as it completes. A cell another
    sweep holds is set aside and looked at again when nothing else is left: recorded as done elsewhere once
    stored there, computed here if that sweep let go of it."""
    pending = deque(todo)
    waiting: list[Cell] = []
    inflight: dict[Any, Cell] = {}

    def fill() -> None:
        while len(inflight) < backend.window and pending:
            cell = pending.popleft()
            state = claim(cell.key)
            if state == "claimed":
                inflight[backend.submit(cell.config)] = cell
            elif state == "stored":
                record(cell, None)
            else:
                waiting.append(cell)

    try:
        fill()
        while inflight or waiting:
            if inflight:
                for fut in backend.wait_any(inflight):
                    cell = inflight.pop(fut)
                    record(cell, backend.outcome(fut))
            else:
                time.sleep(poll)
                pending.extend(waiting)
                waiting.clear()
            fill()
    except BaseException:
        backend.cancel(inflight)
        raise
