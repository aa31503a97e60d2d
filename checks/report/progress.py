"""Progress for long work: a bar on a terminal, plain lines in a log.

On a TTY :func:`progress` returns a tqdm bar on stderr. When stderr is not a terminal (CI, a log file, a pipe)
it returns :class:`LineProgress`, which writes one line per finished item and nothing else: no carriage
returns, no redraws. ``enabled=False`` silences both.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

__all__ = ["LineProgress", "progress"]


class LineProgress:
    """The subset of tqdm's interface the commands use, as one line per finished item."""

    def __init__(self, total: int, *, initial: int = 0, desc: str = "", unit: str = "item", stream: TextIO | None = None,
                 enabled: bool = True) -> None:
        self.total, self.n, self.desc, self.unit = total, initial, desc, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self._postfix = ""
        self._t0 = time.perf_counter()

    def set_description(self, desc: str) -> None:
        self.desc = desc

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self._postfix = text

    def set_postfix(self, refresh: bool = True, **values: object) -> None:
        self._postfix = ", ".join(f"{k}={v}" for k, v in values.items())

    def update(self, k: int = 1, *, result: str = "") -> None:
        """Count ``k`` finished items and write their line (``result``: a short outcome, e.g. a verdict)."""
        self.n += k
        if not self.enabled:
            return
        width = len(str(self.total))
        tail = f": {result}" if result else ""
        elapsed = time.perf_counter() - self._t0
        print(f"[{self.n:>{width}}/{self.total} {self.unit}] {self.desc}{tail} ({elapsed:.1f} s)", file=self.stream, flush=True)

    def close(self) -> None:
        pass


def progress(total: int, *, initial: int = 0, desc: str = "", unit: str = "item", enabled: bool = True,
             stream: TextIO | None = None) -> Any:
    """A tqdm bar when ``stream`` (default stderr) is a terminal, else a :class:`LineProgress`."""
    out = stream if stream is not None else sys.stderr
    if enabled and getattr(out, "isatty", lambda: False)():
        from tqdm import tqdm

        return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=out, dynamic_ncols=True, smoothing=0.1)
    return LineProgress(total, initial=initial, desc=desc, unit=unit, stream=out, enabled=enabled)
