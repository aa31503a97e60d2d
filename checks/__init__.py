"""Checks: the papers' claims (from ``theory``) run against trajectories (from ``algorithms``)."""

from fedbounds.checks.report.quiet import quiet_cvxpy_solver_probe as _quiet_cvxpy_solver_probe

# before anything imports cvxpy (PEPit does): a broken optional solver costs one line on stderr, not dozens
_quiet_cvxpy_solver_probe()
