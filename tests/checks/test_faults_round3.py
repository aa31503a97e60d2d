"""Faults, third round: bounded inputs, children that die with their parent, one exit status per kind of failure,
evidence that refuses damage, writes that cannot lose data (docs/cli.md, "Exit status")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from fedbounds.checks.cli import main

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------------------ children die with their parent

_PARENT = r"""
import sys, time
from fedbounds.checks.commands.check import worker_pool
from fedbounds.checks.pep.bounded import _SolverProcess
from fedbounds.checks.sweep.runner import _PoolBackend

pool = worker_pool(2)                       # fedbounds check --jobs 2: spawned workers
busy = [pool.submit(time.sleep, 600) for _ in range(2)]
sweep = _PoolBackend(2)                     # fedbounds sweep: forkserver and its workers
busy += [sweep._pool.submit(time.sleep, 600) for _ in range(2)]
solver = _SolverProcess(0)                  # a PEP solve's solver process
time.sleep(1)
print("ready", flush=True)
time.sleep(600)
"""


def _ours(marker: str) -> list[tuple[int, str]]:
    """Processes whose environment carries ``marker`` (pid, command line)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            if f"FEDBOUNDS_TEST_MARKER={marker}".encode() in env:
                out.append((int(pid), Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]))
        except OSError:
            pass
    return out


