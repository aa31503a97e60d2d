"""One module per ``fedbounds`` subcommand, each with ``configure(parser)`` and ``run(args) -> int``; and the
argument types they share."""

from __future__ import annotations

import argparse


def path_arg(text: str) -> str:
    """A path argument: never empty (an empty ``--out ''`` or ``--store ''`` would silently mean the current folder
    or the default)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, got an empty string")
    return text


def seed_arg(text: str) -> int:
    """A seed: an integer from 0 to 2**63 - 1 (numpy's generators refuse negative seeds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**63 - 1, got {text!r}")
    return value
