"""Algorithms: regularisers, instances, oracles and federated methods (numpy/scipy only).

Nothing here knows a theorem exists; see ``theory`` for the claims and ``checks`` for the verdicts.
"""
