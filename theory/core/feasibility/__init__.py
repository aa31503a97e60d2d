"""The parameter feasibility calculator's machinery (front door: :mod:`fedbounds.theory.feasibility`).

* **Declarations**: a theorem is data, a :class:`TheoremSpec` listing its inputs (:class:`Param`: range,
  integer or not, default), its hypotheses (:class:`Condition`: ``value <= bound`` or membership of a set,
  as the formulas modules' sympy expressions), its guarantee (:class:`GuaranteeSpec` of :class:`TermSpec`),
  its unknown constants (:class:`Unknown`) and aliases. Per-theorem special cases are small named hooks
  on the declaration. :func:`register_theorem` adds one at run time.
* **One generic solver**, :func:`solve`: validates the inputs against the declaration, chooses the point
  (missing parameters at their largest admissible values), evaluates every condition and the bounds it
  implies on the other parameters, the binding condition, the guarantee, the rounds needed, the region.
  Answers that double precision cannot hold (L = 1e308) are rejected naming the input, never printed as
  nan or inf (:func:`check_finite`).
* Result types, input validation (a ValueError naming the parameter and the allowed range, written with
  :mod:`math` because ``theory/`` is sympy-only), and the numerical helpers that evaluate the theory
  layer's sympy expressions; integer searches run in integer arithmetic (any size).

No formula of either paper is written here: every condition and bound is taken from
:mod:`fedbounds.theory.fednmap.formulas` or :mod:`fedbounds.theory.ds_fedproxgrad.formulas` through the
papers' declarations, and evaluated through :func:`evaluate`.

The modules: :mod:`.numeric` (evaluation and input validation), :mod:`.intervals` (feasible sets and integer
searches), :mod:`.results` (result types and their printers), :mod:`.declarations` (the declaration language and
the registry), :mod:`.solver` (the generic solver). Every name is re-exported here.
"""

from __future__ import annotations

from fedbounds.theory.core.feasibility.declarations import (  # noqa: F401
    _DOMAINS,
    _REGISTRY,
    Condition,
    GuaranteeSpec,
    Param,
    Point,
    TermSpec,
    TheoremSpec,
    Unknown,
    register_theorem,
    registered,
    resolve_alias,
    unregister_theorem,
)
from fedbounds.theory.core.feasibility.intervals import (  # noqa: F401
    ParamBound,
    _bisect_first,
    _int_ok,
    _integer_ends,
    _refine,
    _search_ok,
    feasible_interval,
    first_true,
    last_true,
    smallest_integer,
)
from fedbounds.theory.core.feasibility.numeric import (  # noqa: F401
    INWARD,
    MAX_INTEGER,
    REL_TOL,
    _as_float,
    _compiled,
    _short,
    _symbols_of,
    check_int,
    check_keys,
    check_positive,
    epsilon_from,
    evaluate,
    function_of,
    latex,
    meets_upper,
    round_inward,
    sigma2_from,
    substitute,
    text,
    value_of,
)
from fedbounds.theory.core.feasibility.results import (  # noqa: F401
    _TEX_SPECIALS,
    ConditionResult,
    FeasibilityResult,
    Guarantee,
    RoundsNeeded,
    Table1Row,
    Term,
    _num,
    _tex_text,
    binding_of,
    upper_condition,
)
from fedbounds.theory.core.feasibility.solver import (  # noqa: F401
    _active,
    _as_set,
    _magnitude,
    _out_of_range,
    _out_of_range_named,
    _region_condition,
    _result,
    _solved_rounds,
    _unknown_free,
    _upper,
    binding_by_parameter,
    build_guarantee,
    check_finite,
    choose_largest,
    evaluate_conditions,
    guarantee_env,
    implied_bounds,
    make_term,
    rounds_needed,
    solve,
    validate_inputs,
    value_or_expr,
)
