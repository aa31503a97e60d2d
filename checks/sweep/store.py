"""The sweep store: one SQLite file, one row per finished cell, keyed by the sha256 of the cell's configuration.

Crash safety comes from SQLite itself: the database runs in WAL mode with ``synchronous=FULL``, every cell is
written in its own transaction, and the key is the primary key with ``INSERT OR IGNORE``. A process killed at
any moment therefore loses at most the cells whose transaction had not committed, leaves a consistent file
(the next open replays or discards the WAL), and can never write a cell twice. Only a sweep's parent process
writes; workers only compute.

Integrity: opening runs ``PRAGMA integrity_check`` (``quick_check`` plus the index-against-table
comparison, at the same cost here); a damaged file is refused with a message naming it. Every cell row
carries a sha256 ``checksum`` of its contents, checked on every read: a sweep deletes and recomputes a
cell that fails it (:meth:`Store.verify`), a report refuses the store.

One configuration per store: the store records the fingerprint of the spec that first wrote into it
(:meth:`Store.bind`) and refuses any other, so two configurations never pool.

Concurrent sweeps on one store claim each cell with a lease row before computing it (:meth:`Store.claim`);
a lease lapses when its sweep has stopped renewing it or, on the same host, its process is gone.

Tables:

- ``cells(key PRIMARY KEY, spec, config, coords, result, curves, elapsed, created, checksum)``: ``config``
  and ``result`` are canonical JSON (floats written exactly); ``curves`` is the replica-mean curve of every
  metric as little-endian float64 bytes (layout in ``result["curves"]``); ``elapsed`` and ``created`` are
  bookkeeping, not part of the result or the checksum.
- ``specs(name, digest, source, created)``: the TOML text of every spec that wrote into the store (``digest``
  is its sha256, checked on reading), so that a report knows the grid's axes and target.
- ``leases(key PRIMARY KEY, owner, host, pid, expires)``: cells being computed right now.
- ``meta(key PRIMARY KEY, value)``: the schema version, the configuration's fingerprint, and ``clean`` (1 after a
  clean close, 0 while open or after a crash).

A foreign ``-wal`` file (another store's, copied beside this one) is refused before SQLite would replay it
(:meth:`Store._refuse_foreign_wal`): a store closed cleanly has no pending log, so a non-empty ``-wal`` beside it,
with no process holding the store open or closing it (SQLite's own locks, probed with OFD locks), is not its own. A
crash-left ``-wal`` (``clean`` = 0) is replayed as before.
Not caught: a foreign ``-wal`` beside a store that itself crashed, or one copied in while a sweep holds the store open.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "SCHEMA_VERSION",
    "CellRow",
    "Store",
    "StoreError",
    "StoreLocked",
    "check_store_path",
    "decode_curves",
    "encode_curves",
    "row_checksum",
]

SCHEMA_VERSION = 2
#: seconds a lease lasts without renewal; a sweep renews its leases every LEASE_TTL / 4
LEASE_TTL = 120.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS specs (
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    source TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (name, digest)
);
CREATE TABLE IF NOT EXISTS cells (
    key TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    config TEXT NOT NULL,
    coords TEXT NOT NULL,
    result TEXT NOT NULL,
    curves BLOB NOT NULL,
    elapsed REAL NOT NULL,
    created REAL NOT NULL,
    checksum TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cells_spec ON cells (spec);
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires REAL NOT NULL
);
"""

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class StoreError(ValueError):
    """A store that cannot be used (missing, damaged, another configuration); the message names the file."""


class StoreLocked(StoreError):
    """The store is locked by another process (SQLite answered "locked" or "busy")."""


def encode_curves(curves: dict[str, np.ndarray]) -> tuple[dict, bytes]:
    """Pack ``{metric: 1-d float array}`` into (layout, bytes): metrics in sorted order, each as little-endian
    float64, concatenated. The layout ``{"metrics": [...], "lengths": [...]}`` goes into the result JSON."""
    names = sorted(curves)
    arrays = [np.ascontiguousarray(np.asarray(curves[m], dtype="<f8").ravel()) for m in names]
    layout = {"metrics": names, "lengths": [int(a.size) for a in arrays]}
    return layout, b"".join(a.tobytes() for a in arrays)


