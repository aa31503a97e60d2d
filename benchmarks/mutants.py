"""Mutation harness (design.md, principle 3): do the tests notice when a formula constant or an update rule changes?

What it mutates (one change per mutant, written over just that source span, so formatting and comments elsewhere
are untouched; located with :mod:`ast`, offsets from the nodes' line/column positions):

* ``constants`` (the sympy formula modules): every int/float literal is multiplied by 2 and divided by 2. An odd
  int divided by 2 becomes ``sp.Rational(k, 2)`` when the module imports sympy (no float enters a formula), else a
  float literal. ``sp.Rational(p, q)`` is one site with two mutants: ``Rational(2p, q)`` (x2) and
  ``Rational(p, 2q)`` (/2). Exponents count as formula numbers (``L**2`` -> ``L**4`` and ``L**1``).
  Not mutated: 0 (x2 and /2 leave it unchanged), bools, strings/docstrings, default arguments, decorators,
  annotations, subscript indices (``x[0]``), f-strings, ``raise``/``assert`` statements, and keyword arguments
  named in ``NON_FORMULA_KEYWORDS`` (``axis=1``, ``evaluate=False``...).
* ``operators`` (the algorithms' update rules, restricted to the functions named in the target's ``scope``):
  binary ``+ <-> -``, ``* <-> /``, ``** -> *``; augmented ``+= <-> -=``, ``*= <-> /=``, ``**= -> *=``; and the
  numpy calls ``np.add <-> np.subtract``, ``np.multiply <-> np.divide`` (the in-place update lines use them).
  Not mutated: string concatenation, operators inside subscript indices, f-strings, ``raise``/``assert``.

A mutant that does not parse, or parses to the same AST as the original, is dropped. Mutant ids are stable
(``path:line:col:kind:replacement``; line and col 1-based, col in characters) and do not depend on which
mutants were selected.

How a mutant is judged. The mutated file is written IN PLACE (the package is installed editable), the target's test
selections are run one after another with ``python -m pytest -x -q -p no:cacheprovider`` (cheapest first), stopping
at the first that fails: killed (pytest exit 1 or 2: a failing test or a module that no longer imports), timeout
(the selection ran past the per-run timeout: detected, counted as killed), survived (every selection passed), error
(the run could not judge it). Each selection is first run once on the unmutated tree, to the end (the baseline,
lazily, when a mutant first needs it): tests that fail there are deselected from that selection's mutant runs (with
a warning naming them), and a selection that fails without naming failures (collection error, timeout) is skipped
with a warning. Children run with ``PYTHONDONTWRITEBYTECODE=1`` and every mutant gets a fresh mtime, so no stale
bytecode is ever imported; the original bytes and mtime are restored after each mutant.

Safety. The original is restored in ``finally`` blocks; SIGINT/SIGTERM/SIGHUP stop the run and restore first
(signals are blocked while a file is being written or restored). Before writing a mutant, the original is
copied to ``<file>.mutants-orig`` (with ``<file>.mutants-orig.json``: the sha256 of the mutant written); at
start-up a backup left by a crashed run is restored (and reported) if the file still holds that mutant, and the
run refuses to start if the file was edited since. A lock file (``benchmarks/.mutants.lock``) keeps two runs
apart (a lock whose process is gone is taken over, with a note). A file that changes between the harness's read
and its write is never overwritten: its remaining mutants are skipped. A file edited while a mutant is in place
is left alone (the backup is kept) and the run stops (exit 3). Note that while a mutant is in place, other test
runs in the same tree see it too.

Targets are the declarative table ``TARGETS`` below: a file glob (relative to the repository root), what to
mutate, an optional ``scope`` (qualified function names, fnmatch patterns), and the test selections, cheapest
first (each a pytest argument string). Edit the table when files or tests move.

Survivors may be justified in ``benchmarks/mutants_justified.toml`` (``"<mutant id>" = "one-line reason"``).
The summary prints ``killed X / total Y (Z%), justified J, unjustified U``, where total counts judged mutants
(killed, timed out or survived) and X includes the timeouts.

Exit status: 0 when every survivor is justified, 1 when a survivor is unjustified or a mutant could not be
judged (error), 2 on bad arguments or a bad table/justification file (one line on stderr), 3 when the run had to
stop (a file edited concurrently, a crashed run's backup that cannot be restored, the lock held), 130/143 when
interrupted (after restoring).

Usage (from the repository root; use the project's interpreter, it runs the tests with ``sys.executable``):
    .venv/bin/python benchmarks/mutants.py --list [--files GLOB...]
    .venv/bin/python benchmarks/mutants.py [--files GLOB...] [--sample K --seed S] [--limit N] [--timeout SECONDS]
        [--jobs 1] [--json OUT] [--survivors-only] [--justified PATH]

``--sample K --seed S`` draws a seeded random subset of K mutants (then ``--limit N`` keeps the first N, in file
order). ``--jobs`` accepts only 1: mutants are written in place, one at a time.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import contextlib
import fnmatch
import hashlib
import io
import json
import os
import random
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import tokenize
import tomllib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

# ---------------------------------------------------------------------------------------------------------------
# The target table: which files, what to mutate, and which tests judge them (cheapest selection first).
# "files": glob relative to the repository root; "mutate": "constants" and/or "operators";
# "scope" (optional): qualified names of the functions whose code is mutated (fnmatch patterns; default: the
# whole module); "tests": pytest argument strings, run in order until one fails.
# ---------------------------------------------------------------------------------------------------------------

THEORY_TESTS = ["tests/theory"]
CHECKS_TESTS = ["tests/checks"]
NOTEBOOK_TESTS = ["tests/notebooks"]

TARGETS: list[dict[str, Any]] = [
    {
        "files": "checks/runtime/address_space.py",
        "mutate": ["constants", "operators"],
        "tests": ["tests/checks/test_faults_round3.py -k address_space", "tests/checks/pep/test_verify_store.py -k address_space"],
    },
    {
        "files": "theory/core/printing.py",
        "mutate": ["constants", "operators"],
        "scope": ["_Text._print_Float"],
        "tests": ["tests/theory/test_printing.py"],
    },
    {
        "files": "theory/fednmap/formulas.py",
        "mutate": ["constants"],
        "tests": [*THEORY_TESTS, *CHECKS_TESTS, *NOTEBOOK_TESTS],
    },
    {
        "files": "theory/ds_fedproxgrad/formulas.py",
        "mutate": ["constants"],
        "tests": [*THEORY_TESTS, *CHECKS_TESTS, *NOTEBOOK_TESTS],
    },
    {
        "files": "algorithms/fednmap.py",
        "mutate": ["operators"],
        "scope": ["FedNMap.step"],
        "tests": ["tests/algorithms/test_fednmap.py", "tests/algorithms", *CHECKS_TESTS, *NOTEBOOK_TESTS],
    },
    {
        "files": "algorithms/ds_fedproxgrad.py",
        "mutate": ["operators"],
        "scope": [
            "DSFedProxGrad.step",
            "*Schedule.__call__",
            "_gd_prox",
            "ExactProx.solve",
            "GDCertified.solve",
            "InjectError.solve",
            "*Estimator.server_step",
        ],
        "tests": ["tests/algorithms/test_ds_fedproxgrad.py", "tests/algorithms", *CHECKS_TESTS, *NOTEBOOK_TESTS],
    },
    {
        "files": "checks/pep/symmetric.py",
        "mutate": ["operators", "constants"],
        "scope": ["_Map.*", "solve_symmetric", "block_sizes"],
        "tests": ["tests/checks/fednmap/pep/test_encoding.py -k 'symmetric or 333_in_block'"],
    },
    {
        "files": "checks/fednmap/pep/replay.py",
        "mutate": ["operators", "constants"],
        "scope": ["SmoothInterpolant.*", "replay_lyapunov", "replay_evaluations", "replay_printed"],
        "tests": ["tests/checks/fednmap/pep/test_encoding.py -k 'replay or interpolant'",
                  "tests/checks/fednmap/pep/test_replay_printed.py"],
    },
    {
        "files": "checks/pep/verify_certificate.py",
        "mutate": ["operators", "constants"],
        "tests": ["tests/checks/pep/test_verify_store.py", "tests/checks/pep/test_verify_certificate.py",
                  "tests/checks/pep/test_certificate.py"],
    },
    {
        "files": "checks/pep/certificate.py",
        "mutate": ["operators", "constants"],
        "scope": ["rational", "_rational", "_encode", "_decode", "rebuild", "check_problem", "check_stored", "Row.key", "attach"],
        "tests": ["tests/checks/pep/test_certificate_reading.py", "tests/checks/pep/test_verify_certificate.py",
                  "tests/checks/pep/test_certificate.py"],
    },
    {
        "files": "checks/fednmap/spep/reduced.py",
        "mutate": ["operators", "constants"],
        "scope": ["_rows", "_smooth", "_convex", "_Layout.*", "mean_over_clients", "other", "dot", "lin", "_forms", "_many",
                  "_per_client", "_direction_of"],  # builder only
        "tests": ["tests/checks/fednmap/spep/test_reduced.py -k 'pepit or size or difference or inf or tilts or free_start or "
                  "normal_frame or quad_grid'"],
    },
    {
        "files": "checks/pep/lower.py",
        "mutate": ["operators", "constants"],
        "tests": ["tests/checks/pep/test_solve.py"],
    },
    {
        "files": "checks/pep/solve.py",
        "mutate": ["operators", "constants"],
        "scope": ["verdict", "proof_decides", "certificate_record", "pep_verdict"],
        "tests": ["tests/checks/pep/test_verdict_tolerances.py", "tests/checks/pep/test_claim_bound.py",
                  "tests/checks/pep/test_solve.py"],
    },
]

#: keyword arguments whose numeric values are settings, not formula numbers
NON_FORMULA_KEYWORDS = frozenset({"axis", "dtype", "out", "keepdims", "evaluate", "ndmin", "maxlen", "stacklevel"})

ROOT = Path(__file__).resolve().parents[1]
LOCK_NAME = "benchmarks/.mutants.lock"
JUSTIFIED_DEFAULT = "benchmarks/mutants_justified.toml"
BACKUP_SUFFIX = ".mutants-orig"
SIDECAR_SUFFIX = ".mutants-orig.json"
PYTEST_FLAGS = ("-q", "-p", "no:cacheprovider", "-rfE")  # plus -x for mutants (the baseline runs to the end)

CONST, OP, CALL = "const", "op", "call"
MUTATE_GROUPS = {"constants": (CONST,), "operators": (OP, CALL)}

BINOP_SWAP: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: ("*", "/"),
    ast.Div: ("/", "*"),
    ast.Pow: ("**", "*"),
}
AUGOP_SWAP: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: ("+=", "-="),
    ast.Sub: ("-=", "+="),
    ast.Mult: ("*=", "/="),
    ast.Div: ("/=", "*="),
    ast.Pow: ("**=", "*="),
}
UFUNC_SWAP = {"add": "subtract", "subtract": "add", "multiply": "divide", "divide": "multiply", "true_divide": "multiply"}
_OP_TOKENS = sorted(
    ("**=", "//=", ">>=", "<<=", "**", "//", "+=", "-=", "*=", "/=", "%=", "@=", "&=", "|=", "^=", ">>", "<<", "+", "-", "*", "/",
     "%", "@", "&", "|", "^"),
    key=len,
    reverse=True,
)


class UsageError(Exception):
    """Bad arguments, table or justification file: exit 2 with one line."""


class StopRun(Exception):
    """The run cannot continue safely (lock held, unrecoverable backup, concurrent edit): exit 3."""


class FileChanged(Exception):
    """The target changed since the harness read it: it is not overwritten."""


class Interrupted(BaseException):
    """SIGINT/SIGTERM/SIGHUP arrived; raised in the main thread so every ``finally`` restores."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# ---------------------------------------------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    files: str
    kinds: tuple[str, ...]
    tests: tuple[str, ...]
    scope: tuple[str, ...] | None = None


