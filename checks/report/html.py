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
import re
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


def _tag_underbrace(tex: str) -> str:
    """``\\underbrace{A}_{B}`` -> ``\\left[A\\right]_{B}``: mathtext has no underbrace, and the label B is the
    hypotheses' status (``\\text{[reconstructed]}``), which must stay on the formula: the bracketed hypotheses carry it
    as a subscript."""
    key = r"\underbrace{"
    while (i := tex.find(key)) >= 0:
        depth, j = 1, i + len(key)
        while j < len(tex) and depth:
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            j += 1
        body = tex[i + len(key) : j - 1]
        rest = tex[j:]
        label = ""
        if rest.startswith("_{"):
            depth, k = 1, 2
            while k < len(rest) and depth:
                depth += {"{": 1, "}": -1}.get(rest[k], 0)
                k += 1
            label, rest = rest[2 : k - 1], rest[k:]
        tex = tex[:i] + r"\left[" + body + r"\right]" + (f"_{{{label}}}" if label else "") + rest
    return tex


def mathtext_compatible(tex: str) -> str:
    """``tex`` rewritten for matplotlib's mathtext (``\\le`` -> ``\\leq``, ``\\|`` -> ``\\Vert``, an underbrace's status
    tag as a subscript of the bracketed hypotheses...)."""
    out = _tag_underbrace(tex)
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
    """A cell's text: numbers to 4 significant digits; ``inf`` / ``nan`` as such (the legend explains them); ``-``
    for nothing recorded."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.4g}"
    return str(v)


class Cell(str):
    """A table cell given as HTML (already escaped), with an optional CSS class."""

    cls: str = ""

    def __new__(cls, markup: str, css: str = "") -> Cell:
        obj = super().__new__(cls, markup)
        obj.cls = css
        return obj


def _td(c: Any) -> str:
    if isinstance(c, Cell):
        return f'<td class="{html.escape(c.cls)}">{c}</td>' if c.cls else f"<td>{c}</td>"
    return f"<td>{html.escape(_num(c))}</td>"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], cls: str, titles: Mapping[str, str] | None = None) -> str:
    titles = titles or {}
    head = "".join(f'<th title="{html.escape(titles[h])}">{html.escape(h)}</th>' if h in titles else f"<th>{html.escape(h)}</th>"
                   for h in header)
    body = "".join("<tr>" + "".join(_td(c) for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _tightness(t: Any) -> str:
    try:
        from fedbounds.checks.report.suite import format_tightness

        return format_tightness(t if isinstance(t, dict) else {})
    except ImportError:  # pragma: no cover
        return "-"


def _verdict_cell(c: Mapping[str, Any]) -> Cell:
    """The verdict as the terminal prints it: starred outside the hypotheses, ``(erratum)`` where the violation is
    the erratum's finding, ``!`` where the result fails the suite; classed for its colour."""
    shown = str(c.get("verdict_shown") or c.get("verdict") or "-")
    starred = shown.endswith("*")
    word = shown.rstrip("*")
    text = shown + (" (erratum)" if c.get("erratum") and word == "violated" else "")
    text += " !" if c.get("accepted") is False and not c.get("error") else ""
    return Cell(html.escape(text), f"verdict {word}" + (" outside" if starred else ""))


def _scope_of(c: Mapping[str, Any]) -> Mapping[str, Any]:
    sc = c.get("scope")
    return sc if isinstance(sc, Mapping) else {}


def _scope_cell(c: Mapping[str, Any]) -> Cell:
    """The table's scope cell: the short form (kind and factors), the whole sentence as its tooltip."""
    sc = _scope_of(c)
    kind = str(sc.get("kind") or "unstated")
    text = str(sc.get("text") or "unstated: the report records no scope")
    short = str(sc.get("short") or text)
    return Cell(f'<span title="{html.escape(text)}">{html.escape(short)}</span>', f"scope {kind}")


def _anchor(cid: str) -> str:
    return "claim-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", cid)


def _link(cid: str) -> Cell:
    return Cell(f'<a href="#{html.escape(_anchor(cid))}">{html.escape(cid)}</a>')


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


