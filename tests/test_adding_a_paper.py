"""docs/adding-a-paper.md, followed: a textbook "paper" (tests/papers/textbook_proxgrad: one folder per layer,
one claim, one check) joins the catalogue, the checks and the command line through the registries alone, with
no edit to shared code. Run in a subprocess so the registration does not leak into other tests."""

import json
import subprocess
import sys
from pathlib import Path

PAPERS = Path(__file__).parent / "papers"

SCRIPT = """
import sys
sys.path.insert(0, {papers!r})
from fedbounds.theory import registry as theory_registry
from fedbounds.checks import registry as checks_registry
theory_registry.register_paper("textbook_proxgrad.theory")
checks_registry.register_paper("textbook_proxgrad.checks")
from fedbounds.checks.cli import main
sys.exit(main({argv!r}))
"""


def _cli(*argv: str) -> subprocess.CompletedProcess:
    code = SCRIPT.format(papers=str(PAPERS), argv=list(argv))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_the_claim_joins_the_catalogue() -> None:
    out = _cli("claims", "--paper", "textbook", "--json")
    assert out.returncode == 0, out.stderr
    claims = json.loads(out.stdout)
    assert [c["id"] for c in claims] == ["textbook.theorem3_1"]
    assert claims[0]["status"] == "verbatim" and claims[0]["label"] == "Theorem 3.1"


def test_the_check_runs_holds_and_its_control_fires(tmp_path: Path) -> None:
    out = _cli("check", "--claim", "textbook", "--out", str(tmp_path), "--no-progress")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    (result,) = report["claims"]
    assert result["check_id"] == "textbook.theorem3_1"
    assert result["verdict"] == "holds" and result["status"] == "verbatim"
    # its scope is computed from the paper's own hypothesis eta <= 1/L at the recorded step (docs/adding-a-paper.md §3)
    assert result["scope"]["kind"] == "inside" and result["scope"]["points"] == 1 and result["verdict_shown"] == "holds"
    (neg,) = result["negatives"]
    assert neg["status"] == "violated"
    assert neg["details"]["control_record"]["changed"] == "bound"
    assert neg["details"]["control_record"]["violated_at"] >= 1
    # the textbook rate is tight to within a small factor on this instance: a loose check would show here
    assert 0.05 < result["tightness"]["worst_ratio"] <= 1.0


def test_the_other_papers_are_untouched() -> None:
    out = _cli("claims", "--json")
    assert out.returncode == 0, out.stderr
    papers = {c["paper"] for c in json.loads(out.stdout)}
    assert papers == {"fednmap", "ds", "textbook"}
