"""PEP machinery beyond two-solver agreement, shared by both papers.

:mod:`fedbounds.checks.pep.stochastic` holds the expected-Gram encoding of additive gradient noise (noise leaves,
orthogonality and variance constraints) and the finite-scenario lower bound; :mod:`fedbounds.checks.pep.certificate`
turns a certified worst case into an exact rational certificate, and :mod:`fedbounds.checks.pep.verify_certificate`
re-checks one without a solver. The two-solver certificates and the client-symmetric block form stay in
:mod:`fedbounds.checks.core.pep` and :mod:`fedbounds.checks.core.pep_symmetric`, which this package reuses.
"""
