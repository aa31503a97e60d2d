"""Theory: what the two papers claim, as sympy, with provenance (sympy only; knows no algorithm).

See :mod:`theory.claims` for the claim type and :func:`theory.registry.all_claims` for the catalogue.
"""
