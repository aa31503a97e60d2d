"""Shared PEP machinery for stochastic rounds (both papers).

:mod:`fedbounds.checks.pep.stochastic` holds the expected-Gram encoding of additive gradient noise (noise leaves,
orthogonality and variance constraints) and the finite-scenario lower bound. The deterministic machinery (two-solver
certificates, the client-symmetric block form) stays in :mod:`fedbounds.checks.core.pep` and
:mod:`fedbounds.checks.core.pep_symmetric`, which this package imports and reuses.
"""
