"""The solver process of :mod:`fedbounds.checks.pep.bounded`: solves cvxpy's solver-ready data with Clarabel or SCS.

Started by the parent as ``python -P -m fedbounds.checks.pep.solver_child PARENT_PID READ_FD WRITE_FD MEMORY`` (``-P``:
the current folder is not on ``sys.path``). It imports the two solvers' cvxpy interfaces, then:

- asks the kernel to kill it when its parent dies (``PR_SET_PDEATHSIG``), and leaves if the parent is already gone;
- blocks SIGINT and SIGTERM (Ctrl-C reaches the whole process group: the parent decides, and kills this process;
  SCS's own SIGINT handler would otherwise stop a solve early with a status that reads like a result);
- limits its address space to ``MEMORY`` bytes (``RLIMIT_AS``; 0: no limit), after its imports and one small solve
  per solver (:func:`_warm_up`);
- answers requests ``(solver, data, options)`` with ``("ok", raw result)`` or ``("error", message)``, each a
  length-prefixed pickle on its pipes, until the request pipe closes; a MemoryError ends it with :data:`EXIT_MEMORY`
  (an allocation refused inside a solver's own code ends it by a signal: SIGABRT, SIGSEGV).

The raw result is what cvxpy's ``solve_via_data`` returns (SCS: a dict; Clarabel: its solution's fields in a
namespace, the status as text), so the parent's ``invert`` reads it as it would read the solver's own object.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
import types
from typing import Any

_HEADER = struct.Struct("!Q")
#: the exit status of a solver process that ran out of memory (a MemoryError in Python)
EXIT_MEMORY = 3
_CLARABEL_FIELDS = ("x", "z", "s", "obj_val", "obj_val_dual", "solve_time", "iterations", "r_prim", "r_dual")


def read_message(fd: int) -> Any:
    """One length-prefixed pickle from ``fd``; EOFError when the pipe is closed."""
    head = _read_exactly(fd, _HEADER.size)
    return pickle.loads(_read_exactly(fd, _HEADER.unpack(head)[0]))


def encode(obj: Any) -> bytes:
    """``obj`` as a length-prefixed pickle."""
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def write_message(fd: int, obj: Any) -> None:
    """``obj`` as a length-prefixed pickle on ``fd`` (blocking)."""
    view = memoryview(encode(obj))
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the pipe was closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _die_with(parent: int) -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux: the closed request pipe ends the loop
        pass
    if os.getppid() != parent:
        os._exit(0)


def _solve(solvers: dict[str, Any], name: str, data: dict, options: dict) -> Any:
    raw = solvers[name].solve_via_data(data, False, False, options)
    if name == "CLARABEL":
        fields = {k: getattr(raw, k, None) for k in _CLARABEL_FIELDS}
        return types.SimpleNamespace(status=str(raw.status), **fields)
    return raw


def _warm_up() -> None:
    """One small semidefinite solve per solver before the memory limit is set: OpenBLAS allocates its work buffer at
    its first call (32 MiB), and under a limit that refuses it, it retries for ever instead of failing."""
    import cvxpy as cp

    X = cp.Variable((3, 3), PSD=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X[0, 0] >= 1])
    for name in ("CLARABEL", "SCS"):
        problem.solve(solver=name)


def main(argv: list[str]) -> int:
    parent, rfd, wfd, memory = (int(a) for a in argv)
    _die_with(parent)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL
    from cvxpy.reductions.solvers.conic_solvers.scs_conif import SCS

    solvers = {"CLARABEL": CLARABEL(), "SCS": SCS()}
    _warm_up()
    if memory > 0:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_AS)[1]  # a limit inherited from the shell (ulimit -v) cannot be raised
        if hard != resource.RLIM_INFINITY:
            memory = min(memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (memory, hard if hard != resource.RLIM_INFINITY else memory))
    write_message(wfd, ("ready", os.getpid()))
    try:
        while True:
            try:
                name, data, options = read_message(rfd)
            except EOFError:
                return 0
            try:
                reply: tuple[str, Any] = ("ok", _solve(solvers, name, data, options))
            except MemoryError:
                raise
            except Exception as exc:  # a solver's own error (bad settings, a failed factorisation): the parent reports it
                reply = ("error", f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
            del data
            write_message(wfd, reply)
    except MemoryError:  # reading the data, solving or answering: the state of the pipes is unknown, so leave
        os._exit(EXIT_MEMORY)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