@pytest.mark.slow  # 58 s at load 5-7 (pytest --durations, 2026-12-04)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_the_parent_leaves_no_child_of_ours() -> None:
    """A batch scheduler's SIGKILL of the parent: the check workers, the sweep's forkserver and workers and the solver
    process (each busy) are all gone within 10 s (PR_SET_PDEATHSIG; the forkserver's pipe)."""
    marker = uuid.uuid4().hex
    env = {**os.environ, "FEDBOUNDS_TEST_MARKER": marker}
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              cwd="/", text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "ready"
        children = [p for p in _ours(marker) if p[0] != parent.pid]
        kinds = " ".join(c for _, c in children)
        assert "spawn_main" in kinds and "forkserver" in kinds and "solver_child" in kinds, children
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while _ours(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _ours(marker)
    for pid, _ in left:  # leave the machine clean even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left, f"alive 10 s after the parent's SIGKILL: {left}"


# ------------------------------------------------------------------------------------------------ bounded inputs


@pytest.mark.parametrize(("extra", "needle"), [
    (["--n", "33", "--pep-certify"], "--pep-certify takes --n from 1 to 32"),
    (["--n", "10", "--Q", "4", "--pep-certify"], "--pep-certify takes --Q from 1 to 3"),
    (["--n", "16", "--Q", "3", "--pep-certify"], "--pep-certify takes n Q up to 32"),
    (["--n", "1e20"], "--n must be at most 9007199254740992"),
    (["--n", "10", "--width", "100000"], "--width must be between 40 and 10000"),
])
def test_out_of_range_numbers_are_refused_before_work(extra: list[str], needle: str, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from fedbounds.theory import feasibility

    def no_work(*a: object, **k: object) -> None:
        raise AssertionError("the calculator ran before the ranges were checked")

    monkeypatch.setattr(feasibility, "feasibility", no_work)
    argv = ["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--sigma", "1", "--mu", "0.1"]
    if "--Q" not in extra:
        argv += ["--Q", "1"]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1, err


# ----------------------------------------------------------------------------------- one exit status per failure


def test_the_exit_status_table_is_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for row in ("0    success", "1    a negative answer", "2    bad input", "3    the environment", "70   internal error",
                "130  interrupted"):
        assert row in out
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "| 3 |" in readme and "| 70 |" in readme


def _raising(exc: BaseException):
    def run(args: object) -> int:
        raise exc
    return run


@pytest.mark.parametrize(("exc", "status", "needle"), [
    (MemoryError(), 3, "out of memory under"),
    (OSError(28, "No space left on device", "/tmp/x/report.json"), 3, "'/tmp/x/report.json': No space left on device"),
    (ImportError("libfoo.so: failed to map segment from shared object"), 3, "out of memory under"),
    (OSError(2, "No such file or directory", "/nope"), 2, "'/nope': No such file or directory"),
    (KeyboardInterrupt(), 130, "interrupted"),
    (RuntimeError("boom"), 70, "internal error"),
])
def test_each_kind_of_failure_has_its_status(exc: BaseException, status: int, needle: str, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from fedbounds.checks.commands import claims

    monkeypatch.setattr(claims, "run", _raising(exc))
    assert main(["claims"]) == status
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1, err


def test_a_solver_limit_and_damaged_evidence_are_the_environment() -> None:
    from fedbounds.checks.cli import environment_fault
    from fedbounds.checks.pep.bounded import SolverLimit
    from fedbounds.theory.core.evidence import EvidenceError

    assert "the solver could not finish: the solve ran out of time" in environment_fault(SolverLimit("the solve ran out of time"))
    assert environment_fault(EvidenceError("x.json: damaged")) == "x.json: damaged"
    assert environment_fault(ValueError("bad")) is None


def _replace_check(monkeypatch: pytest.MonkeyPatch, check_id: str, func: object) -> None:
    import dataclasses

    from fedbounds.checks import registry

    monkeypatch.setitem(registry._CHECKS, check_id, dataclasses.replace(registry.get_check(check_id), func=func))


def test_a_check_stopped_by_memory_exits_3_not_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A claim whose check ran out of memory is not checked (3), never 'a claim failed' (1)."""
    def oom(ctx: object) -> None:
        raise MemoryError()

    _replace_check(monkeypatch, "ds.lemma5_1", oom)
    assert main(["check", "--claim", "ds.lemma5_1", "--out", str(tmp_path), "--no-progress", "--jobs", "1"]) == 3
    captured = capsys.readouterr()
    assert "ds.lemma5_1 not checked: out of memory" in captured.err


@pytest.mark.slow
def test_check_under_ulimit_v_exits_3_with_one_line(tmp_path: Path) -> None:
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (520000 * 1024, 520000 * 1024))

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    got = subprocess.run([sys.executable, "-m", "fedbounds.checks.cli", "check", "--claim", "ds.lemma5_1", "--out",
                          str(tmp_path / "o"), "--no-progress"], preexec_fn=limit, env=env, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert got.returncode in (0, 3), got.stderr
    if got.returncode == 3:
        assert "out of memory under the address-space limit ulimit -v 520000" in got.stderr
        assert len(got.stderr.strip().splitlines()) == 1, got.stderr


# ------------------------------------------------------------------------------------ evidence that refuses damage


def _committed(name: str = "spep_replay.json") -> Path:
    return ROOT / "theory" / "fednmap" / name


@pytest.mark.parametrize("name", ["pep_evidence.json", "pep_c0_window.json", "spep_grid.json", "spep_speedup.json",
                                  "spep_replay.json", "theorem8_c0.json", "theorem8_speedup.json", "theorem8_lower.json",
                                  "theorem8_families.json", "theorem8_front_families.json"])
def test_every_committed_evidence_file_is_stamped(name: str) -> None:
    from fedbounds.theory.core.evidence import FILES, SCHEMA_VERSION, load

    data = load(_committed(name))
    assert data["schema_version"] == SCHEMA_VERSION and len(data["content_sha256"]) == 64
    assert _committed(name) in FILES  # and the restamping command and the survey before a check know it


def test_the_theorem8_writer_stamps_what_it_writes(tmp_path: Path) -> None:
    """existence's writer (both tables, and their partial writes) stamps: the loader takes its file as written."""
    from fedbounds.checks.fednmap.spep.existence import _write
    from fedbounds.theory.core.evidence import load

    path = tmp_path / "theorem8_c0.json"
    _write(path, {"rows": [{"n": 2, "K": float("inf")}], "command": "x"})
    assert load(path)["rows"] == [{"n": 2, "K": "inf"}]


@pytest.mark.parametrize("loader", ["table", "speedup"])
def test_the_theorem8_loaders_refuse_a_damaged_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, loader: str) -> None:
    """An edited Theorem 8 table is read as no rows, with the damage recorded (never as the edited rows)."""
    from fedbounds.theory.core import evidence
    from fedbounds.theory.fednmap import theorem8_c0 as T8

    name = "theorem8_c0.json" if loader == "table" else "theorem8_speedup.json"
    path = tmp_path / name
    path.write_text(_committed(name).read_text(encoding="utf-8").replace('"Q": 1,', '"Q": 3,', 1), encoding="utf-8")
    monkeypatch.setattr(evidence, "DAMAGED", {})
    monkeypatch.setattr(T8, "TABLE_FILE" if loader == "table" else "SPEEDUP_FILE", path)
    assert getattr(T8, loader)()["rows"] == []
    assert "does not match its content_sha256" in evidence.damaged()[str(path)]


def _damaged(tmp_path: Path, how: str) -> Path:
    text = _committed().read_text(encoding="utf-8")
    path = tmp_path / "spep_replay.json"
    if how == "truncated":
        text = text[: len(text) // 2]
    elif how == "emptied":
        text = ""
    elif how == "edited":
        text = text.replace('"mc_replicas": 256', '"mc_replicas": 257')
    elif how == "nan":
        text = text.replace('"tight_rel": 0.001', '"tight_rel": NaN')
    elif how == "schema":
        text = text.replace('"schema_version": 1', '"schema_version": 2')
    elif how == "list":
        text = "[]"
    if how != "missing":
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("how", "needle"), [
    ("truncated", "not JSON"), ("emptied", "not JSON"), ("edited", "does not match its content_sha256"),
    ("nan", "NaN is not a number"), ("schema", "schema_version 2, expected 1"), ("list", "not an object"),
    ("missing", "committed evidence is missing"),
])
def test_damaged_evidence_is_refused_naming_the_file(tmp_path: Path, how: str, needle: str) -> None:
    from fedbounds.theory.core.evidence import EvidenceError, load

    path = _damaged(tmp_path, how)
    with pytest.raises(EvidenceError) as err:
        load(path)
    assert str(path) in str(err.value) and needle in str(err.value)


def test_stamping_is_what_the_loader_checks(tmp_path: Path) -> None:
    """The one stamping command restamps an edited file; the loader then takes it (and the edit is kept)."""
    from fedbounds.theory.core.evidence import load
    from fedbounds.theory.core.evidence import main as stamp

    path = _damaged(tmp_path, "edited")
    assert stamp([str(path)]) == 0
    assert load(path)["mc_replicas"] == 257
    nan = _damaged(tmp_path, "nan")
    assert stamp([str(nan)]) == 2  # a generator cannot stamp NaN into evidence


@pytest.mark.parametrize(("name", "claim"), [("spep_grid.json", "fednmap.spep.constant_36"),
                                             ("theorem8_c0.json", "fednmap.spep.theorem8_existence"),
                                             ("theorem8_c0.json", "fednmap.spep.constant_12100"),
                                             ("theorem8_c0.json", "fednmap.pep.theorem8_exponent"),
                                             ("theorem8_speedup.json", "fednmap.spep.theorem8_existence"),
                                             ("theorem8_lower.json", "fednmap.spep.theorem8_existence")])
def test_check_reports_claims_on_damaged_evidence_as_not_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str], name: str, claim: str) -> None:
    from fedbounds.theory.core import evidence

    bad = _damaged(tmp_path, "truncated").rename(tmp_path / name)
    monkeypatch.setattr(evidence, "DAMAGED", {})
    monkeypatch.setattr(evidence, "FILES", (bad,))
    out = tmp_path / "out"
    assert main(["check", "--claim", claim, "--out", str(out), "--no-progress", "--jobs", "1"]) == 3
    captured = capsys.readouterr()
    assert f"not checked: {bad}: committed evidence is damaged" in captured.err
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    row = report["claims"][0]
    assert row.get("verdict") != "holds" and "not checked" in json.dumps(row)