_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;color:#222;line-height:1.4}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0}table.claims td:nth-child(2){max-width:22em}th[title]{text-decoration:underline dotted;cursor:help}
.verdict{font-weight:bold}.holds{color:#05640f;background:#e7f6e9}.violated{color:#a30000;background:#fde8e8}
.inconclusive{color:#7a5300;background:#fff5d6}.error{color:#fff;background:#a30000}
.verdict.outside{color:#6b4a00;background:#fff0c2}.scope.inside{color:#05640f}.scope.certified{color:#0b4f8a}
.scope.outside{color:#8a4b00;font-weight:600}.scope.unstated{color:#666;font-style:italic}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;margin-right:.4em;border:1px solid #ccc}
nav.toc ol{columns:2;column-gap:2em;padding-left:1.5em;font-size:14px}nav.toc li{break-inside:avoid}
.claim{margin:2em 0;padding-top:1em;border-top:1px solid #ddd}.claim h3{margin:.2em 0}
img.plot{max-width:100%;display:block;margin:.5em 0}img.latex{display:block;margin:.6em 0;max-width:100%}code{font-size:12px}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em;font-size:14px}dt{font-weight:bold}dd{margin:0;font-family:monospace}
.summary{font-size:15px}.pass{color:#05640f;font-weight:bold}.fail{color:#a30000;font-weight:bold}
.legend dd{font-family:inherit}.notes li{margin:.2em 0}
@media print{body{margin:0;max-width:none;font-size:11pt;color:#000}nav.toc{display:none}a{color:inherit;text-decoration:none}
.claim{break-inside:avoid-page;page-break-inside:avoid}table{font-size:9pt}img.plot{max-width:70%}
.holds,.violated,.inconclusive,.verdict.outside{background:none!important}h2{break-after:avoid}}"""

#: what each column means (shown as a tooltip on the header and in the legend)
COLUMNS: dict[str, str] = {
    "claim": "the claim's id (theory registry); the link jumps to its section",
    "paper label": "where the claim is in the paper (theorem, lemma, equation)",
    "provenance": "verbatim, derived, reconstructed, erratum or remark (docs/provenance.md)",
    "verdict": "holds / violated / inconclusive at the confidence level; a star (holds*) when the evidence lies only "
               "outside the claim's hypotheses",
    "scope": "where the evidence lies: inside the printed hypotheses, inside a PEP-certified region, or outside both "
             "(each broken hypothesis with its factor, left side / right side)",
    "worst slack": "bound / observed at the worst point (> 1: room to spare; < 1: violated)",
    "tightness": "the worst observed / bound ratio the adversarial search found, and how loose the bound is there",
    "accepted": "whether the result lets the suite pass (controls violated; an erratum's expected verdict)",
    "instance": "the instance or sub-claim the verdict is about",
    "observed": "the measured value at the worst point (exact, or a Monte Carlo mean)",
    "bound": "the claim's value there",
    "interval": "one-sided confidence bounds of the observed value (equal to it when exact)",
    "slack": "bound / observed at the worst point",
    "exact": "true: computed exactly (closed-form moments or a deterministic quantity); false: Monte Carlo",
    "control": "a negative control: the one thing changed; it must read violated",
    "worst case": "the PEP value: the worst case over the whole function class",
    "ratio": "worst case / bound (<= 1 holds)",
    "certificate": "certified (two solvers optimal and agreeing), inconclusive, or unbounded",
    "solvers": "each solver's status",
    "max |gap|": "the largest duality gap among the solvers",
    "gram": "size of the Gram matrix (and the PSD blocks solved in the client-symmetric form)",
    "seconds": "solver time",
}

_LEGEND_VALUES = {
    "inf": "infinite: a slack when the observed value is <= 0 < bound (nothing to compare against), or a PEP worst case "
           "that is unbounded",
    "nan": "not defined: a slack when both sides are <= 0, a slope that could not be fitted, or an inconclusive PEP value",
    "-": "nothing recorded for this cell (not measured, not applicable)",
    "holds*": "holds, but every point checked lies outside the claim's hypotheses (the scope says by how much); evidence "
              "that the bound is robust, not that the theorem was checked as stated",
}


def _legend() -> str:
    items = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in {**_LEGEND_VALUES, **COLUMNS}.items())
    return f'<h2 id="legend">Legend</h2><dl class="legend">{items}</dl>'


def _contents(claims: list[Mapping[str, Any]], extra: Sequence[tuple[str, str]]) -> str:
    items = "".join(
        f'<li><a href="#{html.escape(_anchor(str(c.get("check_id"))))}">{html.escape(str(c.get("check_id")))}</a> '
        f'<span class="badge {html.escape(_verdict_cell(c).cls)}">{_verdict_cell(c)}</span>'
        f"</li>"
        for c in claims
    )
    links = " &middot; ".join(f'<a href="#{a}">{html.escape(t)}</a>' for a, t in extra)
    return f'<nav class="toc"><h2 id="contents">Contents</h2><p>{links}</p><ol>{items}</ol></nav>'


def _summary(report: Mapping[str, Any], claims: list[Mapping[str, Any]]) -> str:
    counts: dict[str, tuple[int, str]] = {}
    for c in claims:
        cell = _verdict_cell(c)
        w = html.unescape(str(cell))
        counts[w] = (counts.get(w, (0, ""))[0] + 1, cell.cls)
    parts = " ".join(f'<span class="badge {html.escape(cls)}">{html.escape(w)}: {n}</span>' for w, (n, cls) in sorted(counts.items()))
    passed = ""
    if "passed" in report:
        ok = bool(report["passed"])
        passed = f'<span class="{"pass" if ok else "fail"}">{"PASS" if ok else "FAIL"}</span> &middot; '
    return f'<p class="summary">{passed}{len(claims)} claims: {parts}</p>'


def _claims_section(claims: list[Mapping[str, Any]]) -> str:
    rows = [
        [
            _link(str(c.get("check_id"))),
            c.get("title"),
            c.get("paper_label"),
            c.get("status"),
            _verdict_cell(c),
            _scope_cell(c),
            c.get("worst_slack"),
            _tightness(c.get("tightness")),
            c.get("accepted"),
        ]
        for c in claims
    ]
    header = ["claim", "title", "paper label", "provenance", "verdict", "scope", "worst slack", "tightness", "accepted"]
    return '<h2 id="claims">Claims</h2>' + _table(header, rows, "claims", COLUMNS)


def _verdict_rows(verdicts: Sequence[Any], *, control: bool = False) -> list[list[Any]]:
    rows = []
    for v in verdicts:
        if not isinstance(v, Mapping):
            continue
        d = v.get("details", {}) if isinstance(v.get("details"), Mapping) else {}
        status = str(v.get("status"))
        name = d.get("control", v.get("instance")) if control else v.get("instance")
        interval = f"[{_num(_as_float(v.get('ci_low')))}, {_num(_as_float(v.get('ci_high')))}]"
        rows.append([name, _as_float(v.get("observed")), _as_float(v.get("bound")), interval, _as_float(v.get("slack")),
                     Cell(html.escape(status), f"verdict {status}"), v.get("exact")])
    return rows


def _as_float(v: Any) -> Any:
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    return v


def _controls_section(claims: list[Mapping[str, Any]]) -> str:
    rows = []
    for c in claims:
        for r in _verdict_rows(c.get("negatives", []) or [], control=True):
            slack = None if isinstance(r[4], float) and math.isnan(r[4]) else r[4]  # undefined slack: "-", not a sentinel
            rows.append([_link(str(c.get("check_id"))), *r[:1], r[5], slack, r[1], r[2]])
    if not rows:
        return ""
    return '<h2 id="controls">Negative controls (each must read violated)</h2>' + _table(
        ["claim", "control", "verdict", "slack", "observed", "bound"], rows, "controls", COLUMNS)


def _pep_section(claims: list[Mapping[str, Any]]) -> str:
    """One row per verdict or control carrying a PEP certificate (``details['pep']``)."""
    rows = []
    for c in claims:
        for v in [*(c.get("verdicts") or []), *(c.get("negatives") or [])]:
            d = v.get("details", {}) if isinstance(v, Mapping) else {}
            pep = d.get("pep") if isinstance(d, Mapping) else None
            if not isinstance(pep, Mapping):
                continue
            solvers = pep.get("solvers", {}) or {}
            gaps = [abs(float(r["gap"])) for r in solvers.values() if isinstance(r, Mapping) and r.get("gap") not in (None, "nan")]
            secs = sum(float(r.get("seconds") or 0) for r in solvers.values() if isinstance(r, Mapping))
            status = str(pep.get("pep_status"))
            blocks = d.get("blocks")
            gram = str(pep.get("gram_dim")) + (f" ({'+'.join(str(b) for b in blocks if b)})" if blocks else "")
            point = d.get("control", v.get("instance")) if "control" in d else v.get("instance")
            rows.append([_link(str(c.get("check_id"))), ("control: " if "control" in d else "") + str(point),
                         _as_float(v.get("observed")), _as_float(v.get("bound")), _as_float(d.get("ratio")),
                         Cell(html.escape(status), "holds" if status in ("certified", "proved") else "inconclusive"),
                         ", ".join(f"{k} {r.get('status')}" for k, r in solvers.items() if isinstance(r, Mapping)),
                         f"{max(gaps):.1e}" if gaps else "-", gram, f"{secs:.2f}"])
    if not rows:
        return ""
    return ('<h2 id="pep">PEP certificates</h2><p>Worst case over the whole function class, solved by two solvers; only a '
            "<em>certified</em> value (both optimal and agreeing) can make a claim hold.</p>"
            + _table(["claim", "point", "worst case", "bound", "ratio", "certificate", "solvers", "max |gap|", "gram", "seconds"],
                     rows, "pep", COLUMNS))


def _claim_block(out_dir: Path, c: Mapping[str, Any], files: list[str]) -> str:
    cid = str(c.get("check_id"))
    sc = _scope_of(c)
    v = _verdict_cell(c)
    parts = [f'<section class="claim" id="{html.escape(_anchor(cid))}"><h3>{html.escape(cid)}: {html.escape(str(c.get("title", "")))}</h3>',
             f'<p><span class="badge {html.escape(v.cls)}">{v}</span>'
             f'<span class="badge">{html.escape(str(c.get("paper_label") or "-"))}</span>'
             f'<span class="badge">{html.escape(str(c.get("status") or "-"))}</span></p>']
    tex = _claim_latex(c)
    if tex:
        png = latex_png(tex, dpi=130)
        parts.append(_img(png, tex, "latex") if png else f'<p class="latex-source"><code>{html.escape(tex)}</code></p>')
    parts.append(f'<p class="scope {html.escape(str(sc.get("kind") or "unstated"))}"><b>Scope:</b> '
                 f'{html.escape(str(sc.get("text") or "unstated: the report records no scope"))}</p>')
    if c.get("error"):
        parts.append(f'<p class="error">error: {html.escape(str(c["error"]))}</p>')
    notes = [str(n) for n in c.get("notes", []) or []]
    if notes:
        parts.append('<h4>Notes</h4><ul class="notes">' + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    rows = _verdict_rows(c.get("verdicts", []) or [])
    if rows:
        parts.append("<h4>Instances</h4>" + _table(["instance", "observed", "bound", "interval", "slack", "verdict", "exact"], rows,
                                                   "instances", COLUMNS))
    neg = _verdict_rows(c.get("negatives", []) or [], control=True)
    if neg:
        parts.append("<h4>Negative controls</h4>" + _table(["control", "observed", "bound", "interval", "slack", "verdict", "exact"],
                                                           neg, "claim-controls", COLUMNS))
    for f in files:
        data = _read(out_dir, f)
        parts.append(_img(data, f"{cid}: {Path(f).name}", "plot") if data else f"<p>missing plot: {html.escape(f)}</p>")
    parts.append('<p><a href="#contents">back to contents</a></p>')
    return "".join(parts) + "</section>"


#: run metadata shown first, in this order, with these labels
_META = (("fedbounds", "fedbounds version"), ("git_commit", "git commit"), ("date", "date (UTC)"), ("command", "command"),
         ("profile", "profile"), ("seed", "seed"), ("machine", "machine"), ("python", "python"), ("elapsed_s", "elapsed (s)"))


def _metadata(report: Mapping[str, Any]) -> str:
    skip = {"claims", "slopes", "figures", "notes", "title"}
    items = []
    keys = [k for k, _ in _META if k in report] + [k for k in report if k not in dict(_META) and k not in skip]
    labels = dict(_META)
    for k in keys:
        v = report[k]
        if k == "profile" and isinstance(v, Mapping) and "name" in v:
            text = f"{v['name']}  " + json.dumps({x: y for x, y in v.items() if x != "name"}, sort_keys=True, default=str)
        else:
            text = json.dumps(v, sort_keys=True, default=str) if isinstance(v, dict | list) else _num(v)
        items.append(f"<dt>{html.escape(labels.get(k, str(k)))}</dt><dd>{html.escape(text)}</dd>")
    return '<h2 id="run">Run</h2><dl class="run">' + "".join(items) + "</dl>" if items else ""


def _slopes_section(report: Mapping[str, Any]) -> str:
    slopes = [s for s in report.get("slopes", []) if isinstance(s, Mapping)]
    if not slopes:
        return ""
    cols = list(dict.fromkeys(k for s in slopes for k in s))
    return '<h2 id="slopes">Fitted slopes</h2>' + _table(cols, [[s.get(k) for k in cols] for s in slopes], "slopes")


def _notes_section(report: Mapping[str, Any]) -> str:
    notes = report.get("notes")
    if not isinstance(notes, list) or not notes:
        return ""
    return '<h2 id="notes">Notes</h2><ul class="notes">' + "".join(f"<li>{html.escape(str(n))}</li>" for n in notes) + "</ul>"


def write_index_html(
    out_dir: Path,
    report: Mapping[str, Any],
    plot_files: Mapping[str, Sequence[str | Path]] | Sequence[str | Path] | None = None,
    *,
    title: str | None = None,
) -> Path:
    """Write ``out_dir/index.html`` (atomically: a temporary file in ``out_dir``, then ``os.replace``; mode 0644) and
    return its path.

    ``report`` is report.json's dict (``claims`` with their verdicts, scope, notes, negatives, tightness, provenance and
    ``plot_files``; any other key is the run's metadata) or a sweep report's (``slopes`` rows, ``figures``, ``notes``).
    ``plot_files``: None to take each claim's ``plot_files`` and the report's ``figures``; a mapping claim id ->
    files; or a flat sequence of figures. Relative paths are read from ``out_dir``; every image is inlined."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    claims = [c for c in report.get("claims", []) if isinstance(c, Mapping)]
    by_claim, loose = _plots_by_claim(report, plot_files)
    name = title or str(report.get("title") or report.get("spec") or "fedbounds report")
    body = [f"<h1>{html.escape(name)}</h1>"]
    if claims:
        pep = _pep_section(claims)
        controls = _controls_section(claims)
        extra = [("claims", "Claims table"), *([("pep", "PEP certificates")] if pep else []),
                 *([("controls", "Negative controls")] if controls else []), ("legend", "Legend"), ("run", "Run")]
        body += [_summary(report, claims), _contents(claims, extra), _claims_section(claims), pep, controls,
                 '<h2 id="details">Claims in detail</h2>']
        body += [_claim_block(out_dir, c, by_claim.get(str(c.get("check_id")), [])) for c in claims]
        body.append(_legend())
    elif "passed" in report:
        body.append(f"<p>passed: <b>{html.escape(_num(report['passed']))}</b></p>")
    if not claims and "slopes" in report:  # a sweep's page: where to go, and its specs to download
        specs = [str(x) for x in report.get("specs", []) if str(x) == Path(str(x)).name]
        links = [("#slopes", "Fitted slopes"), ("#notes", "Notes"), ("#figures", "Figures"), ("#run", "Run")]
        links += [(html.escape(x), f"spec {html.escape(x)}") for x in specs]
        body.append('<nav class="contents">' + " · ".join(f'<a href="{h}">{t}</a>' for h, t in links) + "</nav>")
    body.append(_slopes_section(report))
    body.append(_notes_section(report))
    if loose:
        body.append('<h2 id="figures">Figures</h2>')
    for f in loose:
        data = _read(out_dir, f)
        body.append(f"<h3>{html.escape(Path(f).name)}</h3>" + (_img(data, Path(f).name, "plot") if data else "<p>missing</p>"))
    body.append(_metadata(report))
    page = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f"<title>{html.escape(name)}</title><style>{_CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )
    from fedbounds.checks.runtime.install import write_atomic

    return write_atomic(out_dir / "index.html", page)  # 0644: the page is for readers (and web servers)
