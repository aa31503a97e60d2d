"""Reports of the bound-checking suite: the printed table, ``report.json`` and one PNG per claim
(trajectories against the bound, matplotlib's Agg backend, so no display is needed)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fedbounds.checks.registry import CheckResult, CheckSpec, Plot
from fedbounds.checks.verdicts.verdict import EXACT_RTOL, to_json_safe

__all__ = ["format_compact", "format_slack", "format_table", "format_tightness", "plot_result", "run_metadata", "write_report"]


def format_slack(s: float) -> str:
    """Slack as printed: 3 significant digits, ``inf`` / ``-`` for infinite / undefined."""
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "-"
    if math.isinf(s):
        return "inf"
    return f"{s:.3g}"


def format_tightness(tightness: dict) -> str:
    """The table's tightness cell: the worst observed / bound ratio the adversarial search found
    (``tightness['search']``, :meth:`fedbounds.checks.verdicts.adversarial.WorstCase.to_dict`) and how loose the bound
    is there; else the check's own one-line ``summary`` (e.g. how far past a condition a step still held); ``n/a``
    for a claim without an observed / bound ratio; ``-`` when not searched."""
    search = tightness.get("search") if isinstance(tightness, dict) else None
    if isinstance(search, dict) and "worst_ratio" in search:
        r = float(search["worst_ratio"])
        if r > 1 + EXACT_RTOL:
            return f"{r:.3g} (VIOLATED)"
        loose = float(search.get("loose_by", 1.0 / r if r > 0 else math.inf))
        return f"{r:.3g} (loose x{format_slack(loose)})"
    if isinstance(tightness, dict) and "summary" in tightness:
        return str(tightness["summary"])
    if isinstance(tightness, dict) and "not_applicable" in tightness:
        return "n/a"
    return "-"


def _teeth(v) -> str:
    from fedbounds.checks.verdicts.controls import why_not

    if v.status != "violated":
        return "FAILED (control passed)"
    if "control_record" not in v.details:
        return "ok (no record)"
    reason = why_not(v)
    return "ok" if reason is None else f"not its reason: {reason}"


def _table(rows: list[list[str]], header: list[str], width: int | None = None, optional: Sequence[str] = (),
           whole: Sequence[str] = ()) -> str:
    from fedbounds.checks.report.table import render_table

    return render_table(header, rows, width, optional, whole)


def _fill(text: str, width: int) -> str:
    import textwrap

    return textwrap.fill(text, width)


def _one_line(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` characters (cut with "...")."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: max(width - 3, 1)] + "..."


def _pep_rows(pairs: Sequence[tuple[CheckSpec, CheckResult]]) -> list[list[str]]:
    """One row per PEP verdict or control (``details['pep']``, :func:`fedbounds.checks.pep.solve.certificate_record`)."""
    rows = []
    for spec, res in pairs:
        for v in [*res.verdicts, *res.negatives]:
            pep = v.details.get("pep")
            if not isinstance(pep, dict):
                continue
            solvers = pep.get("solvers", {})
            gaps = [abs(float(r["gap"])) for r in solvers.values() if r.get("gap") is not None]
            ratio = v.details.get("ratio")
            point = str(v.details.get("control", v.instance)) if "control" in v.details else v.instance
            rows.append([
                spec.check_id + (" (control)" if "control" in v.details else ""), point, f"{v.observed:.6g}",
                f"{v.bound:.6g}", "-" if ratio is None else f"{float(ratio):.4g}", str(pep.get("pep_status")),
                ", ".join(f"{k} {r['status']}" for k, r in solvers.items()),
                f"{max(gaps):.1e}" if gaps else "-", _gram(pep, v.details.get("blocks")),
                f"{sum(float(r.get('seconds') or 0) for r in solvers.values()):.2f}",
            ])
    return rows


def _gram(pep: dict[str, Any], blocks: Sequence[int] | None) -> str:
    """The Gram size, and the PSD blocks actually solved when the client-symmetric block form was used."""
    dim = str(pep.get("gram_dim"))
    return dim if not blocks else f"{dim} ({'+'.join(str(b) for b in blocks if b)})"


def format_table(pairs: Sequence[tuple[CheckSpec, CheckResult]], width: int | None = None) -> str:
    """The claims table (claim, paper label [status], verdict, scope, worst slack, tightness: the worst observed / bound
    found by the adversarial search, inst.: instances tried), each claim's notes on one line, the table of negative
    controls (each must read ``violated``; ``teeth`` says whether it fires for its stated reason: located away from
    round 0, no divergence) and the PEP certificates, fitted to ``width`` characters
    (:func:`fedbounds.checks.report.table.output_width`). A verdict reads ``holds*`` when its evidence lies only outside
    the claim's hypotheses (the scope column says where and by how much)."""
    from fedbounds.checks.report.table import output_width

    w = output_width(width)
    rows = []
    for spec, res in pairs:
        label, status = spec.provenance()
        verdict = res.verdict_shown + ("" if spec.accepts(res) or res.error else " !")
        if spec.erratum and res.verdict == "violated":
            verdict += " (erratum)"
        rows.append([spec.check_id, f"{label} [{status}]", verdict, "-" if res.error else res.scope_info().short,
                     format_slack(res.worst_slack), format_tightness(res.tightness), str(len(res.instances))])
    text = _table(rows, ["claim", "paper label [status]", "verdict", "scope", "worst slack", "tightness", "inst."], w,
                  optional=["inst.", "paper label [status]"], whole=["verdict"])
    text += "\n" + _fill("(*: the evidence lies only outside the claim's hypotheses, see scope; !: not accepted)", w)
    notes = [_one_line(f"{spec.check_id}: {note}", w) for spec, res in pairs
             for note in ([] if res.error else [f"scope: {res.scope_info().text}"]) + res.notes]
    if notes:
        text += "\n\nScope and notes (one line each; in full in index.html):\n" + "\n".join(notes)
    neg_rows = []
    for spec, res in pairs:
        for v in res.negatives:
            where = (v.details.get("control_record") or {}).get("violated_at")
            where = None if not isinstance(where, int | float) or where < 0 or where != where else where  # -1 / nan: nowhere
            neg_rows.append([spec.check_id, str(v.details.get("control", v.instance)), v.status, format_slack(v.slack),
                             "-" if where is None else str(where), _teeth(v)])
    if neg_rows:
        text += "\n\nNegative controls (each must be violated):\n"
        text += _table(neg_rows, ["claim", "control", "verdict", "slack", "violated at", "teeth"], w, optional=["slack", "violated at"],
                       whole=["verdict"])
    pep_rows = _pep_rows(pairs)
    if pep_rows:
        text += "\n\n" + _fill("PEP certificates (worst case over the whole class; two solvers; only 'certified' can hold):", w) + "\n"
        text += _table(pep_rows, ["claim", "point", "worst case", "bound", "ratio", "certificate", "solvers", "max |gap|",
                                  "gram", "seconds"], w, optional=["seconds", "gram", "solvers", "max |gap|", "bound"])
    errors = [(s.check_id, r.error) for s, r in pairs if r.error]
    if errors:
        text += "\n\nErrors:\n" + "\n".join(f"  {cid}: {err}" for cid, err in errors)
    return text


