"""Conventions of the command line (issue 20, item 6): --version, plain-text help, examples per command."""

from __future__ import annotations

import re
import shlex

import pytest
from fedbounds.checks import cli
from fedbounds.checks.cli import SUBCOMMANDS, main

from fedbounds import __version__

#: inline RST/Sphinx markup that argparse would print verbatim
RST = re.compile(r"``|:(?:func|mod|class|data|meth|attr):`|^\.\. ", re.M)


def test_version_prints_name_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"fedbounds {__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_top_level_help_is_plain_text_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert not RST.search(out), out
    assert "examples:" in out and "exit status (one per kind of failure):" in out
    for name in SUBCOMMANDS:
        assert name in out


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_every_command_help_ends_with_examples(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert not RST.search(out), out
    tail = out[out.index("examples:"):]
    assert f"fedbounds {command}" in tail


def _example_lines() -> list[list[str]]:
    texts = [cli.EPILOG, *cli.EXAMPLES.values()]
    lines = []
    for text in texts:
        for line in text.splitlines():
            line = line.strip()
            if not line.startswith("fedbounds ") or re.search(r"\b[A-Z]{4,}\b", line.split("  ")[0]):
                continue  # a placeholder such as COMMAND or THEOREM
            lines.append(shlex.split(re.split(r"\s{2,}", line)[0])[1:])
    return lines


@pytest.mark.parametrize("argv", _example_lines(), ids=lambda a: " ".join(a)[:60])
def test_every_example_parses(argv: list[str]) -> None:
    """The examples are real command lines: the parser accepts each one (nothing is run)."""
    parser, _ = cli._build_parser(argv)
    args = parser.parse_args(argv)
    assert args.command == argv[0]
