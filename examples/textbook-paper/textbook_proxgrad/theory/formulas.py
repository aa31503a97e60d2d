"""The rate, written once (Beck and Teboulle 2009, Theorem 3.1): with f convex and L-smooth, phi convex, the
step 1/L, psi(x_T) - psi* <= L ||x_0 - x*||^2 / (2 T)."""

import sympy as sp

L = sp.Symbol("L", positive=True)
T = sp.Symbol("T", positive=True, integer=True)
D2 = sp.Symbol("D2", positive=True)  # ||x_0 - x*||^2
epsilon = sp.Symbol("epsilon", positive=True)
eta = sp.Symbol("eta", positive=True)

#: Theorem 3.1's condition: the step is at most 1/L
step_max = 1 / L
#: Theorem 3.1's bound on psi(x_T) - psi*
rate_bound = L * D2 / (2 * T)
#: rounds for psi(x_T) - psi* <= epsilon (the bound solved for T)
rounds_needed = L * D2 / (2 * epsilon)
#: [derived] the same bound for any constant step eta <= 1/L (Beck 2017, Theorem 10.21): ||x_0 - x*||^2 / (2 eta T)
rate_bound_step = D2 / (2 * eta * T)
