"""The address-space limit (``ulimit -v``) a run is under, and the smallest one the numerical libraries load under.

Below about 350 MiB, scipy's bundled OpenBLAS can loop for good inside its own start-up (``blas_thread_init`` ->
``blas_memory_alloc`` -> ``malloc`` during ``dlopen``, holding the GIL, so no signal handler runs, SIGTERM included);
which limits hang depends on what is already mapped, so no limit just above the last hang is safe. A command that loads
numpy or scipy therefore refuses a limit under :data:`FLOOR_KIB` (about 1.6 times the largest one seen to hang, 320000
KiB) before it imports them, in one line, as an environment failure (exit status 3).
"""

from __future__ import annotations

__all__ = ["FLOOR_KIB", "limit_kib", "limit_words", "too_small"]

#: the smallest ``ulimit -v`` (KiB) a command that loads the numerical libraries accepts
FLOOR_KIB = 500_000


def _soft() -> int | None:
    """The soft RLIMIT_AS in bytes (``resource.RLIM_INFINITY`` when unlimited); None where it cannot be read."""
    try:
        import resource

        return resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - not POSIX
        return None


def limit_kib() -> int | None:
    """The soft address-space limit in KiB; None when there is none (or it cannot be read)."""
    soft = _soft()
    if soft is None:  # pragma: no cover - not POSIX
        return None
    import resource

    return None if soft == resource.RLIM_INFINITY else soft // 1024


def limit_words() -> str:
    """The address-space limit this process runs under, in words."""
    if _soft() is None:  # pragma: no cover - not POSIX
        return "the machine's memory"
    kib = limit_kib()
    return "the machine's memory (no ulimit -v)" if kib is None else f"the address-space limit ulimit -v {kib} (KiB)"


def too_small() -> str | None:
    """The one-line refusal when the soft address-space limit is under :data:`FLOOR_KIB`, else None."""
    kib = limit_kib()
    if kib is None or kib >= FLOOR_KIB:
        return None
    return (f"{limit_words()} is below the {FLOOR_KIB} KiB that numpy, scipy and the solvers need to load (under it their "
            "start-up can hang); raise the limit")
