"""The textbook paper's feasibility entry: Theorem 3.1's step condition and its bound, declared for the calculator
(``fedbounds feasible textbook ...``; docs/adding-a-paper.md §4)."""

from fedbounds.theory.core.feasibility import Condition, GuaranteeSpec, Param, TermSpec, TheoremSpec, Unknown

from .formulas import D2, L, T, eta, rate_bound_step, step_max

THEOREM_3_1 = TheoremSpec(
    name="textbook.theorem3_1",
    title="Proximal gradient, Theorem 3.1 (convex composite)",
    summary="proximal gradient's O(1/T) rate (Beck and Teboulle 2009, Theorem 3.1)",
    aliases=("textbook",),
    constants=(
        Param("L", L, "positive", required=True, help="smoothness of f"),
        Param("D2", D2, "nonnegative", help="||x_0 - x*||^2, if known"),
    ),
    params=(
        Param("eta", eta, "positive", help="the step; default: its largest admissible value, 1/L"),
        Param("T", T, "integer", horizon=True, help="horizon (iterations)"),
    ),
    conditions=(Condition("step", "Theorem 3.1, eta <= 1/L", "verbatim", "eta", bound=step_max),),
    guarantee=GuaranteeSpec(
        claim="textbook.theorem3_1",
        quantity="psi(x_T) - psi*",
        relation="<=",
        horizon=T,
        terms=(TermSpec("||x_0 - x*||^2/(2 eta T)", rate_bound_step),),
        floor=0.0,
        rounds_start=1,
    ),
    unknowns=(Unknown(D2, "D2", "||x_0 - x*||^2, the initial distance"),),
    # the plot: each condition's margin (>= 0 iff met) in the plane of two parameters
    region=(("step", step_max - eta, None),),
    region_symbols=(("eta", eta), ("T", T)),
    default_axes=("eta", "T"),
)

DECLARATIONS = (THEOREM_3_1,)
