"""``fedbounds feasible``: which parameters a theorem admits, which condition binds, and what it then promises.

Examples::

    fedbounds feasible fednmap --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --mu 0.1 --T 1000 --epsilon 0.1
    fedbounds feasible fednmap.theorem5 --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --eta-a 1e-4 --eta-s 2 --json
    fedbounds feasible ds-fedproxgrad --L-f 1 --L-r 0.5 --lam 0.2 --G 1 --B 1 --G-r 1 --sigma 1 --R 1000 --Delta0 1

The answers come from :func:`fedbounds.theory.feasibility.feasibility`, which evaluates the theory layer's own
expressions. Bad input: a ValueError, which the dispatcher prints as one line (exit status 2).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

FEDNMAP_NAMES = ("fednmap", "fednmap.theorem5", "fednmap.theorem8")
DS_NAMES = ("ds-fedproxgrad", "ds.theorem5_3", "ds.corollary_ii")

#: (flag, dest, help) for FedNMap's constants and parameters (all floats; the theory layer validates them)
_FEDNMAP_CONSTANTS = (
    ("--L", "L", "smoothness of every f_i (Assumption 2), > 0"),
    ("--rho", "rho", "weak-convexity modulus of phi (Assumption 3), >= 0"),
    ("--n", "n", "number of clients, integer >= 1"),
    ("--Q", "Q", "local steps per round, integer >= 1"),
    ("--sigma", "sigma", "gradient-noise standard deviation (Assumption 1: variance sigma^2), >= 0"),
    ("--mu", "mu", "proximal-PL constant (Assumption 4), in (0, L]; selects Theorem 8 for 'fednmap'"),
    ("--C0", "C_0", "Theorem 8's Lyapunov constant C_0, if known (lost with the text)"),
    ("--EL0", "EL_0", "Theorem 8's E[L_0], if known (lost with the text)"),
    ("--Delta-f", "Delta_f", "f(x_0) - f* (Theorem 5's complexity)"),
    ("--grad0-sq", "grad0_sq", "(1/n) sum_i ||grad f_i(x_0)||^2 (Theorem 5's complexity)"),
    ("--zeta2", "zeta2", "heterogeneity bound zeta^2, if bounded (Table 1)"),
)
_FEDNMAP_PARAMS = (
    ("--gamma", "gamma", "prox parameter, in (0, 1/rho); default: its largest admissible value"),
    ("--eta-a", "eta_a", "client step; default: its largest admissible value"),
    ("--eta-s", "eta_s", "server step (etahat = eta_s eta_a Q)"),
    ("--eta-hat", "eta_hat", "effective step etahat (instead of --eta-s)"),
    ("--m", "m", "multistep window m >= 1 (default: the largest admitted by the step sizes, else 1)"),
    ("--T", "T", "horizon (rounds) at which to evaluate the guarantee"),
)
_PROBLEM_FLAGS = (
    ("--convex", "f_convex", "f is convex"),
    ("--strongly-convex", "f_strongly_convex", "f is strongly convex"),
    ("--pl", "pl", "psi satisfies the proximal-PL inequality (implied by --mu)"),
    ("--quadratic", "quadratic", "every f_i is quadratic"),
    ("--bounded-heterogeneity", "bounded_heterogeneity", "||grad f_i - grad f||^2 <= zeta^2 everywhere"),
    ("--bounded-iterates", "bounded_iterates", "the iterates stay bounded"),
    ("--bounded-subgradients", "bounded_subgradients", "bounded subgradients of psi (B_psi)"),
)
_DS_CONSTANTS = (
    ("--L-f", "L_f", "smoothness of each f_i (A1(i)), > 0"),
    ("--L-r", "L_r", "smoothness of the fairness regulariser r (A1(i)), >= 0"),
    ("--lam", "lam", "fairness weight lambda, >= 0"),
    ("--G", "G", "dissimilarity constant G of (8), > 0"),
    ("--B", "B", "dissimilarity constant B of (8), > 0"),
    ("--G-r", "G_r", "bound on ||grad r|| (A3), >= 0"),
    ("--sigma", "sigma", "fairness-gradient noise standard deviation (9), >= 0"),
    ("--rho", "rho", "weak-convexity modulus of the f_i (A1(ii)); default L_f"),
    ("--Delta0", "Delta_0", "F(x^0) - F*, if known"),
)
_DS_PARAMS = (
    ("--c", "c", "schedule constant: eta_r = c/(r+1)^alpha (Theorem 5.3) or c/sqrt(R) (Corollary (ii))"),
    ("--alpha", "alpha", "schedule exponent (selects Theorem 5.3 for 'ds-fedproxgrad')"),
    ("--c-gamma", "c_gamma", "inexactness ratio: gamma_r <= c_gamma eta_r (10); default: an exact local prox"),
    ("--eta", "eta", "a constant step, for the constant-step floor"),
    ("--gamma-r", "gamma_r", "a constant inexactness gamma_r, for the constant-step floor"),
    ("--R", "R", "horizon (rounds)"),
)

DEFAULT_AXES = {"fednmap": "eta_a,eta_hat", "ds": "eta,gamma_r"}


def _add_output_options(p: argparse.ArgumentParser, default_axes: str) -> None:
    p.add_argument("--epsilon", type=float, default=None, help="target accuracy (> 0): report the rounds needed")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report as JSON")
    out.add_argument("--latex", action="store_true", help="print the conditions and bounds as LaTeX")
    p.add_argument(
        "--plot", metavar="FILE", default=None, help="draw the feasible region to FILE (its extension picks the format: png, pdf, svg, ...)"
    )
    p.add_argument("--axes", default=None, help=f"the plot's two parameters, 'X,Y' (default {default_axes}); needs --plot")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``feasible`` subcommand's arguments: one sub-parser per theorem family."""
    sub = parser.add_subparsers(dest="theorem", required=True, metavar="THEOREM")
    fed = sub.add_parser(
        "fednmap",
        aliases=list(FEDNMAP_NAMES[1:]),
        help="FedNMap, Theorem 5 (nonconvex) or Theorem 8 (PL, with --mu)",
        description="FedNMap (arXiv 2602.03357): Theorem 5 / Theorem 8 step-size conditions and guarantees",
    )
    for flag, dest, help_text in _FEDNMAP_CONSTANTS + _FEDNMAP_PARAMS:
        fed.add_argument(flag, dest=dest, type=float, default=None, help=help_text)
    for flag, dest, help_text in _PROBLEM_FLAGS:
        fed.add_argument(flag, dest=dest, action=argparse.BooleanOptionalAction, default=None, help=help_text)
    _add_output_options(fed, DEFAULT_AXES["fednmap"])
    fed.set_defaults(family="fednmap")

    ds = sub.add_parser(
        "ds-fedproxgrad",
        aliases=list(DS_NAMES[1:]),
        help="DS FedProxGrad, Theorem 5.3 (with --alpha) or Corollary (ii)",
        description="DS FedProxGrad (arXiv 2512.08671): A4 conditions, absorption, r_0, Corollary (ii)",
    )
    for flag, dest, help_text in _DS_CONSTANTS + _DS_PARAMS:
        ds.add_argument(flag, dest=dest, type=float, default=None, help=help_text)
    _add_output_options(ds, DEFAULT_AXES["ds"])
    ds.set_defaults(family="ds")


