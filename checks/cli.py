"""The ``fedbounds`` command line.

Each subcommand lives in its own module under :mod:`fedbounds.checks.commands` and is imported only when it runs, so
that ``fedbounds claims`` does not pay for numpy-heavy imports. Bad input anywhere ends in a one-line
message on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("fedbounds.checks.commands.check", "run the bound-checking suite and write a report"),
    "claims": ("fedbounds.checks.commands.claims", "list the papers' claims with their provenance"),
    "feasible": ("fedbounds.checks.commands.feasible", "which parameters a theorem allows, and what it promises"),
    "sweep": ("fedbounds.checks.commands.sweep", "run a resumable experiment grid from a TOML spec"),
    "report": ("fedbounds.checks.commands.report", "turn a sweep store into figures and a CSV"),
}


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: error: {message}")


def _build_parser(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, dict[str, object]]:
    parser = _Parser(prog="fedbounds", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    modules: dict[str, object] = {}
    wanted = next((a for a in argv if a in SUBCOMMANDS), None)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name == wanted:
            module = importlib.import_module(module_name)
            module.configure(sp)
            modules[name] = module
    return parser, modules


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fedbounds`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser, modules = _build_parser(argv)
        args = parser.parse_args(argv)
        return int(modules[args.command].run(args) or 0)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"fedbounds: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fedbounds: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
