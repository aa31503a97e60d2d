"""How evidence becomes a verdict: the verdict rule, its statistics, scope, negative controls, searches and
thresholds, the adversarial search and the 2x-detection records (docs/architecture.md)."""
