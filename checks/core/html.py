"""One self-contained ``index.html`` beside ``report.json``: the page a reader opens instead of the logs.

The page holds the claims table (verdict, worst slack, tightness, provenance: paper label and status), the
negative controls (each must read ``violated``), every plot with its claim's LaTeX, and the run's metadata. It
needs nothing but the file: the plots are inlined as base64 PNG, and each claim's LaTeX (the theory layer's
``Claim.latex()``, or the report's own ``latex`` field) is pre-rendered to a PNG with matplotlib's mathtext, so
no MathJax and no network; where mathtext cannot parse a formula the LaTeX source is shown as code instead.

The same function serves ``fedbounds check`` (report.json's ``claims``) and ``fedbounds report`` on a sweep
store (a dict with ``slopes`` rows and ``figures``): whatever is not a claim or a table is metadata.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import re
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["latex_png", "mathtext_compatible", "write_index_html"]

#: LaTeX that mathtext does not know, rewritten into what it does (order matters)
_SUBS: tuple[tuple[str, str], ...] = (
    (r"\\Longrightarrow", r"\\Rightarrow"),
    (r"\\le(?![a-zA-Z])", r"\\leq"),
    (r"\\ge(?![a-zA-Z])", r"\\geq"),
    (r"\\tfrac", r"\\frac"),
    (r"\\\|", r"\\Vert "),
    (r"\\mid(?![a-zA-Z])", "|"),
    (r"\\!", ""),
    (r"\{\\rm ([^{}]*)\}", r"\\mathrm{\1}"),
    (r"\\rm(?![a-zA-Z])\s*([A-Za-z]+)", r"\\mathrm{\1}"),
    (r"\\textstyle", ""),
    (r"\\textasciicircum\{\}", "^"),
    (r"\\limsup", r"\\lim\\sup"),
    (r"\\tilde\{\\mathcal\{O\}\}", r"\\tilde{O}"),
    (r"\\mathcal\{O\}", "O"),
)


def _strip_underbrace(tex: str) -> str:
    """``\\underbrace{A}_{B}`` -> ``A`` (mathtext has no underbrace; the label B is the hypotheses' status,
    which the claims table shows)."""
    key = r"\underbrace{"
    while (i := tex.find(key)) >= 0:
        depth, j = 1, i + len(key)
        while j < len(tex) and depth:
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            j += 1
        body = tex[i + len(key) : j - 1]
        rest = tex[j:]
        if rest.startswith("_{"):
            depth, k = 1, 2
            while k < len(rest) and depth:
                depth += {"{": 1, "}": -1}.get(rest[k], 0)
                k += 1
            rest = rest[k:]
        tex = tex[:i] + body + rest
    return tex


def mathtext_compatible(tex: str) -> str:
    """``tex`` rewritten for matplotlib's mathtext (``\\le`` -> ``\\leq``, ``\\|`` -> ``\\Vert``, no underbrace...)."""
    out = _strip_underbrace(tex)
    for pattern, repl in _SUBS:
        out = re.sub(pattern, repl, out)
    return out


def latex_png(tex: str, *, dpi: int = 110) -> bytes | None:
    """The formula rendered to PNG bytes by mathtext, or None if mathtext cannot parse it (or would substitute
    a missing glyph)."""
    from matplotlib import mathtext

    buf = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mathtext.math_to_image(f"${mathtext_compatible(tex)}$", buf, dpi=dpi, format="png")
    except (ValueError, UserWarning, RuntimeError):
        return None
    return buf.getvalue()


def _claim_latex(claim: Mapping[str, Any]) -> str | None:
    """The claim's LaTeX: its own ``latex`` field, else the theory registry's claim of the same id."""
    if claim.get("latex"):
        return str(claim["latex"])
    cid = claim.get("check_id") or claim.get("claim_id")
    if not cid:
        return None
    try:
        from fedbounds.theory.registry import get_claim

        return get_claim(str(cid)).latex()
    except (ImportError, KeyError, ValueError):
        return None


def _img(data: bytes, alt: str, cls: str) -> str:
    return f'<img class="{cls}" alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">'