def decode_curves(layout: dict, blob: bytes) -> dict[str, np.ndarray]:
    """Inverse of :func:`encode_curves`."""
    flat = np.frombuffer(blob, dtype="<f8")
    out: dict[str, np.ndarray] = {}
    start = 0
    for name, length in zip(layout.get("metrics", []), layout.get("lengths", []), strict=True):
        out[name] = flat[start : start + length].astype(float)
        start += length
    if start != flat.size:
        raise ValueError(f"curve blob holds {flat.size} values, layout describes {start}")
    return out


def row_checksum(key: str, spec: str, config: str, coords: str, result: str, curves: bytes) -> str:
    """sha256 of a cell row's contents, each part length-prefixed (no two rows share the byte stream)."""
    h = hashlib.sha256()
    for part in (key.encode(), spec.encode(), config.encode(), coords.encode(), result.encode(), bytes(curves)):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def check_store_path(path: Path) -> None:
    """Raise an OSError naming ``path`` (or its first ancestor at fault) when no store can live there: a store is a
    regular file on disk (never SQLite's ``:memory:`` or a ``file:`` URI, which would keep nothing, nor a FIFO or a
    device, which would block or swallow the cells)."""
    text = str(path)
    if text == ":memory:" or text.startswith("file:"):
        raise OSError(22, "is an in-memory or URI database name; a sweep store must be a file on disk", text)
    if path.is_symlink() and not path.exists():
        raise OSError(40, "is a symbolic link that leads nowhere (dangling, or a loop)", text)
    if path.is_dir():
        raise IsADirectoryError(21, "is a folder, not a sweep store", str(path))
    if path.exists() and not path.is_file():
        raise OSError(22, "is not a regular file (a FIFO, device or socket); a sweep store must be a file", text)
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise NotADirectoryError(20, "is not a folder", str(parent))
            return


@dataclass(frozen=True)
class CellRow:
    """A stored cell, as read back (its checksum already verified)."""

    key: str
    spec: str
    config: dict
    coords: dict
    result: dict
    curves_blob: bytes
    elapsed: float

    def curves(self) -> dict[str, np.ndarray]:
        """The replica-mean curve of every recorded metric (row t = after t rounds)."""
        return decode_curves(self.result.get("curves", {}), self.curves_blob)


