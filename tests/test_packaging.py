"""The install: the layers ship as fedbounds.theory/.algorithms/.checks and nothing else reaches the top level,
every package folder is listed in pyproject.toml, and ``python -m fedbounds`` runs the command line."""

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"fedbounds.theory": "theory", "fedbounds.algorithms": "algorithms", "fedbounds.checks": "checks"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _package_folders() -> set[str]:
    found = {"fedbounds"}
    for name, folder in LAYERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]) if rel.parts else name)
    return found


def test_every_package_folder_is_listed_and_nothing_else() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]
    assert set(setuptools["packages"]) == _package_folders()
    assert setuptools["package-dir"] == {"fedbounds": "fedbounds", **LAYERS}


def test_the_layers_are_not_importable_at_the_top_level_from_outside_the_tree(tmp_path: Path) -> None:
    code = ("import importlib.util, sys\n"
            "for name in ('theory', 'algorithms', 'checks'):\n"
            "    spec = importlib.util.find_spec(name)\n"
            f"    assert spec is None or not str(spec.origin).startswith({str(ROOT)!r}), (name, spec.origin)\n"
            "import fedbounds.theory, fedbounds.algorithms, fedbounds.checks\n"
            "print(fedbounds.__version__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


@pytest.mark.slow  # 9 s at load 5-7 (pytest --durations, 2026-12-04)
def test_python_dash_m_fedbounds_runs_the_command_line(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "fedbounds", "claims", "--id", "fednmap.theorem8"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "fednmap.theorem8" in out.stdout


@pytest.mark.slow  # 16 s at load 5-7 (pytest --durations, 2026-12-04)
def test_the_wheel_holds_only_the_fedbounds_namespace(tmp_path: Path) -> None:
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
                            str(ROOT)], capture_output=True, text=True, timeout=300)
    if build.returncode != 0 and "No module named" in build.stderr:
        pytest.skip(f"cannot build a wheel here: {build.stderr.strip().splitlines()[-1]}")
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("fedbounds-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"fedbounds", next(t for t in tops if t.endswith(".dist-info"))}
    assert "fedbounds/checks/specs/fednmap_speedup.toml" in names
    assert "fedbounds/theory/fednmap/formulas.py" in names
    assert not any(n.startswith(("fedbounds/tests", "tests/")) for n in names)