def parse_targets(table: Sequence[Mapping[str, Any]]) -> list[Target]:
    targets = []
    for i, entry in enumerate(table):
        unknown = set(entry) - {"files", "mutate", "tests", "scope"}
        if unknown:
            raise UsageError(f"TARGETS[{i}]: unknown keys {sorted(unknown)}")
        files, mutate, tests = entry.get("files"), entry.get("mutate"), entry.get("tests")
        if not isinstance(files, str) or not files:
            raise UsageError(f"TARGETS[{i}]: 'files' must be a glob string")
        if isinstance(mutate, str):
            mutate = [mutate]
        if not mutate or any(m not in MUTATE_GROUPS for m in mutate):
            raise UsageError(f"TARGETS[{i}] ({files}): 'mutate' must name some of {sorted(MUTATE_GROUPS)}")
        if not tests or isinstance(tests, str) or not all(isinstance(t, str) and t.strip() for t in tests):
            raise UsageError(f"TARGETS[{i}] ({files}): 'tests' must be a non-empty list of pytest argument strings")
        scope = entry.get("scope")
        if scope is not None and (isinstance(scope, str) or not all(isinstance(s, str) for s in scope)):
            raise UsageError(f"TARGETS[{i}] ({files}): 'scope' must be a list of qualified-name patterns")
        kinds = tuple(k for m in mutate for k in MUTATE_GROUPS[m])
        targets.append(Target(files, kinds, tuple(tests), tuple(scope) if scope is not None else None))
    return targets


