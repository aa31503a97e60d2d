"""Third-party log noise kept to one line (design.md: bad input and faults end in one line).

- cvxpy probes every solver it knows when it is imported (``Solver.is_installed``) and logs, for each one
  whose import fails with anything but ModuleNotFoundError, two lines on stderr: "(CVXPY) ...: Encountered
  unexpected exception importing solver HIGHS:" and the exception. A broken optional solver thus printed
  dozens of lines before any fedbounds output. :func:`quiet_cvxpy_solver_probe` puts a filter on cvxpy's
  logger (``"__cvxpy__"``; it must be installed before cvxpy is imported, which ``fedbounds.checks`` does on
  import) that turns the first such message into one line naming the solver and drops every later one.
  Filters survive cvxpy's own logger set-up (it sets a level and adds a handler, nothing else).
- dask.distributed logs (and prints tracebacks of cancelled tasks) at INFO/WARNING while a cluster shuts
  down after Ctrl-C. :func:`quiet_distributed` raises its loggers to ERROR, in this process and, through
  dask's config, in the worker processes a cluster starts afterwards. The sweep runner calls it before it
  starts a cluster.
"""

from __future__ import annotations

import logging
import re

__all__ = ["CVXPY_LOGGER", "DISTRIBUTED_LOGGERS", "quiet_cvxpy_solver_probe", "quiet_distributed"]

#: the logger cvxpy writes to (cvxpy/settings.py)
CVXPY_LOGGER = "__cvxpy__"
#: dask.distributed's loggers and the libraries it logs through
DISTRIBUTED_LOGGERS = ("distributed", "tornado", "tornado.application", "bokeh")

_PROBE = re.compile(r"Encountered unexpected exception importing solver (?P<solver>[^:\s]+):?\s*(?P<error>.*)", re.S)


class _SolverProbeFilter(logging.Filter):
    """Lets the first solver-import failure through as one line; drops the rest (other records pass)."""

    def __init__(self) -> None:
        super().__init__("fedbounds-solver-probe")
        self.failed: dict[str, str] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        match = _PROBE.match(message)
        if match is None:
            return True
        first = not self.failed
        error = " ".join(match["error"].split())
        self.failed.setdefault(match["solver"], error)
        if not first:
            return False
        record.msg = (
            f"solver {match['solver']} is installed but cannot be imported ({error}); cvxpy skips it "
            "(further solvers that fail to import are skipped without a message)"
        )
        record.args = ()
        return True


def quiet_cvxpy_solver_probe() -> _SolverProbeFilter:
    """Install (once) the filter on cvxpy's logger; returns it (``.failed`` maps solver -> error)."""
    logger = logging.getLogger(CVXPY_LOGGER)
    for f in logger.filters:
        if isinstance(f, _SolverProbeFilter):
            return f
    f = _SolverProbeFilter()
    logger.addFilter(f)
    return f


def quiet_distributed(level: int = logging.ERROR) -> None:
    """Raise dask.distributed's loggers to ``level`` here and (via dask's config, when dask is installed) in
    the worker processes of clusters started later."""
    name = logging.getLevelName(level).lower()
    for logger_name in DISTRIBUTED_LOGGERS:
        logger = logging.getLogger(logger_name)
        if logger.level < level:
            logger.setLevel(level)
    for logger_name in list(logging.root.manager.loggerDict):
        if logger_name.startswith("distributed."):
            logger = logging.getLogger(logger_name)
            if logger.level < level:
                logger.setLevel(level)
    try:
        import dask
    except ImportError:
        return
    dask.config.set({"logging.distributed": name})
