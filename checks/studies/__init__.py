"""The committed studies, one module each, named after the results they write: ``fednmap_speedup``
(results/fednmap_speedup/), ``exact`` with ``exact_cells`` (results/fednmap_speedup_inside/ and
results/heterogeneity/), ``spep_grid`` (theory/fednmap/spep_grid.json). The grid engine they run on is
:mod:`fedbounds.checks.sweep`."""
