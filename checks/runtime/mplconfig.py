"""A writable matplotlib configuration folder, chosen before matplotlib is imported.

matplotlib writes its font cache under ``$MPLCONFIGDIR`` (else ``$XDG_CONFIG_HOME/matplotlib`` and
``$XDG_CACHE_HOME/matplotlib``, by default under ``~``). When that folder cannot be used (a regular file, a path
under a file, a read-only place) it prints two warnings on every run and makes a temporary folder itself. Here the
same remedy is taken quietly: a private temporary folder, removed at exit, for this process and its children.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["ensure_mplconfigdir", "usable_folder"]


def usable_folder(path: str | Path) -> bool:
    """Is ``path`` a folder this process can write into (created, with its parents, if missing)?"""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        if not p.is_dir() or not os.access(p, os.W_OK | os.X_OK):
            return False
        probe = tempfile.NamedTemporaryFile(dir=p, prefix=".fedbounds-probe-")  # os.access says yes to root everywhere
        probe.close()
        return True
    except (OSError, ValueError):
        return False


def _defaults() -> list[Path]:
    """The folders matplotlib uses when MPLCONFIGDIR is not set (its ``get_configdir`` and ``get_cachedir``)."""
    home = Path(os.path.expanduser("~"))
    config = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    cache = os.environ.get("XDG_CACHE_HOME") or str(home / ".cache")
    return [Path(config) / "matplotlib", Path(cache) / "matplotlib"]


def ensure_mplconfigdir() -> str | None:
    """Point ``MPLCONFIGDIR`` at a private temporary folder when the one matplotlib would use is not writable;
    returns that folder (None when the configured one is fine). Call it before matplotlib is imported."""
    given = os.environ.get("MPLCONFIGDIR")
    if all(usable_folder(p) for p in ([Path(given)] if given else _defaults())):
        return None
    try:
        private = tempfile.mkdtemp(prefix="fedbounds-matplotlib-")
    except OSError:  # no writable temporary folder either: matplotlib's own fallback and its warning stand
        return None
    atexit.register(shutil.rmtree, private, ignore_errors=True)
    os.environ["MPLCONFIGDIR"] = private
    return private
