"""The distribution: ``python -m build`` makes an sdist and a wheel (the wheel built from the sdist, so both carry
the evidence files, certificates and specs), ``twine check`` passes, and the wheel installed into a fresh venv
outside the checkout runs the checks and verifies a shipped certificate. The example paper
(examples/textbook-paper) installs beside it and its commands run from a shell (docs/adding-a-paper.md, "Try it").

Nothing is downloaded: the build uses the running environment (``--no-isolation``), and the fresh venv reads the
running one's site-packages as a plain path (so its dependencies are found, while its editable fedbounds is not:
the wheel's copy is the one imported). Slow (a build and a quick check): ``pytest -m slow tests/test_wheel.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "adding-a-paper.md"


def _run(argv: list[str], cwd: Path, env: dict | None = None, timeout: int = 2400) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    res = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], cwd=out)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return out


def _venv(where: Path, wheel: Path) -> tuple[Path, dict]:
    """A fresh venv with the wheel installed (no dependencies fetched: they come from the running site-packages)."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(where)], cwd=where.parent).check_returncode()
    py = where / "bin" / "python"
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=where).stdout.strip()
    Path(purelib, "running-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    res = _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)], cwd=where)
    assert res.returncode == 0, res.stderr
    env = {**os.environ, "PATH": f"{where / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(where)}
    env.pop("PYTHONPATH", None)
    return py, env


def test_build_makes_an_sdist_and_a_wheel_with_their_data_and_twine_passes(dist: Path) -> None:
    (wheel,) = dist.glob("fedbounds-*.whl")
    (sdist,) = dist.glob("fedbounds-*.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    assert sum(n.startswith("fedbounds/checks/pep/certificates/") and n.endswith(".json.gz") for n in names) >= 100
    specs = len(list((ROOT / "checks/specs").glob("*.toml")))
    assert sum(n.startswith("fedbounds/checks/specs/") and n.endswith(".toml") for n in names) == specs
    assert {f"fedbounds/theory/fednmap/{p.name}" for p in (ROOT / "theory/fednmap").glob("*.json")} <= set(names)
    pytest.importorskip("twine")
    res = _run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], cwd=dist)
    assert res.returncode == 0 and res.stdout.count("PASSED") == 2, res.stdout + res.stderr


def test_the_installed_wheel_checks_ds_and_verifies_a_shipped_certificate(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("fedbounds-*.whl")
    py, env = _venv(tmp_path / "venv", wheel)
    where = _run([str(py), "-c", "import fedbounds; print(fedbounds.__file__)"], cwd=tmp_path, env=env)
    assert where.stdout.startswith(str(tmp_path / "venv")), where.stdout + where.stderr  # the wheel's copy, not the checkout
    res = _run(["fedbounds", "check", "--claim", "ds.", "--out", str(tmp_path / "reports"), "--no-progress"], cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stdout.splitlines()[-1].startswith("result: PASS")
    code = ("import importlib.resources as r, sys\n"
            "from fedbounds.checks.pep.verify_certificate import verify_file\n"
            "certs = sorted(p for p in r.files('fedbounds.checks.pep').joinpath('certificates').iterdir() if p.name.endswith('.json.gz'))\n"
            "print(len(certs), verify_file(certs[0]))\n")
    res = _run([str(py), "-c", code], cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout.split()[0]) >= 100 and "fail" not in res.stdout.lower()
    res = _run([str(py), "-m", "fedbounds.checks.pep.verify_certificate",
                *map(str, sorted((tmp_path / "venv").rglob("fedbounds/checks/pep/certificates/*.json.gz"))[:3])], cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_textbook_paper_installs_from_outside_and_its_doc_commands_run(dist: Path, tmp_path: Path) -> None:
    """docs/adding-a-paper.md's "Try it" lines, from a shell, after ``pip install examples/textbook-paper`` (no
    edit to fedbounds, no test harness: the entry point alone registers it)."""
    (wheel,) = dist.glob("fedbounds-*.whl")
    py, env = _venv(tmp_path / "venv", wheel)
    res = _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                str(ROOT / "examples" / "textbook-paper")], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    block = DOC.read_text(encoding="utf-8").split("<!-- tested by tests/test_adding_a_paper.py -->", 1)[1]
    lines = [ln for ln in re.search(r"```bash\n(.*?)```", block, re.S).group(1).splitlines() if ln.strip()]
    assert len(lines) == 3
    for line in lines:
        want = int(re.search(r"exit (\d)", line).group(1)) if "exit" in line else 0
        out = _run(["bash", "-c", shlex.split(line, comments=True) and line.split("#")[0]], cwd=tmp_path, env=env)
        assert out.returncode == want, (line, out.stdout[-2000:], out.stderr)
        assert "Traceback" not in out.stderr and "invalid choice" not in out.stderr
    assert (tmp_path / "region.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = _run(["fedbounds", "claims", "--paper", "textbook"], cwd=tmp_path, env=env)
    assert out.returncode == 0 and "textbook.theorem3_1" in out.stdout, out.stderr
