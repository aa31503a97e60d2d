"""Committed evidence files: a schema version and a content hash, checked on every load.

Each JSON evidence file under ``theory/<paper>/`` (the PEP grid, the C_0 window, the stochastic grid, its speedup
table and replay, Theorem 8's recovered-C_0 and speedup tables) is the project's own data, written by a generator
and never edited by hand. So that a truncated, emptied or hand-edited file is refused rather than read as fewer rows
(or as nothing), each file's top-level object ends with two fields (README, "The error contract"):

- ``schema_version``: :data:`SCHEMA_VERSION`;
- ``content_sha256``: the SHA-256 of the file's canonical content without this field (:func:`content_hash`).

:func:`load` checks both, refuses NaN and infinity (a number the JSON standard does not have) and a missing file,
and names the file in its :class:`EvidenceError`. :func:`load_or_record` is the tolerant form used where modules read
evidence at import: the error is recorded in :data:`DAMAGED` and an empty table is returned, so that ``fedbounds
check`` can report the claims resting on that file as not checked (exit status 3) instead of failing to start.

Every generator stamps what it writes (:func:`stamp_text`); ``python -m fedbounds.theory.core.evidence`` (re)stamps
every committed file after an edit made by a generator run elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["DAMAGED", "FILES", "SCHEMA_VERSION", "EvidenceError", "content_hash", "damaged", "load", "load_or_record",
           "main", "stamp_text", "survey"]

#: the version of the evidence files' layout; a loader refuses any other
SCHEMA_VERSION = 1
_HASH = "content_sha256"
_SCHEMA = "schema_version"
_THEORY = Path(__file__).resolve().parents[1]
#: every committed evidence file (the ones :func:`main` stamps)
FILES: tuple[Path, ...] = tuple(_THEORY / "fednmap" / name for name in (
    "pep_evidence.json", "pep_c0_window.json", "spep_grid.json", "spep_speedup.json", "spep_replay.json",
    "theorem8_c0.json", "theorem8_speedup.json", "theorem8_lower.json",
    "theorem8_families.json", "theorem8_front_families.json"))
#: file -> why it was refused, for every evidence file a tolerant load (:func:`load_or_record`) could not use
DAMAGED: dict[str, str] = {}


class EvidenceError(RuntimeError):
    """A committed evidence file is missing or damaged; the message names the file and what is wrong."""


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number the evidence may hold")


def _canonical(data: dict[str, Any]) -> bytes:
    body = {k: v for k, v in data.items() if k != _HASH}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def content_hash(data: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``data`` without its ``content_sha256`` field, as sorted compact ASCII JSON."""
    return hashlib.sha256(_canonical(data)).hexdigest()


def _finite(obj: Any, where: str = "$") -> None:
    if isinstance(obj, float) and not math.isfinite(obj):
        raise ValueError(f"{where} is {obj}")
    if isinstance(obj, dict):
        for k, v in obj.items():
            _finite(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _finite(v, f"{where}[{i}]")


def load(path: Path | str) -> dict[str, Any]:
    """The evidence in ``path``, after checking its schema version and content hash (:class:`EvidenceError` if not)."""
    path = Path(path)
    fix = "restore it from the repository (git checkout) or regenerate it"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvidenceError(f"{path}: committed evidence is missing; {fix}") from None
    except (OSError, UnicodeError) as exc:
        raise EvidenceError(f"{path}: committed evidence cannot be read ({exc}); {fix}") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise EvidenceError(f"{path}: committed evidence is damaged (not JSON: {exc}); {fix}") from None
    if not isinstance(data, dict):
        raise EvidenceError(f"{path}: committed evidence is damaged (a JSON {type(data).__name__}, not an object); {fix}")
    if data.get(_SCHEMA) != SCHEMA_VERSION:
        raise EvidenceError(f"{path}: committed evidence has schema_version {data.get(_SCHEMA)!r}, expected {SCHEMA_VERSION}; {fix}")
    if data.get(_HASH) != content_hash(data):
        raise EvidenceError(f"{path}: committed evidence is damaged (its content does not match its content_sha256); {fix}")
    return data


def load_or_record(path: Path | str, empty: dict[str, Any]) -> dict[str, Any]:
    """:func:`load`, or ``empty`` with the reason recorded in :data:`DAMAGED` (read at import: the claims resting on the
    file are then reported as not checked, never as holding on no rows)."""
    try:
        return load(path)
    except EvidenceError as exc:
        DAMAGED[str(path)] = str(exc)
        return empty


def damaged() -> dict[str, str]:
    """file -> reason, for each evidence file a tolerant load refused so far."""
    return dict(DAMAGED)


def survey() -> dict[str, str]:
    """Load every committed evidence file (:data:`FILES`) and return file -> reason for each one refused."""
    for path in FILES:
        load_or_record(path, {})
    return damaged()


_STAMP = re.compile(r',\s*"schema_version":\s*[^,]*,\s*"content_sha256":\s*"[^"]*"\s*}\s*$')


def stamp_text(text: str) -> str:
    """The JSON object in ``text`` with its ``schema_version`` and ``content_sha256`` set (as its last two fields,
    the rest of the text kept as written). Refuses NaN and infinity (ValueError)."""
    data = json.loads(text, parse_constant=_refuse_constant)
    if not isinstance(data, dict):
        raise ValueError("evidence must be a JSON object")
    _finite(data)
    data.pop(_HASH, None)
    data.pop(_SCHEMA, None)
    body = _STAMP.sub("\n}", text.rstrip())
    if json.loads(body) != data:  # the fields elsewhere (a generator that re-read a stamped file): write it afresh
        body = json.dumps(data, indent=1, sort_keys=list(data) == sorted(data), allow_nan=False)
    data[_SCHEMA] = SCHEMA_VERSION
    digest = content_hash(data)
    head = body.rstrip()[:-1].rstrip()
    sep = "" if head.endswith("{") else ","
    return f'{head}{sep}\n "{_SCHEMA}": {SCHEMA_VERSION},\n "{_HASH}": "{digest}"\n}}\n'


def main(argv: list[str] | None = None) -> int:
    """(Re)stamp every committed evidence file (or the files named), in place; 0, or 2 naming a file it cannot stamp."""
    paths = [Path(a) for a in (sys.argv[1:] if argv is None else argv)] or list(FILES)
    for path in paths:
        try:
            new = stamp_text(path.read_text(encoding="utf-8"))
            tmp = path.with_name(path.name + ".stamp.tmp")
            tmp.write_text(new, encoding="utf-8")
            tmp.replace(path)
        except (OSError, ValueError, UnicodeError) as exc:
            print(f"error: cannot stamp {path}: {exc}", file=sys.stderr)
            return 2
        print(f"stamped {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