# ------------------------------------------------------------------------------------ writes that cannot lose data


@pytest.mark.slow  # 25 s at load 5-7 (pytest --durations, 2026-12-04)
def test_a_store_with_fewer_cells_does_not_overwrite_the_grid(tmp_path: Path) -> None:
    from fedbounds.checks.studies.spep_grid import _merge_committed
    from fedbounds.theory.core.evidence import load

    target = _committed("spep_grid.json")
    committed = load(target)
    few = {"rows": [dict(r) for r in committed["rows"][:3]], "command": "c", "spec": {"cells": 3}}
    with pytest.raises(ValueError, match=r"lacks 177 of the 180 cells .* Pass --partial"):
        _merge_committed(few, target, partial=False)
    merged = _merge_committed(few, target, partial=True)
    key = lambda r: (r["n"], r["Q"], r["C_0"], r["C_c"])  # noqa: E731
    assert sorted(map(key, merged["rows"])) == sorted(map(key, committed["rows"]))
    assert merged["spec"]["cells"] == 180


# ------------------------------------------------------------------------------------------------- the smaller ones


def test_a_refused_report_leaves_no_empty_out_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fedbounds.checks.sweep.store import Store

    with Store(tmp_path / "e.sqlite"):
        pass
    out = tmp_path / "new" / "deeper"
    assert main(["report", str(tmp_path / "e.sqlite"), "--out", str(out)]) == 2
    assert "holds no cells" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