def format_compact(pairs: Sequence[tuple[CheckSpec, CheckResult]], width: int | None = None) -> str:
    """The terminal's default report: one line per claim (claim, verdict, scope, worst slack, tightness), cut to
    ``width`` columns (80 when not a terminal), then one line for the negative controls and one per error. The
    full tables are :func:`format_table` (``fedbounds check --verbose``) and the report page (index.html)."""
    from fedbounds.checks.report.table import output_width

    w = output_width(width)
    rows = []
    for spec, res in pairs:
        verdict = res.verdict_shown + ("" if spec.accepts(res) or res.error else " !")
        if spec.erratum and res.verdict == "violated":
            verdict += " (erratum)"
        rows.append([spec.check_id, verdict, "-" if res.error else res.scope_info().short, format_slack(res.worst_slack),
                     format_tightness(res.tightness)])
    header = ["claim", "verdict", "scope", "slack", "tightness"]
    cols = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    # the first four columns keep their width (a scope longer than 24 characters is cut); tightness takes the rest
    cols[2] = min(cols[2], 24)
    rest = max(w - 2 - sum(c + 2 for c in cols), 8)

    def line(r: list[str]) -> str:
        cells = [_one_line(c, k) for c, k in zip(r[:4], cols)]
        return "  " + "  ".join(c.ljust(k) for c, k in zip(cells, cols)) + "  " + _one_line(r[4], rest)

    out = [line(header).rstrip(), "  " + "  ".join("-" * k for k in [*cols, rest])[: w - 2]]
    out += [line(r).rstrip() for r in rows]
    negatives = [(spec.check_id, v) for spec, res in pairs for v in res.negatives]
    bad = [(cid, v) for cid, v in negatives if _teeth(v) != "ok"]
    if negatives:
        out.append("")
        out.append(f"negative controls: {len(negatives)}, " + (f"{len(bad)} not as they should (below)" if bad
                                                               else "each violated for its stated reason"))
        out += [_one_line(f"  {_teeth(v)}: {cid}, {v.details.get('control', v.instance)}", w) for cid, v in bad]
    out += [_one_line(f"error {s.check_id}: {r.error}", w) for s, r in pairs if r.error]
    out.append(_one_line("(*: evidence outside the hypotheses only; !: not accepted; more: --verbose)", w))
    return "\n".join(out)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def plot_result(plot: Plot, path: Path) -> Path:
    """Draw one :class:`Plot` to ``path`` (PNG). Points that cannot be drawn (not finite, or <= 0 on a log axis: a
    point that never reached its target, say) are omitted; a curve with none left is named in the legend as such,
    and a plot with nothing to draw says so on its face."""
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    styles = {"observed": {"lw": 1.6}, "bound": {"lw": 1.4, "ls": "--", "color": "k"}, "negative": {"lw": 1.2, "ls": ":"}}
    drawn = 0
    for c in plot.curves:
        x = np.asarray(c.x, dtype=float)
        y = np.asarray(c.y, dtype=float)
        keep = np.isfinite(x) & np.isfinite(y)
        if plot.logx:
            keep &= x > 0
        if plot.logy:
            keep &= y > 0
        kw = dict(styles.get(c.role, {}))
        if c.role == "bound" and sum(1 for d in plot.curves if d.role == "bound") > 1:
            kw.pop("color", None)
        missing = int(keep.size - keep.sum())
        label = c.label if not missing else f"{c.label} ({missing} of {keep.size} points missing)"
        if not keep.any():
            ax.plot([], [], label=label, **kw)
            continue
        drawn += 1
        ax.plot(x[keep], y[keep], label=label, marker="o" if missing else None, ms=3, **kw)
        if c.low is not None and c.high is not None:
            lo, hi = np.asarray(c.low, dtype=float), np.asarray(c.high, dtype=float)
            band = keep & np.isfinite(lo) & np.isfinite(hi) & ((lo > 0) if plot.logy else True)
            if band.any():
                ax.fill_between(x[band], lo[band], hi[band], alpha=0.2)
    if drawn:
        if plot.logy:
            ax.set_yscale("log")
        if plot.logx:
            ax.set_xscale("log")
    else:
        ax.text(0.5, 0.5, "no point to draw (none finite)", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(plot.xlabel)
    ax.set_ylabel(plot.ylabel)
    ax.set_title(plot.title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if plot.curves:
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def _git_commit() -> str | None:
    """The commit of the source tree fedbounds runs from, when it is a git checkout (None otherwise)."""
    import subprocess

    src = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
        dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    head = out.stdout.strip()
    if out.returncode != 0 or not head:
        return None
    return head + (" (with uncommitted changes)" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def run_metadata(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """What a report says about its run: fedbounds version, git commit (when run from a checkout), date (UTC),
    the command line, and the machine (platform, processor count)."""
    import datetime
    import os
    import platform
    import shlex
    import sys

    import fedbounds

    args = list(sys.argv[1:] if argv is None else argv)
    return {
        "fedbounds": fedbounds.__version__,
        "git_commit": _git_commit(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "command": shlex.join(["fedbounds", *args]),
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, {platform.machine()}",
        "python": platform.python_version(),
    }


def write_report(out: Path, pairs: Sequence[tuple[CheckSpec, CheckResult]], meta: dict) -> tuple[Path, list[Path]]:
    """Write ``out/report.json`` and ``out/<claim>[__<plot>].png``; returns (json path, png paths)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    pngs: list[Path] = []
    claims = []
    for spec, res in pairs:
        label, status = spec.provenance()
        d = res.to_dict()
        d.update({"title": spec.title, "paper_label": label, "status": status, "erratum": spec.erratum, "accepted": spec.accepts(res)})
        files = []
        for k, plot in enumerate(res.plots):
            stem = _safe_name(spec.check_id if k == 0 else f"{spec.check_id}__{plot.name}")
            p = plot_result(plot, out / f"{stem}.png")
            pngs.append(p)
            files.append(p.name)
        d["plot_files"] = files
        d.pop("plots", None)
        claims.append(d)
    report = {**meta, "claims": claims}
    path = out / "report.json"
    path.write_text(json.dumps(to_json_safe(report), indent=1, allow_nan=False))
    return path, pngs
