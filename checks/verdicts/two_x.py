"""Per claim, what catches a 2x error in its printed bound, measured (design.md, principle 3; docs/provenance.md §8).

For every quantitative claim (a conclusion with ``<=``, ``>=``, ``==`` or ``->``; an O-rate has no printed constant) the
bound is perturbed twice, x2 and /2, and four catchers are asked, each by running it on the perturbed bound:

* ``a``, the claim's own check (quick profile, seed 0): its verdicts re-judged with their bounds x2 and /2
  (:func:`fedbounds.checks.verdicts.verdict.decide` on each verdict's recorded confidence interval, for a PEP verdict
  its admissible lower bound and certified upper bound). The check's experiment does not depend on the size of its
  bound, so this is what a run with the perturbed constant would decide. Catches when a verdict turns ``violated``.
* ``b``, a PEP family: the same, on the checks of the PEP families (``fednmap.pep``, ``fednmap.spep``, ``ds.pep``,
  ``ds.spep``) that check the claim (the same id, or the same paper label: Theorem 8's 36 and 12100).
* ``c``, a sympy proof step: each step that takes the claim's own expression (``Claim.reaches``) is run on the
  expression x2 and /2; catches when the step is no longer proved.
* ``d``, a pinned regression value: the pins of tests/theory/test_constants_pinned.py whose formula is the claim's
  conclusion, run with that formula x2 and /2; catches when the pin fails. A pin cannot tell a wrong constant from
  a looser valid one (it fails for 36 -> 72 as for 36 -> 18), so it is reported apart from (a)-(c).
* ``e``: none of the above fails.

Errata are false as printed; their row says so (``n/a``), as do the claims that are not quantitative. A catcher that
could not be asked (no check, no reaching step, no pin) is ``None``, never guessed. The row's ``catcher`` is the
first of a, b, c that fires for either perturbation, else ``d`` if a pin does, else ``e``.

Generate (one command; runs the quick profile once, then the proof steps and pins; commit the JSON it writes)::

    python -m fedbounds.checks.verdicts.two_x --measure [--report REPORT.json]

:data:`DATA` is the committed table; :func:`detection` is what ``fedbounds claims`` prints as ``two_x``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["DATA", "FACTORS", "PEP_FAMILIES", "detection", "load", "measure", "rejudge", "summary"]

#: check-id prefixes of the PEP families
PEP_FAMILIES = ("fednmap.pep.", "fednmap.spep.", "ds.pep.", "ds.spep.")
#: the committed table (beside this module; installed as package data)
DATA = "checks/verdicts/two_x_measured.json"
_DATA_PATH = Path(__file__).with_name("two_x_measured.json")
#: the perturbations of the printed bound
FACTORS = {"x2": 2.0, "/2": 0.5}
COMMAND = "python -m fedbounds.checks.verdicts.two_x --measure"
QUANTITATIVE = ("<=", ">=", "==", "->")


def _root() -> Path:
    return Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------------------------- the four catchers


def rejudge(verdicts: Iterable[Mapping[str, Any]], factor: float) -> bool | None:
    """Whether some verdict (a report.json verdict record) turns ``violated`` with its bound times ``factor``; None
    when none has a finite bound and interval to re-judge."""
    from fedbounds.checks.verdicts.verdict import VIOLATED, decide

    judged = False
    for v in verdicts:
        try:
            lo, hi, bound = float(v["ci_low"]), float(v["ci_high"]), float(v["bound"])
        except (KeyError, TypeError, ValueError):
            continue
        if not math.isfinite(bound) or (math.isnan(lo) and math.isnan(hi)):
            continue
        judged = True
        if decide(lo, hi, bound * factor, exact=bool(v.get("exact"))) == VIOLATED:
            return True
    return False if judged else None


def _proof_catches(claim: Any, factor: float) -> tuple[bool | None, list[str]]:
    """Whether a step of ``claim.reaches`` is no longer proved on the claim's expression times ``factor``."""
    import sympy as sp
    from fedbounds.theory.core import proofs

    if not claim.reaches:
        return None, []
    k = sp.Integer(2) if factor == 2.0 else sp.Rational(1, 2)
    broken = [f"{step}({kw}={key} {'x2' if factor == 2.0 else '/2'})" for step, kw, key in claim.reaches
              if not proofs.run_step(step, **{kw: claim.expression(key) * k}).proved]
    return bool(broken), broken


