"""The suite a newcomer runs (issue 20, item 7): ``pytest -q`` on every core, derandomised hypothesis in every worker."""

import os
import tomllib
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]


def test_pytest_q_runs_on_every_core_with_xdist_installed_by_the_dev_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "-n auto" in project["tool"]["pytest"]["ini_options"]["addopts"]
    assert any(d.replace(" ", "").startswith("pytest-xdist>=") for d in project["project"]["optional-dependencies"]["dev"])


@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci", reason="another hypothesis profile was asked for")
def test_hypothesis_is_derandomised_in_this_worker() -> None:
    """conftest.py loads the ``ci`` profile in each xdist worker (every worker imports it), so no worker searches at random."""
    assert settings().derandomize and settings().database is None


def test_every_slow_case_names_a_test(slow_cases_unmatched: list[str]) -> None:
    """A case listed slow in conftest.py whose test was renamed would run in the default suite again: refused."""
    assert not slow_cases_unmatched


def test_the_heavy_claims_are_claims(heavy_claims: frozenset[str]) -> None:
    """conftest.HEAVY_CLAIMS by name: a typo would put a heavy claim's quick run back into the default suite."""
    from fedbounds.checks.registry import all_checks

    ids = {s.check_id for s in all_checks()}
    assert heavy_claims and heavy_claims <= ids, heavy_claims - ids
