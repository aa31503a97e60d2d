"""``fedbounds feasible``: which parameters a theorem admits, which condition binds, and what it then promises.

Examples::

    fedbounds feasible fednmap --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --mu 0.1 --epsilon 0.01
    fedbounds feasible fednmap.theorem5 --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --eta-a 1e-4 --eta-s 2 --json
    fedbounds feasible ds-fedproxgrad --L-f 1 --L-r 0.5 --lam 0.2 --G 1 --B 1 --G-r 1 --sigma 1 --R 1000 --Delta0 1

The sub-commands and their options are built from the registered theorem declarations
(:class:`fedbounds.theory.core.feasibility.TheoremSpec`, :func:`fedbounds.theory.feasibility.declarations`): a
paper's new theorem is a new sub-command with no edit here. The answers come from
:func:`fedbounds.theory.feasibility.feasibility`, which evaluates the theory layer's own expressions.

Exit status: 0 admissible (and, with --epsilon, reachable); 1 not admissible, or epsilon unreachable; 2 bad input
(one line naming it).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
from typing import Any

EXIT_ADMISSIBLE, EXIT_NOT_ADMISSIBLE = 0, 1
#: the terminal width the report is fitted to unless --width says otherwise
DEFAULT_WIDTH = 80

EPILOG = """exit status:
  0  admissible (and, with --epsilon, epsilon is reachable)
  1  not admissible, or epsilon unreachable (the bound's floor is above it)
  2  bad input (one line naming what is at fault)

examples:
  fedbounds feasible fednmap --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --mu 0.1 --epsilon 0.01
  fedbounds feasible fednmap --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --plot region.png --axes gamma,eta_hat
  fedbounds feasible ds-fedproxgrad --L-f 1 --G 1 --B 1 --sigma 1 --alpha 0.75 --json
"""


def _groups() -> dict[str, list[Any]]:
    """The registered theorems grouped under one sub-command each: a theorem's first alias (several theorems
    may share it: the inputs given choose one), else its own name."""
    from fedbounds.theory.feasibility import declarations

    groups: dict[str, list[Any]] = {}
    for spec in declarations():
        groups.setdefault(spec.aliases[0] if spec.aliases else spec.name, []).append(spec)
    return groups


def _certifiers() -> dict[str, Any]:
    """theorem -> the checks-layer module that can certify its steps now (a paper's ``pep.feasibility``, optional)."""
    import importlib

    from fedbounds.checks.registry import PAPER_PACKAGES

    out: dict[str, Any] = {}
    for package in PAPER_PACKAGES:
        try:
            module = importlib.import_module(f"{package}.pep.feasibility")
        except ModuleNotFoundError as exc:
            if exc.name not in (f"{package}.pep", f"{package}.pep.feasibility"):  # a paper without PEP steps
                raise
            continue
        out.update(dict.fromkeys(getattr(module, "THEOREMS", ()), module))
    return out


def _add_output_options(p: argparse.ArgumentParser, default_axes: str | None) -> None:
    p.add_argument("--epsilon", type=float, default=None, help="target accuracy (> 0): report the rounds needed to reach it")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report as JSON (with a legend of its fields)")
    out.add_argument("--latex", action="store_true", help="print the conditions and bounds as LaTeX")
    p.add_argument(
        "--plot", metavar="FILE", default=None, help="draw the feasible region to FILE (its extension picks the format: png, pdf, svg, ...)"
    )
    axes = f" (default {default_axes})" if default_axes else ""
    p.add_argument("--axes", default=None, help=f"the plot's two parameters, 'X,Y'{axes}; needs --plot")
    p.add_argument("--width", type=int, default=None,
                   help=f"fit the text report to this many columns (default {DEFAULT_WIDTH}; tables that do not fit are printed as lists)")


def _flag_help(p: Any) -> str:
    req = "required; " if p.required else ""
    return f"{p.help} ({req}{p.allowed()})" if p.help else f"({req}{p.allowed()})"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``feasible`` subcommand's arguments: one sub-parser per registered theorem (or group of theorems
    sharing an alias), its options built from the declarations' inputs."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    sub = parser.add_subparsers(dest="theorem", required=True, metavar="THEOREM", parser_class=type(parser))
    taken: set[str] = set()
    certifiers = _certifiers()
    for key, specs in _groups().items():
        aliases = [a for a in dict.fromkeys([s.name for s in specs] + [a for s in specs for a in s.aliases]) if a != key and a not in taken]
        taken.update([key, *aliases])
        summary = next((s.summary for s in specs if s.summary), specs[0].title)
        description = summary + "\n\ntheorems: " + "; ".join(f"{s.name} ({s.title})" for s in specs)
        p = sub.add_parser(key, aliases=aliases, help=summary, description=description, epilog=EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        inputs: dict[str, str] = {}
        for decl in [q for s in specs for q in s.constants + s.params]:
            for flag, name in decl.flags():
                if name in inputs:
                    continue
                inputs[name] = flag
                p.add_argument(flag, dest=f"in_{name}", type=float, default=None, metavar=name.upper(),
                               help=_flag_help(decl))
        problem: dict[str, str] = {}
        for spec in specs:
            for name, text in spec.problem_flags:
                if name not in problem:
                    problem[name] = text
                    p.add_argument("--" + name.replace("_", "-"), dest=f"pb_{name}", action=argparse.BooleanOptionalAction,
                                   default=None, help=text)
        axes = next((",".join(s.default_axes) for s in specs if s.default_axes), None)
        _add_output_options(p, axes)
        if any(s.name in certifiers for s in specs):
            p.add_argument("--pep-certify", action="store_true",
                           help="certify the PEP steps now at this n (client-symmetric block form: its size does not depend "
                                "on n) where the committed grid does not cover it; seconds to a minute")
        p.set_defaults(_inputs=tuple(inputs), _problem=tuple(problem), _group=key)


def _axes(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ValueError(f"--axes must name two different parameters as 'X,Y', got {text!r}")
    return parts[0], parts[1]


#: the largest integer input the calculator takes (--n, --Q, ...): every integer up to it is exact in a float
MAX_INTEGER_INPUT = 2**53
#: the largest --n and --Q of ``--pep-certify``: the PEP is built with n clients before its block form is solved,
#: so its memory grows with n (README, "The error contract": under 1 GB resident at these)
PEP_CERTIFY_MAX_N = 32
PEP_CERTIFY_MAX_Q = 3  # the committed grid's largest Q (no multiplier to certify beyond it)
#: ... and their product (the PEP's points grow with n Q)
PEP_CERTIFY_MAX_NQ = 32
#: the largest --width (columns)
MAX_WIDTH = 10_000


def _check_ranges(args: argparse.Namespace) -> None:
    """Every number within a range that fits the machine, before any work (ValueError: one line, exit status 2)."""
    for name in getattr(args, "_inputs", ()):
        value = getattr(args, f"in_{name}", None)
        if value is not None and abs(value) > MAX_INTEGER_INPUT and name in ("n", "Q", "T", "K", "m", "tau"):
            raise ValueError(f"--{name} must be at most {MAX_INTEGER_INPUT} (2^53, exact in a float), got {value:g}")
    if args.width is not None and args.width > MAX_WIDTH:
        raise ValueError(f"--width must be between 40 and {MAX_WIDTH} columns, got {args.width}")
    if getattr(args, "pep_certify", False):
        for name, top in (("n", PEP_CERTIFY_MAX_N), ("Q", PEP_CERTIFY_MAX_Q)):
            value = getattr(args, f"in_{name}", None)
            if value is not None and value > top:
                raise ValueError(f"--pep-certify takes --{name} from 1 to {top} (the PEP's memory grows with {name}), got {value:g}")
        n, Q = getattr(args, "in_n", None), getattr(args, "in_Q", None)
        if n is not None and Q is not None and n * Q > PEP_CERTIFY_MAX_NQ:
            raise ValueError(f"--pep-certify takes n Q up to {PEP_CERTIFY_MAX_NQ} (the PEP's memory grows with n Q), got "
                             f"n Q = {n * Q:g}")


def _check_options(args: argparse.Namespace) -> None:
    """Reject nonsensical options before any work: --axes without --plot, a file name without a format matplotlib
    writes, a destination that cannot be written, a width below 40 (ValueError: one line, exit status 2)."""
    if args.width is not None and args.width < 40:
        raise ValueError(f"--width must be at least 40 columns, got {args.width}")
    if args.plot is None:
        if args.axes is not None:
            raise ValueError("--axes needs --plot FILE (it picks the plane of the feasible-region plot)")
        return
    from fedbounds.checks.report.feasibility_plot import check_plot_path

    check_plot_path(args.plot)


def _inputs(args: argparse.Namespace) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(theorem, constants, params, problem) from the command line, split by the chosen theorem's declaration."""
    from fedbounds.theory.feasibility import declarations, resolve_theorem

    values = {k: getattr(args, f"in_{k}") for k in args._inputs if getattr(args, f"in_{k}", None) is not None}
    problem = {k: getattr(args, f"pb_{k}") for k in args._problem if getattr(args, f"pb_{k}", None) is not None}
    name = resolve_theorem(args.theorem, values)
    spec = next(s for s in declarations() if s.name == name)
    const_keys = {k for p in spec.constants for k in p.keys()} | {a for a, _ in spec.key_aliases}
    constants = {k: v for k, v in values.items() if k in const_keys}
    params = {k: v for k, v in values.items() if k not in const_keys}
    return name, constants, params, problem


def _certified_now(result: Any, sections: tuple[Any, ...]) -> tuple[Any, ...]:
    """The report's ``pep_certified_steps`` section replaced by the certifier's answer (``--pep-certify``)."""
    module = _certifiers().get(result.theorem)
    if module is None:
        return sections
    data = module.certify(result)
    out = []
    for sec in sections:
        if sec.key != "pep_certified_steps":
            out.append(sec)
            continue
        if data.get("covered"):
            lines = [
                f"  eta_hat certified {data['eta_hat']:.6g}   printed {data['eta_hat_printed']:.6g}   k = {data['k']:.4g}",
                f"  eta_a   certified {data['eta_a']:.6g}   printed {data['eta_a_printed']:.6g}   k = {data['k']:.4g}",
                f"  eta_s   {data['eta_s']:.6g} (fixed at the printed eta_hat/(eta_a Q)); window m = 1",
                f"  certified for T in {{{', '.join(map(str, data['T']))}}} at n = {int(result.constants['n'])} by the "
                f"{data.get('form', 'grid')}; binding T = {data['T_binding']}, (C_0, C_c) = ({data['C_0']:g}, {data['C_c']:g})",
            ]
            if "cpu_seconds" in data:
                lines.append(f"  computed now: {data['cpu_seconds']:g} CPU s (fedbounds.checks.fednmap.pep.feasibility)")
        else:
            lines = [f"  not covered: {data['reason']}"]
        out.append(type(sec)(sec.key, sec.title, tuple(lines), data, sec.latex if data.get("form") == "committed grid" else ""))
    return tuple(out)


def exit_status(result: Any) -> int:
    """0 admissible (and epsilon reachable), 1 otherwise (see the module docstring)."""
    rn = result.rounds_needed
    if not result.admissible or (rn is not None and rn.flag == "unreachable"):
        return EXIT_NOT_ADMISSIBLE
    return EXIT_ADMISSIBLE


def run(args: argparse.Namespace) -> int:
    """Compute the feasibility report and print it (text, ``--json`` or ``--latex``); exit status 0 admissible,
    1 not admissible or epsilon unreachable."""
    from fedbounds.theory.feasibility import declarations, feasibility

    _check_ranges(args)
    _check_options(args)
    name, constants, params, problem = _inputs(args)
    spec = next(s for s in declarations() if s.name == name)
    result = feasibility(name, constants, params, args.epsilon, problem=problem or None)

    sections = report_sections(result)
    if getattr(args, "pep_certify", False):
        sections = _certified_now(result, sections)
    plot_message = None
    if args.plot is not None:
        from fedbounds.checks.report.feasibility_plot import draw_region

        if not result.region_symbols:
            raise ValueError(f"{name} declares no region to plot (TheoremSpec.region; docs/adding-a-paper.md §4)")
        axes_text = args.axes or ",".join(spec.default_axes or tuple(result.region_symbols)[:2])
        pep = next((sec.data for sec in sections if sec.key == "pep_certified_steps"), None)
        path, why = draw_region(result, _axes(axes_text), args.plot, pep=pep)
        plot_message = f"feasible-region plot ({axes_text}) written to {path}" + (f"; {why}" if why else "")

    width = args.width or DEFAULT_WIDTH
    if args.json:
        data = result.to_dict() | {sec.key: sec.data for sec in sections}
        data["answer"] = answer_lines(result)
        data["legend"] = LEGEND
        data["exit_status"] = exit_status(result)
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
        print(render_text(result, sections, width=width))
        if plot_message:
            print("\n".join(fit([plot_message], width)))
    return exit_status(result)


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


#: what every column and field of the report means (printed under the tables, and in --json as "legend")
LEGEND: dict[str, str] = {
    "bound": "the condition's right-hand side at this point (the other parameters as chosen)",
    "value": "the parameter's value at this point",
    "margin": "bound - value: >= 0 iff the condition holds (0: on the boundary)",
    "bound/value": "how much room is left: >= 1 iff the condition holds (1: on the boundary, 2: twice the value fits)",
    "status": "pass / FAIL / ? (cannot be decided); (eventual): needed only from some round on; (info): not a hypothesis",
    "*": "a parameter not given: set to its largest admissible value, or derived (eta_s = etahat/(eta_a Q)), or chosen (m)",
    "inf / nan": "inf: the condition places no bound (e.g. rho = 0); nan never appears (such input is rejected)",
    "provenance": "verbatim (as printed), derived (proved here), reconstructed (our reading of lost text); docs/provenance.md",
}


def _table(rows: list[list[str]], header: list[str], width: int | None = None) -> list[str]:
    """An aligned table; where it is wider than ``width``, one block per row ("header: value" lines) instead."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    table = [line(header), "  " + "  ".join("-" * w for w in widths), *[line(r) for r in rows]]
    if width is None or max(len(x) for x in table) <= width:
        return table
    out: list[str] = []
    for r in rows:
        out.append(f"  {r[0]}")
        for h, c in zip(header[1:], r[1:]):
            out += textwrap.wrap(f"{h}: {c}", width, initial_indent="      ", subsequent_indent="        ") or [f"      {h}:"]
    return out


def fit(lines: list[str], width: int) -> list[str]:
    """Each line wrapped to ``width`` columns, continuation lines indented under it."""
    out: list[str] = []
    for ln in lines:
        if len(ln) <= width:
            out.append(ln)
            continue
        indent = " " * (len(ln) - len(ln.lstrip()))
        out += textwrap.wrap(ln, width, subsequent_indent=indent + "    ", break_on_hyphens=False, break_long_words=False)
    return out


def _conditions_text(result: Any, width: int | None = None) -> list[str]:
    """The conditions table, their formulas and provenance, the legend, the bounds each implies, their notes."""
    from fedbounds.theory.core.feasibility import text

    out: list[str] = []
    out.append("Conditions" + ("" if result.admissible else "   -- NOT ADMISSIBLE"))
    rows = []
    for c in result.conditions:
        status = "pass" if c.meets else ("FAIL" if c.meets is False else "?")
        if not c.required:
            status += " (eventual)" if c.name == "absorption" else " (info)"
        rows.append([c.name, _fmt(c.bound), _fmt(c.value), _fmt(c.margin), _fmt(c.ratio), status])
    out += _table(rows, ["name", "bound", "value", "margin", "bound/value", "status"], width)
    out.append("  the conditions (provenance):")
    for c in result.conditions:
        out.append(f"    {c.name}: {text(c.relation)}   [{c.status}]")
    out.append("  legend:")
    for key in ("bound", "value", "margin", "bound/value", "status"):
        out.append(f"    {key}: {LEGEND[key]}")
    implied = [(c.name, b) for c in result.conditions for b in c.implied]
    if implied:
        out.append("  bounds each condition places on the other parameters (the rest held at the point):")
        for name, b in implied:
            out.append(f"    {name}: {b.describe()}" + ("" if b.meets is not False else "   (not met)"))
    for c in result.conditions:
        if c.note:
            out.append(f"  note {c.name}: {c.note}")
    return out


def _short(expr: Any) -> str:
    """A formula with its numbers to 6 significant digits, as terminal text."""
    import sympy as sp
    from fedbounds.theory.core.feasibility import text

    return text(sp.N(expr, 6)) if isinstance(expr, sp.Basic) else str(expr)


def answer_lines(result: Any) -> list[str]:
    """The answer first: admissible or not, the steps at the point, the rounds, and the footing line (what the answer
    stands on); then how the window was chosen and the rounds' exact form."""
    import sympy as sp

    text = _short

    failing = [c.name for c in result.conditions if c.required and c.meets is False]
    verdict = "admissible" if result.admissible else f"NOT ADMISSIBLE (fails {', '.join(failing) or 'a condition'})"
    steps = ", ".join(f"{k} = {_fmt(v)}" for k, v in result.chosen.items())
    out = [f"Answer: {verdict}, at {steps}" if steps else f"Answer: {verdict}"]
    rn = result.rounds_needed
    detail: list[str] = []
    source = result.step_sizes.get("m_source")
    if isinstance(source, str) and "chosen" in source:
        detail.append(f"  {source}")
    if rn is not None:
        head = f"Rounds to reach epsilon = {rn.epsilon:g}:"
        if rn.flag == "exact" and rn.rounds is not None:
            out.append(f"{head} {rn.horizon_name} = {rn.rounds:,}")
        elif rn.flag == "symbolic" and rn.reference_rounds is not None:
            from fedbounds.theory.core.feasibility.results import reference_text

            k = rn.reference_rounds
            shown = f"{k:,}" if k < 10**18 else f"{float(k):.6e}"
            out.append(f"{head} {rn.horizon_name} = {shown} (at {reference_text(rn.reference or {})})")
            if isinstance(rn.expression, sp.Rel):  # the message says which inequality the number solves
                detail.append(f"  {rn.message}")
            elif rn.expression is not None:
                detail.append(f"  in the unknown constants (numbers to 6 digits): {rn.horizon_name} >= {text(rn.expression)}")
        elif rn.flag == "symbolic" and rn.expression is not None:
            out.append(f"{head} {rn.horizon_name} >= {text(rn.expression)} (in the unknown constants; numbers to 6 digits)")
        elif rn.flag == "O":
            out.append(f"{head} {rn.horizon_name} = O({text(rn.expression) if rn.expression is not None else '?'}) (constants lost)")
        else:
            out.append(f"{head} unreachable ({rn.message})")
        if rn.reference_note and rn.reference_rounds is not None:
            detail.append(f"  reference values: {rn.reference_note}")
    footing = result.footing_line()
    return out + ([footing] if footing else []) + detail


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
        val = _fmt(t.value) if t.value is not None else _short(t.expression)
        flag = {"exact": "", "O": "   [O-term: constants lost]", "unknown": f"   [unknown: {', '.join(t.unknowns)}]"}.get(t.flag, t.flag)
        out.append(f"  {t.name:<58} {val}{flag}")
    if g.total is not None:
        out.append(f"  {'total':<58} {_fmt(g.total)}" + ("   [O: indicative only]" if g.flag == "O" else ""))
    if g.floor is not None:
        out.append(f"  {'floor (horizon -> infinity)':<58} {_fmt(g.floor)}")
    for t in g.extra_terms:
        val = _fmt(t.value) if t.value is not None else _short(t.expression)
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


def _table1_text(result: Any, width: int | None = None) -> list[str]:
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
        out += _table(rows, ["method", "reference", "f / psi", "phi", "extra assumptions", "rate", at, "applies", "why"], width)
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


def render_text(result: Any, sections: tuple[Any, ...] = (), *, width: int | None = DEFAULT_WIDTH) -> str:
    """The readable report, fitted to ``width`` columns (None: no limit): the answer, the conditions table with its
    legend, the binding condition, the largest step sizes, the guarantee, Table 1, and the paper's extra
    ``sections`` (:func:`report_sections`)."""
    out = [f"{result.title}  [{result.theorem}]"]
    out += answer_lines(result)
    out.append("")
    out.append("constants: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in result.constants.items()))
    given = set(result.given)
    out.append(
        "point:     "
        + ", ".join(f"{k} = {_fmt(v)}{'' if k in given else '*'}" for k, v in result.chosen.items())
        + "   (* = not given: largest admissible, derived or chosen)"
    )
    out.append("")
    out += _conditions_text(result, width)
    out += _binding_text(result)
    out += _guarantee_text(result)
    out += _table1_text(result, width)
    out += _sections_text(sections)
    if result.notes:
        out.append("")
        out.append("Notes")
        out += [f"  - {n}" for n in result.notes]
    return "\n".join(fit(out, width) if width else out)
