"""Noise beyond the one line (issue 24, item 7): a broken optional cvxpy solver, a partial store's report,
dask.distributed's shutdown logs. Each test fails on the code before the fix (see each docstring)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from fedbounds.checks.report.quiet import CVXPY_LOGGER, quiet_cvxpy_solver_probe, quiet_distributed
from fedbounds.checks.sweep.report import Point, _plot_axis

#: optional solvers cvxpy probes at import; each stand-in raises ImportError (not ModuleNotFoundError), which
#: is what an installed but broken solver does ("initialization failed")
BROKEN = ("highspy", "gurobipy", "ecos", "cylp")


def _broken_solvers(tmp_path: Path) -> dict[str, str]:
    for name in BROKEN:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text('raise ImportError("initialization failed")\n')
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    return env


def _stderr(code: str, env: dict[str, str], cwd: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()


@pytest.mark.slow  # 32 s at load 5-7 (pytest --durations, 2026-12-04)
def test_broken_solver_costs_one_line(tmp_path: Path) -> None:
    """Importing cvxpy (through PEPit, as the checks do) with four broken optional solvers writes one line on
    stderr, naming a solver. Control: cvxpy imported without fedbounds.checks writes two lines per solver
    (today's behaviour everywhere, since nothing filtered cvxpy's logger)."""
    env = _broken_solvers(tmp_path)
    raw = _stderr("import cvxpy", env, tmp_path)
    assert len(raw) >= 2 * len(BROKEN) and "Encountered unexpected exception importing solver" in raw[0]
    lines = _stderr("import fedbounds.checks, PEPit, cvxpy; cvxpy.installed_solvers()", env, tmp_path)
    assert len(lines) == 1, lines
    assert "cannot be imported (ImportError('initialization failed'))" in lines[0]


def test_filter_passes_other_cvxpy_messages() -> None:
    """The filter drops solver-probe failures only; cvxpy's other warnings still reach the user."""
    f = quiet_cvxpy_solver_probe()
    assert quiet_cvxpy_solver_probe() is f and logging.getLogger(CVXPY_LOGGER).filters.count(f) == 1
    other = logging.LogRecord(CVXPY_LOGGER, logging.WARNING, __file__, 1, "Solution may be inaccurate.", (), None)
    assert f.filter(other)


def test_partial_store_figure_draws_no_empty_legend(tmp_path: Path) -> None:
    """A panel in which no point reached its target yet (a partial store) has nothing labelled: the figure is
    drawn without matplotlib's "No artists with labels found to put in legend" warning (before: the warning)."""
    points = [Point(coords={"n": n, "Q": 1}, seeds=[0], rounds=[None], statuses=["not_reached"]) for n in (1, 2, 4)]
    settings = {"level": 0.95, "grid_keys": ["n", "Q"], "tune": [], "axes": ["n"], "expected_slope": -1.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = _plot_axis("partial", "n", points, settings, tmp_path, [])
    assert path is not None and path.exists()


def test_quiet_distributed_silences_below_error() -> None:
    """After quiet_distributed(), distributed's loggers drop warnings and keep errors, here and in the dask
    config that a cluster's worker processes read."""
    dask = pytest.importorskip("dask")
    names = ("distributed", "distributed.worker", "distributed.scheduler", "tornado")
    saved = {n: logging.getLogger(n).level for n in names}
    try:
        with dask.config.set({"logging": {}}):
            quiet_distributed()
            assert dask.config.get("logging.distributed") == "error"
        for n in names:
            assert not logging.getLogger(n).isEnabledFor(logging.WARNING), n
            assert logging.getLogger(n).isEnabledFor(logging.ERROR), n
    finally:
        for n, level in saved.items():
            logging.getLogger(n).setLevel(level)
