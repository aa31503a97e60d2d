"""A ``-wal`` file beside a sweep store that is not its own is refused before SQLite replays it (issue 24); the
store's own crash-left WAL is still replayed."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.sweep.store import Store, StoreError, row_checksum


def _put(store: Store, key: str) -> None:
    store.put(key, spec="s", config="{}", coords="{}", result="{}", curves=b"", elapsed=0.0)


def _crash_after_commit(path: Path, keys: list[str]) -> None:
    """In a child process: open the store, commit one cell per key without the checkpoint that follows a put, then
    die by SIGKILL (no close). Its WAL then holds the only copy of those cells."""
    rows = [(k, "s", "{}", "{}", "{}", b"", 0.0, 0.0, row_checksum(k, "s", "{}", "{}", "{}", b"")) for k in keys]
    code = (
        "import os, signal, sys\n"
        "from fedbounds.checks.sweep.store import Store\n"
        "s = Store(sys.argv[1])\n"
        "with s._transaction():\n"
        f"    s._con.executemany('INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', {rows!r})\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FEDBOUNDS_", "PYTEST_"))}
    res = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == -9, res.stderr
    assert Path(f"{path}-wal").stat().st_size > 0


def _keys(path: Path) -> set[str]:
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)  # the main file alone
    try:
        return {k for (k,) in con.execute("SELECT key FROM cells")}
    finally:
        con.close()


def test_a_crash_left_wal_of_the_store_itself_is_replayed(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    with Store(path) as st:
        _put(st, "a1")
    _crash_after_commit(path, ["a2"])
    assert _keys(path) == {"a1"}  # a2 is in the WAL only
    with Store(path) as st:
        assert st.keys() == {"a1", "a2"}
    assert _keys(path) == {"a1", "a2"}


def test_another_stores_wal_beside_a_store_is_refused_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Store(a) as st:
        _put(st, "a1")
    with Store(b) as st:
        _put(st, "b1")
    _crash_after_commit(a, ["a2", "a3"])
    shutil.copyfile(f"{a}-wal", f"{b}-wal")
    before = b.read_bytes()
    for readonly in (False, True):
        with pytest.raises(StoreError, match=r"b\.sqlite-wal' does not belong to store"):
            Store(b, readonly=readonly)
    assert b.read_bytes() == before  # nothing was replayed into it
    assert main(["report", str(b), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "b.sqlite-wal" in err and "Traceback" not in err
    os.remove(f"{b}-wal")
    with Store(b) as st:  # once it is moved aside, the store opens with its own cells only
        assert st.keys() == {"b1"}


def test_a_wal_beside_an_empty_or_missing_store_is_refused(tmp_path: Path) -> None:
    a = tmp_path / "a.sqlite"
    with Store(a) as st:
        _put(st, "a1")
    _crash_after_commit(a, ["a2"])
    fresh = tmp_path / "fresh.sqlite"
    shutil.copyfile(f"{a}-wal", f"{fresh}-wal")
    with pytest.raises(StoreError, match="does not belong"):
        Store(fresh)
    assert not fresh.exists()


def test_a_clean_close_leaves_no_wal_and_records_it(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as st:
        _put(st, "k")
    wal = Path(f"{path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta WHERE key = 'clean'").fetchone() == ("1",)
    con.close()
