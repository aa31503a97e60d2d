"""Resumable experiment grids (docs/sweep-store.md): a TOML spec, a SQLite store keyed by each cell's configuration hash,
local-process or Dask execution, and the speedup report.

- :mod:`fedbounds.checks.sweep.spec`: parse and validate a spec; expand it into cells (configuration + seed + key).
- :mod:`fedbounds.checks.sweep.store`: the SQLite store (WAL, one transaction per cell, primary key on the hash).
- :mod:`fedbounds.checks.sweep.cell`: :func:`~fedbounds.checks.sweep.cell.compute_cell`, one cell as a pure function of its config.
- :mod:`fedbounds.checks.sweep.runner`: run the missing cells serially, in local processes, or on a Dask cluster.
- :mod:`fedbounds.checks.sweep.report`: rounds-to-target against n and Q (log-log, fitted slopes) and a CSV.

The submodules are imported on demand (``from fedbounds.checks.sweep.spec import load_spec``), so that parsing a spec
pays for neither numpy nor matplotlib.
"""
