"""``fedbounds check``: argument handling, report files, exit status (0 pass, 1 fail, 2 bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fedbounds.checks import registry
from fedbounds.checks.cli import main
from fedbounds.checks.registry import CheckResult, register
from fedbounds.checks.verdicts.verdict import compare


def test_unknown_claim_is_exit_2_with_ids(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", "--claim", "no.such.claim", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "no.such.claim" in err and "fednmap.theorem8" in err and "ds.lemma5_2" in err


def test_one_claim_writes_report_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc = main(["check", "--claim", "erratum.ds_phi_prefix", "--out", str(tmp_path), "--no-progress", "--seed", "0"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "erratum.ds_phi_prefix" in out and "violated (erratum)" in out
    assert str(tmp_path / "report.json") in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] is True and report["profile"]["name"] == "quick"
    (claim,) = report["claims"]
    assert claim["status"] == "erratum" and claim["verdict"] == "violated" and claim["accepted"]
    assert claim["plot_files"] and (tmp_path / claim["plot_files"][0]).read_bytes()[:4] == b"\x89PNG"


@pytest.fixture()
def fake_checks():
    """Register two throwaway checks (one whose negative control passes, one violated) and remove them after."""
    import numpy as np

    @register("test.toothless", title="t", label="L", status="verbatim", family="test")
    def toothless(ctx):
        res = CheckResult("test.toothless")
        res.verdicts.append(compare("test.toothless", "i", np.array([1.0]), 2.0, exact=True))
        res.negatives.append(compare("test.toothless", "ctrl", np.array([1.0]), 2.0, exact=True).with_details(control="c"))
        return res

    @register("test.violated", title="t", label="L", status="verbatim", family="test")
    def violated(ctx):
        res = CheckResult("test.violated")
        res.verdicts.append(compare("test.violated", "i", np.array([3.0]), 2.0, exact=True))
        return res

    yield
    for cid in ("test.toothless", "test.violated"):
        registry._CHECKS.pop(cid, None)


def test_exit_1_when_a_negative_control_passes(fake_checks, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", "--claim", "test.toothless", "--out", str(tmp_path), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "FAILED (control passed)" in out


def test_exit_1_when_a_claim_is_violated(fake_checks, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", "--claim", "test", "--out", str(tmp_path), "--no-progress"]) == 1
    assert "violated !" in capsys.readouterr().out


def test_unknown_profile_is_usage_error(tmp_path: Path) -> None:
    assert main(["check", "--profile", "huge", "--out", str(tmp_path)]) == 2


def test_an_unusable_out_folder_is_the_only_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out`` under a regular file: one line on stderr, exit 2, and no first line announcing a run that never starts."""
    (tmp_path / "afile").write_text("")
    assert main(["check", "--claim", "erratum.ds_phi_prefix", "--out", str(tmp_path / "afile" / "sub")]) == 2
    out = capsys.readouterr()
    assert out.out == "", out.out
    assert len(out.err.splitlines()) == 1 and "afile" in out.err, out.err
