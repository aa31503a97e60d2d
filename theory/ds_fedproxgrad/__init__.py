"""DS FedProxGrad (Arif; arXiv 2512.08671) in the theory layer.

``formulas`` (every expression once, as sympy), ``claims``, ``proofs`` (sympy proof steps), ``errata`` (and
remarks) and ``feasibility``. What is verbatim and what is derived: docs/ds-fedproxgrad-notes.md.
"""

#: the short key (``fedbounds claims --paper ds``) and the paper's full name in every claim's provenance
KEY = "ds"
PAPER = "DS FedProxGrad (Arif), arXiv 2512.08671"