def _pins() -> dict[str, Any]:
    """The pinned-value tests of the checkout (tests/theory/test_constants_pinned.py), by paper: each runs one pin
    (raises AssertionError when it fails); {} outside a checkout (the pins are then not asked)."""
    import importlib.util

    path = _root() / "tests" / "theory" / "test_constants_pinned.py"
    spec = importlib.util.spec_from_file_location("_fedbounds_pins", path)
    if not path.is_file() or spec is None or spec.loader is None:
        return {}
    pins = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pins)
    return {"fednmap": pins.test_fednmap_formula_at_a_point, "ds": pins.test_ds_formula_at_a_point,
            "_expected": {"fednmap": pins.FN_EXPECTED, "ds": pins.DS_EXPECTED}}  # type: ignore[dict-item]


def _sees(formula: Any, conclusion: Any) -> bool:
    """Whether a pinned ``formula`` carries a printed constant of ``conclusion``: it is the conclusion, or one of its
    terms or factors (Theorem 8's 36 sits in ``theorem8_variance``, a term of its bound)."""
    import sympy as sp

    if not isinstance(formula, sp.Expr) or not isinstance(conclusion, sp.Basic):
        return False
    return formula == conclusion or (not formula.is_Atom and conclusion.has(formula))


def _pin_catches(claim: Any, factor: float, pins: Mapping[str, Any]) -> tuple[bool | None, list[str]]:
    """Whether a pin whose formula is the claim's conclusion, or a term or factor of it (:func:`_sees`), fails with that
    formula times ``factor`` (the pin test itself is run, with the formula module's attribute replaced for the call)."""
    import sympy as sp
    from fedbounds.theory.ds_fedproxgrad import formulas as ds
    from fedbounds.theory.fednmap import formulas as fn

    if not isinstance(claim.conclusion, sp.Basic) or not pins:
        return None, []
    paper = claim.paper
    module = {"fednmap": fn, "ds": ds}.get(paper)
    if module is None:
        return None, []
    names = [n for n in pins["_expected"][paper] if _sees(getattr(module, n, None), claim.conclusion)]
    if not names:
        return None, []
    failed = []
    k = sp.Integer(2) if factor == 2.0 else sp.Rational(1, 2)
    for name in names:
        original = getattr(module, name)
        setattr(module, name, original * k)
        try:
            pins[paper](name)
        except AssertionError:
            failed.append(name)
        finally:
            setattr(module, name, original)
    return bool(failed), failed


# --------------------------------------------------------------------------------------------- the table


def _pep_links(claim: Any, checks: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str]) -> list[str]:
    """The PEP-family checks of ``claim``: the same id, or the same paper label (a check of the claim's constant)."""
    out = []
    for cid in checks:
        if not cid.startswith(PEP_FAMILIES):
            continue
        if cid == claim.id or (labels.get(cid) and labels.get(cid) == claim.provenance.label and cid != claim.id):
            out.append(cid)
    return sorted(out)


