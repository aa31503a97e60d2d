"""fedbounds: a verified theory companion for composite federated learning (FedNMap, DS FedProxGrad).

The three layers install as ``fedbounds.theory`` (sympy: what the papers claim), ``fedbounds.algorithms``
(numpy: the methods and instances) and ``fedbounds.checks`` (claims against trajectories and worst cases;
the command line). ``python -m fedbounds`` runs the command line.
"""

__version__ = "0.2.0"
