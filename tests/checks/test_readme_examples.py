"""Every command in README.md's "What you can ask it" block works (issue 13).

Each line of the fenced block is parsed with the real parser. The fast ones run in full (in a temporary
folder): ``claims``, ``feasible`` and ``sweep tiny``. The long ones are checked without their hours of work:
``check`` (the quick profile is minutes) has its claim selection resolved, ``sweep fednmap_speedup`` runs as
``--dry-run`` (its spec validated and its cells counted), and ``report`` of its store checks that the store
shown is the one that sweep writes by default, then runs the same form of the command on the tiny spec.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from fedbounds.checks.cli import _build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[list[str]]:
    """The commands of the block after the heading "What you can ask it", comments stripped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## What you can ask it", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "README has no fenced bash block under 'What you can ask it'"
    commands = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        if words:
            assert words[0] == "fedbounds", line
            commands.append(words[1:])
    return commands


COMMANDS = readme_commands()


def _id(argv: list[str]) -> str:
    return " ".join(argv)[:60]


def test_the_block_is_found() -> None:
    assert len(COMMANDS) >= 10
    assert {a[0] for a in COMMANDS} == {"check", "claims", "feasible", "sweep", "report"}


@pytest.mark.parametrize("argv", COMMANDS, ids=_id)
def test_readme_command_parses(argv: list[str]) -> None:
    parser, _ = _build_parser(argv)
    parser.parse_args(argv)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("argv", COMMANDS, ids=_id)
def test_readme_command_works(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    cmd = argv[0]
    if cmd == "check":
        from fedbounds.checks.commands.check import selected_checks

        args = _build_parser(argv)[0].parse_args(argv)
        assert selected_checks(args.claim), "no check selected"
        return
    if cmd == "sweep" and argv[1] != "tiny":
        assert main([*argv, "--dry-run"]) == 0
        assert "cells; 0 stored" in capsys.readouterr().out
        return
    if cmd == "report":
        from fedbounds.checks.commands.sweep import default_store
        from fedbounds.checks.sweep.spec import load_spec

        target = argv[1]
        by_path = target.endswith(".sqlite")
        spec = load_spec(Path(target).stem.rsplit("-", 1)[0] if by_path else target)
        if by_path:
            assert Path(target) == default_store(spec.name, spec.fingerprint), "the README shows a store the sweep does not write"
        # the same form of the command, end to end on the tiny spec's store
        assert main(["sweep", "tiny", "--no-progress"]) == 0
        tiny = load_spec("tiny")
        assert main(["report", str(default_store(tiny.name, tiny.fingerprint)) if by_path else "tiny"]) == 0
        assert "slopes:" in capsys.readouterr().out
        return
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert out and not err.strip().startswith("fedbounds")