def _collect(args: argparse.Namespace, spec: tuple[tuple[str, str, str], ...]) -> dict[str, Any]:
    return {dest: getattr(args, dest) for _, dest, _ in spec if getattr(args, dest, None) is not None}


def _axes(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ValueError(f"--axes must name two different parameters as 'X,Y', got {text!r}")
    return parts[0], parts[1]


def _check_plot_options(args: argparse.Namespace) -> None:
    """Reject nonsensical plot options before any work: --axes without --plot, a file name without a format
    matplotlib writes, a destination that cannot be written (ValueError: one line, exit status 2)."""
    if args.plot is None:
        if args.axes is not None:
            raise ValueError("--axes needs --plot FILE (it picks the plane of the feasible-region plot)")
        return
    if args.axes is None:
        args.axes = DEFAULT_AXES[args.family]
    from fedbounds.checks.core.feasibility_plot import check_plot_path

    check_plot_path(args.plot)


def run(args: argparse.Namespace) -> int:
    """Compute the feasibility report and print it (text, ``--json`` or ``--latex``); exit status 0."""
    from fedbounds.theory.feasibility import feasibility

    _check_plot_options(args)
    if args.family == "fednmap":
        constants = _collect(args, _FEDNMAP_CONSTANTS)
        params = _collect(args, _FEDNMAP_PARAMS)
        problem = {dest: getattr(args, dest) for _, dest, _ in _PROBLEM_FLAGS if getattr(args, dest, None) is not None}
        result = feasibility(args.theorem, constants, params, args.epsilon, problem=problem or None)
    else:
        constants = _collect(args, _DS_CONSTANTS)
        params = _collect(args, _DS_PARAMS)
        result = feasibility(args.theorem, constants, params, args.epsilon)

    plot_message = None
    if args.plot is not None:
        from fedbounds.checks.core.feasibility_plot import plot_region

        path = plot_region(result, _axes(args.axes), args.plot)
        plot_message = f"feasible-region plot ({args.axes}) written to {path}"

    sections = report_sections(result)
    if args.json:
        data = result.to_dict() | {sec.key: sec.data for sec in sections}
        if plot_message:
            data["plot"] = str(args.plot)
        print(json.dumps(data, indent=2, default=str))
        if plot_message:
            print(plot_message, file=sys.stderr)
    elif args.latex:
        print(with_latex_lines(result.to_latex(), [sec.latex for sec in sections if sec.latex]))
        if plot_message:
            print(plot_message, file=sys.stderr)
    else:
        print(render_text(result, sections))
        if plot_message:
            print(plot_message)
    return 0


# -------------------------------------------------------------------------------------------------------------
# text report
# -------------------------------------------------------------------------------------------------------------


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if math.isnan(x):
            return "nan"
        if x == int(x) and abs(x) < 1e9:
            return str(int(x))
        return f"{x:.6g}"
    return str(x)


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return [line(header), "  " + "  ".join("-" * w for w in widths), *[line(r) for r in rows]]


def _conditions_text(result: Any) -> list[str]:
    """The conditions table, the bounds each implies on the other parameters, and their notes."""
    out: list[str] = []
    out.append("Conditions" + ("" if result.admissible else "   -- NOT ADMISSIBLE"))
    rows = []
    for c in result.conditions:
        status = "pass" if c.meets else ("FAIL" if c.meets is False else "?")
        if not c.required:
            status += " (eventual)" if c.name == "absorption" else " (info)"
        rows.append([c.name, str(c.relation), _fmt(c.bound), _fmt(c.value), _fmt(c.margin), _fmt(c.ratio), status])
    out += _table(rows, ["name", "condition", "bound", "value", "margin", "bound/value", "status"])
    implied = [(c.name, b) for c in result.conditions for b in c.implied]
    if implied:
        out.append("  bounds each condition places on the other parameters (the rest held at the point):")
        for name, b in implied:
            out.append(f"    {name}: {b.describe()}" + ("" if b.meets is not False else "   (not met)"))
    for c in result.conditions:
        if c.note:
            out.append(f"  note {c.name}: {c.note}")
    return out


def _binding_text(result: Any) -> list[str]:
    """The binding condition(s) and the largest admissible step sizes."""
    out: list[str] = []
    out.append("")
    out.append("Binding: " + (", ".join(result.binding) if result.binding else "-"))
    if len(result.binding) > 1:
        out.append("  (several conditions at the same slack: the unset parameters sit at their bounds)")
    if result.binding_by_parameter:
        out.append("  smallest upper bound per parameter from: " + ", ".join(f"{k} <- {v}" for k, v in result.binding_by_parameter.items()))
    out.append("")
    out.append("Largest admissible step sizes and derived quantities")
    for k, v in result.step_sizes.items():
        out.append(f"  {k:<26} {_fmt(v)}")
    out.append("")
    return out


def _guarantee_text(result: Any) -> list[str]:
    """The guarantee's terms, total and floor, and the rounds needed."""
    out: list[str] = []
    g = result.guarantee
    hz = f" at {g.horizon_name} = {g.horizon}" if g.horizon is not None else f" ({g.horizon_name} symbolic: no horizon given)"
    if g.relation == "O":
        head = f"{g.quantity} = O(sum of the terms below)"
    elif g.relation == "->":
        head = f"{g.quantity} -> {_fmt(g.total)}"
    else:
        head = f"{g.quantity} {g.relation} sum of the terms below"
    out.append(f"Guarantee [{g.claim}]: {head}{hz}")
    for t in g.terms:
        val = _fmt(t.value) if t.value is not None else str(t.expression)
        flag = {"exact": "", "O": "   [O-term: constants lost]", "unknown": f"   [unknown: {', '.join(t.unknowns)}]"}.get(t.flag, t.flag)
        out.append(f"  {t.name:<58} {val}{flag}")
    if g.total is not None:
        out.append(f"  {'total':<58} {_fmt(g.total)}" + ("   [O: indicative only]" if g.flag == "O" else ""))
    if g.floor is not None:
        out.append(f"  {'floor (horizon -> infinity)':<58} {_fmt(g.floor)}")
    for t in g.extra_terms:
        val = _fmt(t.value) if t.value is not None else str(t.expression)
        out.append(f"  {t.name:<58} {val}")
    if g.note:
        out.append(f"  note: {g.note}")
    if result.rounds_needed is not None:
        rn = result.rounds_needed
        out.append("")
        head = f"Rounds needed for epsilon = {rn.epsilon:g}"
        if rn.flag == "exact" and rn.rounds is not None:
            out.append(f"{head}: {rn.horizon_name} = {rn.rounds} (exact: smallest horizon whose bound is <= epsilon)")
        else:
            out.append(f"{head} [{rn.flag}]: {rn.message}")
    return out


def _table1_text(result: Any) -> list[str]:
    """FedNMap's Table 1 rows and the problem class (empty for other theorems)."""
    out: list[str] = []
    if result.table1:
        out.append("")
        out.append("Table 1 (FedNMap paper): methods whose assumptions this problem meets")
        rows = [
            [
                r.method,
                r.reference,
                r.objective,
                r.regularizer,
                r.assumptions,
                r.rate,
                _fmt(r.rate_value),
                {True: "yes", False: "no", None: "unknown"}[r.applies],
                "; ".join(x for x in r.reasons if r.applies is not False or x.endswith("not met")),
            ]
            for r in result.table1
        ]
        at = f"rate at T={result.guarantee.horizon} (O)" if result.guarantee.horizon is not None else "rate value"
        out += _table(rows, ["method", "reference", "f / psi", "phi", "extra assumptions", "rate", at, "applies", "why"])
    if result.problem_class:
        known = {k: v for k, v in result.problem_class.items() if v is not None}
        out.append("problem class: " + (", ".join(f"{k}={_fmt(v)}" for k, v in known.items()) or "nothing known"))
    return out


def report_sections(result: Any) -> tuple[Any, ...]:
    """The paper's extra report sections (:func:`fedbounds.theory.feasibility.report_sections`)."""
    from fedbounds.theory.feasibility import report_sections as sections

    return sections(result)


def with_latex_lines(tex: str, lines: list[str]) -> str:
    """``tex`` (an ``align*``) with ``lines`` added before its ``\\end{align*}``."""
    if not lines:
        return tex
    head, sep, tail = tex.rpartition(r"\end{align*}")
    return head + "".join(f"{line}\n" for line in lines) + sep + tail if sep else tex + "\n" + "\n".join(lines)


def _sections_text(sections: tuple[Any, ...]) -> list[str]:
    out: list[str] = []
    for sec in sections:
        out += ["", sec.title, *sec.lines]
    return out


def render_text(result: Any, sections: tuple[Any, ...] = ()) -> str:
    """The readable report: conditions table, binding condition, largest step sizes, guarantee, Table 1, and the
    paper's extra ``sections`` (:func:`report_sections`)."""
    out = [f"{result.title}  [{result.theorem}]"]
    out.append("constants: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in result.constants.items()))
    given = set(result.given)
    out.append(
        "point:     "
        + ", ".join(f"{k} = {_fmt(v)}{'' if k in given else '*'}" for k, v in result.chosen.items())
        + "   (* = not given: largest admissible / derived)"
    )
    out.append("")
    out += _conditions_text(result)
    out += _binding_text(result)
    out += _guarantee_text(result)
    out += _table1_text(result)
    out += _sections_text(sections)
    if result.notes:
        out.append("")
        out.append("Notes")
        out += [f"  - {n}" for n in result.notes]
    return "\n".join(out)
