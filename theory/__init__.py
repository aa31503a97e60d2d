"""Theory: what the two papers claim, as sympy, with provenance (sympy only; knows no algorithm).

See :mod:`fedbounds.theory.core.claims` for the claim type and :func:`fedbounds.theory.registry.all_claims` for the catalogue.
"""
