"""The mutation harness (benchmarks/mutants.py) on tiny synthetic modules and a tiny project in tmp_path.

Generation (sites found, ids stable, bytes outside the span untouched), restoration (after an exception, after a
crash that left a backup, never over a concurrent edit), the lock, argument errors, and one real run in which
pytest (a subprocess) kills one mutant and lets another survive. Never touches the repository's own files.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

MUTANTS_PY = Path(__file__).resolve().parents[2] / "benchmarks" / "mutants.py"


def _load():
    spec = importlib.util.spec_from_file_location("benchmarks_mutants_under_test", MUTANTS_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


mutants = _load()

SYNTHETIC = textwrap.dedent(
    '''\
    """A tiny formula module: 3 and 7 in this docstring are not formula numbers."""
    import numpy as np
    import sympy as sp

    x = sp.Symbol("x")


    def helper(v, k=3):  # the default 3 is a setting
        return v[0] + 36 * v[1] ** 2  # comment: kept byte for byte


    RATE = sp.Rational(3, 2) * x + 1


    class Algo:
        def step(self, z, g, eta):
            z = z - eta * g
            buf = np.add(z, g)
            buf *= eta
            return buf

        def observe(self, z):
            return z + 0
    '''
).encode()


def _line(text: bytes, needle: str) -> tuple[int, str]:
    for i, line in enumerate(text.decode().splitlines(), 1):
        if needle in line:
            return i, line
    raise AssertionError(needle)


def test_constants_found_and_non_formula_numbers_skipped() -> None:
    found, counts = mutants.generate(SYNTHETIC, "pkg/mod.py", ["const"])
    # sites: 36, the exponent 2, Rational(3, 2) (one site, two mutants), the 1 of RATE; not the docstring's numbers,
    # the default k=3, the indices v[0] and v[1], nor the 0 of `z + 0`
    assert counts["const"] == 4
    assert sorted((m.original, m.replacement) for m in found) == sorted(
        [("36", "72"), ("36", "18"), ("2", "4"), ("2", "1"), ("3", "6"), ("2", "4"), ("1", "2"), ("1", "sp.Rational(1, 2)")]
    )
    rational = [m for m in found if m.site.startswith("Rational")]
    assert [m.after for m in rational] == ["RATE = sp.Rational(6, 2) * x + 1", "RATE = sp.Rational(3, 4) * x + 1"]
    line_return, _ = _line(SYNTHETIC, "return v[0]")
    assert len([m for m in found if m.line == line_return]) == 4
    assert all(m.kind == "const" for m in found)


def test_operators_found_only_in_scope() -> None:
    found, counts = mutants.generate(SYNTHETIC, "pkg/mod.py", ["op", "call"], scope=["Algo.step"])
    assert counts["op"] == 3 and counts["call"] == 1
    assert sorted((m.original, m.replacement) for m in found) == [("*", "/"), ("*=", "/="), ("-", "+"), ("add", "subtract")]
    line_step, _ = _line(SYNTHETIC, "z = z - eta * g")
    line_obs, _ = _line(SYNTHETIC, "return z + 0")
    assert {m.line for m in found} >= {line_step} and line_obs not in {m.line for m in found}
    by_rep = {m.replacement: m for m in found}
    assert by_rep["subtract"].after == "buf = np.subtract(z, g)"
    assert by_rep["+"].after == "z = z + eta * g"


def test_ids_are_stable_and_edits_stay_inside_the_span() -> None:
    first, _ = mutants.generate(SYNTHETIC, "pkg/mod.py", ["const", "op", "call"])
    again, _ = mutants.generate(SYNTHETIC + b"\n\ndef later():\n    return 5 * 2\n", "pkg/mod.py", ["const", "op", "call"])
    ids = [m.id for m in first]
    assert len(set(ids)) == len(ids)
    assert set(ids) <= {m.id for m in again}  # appending code changes no existing id
    line, text = _line(SYNTHETIC, "return v[0]")
    assert f"pkg/mod.py:{line}:{text.index('36') + 1}:const:72" in ids
    for m in first:
        out = m.apply(SYNTHETIC)
        assert out[: m.start] == SYNTHETIC[: m.start]
        assert out[m.start + len(m.replacement.encode()) :] == SYNTHETIC[m.end :]
        changed = [i for i, (a, b) in enumerate(zip(SYNTHETIC.splitlines(), out.splitlines(), strict=True), 1) if a != b]
        assert changed == [m.line]
        if m.line == line:
            assert out.splitlines()[line - 1].endswith(b"# comment: kept byte for byte")


def _project(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text("def area(w, h):\n    return w * h\n\n\ndef unused(a, b):\n    return a + b\n")
    (tmp_path / "test_calc.py").write_text(
        "from calc import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n\n\n"
        "def test_work_in_progress():\n    assert False  # fails unmutated: the baseline deselects it\n"
    )
    os.utime(tmp_path / "calc.py", ns=(1_600_000_000_000_000_000, 1_600_000_000_123_456_789))
    return tmp_path / "calc.py"


def _first_mutant(path: Path):
    snap = mutants.snapshot(path)
    found, _ = mutants.generate(snap.data, path.name, ["op"])
    return snap, found[0], found[0].apply(snap.data)


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_restored_after_an_exception(tmp_path: Path, error: type[BaseException]) -> None:
    path = _project(tmp_path)
    snap, m, data = _first_mutant(path)
    backup, sidecar = mutants.backup_paths(path)
    with pytest.raises(error), mutants.mutated(path, snap, data, m.id):
        assert path.read_bytes() == data
        assert backup.read_bytes() == snap.data and json.loads(sidecar.read_text())["mutant"] == m.id
        raise error
    assert path.read_bytes() == snap.data
    assert path.stat().st_mtime_ns == snap.mtime_ns
    assert not backup.exists() and not sidecar.exists()


def test_never_overwrites_a_file_changed_after_the_read_or_during_the_run(tmp_path: Path) -> None:
    path = _project(tmp_path)
    snap, m, data = _first_mutant(path)
    path.write_text(path.read_text() + "# an engineer's edit\n")
    with pytest.raises(mutants.FileChanged), mutants.mutated(path, snap, data, m.id):
        pass
    assert path.read_text().endswith("# an engineer's edit\n")
    assert not mutants.backup_paths(path)[0].exists()

    path = _project(tmp_path)
    snap, m, data = _first_mutant(path)
    with pytest.raises(mutants.StopRun, match="edited while a mutant was in place"), mutants.mutated(path, snap, data, m.id):
        path.write_bytes(data + b"# edited meanwhile\n")
    assert path.read_bytes().endswith(b"# edited meanwhile\n")
    assert mutants.backup_paths(path)[0].read_bytes() == snap.data  # kept for the human


def _crash_with_mutant_in_place(path: Path) -> bytes:
    """A child process writes the first mutant through ``mutated`` and dies without any cleanup."""
    code = textwrap.dedent(
        f"""
        import importlib.util, os, sys
        from pathlib import Path
        spec = importlib.util.spec_from_file_location("m", {str(MUTANTS_PY)!r})
        m = importlib.util.module_from_spec(spec); sys.modules["m"] = m; spec.loader.exec_module(m)
        path = Path({str(path)!r})
        snap = m.snapshot(path)
        mut = m.generate(snap.data, path.name, ["op"])[0][0]
        cm = m.mutated(path, snap, mut.apply(snap.data), mut.id)
        cm.__enter__()
        os._exit(1)  # no finally, no handler: as if killed
        """
    )
    subprocess.run([sys.executable, "-c", code], check=False, timeout=60)
    return path.read_bytes()


def test_crashed_run_backup_is_restored_or_refused(tmp_path: Path) -> None:
    path = _project(tmp_path)
    original, mtime = path.read_bytes(), path.stat().st_mtime_ns
    assert _crash_with_mutant_in_place(path) != original
    notes = mutants.recover(tmp_path, sys.stderr)
    assert len(notes) == 1 and "restored calc.py from a crashed run" in notes[0]
    assert path.read_bytes() == original and path.stat().st_mtime_ns == mtime
    assert not mutants.find_backups(tmp_path)

    _crash_with_mutant_in_place(path)
    path.write_text("edited after the crash\n")
    with pytest.raises(mutants.StopRun, match="differs from its backup"):
        mutants.recover(tmp_path, sys.stderr)
    assert path.read_text() == "edited after the crash\n"


TABLE = [{"files": "calc.py", "mutate": ["operators"], "tests": ["test_calc.py"]}]


@pytest.mark.slow  # 23 s at load 5-7 (pytest --durations, 2026-12-04)
def test_kill_and_survive_with_justification(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _project(tmp_path)
    original = path.read_bytes()
    _crash_with_mutant_in_place(path)  # start-up must restore this first, and say so
    out = tmp_path / "out" / "results.json"
    justified = tmp_path / "justified.toml"
    argv = ["--root", str(tmp_path), "--json", str(out), "--justified", str(justified)]

    assert mutants.main(argv, targets=TABLE) == 1
    captured = capsys.readouterr()
    assert "restored calc.py from a crashed run" in captured.err
    assert "1 test(s) fail unmutated and are deselected: test_calc.py::test_work_in_progress" in captured.err
    assert path.read_bytes() == original and not mutants.find_backups(tmp_path)
    assert not (tmp_path / mutants.LOCK_NAME).exists()
    report = json.loads(out.read_text())
    status = {r["replacement"]: r["status"] for r in report["results"]}
    assert status == {"/": "killed", "-": "survived"}
    assert report["complete"] and report["summary"]["kill_rate"] == 0.5
    assert "killed 1 / total 2 (50.0%), justified 0, unjustified 1" in captured.out
    assert "calc.py:6: return a + b -> return a - b" in captured.out
    survivor = next(r["id"] for r in report["results"] if r["status"] == "survived")
    assert survivor == "calc.py:6:14:op:-"

    justified.write_text(f'# reasons\n"{survivor}" = "unused() is dead code in this toy"\n')
    assert mutants.main([*argv, "--survivors-only"], targets=TABLE) == 0
    captured = capsys.readouterr()
    assert "killed 1 / total 2 (50.0%), justified 1, unjustified 0" in captured.out
    assert "justified: unused() is dead code" in captured.out
    assert path.read_bytes() == original


def test_lock_held_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path)
    lock = tmp_path / mutants.LOCK_NAME
    lock.parent.mkdir()
    lock.write_text(f"{os.getpid()} {os.uname().nodename} now\n")
    assert mutants.main(["--root", str(tmp_path)], targets=TABLE) == 3
    assert "is held by process" in capsys.readouterr().err
    assert lock.exists()


@pytest.mark.parametrize(
    "argv",
    [["--limit", "0"], ["--jobs", "2"], ["--timeout", "-1"], ["--files", "nothing/*.py"], ["--bogus"], ["--sample", "x"]],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    _project(tmp_path)
    assert mutants.main([*argv, "--root", str(tmp_path), "--list"], targets=TABLE) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mutants.py: error:") and "Traceback" not in err


def test_list_and_seeded_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mod.py").write_bytes(SYNTHETIC)
    table = [{"files": "*.py", "mutate": ["constants", "operators"], "tests": ["-q"]}]
    argv = ["--root", str(tmp_path), "--list", "--sample", "4", "--seed", "7"]
    assert mutants.main(argv, targets=table) == 0
    first = capsys.readouterr().out
    assert mutants.main(argv, targets=table) == 0
    assert capsys.readouterr().out == first
    # whole-module operators: the 3 in step, `+` and `**` in helper, `*` and `+` in RATE, `+` in observe
    assert "mod.py: 4 const sites, 9 op sites, 1 call sites; 18 mutants" in first
    assert "4 of 18 mutants listed" in first


def test_id_selects_exactly_the_named_mutants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mod.py").write_bytes(SYNTHETIC)
    table = [{"files": "*.py", "mutate": ["constants", "operators"], "tests": ["-q"]}]
    assert mutants.main(["--root", str(tmp_path), "--list"], targets=table) == 0
    ids = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines() if "\t" in line]
    assert len(ids) == 18
    assert mutants.main(["--root", str(tmp_path), "--list", "--id", ids[3], "--id", ids[11]], targets=table) == 0
    listed = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines() if "\t" in line]
    assert listed == [ids[3], ids[11]]
    assert mutants.main(["--root", str(tmp_path), "--list", "--id", ids[3] + "x"], targets=table) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no mutant with id" in err
