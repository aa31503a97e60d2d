"""FedNMap (arXiv 2602.03357) in the checks layer: its claims against trajectories and worst cases."""

#: the modules whose import registers this paper's checks, in table order
MODULES = ("checks", "lyapunov", "speedup", "tightness", "pep.family", "pep.exponent", "complexity_inside", "spep.family",
           "spep.existence_check", "spep.constants_check")