def _num(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return "inf" if math.isinf(v) else f"{v:.4g}"
    return str(v)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], cls: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_num(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _tightness(t: Any) -> str:
    try:
        from fedbounds.checks.core.report import format_tightness

        return format_tightness(t if isinstance(t, dict) else {})
    except ImportError:  # pragma: no cover
        return "-"


def _plots_by_claim(report: Mapping[str, Any], plot_files: Any) -> tuple[dict[str, list[str]], list[str]]:
    """(claim id -> plot files, files not tied to a claim). ``plot_files`` is None (each claim's
    ``plot_files`` and the report's ``figures``), a mapping claim id -> files, or a flat sequence."""
    claims = [c for c in report.get("claims", []) if isinstance(c, Mapping)]
    by_claim: dict[str, list[str]] = {}
    loose: list[str] = []
    if plot_files is None:
        for c in claims:
            by_claim[str(c.get("check_id"))] = [str(f) for f in c.get("plot_files", [])]
        loose = [str(f) for f in report.get("figures", [])]
    elif isinstance(plot_files, Mapping):
        by_claim = {str(k): [str(f) for f in v] for k, v in plot_files.items()}
    else:
        loose = [str(f) for f in plot_files]
    return by_claim, loose


def _read(out_dir: Path, name: str) -> bytes | None:
    p = Path(name)
    p = p if p.is_absolute() else out_dir / p
    try:
        return p.read_bytes()
    except OSError:
        return None


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f0f0f0}td.holds{color:#060}td.violated{color:#a00}.claim{margin:2em 0;border-top:1px solid #ddd}
img.plot{max-width:100%;display:block;margin:.5em 0}img.latex{display:block;margin:.5em 0}code{font-size:12px}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}dt{font-weight:bold}dd{margin:0;font-family:monospace}"""


def _claims_section(claims: list[Mapping[str, Any]]) -> str:
    rows = [
        [
            c.get("check_id"),
            c.get("title"),
            c.get("paper_label"),
            c.get("status"),
            c.get("verdict"),
            c.get("worst_slack"),
            _tightness(c.get("tightness")),
            c.get("accepted"),
            c.get("error"),
        ]
        for c in claims
    ]
    header = ["claim", "title", "paper label", "provenance", "verdict", "worst slack", "tightness", "accepted", "error"]
    return "<h2>Claims</h2>" + _table(header, rows, "claims")


def _controls_section(claims: list[Mapping[str, Any]]) -> str:
    rows = []
    for c in claims:
        for v in c.get("negatives", []) or []:
            d = v.get("details", {}) if isinstance(v, Mapping) else {}
            rows.append(
                [c.get("check_id"), d.get("control", v.get("instance")), v.get("status"), v.get("slack"), v.get("observed"), v.get("bound")]
            )
    if not rows:
        return ""
    return "<h2>Negative controls (each must read violated)</h2>" + _table(
        ["claim", "control", "verdict", "slack", "observed", "bound"], rows, "controls"
    )


def _claim_block(out_dir: Path, c: Mapping[str, Any], files: list[str]) -> str:
    cid = str(c.get("check_id"))
    parts = [f'<div class="claim" id="{html.escape(cid)}"><h3>{html.escape(cid)}: {html.escape(str(c.get("title", "")))}</h3>']
    tex = _claim_latex(c)
    if tex:
        png = latex_png(tex)
        parts.append(_img(png, tex, "latex") if png else f'<p class="latex-source"><code>{html.escape(tex)}</code></p>')
    for f in files:
        data = _read(out_dir, f)
        parts.append(_img(data, f"{cid}: {Path(f).name}", "plot") if data else f"<p>missing plot: {html.escape(f)}</p>")
    return "".join(parts) + "</div>"


def _metadata(report: Mapping[str, Any]) -> str:
    skip = {"claims", "slopes", "figures"}
    items = []
    for k, v in report.items():
        if k in skip:
            continue
        text = json.dumps(v, sort_keys=True, default=str) if isinstance(v, dict | list) else _num(v)
        items.append(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(text)}</dd>")
    return "<h2>Run</h2><dl>" + "".join(items) + "</dl>" if items else ""


def _slopes_section(report: Mapping[str, Any]) -> str:
    slopes = [s for s in report.get("slopes", []) if isinstance(s, Mapping)]
    if not slopes:
        return ""
    cols = list(dict.fromkeys(k for s in slopes for k in s))
    return "<h2>Fitted slopes</h2>" + _table(cols, [[s.get(k) for k in cols] for s in slopes], "slopes")


def write_index_html(
    out_dir: Path,
    report: Mapping[str, Any],
    plot_files: Mapping[str, Sequence[str | Path]] | Sequence[str | Path] | None = None,
    *,
    title: str | None = None,
) -> Path:
    """Write ``out_dir/index.html`` (atomically: a temporary file in ``out_dir``, then ``os.replace``) and
    return its path.

    ``report`` is report.json's dict (``claims`` with their verdicts, negatives, tightness, provenance and
    ``plot_files``; any other key is the run's metadata) or a sweep report's (``slopes`` rows, ``figures``).
    ``plot_files``: None to take each claim's ``plot_files`` and the report's ``figures``; a mapping claim id ->
    files; or a flat sequence of figures. Relative paths are read from ``out_dir``; every image is inlined."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    claims = [c for c in report.get("claims", []) if isinstance(c, Mapping)]
    by_claim, loose = _plots_by_claim(report, plot_files)
    name = title or str(report.get("title") or report.get("spec") or "fedbounds report")
    body = [f"<h1>{html.escape(name)}</h1>"]
    if "passed" in report:
        body.append(f"<p>passed: <b>{html.escape(_num(report['passed']))}</b></p>")
    if claims:
        body += [_claims_section(claims), _controls_section(claims), "<h2>Plots</h2>"]
        body += [_claim_block(out_dir, c, by_claim.get(str(c.get("check_id")), [])) for c in claims]
    body.append(_slopes_section(report))
    for f in loose:
        data = _read(out_dir, f)
        body.append(f"<h3>{html.escape(Path(f).name)}</h3>" + (_img(data, Path(f).name, "plot") if data else "<p>missing</p>"))
    body.append(_metadata(report))
    page = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(name)}</title>'
        f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )
    path = out_dir / "index.html"
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".index.", suffix=".html.tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(page)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
