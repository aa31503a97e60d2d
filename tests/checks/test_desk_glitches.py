"""Small things a reader meets: every shipped spec in ``sweep --help``, no -1 / nan sentinel in the controls tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from fedbounds.checks.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_sweep_help_lists_every_shipped_spec(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        main(["sweep", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    for spec in (ROOT / "checks" / "specs").glob("*.toml"):
        assert spec.stem in text, spec.stem


def test_controls_tables_print_no_sentinels() -> None:
    from fedbounds.checks.registry import CheckResult, CheckSpec
    from fedbounds.checks.report.html import _controls_section
    from fedbounds.checks.report.suite import format_table
    from fedbounds.checks.verdicts.verdict import Verdict

    neg = Verdict("x.y", "nowhere", observed=1.0, bound=2.0, ci_low=1.0, ci_high=1.0, status="violated", slack=float("nan"),
                  exact=True, details={"control": "bound / 10", "control_record": {"violated_at": -1}})
    spec = CheckSpec("x.y", lambda ctx: None, title="t", label="L", status="verbatim")
    res = CheckResult("x.y", verdicts=[], negatives=[neg])
    table = format_table([(spec, res)], 200)
    row = next(ln for ln in table.splitlines() if "bound / 10" in ln)
    assert " -1 " not in f" {row} " and "nan" not in row
    import dataclasses

    page = _controls_section([{"check_id": "x.y", "negatives": [dataclasses.asdict(neg)]}])
    assert ">nan<" not in page
