"""Fuzzing the command line and the sweep store (issue 13).

Hypothesis drives :func:`fedbounds.checks.cli.main` in process with random argument lists and malformed
values, files and specs; a few cases also run as real subprocesses. Every run must end with exit status 0,
1 or 2, no traceback, and (for 2) exactly one line on stderr; pytest-timeout turns a hang into a failure.
No example does real long work: ``check`` always gets an unknown claim, ``sweep`` always ``--dry-run``.

The second fuzz test corrupts random bytes of random pages of a real store and asserts that the damage is
detected: the sweep refuses the store in one line, or recomputes what was damaged so that the store ends
up identical to the original; a report never crashes.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.sweep.runner import run_sweep
from fedbounds.checks.sweep.spec import parse_spec
from fedbounds.checks.sweep.store import Store
from hypothesis import example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
#: seconds per fuzz test: enough for the ci profile's examples; a wider profile (dev) gets more
TIMEOUT = 90 if settings.default.max_examples <= 40 else 1500
TINY = (ROOT / "checks" / "specs" / "tiny.toml").read_text()


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def assert_clean(rc: int, err: str, argv: object) -> None:
    assert rc in (0, 1, 2), (argv, rc, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    if rc == 2:
        assert len(err.strip().splitlines()) == 1, (argv, err)


NUMBERS = st.one_of(
    st.sampled_from(["0", "-1", "1e308", "-1e308", "nan", "inf", "-inf", "1e-320", "9007199254740993", "1" + "0" * 30]),
    st.sampled_from(["0x10", "", " ", "1,5"]),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6),
)
JUNK = st.one_of(st.text(max_size=12), st.sampled_from(["--", "-", "--help", "-h", "--json", "--latex", "\x00", "é", "--no-progress"]))


@st.composite
def claims_argv(draw: st.DrawFn) -> list[str]:
    opts = {
        "--paper": st.sampled_from(["fednmap", "ds", "nope", ""]),
        "--status": st.sampled_from(["verbatim", "derived", "reconstructed", "erratum", "remark", "bogus"]),
        "--id": st.sampled_from(["ds.lemma5_2", "fednmap.theorem8", "erratum.ds_phi_prefix", "nope", ""]),
        "--width": NUMBERS,
    }
    argv = ["claims"]
    for name in draw(st.lists(st.sampled_from(sorted(opts)), max_size=4)):
        argv += [name, draw(opts[name])]
    argv += draw(st.lists(st.sampled_from(["--json", "--latex"]), max_size=2))
    return argv


@st.composite
def feasible_argv(draw: st.DrawFn) -> list[str]:
    if draw(st.booleans()):
        names = ["--L", "--rho", "--n", "--Q", "--sigma", "--mu", "--epsilon"]
        argv = ["feasible", "fednmap"]
    else:
        names = ["--L-f", "--L-r", "--lam", "--G", "--B", "--G-r", "--sigma", "--alpha"]
        argv = ["feasible", "ds-fedproxgrad"]
    good = {"--L": "1", "--rho": "0.1", "--n": "10", "--Q": "5", "--sigma": "1", "--L-f": "0.45", "--L-r": "0.9"}
    good |= {"--lam": "1", "--G": "0.3", "--B": "1", "--G-r": "1", "--alpha": "0.75"}
    for name in names:
        if draw(st.integers(0, 4)) == 0:
            continue
        argv += [name, draw(NUMBERS) if draw(st.integers(0, 2)) == 0 else good.get(name, "1")]
    argv += draw(st.lists(st.sampled_from(["--json", "--latex"]), max_size=1))
    return argv


@st.composite
def check_argv(draw: st.DrawFn) -> list[str]:
    argv = ["check", "--claim", draw(st.sampled_from(["no.such.claim", "ds.nope", ".", "..", "x."]))]
    extra = {"--profile": st.sampled_from(["quick", "huge", ""]), "--seed": NUMBERS, "--claim": st.sampled_from(["ds.", "nope"])}
    for name in draw(st.lists(st.sampled_from(sorted(extra)), max_size=3)):
        argv += [name, draw(extra[name])]
    return argv


def _mutate_spec(draw: st.DrawFn) -> str:
    lines = TINY.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        if "=" in lines[i] and draw(st.booleans()):
            key = lines[i].split("=", 1)[0]
            value = draw(st.one_of(NUMBERS, st.sampled_from(["[]", "[1, 1]", "{}", '"x"', "true", "[0.5]", "nan", "1e400", "[1e12]"])))
            lines[i] = f"{key}= {value}"
        else:
            lines[i] = draw(st.text(max_size=20))
    return "\n".join(lines)


@st.composite
def file_argv(draw: st.DrawFn, tmp: Path) -> list[str]:
    kind = draw(st.sampled_from(["spec", "spec_bytes", "report_bytes", "missing", "folder"]))
    path = tmp / f"f{draw(st.integers(0, 10**6))}.toml"
    if kind == "spec":
        path.write_text(_mutate_spec(draw), encoding="utf-8")
        return ["sweep", str(path), "--dry-run", "--store", str(tmp / "dry.sqlite")]
    if kind == "spec_bytes":
        path.write_bytes(draw(st.binary(max_size=200)))
        return ["sweep", str(path), "--dry-run", "--store", str(tmp / "dry.sqlite")]
    if kind == "report_bytes":
        path.write_bytes(b"SQLite format 3\x00" * draw(st.integers(0, 1)) + draw(st.binary(max_size=300)))
        return ["report", str(path), "--out", str(tmp / "rep")]
    if kind == "missing":
        return [draw(st.sampled_from(["sweep", "report"])), str(tmp / "missing" / "x.toml")]
    return [draw(st.sampled_from(["sweep", "report"])), str(tmp)]


def _no_long_work(parts: tuple[str, list[str]]) -> list[str]:
    """``check`` always gets an unknown claim (else it would run the whole suite)."""
    cmd, rest = parts
    return [cmd, *rest, "--claim", "no.such.claim"] if cmd == "check" else [cmd, *rest]


ARGV = st.one_of(
    claims_argv(),
    feasible_argv(),
    check_argv(),
    st.lists(JUNK, max_size=4),
    st.tuples(st.sampled_from(["claims", "feasible", "sweep", "report", "check"]), st.lists(JUNK, max_size=3)).map(_no_long_work),
)


@pytest.mark.slow  # 14 s at load 5-7 (pytest --durations, 2026-12-04)
@pytest.mark.timeout(TIMEOUT)
@settings(max_examples=max(40, settings.default.max_examples))
@given(argv=ARGV)
@example(argv=["claims", "--id", "ds.lemma5_2", "--status", "erratum"])
@example(argv=["claims", "--width", "-5"])
@example(argv=["claims", "\r", "0"])  # a control character must not split the one-line message
@example(argv=["report", "/"])
@example(argv=["sweep", "/dev/null/spec.toml"])
@example(argv=["check", "--claim", "no.such.claim", "--out", "/dev/null/x"])
def test_fuzz_cli_in_process(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d, contextlib.chdir(d):
        rc, _, err = run_cli(argv)
    assert_clean(rc, err, argv)


@pytest.mark.timeout(TIMEOUT)
@settings(max_examples=max(40, settings.default.max_examples))
@given(data=st.data())
@example(data=None)
def test_fuzz_cli_files_in_process(data: st.DataObject | None) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if data is None:  # a spec that is not UTF-8, and a folder given as a store
            bad = tmp / "latin.toml"
            bad.write_bytes(TINY.replace("Lasso", "Lasso \xe9").encode("latin-1"))
            cases = [["sweep", str(bad), "--dry-run"], ["sweep", "tiny", "--store", str(tmp), "--dry-run"]]
        else:
            cases = [data.draw(file_argv(tmp))]
        for argv in cases:
            rc, _, err = run_cli(argv)
            assert_clean(rc, err, argv)


SUBPROCESS_CASES = [
    ["claims", "--paper", "fednmap"],
    ["claims", "--id", "ds.lemma5_2", "--status", "erratum"],
    ["claims", "--width", "-5"],
    ["feasible", "fednmap", "--L", "nan", "--rho", "0.1", "--n", "10", "--Q", "5", "--sigma", "1"],
    ["sweep", "/nonexistent/spec.toml"],
    ["report", "/nonexistent/store.sqlite"],
    ["check", "--claim", "no.such.claim", "--out", "/dev/null/x"],
    ["nonsense", "--debug-not-a-flag"],
]


@pytest.mark.slow  # 60 s at load 5-7 (pytest --durations, 2026-12-04)
@pytest.mark.timeout(60)
def test_fuzz_cases_as_real_subprocesses(tmp_path: Path) -> None:
    for argv in SUBPROCESS_CASES:
        res = subprocess.run(
            [sys.executable, "-m", "fedbounds.checks.cli", *argv], capture_output=True, text=True, cwd=tmp_path, timeout=30
        )
        assert_clean(res.returncode, res.stderr, argv)
        if argv[:3] == ["claims", "--paper", "fednmap"]:
            assert res.returncode == 0


# ---------------------------------------------------------------------------------------------- the store

CELL = """
import numpy as np

