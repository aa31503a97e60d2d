"""The benchmark scripts name files that exist: a layout change that moves one fails here, not in a user's hands."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quick_check_benchmark_writes_the_cost_table_the_command_reads() -> None:
    from fedbounds.checks.runtime import costs

    bench = _load("bench_quick_check")
    assert bench.COSTS.resolve() == Path(costs.__file__).resolve()
    assert "# -- written by benchmarks/bench_quick_check.py --write" in bench.COSTS.read_text(encoding="utf-8")
