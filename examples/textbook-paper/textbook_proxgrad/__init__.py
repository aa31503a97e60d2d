"""A textbook "paper", installed from outside fedbounds: the proximal gradient method's O(1/T) rate on convex
composite problems (Beck and Teboulle 2009, Theorem 3.1). One package per layer, no edit to fedbounds: this
package's entry point in the ``fedbounds.papers`` group (pyproject.toml) names it, and fedbounds reads the two
attributes below (docs/adding-a-paper.md).
"""

#: the theory layer (``KEY``, ``PAPER``, ``claims``; ``feasibility`` adds the calculator's sub-command)
THEORY = "textbook_proxgrad.theory"
#: the checks layer (its ``MODULES`` register the checks)
CHECKS = "textbook_proxgrad.checks"
