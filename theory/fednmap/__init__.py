"""FedNMap (Huang, Pu, Johansson; arXiv 2602.03357) in the theory layer.

``formulas`` (every expression once, as sympy), ``claims``, ``proofs`` (sympy proof steps), ``errata`` (and
remarks), ``table1`` and ``feasibility``. What is verbatim and what is reconstructed: docs/fednmap-reconstruction.md.
"""

#: the short key (``fedbounds claims --paper fednmap``) and the paper's full name in every claim's provenance
KEY = "fednmap"
PAPER = "FedNMap (Huang, Pu, Johansson), arXiv 2602.03357"
