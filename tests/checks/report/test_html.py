"""The report page (issue 14): one self-contained index.html, parsed back with html5lib."""

from __future__ import annotations

import base64
from pathlib import Path

import html5lib
import pytest
from fedbounds.checks.report.html import latex_png, mathtext_compatible, write_index_html

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png(path: Path, label: str) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1.5))
    fig.subplots().plot([0, 1], [1, 0], label=label)
    fig.savefig(path, dpi=50)
    return path.name


def _report(tmp_path: Path) -> dict:
    return {
        "fedbounds": "9.9.9",
        "git_commit": "0123abcd",
        "date": "2026-12-02 06:00:00 UTC",
        "command": "fedbounds check --claim fednmap.theorem8.complexity",
        "machine": "Linux, 2 CPUs",
        "profile": {"name": "quick", "replicas": 32},
        "seed": 0,
        "passed": True,
        "claims": [
            {
                "check_id": "fednmap.theorem8.complexity",
                "title": "Linear speedup",
                "paper_label": "after Theorem 8",
                "status": "verbatim",
                "verdict": "holds",
                "verdict_shown": "holds*",
                "scope": {"kind": "outside", "text": "outside: eta_hat 4-16x, eta_a 222x past Theorem 5's conditions"},
                "notes": ["steps past Theorem 5's conditions (its 1/100 factors make T impractical)"],
                "verdicts": [{"instance": "FedNMap, n sweep", "observed": -1.02, "bound": -1.0, "ci_low": -1.1, "ci_high": "nan",
                              "slack": "inf", "status": "holds", "exact": False, "details": {}}],
                "worst_slack": 1.2,
                "tightness": {},
                "accepted": True,
                "error": None,
                "negatives": [
                    {
                        "instance": "FedAvg + server prox, n sweep",
                        "status": "violated",
                        "slack": -0.4,
                        "observed": 3.0,
                        "bound": 1.0,
                        "details": {"control": "FedAvg + server prox, n sweep: same steps"},
                    }
                ],
                "plot_files": [_png(tmp_path / "speedup_n.png", "n"), _png(tmp_path / "speedup_q.png", "Q")],
            },
            {
                "check_id": "custom.claim<1>",
                "title": "A claim with its own LaTeX & <tags>",
                "paper_label": "eq. (3)",
                "status": "derived",
                "verdict": "violated",
                "worst_slack": float("inf"),
                "tightness": {},
                "accepted": False,
                "error": None,
                "latex": r"\|x_t\|^2 \le \frac{C_0}{\sqrt{T}}",
                "scope": {"kind": "inside", "text": "inside eq. (3)'s hypotheses"},
                "verdicts": [{"instance": "pep point", "observed": 0.5, "bound": 1.0, "ci_low": 0.5, "ci_high": 0.5, "slack": 2.0,
                              "status": "violated", "exact": True,
                              "details": {"ratio": 0.5, "pep": {"pep_status": "certified", "gram_dim": 7, "solvers": {
                                  "clarabel": {"status": "optimal", "gap": 1e-9, "seconds": 0.1},
                                  "scs": {"status": "optimal", "gap": -2e-8, "seconds": 0.2}}}}}],
                "negatives": [],
                "plot_files": [_png(tmp_path / "custom.png", "c")],
            },
        ],
    }


def _parse(path: Path):
    return html5lib.parse(path.read_text(encoding="utf-8"), namespaceHTMLElements=False)


def test_every_claim_control_plot_and_formula_is_on_the_page(tmp_path: Path) -> None:
    report = _report(tmp_path)
    page = write_index_html(tmp_path, report)
    assert page == tmp_path / "index.html"
    doc = _parse(page)
    rows = doc.findall(".//table[@class='claims']/tbody/tr")
    assert [r.findall("td")[0].find("a").text for r in rows] == ["fednmap.theorem8.complexity", "custom.claim<1>"]
    assert [r.findall("td")[4].text for r in rows] == ["holds*", "violated !"]  # ! : not accepted
    assert rows[0].findall("td")[3].text == "verbatim" and rows[1].findall("td")[2].text == "eq. (3)"
    controls = doc.findall(".//table[@class='controls']/tbody/tr")
    assert len(controls) == 1 and controls[0].findall("td")[2].text == "violated"
    plots = doc.findall(".//img[@class='plot']")
    latex = doc.findall(".//img[@class='latex']")
    assert len(plots) == 3 and len(latex) == 2  # every plot, and one formula per claim
    meta = {dt.text: dd.text for dt, dd in zip(doc.findall(".//dl[@class='run']/dt"), doc.findall(".//dl[@class='run']/dd"), strict=True)}
    for img in plots + latex:
        src = img.get("src")
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == PNG_MAGIC
    assert {i.get("alt") for i in plots} == {
        "fednmap.theorem8.complexity: speedup_n.png",
        "fednmap.theorem8.complexity: speedup_q.png",
        "custom.claim<1>: custom.png",
    }
    assert latex[1].get("alt") == r"\|x_t\|^2 \le \frac{C_0}{\sqrt{T}}"
    assert meta["seed"] == "0" and meta["profile"].startswith("quick")
    assert list(tmp_path.glob(".index.*")) == []  # the temporary file was renamed into place


def test_the_page_needs_no_network(tmp_path: Path) -> None:
    text = write_index_html(tmp_path, _report(tmp_path)).read_text()
    assert "http://" not in text and "https://" not in text and "<script" not in text


