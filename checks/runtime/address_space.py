"""The smallest address-space limit (``ulimit -v``) the numerical libraries load under.

Below about 350 MiB, scipy's bundled OpenBLAS can loop for good inside its own start-up (``blas_thread_init`` ->
``blas_memory_alloc`` -> ``malloc`` during ``dlopen``, holding the GIL, so no signal handler runs, SIGTERM included);
which limits hang depends on what is already mapped, so no limit just above the last hang is safe. A command that loads
numpy or scipy therefore refuses a limit under :data:`FLOOR_KIB` (about 1.6 times the largest one seen to hang, 320000
KiB) before it imports them, in one line, as an environment failure (exit status 3).
"""

from __future__ import annotations

__all__ = ["FLOOR_KIB", "too_small"]

#: the smallest ``ulimit -v`` (KiB) a command that loads the numerical libraries accepts
FLOOR_KIB = 500_000


def too_small() -> str | None:
    """The one-line refusal when the soft address-space limit is under :data:`FLOOR_KIB`, else None."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - not POSIX
        return None
    if soft == resource.RLIM_INFINITY or soft >= FLOOR_KIB * 1024:
        return None
    return (f"the address-space limit ulimit -v {soft // 1024} (KiB) is below the {FLOOR_KIB} KiB that numpy, scipy and "
            "the solvers need to load (under it their start-up can hang); raise the limit")
