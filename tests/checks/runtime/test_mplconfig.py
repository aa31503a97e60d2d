"""An unusable $MPLCONFIGDIR (a regular file, a path under a file) gives a private matplotlib folder, not
matplotlib's two warnings. Sessions here run as root, for whom permissions are no obstacle, so the unusable folder
is made of a file. Each run is a fresh interpreter: matplotlib reads the variable once, at import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fedbounds.checks.runtime.mplconfig import ensure_mplconfigdir, usable_folder

#: what matplotlib prints when it cannot use its folder
NOISE = ("mkdir -p failed", "Matplotlib created a temporary", "MPLCONFIGDIR")


def _bad(tmp_path: Path, kind: str) -> Path:
    plain = tmp_path / "plain-file"
    plain.write_text("not a folder")
    return plain if kind == "a file" else plain / "under"


def _python(code: str, mplconfigdir: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPLCONFIGDIR": str(mplconfigdir), "TMPDIR": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)


@pytest.mark.parametrize("kind", ["a file", "under a file"])
def test_the_cli_entry_replaces_an_unusable_folder_before_matplotlib(tmp_path: Path, kind: str) -> None:
    """``fedbounds`` (its main, here ``--version``) sets a private folder; matplotlib imported after it is silent,
    and the private folder is gone when the process ends."""
    code = ("import os; from fedbounds.checks.cli import main; main(['--version']); import matplotlib; "
            "print(os.environ['MPLCONFIGDIR']); print(matplotlib.get_cachedir())")
    out = _python(code, _bad(tmp_path, kind), tmp_path)
    assert out.returncode == 0, out.stderr
    assert not any(n in out.stderr for n in NOISE), out.stderr
    private, cache = out.stdout.splitlines()[-2:]
    assert Path(private).parent == tmp_path and cache == private
    assert not Path(private).exists()


def test_negative_control_matplotlib_alone_is_noisy(tmp_path: Path) -> None:
    """The same folder without fedbounds' entry: matplotlib's warnings (so the test above can fail)."""
    out = _python("import matplotlib; matplotlib.get_cachedir()", _bad(tmp_path, "a file"), tmp_path)
    assert out.returncode == 0 and "Matplotlib created a temporary" in out.stderr, out.stderr


def test_a_usable_folder_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl" / "new"))  # missing: created, as matplotlib would
    assert ensure_mplconfigdir() is None and os.environ["MPLCONFIGDIR"] == str(tmp_path / "mpl" / "new")
    assert usable_folder(tmp_path / "mpl" / "new") and not usable_folder(_bad(tmp_path, "under a file"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["a file", "under a file"])
def test_check_prints_no_matplotlib_warning(tmp_path: Path, kind: str) -> None:
    """End to end: ``fedbounds check --claim erratum.ds_phi_prefix`` (the cheapest claim; it draws a plot)."""
    env = {**os.environ, "MPLCONFIGDIR": str(_bad(tmp_path, kind))}
    out = subprocess.run([sys.executable, "-m", "fedbounds.checks.cli", "check", "--claim", "erratum.ds_phi_prefix", "--out",
                          str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert not any(n in out.stderr + out.stdout for n in NOISE), out.stderr
    assert list((tmp_path / "out").glob("*.png"))
