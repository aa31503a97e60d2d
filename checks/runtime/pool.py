"""Stopping a process pool at once (Ctrl-C, SIGTERM, an error): the sweep's workers and ``check --jobs``'s.

``ProcessPoolExecutor.shutdown(wait=False, cancel_futures=True)`` cancels what is queued but lets a running worker
finish its task, and the interpreter waits for it at exit; a worker still starting fails noisily once the pool's
queues are gone. Killing the workers first ends both. Their tasks are pure (only the parent writes results), so
nothing is lost.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ProcessPoolExecutor

__all__ = ["abort", "die_with_parent"]


def die_with_parent(parent: int) -> None:
    """In a child process: ask the kernel to kill this process when its parent dies (``prctl(PR_SET_PDEATHSIG,
    SIGKILL)`` on Linux), however the parent died (SIGKILL from a batch scheduler included), and leave at once if
    ``parent`` is already gone (it may die before the request is made). Elsewhere a no-op: the pool's closed pipes
    end the worker at its next task."""
    import os
    import signal

    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def abort(pool: ProcessPoolExecutor) -> None:
    """Kill ``pool``'s worker processes, then shut it down without waiting.

    The pool's wake-up pipe may already be closed when its management thread has seen the killed workers; the
    interpreter's exit hook (``concurrent.futures.process._python_exit``) still writes to it, which printed an
    "Exception ignored ... Bad file descriptor" traceback after "fedbounds: interrupted". An aborted pool's wake-up
    therefore ignores a closed pipe."""
    wakeup = getattr(pool, "_executor_manager_thread_wakeup", None)
    if wakeup is not None:
        send = wakeup.wakeup

        def quiet_wakeup() -> None:
            with contextlib.suppress(OSError, ValueError):
                send()

        wakeup.wakeup = quiet_wakeup
    for p in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):
            p.kill()
    pool.shutdown(wait=False, cancel_futures=True)
