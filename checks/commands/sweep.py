"""``fedbounds sweep SPEC``: run a resumable experiment grid described in a TOML spec.

Each cell's result goes into a SQLite store as it finishes, keyed by the sha256 of its configuration and seed;
running the same spec again computes only the missing cells. Cells run in local worker processes (default),
serially (``--processes 1``), on a local Dask cluster (``--workers N``) or on a running Dask scheduler
(``--scheduler ADDRESS``); the stored results are the same bit for bit.

The default store is ``reports/sweeps/<spec name>-<fingerprint>.sqlite``: the fingerprint (12 hex digits)
identifies the configuration, so two configurations that share a name never pool, and a store refuses a
configuration other than its own.

Exit status: 0 when every cell is stored; 1 when some cells raised an error (they are not stored, and a
rerun retries them); 2 on a malformed spec, bad arguments, an unusable or damaged store, or when every
cell tried failed (a spec value that passed validation but cannot run).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from fedbounds.checks.commands import path_arg

_ADDRESS_RE = re.compile(r"^(?:(?:tcp|tls|ws|wss|ucx|inproc)://)?[A-Za-z0-9_.\-\[\]:]+:\d{1,5}$")


def scheduler_arg(text: str) -> str:
    """A Dask scheduler address, ``[protocol://]host:port`` (tcp://10.0.0.5:8786)."""
    if not _ADDRESS_RE.match(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a scheduler address such as tcp://host:8786, got {text!r}")
    return text.strip()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``fedbounds sweep``."""
    parser.add_argument("spec", metavar="SPEC", help="the grid spec (a TOML file, or the name of a shipped spec: "
                        + ", ".join(_shipped_specs()) + ")")
    parser.add_argument("--store", type=path_arg, metavar="PATH",
        help="SQLite store (default: reports/sweeps/<spec name>-<fingerprint>.sqlite)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive_int, metavar="N", help="start a local Dask cluster of N worker processes")
    where.add_argument("--scheduler", type=scheduler_arg, metavar="ADDRESS",
        help="send the cells to a running Dask scheduler (tcp://host:8786)")
    parser.add_argument(
        "--processes", type=_positive_int, metavar="N", help="local worker processes (default: the CPU count; 1 runs serially)"
    )
    parser.add_argument("--limit", type=_positive_int, metavar="K", help="compute at most K missing cells this time")
    parser.add_argument("--dry-run", action="store_true", help="only count the cells: total, stored, missing")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Validate the spec, then compute its missing cells into the store."""
    from fedbounds.checks.sweep.spec import load_spec

    spec = load_spec(args.spec)
    if args.processes is not None and (args.workers is not None or args.scheduler is not None):
        raise ValueError("--processes sets the local process pool; with --workers or --scheduler, Dask places the cells")
    store = Path(args.store) if args.store else default_store(spec.name, spec.fingerprint)

    if args.dry_run:
        from fedbounds.checks.sweep.store import Store, check_store_path

        check_store_path(store)

        keys = {c.key for c in spec.iter_cells()}
        stored = 0
        if store.exists():
            with Store(store, readonly=True) as st:
                st.require(spec.fingerprint, spec.name)
                stored = len(st.has_keys(keys))
        print(f"sweep {spec.name}: {len(keys)} cells; {stored} stored, {len(keys) - stored} missing; store: {store}")
        return 0

    from fedbounds.checks.sweep.runner import run_sweep

    summary = run_sweep(
        spec,
        store,
        processes=args.processes,
        workers=args.workers,
        scheduler=args.scheduler,
        progress=not args.no_progress,
        limit=args.limit,
    )
    for line in summary.lines():
        print(line)
    if summary.errors and not (summary.computed or summary.already or summary.elsewhere):
        key, message = summary.errors[0]
        raise ValueError(
            f"every cell of spec {spec.name!r} failed ({len(summary.errors)} tried), so a spec value cannot run; "
            f"the first, cell {key[:12]}: {message}"
        )
    return 1 if summary.errors else 0


def default_store(name: str, fingerprint: str) -> Path:
    """``reports/sweeps/<name>-<first 12 hex digits of the fingerprint>.sqlite``."""
    return Path("reports") / "sweeps" / f"{name}-{fingerprint[:12]}.sqlite"


def _shipped_specs() -> list[str]:
    """The names of the specs shipped in fedbounds.checks/specs (for --help)."""
    from pathlib import Path

    return sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "specs").glob("*.toml"))