def resolve_targets(targets: Sequence[Target], root: Path, file_globs: Sequence[str] | None) -> list[tuple[str, Target]]:
    """(relative path, target) for each file the table names (first entry wins), filtered by ``--files``."""
    out: dict[str, Target] = {}
    for t in targets:
        matches = sorted(p for p in root.glob(t.files) if p.is_file() and p.suffix == ".py")
        if not matches:
            warn(f"table entry {t.files!r} matches no file under {root}")
        for p in matches:
            out.setdefault(p.relative_to(root).as_posix(), t)
    if file_globs:
        chosen = {rel: t for rel, t in out.items() if any(fnmatch.fnmatchcase(rel, g) for g in file_globs)}
        if not chosen:
            raise UsageError(f"--files {' '.join(file_globs)} matches none of the table's files: {', '.join(sorted(out)) or '(none)'}")
        out = chosen
    if not out:
        raise UsageError("the target table matches no file: update TARGETS in benchmarks/mutants.py")
    for rel, t in out.items():
        for sel in t.tests:
            for arg in shlex.split(sel):
                path = arg.split("::", 1)[0]
                if not arg.startswith("-") and ("/" in path or path.endswith(".py")) and not (root / path).exists():
                    raise UsageError(f"table: test selection {sel!r} for {rel} names {path}, which does not exist")
    return sorted(out.items())


# ---------------------------------------------------------------------------------------------------------------
# generating mutants
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    path: str  #: relative to the root, posix
    line: int  #: 1-based
    col: int  #: 1-based, in characters
    kind: str  #: const | op | call
    original: str
    replacement: str
    start: int  #: byte offsets of the replaced span
    end: int
    site: str  #: what was changed, in words
    before: str = field(default="", compare=False)  #: the source line (clipped around the change)
    after: str = field(default="", compare=False)

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.col}:{self.kind}:{self.replacement}"

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.replacement.encode() + source[self.end :]

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.before} -> {self.after}"


def _numpy_aliases(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "numpy":
                    names.add(a.asname or "numpy")
    return names


def _sympy_alias(tree: ast.Module) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "sympy":
                    return a.asname or "sympy"
    return None


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str | bytes))


