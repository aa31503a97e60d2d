"""MkDocs hook: let the API reference (mkdocstrings, griffe) find ``fedbounds.theory`` and the other layers.

The layers are top-level folders installed under one name through setuptools' ``package-dir`` (pyproject.toml);
griffe reads source files and does not follow that mapping. Before each build this hook lays out the installed
tree as symbolic links, ``build/docs-src/fedbounds/{theory,algorithms,checks}`` beside ``fedbounds/*.py``, from the
mapping in pyproject.toml (so a new layer needs no edit here); mkdocs.yml points the handler's ``paths`` at it.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

TREE = Path("build") / "docs-src"


@event_priority(100)  # before mkdocstrings reads its handler's paths
def on_config(config: Any) -> Any:
    root = Path(config.config_file_path).resolve().parent
    mapping: dict[str, str] = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    tree = root / TREE
    if tree.exists():
        shutil.rmtree(tree)
    for package, folder in sorted(mapping.items(), key=lambda kv: kv[0].count(".")):
        target = tree.joinpath(*package.split("."))
        if package.count(".") == 0:  # the top package: its own files, one link each (its sub-packages come next)
            target.mkdir(parents=True)
            for f in (root / folder).glob("*.py"):
                (target / f.name).symlink_to(f)
        else:
            target.symlink_to(root / folder, target_is_directory=True)
    return config
