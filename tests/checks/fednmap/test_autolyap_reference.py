"""An independent reference for the project's PEP: AutoLyap (Upadhyaya, Das Gupta, Taylor et al., arXiv 2506.24076;
pip ``autolyap``) reproduces one FedNMap value at n = Q = 1.

The mapping. At n = Q = 1 the corrections stay 0 and a FedNMap round (docs/fednmap-reconstruction.md §2) is one
normal-map step, x_t = prox_{gamma phi}(z_t), z_{t+1} = z_t - eta_hat (grad f(x_t) + (z_t - x_t)/gamma). In AutoLyap's
state-space form (state z, inputs u = ((z - x)/gamma in d phi(x), grad f(x)), outputs y = (x, x)) it is

    A = [1],  B = [-eta_hat, -eta_hat],  C = [1; 1],  D = [[-gamma, 0], [-gamma, 0]],

Davis-Yin with f_3 = 0 and relaxation lambda = eta_hat/gamma. At eta_hat = gamma it is the proximal gradient step
x_{t+1} = prox_{gamma phi}(x_t - gamma grad f(x_t)). The value compared: the smallest linear rate rho with
||x_t - x*||^2 = O(rho^t) that AutoLyap certifies by searching a quadratic Lyapunov function (iteration-independent,
distance to the solution), for f L-smooth mu-strongly convex and phi convex (rho = 0 in FedNMap's weakly convex
phi); against it, the project's own PEP of that round (``prox_weakly_convex`` of the FedNMap encoding, solved and
cross-checked by ``certify``): the worst one-round ratio ||z_1 - z*||^2 / ||z_0 - z*||^2. Both equal the known
tight rate max(|1 - gamma L|, |1 - gamma mu|)^2 (Taylor, Hendrickx, Glineur 2018), which the test also checks.
"""

from __future__ import annotations

import numpy as np
import pytest

autolyap = pytest.importorskip("autolyap", reason="autolyap is not installed (pip install 'autolyap>=0.2.1', the dev extra)")

L, MU, GAMMA = 1.0, 0.1, 1.5
ETA_HAT = GAMMA  # lambda = eta_hat/gamma = 1: the proximal gradient step
TIGHT = max(abs(1 - GAMMA * L), abs(1 - GAMMA * MU)) ** 2  # 0.7225


def autolyap_rate() -> float:
    from autolyap import IterationIndependent, SolverOptions
    from autolyap.algorithms.algorithm import Algorithm
    from autolyap.problemclass import InclusionProblem
    from autolyap.problemclass.functions import Convex, SmoothStronglyConvex

    class NormalMapStep(Algorithm):
        def __init__(self) -> None:
            super().__init__(1, 2, [1, 1], [1, 2], [])

        def get_ABCD(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            return (np.array([[1.0]]), np.array([[-ETA_HAT, -ETA_HAT]]), np.array([[1.0], [1.0]]),
                    np.array([[-GAMMA, 0.0], [-GAMMA, 0.0]]))

    prob = InclusionProblem([Convex(), SmoothStronglyConvex(MU, L)])
    algo = NormalMapStep()
    P, p, T, t = IterationIndependent.LinearConvergence.get_parameters_distance_to_solution(algo)
    res = IterationIndependent.LinearConvergence.bisection_search_rho(prob, algo, P, T, p=p, t=t, tol=1e-5, verbosity=0,
        solver_options=SolverOptions(backend="cvxpy", cvxpy_solver="CLARABEL"))
    return float(res["rho"])


def our_rate() -> float:
    from fedbounds.checks.fednmap.pep.encoding import prox_weakly_convex
    from fedbounds.checks.pep.solve import certify

    def build():
        from PEPit import PEP
        from PEPit.functions import ConvexFunction, SmoothStronglyConvexFunction

        pb = PEP()
        f = pb.declare_function(SmoothStronglyConvexFunction, mu=MU, L=L)
        h = pb.declare_function(ConvexFunction)
        psi = f + h
        xs = psi.stationary_point()
        gs, _ = f.oracle(xs)
        zs = xs - GAMMA * gs  # z* = x* - gamma grad f(x*): the normal map's zero
        z0 = pb.set_initial_point()
        pb.set_initial_condition((z0 - zs) ** 2 <= 1)
        x0, s0, _ = prox_weakly_convex(z0, h, GAMMA, 0.0)
        z1 = z0 - ETA_HAT * (f.gradient(x0) + s0)
        pb.set_performance_metric((z1 - zs) ** 2)
        return pb

    cert = certify(build, solvers=("CLARABEL",), prove=False)
    assert cert.certified, cert
    return float(cert.value)


def test_autolyap_reproduces_our_pep_at_n_q_1() -> None:
    ours, theirs = our_rate(), autolyap_rate()
    assert abs(ours - TIGHT) < 1e-5, (ours, TIGHT)
    assert abs(theirs - TIGHT) < 1e-4, (theirs, TIGHT)
    assert abs(ours - theirs) < 1e-4, (ours, theirs)
