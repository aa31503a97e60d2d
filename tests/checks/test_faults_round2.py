"""Faults, second round (issue 24): interrupts that interrupt, nothing run from the current folder, stores that
are real files and checkpointed, input that is refused up front, and streams that name themselves.

Each test reproduces one class of the probe and failed on the code before the fix.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fedbounds.checks.cli import main

ROOT = Path(__file__).resolve().parents[2]

SLOW_CELL = """
import os
import time

from fedbounds.checks.sweep.cell import summarize


def cell(config):
    with open(os.path.join(os.environ["FAULT_DIR"], f"started-{os.getpid()}"), "w"):
        pass
    time.sleep(600.0)
"""

SLOW_SPEC = """
name = "slow"
algorithm = "fednmap"
cell = "faults_slow_cell:cell"
rounds = 10
replicas = 2
seeds = [0, 1, 2, 3, 4, 5, 6, 7]
metrics = ["psi_gap"]

[instance]
name = "synthetic"

[grid]
n = [1]

[target]
metric = "psi_gap"
value = 0.05
"""


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def _popen(cmd: list[str], **kw) -> subprocess.Popen:
    """The command in its own session, so that :func:`_kill_all` can end it with every process it started."""
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)


def _kill_all(proc: subprocess.Popen) -> None:
    """SIGKILL the command's whole session (its pool's forkserver and workers too: a failed test must not leave a
    sweep running that slows every later test), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FEDBOUNDS_", "PYTEST_"))}
    env.update(extra)
    return env


# ---------------------------------------------------------------------------------------------- 1. interrupts


def _start_slow_sweep(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    mods = tmp_path / "mods"
    mods.mkdir(exist_ok=True)
    (mods / "faults_slow_cell.py").write_text(SLOW_CELL)
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW_SPEC)
    runs = tmp_path / "runs"
    runs.mkdir()
    env = _env(
        FAULT_DIR=str(runs),
        FEDBOUNDS_CELLS="faults_slow_cell:cell",
        PYTHONPATH=os.pathsep.join([str(mods), os.environ.get("PYTHONPATH", "")]),
    )
    cmd = [sys.executable, "-m", "fedbounds.checks.cli", "sweep", str(spec), "--store", str(tmp_path / "s.sqlite"), "--processes", "2"]
    proc = _popen([*cmd, "--no-progress"], cwd=tmp_path, env=env)
    deadline = time.monotonic() + 90
    while len(list(runs.glob("started-*"))) < 2:  # both workers busy with a cell
        if time.monotonic() > deadline or proc.poll() is not None:
            _kill_all(proc)
            pytest.fail("the workers never started a cell")
        time.sleep(0.1)
    return proc, runs


def _pids_alive(runs: Path) -> list[int]:
    alive = []
    for f in runs.glob("started-*"):
        pid = int(f.name.split("-")[1])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        alive.append(pid)
    return alive


def _interrupt_trial(tmp_path: Path, sig: int, expected: int) -> None:
    proc, runs = _start_slow_sweep(tmp_path)
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=5)  # the figure; a pool shutdown takes well under a second
    except subprocess.TimeoutExpired:
        _kill_all(proc)
        pytest.fail(f"signal {sig}: the sweep was still running 5 s later")
    assert time.monotonic() - t0 < 5
    assert proc.returncode == expected, err
    assert "Traceback" not in err
    deadline = time.monotonic() + 3
    while _pids_alive(runs) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pids_alive(runs) == [], "a worker outlived the interrupted sweep"


@pytest.mark.slow  # 10 s at load 5-7 (pytest --durations, 2026-12-04)
def test_ctrl_c_ends_a_two_process_sweep_within_5_s_with_130(tmp_path: Path) -> None:
    _interrupt_trial(tmp_path, signal.SIGINT, 130)


@pytest.mark.slow  # 14 s at load 5-7 (pytest --durations, 2026-12-04)
def test_sigterm_ends_a_two_process_sweep_within_5_s_with_143(tmp_path: Path) -> None:
    _interrupt_trial(tmp_path, signal.SIGTERM, 143)


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(20))
def test_ctrl_c_ends_a_sweep_every_time(trial: int, tmp_path: Path) -> None:
    _interrupt_trial(tmp_path, signal.SIGINT, 130)


# ---------------------------------------------------------------------------------------------- 2. the current folder