def measure_claim(claim: Any, checks: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str],
                  pins: Mapping[str, Any]) -> dict[str, Any]:
    """One row of the table (module docstring). A registered check of the claim (``labels``) absent from the report
    makes the row ``not measured`` (its other catchers are kept): its letter could depend on that check."""
    import sympy as sp

    status = str(getattr(claim.status, "value", claim.status))
    if status == "erratum":
        return {"catcher": "n/a", "why": "an erratum: false as printed (its check or proof step shows it)"}
    if claim.relation not in QUANTITATIVE:
        return {"catcher": "n/a", "why": f"not quantitative (relation {claim.relation!r}: known up to constants)"}
    if not isinstance(claim.conclusion, sp.Basic) or claim.conclusion == 0:
        return {"catcher": "n/a", "why": f"no printed bound to perturb (conclusion {claim.conclusion!r}; the statement is "
                                         "its hypotheses or a zero identity)"}
    own = checks.get(claim.id)
    peps = _pep_links(claim, checks, labels)
    row: dict[str, Any] = {"perturbations": {}, "check": claim.id if own is not None else None, "pep_checks": peps}
    if own is not None:
        row["worst_slack"] = own.get("worst_slack")
        row["check_verdict"] = own.get("verdict")
    for tag, k in FACTORS.items():
        a = None if own is None or claim.id.startswith(PEP_FAMILIES) else rejudge(own.get("verdicts", []), k)
        bs = [rejudge(checks[c].get("verdicts", []), k) for c in peps]
        b = None if not bs or all(x is None for x in bs) else any(bool(x) for x in bs)
        c, steps = _proof_catches(claim, k)
        d, pinned = _pin_catches(claim, k, pins)
        row["perturbations"][tag] = {"a": a, "b": b, "c": c, "d": d, "steps_failed": steps, "pins_failed": pinned}
    fired = {x for p in row["perturbations"].values() for x in "abcd" if p[x]}
    row["catcher"] = next((x for x in "abc" if x in fired), "d" if "d" in fired else "e")
    unasked = [x for x in "abcd" if all(p[x] is None for p in row["perturbations"].values())]
    row["not_asked"] = unasked
    row["why"] = _why(row)
    absent = sorted(c for c in labels if c not in checks and (c == claim.id or (c.startswith(PEP_FAMILIES)
                                                                            and labels[c] == claim.provenance.label)))
    if absent:
        row.update(catcher="not measured", checks_not_run=absent,
                   why=row["why"] + f"; not measured: {', '.join(absent)} missing from the report")
    return row


def _why(row: Mapping[str, Any]) -> str:
    parts = []
    for tag, p in row["perturbations"].items():
        hits = [x for x in "abcd" if p[x]]
        parts.append(f"{tag}: {'+'.join(hits) if hits else 'nothing'}")
    ask = f"; not asked: {', '.join(row['not_asked'])}" if row["not_asked"] else ""
    return "bound " + ", ".join(parts) + ask