class _Finder:
    def __init__(self, source: bytes, relpath: str, kinds: Sequence[str], scope: Sequence[str] | None) -> None:
        self.src = source
        self.relpath = relpath
        self.kinds = set(kinds)
        self.scope = scope
        self.tree = ast.parse(source)
        self.line_starts = [0]
        for line in source.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.sympy = _sympy_alias(self.tree)
        self.numpy = _numpy_aliases(self.tree)
        self.candidates: list[Mutant] = []
        self.sites: Counter[str] = Counter()

    # positions ----------------------------------------------------------------------------------------------
    def _offset(self, lineno: int, col: int) -> int:
        return self.line_starts[lineno - 1] + col

    def _start(self, node: ast.AST) -> int:
        return self._offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def _end(self, node: ast.AST) -> int:
        return self._offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def _line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset) - 1
        col = len(self.src[self.line_starts[line] : offset].decode("utf-8", "replace"))
        return line + 1, col + 1

    def _find_token(self, start: int, end: int) -> tuple[int, str] | None:
        """The first operator token in src[start:end], skipping blanks, comments, parentheses, continuations."""
        text = self.src[start:end].decode("utf-8")
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "#":
                nl = text.find("\n", i)
                i = len(text) if nl < 0 else nl + 1
            elif ch in " \t\r\n\f\\()":
                i += 1
            else:
                for tok in _OP_TOKENS:
                    if text.startswith(tok, i):
                        return start + len(text[:i].encode()), tok
                return None
        return None

    def _add(self, kind: str, start: int, end: int, replacement: str, site: str) -> None:
        line, col = self._line_col(start)
        original = self.src[start:end].decode("utf-8")
        self.candidates.append(Mutant(self.relpath, line, col, kind, original, replacement, start, end, site))

    # walking ------------------------------------------------------------------------------------------------
    def _matches(self, qualname: str) -> bool:
        return self.scope is not None and any(fnmatch.fnmatchcase(qualname, p) for p in self.scope)

    def run(self) -> None:
        for stmt in self.tree.body:
            self._visit(stmt, "", self.scope is None, False)

    def _visit(self, node: ast.AST, qual: str, in_scope: bool, excluded: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{qual}.{node.name}" if qual else node.name
            inner = in_scope or self._matches(name)
            for dec in node.decorator_list:
                self._visit(dec, qual, in_scope, True)
            if isinstance(node, ast.ClassDef):
                for base in [*node.bases, *node.keywords]:
                    self._visit(base, qual, in_scope, True)
            else:
                for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
                    self._visit(default, qual, in_scope, True)
            for stmt in node.body:
                self._visit(stmt, name, inner, excluded)
            return
        if isinstance(node, ast.Lambda):
            for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
                self._visit(default, qual, in_scope, True)
            self._visit(node.body, qual, in_scope, excluded)
            return
        if isinstance(node, ast.Raise | ast.Assert | ast.JoinedStr | ast.Import | ast.ImportFrom | ast.Global | ast.Nonlocal):
            return
        if isinstance(node, ast.AnnAssign):
            self._visit(node.target, qual, in_scope, excluded)
            if node.value is not None:
                self._visit(node.value, qual, in_scope, excluded)
            return
        if isinstance(node, ast.Subscript):
            self._visit(node.value, qual, in_scope, excluded)
            self._visit(node.slice, qual, in_scope, True)
            return
        if isinstance(node, ast.keyword) and node.arg in NON_FORMULA_KEYWORDS:
            return
        active = in_scope and not excluded
        if active:
            if isinstance(node, ast.Call) and CONST in self.kinds and self._rational(node):
                self._visit(node.func, qual, in_scope, excluded)
                return
            self._emit(node)
        for child in ast.iter_child_nodes(node):
            self._visit(child, qual, in_scope, excluded)

    def _emit(self, node: ast.AST) -> None:
        if CONST in self.kinds and _is_number(node):
            self._constant(node)  # type: ignore[arg-type]
        elif OP in self.kinds and isinstance(node, ast.BinOp) and type(node.op) in BINOP_SWAP:
            if not (_is_text(node.left) or _is_text(node.right)):
                old, new = BINOP_SWAP[type(node.op)]
                self._operator(self._end(node.left), self._start(node.right), old, new, "binary operator")
        elif OP in self.kinds and isinstance(node, ast.AugAssign) and type(node.op) in AUGOP_SWAP:
            old, new = AUGOP_SWAP[type(node.op)]
            self._operator(self._end(node.target), self._start(node.value), old, new, "augmented assignment")
        elif CALL in self.kinds and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if isinstance(f.value, ast.Name) and f.value.id in self.numpy and f.attr in UFUNC_SWAP:
                end = self._end(f)
                start = end - len(f.attr.encode())
                if self.src[start:end].decode() == f.attr:
                    self.sites[CALL] += 1
                    self._add(CALL, start, end, UFUNC_SWAP[f.attr], f"{f.value.id}.{f.attr} call")

    def _operator(self, gap_start: int, gap_end: int, old: str, new: str, site: str) -> None:
        found = self._find_token(gap_start, gap_end)
        if found is None or found[1] != old:
            return
        self.sites[OP] += 1
        self._add(OP, found[0], found[0] + len(old), new, site)

    def _halve_int(self, value: int) -> str:
        if value % 2 == 0:
            return str(value // 2)
        return f"{self.sympy}.Rational({value}, 2)" if self.sympy else repr(value / 2)

    def _constant(self, node: ast.Constant) -> None:
        value = node.value
        if value == 0:
            return
        start, end = self._start(node), self._end(node)
        self.sites[CONST] += 1
        if isinstance(value, int):
            self._add(CONST, start, end, str(value * 2), "constant x2")
            self._add(CONST, start, end, self._halve_int(value), "constant /2")
        else:
            self._add(CONST, start, end, repr(value * 2), "constant x2")
            self._add(CONST, start, end, repr(value / 2), "constant /2")

    def _rational(self, node: ast.Call) -> bool:
        f = node.func
        is_rational = (isinstance(f, ast.Attribute) and f.attr == "Rational" and isinstance(f.value, ast.Name)
                       and f.value.id == self.sympy) or (isinstance(f, ast.Name) and f.id == "Rational")
        if not is_rational or len(node.args) != 2 or node.keywords:
            return False
        nums = [a.operand if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub) else a for a in node.args]
        if not all(isinstance(a, ast.Constant) and type(a.value) is int for a in nums):
            return False
        p, q = nums
        self.sites[CONST] += 1
        if p.value != 0:  # type: ignore[union-attr]
            self._add(CONST, self._start(p), self._end(p), str(2 * p.value), "Rational numerator x2")  # type: ignore[union-attr]
        self._add(CONST, self._start(q), self._end(q), str(2 * q.value), "Rational denominator x2 (/2)")  # type: ignore[union-attr]
        return True


def _comment_columns(source: bytes) -> dict[int, int]:
    """line -> 1-based column of its trailing comment (best effort: {} if the file does not tokenize)."""
    out = {}
    with contextlib.suppress(tokenize.TokenError, SyntaxError):
        for tok in tokenize.tokenize(io.BytesIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.start[1] + 1
    return out


def _clip(line: str, col: int, width: int = 90) -> str:
    line = line.rstrip("\r\n")
    stripped = line.lstrip()
    col -= len(line) - len(stripped)
    if len(stripped) <= width:
        return stripped
    lo = max(0, min(col - width // 2, len(stripped) - width))
    return ("..." if lo > 0 else "") + stripped[lo : lo + width] + ("..." if lo + width < len(stripped) else "")


def generate(source: bytes, relpath: str, kinds: Sequence[str], scope: Sequence[str] | None = None) -> tuple[list[Mutant], dict[str, int]]:
    """The mutants of one file (in source order) and the number of sites per kind (plus ``dropped``)."""
    finder = _Finder(source, relpath, kinds, scope)
    finder.run()
    reference = ast.dump(finder.tree)
    seen: set[bytes] = set()
    out = []
    dropped = 0
    lines = [ln.decode("utf-8") for ln in source.splitlines(keepends=True)]
    comments = _comment_columns(source)
    for m in sorted(finder.candidates, key=lambda m: (m.start, m.end, m.replacement)):
        mutated = m.apply(source)
        try:
            if ast.dump(ast.parse(mutated)) == reference:
                raise SyntaxError("same AST")
        except (SyntaxError, ValueError):
            dropped += 1
            continue
        if mutated in seen:
            dropped += 1
            continue
        seen.add(mutated)
        mutated_line = mutated.splitlines(keepends=True)[m.line - 1].decode("utf-8")
        before, after = lines[m.line - 1], mutated_line
        cut = comments.get(m.line)
        if cut is not None and cut >= m.col:  # show code, not the trailing comment (it moves with the replacement)
            before, after = before[: cut - 1].rstrip(), after[: cut - 1 + len(after) - len(before)].rstrip()
        out.append(Mutant(**{**asdict(m), "before": _clip(before, m.col), "after": _clip(after, m.col)}))
    counts = {k: finder.sites.get(k, 0) for k in (CONST, OP, CALL) if k in kinds}
    counts["dropped"] = dropped
    return out, counts


# ---------------------------------------------------------------------------------------------------------------
# files: snapshots, atomic writes, backups, restoration
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    data: bytes
    mtime_ns: int
    atime_ns: int
    size: int
    mode: int


def snapshot(path: Path) -> Snapshot:
    st = path.stat()
    data = path.read_bytes()
    return Snapshot(data, st.st_mtime_ns, st.st_atime_ns, len(data), st.st_mode & 0o7777)


def unchanged(path: Path, snap: Snapshot) -> bool:
    try:
        st = path.stat()
        return st.st_mtime_ns == snap.mtime_ns and st.st_size == snap.size and path.read_bytes() == snap.data
    except OSError:
        return False


def atomic_write(path: Path, data: bytes, mode: int | None = None, times_ns: tuple[int, int] | None = None) -> None:
    tmp = path.with_name(f".{path.name}.mutants-tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if times_ns is not None:
            os.utime(tmp, ns=times_ns)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def backup_paths(path: Path) -> tuple[Path, Path]:
    return path.with_name(path.name + BACKUP_SUFFIX), path.with_name(path.name + SIDECAR_SUFFIX)


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_critical = 0
_pending: int | None = None


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP while a file is half-way between states; they are delivered afterwards.

    Both at the OS level (the signal mask) and at the Python level (a signal whose Python handler runs inside the
    section is recorded by :func:`_on_signal` and raised when the outermost section ends)."""
    global _critical, _pending
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    _critical += 1
    try:
        yield
    finally:
        _critical -= 1
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        if _critical == 0 and _pending is not None:
            signum, _pending = _pending, None
            raise Interrupted(signum)


def _on_signal(signum: int, frame: Any) -> None:
    global _pending
    if _critical:
        _pending = signum
        return
    raise Interrupted(signum)


_last_mtime: dict[Path, int] = {}


def _fresh_mtime_ns(path: Path, snap: Snapshot) -> int:
    """A whole second never used for this file before (and not the original's), so no bytecode cache can match."""
    sec = max(int(time.time()), _last_mtime.get(path, 0) + 1)
    if sec == snap.mtime_ns // 1_000_000_000:
        sec += 1
    _last_mtime[path] = sec
    return sec * 1_000_000_000


def restore(path: Path, snap: Snapshot, mutant_bytes: bytes) -> None:
    """Put the original bytes, mode and times back, unless someone edited the file meanwhile (then StopRun)."""
    backup, sidecar = backup_paths(path)
    current = path.read_bytes() if path.exists() else None
    if current == mutant_bytes:
        atomic_write(path, snap.data, snap.mode, (snap.atime_ns, snap.mtime_ns))
        if path.read_bytes() != snap.data:  # pragma: no cover - a write racing ours
            raise StopRun(f"{path}: restoring the original failed; the original bytes are in {backup}")
    elif current != snap.data:
        raise StopRun(f"{path} was edited while a mutant was in place; it is left as it is and the original bytes are in {backup}")
    for p in (sidecar, backup):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


@contextlib.contextmanager
def mutated(path: Path, snap: Snapshot, mutant_bytes: bytes, mutant_id: str) -> Iterator[None]:
    """Write the mutant in place for the duration of the block; always restore (FileChanged if the file moved on)."""
    backup, sidecar = backup_paths(path)
    state = "clean"
    try:
        with signals_blocked():
            if not unchanged(path, snap):
                raise FileChanged(str(path))
            if backup.exists():
                raise StopRun(f"{backup} exists: another run is mutating {path}, or a crashed run left it")
            state = "backup"
            atomic_write(backup, snap.data, snap.mode, (snap.atime_ns, snap.mtime_ns))
            record = {"mutant": mutant_id, "mutant_sha256": hashlib.sha256(mutant_bytes).hexdigest(), "pid": os.getpid(),
                      "original_mtime_ns": snap.mtime_ns, "original_atime_ns": snap.atime_ns}
            atomic_write(sidecar, json.dumps(record).encode())
            if not unchanged(path, snap):
                raise FileChanged(str(path))
            state = "mutant"
            atomic_write(path, mutant_bytes, snap.mode, (time.time_ns(), _fresh_mtime_ns(path, snap)))
        yield
    finally:
        with signals_blocked():
            if state == "mutant":
                restore(path, snap, mutant_bytes)
            elif state == "backup":
                for p in (sidecar, backup):
                    with contextlib.suppress(FileNotFoundError):
                        p.unlink()


_SKIP_DIRS = {".git", ".venv", ".ci-venv", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def find_backups(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        found += [Path(dirpath) / f for f in filenames if f.endswith(BACKUP_SUFFIX)]
    return sorted(found)


def recover(root: Path, log: TextIO) -> list[str]:
    """Restore the files a crashed run left mutated; StopRun where that is not safe. Returns what was done."""
    notes = []
    for backup in find_backups(root):
        path = backup.with_name(backup.name[: -len(BACKUP_SUFFIX)])
        sidecar = backup.with_name(path.name + SIDECAR_SUFFIX)
        rel = path.relative_to(root).as_posix()
        if not path.exists():
            raise StopRun(f"{backup.relative_to(root)} is a backup of {rel}, which no longer exists: "
                          "move it back by hand, then delete the backup")
        original = backup.read_bytes()
        current = path.read_bytes()
        info: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            info = json.loads(sidecar.read_text())
        with signals_blocked():
            if current == original:
                note = f"removed a stale backup of {rel} (the file already holds its original bytes)"
            elif info.get("mutant_sha256") == hashlib.sha256(current).hexdigest():
                st = backup.stat()
                times = (info.get("original_atime_ns", st.st_atime_ns), info.get("original_mtime_ns", st.st_mtime_ns))
                atomic_write(path, original, st.st_mode & 0o7777, times)
                note = f"restored {rel} from a crashed run's backup (it still held mutant {info.get('mutant', '?')})"
            else:
                raise StopRun(f"{rel} differs from its backup {backup.name} and from the mutant a crashed run wrote: "
                              f"compare them, keep the right one, then delete {backup.name}")
            for p in (sidecar, backup):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
        print(f"mutants: {note}", file=log)
        notes.append(note)
    return notes


# ---------------------------------------------------------------------------------------------------------------
# the lock
# ---------------------------------------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def locked(root: Path, log: TextIO) -> Iterator[None]:
    lock = root / LOCK_NAME
    lock.parent.mkdir(parents=True, exist_ok=True)
    me = f"{os.getpid()} {socket.gethostname()} {time.strftime('%Y-%m-%dT%H:%M:%S')}"
    for attempt in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                pid_s, host, *_ = lock.read_text().split() or ["?", "?"]
                pid = int(pid_s)
            except (OSError, ValueError):
                raise StopRun(f"{LOCK_NAME} exists and is unreadable: another run holds it (delete it if none does)") from None
            if attempt == 0 and host == socket.gethostname() and not _alive(pid):
                print(f"mutants: taking over {LOCK_NAME} from process {pid}, which is gone", file=log)
                lock.unlink(missing_ok=True)
                continue
            raise StopRun(f"{LOCK_NAME} is held by process {pid} on {host}: another mutation run is in progress") from None
        with os.fdopen(fd, "w") as fh:
            fh.write(me + "\n")
        break
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if lock.read_text().strip() == me:
                lock.unlink()


# ---------------------------------------------------------------------------------------------------------------
# running tests
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class RunOutcome:
    verdict: str  #: pass | fail | timeout | error
    seconds: float
    returncode: int | None
    first_failure: str = ""
    tail: str = ""
    failed_ids: list[str] = field(default_factory=list)


def _failed_ids(output: str) -> list[str]:
    """Node ids of the FAILED/ERROR lines of pytest's short summary."""
    ids = []
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            node = line.split(" ", 1)[1].split(" - ", 1)[0].strip()
            if node and node not in ids:
                ids.append(node)
    return ids


def _first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line[:300]
    for line in output.splitlines():
        if "Error" in line and line.startswith("E "):
            return line[:300]
    return ""


def run_pytest(root: Path, selection: str, timeout: float | None, stop_first: bool = True, deselect: Sequence[str] = (),
               extra: Sequence[str] = ()) -> RunOutcome:
    cmd = [sys.executable, "-m", "pytest", *(["-x"] if stop_first else []), *PYTEST_FLAGS, *extra, *shlex.split(selection),
           *(f"--deselect={node}" for node in deselect)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out = proc.communicate()[0]
        text = out.decode("utf-8", "replace")
        return RunOutcome("timeout", time.monotonic() - t0, None, "", text[-2000:])
    except BaseException:
        _kill_group(proc)
        raise
    text = out.decode("utf-8", "replace")
    seconds = time.monotonic() - t0
    rc = proc.returncode
    if rc == 0:
        verdict = "pass"
    elif rc in (1, 2) or rc < 0:
        verdict = "fail"  # failing tests (1), a module that no longer imports (2, collection error), a crash (< 0)
    else:
        verdict = "error"  # 3 internal error, 4 usage error, 5 nothing collected
    return RunOutcome(verdict, seconds, rc, _first_failure(text), text[-6000:], _failed_ids(text))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


# ---------------------------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Result:
    id: str
    path: str
    line: int
    col: int
    kind: str
    site: str
    original: str
    replacement: str
    change: str
    status: str  #: killed | timeout | survived | error | skipped
    selection: str = ""  #: the selection that killed it (or timed out)
    failure: str = ""
    seconds: float = 0.0
    detail: str = ""
    justified: str = ""


@dataclass
class Baseline:
    ok: bool
    seconds: float
    detail: str = ""
    #: tests that already fail on the unmutated tree: deselected from every mutant run of this selection
    deselect: list[str] = field(default_factory=list)
    #: pytest's --durations lines for the unmutated run (to reorder or split the table's selections)
    slowest: list[str] = field(default_factory=list)


class Session:
    def __init__(self, root: Path, timeout: float | None, log: TextIO, survivors_only: bool) -> None:
        self.root = root
        self.timeout = timeout
        self.log = log
        self.survivors_only = survivors_only
        self.tty = log.isatty()
        self.baselines: dict[str, Baseline] = {}

    def say(self, text: str) -> None:
        if self.tty:
            print("\r\x1b[K" + text, file=self.log, flush=True)
        else:
            print(text, file=self.log, flush=True)

    def status_line(self, text: str) -> None:
        if self.tty:
            print("\r\x1b[K" + text[:200], end="", file=self.log, flush=True)

    def run_timeout(self, selection: str) -> float | None:
        if self.timeout is not None:
            return self.timeout
        base = self.baselines[selection]
        return max(30.0, 3 * base.seconds + 15)

    def baseline(self, selection: str) -> Baseline:
        """Run the selection once on the unmutated tree, to the end. Tests that fail there (another engineer's
        work in progress, say) are deselected from the mutant runs, with a warning; a selection that does not
        even collect, or fails without naming its failures, cannot judge mutants and is skipped."""
        if selection not in self.baselines:
            self.status_line(f"baseline: {selection} ...")
            out = run_pytest(self.root, selection, self.timeout if self.timeout is not None else 3600, stop_first=False,
                             extra=("--durations=15",))
            slowest = [ln.strip() for ln in out.tail.splitlines() if re.match(r"\s*\d+(\.\d+)?s (call|setup|teardown) ", ln)]
            if out.verdict == "pass":
                base = Baseline(True, out.seconds, slowest=slowest)
                self.say(f"baseline: {selection}: passes in {out.seconds:.1f}s")
            elif out.verdict == "fail" and out.returncode == 1 and out.failed_ids:
                shown = ", ".join(out.failed_ids[:5]) + (" ..." if len(out.failed_ids) > 5 else "")
                base = Baseline(True, out.seconds, f"{len(out.failed_ids)} test(s) fail unmutated and are deselected: {shown}",
                                list(out.failed_ids), slowest)
                self.say(f"WARNING baseline: {selection}: {base.detail} ({out.seconds:.1f}s)")
            else:
                detail = f"{out.verdict} (exit {out.returncode}): {out.first_failure or out.tail[-300:].strip()}"
                base = Baseline(False, out.seconds, detail)
                self.say(f"WARNING baseline: {selection} fails on the unmutated tree, so it cannot judge mutants: {detail}")
            self.baselines[selection] = base
        return self.baselines[selection]

    def judge(self, mutant: Mutant, target: Target, path: Path, snap: Snapshot) -> Result:
        res = Result(mutant.id, mutant.path, mutant.line, mutant.col, mutant.kind, mutant.site, mutant.original, mutant.replacement,
                     f"{mutant.before} -> {mutant.after}", "survived")
        data = mutant.apply(snap.data)
        t0 = time.monotonic()
        sels = list(target.tests)
        idx = 0
        usable = 0
        while idx < len(sels):
            # baselines run on the unmutated tree, so they happen between applications of the mutant
            while idx < len(sels) and not self.baseline(sels[idx]).ok:
                idx += 1
            if idx == len(sels):
                break
            with mutated(path, snap, data, mutant.id):
                while idx < len(sels) and sels[idx] in self.baselines:
                    sel = sels[idx]
                    idx += 1
                    if not self.baselines[sel].ok:
                        continue
                    usable += 1
                    self.status_line(f"{mutant.describe()}  [{sel}]")
                    out = run_pytest(self.root, sel, self.run_timeout(sel), deselect=self.baselines[sel].deselect)
                    if out.verdict == "pass":
                        continue
                    res.selection = sel
                    if out.verdict == "fail":
                        res.status, res.failure = "killed", out.first_failure
                    elif out.verdict == "timeout":
                        res.status, res.detail = "timeout", f"ran past {self.run_timeout(sel):.0f}s"
                    else:
                        res.status, res.detail = "error", f"pytest exit {out.returncode}: {out.tail[-300:].strip()}"
                    res.seconds = time.monotonic() - t0
                    return res
        if usable == 0:
            res.status, res.detail = "error", "no test selection passes its baseline"
        res.seconds = time.monotonic() - t0
        return res


def load_justified(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    out = {}
    for key, reason in data.items():
        if not isinstance(reason, str) or not reason.strip() or "\n" in reason:
            raise UsageError(f'{path}: entry {key!r} must be "<mutant id>" = "<one-line reason>"')
        out[key] = reason.strip()
    return out


def write_json(path: Path, payload: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(payload, indent=2) + "\n").encode())


def summarise(results: Sequence[Result], justified: Mapping[str, str]) -> dict[str, Any]:
    count = Counter(r.status for r in results)
    killed = count["killed"] + count["timeout"]
    total = killed + count["survived"]
    survivors = [r for r in results if r.status == "survived"]
    just = sum(1 for r in survivors if r.id in justified)
    return {
        "killed": killed,
        "killed_by_timeout": count["timeout"],
        "total": total,
        "kill_rate": killed / total if total else None,
        "survived": len(survivors),
        "justified": just,
        "unjustified": len(survivors) - just,
        "errors": count["error"],
        "skipped": count["skipped"],
    }


def _rate(k: int, t: int) -> str:
    return f"{100 * k / t:.1f}%" if t else "n/a"


def print_summary(results: Sequence[Result], justified: Mapping[str, str], out: TextIO, elapsed: float, total_generated: int,
                  survivors_only: bool, baselines: Mapping[str, Baseline] | None = None) -> dict[str, Any]:
    s = summarise(results, justified)
    weak = {sel: b for sel, b in (baselines or {}).items() if not b.ok or b.deselect}
    if weak:
        print("\ntest selections that did not run in full (their baseline fails on the unmutated tree):", file=out)
        for sel, b in weak.items():
            print(f"  {sel}: {'skipped: ' if not b.ok else ''}{b.detail}", file=out)
    if not survivors_only:
        print("\nper file:", file=out)
        for path in sorted({r.path for r in results}):
            rs = [r for r in results if r.path == path]
            k = sum(r.status in ("killed", "timeout") for r in rs)
            t = k + sum(r.status == "survived" for r in rs)
            extra = Counter(r.status for r in rs if r.status in ("error", "skipped"))
            more = "".join(f", {n} {st}" for st, n in sorted(extra.items()))
            print(f"  {path}: killed {k} / {t} ({_rate(k, t)}){more}", file=out)
    survivors = [r for r in results if r.status == "survived"]
    if survivors:
        print("\nsurvivors:", file=out)
        for r in survivors:
            why = f"  [justified: {justified[r.id]}]" if r.id in justified else ""
            print(f"  {r.path}:{r.line}: {r.change}   id={r.id}{why}", file=out)
    errors = [r for r in results if r.status in ("error", "skipped")]
    if errors:
        print("\nnot judged:", file=out)
        for r in errors:
            print(f"  {r.path}:{r.line}: {r.status}: {r.detail}   id={r.id}", file=out)
    n = len(results)
    print(f"\nkilled {s['killed']} / total {s['total']} ({_rate(s['killed'], s['total'])}), justified {s['justified']}, "
          f"unjustified {s['unjustified']}", file=out)
    if s["killed_by_timeout"] or s["errors"] or s["skipped"]:
        print(f"(of the killed, {s['killed_by_timeout']} by timeout; {s['errors']} errors, {s['skipped']} skipped)", file=out)
    if n:
        per = elapsed / n
        print(f"{n} mutants in {elapsed / 60:.1f} min ({per:.1f} s each); all {total_generated} mutants of these files at that "
              f"pace: ~{per * total_generated / 60:.0f} min", file=out)
    return s


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mutants.py", description="Mutation harness: perturb formula constants and update-rule operators, run the tests.")
    p.add_argument("--files", nargs="+", metavar="GLOB", help="only the table's files matching these globs (relative paths)")
    p.add_argument("--id", dest="ids", action="append", metavar="ID",
                   help="only the mutant with this id (as --list prints it; repeatable)")
    p.add_argument("--limit", type=_positive_int, metavar="N", help="run at most N mutants (after --sample)")
    p.add_argument("--sample", type=_positive_int, metavar="K", help="a seeded random subset of K mutants")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed for --sample (default 0)")
    p.add_argument("--list", action="store_true", help="print the mutants and the site counts; run nothing")
    p.add_argument("--timeout", type=_positive_float, metavar="SECONDS",
                   help="per pytest run (default: 3 x the selection's baseline time + 15 s, at least 30 s)")
    p.add_argument("--jobs", type=_positive_int, default=1, metavar="1", help="only 1: mutants are written in place")
    p.add_argument("--json", type=Path, metavar="OUT", help="write the results here (atomically, after every mutant)")
    p.add_argument("--survivors-only", action="store_true", help="report only survivors (and mutants that could not be judged)")
    p.add_argument("--justified", type=Path, metavar="PATH", help=f"justified survivors (default {JUSTIFIED_DEFAULT})")
    p.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    return p


def _collect(
    resolved: Sequence[tuple[str, Target]], sources: Mapping[str, bytes]
) -> tuple[list[tuple[Mutant, Target]], dict[str, dict[str, int]]]:
    mutants: list[tuple[Mutant, Target]] = []
    counts = {}
    for rel, target in resolved:
        try:
            ms, c = generate(sources[rel], rel, target.kinds, target.scope)
        except (SyntaxError, UnicodeDecodeError) as exc:
            raise UsageError(f"{rel} does not parse: {exc}") from None
        counts[rel] = {**c, "mutants": len(ms)}
        mutants += [(m, target) for m in ms]
    return mutants, counts


def _print_counts(counts: Mapping[str, Mapping[str, int]], out: TextIO) -> None:
    for rel, c in counts.items():
        parts = ", ".join(f"{n} {k} sites" for k, n in c.items() if k in (CONST, OP, CALL))
        print(f"{rel}: {parts}; {c['mutants']} mutants ({c['dropped']} dropped: unparsable, no-op or duplicate)", file=out)


def main(argv: Sequence[str] | None = None, targets: Sequence[Mapping[str, Any]] | None = None) -> int:
    """Command-line entry point; ``targets`` replaces the table (tests use it). Returns the exit status."""
    try:
        return _main(argv, TARGETS if targets is None else targets)
    except UsageError as exc:
        print(f"mutants.py: error: {exc}", file=sys.stderr)
        return 2
    except StopRun as exc:
        print(f"mutants.py: stopped: {exc}", file=sys.stderr)
        return 3


def _main(argv: Sequence[str] | None, table: Sequence[Mapping[str, Any]]) -> int:
    args = build_parser().parse_args(argv)
    if args.jobs != 1:
        raise UsageError("--jobs: only 1 is supported (mutants are written in place, one at a time)")
    root = args.root.resolve()
    if not root.is_dir():
        raise UsageError(f"--root {root} is not a directory")
    justified = load_justified(args.justified if args.justified is not None else root / JUSTIFIED_DEFAULT)
    resolved = resolve_targets(parse_targets(table), root, args.files)
    log = sys.stderr

    if args.list:
        for b in find_backups(root):
            warn(f"{b.relative_to(root)} exists: a run is in progress or crashed; the listing may show a mutated file")
        mutants, counts = _collect(resolved, {rel: (root / rel).read_bytes() for rel, _ in resolved})
        chosen = _select(mutants, args)
        for m, _ in chosen:
            print(f"{m.id}\t{m.describe()}")
        _print_counts(counts, sys.stdout)
        print(f"{len(chosen)} of {len(mutants)} mutants listed")
        return 0

    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    results: list[Result] = []
    session: Session | None = None
    t_start = time.monotonic()
    with locked(root, log):
        for s in _SIGNALS:
            signal.signal(s, _on_signal)
        try:
            recover(root, log)
            # mutants are generated from the very bytes that are later compared with the file before each write
            snaps = {rel: snapshot(root / rel) for rel, _ in resolved}
            mutants, counts = _collect(resolved, {rel: snap.data for rel, snap in snaps.items()})
            _print_counts(counts, log)
            chosen = _select(mutants, args)
            stale = sorted(set(justified) - {m.id for m, _ in mutants})
            if stale and not args.files:
                warn(f"{len(stale)} justification(s) match no current mutant (moved or edited lines?): {', '.join(stale[:5])}")
            session = Session(root, args.timeout, log, args.survivors_only)
            meta = {"command": ["mutants.py", *(sys.argv[1:] if argv is None else argv)], "root": str(root),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "seed": args.seed, "sample": args.sample, "limit": args.limit,
                    "timeout": args.timeout, "generated": counts, "selected": len(chosen)}
            changed: set[str] = set()
            for i, (m, target) in enumerate(chosen, 1):
                if m.path in changed:
                    res = _skipped(m, "the file changed since the harness read it")
                else:
                    try:
                        res = session.judge(m, target, root / m.path, snaps[m.path])
                    except FileChanged:
                        changed.add(m.path)
                        session.say(f"WARNING {m.path} changed since the harness read it: its remaining mutants are skipped")
                        res = _skipped(m, "the file changed since the harness read it")
                res.justified = justified.get(res.id, "") if res.status == "survived" else ""
                results.append(res)
                if not args.survivors_only or res.status in ("survived", "error", "skipped"):
                    extra = f" by {res.selection}" if res.status in ("killed", "timeout") else ""
                    if res.status == "survived" and res.justified:
                        extra = " (justified)"
                    if res.status in ("error", "skipped"):
                        extra = f": {res.detail}"
                    session.say(f"[{i}/{len(chosen)}] {res.status}{extra}: {m.describe()} ({res.seconds:.1f}s)")
                if args.json:
                    write_json(args.json, {**meta, "baselines": {k: asdict(v) for k, v in session.baselines.items()},
                                           "results": [asdict(r) for r in results], "summary": summarise(results, justified),
                                           "complete": False})
            elapsed = time.monotonic() - t_start
            summary = print_summary(results, justified, sys.stdout, elapsed, len(mutants), args.survivors_only, session.baselines)
            if args.json:
                write_json(args.json, {**meta, "baselines": {k: asdict(v) for k, v in session.baselines.items()},
                                       "results": [asdict(r) for r in results], "summary": summary, "complete": True,
                                       "seconds": elapsed})
        except Interrupted as exc:
            print(f"\nmutants.py: interrupted by signal {exc.signum}; every mutated file has been restored", file=log)
            if results:
                print_summary(results, justified, sys.stdout, time.monotonic() - t_start, len(results), args.survivors_only,
                              session.baselines if session else None)
            return 128 + exc.signum
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
    return 1 if summary["unjustified"] or summary["errors"] else 0


def _skipped(m: Mutant, why: str) -> Result:
    return Result(m.id, m.path, m.line, m.col, m.kind, m.site, m.original, m.replacement, f"{m.before} -> {m.after}", "skipped",
                  detail=why)


def _select(mutants: Sequence[tuple[Mutant, Target]], args: argparse.Namespace) -> list[tuple[Mutant, Target]]:
    chosen = list(mutants)
    if args.ids:
        known = {m.id for m, _ in chosen}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            raise UsageError(f"no mutant with id {unknown[0]!r} (see --list)")
        chosen = [mt for mt in chosen if mt[0].id in args.ids]
    if args.sample is not None and args.sample < len(chosen):
        picked = set(random.Random(args.seed).sample(range(len(chosen)), args.sample))
        chosen = [mt for i, mt in enumerate(chosen) if i in picked]
    if args.limit is not None:
        chosen = chosen[: args.limit]
    return chosen


def warn(text: str) -> None:
    print(f"mutants.py: warning: {text}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
