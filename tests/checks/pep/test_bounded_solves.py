"""Solves that can be interrupted and bounded (issue 24): a solve stopped by a time or memory limit, or interrupted, is
never ``optimal``; the certificate is ``inconclusive`` with a one-line reason."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.pep import bounded
from fedbounds.checks.pep.solve import certify


def _gradient_descent(steps: int):
    """The worst case of f(x_N) - f* of N gradient steps 1/L on an L-smooth convex f, ||x_0 - x*|| <= 1 (a PEP with a
    Gram matrix of N + 3)."""

    def build():
        from PEPit import PEP
        from PEPit.functions import SmoothConvexFunction

        pep = PEP()
        f = pep.declare_function(SmoothConvexFunction, L=1.0)
        xs = f.stationary_point()
        x0 = pep.set_initial_point()
        pep.set_initial_condition((x0 - xs) ** 2 <= 1)
        x = x0
        for _ in range(steps):
            x = x - f.gradient(x)
        pep.set_performance_metric(f(x) - f(xs))
        return pep

    return build


@pytest.fixture(autouse=True)
def _fresh_solver_process(monkeypatch: pytest.MonkeyPatch):
    for name in ("FEDBOUNDS_SOLVER_SECONDS", "FEDBOUNDS_SOLVER_MEMORY"):
        monkeypatch.delenv(name, raising=False)
    yield
    bounded.stop_solver_process()


def _limits(cert) -> list[str]:
    return [r.status for r in cert.runs]


@pytest.mark.slow  # about 8 s: two solver processes started, a PEP built twice
@pytest.mark.parametrize("steps", [8, 20])
def test_a_solve_under_a_tiny_memory_limit_is_inconclusive_with_a_one_line_reason(steps: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # measured: at 8 steps Clarabel aborts (SIGABRT) and SCS reports "ScsWork allocation error!"; at 20 both hit a
    # MemoryError in Python (the data do not fit): each is one line naming the limit, never a crash of fedbounds
    monkeypatch.setenv("FEDBOUNDS_SOLVER_MEMORY", "1M")
    cert = certify(_gradient_descent(steps))
    assert cert.status == "inconclusive" and cert.value is None
    for status in _limits(cert):
        assert status.startswith("limit: ") and "1 MiB" in status, status
        assert "\n" not in status and "Traceback" not in status


def test_a_solve_given_a_tiny_time_limit_is_inconclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEDBOUNDS_SOLVER_SECONDS", "0.0001")
    cert = certify(_gradient_descent(10))
    assert cert.status == "inconclusive" and cert.value is None
    for status in _limits(cert):
        assert status.startswith("limit: time limit of 0.0001 s reached"), status
    assert len(cert.runs) == 2  # not retried: it would only hit the limit again


def _stop_the_solver_process() -> int:
    """Start the solver process (one small solve) and stop it with SIGSTOP: a solver that never returns."""
    assert certify(_gradient_descent(1)).status == "certified"
    pid = bounded._process.proc.pid
    os.kill(pid, signal.SIGSTOP)
    return pid


@pytest.mark.slow  # about 6 s
def test_a_solver_that_does_not_return_is_killed_at_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    pid = _stop_the_solver_process()
    monkeypatch.setenv("FEDBOUNDS_SOLVER_SECONDS", "0.5")
    t0 = time.monotonic()
    cert = certify(_gradient_descent(2), solvers=("CLARABEL",))
    assert time.monotonic() - t0 < 0.5 + bounded.GRACE_S + 5
    assert cert.status == "inconclusive"
    assert cert.runs[0].status.startswith("limit: time limit of 0.5 s reached, the solver process was stopped")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


@pytest.mark.slow  # 19 s at load 5-7 (pytest --durations, 2026-12-04)
def test_ctrl_c_kills_the_solver_process_at_once_and_the_solve_never_returns() -> None:
    pid = _stop_the_solver_process()
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    result = None
    with pytest.raises(KeyboardInterrupt):
        result = certify(_gradient_descent(2))
    assert result is None
    assert time.monotonic() - t0 < 0.5 + 2.0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert bounded._process is None
    assert certify(_gradient_descent(1)).status == "certified"  # the next solve starts a fresh solver process


@pytest.mark.parametrize(("name", "value"), [("FEDBOUNDS_SOLVER_SECONDS", "0"), ("FEDBOUNDS_SOLVER_SECONDS", "soon"),
                                             ("FEDBOUNDS_SOLVER_MEMORY", "12"), ("FEDBOUNDS_SOLVER_MEMORY", "lots")])
def test_a_malformed_limit_is_bad_input_before_anything_runs(name: str, value: str, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    monkeypatch.setenv(name, value)
    assert main(["check", "--claim", "ds.pep", "--out", str(tmp_path / "rep"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"fedbounds: error: {name}={value!r}")
    assert not (tmp_path / "rep" / "report.json").exists()


@pytest.mark.slow  # about 6 s: a fresh interpreter
def test_a_memory_limit_inherited_from_the_shell_is_kept_not_fatal(tmp_path) -> None:
    # ulimit -v 3 GiB below the default limit (half the machine): the solver process cannot raise it, so it keeps the
    # shell's; before, setrlimit failed and every solve read "the solver process died (exit status 1)"
    import resource
    import subprocess
    import sys

    code = ("import sys\nsys.path.insert(0, sys.argv[1])\nfrom test_bounded_solves import _gradient_descent\n"
            "from fedbounds.checks.pep.solve import certify\nprint(certify(_gradient_descent(2)).summary())\n")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("FEDBOUNDS_", "PYTEST_"))}
    res = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, env=env, preexec_fn=limit)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("certified"), res.stdout
