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