@pytest.mark.slow  # 34 s at load 5-7 (pytest --durations, 2026-12-04)
def test_a_multiprocess_sweep_never_imports_from_the_current_folder(tmp_path: Path) -> None:
    marker = tmp_path / "user-code-ran"
    for name in ("csv", "random", "json"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\nraise RuntimeError('user {name}.py')\n")
    store = tmp_path / "s.sqlite"
    cmd = [str(Path(sys.executable).with_name("fedbounds")), "sweep", "tiny", "--store", str(store), "--processes", "2", "--limit", "4"]
    res = subprocess.run([*cmd, "--no-progress"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    assert not marker.exists(), f"user code in the current folder ran: {marker.read_text()}"


@pytest.mark.parametrize("cell", ["os:system", "subprocess:run", "fedbounds.checks.cli:main"])
def test_a_spec_cannot_name_arbitrary_code(cell: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "evil.toml"
    spec.write_text(SLOW_SPEC.replace('"faults_slow_cell:cell"', repr(cell).replace("'", '"')))
    assert main(["sweep", str(spec), "--dry-run"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "cell" in line and "not a registered cell function" in line


def test_a_cell_of_ones_own_is_allowed_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "own.toml"
    spec.write_text(SLOW_SPEC)
    monkeypatch.setenv("FEDBOUNDS_CELLS", "faults_slow_cell:cell")
    assert main(["sweep", str(spec), "--store", str(tmp_path / "s.sqlite"), "--dry-run"]) == 0


# ---------------------------------------------------------------------------------------------- 3. stores


def test_an_in_memory_store_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    for store in (":memory:", "file:x?mode=memory"):
        assert main(["sweep", "tiny", "--store", store, "--limit", "1", "--processes", "1", "--no-progress"]) == 2
        line = _one_line(capsys.readouterr().err)
        assert "in-memory" in line


def test_a_fifo_store_is_refused_without_blocking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "s.sqlite"
    os.mkfifo(fifo)
    assert main(["sweep", "tiny", "--store", str(fifo), "--limit", "1", "--processes", "1", "--no-progress"]) == 2
    assert "not a regular file" in _one_line(capsys.readouterr().err)


def test_a_symlink_loop_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tmp_path / "loop.sqlite"
    loop.symlink_to(loop)
    assert main(["sweep", "tiny", "--store", str(loop), "--limit", "1", "--processes", "1", "--no-progress"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "File exists" not in line and "symbolic link" in line


@pytest.mark.slow  # 20 s at load 5-7 (pytest --durations, 2026-12-04)
def test_after_a_crash_the_main_file_alone_holds_every_stored_cell(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    code = (
        "import os, sys\n"
        "from fedbounds.checks.sweep.runner import run_sweep\n"
        "from fedbounds.checks.sweep.spec import load_spec\n"
        "from fedbounds.checks.sweep import store as st\n"
        "real = st.Store.put\n"
        "def put(self, *a, **k):\n"
        "    out = real(self, *a, **k)\n"
        "    if self.count() == 3:\n"
        "        os._exit(9)  # a crash: no close, no checkpoint at exit\n"
        "    return out\n"
        "st.Store.put = put\n"
        f"run_sweep(load_spec('tiny'), {str(store)!r}, processes=1, progress=False)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 9, res.stderr
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(store.read_bytes())  # the .sqlite alone, as a user copies it after the crash
    con = sqlite3.connect(copy)
    assert con.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == 3
    con.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permissions; read-only media cannot be simulated without a mount")
def test_a_sound_store_on_read_only_media_can_be_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "ro" / "s.sqlite"
    assert main(["sweep", "tiny", "--store", str(store), "--limit", "3", "--processes", "1", "--no-progress"]) == 0
    store.parent.chmod(0o555)
    store.chmod(0o444)
    try:
        assert main(["report", str(store), "--out", str(tmp_path / "rep")]) in (0, 1)
    finally:
        store.parent.chmod(0o755)


def test_read_only_open_of_a_store_in_an_unwritable_folder_uses_immutable_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fedbounds.checks.sweep import store as store_mod

    path = tmp_path / "s.sqlite"
    assert main(["sweep", "tiny", "--store", str(path), "--limit", "2", "--processes", "1", "--no-progress"]) == 0
    seen: list[str] = []
    real = sqlite3.connect

    def spy(target: object, *a: object, **k: object) -> sqlite3.Connection:
        seen.append(str(target))
        return real(target, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(store_mod.os, "access", lambda p, mode: False)
    monkeypatch.setattr(store_mod.sqlite3, "connect", spy)
    with store_mod.Store(path, readonly=True) as st:
        assert st.count() == 2
    assert seen and "immutable=1" in seen[0]


# ---------------------------------------------------------------------------------------------- 4. bad input


@pytest.mark.parametrize(
    "argv, culprit",
    [
        (["sweep", "tiny", "--scheduler", "not a url"], "--scheduler"),
        (["sweep", "tiny", "--scheduler", ""], "--scheduler"),
        (["sweep", "tiny", "--store", ""], "--store"),
        (["report", "tiny", "--out", ""], "--out"),
        (["check", "--out", "", "--claim", "ds.lemma5_2"], "--out"),
        (["check", "--seed", "-1", "--claim", "ds.lemma5_2"], "--seed"),
    ],
)
def test_bad_arguments_are_refused_up_front(argv: list[str], culprit: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert culprit in _one_line(capsys.readouterr().err)


def _spec_with(tmp_path: Path, text: str) -> Path:
    spec = tmp_path / "s.toml"
    spec.write_text(text)
    return spec


def test_a_deeply_nested_spec_is_bad_input_not_a_bug(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec_with(tmp_path, "x = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["sweep", str(spec), "--dry-run"]) == 2
    assert "too deeply" in _one_line(capsys.readouterr().err)


def test_a_spec_that_is_a_device_is_not_read(capsys: pytest.CaptureFixture[str]) -> None:
    t0 = time.monotonic()
    assert main(["sweep", "/dev/zero", "--dry-run"]) == 2
    assert time.monotonic() - t0 < 5
    assert "not a regular file" in _one_line(capsys.readouterr().err)


def test_a_long_spec_name_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tiny = (ROOT / "checks" / "specs" / "tiny.toml").read_text()
    spec = _spec_with(tmp_path, tiny.replace('name = "tiny"', f'name = "{"a" * 300}"'))
    assert main(["sweep", str(spec), "--dry-run"]) == 2
    assert "at most 64" in _one_line(capsys.readouterr().err)


def test_a_cell_that_would_run_for_hours_is_refused_and_the_limit_can_be_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = (ROOT / "checks" / "specs" / "tiny.toml").read_text()
    spec = _spec_with(tmp_path, tiny.replace("Q = [1, 2]", "Q = [1, 1000000000000]"))
    assert main(["sweep", str(spec), "--dry-run", "--store", str(tmp_path / "s.sqlite")]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "grid.Q" in line and "operations" in line
    monkeypatch.setenv("FEDBOUNDS_MAX_CELL_WORK", "1e30")
    assert main(["sweep", str(spec), "--dry-run", "--store", str(tmp_path / "s.sqlite")]) == 0


@pytest.mark.slow  # 39 s at load 5-7 (pytest --durations, 2026-12-04)
def test_a_bogus_matplotlib_backend_does_not_break_a_run(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "fedbounds.checks.cli", "feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "10", "--Q", "5",
         "--plot", str(tmp_path / "r.png")],
        env=_env(MPLBACKEND="bogus"), capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert "internal error" not in res.stderr, res.stderr
    assert (tmp_path / "r.png").exists()


@pytest.mark.parametrize("value, debug", [("false", False), ("0", False), ("off", False), ("", False), ("1", True), ("yes", True)])
def test_fedbounds_debug_reads_false_as_false(
    value: str, debug: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import fedbounds.checks.commands.claims as claims

    monkeypatch.setattr(claims, "run", lambda args: {}["missing"])
    monkeypatch.setenv("FEDBOUNDS_DEBUG", value)
    assert main(["claims"]) == 70
    assert ("Traceback" in capsys.readouterr().err) is debug


def test_fedbounds_debug_with_a_meaningless_value_is_bad_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FEDBOUNDS_DEBUG", "maybe")
    assert main(["claims"]) == 2
    assert "FEDBOUNDS_DEBUG" in _one_line(capsys.readouterr().err)


# ---------------------------------------------------------------------------------------------- 5. streams


def _run_shell(cmd: str, tmp_path: Path) -> subprocess.CompletedProcess:
    fb = Path(sys.executable).with_name("fedbounds")
    return subprocess.run(["bash", "-c", cmd.replace("FB", str(fb))], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_env())


def test_closed_stdout_is_one_line_exit_2_not_a_bug(tmp_path: Path) -> None:
    res = _run_shell("FB claims >&-", tmp_path)
    assert res.returncode == 2
    assert "standard output is closed" in _one_line(res.stderr)


@pytest.mark.slow  # 9 s at load 5-7 (pytest --durations, 2026-12-04)
def test_closed_stderr_never_sends_errors_into_stdout(tmp_path: Path) -> None:
    res = _run_shell("FB claims --json --no-such-flag 2>&-", tmp_path)
    assert res.returncode == 2
    assert res.stdout == ""


@pytest.mark.slow  # 17 s at load 5-7 (pytest --durations, 2026-12-04)
def test_a_full_stdout_names_standard_output(tmp_path: Path) -> None:
    res = _run_shell("FB claims > /dev/full", tmp_path)
    assert res.returncode == 3  # out of disk is the environment (the exit-status table; test_faults_round3.py)
    line = _one_line(res.stderr)
    assert "standard output" in line and "No space left" in line


def test_stdout_that_cannot_encode_escapes_instead_of_failing(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    import fedbounds.checks.commands.claims as claims

    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    monkeypatch.setattr(claims, "run", lambda args: print("psi(x) - psi* \u2264 36 \u03c3\u00b2 / (m n \u03bc Q)") or 0)
    assert main(["claims"]) == 0
    ascii_out.flush()
    assert raw.getvalue().decode("ascii").startswith("psi(x) - psi* \\u2264 36")


# ---------------------------------------------------------------------------------------------- 1b. PEP solves


def _interrupt_pep_check(tmp_path: Path, delay: float, limit: float) -> tuple[int, float, str]:
    # the full profile's FedNMap PEP family runs for minutes, so any delay past the imports lands inside the solves
    # (Clarabel's and SCS's; SCS installs its own SIGINT handler while it runs)
    out = tmp_path / "rep"
    cmd = [sys.executable, "-m", "fedbounds.checks.cli", "check", "--claim", "fednmap.pep", "--profile", "full", "--jobs", "1"]
    cmd += ["--out", str(out), "--no-progress"]
    proc = _popen(cmd, cwd=tmp_path, env=_env())
    time.sleep(delay)
    assert proc.poll() is None, "the check ended before it could be interrupted"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        _kill_all(proc)
        pytest.fail(f"Ctrl-C: the PEP check was still running {limit} s later")
    return proc.returncode, time.monotonic() - t0, err


# slow (13 s on 2 slow cores): tests/checks/pep/test_bounded_solves.py kills a solve at once in the default run, and
# the 20-trial test below runs a whole PEP check
@pytest.mark.slow
def test_ctrl_c_during_pep_solves_exits_130_and_writes_no_report(tmp_path: Path) -> None:
    # 10 s while the rest of the suite loads both cores; the slow test below holds it to 5 s, 20 times
    rc, _, err = _interrupt_pep_check(tmp_path, 12.0, limit=10.0)
    assert rc == 130, err
    assert _one_line(err) == "fedbounds: interrupted"
    assert not (tmp_path / "rep" / "report.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(20))
def test_ctrl_c_ends_a_pep_check_within_5_s_every_time(trial: int, tmp_path: Path) -> None:
    rc, seconds, err = _interrupt_pep_check(tmp_path, 8.0 + trial, limit=5.0)
    print(f"trial {trial}: exit {rc} {seconds:.2f} s after SIGINT")  # -rP shows the 20 durations
    assert rc == 130, err
    assert seconds < 5


# ---------------------------------------------------------------------------------------------- 3b. the check report


def _report(folder: Path, plots: list[str], tag: str) -> None:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    for name in plots:
        (folder / name).write_text(tag)
    (folder / "index.html").write_text(tag)
    (folder / "report.json").write_text(json.dumps({"tag": tag, "claims": [{"plot_files": plots}]}))


def test_a_failed_install_keeps_the_previous_report_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fedbounds.checks.commands import check
    from fedbounds.checks.runtime import install

    out, new = tmp_path / "out", tmp_path / "out" / ".check-new"
    _report(out, ["a.png", "b.png"], "old")
    _report(new, ["a.png", "c.png"], "new")
    real = os.replace

    def failing(src: object, dst: object) -> None:
        if Path(str(src)) == new / "report.json":
            raise OSError(28, "No space left on device")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(install.os, "replace", failing)
    with pytest.raises(OSError) as err:
        check.install(new, out)
    assert err.value.filename == str(out) and "previous report is kept" in str(err.value)
    assert {p.name for p in out.iterdir() if not p.name.startswith(".")} == {"a.png", "b.png", "index.html", "report.json"}
    assert all((out / n).read_text() == "old" for n in ("a.png", "b.png", "index.html")) and '"old"' in (out / "report.json").read_text()


def test_a_successful_install_replaces_the_previous_report_and_its_plots(tmp_path: Path) -> None:
    from fedbounds.checks.commands import check

    out, new = tmp_path / "out", tmp_path / "out" / ".check-new"
    _report(out, ["a.png", "b.png"], "old")
    _report(new, ["a.png", "c.png"], "new")
    check.install(new, out)
    assert {p.name for p in out.iterdir() if not p.name.startswith(".")} == {"a.png", "c.png", "index.html", "report.json"}
    assert (out / "a.png").read_text() == "new"


def test_temporary_folders_of_killed_runs_are_removed(tmp_path: Path) -> None:
    from fedbounds.checks.commands import check

    out = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = out / f".check-{dead.pid}-abc"
    orphan.mkdir(parents=True)
    live = out / f".check-{os.getppid()}-abc"
    live.mkdir()
    tmp = check.prepare_out(out)
    assert not orphan.exists() and live.exists() and tmp.exists()


@pytest.mark.slow  # 26 s at load 5-7 (pytest --durations, 2026-12-04)
def test_report_is_installed_whole_and_replaces_only_its_own_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from fedbounds.checks.sweep import report as sweep_report

    store = tmp_path / "s.sqlite"
    assert main(["sweep", "tiny", "--store", str(store), "--limit", "8", "--processes", "1", "--no-progress"]) == 0
    out = tmp_path / "rep"
    out.mkdir()
    (out / "mine.txt").write_text("a user's file")
    (out / "rounds_vs_old_spec.png").write_text("another spec's figure")
    (out / ".fedbounds-report.json").write_text('["rounds_vs_old_spec.png", "cells.csv"]')
    (out / "cells.csv").write_text("previous cells")
    real = sweep_report.write_report

    def half_way(store_path: object, out_dir: object) -> object:
        real(store_path, out_dir)
        raise OSError(28, "No space left on device", str(out_dir))

    monkeypatch.setattr(sweep_report, "write_report", half_way)
    assert main(["report", str(store), "--out", str(out)]) == 3  # out of disk: the environment
    capsys.readouterr()
    assert (out / "cells.csv").read_text() == "previous cells" and (out / "rounds_vs_old_spec.png").exists()
    assert sorted(p.name for p in out.iterdir()) == [".fedbounds-report.json", "cells.csv", "mine.txt", "rounds_vs_old_spec.png"]

    monkeypatch.setattr(sweep_report, "write_report", real)
    assert main(["report", str(store), "--out", str(out)]) == 0
    names = {p.name for p in out.iterdir()}
    assert "rounds_vs_old_spec.png" not in names and "mine.txt" in names
    assert {"cells.csv", "points.csv", "slopes.csv", "index.html"} <= names
    assert not [n for n in names if n.startswith((".report-", ".old-"))]


def test_every_shipped_spec_names_a_registered_cell() -> None:
    from fedbounds.checks.sweep.spec import load_spec

    for path in sorted((ROOT / "checks" / "specs").glob("*.toml")):
        load_spec(path)  # raises SpecError('cell', ...) for an unregistered cell


@pytest.mark.parametrize("delay", [1.5, 3.0])
def test_ctrl_c_while_the_pool_starts_is_one_line(delay: float, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "fedbounds.checks.cli", "sweep", "fednmap_speedup", "--store", str(tmp_path / "s.sqlite")]
    proc = _popen([*cmd, "--processes", "2", "--no-progress"], cwd=tmp_path, env=_env())
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        _kill_all(proc)
        pytest.fail(f"Ctrl-C {delay} s after the start: the sweep was still running 30 s later")
    assert proc.returncode == 130
    assert _one_line(err) == "fedbounds: interrupted"


def test_a_failed_plot_keeps_the_previous_plot_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from matplotlib.figure import Figure

    plot = tmp_path / "region.png"
    argv = ["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "10", "--Q", "5", "--plot", str(plot)]
    assert main(argv) == 0
    before = plot.read_bytes()
    real = Figure.savefig

    def full_disk(self: Figure, fname: object, *a: object, **k: object) -> None:
        real(self, fname, *a, **k)
        Path(str(fname)).write_bytes(b"\x89PNG truncated")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", full_disk)
    assert main(argv) == 2
    assert "previous plot is kept" in _one_line(capsys.readouterr().err)
    assert plot.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["region.png"]
