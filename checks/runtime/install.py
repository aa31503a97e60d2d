"""Install a finished report into its folder whole, keeping the previous one until the new one is complete.

A report (``fedbounds check``'s report.json, page and plots; ``fedbounds report``'s CSVs, figures and page) is written
into a staging folder inside the output folder (same file system, so each move is a rename). :func:`install` then
moves the previous report's files aside, moves the new ones in with the file that describes them (its index) last,
and deletes the old ones. If any step fails, the new files are removed and the previous report is put back as it
was; the error names the output folder, never the staging folder. Files in the output folder that belong to neither
report are left alone.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["install", "remove_orphans", "staging", "write_atomic"]


def staging(out: Path, kind: str) -> Path:
    """A new staging folder ``out/.<kind>-<pid>-*`` (``out`` is created; it must be a folder). The leftovers of
    killed runs (folders of ``kind`` whose process is gone) are removed first."""
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(20, "is not a folder", str(out))
    new = [p for p in [out, *out.parents] if not p.exists()]
    out.mkdir(parents=True, exist_ok=True)
    _CREATED.setdefault(out.resolve(), new)
    remove_orphans(out, kind)
    return Path(tempfile.mkdtemp(prefix=f".{kind}-{os.getpid()}-", dir=out))


#: out -> the folders :func:`staging` created for it (deepest first), for :func:`remove_if_empty`
_CREATED: dict[Path, list[Path]] = {}


def remove_if_empty(out: Path) -> None:
    """Remove the folders :func:`staging` created for ``out`` that are still empty (a refused or failed run leaves no
    empty output folder behind); folders that existed before, or hold anything, are kept."""
    for folder in _CREATED.pop(out.resolve(), []):
        try:
            folder.rmdir()
        except OSError:  # not empty (a report was installed), or gone
            break


def remove_orphans(out: Path, kind: str) -> None:
    """Remove ``out/.<kind>-<pid>-*`` folders whose process ``pid`` is gone (a run killed by SIGKILL)."""
    for folder in out.glob(f".{kind}-*-*"):
        pid = folder.name.split("-")[1]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:  # alive, owned by someone else
            pass


def install(stage: Path, out: Path, new: Sequence[str], old: Sequence[str], index: str) -> list[Path]:
    """Move ``new`` (plain file names in ``stage``, ``index`` among them) into ``out``, replacing the previous report's
    files ``old``. ``index`` moves out first and in last, so it never describes files other than its own. Returns the
    new files at their final places."""
    olds = [n for n in dict.fromkeys([index, *old]) if (out / n).exists()]
    news = [*(n for n in dict.fromkeys(new) if n != index), index]
    aside = Path(tempfile.mkdtemp(prefix=f".old-{os.getpid()}-", dir=out))
    moved_old: list[str] = []
    moved_new: list[str] = []
    try:
        for name in olds:
            os.replace(out / name, aside / name)
            moved_old.append(name)
        for name in news:
            os.replace(stage / name, out / name)
            moved_new.append(name)
    except BaseException as exc:
        for name in moved_new:
            (out / name).unlink(missing_ok=True)
        for name in moved_old:
            os.replace(aside / name, out / name)
        if isinstance(exc, OSError):
            why = f"cannot install the new report ({exc.strerror or exc}); the previous report is kept"
            raise OSError(exc.errno, why, str(out)) from None
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
    return [out / n for n in news]


def write_atomic(path: Path, data: str | bytes, mode: int = 0o644) -> Path:
    """Write one file whole or not at all: a temporary file beside ``path`` (same file system), chmod ``mode``
    (``mkstemp`` creates 0600; reports and evidence are for readers), then renamed over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def evidence_path(relative: str) -> Path:
    """The committed evidence file ``relative`` (``theory/...``) of this installation, wherever the command runs."""
    return Path(__file__).resolve().parents[2] / relative


def unwritable(path: Path) -> str | None:
    """Why ``path`` cannot be (re)written here (its folder missing or read-only), or None. Evidence generators ask
    before minutes of solving, not after."""
    folder = path.parent
    if not folder.is_dir():
        return f"cannot write {path}: its folder does not exist"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"cannot write {path}: read-only (a regeneration command runs in a checkout, not an installed copy)"
    return None


def refuse_unwritable(path: Path) -> bool:
    """:func:`unwritable`'s reason as the one-line error of a generator about to solve (True: refuse, exit 2)."""
    import sys

    why = unwritable(path)
    if why:
        print(f"error: {why}", file=sys.stderr)
    return why is not None


def write_evidence(path: Path, text: str, what: str = "") -> int:
    """Write an evidence file atomically and say so: 0, or one line on stderr naming the file and exit status 2."""
    import sys

    from fedbounds.theory.core.evidence import stamp_text

    try:
        write_atomic(path, stamp_text(text))
    except OSError as exc:  # out of disk or quota: the environment (3); else an unusable path (2)
        print(f"error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 3 if exc.errno in (errno.ENOSPC, errno.EDQUOT) else 2
    print(f"wrote {path}{f' ({what})' if what else ''}")
    return 0