class Store:
    """A sweep store at ``path`` (created if missing). Use as a context manager, or call :meth:`close`.

    ``readonly=True`` opens an existing store without taking write locks (for reports and monitoring). Every
    SQLite failure surfaces as a :class:`StoreError` naming the file.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._heartbeat: _Heartbeat | None = None
        check_store_path(self.path)
        if readonly and not self.path.exists():
            raise StoreError(f"store {str(self.path)!r} does not exist")
        if not readonly:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._refuse_foreign_wal()
        try:
            if readonly:
                # on read-only media SQLite cannot create the WAL index beside a WAL-mode file: read it as immutable
                # (a store closed cleanly holds every cell in its main file, checkpointed at close)
                writable = os.access(self.path.resolve().parent, os.W_OK)
                mode = "mode=ro" if writable else "mode=ro&immutable=1"
                self._con = sqlite3.connect(f"{self.path.resolve().as_uri()}?{mode}", uri=True, timeout=timeout)
            else:
                self._con = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {str(self.path)!r}: {exc}") from None
        try:
            self._initialise(readonly, timeout)
        except BaseException:
            self._con.close()
            raise

    def _initialise(self, readonly: bool, timeout: float) -> None:
        """WAL mode, the schema on a fresh file (tables and schema row in one transaction), then the checks. SQLite can
        answer "locked" at once, without its busy timeout, while another process switches the same fresh file to WAL;
        such an answer is retried (with a growing pause) until ``timeout`` has passed, then reported as locked."""
        deadline = time.monotonic() + timeout
        pause = 0.01
        while True:
            try:
                with self._guard():
                    if not readonly:
                        self._con.execute("PRAGMA journal_mode=WAL")
                        self._con.execute("PRAGMA synchronous=FULL")
                        fresh = self._con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
                        if fresh:  # one transaction: another process never sees the tables without the schema row
                            self._con.executescript(f"BEGIN IMMEDIATE; {_SCHEMA}; INSERT OR IGNORE INTO meta (key, value) "
                                                    f"VALUES ('schema', '{int(SCHEMA_VERSION)}'); COMMIT;")
                    self._check_schema()
                    self._check_integrity()
                    if not readonly:
                        self._mark_clean("0")
                return
            except StoreError as exc:
                if self._con.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._con.execute("ROLLBACK")
                if not isinstance(exc, StoreLocked) or time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(2 * pause, 0.5)

    # ---- opening ----
    def _refuse_foreign_wal(self) -> None:
        """A StoreError naming the ``-wal`` file beside this store when it cannot be this store's own, before SQLite
        opens the store (SQLite replays any well-formed WAL it finds beside a database, another store's included, and
        the integrity check and the row checksums then pass). A store's own WAL holds pages only while the store is
        open or after a crash: a clean close folds it into the main file, truncates it and records ``clean`` = 1 in the
        main file, and every writer records 0 when it opens and with every cell. So a non-empty WAL beside a store
        whose main file is missing, empty, or records a clean close, and that no process has open or is closing
        (:func:`_quiescent`, held while this is decided), belongs to another store."""
        wal = Path(f"{self.path}-wal")
        if not _nonempty(wal):  # no log beside the store: nothing to replay
            return
        with _quiescent(self.path) as alone:
            # a live sweep's WAL (its pages not folded in yet), or one SQLite is deleting at a close: SQLite's to judge
            if not alone or not _nonempty(wal):
                return
            try:
                main_size = self.path.stat().st_size
            except OSError:
                main_size = 0
            clean = "1" if main_size == 0 else _recorded_clean(self.path)
        if clean == "1":
            what = "no store" if main_size == 0 else "a store that was closed cleanly"
            raise StoreError(f"{str(wal)!r} does not belong to store {str(self.path)!r} (it lies beside {what}, which has no "
                             "pending log): it comes from another store; move it aside")

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn any SQLite failure into a StoreError naming this file."""
        try:
            yield
        except StoreError:
            raise
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                raise StoreLocked(f"store {str(self.path)!r} is locked by another process: {exc}") from None
            if "full" in text:
                raise StoreError(f"store {str(self.path)!r}: the disk is full ({exc})") from None
            if "readonly" in text or "read-only" in text:
                raise StoreError(f"store {str(self.path)!r} cannot be written (read-only file or medium: {exc})") from None
            if "disk I/O" in text or "unable to open" in text:
                raise StoreError(f"store {str(self.path)!r} cannot be read or written ({exc}); check the disk and permissions") from None
            raise StoreError(f"store {str(self.path)!r} is damaged or unreadable: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{str(self.path)!r} is not a sweep store, or is damaged: {exc}") from None

    def _has_table(self, name: str) -> bool:
        return self._con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None

    def _check_schema(self) -> None:
        if not self._has_table("meta"):
            raise StoreError(f"{str(self.path)!r} is not a sweep store (no meta table)")
        row = self._con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        found = None if row is None else row[0]
        if found == "1":
            raise StoreError(
                f"store {str(self.path)!r} was written by an older fedbounds (schema 1, no checksums); "
                "sweep into a new store (the default store name has changed)"
            )
        if found != str(SCHEMA_VERSION):
            raise StoreError(f"{str(self.path)!r} is not a sweep store: schema version {found}, expected {SCHEMA_VERSION}")

    def _check_integrity(self) -> None:
        problems = [str(r[0]) for r in self._con.execute("PRAGMA integrity_check(5)")]
        if problems != ["ok"]:
            raise StoreError(
                f"store {str(self.path)!r} is damaged (SQLite integrity check: {problems[0]}); "
                "move it aside and rerun the sweep to recompute its cells"
            )

    # ---- context manager ----
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release this store's leases, fold the WAL into the main file and close the connection. After a clean
        close the ``.sqlite`` file alone holds every cell (copying it is enough); after a crash the newest cells are
        in the ``-wal`` file beside it until the next open replays them."""
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
            with contextlib.suppress(sqlite3.Error):
                self._con.execute("DELETE FROM leases WHERE owner = ?", (self.owner,))
        if not self.readonly:
            with contextlib.suppress(sqlite3.Error):  # busy while another sweep writes: it checkpoints at its close
                busy = self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                if not busy:  # every page folded in: record the clean close, and fold that in too
                    self._mark_clean("1")
                    self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._con.close()

    def _mark_clean(self, value: str) -> None:
        """Record in the store whether it was closed cleanly (``1``: its WAL is empty) or is open or crashed (``0``),
        and fold that into the main file (:meth:`_refuse_foreign_wal` reads it there)."""
        with self._guard(), self._transaction():
            self._con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('clean', ?)", (value,))
        with contextlib.suppress(sqlite3.Error):
            self._con.execute("PRAGMA wal_checkpoint(PASSIVE)")

    # ---- the configuration ----
    def fingerprint(self) -> str | None:
        """The fingerprint of the configuration this store holds (None while it holds none)."""
        with self._guard():
            row = self._con.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None:
            return None
        if not _HEX64.match(str(row[0])):
            raise StoreError(f"store {str(self.path)!r} is damaged: its configuration fingerprint is unreadable")
        return str(row[0])

    def require(self, fingerprint: str, name: str) -> str | None:
        """A StoreError if the store holds a configuration other than ``fingerprint`` (spec ``name``); returns
        the one it holds (None for none)."""
        held = self.fingerprint()
        if held is not None and held != fingerprint:
            raise StoreError(
                f"store {str(self.path)!r} holds another configuration (fingerprint {held[:12]}); spec {name!r} is "
                f"{fingerprint[:12]}: give it its own --store (the default store name includes the fingerprint)"
            )
        return held

    def bind(self, fingerprint: str, name: str) -> None:
        """Tie the store to one configuration; a StoreError if it already holds another."""
        if self.require(fingerprint, name) is None:
            with self._guard(), self._transaction():
                if self._con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]:
                    raise StoreError(f"store {str(self.path)!r} holds cells but no configuration fingerprint")
                self._con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fingerprint', ?)", (fingerprint,))

    # ---- writing ----
    def add_spec(self, name: str, source: str) -> None:
        """Record a spec's TOML text (idempotent)."""
        digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
        with self._guard(), self._transaction():
            self._con.execute(
                "INSERT OR IGNORE INTO specs (name, digest, source, created) VALUES (?, ?, ?, ?)",
                (name, digest, source, time.time()),
            )

    def put(self, key: str, *, spec: str, config: str, coords: str, result: str, curves: bytes, elapsed: float) -> bool:
        """Write one finished cell (and drop its lease) in one transaction. Returns False if the key was already
        stored (the existing row is kept: a cell is a pure function of its key, so the two are the same)."""
        checksum = row_checksum(key, spec, config, coords, result, curves)
        with self._guard(), self._transaction():
            cur = self._con.execute(
                "INSERT OR IGNORE INTO cells (key, spec, config, coords, result, curves, elapsed, created, checksum) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, spec, config, coords, result, sqlite3.Binary(curves), float(elapsed), time.time(), checksum),
            )
            self._con.execute("DELETE FROM leases WHERE key = ?", (key,))
            # not clean until closed (another sweep on this store may have closed it cleanly meanwhile)
            self._con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('clean', '0')")
            added = cur.rowcount == 1
        # fold the WAL into the main file after every cell (a cell takes seconds, a checkpoint milliseconds): after a
        # crash the .sqlite alone then holds every stored cell, and a copy of it loses none
        with contextlib.suppress(sqlite3.Error):
            self._con.execute("PRAGMA wal_checkpoint(PASSIVE)")
        return added

    def verify(self, *, repair: bool = False) -> int:
        """Check every cell row against its checksum. Returns how many fail; with ``repair`` (a writable
        store) they are deleted, so that a sweep computes them again."""
        q = "SELECT key, spec, config, coords, result, curves, checksum FROM cells NOT INDEXED"
        with self._guard():
            bad = [row[0] for row in self._con.execute(q) if not _row_ok(*row)]
            if bad and repair:
                with self._transaction():
                    self._con.executemany("DELETE FROM cells WHERE key = ?", [(k,) for k in bad])
        return len(bad)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._con)

    # ---- leases ----
    def claim(self, key: str) -> str:
        """Claim ``key`` for this store's owner: "claimed", "stored" (already done) or "busy" (another live
        sweep holds it). Starts renewing this owner's leases on the first claim."""
        if self._heartbeat is None:
            self._heartbeat = _Heartbeat(self.path, self.owner)
        host, now = socket.gethostname(), time.time()
        with self._guard(), self._transaction():
            if self._con.execute("SELECT 1 FROM cells WHERE key = ?", (key,)).fetchone():
                return "stored"
            row = self._con.execute("SELECT owner, host, pid, expires FROM leases WHERE key = ?", (key,)).fetchone()
            if row is not None and row[0] != self.owner and not _lapsed(row[1], int(row[2]), float(row[3]), host, now):
                return "busy"
            self._con.execute(
                "INSERT OR REPLACE INTO leases (key, owner, host, pid, expires) VALUES (?, ?, ?, ?, ?)",
                (key, self.owner, host, os.getpid(), now + LEASE_TTL),
            )
        return "claimed"

    def release(self, key: str) -> None:
        """Drop this owner's lease on ``key`` (a cell that failed: another sweep may try it)."""
        with self._guard():
            self._con.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, self.owner))

    # ---- reading ----
    def keys(self) -> set[str]:
        """Keys of the stored cells that pass their checksum (a damaged cell is never counted as done)."""
        q = "SELECT key, spec, config, coords, result, curves, checksum FROM cells NOT INDEXED"
        with self._guard():
            return {row[0] for row in self._con.execute(q) if _row_ok(*row)}

    def has_keys(self, keys: Iterable[str]) -> set[str]:
        """The subset of ``keys`` that are stored."""
        wanted = set(keys)
        return wanted & self.keys()

    def count(self) -> int:
        """Number of stored cells."""
        with self._guard():
            return int(self._con.execute("SELECT COUNT(*) FROM cells").fetchone()[0])

    def rows(self, spec: str | None = None, *, curves: bool = True) -> Iterator[CellRow]:
        """Stored cells (all, or those written under one spec name), in key order, each checked against its
        checksum (a StoreError on the first that fails). ``curves=False`` hands out empty curve bytes."""
        q = "SELECT key, spec, config, coords, result, curves, checksum, elapsed FROM cells"
        args: tuple = ()
        if spec is not None:
            q += " WHERE spec = ?"
            args = (spec,)
        with self._guard():
            for key, sp, config, coords, result, blob, checksum, elapsed in self._con.execute(q + " ORDER BY key", args):
                if not _row_ok(key, sp, config, coords, result, blob, checksum):
                    raise StoreError(
                        f"store {str(self.path)!r}: cell {str(key)[:12]} fails its checksum (damaged); rerun "
                        f"`fedbounds sweep SPEC --store {self.path}` to recompute it"
                    )
                body = bytes(blob) if curves else b""
                yield CellRow(key, sp, json.loads(config), json.loads(coords), json.loads(result), body, float(elapsed))

    def raw(self) -> dict[str, tuple[str, str, bytes]]:
        """``{key: (config, result, curves)}`` exactly as stored (for comparing two stores bit for bit)."""
        q = "SELECT key, config, result, curves FROM cells"
        with self._guard():
            return {k: (c, r, bytes(b)) for k, c, r, b in self._con.execute(q)}

    def specs(self) -> list[tuple[str, str]]:
        """``(name, source)`` of the recorded specs, oldest first; a StoreError if a text fails its digest."""
        out = []
        with self._guard():
            for name, digest, source in self._con.execute("SELECT name, digest, source FROM specs ORDER BY created, name"):
                if hashlib.sha256(str(source).encode("utf-8")).hexdigest() != digest:
                    raise StoreError(f"store {str(self.path)!r} is damaged: the recorded text of spec {name!r} fails its digest")
                out.append((name, source))
        return out

    def integrity(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ("ok" for a sound file)."""
        with self._guard():
            return str(self._con.execute("PRAGMA integrity_check").fetchone()[0])


#: SQLite's "dead man switch" byte of a WAL index (-shm) file: every connection holds a read lock on it while open
_SHM_DMS_BYTE = 128
#: SQLite's lock bytes in the main file (PENDING, RESERVED, then 510 SHARED bytes): a connection that closes the
#: store holds a write lock there (EXCLUSIVE) while it folds the WAL in and deletes it
_DB_LOCK_FIRST, _DB_LOCK_SIZE = 0x40000000, 512


def _nonempty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _ofd_lock(fd: int, kind: int, start: int, length: int) -> bool:
    """An open-file-description lock (it goes with ``fd``, never with this process's SQLite connections' locks)."""
    import fcntl
    import struct

    try:  # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks)
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", kind, os.SEEK_SET, start, length, 0))
    except OSError:
        return False
    return True


@contextlib.contextmanager
def _quiescent(path: Path) -> Iterator[bool]:
    """Yields whether no connection (in any process, this one included) has the store at ``path`` open or is closing
    it, and keeps it so while the block runs: a write lock on the ``-shm`` file's DMS byte (every open connection holds
    a read lock there; a connection starting meanwhile waits, and the store's open retries) and a read lock on the
    main file's lock bytes (a closing connection holds them exclusively while it deletes the WAL). Yields False when
    it cannot be told (no OFD locks)."""
    fds: list[int] = []
    try:
        yield _lock_both(path, fds)
    finally:
        for fd in fds:
            os.close(fd)


def _lock_both(path: Path, fds: list[int]) -> bool:
    """:func:`_quiescent`'s two locks (their descriptors appended to ``fds``); whether both were taken."""
    import fcntl

    if not hasattr(fcntl, "F_OFD_SETLK"):  # pragma: no cover - not Linux
        return False
    for name, kind, start, length in ((str(path), fcntl.F_RDLCK, _DB_LOCK_FIRST, _DB_LOCK_SIZE),
                                      (f"{path}-shm", fcntl.F_WRLCK, _SHM_DMS_BYTE, 1)):
        try:
            fd = os.open(name, os.O_RDWR if kind == fcntl.F_WRLCK else os.O_RDONLY)
        except FileNotFoundError:  # no such file: nobody holds a lock on it
            continue
        except OSError:
            return False
        fds.append(fd)
        if not _ofd_lock(fd, kind, start, length):
            return False
    return True


def _recorded_clean(path: Path) -> str | None:
    """The ``clean`` value recorded in the main file at ``path``, read without its WAL (SQLite's ``immutable``
    mode neither reads nor replays it); None when the file records none (a store from before the record) or cannot
    be read (the normal open then reports what is wrong with it)."""
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return None
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'clean'").fetchone()
    except sqlite3.Error:
        return None
    finally:
        con.close()
    return None if row is None else str(row[0])


def _row_ok(key: object, spec: object, config: object, coords: object, result: object, curves: object, checksum: object) -> bool:
    if not all(isinstance(v, str) for v in (key, spec, config, coords, result, checksum)) or not isinstance(curves, bytes):
        return False
    return row_checksum(key, spec, config, coords, result, curves) == checksum  # type: ignore[arg-type]


def _lapsed(host: str, pid: int, expires: float, this_host: str, now: float) -> bool:
    """A lease lapses when not renewed in time, or when its process (on this host) is gone."""
    if expires < now:
        return True
    if host != this_host:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class _Heartbeat:
    """Renews an owner's leases every LEASE_TTL / 4 seconds on its own connection, until stopped."""

    def __init__(self, path: Path, owner: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(path, owner), name="sweep-lease-heartbeat", daemon=True)
        self._thread.start()

    def _run(self, path: Path, owner: str) -> None:
        while not self._stop.wait(LEASE_TTL / 4):
            with contextlib.suppress(sqlite3.Error):
                con = sqlite3.connect(path, timeout=30, isolation_level=None)
                try:
                    con.execute("UPDATE leases SET expires = ? WHERE owner = ?", (time.time() + LEASE_TTL, owner))
                finally:
                    con.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self._con = con

    def __enter__(self) -> None:
        self._con.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._con.execute("ROLLBACK" if exc_type is not None else "COMMIT")
