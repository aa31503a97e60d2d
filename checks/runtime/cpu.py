"""CPU seconds of a process tree (Linux ``/proc``), for the studies' RUN.json: a run spread over worker processes
is charged for all of them."""

from __future__ import annotations

import os

__all__ = ["tree_cpu"]


def tree_cpu(root_pid: int, seen: dict[int, float]) -> None:
    """Update ``seen`` (pid -> utime + stime seconds) for every process descended from ``root_pid``."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    stats: dict[int, float] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(d)] = int(fields[1])
        stats[int(d)] = (int(fields[11]) + int(fields[12])) / tick
    for pid, cpu in stats.items():
        p, hops = pid, 0
        while p not in (0, 1) and hops < 50:
            if p == root_pid:
                seen[pid] = max(seen.get(pid, 0.0), cpu)
                break
            p, hops = parents.get(p, 0), hops + 1
