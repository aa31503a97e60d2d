"""Solves that can be interrupted and bounded: Clarabel and SCS run in a solver process with a time and a memory limit.

Clarabel's Rust code and SCS's C code do not return to Python until a solve ends, so a Ctrl-C waits for the solve,
and under a memory limit they spin, crash (SCS: exit 139) or abort. Inside :func:`bounded` every cvxpy solve with
Clarabel or SCS (PEPit's included: the hook is cvxpy's ``solve_via_data``, which receives the solver-ready data) is
sent to one persistent solver process (:mod:`fedbounds.checks.pep.solver_child`, started at the first solve, one per
fedbounds process), and cvxpy inverts its answer here as usual. The parent waits in slices of
:data:`POLL_S` seconds, so that

- Ctrl-C or SIGTERM kill the solver process at once (the next solve starts a fresh one) and propagate: an
  interrupted solve never returns, let alone ``optimal``;
- a solve is limited to ``FEDBOUNDS_SOLVER_SECONDS`` (default :data:`DEFAULT_SECONDS`): the solver's own time limit
  (Clarabel ``time_limit``, SCS ``time_limit_secs``), and the solver process killed :data:`GRACE_S` seconds later;
- the solver process's address space is limited to ``FEDBOUNDS_SOLVER_MEMORY`` (default: half the machine's memory;
  a number of bytes with an optional K, M, G or T suffix), set with ``RLIMIT_AS`` after its imports.

A solve stopped by a limit, or whose solver process died (a crash, an allocation the limit refused), raises
:class:`SolverLimit` with a one-line reason; :func:`fedbounds.checks.pep.solve.solve_once` records it as the status
``limit: <reason>``, which is never ``optimal``, so the certificate is ``inconclusive``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fedbounds.checks.pep.solver_child import EXIT_MEMORY, encode, read_message

__all__ = ["DEFAULT_SECONDS", "GRACE_S", "Limits", "SolverLimit", "bounded", "limits", "stop_solver_process"]

#: the default time limit of one solve, in seconds (``FEDBOUNDS_SOLVER_SECONDS``)
DEFAULT_SECONDS = 600.0
#: the solver process is killed this long after the solver's own time limit
GRACE_S = 2.0
#: how often a waiting parent looks at its signals (Ctrl-C is raised in the main thread between two slices)
POLL_S = 0.1
#: how long the solver process may take to start (its imports)
START_S = 60.0
SOLVERS = ("CLARABEL", "SCS")
_TIME_OPTION = {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}
_DATA_KEYS = ("A", "b", "c", "P", "dims")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class SolverLimit(RuntimeError):
    """A solve stopped by its time or memory limit, or whose solver process died; the message is the reason."""


@dataclass(frozen=True)
class Limits:
    """The limits of one solve: ``seconds`` of wall time, ``memory`` bytes of address space (0: none)."""

    seconds: float
    memory: int


def _physical_half() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # pragma: no cover - no sysconf
        return 0


def limits() -> Limits:
    """The limits from ``FEDBOUNDS_SOLVER_SECONDS`` and ``FEDBOUNDS_SOLVER_MEMORY``; a ValueError naming the variable
    when one is malformed (the command line reports it in one line, exit 2)."""
    raw = os.environ.get("FEDBOUNDS_SOLVER_SECONDS", "").strip()
    seconds = DEFAULT_SECONDS
    if raw:
        try:
            seconds = float(raw)
        except ValueError:
            seconds = float("nan")
        if not (0 < seconds < 1e7):
            raise ValueError(f"FEDBOUNDS_SOLVER_SECONDS={raw!r}: expected a number of seconds, > 0 and < 1e7 "
                             f"(default {DEFAULT_SECONDS:g})")
    raw = os.environ.get("FEDBOUNDS_SOLVER_MEMORY", "").strip()
    memory = _physical_half()
    if raw:
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?", raw, re.IGNORECASE)
        memory = int(float(m[1]) * _UNITS[m[2].upper()]) if m else 0
        if memory < 1 << 20:
            raise ValueError(f"FEDBOUNDS_SOLVER_MEMORY={raw!r}: expected a size of at least 1M, in bytes or with a K, M, G or T "
                             "suffix (default: half the machine's memory)")
    return Limits(seconds, memory)


def _size(n: int) -> str:
    return f"{n / (1 << 30):.3g} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.3g} MiB"


class _SolverProcess:
    """One solver process, its pipes and its memory limit."""

    def __init__(self, memory: int) -> None:
        self.memory = memory
        self.owner = os.getpid()  # a forked child of this process must start its own (the pipes would be shared)
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()
        env = {**os.environ, "PYTHONSAFEPATH": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        cmd = [sys.executable, "-P", "-m", "fedbounds.checks.pep.solver_child", str(os.getpid()), str(to_child_r),
               str(from_child_w), str(memory)]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         pass_fds=(to_child_r, from_child_w), env=env, cwd="/")
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        os.set_blocking(self._w, False)
        try:
            kind, _ = self._receive(START_S, "start")
        except BaseException:
            self.kill()
            raise
        if kind != "ready":
            self.kill()
            raise SolverLimit(f"the solver process did not start ({kind})")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def solve(self, name: str, data: dict, options: dict, seconds: float) -> Any:
        self._send((name, {k: data[k] for k in _DATA_KEYS if k in data}, options), seconds + GRACE_S)
        kind, payload = self._receive(seconds + GRACE_S, "solve")
        if kind == "ok":
            return payload
        raise SolverLimit(f"the solver failed: {payload}{self._memory_note()}")

    def _send(self, request: tuple, seconds: float) -> None:
        """Write ``request`` in slices the pipe takes without blocking (a Ctrl-C is seen between two); a solver process
        that died meanwhile (it stops reading) is reported as such."""
        view = memoryview(encode(request))
        deadline = time.monotonic() + seconds
        while view:
            if time.monotonic() > deadline:
                self.kill()
                raise SolverLimit(f"the solver process did not take its data within {seconds:g} s")
            select.select([], [self._w], [], POLL_S)
            try:
                view = view[os.write(self._w, view):]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                self.proc.wait()
                raise SolverLimit(self._death()) from None

    def _receive(self, seconds: float, what: str) -> tuple[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                if what == "start":
                    raise SolverLimit(f"the solver process did not start within {seconds:g} s")
                raise SolverLimit(f"time limit of {seconds - GRACE_S:g} s reached, the solver process was stopped "
                                  "(raise FEDBOUNDS_SOLVER_SECONDS)")
            ready, _, _ = select.select([self._r], [], [], min(POLL_S, left))
            if ready:
                break
        try:
            return read_message(self._r)
        except EOFError:
            self.proc.wait()
            raise SolverLimit(self._death()) from None

    def _death(self) -> str:
        code = self.proc.returncode
        if code == EXIT_MEMORY:
            return f"the solver ran out of memory (limit {_size(self.memory)}; raise FEDBOUNDS_SOLVER_MEMORY)"
        how = f"exit status {code}"
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                how = f"signal {signal.Signals(-code).name}"
        return f"the solver process died ({how}){self._memory_note()}"

    def _memory_note(self) -> str:
        return f"; its memory limit is {_size(self.memory)} (FEDBOUNDS_SOLVER_MEMORY)" if self.memory else ""

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for fd in (self._w, self._r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._w = self._r = -1


_lock = threading.Lock()
_process: _SolverProcess | None = None
_local = threading.local()
_originals: dict[str, Any] = {}


def stop_solver_process() -> None:
    """Kill this process's solver process, if one runs (the next bounded solve starts a fresh one)."""
    global _process
    with _lock:
        if _process is not None and _process.owner == os.getpid():
            _process.kill()
        _process = None