def test_a_sweep_report_with_slopes_and_figures(tmp_path: Path) -> None:
    figs = [_png(tmp_path / "rounds_vs_n.png", "n"), _png(tmp_path / "rounds_vs_Q.png", "Q")]
    report = {
        "spec": "fednmap_speedup",
        "slopes": [{"method": "fednmap", "axis": "n", "slope": -1.01, "boot_low": -1.05, "boot_high": -0.97}],
        "figures": figs,
        "git_head": "abc123",
    }
    doc = _parse(write_index_html(tmp_path, report))
    assert doc.find(".//h1").text == "fednmap_speedup"
    assert [td.text for td in doc.findall(".//table[@class='slopes']/tbody/tr/td")] == ["fednmap", "n", "-1.01", "-1.05", "-0.97"]
    assert [i.get("alt") for i in doc.findall(".//img[@class='plot']")] == figs


def test_a_missing_plot_is_named_not_silently_dropped(tmp_path: Path) -> None:
    report = _report(tmp_path)
    (tmp_path / "custom.png").unlink()
    text = write_index_html(tmp_path, report).read_text()
    assert "missing plot: custom.png" in text


@pytest.mark.parametrize("tex", [r"a \le b", r"\|\nabla f\|^2 \ge 0", r"\underbrace{x \le 1}_{\text{[derived]}}\ \Longrightarrow\ y"])
def test_mathtext_rewrites_render(tex: str) -> None:
    assert latex_png(tex)[:8] == PNG_MAGIC
    assert r"\le " not in mathtext_compatible(tex) + " " and r"\underbrace" not in mathtext_compatible(tex)


def test_unparsable_latex_is_shown_as_source(tmp_path: Path) -> None:
    assert latex_png(r"\frac{1}{") is None
    report = {"claims": [{"check_id": "x", "title": "t", "latex": r"\frac{1}{", "plot_files": []}]}
    doc = _parse(write_index_html(tmp_path, report))
    assert doc.find(".//p[@class='latex-source']/code").text == r"\frac{1}{"


def test_the_status_tag_stays_on_the_formula() -> None:
    from fedbounds.theory.registry import get_claim

    tex = get_claim("fednmap.theorem8").latex()
    assert r"\underbrace" in tex and "[reconstructed]" in tex
    out = mathtext_compatible(tex)
    assert r"\right]_{\text{[reconstructed]}}" in out and latex_png(tex)[:8] == PNG_MAGIC


def test_verdict_and_scope_classes_are_applied(tmp_path: Path) -> None:
    doc = _parse(write_index_html(tmp_path, _report(tmp_path)))
    cells = doc.findall(".//table[@class='claims']/tbody/tr")
    verdict, scope = cells[0].findall("td")[4], cells[0].findall("td")[5]
    assert verdict.get("class") == "verdict holds outside" and scope.get("class") == "scope outside"
    assert "eta_a 222x" in scope.find("span").text and scope.find("span").get("title").startswith("outside: eta_hat 4-16x")
    assert cells[1].findall("td")[4].get("class") == "verdict violated"
    css = doc.find(".//style").text
    for cls in (".holds", ".violated", ".inconclusive", ".scope.outside", ".verdict.outside"):
        assert cls in css
    assert "@media print" in css


def test_contents_instances_notes_pep_legend_and_metadata(tmp_path: Path) -> None:
    doc = _parse(write_index_html(tmp_path, _report(tmp_path)))
    links = [a.get("href") for a in doc.findall(".//nav[@class='toc']/ol/li/a")]
    ids = {e.get("id") for e in doc.iter() if e.get("id")}
    assert links == ["#claim-fednmap.theorem8.complexity", "#claim-custom.claim_1_"] and all(h[1:] in ids for h in links)
    section = next(e for e in doc.iter("section") if e.get("id") == "claim-fednmap.theorem8.complexity")
    inst = section.findall(".//table[@class='instances']/tbody/tr/td")
    assert [td.text for td in inst[:5]] == ["FedNMap, n sweep", "-1.02", "-1", "[-1.1, nan]", "inf"]
    assert [li.text for li in section.findall(".//ul[@class='notes']/li")] == [
        "steps past Theorem 5's conditions (its 1/100 factors make T impractical)"]
    assert "eta_hat 4-16x" in section.find(".//p[@class='scope outside']").findall("b")[0].tail
    pep = doc.findall(".//table[@class='pep']/tbody/tr/td")
    assert [td.text for td in pep[1:5]] == ["pep point", "0.5", "1", "0.5"] and pep[5].text == "certified"
    assert pep[7].text == "2.0e-08"
    legend = {dt.text for dt in doc.findall(".//dl[@class='legend']/dt")}
    assert {"inf", "nan", "-", "holds*", "scope", "worst slack", "tightness", "interval", "slack"} <= legend
    run = {dt.text: dd.text for dt, dd in zip(doc.findall(".//dl[@class='run']/dt"), doc.findall(".//dl[@class='run']/dd"), strict=True)}
    assert run["fedbounds version"] == "9.9.9" and run["git commit"] == "0123abcd" and run["date (UTC)"].startswith("2026")
    assert run["command"].startswith("fedbounds check") and run["machine"] == "Linux, 2 CPUs"


def test_the_page_is_world_readable(tmp_path: Path) -> None:
    import stat

    page = write_index_html(tmp_path, _report(tmp_path))
    assert stat.S_IMODE(page.stat().st_mode) == 0o644
