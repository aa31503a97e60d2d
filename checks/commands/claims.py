"""``fedbounds claims``: list the papers' claims with their provenance, status and dependencies.

Default output is a table (id, label, status, short statement, depends on); ``--latex`` prints each claim's
LaTeX, ``--json`` a JSON list of the claims (:meth:`fedbounds.theory.core.claims.Claim.to_dict`, plus ``two_x``: what
catches a 2x error in the printed bound, measured, :func:`fedbounds.checks.verdicts.two_x.detection`; the table's
``2x`` column is its letter). ``--paper`` and
``--status`` filter; ``--id`` shows one claim in full.
"""

from __future__ import annotations

import argparse
import json
import sys

from fedbounds.checks.report.table import add_width_option, render_table
from fedbounds.theory.core.claims import PAPERS, Claim, Status
from fedbounds.theory.core.printing import text
from fedbounds.theory.registry import load_papers

STATUSES = tuple(s.value for s in Status)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``fedbounds claims``."""
    load_papers()
    parser.add_argument("--paper", choices=sorted(PAPERS), help="only this paper's claims (errata included)")
    parser.add_argument("--status", help=f"only claims with this status: {', '.join(STATUSES)}")
    parser.add_argument("--id", dest="claim_id", metavar="ID", help="show one claim in full")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--latex", action="store_true", help="print each claim as LaTeX")
    out.add_argument("--json", action="store_true", help="print the claims as JSON")
    parser.add_argument("--full", action="store_true", help="the full table (statements wrapped, dependencies); "
                        "by default one line per claim")
    add_width_option(parser)


def _select(args: argparse.Namespace) -> list[Claim]:
    from fedbounds.theory import registry

    if args.status is not None and args.status not in STATUSES:
        raise ValueError(f"unknown --status {args.status!r}; use one of {', '.join(STATUSES)}")
    claims = registry.all_claims() if args.paper is None else registry.claims_by_paper(args.paper)
    if args.claim_id is not None:
        one = registry.get_claim(args.claim_id)
        if one not in claims:
            raise ValueError(f"claim {one.id!r} belongs to paper {one.provenance.paper!r}, not to --paper {args.paper!r}")
        if args.status is not None and one.status.value != args.status:
            raise ValueError(f"claim {one.id!r} has status {one.status.value!r}, not --status {args.status!r}")
        return [one]
    if args.status is not None:
        claims = [c for c in claims if c.status.value == args.status]
    return claims


def _table(claims: list[Claim], width: int | None) -> str:
    """id, label, status, statement, depends on, 2x (what catches a 2x error in the printed bound, measured:
    docs/provenance.md §8): fitted to ``width`` (the statement wraps)."""
    from fedbounds.checks.verdicts.two_x import detection, load

    data = load()
    rows = [[c.id, c.label, c.status.value, " ".join((c.statement or c.title).split()), ", ".join(c.depends_on) or "-",
             str(detection(c, data)["catcher"])] for c in claims]
    return render_table(["id", "label", "status", "statement", "depends on", "2x"], rows, width)


def _compact(claims: list[Claim], width: int | None) -> str:
    """One line per claim: id, status, then the paper's label and the statement, cut to ``width`` columns
    (``--full``: :func:`_table`; ``--id``: one claim in full)."""
    from fedbounds.checks.report.table import output_width

    w = output_width(width)
    cols = [max([2, *(len(c.id) for c in claims)]), max([6, *(len(c.status.value) for c in claims)])]
    rest = max(w - sum(k + 2 for k in cols), 10)

    def cut(t: str, k: int) -> str:
        t = " ".join(t.split())
        return t if len(t) <= k else t[: k - 3] + "..."

    def line(cells: list[str]) -> str:
        return ("  ".join(x.ljust(k) for x, k in zip(cells[:2], cols)) + "  " + cut(cells[2], rest)).rstrip()

    out = [line(["id", "status", "label: statement"]), "  ".join("-" * k for k in [*cols, rest])[:w]]
    out += [line([c.id, c.status.value, f"{c.label}: {c.statement or c.title}"]) for c in claims]
    return "\n".join(out)


def _full(c: Claim) -> str:
    prov = c.provenance
    lines = [
        f"{c.id}: {c.title}",
        f"  paper:      {prov.paper}",
        f"  label:      {c.label}",
        f"  status:     {c.status.value}",
        f"  source:     {prov.source}",
    ]
    if prov.note:
        lines.append(f"  note:       {prov.note}")
    lines.append(f"  statement:  {c.statement or c.title}")
    if c.conclusion is not None:
        lines.append(f"  formula:    {c.quantity} {c.relation} {text(c.conclusion)}")
        lines.append(f"  variables:  {', '.join(c.variables)}")
    if c.hypotheses:
        lines.append(f"  hypotheses: {'; '.join(text(h) for h in c.hypotheses)}")
        if c.hypotheses_status is not c.status:
            lines.append(f"  hypotheses status: {c.hypotheses_status.value} (the conclusion is {c.status.value})")
    if c.unknowns:
        lines.append(f"  unknowns:   {', '.join(s.name for s in c.unknowns)}")
    lines.append(f"  depends on: {', '.join(c.depends_on) or '-'}")
    if c.proof:
        lines.append(f"  proof:      {', '.join(c.proof)}")
    if c.evidence:
        kinds = ", ".join(c.evidence_kinds)
        lines.append(f"  evidence:   {c.evidence}" + (f" [{kinds}]" if kinds else ""))
    from fedbounds.checks.verdicts.two_x import detection

    two = detection(c)
    lines.append(f"  2x error:   caught by {two['catcher']} ({two['why']})")
    lines.append(f"  latex:      {c.latex()}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the selected claims; 0 on success (bad options raise ValueError, a closed pipe BrokenPipeError:
    the dispatcher reports both)."""
    _print(args, _select(args))
    return 0


def _print(args: argparse.Namespace, claims: list[Claim]) -> None:
    if args.json:
        from fedbounds.checks.verdicts.two_x import detection, load

        data = load()
        json.dump([{**c.to_dict(), "two_x": detection(c, data)} for c in claims], sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.latex:
        for c in claims:
            print(f"% {c.id} ({c.label}; {c.status.value})")
            print(c.latex())
            print()
    elif args.claim_id is not None:
        print(_full(claims[0]))
    else:
        print(_table(claims, args.width) if getattr(args, "full", False) else _compact(claims, args.width))
        print(f"\n{len(claims)} claim" + ("" if len(claims) == 1 else "s") + ("" if getattr(args, "full", False) else
              " (--full: the whole table; --id ID: one claim)"))
