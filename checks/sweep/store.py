"""The sweep store: one SQLite file, one row per finished cell, keyed by the sha256 of the cell's configuration.

Crash safety comes from SQLite itself: the database runs in WAL mode with ``synchronous=FULL``, every cell is
written in its own transaction, and the key is the primary key with ``INSERT OR IGNORE``. A process killed at
any moment therefore loses at most the cells whose transaction had not committed, leaves a consistent file
(the next open replays or discards the WAL), and can never write a cell twice. Only the sweep's parent process
writes; workers only compute.

Tables:

- ``cells(key PRIMARY KEY, spec, config, coords, result, curves, elapsed, created)``: ``config`` and ``result``
  are canonical JSON (floats written exactly); ``curves`` is the replica-mean curve of every metric as
  little-endian float64 bytes (layout in ``result["curves"]``); ``elapsed`` and ``created`` are bookkeeping,
  not part of the result.
- ``specs(name, digest, source, created)``: the TOML text of every spec that wrote into the store, so that a
  report knows the grid's axes and target.
- ``meta(key PRIMARY KEY, value)``: the schema version.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["SCHEMA_VERSION", "CellRow", "Store", "decode_curves", "encode_curves"]

SCHEMA_VERSION = 1

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
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS cells_spec ON cells (spec);
"""


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


@dataclass(frozen=True)
class CellRow:
    """A stored cell, as read back."""

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

    ``readonly=True`` opens an existing store without taking write locks (for reports and monitoring).
    """

    def __init__(self, path: str | Path, *, readonly: bool = False, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if readonly:
            if not self.path.exists():
                raise ValueError(f"store {str(self.path)!r} does not exist")
            self._con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout)
            try:
                self._check_schema()
            except sqlite3.DatabaseError as exc:
                self._con.close()
                raise ValueError(f"{str(self.path)!r} is not a sweep store: {exc}") from None
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._con = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        try:
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=FULL")
            self._con.executescript(_SCHEMA)
            self._con.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            self._con.close()
            raise ValueError(f"{str(self.path)!r} is not a sweep store: {exc}") from None

    def _check_schema(self) -> None:
        row = self._con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None or int(row[0]) != SCHEMA_VERSION:
            found = None if row is None else row[0]
            raise sqlite3.DatabaseError(f"schema version {found}, expected {SCHEMA_VERSION}")

    # ---- context manager ----
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (committed cells are already on disk)."""
        self._con.close()

    # ---- writing ----
    def add_spec(self, name: str, source: str) -> None:
        """Record a spec's TOML text (idempotent)."""
        digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
        with self._transaction():
            self._con.execute(
                "INSERT OR IGNORE INTO specs (name, digest, source, created) VALUES (?, ?, ?, ?)",
                (name, digest, source, time.time()),
            )

    def put(self, key: str, *, spec: str, config: str, coords: str, result: str, curves: bytes, elapsed: float) -> bool:
        """Write one finished cell in its own transaction. Returns False if the key was already stored (the
        existing row is kept: a cell is a pure function of its key, so the two are the same)."""
        with self._transaction():
            cur = self._con.execute(
                "INSERT OR IGNORE INTO cells (key, spec, config, coords, result, curves, elapsed, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, spec, config, coords, result, sqlite3.Binary(curves), float(elapsed), time.time()),
            )
            return cur.rowcount == 1

    def _transaction(self) -> _Transaction:
        return _Transaction(self._con)

    # ---- reading ----
    def keys(self) -> set[str]:
        """Keys of all stored cells."""
        return {k for (k,) in self._con.execute("SELECT key FROM cells")}

    def has_keys(self, keys: Iterable[str]) -> set[str]:
        """The subset of ``keys`` that are stored."""
        wanted = list(keys)
        found: set[str] = set()
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            q = f"SELECT key FROM cells WHERE key IN ({','.join('?' * len(chunk))})"
            found.update(k for (k,) in self._con.execute(q, chunk))
        return found

    def count(self) -> int:
        """Number of stored cells."""
        return int(self._con.execute("SELECT COUNT(*) FROM cells").fetchone()[0])

    def rows(self, spec: str | None = None, *, curves: bool = True) -> Iterator[CellRow]:
        """Stored cells (all, or those written under one spec name), in key order; ``curves=False`` leaves the
        curve bytes out (empty), for readers that need only the summaries."""
        blob = "curves" if curves else "x''"
        q = f"SELECT key, spec, config, coords, result, {blob}, elapsed FROM cells"
        args: tuple = ()
        if spec is not None:
            q += " WHERE spec = ?"
            args = (spec,)
        for key, sp, config, coords, result, curves, elapsed in self._con.execute(q + " ORDER BY key", args):
            yield CellRow(key, sp, json.loads(config), json.loads(coords), json.loads(result), bytes(curves), float(elapsed))

    def raw(self) -> dict[str, tuple[str, str, bytes]]:
        """``{key: (config, result, curves)}`` exactly as stored (for comparing two stores bit for bit)."""
        q = "SELECT key, config, result, curves FROM cells"
        return {k: (c, r, bytes(b)) for k, c, r, b in self._con.execute(q)}

    def specs(self) -> list[tuple[str, str]]:
        """``(name, source)`` of the recorded specs, oldest first."""
        return [(n, s) for n, s in self._con.execute("SELECT name, source FROM specs ORDER BY created, name")]

    def integrity(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ("ok" for a sound file)."""
        return str(self._con.execute("PRAGMA integrity_check").fetchone()[0])


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self._con = con

    def __enter__(self) -> None:
        self._con.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._con.execute("ROLLBACK" if exc_type is not None else "COMMIT")
