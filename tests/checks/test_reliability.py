"""Reliability of the command line (issue 13): one error boundary, outputs prepared before work, an atomic
``check`` report, closed pipes, the ``claims`` filters, and spec values that cannot run.

Every user-facing failure is one line on stderr naming the thing at fault and exit status 2; an interrupt is
130; a closed stdout is a quiet 141; a bug is "internal error" and 70, with the traceback under ``--debug``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fedbounds.checks import registry
from fedbounds.checks.cli import main
from fedbounds.checks.registry import CheckResult, register

ROOT = Path(__file__).resolve().parents[2]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ---------------------------------------------------------------------------------------------- the boundary


def test_a_bug_is_an_internal_error_exit_70(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import fedbounds.checks.commands.claims as claims

    def broken(args: object) -> int:
        return {}["missing"]  # a KeyError: a bug, not bad input

    monkeypatch.setattr(claims, "run", broken)
    monkeypatch.delenv("FEDBOUNDS_DEBUG", raising=False)
    assert main(["claims"]) == 70
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("fedbounds: internal error: KeyError") and "--debug" in line


def test_a_value_error_from_deep_inside_numpy_is_not_disguised_as_bad_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import fedbounds.checks.commands.claims as claims

    monkeypatch.setattr(claims, "run", lambda args: np.linalg.cholesky(-np.eye(2)))
    monkeypatch.delenv("FEDBOUNDS_DEBUG", raising=False)
    assert main(["claims"]) == 70
    assert "internal error: LinAlgError" in _one_line(capsys.readouterr().err)


def test_debug_flag_and_env_show_the_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import fedbounds.checks.commands.claims as claims

    monkeypatch.setattr(claims, "run", lambda args: 1 / 0)
    monkeypatch.delenv("FEDBOUNDS_DEBUG", raising=False)
    assert main(["--debug", "claims"]) == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err and "internal error" in err
    monkeypatch.setenv("FEDBOUNDS_DEBUG", "1")
    assert main(["claims"]) == 70
    assert "Traceback" in capsys.readouterr().err


def test_interrupt_is_130_in_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import fedbounds.checks.commands.claims as claims

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(claims, "run", interrupted)
    assert main(["claims"]) == 130
    assert _one_line(capsys.readouterr().err) == "fedbounds: interrupted"


def test_help_returns_instead_of_exiting(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert main(["claims", "-h"]) == 0
    assert "usage" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- OS errors


@pytest.fixture
def afile(tmp_path: Path) -> Path:
    f = tmp_path / "afile"
    f.write_text("not a folder")
    return f


def test_unwritable_or_invalid_output_paths_are_one_line(tmp_path: Path, afile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["sweep", "tiny", "--store", str(afile / "s.sqlite"), "--no-progress"], "afile"),
        (["sweep", "tiny", "--store", str(tmp_path), "--no-progress"], str(tmp_path)),
        (["sweep", "tiny", "--store", str(afile / "s.sqlite"), "--dry-run"], "afile"),
        (["report", str(tmp_path)], str(tmp_path)),
        (["report", str(afile)], "afile"),
    ]
    for argv, named in cases:
        assert main(argv) == 2, argv
        line = _one_line(capsys.readouterr().err)
        assert line.startswith("fedbounds") and named in line, (argv, line)


def test_report_out_that_is_a_file_is_one_line(tmp_path: Path, afile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fedbounds.checks.sweep.store import Store

    store = tmp_path / "empty.sqlite"
    Store(store).close()
    assert main(["report", str(store), "--out", str(afile / "rep")]) == 2
    assert "afile" in _one_line(capsys.readouterr().err)


# ---------------------------------------------------------------------------------------------- check


@pytest.fixture
def counting_check():
    """A fast registered check that counts its runs and draws one plot."""
    from fedbounds.checks.registry import Curve, Plot
    from fedbounds.checks.verdicts.verdict import compare

    calls: list[int] = []

    @register("test.rel.fast", title="t", label="L", status="verbatim", family="test")
    def fast(ctx):
        calls.append(1)
        res = CheckResult("test.rel.fast")
        res.verdicts.append(compare("test.rel.fast", "i", np.array([1.0]), 2.0, exact=True))
        res.plots.append(Plot("p", "t", "x", "y", [Curve("observed", [0.0, 1.0], [1.0, 0.5])]))
        return res

    yield calls
    registry._CHECKS.pop("test.rel.fast", None)


def test_check_out_is_tested_before_any_work(counting_check: list[int], afile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for out in (afile, afile / "sub"):
        assert main(["check", "--claim", "test.rel.fast", "--out", str(out), "--no-progress"]) == 2
        assert "afile" in _one_line(capsys.readouterr().err)
    assert counting_check == [], "the checks ran although the output folder was unusable"


def test_check_report_is_atomic_under_interrupt(
    counting_check: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import fedbounds.checks.report.suite as core_report

    out = tmp_path / "rep"
    assert main(["check", "--claim", "test.rel.fast", "--out", str(out), "--no-progress"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "report.json" in before and any(n.endswith(".png") for n in before)
    capsys.readouterr()

    real = core_report.plot_result

    def plot_then_interrupt(plot, path):
        real(plot, path)
        Path(path).write_bytes(b"new plot")
        raise KeyboardInterrupt

    monkeypatch.setattr(core_report, "plot_result", plot_then_interrupt)
    assert main(["check", "--claim", "test.rel.fast", "--out", str(out), "--no-progress", "--seed", "3"]) == 130
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert after == before, "an interrupted write changed the previous report"


def test_check_claim_family_prefix_with_trailing_dot(counting_check: list[int], tmp_path: Path) -> None:
    assert main(["check", "--claim", "test.rel.", "--out", str(tmp_path), "--no-progress"]) == 0
    assert counting_check == [1]
    assert [c["check_id"] for c in json.loads((tmp_path / "report.json").read_text())["claims"]] == ["test.rel.fast"]


def test_readme_family_prefix_ds_dot_selects_the_ds_checks() -> None:
    from fedbounds.checks.commands.check import selected_checks

    ids = [s.check_id for s in selected_checks(["ds."])]
    assert ids and all(i.startswith("ds.") for i in ids)
    assert ids == [s.check_id for s in selected_checks(["ds"])]


def _piped(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``fedbounds ARGV`` with a stdout whose reader has gone (``| head`` that already quit)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([sys.executable, "-m", "fedbounds.checks.cli", *argv], stdout=w, stderr=subprocess.PIPE, cwd=cwd, timeout=120)
    finally:
        os.close(w)


@pytest.mark.slow  # 52 s at load 5-7 (pytest --durations, 2026-12-04)
@pytest.mark.timeout(120)
def test_closed_pipe_is_a_quiet_141_not_fail(tmp_path: Path) -> None:
    res = _piped(["check", "--claim", "erratum.ds_phi_prefix", "--out", str(tmp_path / "rep"), "--no-progress"], tmp_path)
    assert res.returncode == 141, res.stderr.decode()
    assert res.stderr.decode() == ""
    assert (tmp_path / "rep" / "report.json").exists(), "the report must be written before the table is printed"
    res = _piped(["claims", "--json"], tmp_path)
    assert (res.returncode, res.stderr.decode()) == (141, "")


# ---------------------------------------------------------------------------------------------- claims


@pytest.mark.parametrize(
    ("argv", "rc"),
    [
        (["--paper", "fednmap"], 0),
        (["--paper", "ds", "--latex"], 0),
        (["--id", "ds.lemma5_2", "--status", "erratum"], 2),
        (["--id", "ds.lemma5_2", "--paper", "fednmap"], 2),
        (["--id", "ds.lemma5_2", "--paper", "ds", "--json"], 0),
        (["--paper", "nope"], 2),
        (["--width", "0"], 2),
        (["--width", "-5"], 2),
        (["--status", "erratum", "--paper", "fednmap", "--width", "12"], 0),
    ],
)
def test_claims_filter_combinations(argv: list[str], rc: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", *argv]) == rc
    out, err = capsys.readouterr()
    if rc == 0:
        assert out and not err
    else:
        _one_line(err)


# ---------------------------------------------------------------------------------------------- specs

TINY = (ROOT / "checks" / "specs" / "tiny.toml").read_text()


def _sweep_spec(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    spec = tmp_path / "s.toml"
    spec.write_text(text)
    rc = main(["sweep", str(spec), "--store", str(tmp_path / "s.sqlite"), "--processes", "1", "--no-progress", *extra])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("seed = 1", "seed = 1.5", "instance.seed"),
        ("seed = 1", 'seed = "x"', "instance.seed"),
        ("seed = 1", "seed = -3", "instance.seed"),
        ("seeds = [0, 1]", "seeds = {start = 0, count = 1000000000000}", "seeds"),
        ("p = 8", "p = 100000000000", "instance.p"),
        ("m = 100", "m = 100000000000", "instance.m"),
        ("replicas = 4", "replicas = 1000000000000", "replicas"),
    ],
)
def test_spec_values_rejected_up_front(old: str, new: str, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _sweep_spec(tmp_path, TINY.replace(old, new), capsys)
    assert rc == 2
    assert f"'{field}" in _one_line(err)
    assert not (tmp_path / "s.sqlite").exists()


def test_spec_value_that_fails_in_every_cell_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _sweep_spec(tmp_path, TINY.replace("weight = 0.02", "weight = -1.0"), capsys, "--limit", "3")
    assert rc == 2
    line = _one_line(err)
    assert "every cell" in line and "weight" in line


def test_spec_file_that_is_not_utf8_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "latin.toml"
    bad.write_bytes(TINY.replace("Lasso", "Lasso \xe9").encode("latin-1"))
    assert main(["sweep", str(bad), "--dry-run"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(bad) in line and "UTF-8" in line