from fedbounds.checks.sweep.cell import summarize


def cell(config):
    n, Q = config["instance"]["params"]["n"], config["params"]["Q"]
    t = np.arange(config["rounds"] + 1)[:, None]
    metric = np.ones((1, config["replicas"])) * (1.0 + config["seed"]) / (1.0 + 0.5 * n * Q * t)
    return summarize({"psi_gap": metric, "dist_sq": 2 * metric}, config["target"])
"""

SPEC = """
name = "fuzz"
algorithm = "fednmap"
cell = "fuzz_store_cell:cell"
rounds = 300
replicas = 2
seeds = [0, 1, 2]
metrics = ["psi_gap", "dist_sq"]

[instance]
name = "synthetic"

[grid]
n = [1, 2, 4]
Q = [1, 2]

[target]
metric = "psi_gap"
value = 0.05
"""


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    """A complete, checkpointed store of 18 cells (with overflow pages: the curves are 4.8 kB per cell)."""
    d = tmp_path_factory.mktemp("fuzzstore")
    (d / "fuzz_store_cell.py").write_text(CELL)
    sys.path.insert(0, str(d))
    env = pytest.MonkeyPatch()
    env.setenv("FEDBOUNDS_CELLS", "fuzz_store_cell:cell")
    spec_path = d / "fuzz.toml"
    spec_path.write_text(SPEC)
    store = d / "pristine.sqlite"
    run_sweep(parse_spec(SPEC), store, processes=1, progress=False)
    con = sqlite3.connect(store)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the main file alone holds every cell
    con.close()
    with Store(store, readonly=True) as st_:
        raw = st_.raw()
    yield spec_path, store, raw
    sys.path.remove(str(d))
    env.undo()


@pytest.mark.timeout(TIMEOUT)
@settings(max_examples=max(12, settings.default.max_examples // 2))
@given(
    page=st.integers(min_value=0, max_value=10**6),
    start=st.integers(min_value=0, max_value=4095),
    length=st.integers(min_value=1, max_value=4096),
    how=st.sampled_from(["random", "zero", "flip"]),
    noise=st.binary(min_size=1, max_size=64),
)
@pytest.mark.slow  # 233 s at load 5-7 (pytest --durations, 2026-12-04)
def test_fuzz_corrupt_store_pages_are_detected(
    pristine: tuple[Path, Path, dict], page: int, start: int, length: int, how: str, noise: bytes
) -> None:
    spec_path, store, good = pristine
    with tempfile.TemporaryDirectory() as d:
        copy = Path(d) / "s.sqlite"
        data = bytearray(store.read_bytes())
        page_size = 4096
        pages = len(data) // page_size
        base = (page % pages) * page_size
        lo, hi = base + start, min(base + start + length, base + page_size)
        for i in range(lo, hi):
            if how == "zero":
                data[i] = 0
            elif how == "flip":
                data[i] ^= 0xFF
            else:
                data[i] = noise[(i - lo) % len(noise)]
        copy.write_bytes(bytes(data))

        argv = ["sweep", str(spec_path), "--store", str(copy), "--processes", "1", "--no-progress"]
        rc, _, err = run_cli(argv)
        assert_clean(rc, err, (page % pages, how))
        if rc == 2:
            assert str(copy) in err
        else:
            assert rc == 0
            with Store(copy, readonly=True) as st_:
                assert st_.raw() == good, "a damaged cell survived as if it were done"
        rc, _, err = run_cli(["report", str(copy), "--out", str(Path(d) / "rep")])
        assert_clean(rc, err, ("report", page % pages, how))
        with contextlib.suppress(OSError):
            shutil.rmtree(Path(d) / "rep")


def test_pristine_store_has_the_pages_the_fuzz_aims_at(pristine: tuple[Path, Path, dict]) -> None:
    _, store, good = pristine
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    assert con.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert con.execute("PRAGMA page_count").fetchone()[0] > 20
    con.close()
    assert len(good) == 18 and os.path.getsize(store) > 20 * 4096
