"""PEP machinery beyond two-solver agreement: exact rational certificates (and, after merge, stochastic PEPs)."""
