"""Running the checks: budgets (profiles), cost estimates, process pools, CPU accounting, caches, atomic
installs and NaN-free JSON. It imports no paper (docs/architecture.md)."""
