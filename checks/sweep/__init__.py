"""Resumable experiment grids (issue 8): a TOML spec, a SQLite store keyed by each cell's configuration hash,
local-process or Dask execution, and the speedup report.

- :mod:`checks.sweep.spec`: parse and validate a spec; expand it into cells (configuration + seed + key).
- :mod:`checks.sweep.store`: the SQLite store (WAL, one transaction per cell, primary key on the hash).
- :mod:`checks.sweep.cell`: :func:`~checks.sweep.cell.compute_cell`, one cell as a pure function of its config.
- :mod:`checks.sweep.runner`: run the missing cells serially, in local processes, or on a Dask cluster.
- :mod:`checks.sweep.report`: rounds-to-target against n and Q (log-log, fitted slopes) and a CSV.

The submodules are imported on demand (``from checks.sweep.spec import load_spec``), so that parsing a spec
pays for neither numpy nor matplotlib.
"""