atexit.register(stop_solver_process)


def _solve_in_child(name: str, data: dict, solver_opts: dict | None) -> Any:
    global _process
    lim: Limits = _local.limits
    options = dict(solver_opts or {})
    option = _TIME_OPTION[name]
    options[option] = min(float(options.get(option, lim.seconds)), lim.seconds)
    with _lock:
        if _process is not None and _process.owner != os.getpid():
            _process = None  # inherited through fork: the parent's, left alone
        if _process is None or not _process.alive() or _process.memory != lim.memory:
            if _process is not None:
                _process.kill()
            _process = None
            _process = _SolverProcess(lim.memory)
        process = _process
        try:
            raw = process.solve(name, data, options, lim.seconds)
        except BaseException:  # Ctrl-C, SIGTERM, a limit, a broken pipe: this process is done with
            process.kill()
            _process = None
            raise
    if name == "CLARABEL" and raw.status == "MaxTime":
        raise SolverLimit(f"time limit of {options['time_limit']:g} s reached (raise FEDBOUNDS_SOLVER_SECONDS)")
    if name == "SCS" and "time_limit" in str(raw.get("info", {}).get("status", "")):
        raise SolverLimit(f"time limit of {options['time_limit_secs']:g} s reached (raise FEDBOUNDS_SOLVER_SECONDS)")
    return raw


def _install() -> None:
    """Wrap Clarabel's and SCS's ``solve_via_data`` (once): inside :func:`bounded`, on this thread, they solve in the
    solver process; elsewhere they run as cvxpy wrote them."""
    if _originals:
        return
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL
    from cvxpy.reductions.solvers.conic_solvers.scs_conif import SCS

    for cls in (CLARABEL, SCS):
        original = cls.solve_via_data
        _originals[cls.__name__] = original

        def solve_via_data(self: Any, data: dict, warm_start: bool, verbose: bool, solver_opts: dict,
                           solver_cache: Any = None, _original: Any = original) -> Any:
            if getattr(_local, "depth", 0) > 0 and self.name() in SOLVERS:
                return _solve_in_child(self.name(), data, solver_opts)
            return _original(self, data, warm_start, verbose, solver_opts, solver_cache)

        cls.solve_via_data = solve_via_data


@contextlib.contextmanager
def bounded() -> Iterator[Limits]:
    """Inside the block, this thread's Clarabel and SCS solves run in the solver process under :func:`limits`
    (read, and validated, on entry). Re-entrant."""
    lim = limits()
    _install()
    depth = getattr(_local, "depth", 0)
    saved = getattr(_local, "limits", None)
    _local.depth, _local.limits = depth + 1, lim
    try:
        yield lim
    finally:
        _local.depth, _local.limits = depth, saved
