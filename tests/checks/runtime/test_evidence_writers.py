"""The evidence generators refuse an unwritable target in one line, before any solving (a read-only install used to
solve for minutes and end in a traceback)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from fedbounds.checks.runtime import install

GENERATORS = ("fedbounds.checks.fednmap.pep.window", "fedbounds.checks.fednmap.spep.replay",
              "fedbounds.checks.fednmap.spep.speedup")


@pytest.mark.parametrize("module", GENERATORS)
def test_an_unwritable_evidence_file_is_refused_before_computing(module: str, tmp_path: Path, monkeypatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    mod = importlib.import_module(module)
    target = tmp_path / "missing" / "evidence.json"
    monkeypatch.setattr(install, "evidence_path", lambda relative: target)

    def computing(*a, **k):
        raise AssertionError("computed before checking the target")

    for name in ("compute", "evidence", "table"):
        if hasattr(mod, name):
            monkeypatch.setattr(mod, name, computing)
    assert mod.main(["--write"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err and "does not exist" in err


def test_unwritable_names_the_reason(tmp_path: Path, monkeypatch) -> None:
    assert install.unwritable(tmp_path / "x.json") is None
    assert "does not exist" in install.unwritable(tmp_path / "no" / "x.json")
    monkeypatch.setattr(install.os, "access", lambda p, mode: False)  # root ignores permission bits
    assert "read-only" in install.unwritable(tmp_path / "x.json")


def test_write_evidence_fails_in_one_line(tmp_path: Path, monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert install.write_evidence(tmp_path / "ok.json", "{}", "1 row") == 0
    from fedbounds.theory.core.evidence import load

    assert load(tmp_path / "ok.json")["schema_version"] == 1 and "1 row" in capsys.readouterr().out  # stamped

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(install, "write_atomic", full)
    assert install.write_evidence(tmp_path / "ok.json", "{}") == 3  # out of disk: the environment
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left" in err
