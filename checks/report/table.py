"""Plain-text tables that fit the terminal: columns wider than their share are wrapped onto several lines.

Used by ``fedbounds check`` and ``fedbounds claims`` (and meant for any command that prints a table). The width is
``--width N`` when given, else the terminal's (:func:`shutil.get_terminal_size`) when standard output is a
terminal, else 80.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
from collections.abc import Sequence

__all__ = ["DEFAULT_WIDTH", "MIN_WIDTH", "add_width_option", "output_width", "render_table", "width_type"]

#: the width when standard output is not a terminal and no --width is given
DEFAULT_WIDTH = 80
#: the smallest --width accepted
MIN_WIDTH = 10
#: columns are never squeezed below this many characters (a table may then exceed a very small width)
MIN_COLUMN = 6
#: a column keeps its longest word whole up to this many characters (numbers, names); the first column (the ids)
#: up to MAX_FIRST_FLOOR, and it is squeezed last
MAX_FLOOR = 32
MAX_FIRST_FLOOR = 48
SEP = "  "
INDENT = "    "


def width_type(text: str) -> int:
    """argparse type of ``--width``: an integer >= :data:`MIN_WIDTH`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= {MIN_WIDTH}, got {text!r}") from None
    if value < MIN_WIDTH:
        raise argparse.ArgumentTypeError(f"expected an integer >= {MIN_WIDTH}, got {text!r}")
    return value


def add_width_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--width N`` (the tables' total width) to ``parser``."""
    parser.add_argument("--width", type=width_type, default=None, metavar="N",
                        help=f"width of the printed tables in characters (>= {MIN_WIDTH}; default: the terminal's, "
                        f"{DEFAULT_WIDTH} when not a terminal); wider cells wrap")


def output_width(width: int | None = None, stream=None) -> int:
    """``width`` when given; else the terminal's width when ``stream`` (stdout) is a terminal; else 80."""
    if width:
        return int(width)
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns if tty else DEFAULT_WIDTH


def _fit(natural: list[int], floor: list[int], width: int, protect: frozenset[int] = frozenset()) -> list[int]:
    """Column widths: the natural ones when they fit; else each column gets at least its ``floor`` (its longest
    word, so ids and numbers are not broken) and the rest of the room is shared by raising a common cap c:
    width_i = min(natural_i, max(floor_i, c)), with c the largest that fits."""
    total = sum(natural) + len(SEP) * (len(natural) - 1)
    if total <= width:
        return natural
    room = width - len(SEP) * (len(natural) - 1)
    floor = list(floor)
    # the floors alone are too wide: trim the widest, the protected columns (whole cells) next, the first (ids) last
    for allowed in ([i for i in range(1, len(floor)) if i not in protect], [i for i in range(1, len(floor))], [0]):
        while sum(floor) > room and allowed and max(floor[i] for i in allowed) > MIN_COLUMN:
            floor[max(allowed, key=lambda i: floor[i])] -= 1

    def widths_at(c: int) -> list[int]:
        return [min(n, max(f, c)) for n, f in zip(natural, floor)]

    lo, hi = 0, max(natural)
    while lo < hi:  # largest cap c whose widths fit the room
        c = (lo + hi + 1) // 2
        if sum(widths_at(c)) <= room:
            lo = c
        else:
            hi = c - 1
    widths = widths_at(lo)
    spare = room - sum(widths)
    for i in sorted(range(len(widths)), key=lambda k: -natural[k]):
        if spare <= 0:
            break
        add = min(spare, natural[i] - widths[i])
        widths[i] += add
        spare -= add
    return widths


def _wrap(cell: str, w: int) -> list[str]:
    if len(cell) <= w:
        return [cell]
    return textwrap.wrap(cell, w, break_long_words=True, break_on_hyphens=False) or [""]


def _rows(row: Sequence[str], widths: Sequence[int], indent: str = "") -> list[str]:
    """One table row, its cells wrapped to ``widths``: as many lines as its tallest cell."""
    wrapped = [_wrap(c, cw) for c, cw in zip(row, widths)]
    return [(indent + SEP.join((x[line] if line < len(x) else "").ljust(cw) for x, cw in zip(wrapped, widths))).rstrip()
            for line in range(max(len(x) for x in wrapped))]


def _floors(cells: list[list[str]], natural: list[int], whole: Sequence[str] = ()) -> list[int]:
    longest_word = [natural[i] if cells[0][i] in whole else max((len(w) for r in cells for w in r[i].split()), default=0)
                    for i in range(len(natural))]
    caps = [MAX_FIRST_FLOOR] + [MAX_FLOOR] * (len(natural) - 1)
    return [min(n, max(MIN_COLUMN, min(lw, cap))) for n, lw, cap in zip(natural, longest_word, caps)]


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], width: int | None = None,
                 optional: Sequence[str] = (), whole: Sequence[str] = ()) -> str:
    """``header`` and ``rows`` (strings) as aligned columns separated by two spaces, a dashed rule under the
    header, fitted to ``width`` characters (see :func:`output_width`) by wrapping the widest columns. The columns
    named in ``optional`` (first named, first dropped) are left out, with a line saying so, while the others'
    longest words would not fit whole; the cells of the columns named in ``whole`` are never wrapped."""
    w = output_width(width)
    cells = [[str(c) for c in header], *[[str(c) for c in r] for r in rows]]
    keep = list(range(len(header)))
    dropped: list[str] = []

    def fits(cols: list[int], stacked: bool) -> bool:
        sub = [[r[i] for i in cols] for r in cells]
        floors = _floors(sub, [max(len(r[i]) for r in sub) for i in range(len(cols))], whole)
        if stacked:
            return len(cols) > 1 and sum(floors[1:]) + len(SEP) * (len(cols) - 2) <= w - len(INDENT)
        return sum(floors) + len(SEP) * (len(cols) - 1) <= w

    for name in optional:
        if fits(keep, stacked=False) or fits(keep, stacked=True):
            break
        if name in header:
            keep.remove(list(header).index(name))
            dropped.append(name)
    cells = [[r[i] for i in keep] for r in cells]
    natural = [max(len(r[i]) for r in cells) for i in range(len(keep))]
    floors = _floors(cells, natural, whole)
    protect = frozenset(i for i, h in enumerate(cells[0]) if h in whole)
    out: list[str] = []
    if len(keep) > 1 and sum(natural) + len(SEP) * (len(keep) - 1) > w and not fits(list(range(len(keep))), stacked=False):
        # too narrow for the ids beside the rest: each row's first cell on a line of its own, the rest indented below it
        rest = [r[1:] for r in cells]
        widths = _fit(natural[1:], floors[1:], w - len(INDENT), frozenset(i - 1 for i in protect if i))
        for n, row in enumerate(cells):
            out.append(row[0])
            out += _rows(rest[n], widths, INDENT)
            if n == 0:
                out.append("-" * min(w, max(natural[0], len(INDENT) + sum(widths) + len(SEP) * (len(widths) - 1))))
    else:
        widths = _fit(natural, floors, w, protect)
        for n, row in enumerate(cells):
            out += _rows(row, widths)
            if n == 0:
                out.append(SEP.join("-" * cw for cw in widths))
    if dropped:
        out += textwrap.wrap(f"(left out at width {w}: {', '.join(dropped)}; --width N for more)", w)
    return "\n".join(out)
