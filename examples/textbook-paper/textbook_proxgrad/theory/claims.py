"""The one claim of the textbook paper."""

from fedbounds.theory.core.claims import Claim, Provenance, Status

from . import PAPER
from .formulas import eta, rate_bound, step_max

THEOREM_3_1 = Claim(
    id="textbook.theorem3_1",
    title="Proximal gradient: O(1/T) on convex composite problems",
    provenance=Provenance(PAPER, "Theorem 3.1"),
    status=Status.VERBATIM,
    quantity="psi(x_T) - psi*",
    conclusion=rate_bound,
    hypotheses=(eta <= step_max,),
    statement="With f convex and L-smooth, phi convex and the step 1/L: psi(x_T) - psi* <= L ||x_0 - x*||^2/(2T).",
)

CLAIMS = (THEOREM_3_1,)
