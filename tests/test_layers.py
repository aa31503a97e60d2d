"""The import directions of docs/architecture.md, read from every import statement of every module (those inside
functions too), and the size rule for folders under ``checks/``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"theory": "fedbounds.theory", "algorithms": "fedbounds.algorithms", "checks": "fedbounds.checks"}
PAPERS = ("fednmap", "ds_fedproxgrad")
#: folder (relative to the repository) -> the import prefixes it must not use
FORBIDDEN = {
    "theory": ("fedbounds.algorithms", "fedbounds.checks"),
    "algorithms": ("fedbounds.checks", "fedbounds.theory"),
    "checks/runtime": tuple(f"fedbounds.checks.{p}" for p in
                            (*PAPERS, "verdicts", "report", "pep", "sweep", "studies", "commands", "cli", "registry")),
    "checks/pep": tuple(f"fedbounds.checks.{p}" for p in (*PAPERS, "studies", "sweep", "commands")),
    "checks/verdicts": tuple(f"fedbounds.checks.{p}" for p in (*PAPERS, "studies", "sweep", "commands")),
    "checks/report": tuple(f"fedbounds.checks.{p}" for p in (*PAPERS, "studies", "sweep")),
}
MAX_MODULES = 12


def imports_of(source: str) -> set[str]:
    """Every module an import statement names, with ``from X import y`` read as both ``X`` and ``X.y``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def violations(folder: Path, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        for name in sorted(imports_of(path.read_text())):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(folder.parent)}: imports {name}")
    return found


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_import_directions(folder: str) -> None:
    assert violations(ROOT / folder, FORBIDDEN[folder]) == []


def test_the_rule_catches_an_import_inside_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "runtime"
    pkg.mkdir()
    (pkg / "ok.py").write_text("import os\nfrom fedbounds.checks.runtime import cpu\n")
    (pkg / "bad.py").write_text("def f():\n    from fedbounds.checks import fednmap\n    return fednmap\n")
    assert violations(pkg, FORBIDDEN["checks/runtime"]) == ["runtime/bad.py: imports fedbounds.checks.fednmap"]


def test_no_folder_under_checks_holds_more_than_a_dozen_modules() -> None:
    crowded = {}
    for folder in [ROOT / "checks", *(p for p in (ROOT / "checks").rglob("*") if p.is_dir())]:
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        if len(modules) > MAX_MODULES:
            crowded[str(folder.relative_to(ROOT))] = len(modules)
    assert crowded == {}


def test_the_map_names_every_folder_under_checks() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    folders = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "checks").rglob("__init__.py")} - {"checks"}
    for folder in sorted(folders):
        generic = folder.replace("fednmap", "<paper>").replace("ds_fedproxgrad", "<paper>")
        assert f"`{folder}/`" in text or f"`{generic}/`" in text, folder
