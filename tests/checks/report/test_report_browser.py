"""The report page in a real headless browser (Chromium from the system packages): what a reader's browser builds
from index.html has the contents links, the coloured verdict classes, the PEP table and the run metadata.
Skipped, with the reason, on a machine without Chromium (``apt-get install chromium``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import html5lib
import pytest
from fedbounds.checks.report.html import write_index_html

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), shutil.which("google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium on this machine (apt-get install chromium)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def _browser(tmp_path: Path, page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chromium-profile"
    return subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()], capture_output=True,
                          text=True, timeout=120, check=False)


def _report() -> dict:
    pep = {"pep_status": "certified", "gram_dim": 9, "solvers": {"clarabel": {"status": "optimal", "gap": 1e-9, "seconds": 0.1},
                                                                  "scs": {"status": "optimal", "gap": 3e-8, "seconds": 0.3}}}
    return {
        "fedbounds": "0.2.0", "git_commit": "feedbeef", "date": "2026-12-02 06:00:00 UTC", "command": "fedbounds check --claim fednmap.pep",
        "machine": "Linux, 2 CPUs", "profile": {"name": "quick"}, "seed": 0, "passed": True,
        "claims": [
            {"check_id": "fednmap.pep.lyapunov_constants", "title": "PEP descent", "paper_label": "Section 4", "status": "reconstructed",
             "verdict": "holds", "verdict_shown": "holds", "scope": {"kind": "certified", "text": "certified: eta_hat 4x past ..."},
             "worst_slack": 1.5, "tightness": {}, "accepted": True, "notes": ["a note"], "plot_files": [], "negatives": [],
             "verdicts": [{"instance": "rho=0.1 n=2 Q=2 T=2 steps=4x printed", "observed": 0.66, "bound": 1.0, "ci_low": 0.66,
                           "ci_high": 0.66, "slack": 1.5, "status": "holds", "exact": True, "details": {"ratio": 0.66, "pep": pep}}]},
            {"check_id": "fednmap.theorem8.complexity", "title": "Linear speedup", "paper_label": "after Theorem 8", "status": "verbatim",
             "verdict": "holds", "verdict_shown": "holds*", "scope": {"kind": "outside", "text": "outside: eta_a 222x past ..."},
             "worst_slack": "nan", "tightness": {}, "accepted": True, "notes": [], "plot_files": [], "negatives": [], "verdicts": []},
            {"check_id": "ds.lemma5_2", "title": "Lemma 5.2", "paper_label": "Lemma 5.2", "status": "verbatim", "verdict": "violated",
             "verdict_shown": "violated", "scope": {"kind": "inside", "text": "inside"}, "worst_slack": 0.5, "tightness": {},
             "accepted": False, "notes": [], "plot_files": [], "negatives": [], "verdicts": []},
        ],
    }


def test_the_browser_builds_the_page(tmp_path: Path) -> None:
    page = write_index_html(tmp_path / "report", _report())
    out = _browser(tmp_path, page, "--dump-dom")
    assert out.returncode == 0, out.stderr[-2000:]
    doc = html5lib.parse(out.stdout, namespaceHTMLElements=False)
    ids = {e.get("id") for e in doc.iter() if e.get("id")}
    links = [a.get("href") for a in doc.findall(".//nav[@class='toc']/ol/li/a")]
    assert len(links) == 3 and all(h.startswith("#") and h[1:] in ids for h in links)
    verdicts = [td.get("class") for td in doc.findall(".//table[@class='claims']/tbody/tr/td[5]")]
    assert verdicts == ["verdict holds", "verdict holds outside", "verdict violated"]
    scopes = [td.get("class") for td in doc.findall(".//table[@class='claims']/tbody/tr/td[6]")]
    assert scopes == ["scope certified", "scope outside", "scope inside"]
    pep = doc.findall(".//table[@class='pep']/tbody/tr")
    assert len(pep) == 1 and pep[0].findall("td")[5].text == "certified"
    run = {dt.text: dd.text for dt, dd in zip(doc.findall(".//dl[@class='run']/dt"), doc.findall(".//dl[@class='run']/dd"), strict=True)}
    assert run["git commit"] == "feedbeef" and run["fedbounds version"] == "0.2.0"


def test_the_browser_paints_it(tmp_path: Path) -> None:
    page = write_index_html(tmp_path / "report", _report())
    shot = tmp_path / "page.png"
    out = _browser(tmp_path, page, f"--screenshot={shot}", "--window-size=1200,900", "--hide-scrollbars")
    assert out.returncode == 0 and shot.exists(), out.stderr[-2000:]
    from matplotlib.image import imread

    img = imread(shot)
    assert img.shape[:2] == (900, 1200)
    # the verdict colours are painted: the green of .holds and the red of .violated both appear
    rgb = (img[..., :3] * 255).round().astype(int)
    colours = {tuple(c) for c in rgb.reshape(-1, 3)[:: 7].tolist()}
    assert (0xE7, 0xF6, 0xE9) in colours and (0xFD, 0xE8, 0xE8) in colours
