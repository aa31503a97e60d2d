"""DS FedProxGrad (arXiv 2512.08671) in the checks layer: its claims against trajectories and worst cases."""

#: the modules whose import registers this paper's checks, in table order
MODULES = ("checks", "errata", "tightness", "pep.family", "decaying", "spep.family")