def summary(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Counts per catcher (a, b, c, d, e, n/a)."""
    out = {k: 0 for k in ("a", "b", "c", "d", "e", "n/a", "not measured")}
    for r in rows.values():
        out[str(r["catcher"])] = out.get(str(r["catcher"]), 0) + 1
    return out


def measure(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every claim's row from a quick-profile report.json (its ``claims`` list) and the proof steps and pins."""
    from fedbounds.checks.registry import all_checks
    from fedbounds.theory.registry import all_claims

    checks = {str(c["check_id"]): c for c in report.get("claims", [])}
    labels = {spec.check_id: spec.label for spec in all_checks()}
    pins = _pins()
    rows: dict[str, dict[str, Any]] = {}
    for c in all_claims():
        try:
            rows[c.id] = measure_claim(c, checks, labels, pins)
        except Exception as exc:
            rows[c.id] = {"catcher": "not measured", "why": f"{type(exc).__name__}: {exc}"}
    return rows


def _run_quick(out: Path) -> Path:
    """``fedbounds check --profile quick --seed 0`` into ``out``; the report's path."""
    cmd = [sys.executable, "-m", "fedbounds", "check", "--profile", "quick", "--seed", "0", "--out", str(out), "--no-progress"]
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    path = out / "report.json"
    if not path.is_file():
        raise RuntimeError(f"the quick run wrote no report ({' '.join(cmd)})")
    return path


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=_root(), capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# --------------------------------------------------------------------------------------------- reading the table


def load(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The committed table (:data:`DATA`), or {} when absent."""
    p = Path(path) if path is not None else _DATA_PATH
    if not p.is_file():
        return {}
    return json.loads(p.read_text(encoding="utf-8"))


def detection(claim: Any, data: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``two_x`` record of a claim: its measured row, or ``not measured`` (never a rule)."""
    table = load() if data is None else data
    row = table.get("rows", {}).get(claim.id)
    if row is None:
        return {"catcher": "not measured", "why": f"no row in {DATA} (regenerate: {COMMAND})"}
    return {**row, "measured_by": table.get("command"), "commit": table.get("commit")}


def markdown(data: Mapping[str, Any]) -> str:
    """The committed table as the Markdown of docs/provenance.md §8: one row per claim, the catchers per perturbation."""
    from fedbounds.theory.registry import all_claims

    status = {c.id: c.status.value for c in all_claims()}
    lines = [f"Generated by `{data.get('command')}` at commit `{str(data.get('commit'))[:12]}` ({data.get('profile')} profile, "
             f"seed {data.get('seed')}; wall {data.get('wall_s')} s, CPU {data.get('cpu_s')} s). Summary: "
             + ", ".join(f"{k}: {v}" for k, v in (data.get("summary") or {}).items()) + ".", "",
             "| claim | status | catcher | bound x2 | bound /2 | not asked |", "|---|---|---|---|---|---|"]
    for cid, row in sorted(data.get("rows", {}).items()):
        if row["catcher"] == "n/a":
            lines.append(f"| `{cid}` | {status.get(cid, '?')} | n/a | | | {row['why']} |")
            continue
        cells = ["+".join(x for x in "abcd" if row["perturbations"][t][x]) or "nothing" for t in FACTORS]
        lines.append(f"| `{cid}` | {status.get(cid, '?')} | {row['catcher']} | {cells[0]} | {cells[1]} | "
                     f"{', '.join(row['not_asked']) or '-'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedbounds.checks.verdicts.two_x", description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help=f"measure every claim's row and write {DATA}")
    ap.add_argument("--report", help="a quick-profile report.json to re-judge (default: run the quick profile now)")
    ap.add_argument("--out", help=f"where to write the table (default {DATA})")
    ap.add_argument("--keep-report", help="also save the quick run's report.json here (to re-judge later with --report)")
    ap.add_argument("--markdown", action="store_true", help="print the committed table as Markdown (docs/provenance.md §8)")
    args = ap.parse_args(argv)
    if args.markdown:
        print(markdown(load()))
        return 0
    if not args.measure:
        data = load()
        print(json.dumps({"command": data.get("command"), "commit": data.get("commit"), "summary": data.get("summary")}, indent=1))
        return 0
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    commit = _commit()
    try:
        if args.report:
            report_path = Path(args.report)
            report = json.loads(report_path.read_text(encoding="utf-8"))
        else:
            with tempfile.TemporaryDirectory() as tmp:
                text = _run_quick(Path(tmp)).read_text(encoding="utf-8")
            if args.keep_report:
                Path(args.keep_report).write_text(text, encoding="utf-8")
            report = json.loads(text)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = measure(report)
    ru = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru[0].ru_utime + ru[0].ru_stime + ru[1].ru_utime + ru[1].ru_stime - c0
    prof = report.get("profile", "?")
    data = {"command": COMMAND + (f" --report {args.report}" if args.report else ""), "commit": commit,
            "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "profile": prof.get("name", "?") if isinstance(prof, Mapping) else str(prof), "seed": report.get("seed", 0),
            "wall_s": round(time.time() - t0, 1), "cpu_s": round(cpu, 1), "summary": summary(rows), "rows": rows,
            "missing": sorted(k for k, r in rows.items() if r["catcher"] == "not measured")}
    out = Path(args.out) if args.out else _DATA_PATH
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    print(f"{out}: {data['summary']} (wall {data['wall_s']} s, CPU {data['cpu_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
