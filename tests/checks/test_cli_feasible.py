"""``fedbounds feasible``: every output format, and one-line errors (exit 2, no traceback) for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fedbounds.checks.cli import main

FEDNMAP = ["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "10", "--Q", "5", "--sigma", "1"]
DS = ["feasible", "ds-fedproxgrad", "--L-f", "1", "--L-r", "0.5", "--lam", "0.2", "--G", "1", "--B", "1", "--G-r", "1", "--sigma", "1"]


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    # at a fixed window m = 1 the variance floor 36 sigma^2/(m n mu Q) = 7.2 exceeds 0.1: unreachable, exit 1
    assert main([*FEDNMAP, "--mu", "0.1", "--T", "1000", "--epsilon", "0.1", "--m", "1"]) == 1
    out = capsys.readouterr().out
    for heading in (
        "FedNMap Theorem 8",
        "Conditions",
        "Binding:",
        "Largest admissible step sizes",
        "Guarantee [fednmap.theorem8]",
        "Table 1",
    ):
        assert heading in out
    assert "theorem5.eta_hat" in out and "pass" in out
    assert "unreachable: floor" in out


def test_text_report_flags_a_failing_condition(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*FEDNMAP, "--eta-a", "0.01", "--eta-s", "1"]) == 1  # exit 1: not admissible
    out = capsys.readouterr().out
    assert "NOT ADMISSIBLE" in out and "FAIL" in out


def test_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main([*FEDNMAP, "--mu", "0.1", "--C0", "1", "--EL0", "10", "--eta-hat", "1e-5", "--eta-a", "1e-6", "--epsilon", "0.5", "--json"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert {"theorem", "conditions", "binding", "step_sizes", "guarantee", "rounds_needed", "table1", "admissible"} <= set(data)
    assert data["theorem"] == "fednmap.theorem8"
    assert data["rounds_needed"]["flag"] == "exact" and isinstance(data["rounds_needed"]["rounds"], int)
    assert {c["name"] for c in data["conditions"]} == {"theorem5.gamma", "theorem5.eta_hat", "theorem5.eta_a"}


def test_json_report_ds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*DS, "--R", "1000", "--Delta0", "1", "--epsilon", "0.1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["theorem"] == "ds.corollary_ii"
    assert data["step_sizes"]["eta_max_binding"] == "A4(iv)"
    assert data["rounds_needed"]["rounds"] >= 1


def test_latex_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*FEDNMAP, "--latex"]) == 0
    out = capsys.readouterr().out
    assert r"\le" in out and r"\begin{align*}" in out and r"\hat{\eta}" in out
    assert main([*DS, "--alpha", "0.75", "--latex"]) == 0
    assert r"\le" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "axes"),
    [
        ([*FEDNMAP, "--eta-a", "1e-4", "--eta-s", "2"], None),
        ([*FEDNMAP, "--eta-a", "1e-4", "--eta-s", "2"], "eta_a,eta_s"),
        ([*DS, "--eta", "0.1", "--gamma-r", "0.4"], None),
    ],
)
def test_plot_writes_a_png(argv, axes, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "region.png"
    extra = ["--axes", axes] if axes else []
    assert main([*argv, "--plot", str(path), *extra]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(path) in capsys.readouterr().out


def test_plot_with_json_keeps_stdout_json(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.png"
    assert main([*FEDNMAP, "--json", "--plot", str(path)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["plot"] == str(path)
    assert str(path) in captured.err and path.exists()


BAD = [
    pytest.param([*FEDNMAP[:3], "-1", *FEDNMAP[4:]], "L must be > 0", id="negative-L"),
    pytest.param([*FEDNMAP, "--gamma", "10"], "gamma must lie in (0, 1/rho)", id="gamma-ge-1/rho"),
    pytest.param([*FEDNMAP, "--mu", "2"], "mu must lie in (0, L]", id="mu-gt-L"),
    pytest.param([*FEDNMAP[:9], "0", *FEDNMAP[10:]], "Q must be an integer >= 1", id="Q-zero"),
    pytest.param([*FEDNMAP[:7], "0", *FEDNMAP[8:]], "n must be an integer >= 1", id="n-zero"),
    pytest.param([*FEDNMAP, "--m", "2.5"], "m must be an integer >= 1", id="m-non-integer"),
    pytest.param([*FEDNMAP, "--epsilon", "0"], "epsilon must be > 0", id="eps-zero"),
    pytest.param([*FEDNMAP, "--epsilon=-1"], "epsilon must be > 0", id="eps-negative"),
    pytest.param([*FEDNMAP, "--sigma", "nan"], "sigma must be finite", id="nan"),
    pytest.param(["feasible", "fednmap", "--rho", "0.1", "--n", "10", "--Q", "5", "--sigma", "1"], "L is required", id="missing-L"),
    pytest.param([*FEDNMAP[:3], "abc", *FEDNMAP[4:]], "invalid float value", id="not-a-number"),
    pytest.param(["feasible", "fednmap.theorem9", "--L", "1"], "invalid choice", id="unknown-theorem"),
    pytest.param([*FEDNMAP, "--plot", "x.png", "--axes", "eta_a"], "--axes must name two different parameters", id="bad-axes"),
    pytest.param([*FEDNMAP, "--plot", "x.png", "--axes", "eta_a,zeta"], "--axes must be two of", id="unknown-axis"),
    pytest.param([*DS[:11], "0", *DS[12:]], "B must be > 0", id="ds-B-zero"),
    pytest.param([*DS, "--R", "0"], "R must be an integer >= 1", id="ds-R-zero"),
    pytest.param([*DS, "--alpha", "-1"], "alpha must be > 0", id="ds-alpha-negative"),
]


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_bad_input_is_one_line_exit_2(argv, message, capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert message in err
    assert "Traceback" not in captured.err + captured.out
    assert not (tmp_path / "x.png").exists()


@pytest.mark.slow  # 10 s at load 5-7 (pytest --durations, 2026-12-04)
def test_end_to_end_subprocess() -> None:
    """The console entry point, in a fresh interpreter: a good run and a bad one."""
    cmd = [sys.executable, "-m", "fedbounds.checks.cli"]
    ok = subprocess.run([*cmd, *FEDNMAP, "--json"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["theorem"] == "fednmap.theorem5"
    bad = subprocess.run([*cmd, *FEDNMAP, "--gamma", "20"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1 and "gamma must lie in (0, 1/rho)" in bad.stderr
    assert "Traceback" not in bad.stderr


# ---------------------------------------------------------------------------------------------------------
# issue 13: overflow, huge integers, plot file names and unwritable paths: one line, exit 2, no traceback
# ---------------------------------------------------------------------------------------------------------


def _one_line_exit_2(argv, capsys, *needles: str) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in captured.err + captured.out
    for needle in needles:
        assert needle in err, err
    return err


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("argv", "name"),
    [
        pytest.param([*FEDNMAP[:3], "1e308", *FEDNMAP[4:]], "L", id="L-1e308"),
        pytest.param([*FEDNMAP, "--sigma", "1e200", "--mu", "0.1", "--epsilon", "0.1"], "sigma", id="sigma-1e200"),
        pytest.param([*FEDNMAP, "--T", "1e300"], "T", id="T-1e300"),
        pytest.param([*DS[:3], "1e308", *DS[4:]], "L_f", id="L_f-1e308"),
        pytest.param([*FEDNMAP[:3], "1e160", *FEDNMAP[4:]], "L", id="L-1e160"),
        pytest.param([*FEDNMAP, "--sigma", "1e155"], "sigma", id="sigma2-overflows"),
    ],
)
def test_overflow_is_one_line_naming_the_parameter(argv, name, capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_line_exit_2(argv, capsys, name)
    assert "cannot convert" not in err


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "extra", [["--m", "1e17"], ["--m", "9007199254740993"], ["--eta-a", "1e-320"]], ids=["m-1e17", "m-2^53+1", "eta_a-subnormal"]
)
def test_extreme_values_terminate(extra, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main([*FEDNMAP, *extra])
    captured = capsys.readouterr()
    assert rc in (0, 2) and "Traceback" not in captured.err
    if rc == 0:
        assert " nan" not in captured.out
    else:
        assert extra[0].lstrip("-").replace("-", "_") in captured.err


@pytest.mark.parametrize(
    ("suffix", "magic"),
    [(".png", b"\x89PNG\r\n\x1a\n"), (".pdf", b"%PDF"), (".svg", b"<?xml"), (".PNG", b"\x89PNG\r\n\x1a\n")],
)
def test_plot_honours_the_extension(suffix, magic, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"region{suffix}"
    assert main([*FEDNMAP, "--plot", str(path)]) == 0
    assert path.read_bytes()[: len(magic)] == magic
    assert str(path) in capsys.readouterr().out


@pytest.mark.parametrize("name", ["region.xyz", "region", "region.", ""])
def test_plot_rejects_a_name_without_a_supported_extension(name, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line_exit_2([*FEDNMAP, "--plot", name], capsys, "--plot")
    assert not any(tmp_path.iterdir())


def test_plot_unwritable_path_is_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    _one_line_exit_2([*FEDNMAP, "--plot", str(blocker / "sub" / "region.png")], capsys, "--plot", str(blocker))
    folder = tmp_path / "adir.png"
    folder.mkdir()
    _one_line_exit_2([*FEDNMAP, "--plot", str(folder)], capsys, "--plot", str(folder))
    readonly = tmp_path / "ro"
    readonly.mkdir()
    readonly.chmod(0o500)
    try:
        import os

        if os.access(readonly, os.W_OK):  # running as root: permissions are not enforced
            pytest.skip("permissions are not enforced for this user")
        _one_line_exit_2([*FEDNMAP, "--plot", str(readonly / "region.png")], capsys, "--plot", str(readonly))
    finally:
        readonly.chmod(0o700)


def test_axes_without_plot_is_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    _one_line_exit_2([*FEDNMAP, "--axes", "eta_a,eta_s"], capsys, "--axes", "--plot")


def test_a_missing_noise_level_is_bad_input_not_an_internal_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the CLI fuzz (dev profile): without --sigma the constant-step floor used to end in exit 70."""
    from fedbounds.checks.cli import main

    assert main(["feasible", "ds-fedproxgrad", "--L-f", "0.45", "--G", "0.3", "--B", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sigma" in err[0] and "internal error" not in err[0]


def test_theorem8_without_sigma_leaves_the_floor_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    # the floor 36 sigma^2/(m n mu Q) has no value without --sigma: reported as unknown, never an internal error
    assert main(["feasible", "fednmap", "--L", "4", "--rho", "0.4", "--n", "2", "--Q", "1", "--mu", "0.1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["guarantee"]["floor"] is None
