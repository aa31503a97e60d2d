"""``fedbounds check`` is quick to answer (issue 20, item 2): its first line (the claims, the profile, the processes,
an estimate from the measured cost table) comes before any heavy import, ``--jobs N`` runs claims in worker
processes with the same report as a serial run, and those workers never import from the current folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.commands import check
from fedbounds.checks.registry import all_checks
from fedbounds.checks.runtime import costs

ROOT = Path(__file__).resolve().parents[2]
#: two cheap claims (under a second each): the erratum evidence and a DS erratum with its control
PAIR = ["erratum.ds_phi_prefix", "erratum.ds_inexactness_gradient_step"]


def _rows(report: Path) -> list[str]:
    """The report's claims without their timings (wall and CPU seconds differ from run to run)."""
    out = []
    for c in json.loads(report.read_text(encoding="utf-8"))["claims"]:
        c = {k: v for k, v in c.items() if k not in ("elapsed_s", "cpu_s")}
        out.append(json.dumps(c, sort_keys=True))
    return out


@pytest.mark.slow  # 28 s at load 5-7 (pytest --durations, 2026-12-04)
def test_jobs_2_gives_the_serial_report_and_ignores_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    args = [a for c in PAIR for a in ("--claim", c)]
    assert main(["check", *args, "--out", str(tmp_path / "serial"), "--no-progress"]) == 0
    # a current folder whose fedbounds package is broken, first on the path (as python -m or a script in it puts it;
    # '' alone a spawned worker reads as the folder the parent started in): a worker importing from it fails its claims
    bad = tmp_path / "cwd"
    (bad / "fedbounds").mkdir(parents=True)
    (bad / "fedbounds" / "__init__.py").write_text("raise ImportError('imported from the current folder')\n")
    monkeypatch.chdir(bad)
    monkeypatch.setattr(sys, "path", [str(bad), "", *sys.path])
    assert main(["check", *args, "--out", str(tmp_path / "jobs"), "--no-progress", "--jobs", "2"]) == 0
    serial, jobs = _rows(tmp_path / "serial" / "report.json"), _rows(tmp_path / "jobs" / "report.json")
    assert len(serial) == 2 and jobs == serial
    assert "2 processes" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["0", "-1", "two", ""])
def test_bad_jobs_is_one_line_exit_2(value: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", "--claim", PAIR[0], "--jobs", value, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--jobs" in err


def test_jobs_auto_is_the_cores() -> None:
    assert check.jobs_arg("auto") == min(check.available_cores(), check.MAX_AUTO_JOBS) >= 1
    assert check.jobs_arg("3") == 3


def test_first_line_comes_before_the_heavy_imports() -> None:
    code = ("import sys\n"
            "from fedbounds.checks.commands import check\n"
            "assert check.announce(['fednmap.theorem8', 'ds.'], 'quick', 2)\n"
            "print(sorted(m for m in ('numpy', 'scipy', 'sympy', 'cvxpy', 'PEPit', 'matplotlib') if m in sys.modules))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT.parent)
    assert res.returncode == 0, res.stderr
    first, imported = res.stdout.strip().splitlines()
    n_ds = len(costs.matching_ids(["ds"], costs.QUICK_CPU_S) or [])
    assert first.startswith(f"fedbounds check: {1 + n_ds} claims, quick profile, 2 processes: about ")
    assert "estimate" in first and imported == "[]"


def test_the_command_prints_the_estimate_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--claim", PAIR[0], "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("fedbounds check: 1 claim, quick profile, 1 process: about ")


def test_an_unknown_claim_prints_no_estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--claim", "no.such.claim", "--out", str(tmp_path)]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1


def test_the_cost_table_knows_every_claim() -> None:
    """The estimate is only as good as its table: a claim added without rerunning the benchmark fails here."""
    ids = {s.check_id for s in all_checks()}
    missing, stale = sorted(ids - set(costs.QUICK_CPU_S)), sorted(set(costs.QUICK_CPU_S) - ids)
    assert not missing and not stale, (f"cost table out of date (missing {missing}, stale {stale}): "
                                       "run python benchmarks/bench_quick_check.py --write")
    assert all(v > 0 for v in costs.QUICK_CPU_S.values())


def test_estimate_schedules_the_longest_claims_first() -> None:
    assert costs.schedule([5, 4, 3, 3, 3], 2) == 10  # longest first to the least loaded: {5, 3}, {4, 3, 3}
    assert costs.schedule([5, 4, 3], 1) == 12
    assert costs.schedule([10, 1, 1], 4) == 10
    assert costs.matching_ids(["ds."], ["ds.a", "dsx.b", "ds.b.c", "fednmap.x"]) == ["ds.a", "ds.b.c"]
    assert costs.matching_ids(["ds.a", "nope"], ["ds.a"]) is None


def test_readme_and_help_quote_the_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    figure = costs.figure()
    assert "measured by benchmarks/bench_quick_check.py" in figure
    assert figure in (ROOT / "README.md").read_text(encoding="utf-8").replace("\n", " ")
    assert main(["check", "--help"]) == 0
    assert "bench_quick_check.py" in " ".join(capsys.readouterr().out.split())