_FEASIBLE = ["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "10", "--Q", "1", "--sigma", "1", "--mu", "0.1"]


def test_plot_into_a_missing_folder_is_refused_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "sub" / "r.png"
    assert main([*_FEASIBLE, "--plot", str(target)]) == 2
    assert f"its folder '{target.parent}' does not exist" in capsys.readouterr().err
    assert not (tmp_path / "missing").exists()


def test_a_tiny_epsilon_is_blamed_on_epsilon(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*_FEASIBLE, "--epsilon", "1e-308"]) == 2
    err = capsys.readouterr().err
    assert "epsilon = 1e-308 is outside the range" in err and "rho" not in err


def test_junk_in_fedbounds_cells_is_refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FEDBOUNDS_CELLS", "junk!!")
    assert main(["sweep", "tiny", "--dry-run"]) == 2
    assert "$FEDBOUNDS_CELLS: 'junk!!' is not a cell name" in capsys.readouterr().err


def test_a_solver_out_of_time_is_not_a_verdict(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """FEDBOUNDS_SOLVER_SECONDS tiny: the PEP is undecided by the limit; 'the solver ran out of time', exit 3 (not 1).
    Negative control: the same result without the limit status exits 1."""
    from fedbounds.checks.registry import CheckResult
    from fedbounds.checks.verdicts.verdict import Verdict

    def result(status: str) -> CheckResult:
        pep = {"pep": {"solvers": {"SCS": {"status": status}}}}
        v = Verdict("ds.pep.lemma5_2", "x", float("nan"), 0.0, float("nan"), float("nan"), "inconclusive", float("nan"), True, pep)
        return CheckResult("ds.pep.lemma5_2", verdicts=[v])

    argv = ["check", "--claim", "ds.pep.lemma5_2", "--out", str(tmp_path), "--no-progress", "--jobs", "1"]
    _replace_check(monkeypatch, "ds.pep.lemma5_2", lambda ctx: result("limit: time limit of 0.01 s reached"))
    assert main(argv) == 3
    assert "ds.pep.lemma5_2 not checked: the solver ran out of time" in capsys.readouterr().err
    _replace_check(monkeypatch, "ds.pep.lemma5_2", lambda ctx: result("optimal_inaccurate"))
    assert main(argv) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_spep_grid_refuses_a_folder_or_a_fifo_as_store_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fedbounds.checks.studies.spep_grid import main as spep_grid

    os.mkfifo(tmp_path / "fifo")
    for store, needle in ((tmp_path, "is a folder"), (tmp_path / "fifo", "is not a regular file")):
        assert spep_grid([str(store)]) == 2
        err = capsys.readouterr().err.strip()
        assert needle in err and str(store) in err and len(err.splitlines()) == 1, err


def _limit_address_space() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (300000 * 1024, resource.RLIM_INFINITY))


@pytest.mark.parametrize("argv", [["feasible", "ds-fedproxgrad", "--L", "1"], ["check", "--claim", "ds.lemma5_1"]])
def test_an_address_space_limit_too_small_to_load_the_libraries_is_refused_at_once(argv: list[str], tmp_path: Path) -> None:
    """Under ulimit -v 300000, scipy's OpenBLAS could loop for good while loading (SIGTERM ignored); the command refuses
    the limit before it imports them: one line, exit 3, in seconds."""
    got = subprocess.run([sys.executable, "-m", "fedbounds.checks.cli", *argv], preexec_fn=_limit_address_space,
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert got.returncode == 3, got.stderr
    assert got.stderr.strip() == ("fedbounds: error: the address-space limit ulimit -v 300000 (KiB) is below the 500000 KiB "
                                  "that numpy, scipy and the solvers need to load (under it their start-up can hang); raise the limit")


def test_claims_needs_no_numerical_library_and_runs_under_that_limit(tmp_path: Path) -> None:
    """The same limit: ``claims`` is not refused (it loads no numerical library). Run once, not once per refused command."""
    claims = subprocess.run([sys.executable, "-m", "fedbounds.checks.cli", "claims", "--id", "ds.lemma5_1"],
                            preexec_fn=_limit_address_space, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert claims.returncode == 0, claims.stderr
