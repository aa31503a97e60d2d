"""docs/adding-a-paper.md, followed: a textbook "paper" (examples/textbook-paper/textbook_proxgrad: one folder per layer,
one claim, one check) joins the catalogue, the checks and the command line through the registries alone, with
no edit to shared code. Run in a subprocess so the registration does not leak into other tests."""

import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

PAPERS = Path(__file__).resolve().parents[1] / "examples" / "textbook-paper"
DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-a-paper.md"

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


def _cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    code = SCRIPT.format(papers=str(PAPERS), argv=list(argv))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=cwd)


def _doc_block(marker: str, lang: str) -> str:
    """The first fenced ``lang`` block after ``marker`` in docs/adding-a-paper.md."""
    text = DOC.read_text(encoding="utf-8")
    assert marker in text, f"docs/adding-a-paper.md lost its marker {marker!r}"
    block = re.search(rf"```{lang}\n(.*?)```", text.split(marker, 1)[1], re.S)
    assert block, f"no {lang} block after {marker!r}"
    return block.group(1)


@pytest.mark.slow  # 15 s at load 5-7 (pytest --durations, 2026-12-04)
def test_the_claim_joins_the_catalogue() -> None:
    out = _cli("claims", "--paper", "textbook", "--json")
    assert out.returncode == 0, out.stderr
    claims = json.loads(out.stdout)
    assert [c["id"] for c in claims] == ["textbook.theorem3_1"]
    assert claims[0]["status"] == "verbatim" and claims[0]["label"] == "Theorem 3.1"


@pytest.mark.slow  # 18 s at load 5-7 (pytest --durations, 2026-12-04)
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


@pytest.mark.slow  # 25 s at load 5-7 (pytest --durations, 2026-12-04)
def test_the_other_papers_are_untouched() -> None:
    out = _cli("claims", "--json")
    assert out.returncode == 0, out.stderr
    papers = {c["paper"] for c in json.loads(out.stdout)}
    assert papers == {"fednmap", "ds", "textbook"}


def test_the_docs_feasibility_declaration_is_the_real_file() -> None:
    """The declaration the doc shows is, verbatim, the one the commands below run (the doc cannot drift)."""
    shown = _doc_block("## 4. Feasibility", "python").strip()
    real = (PAPERS / "textbook_proxgrad" / "theory" / "feasibility.py").read_text(encoding="utf-8")
    assert shown in real


@pytest.mark.slow  # 36 s at load 5-7 (pytest --durations, 2026-12-04)
def test_the_docs_feasible_commands_run_as_documented(tmp_path: Path) -> None:
    """Each command of the doc's tested block runs with the textbook paper registered (a sub-command no CLI code
    names: today's fixed sub-parsers say 'invalid choice'), with the exit status its comment states."""
    lines = [ln for ln in _doc_block("<!-- tested by tests/test_adding_a_paper.py -->", "bash").splitlines() if ln.strip()]
    assert len(lines) == 3
    outs = []
    for line in lines:
        argv = shlex.split(line, comments=True)
        assert argv[:2] == ["fedbounds", "feasible"], line
        want = int(re.search(r"exit (\d)", line).group(1)) if "exit" in line else 0
        out = _cli(*argv[1:], cwd=tmp_path)
        assert out.returncode == want, (line, out.stdout[-2000:], out.stderr)
        assert "Traceback" not in out.stderr
        outs.append(out.stdout)
    # the textbook bound D2/(2 eta T) <= epsilon at eta = 1/L, solved by hand: T = ceil(L D2 / (2 epsilon))
    assert f"T = {math.ceil(2 * 9 / (2 * 0.007)):,}" in outs[0].splitlines()[1] + outs[0].splitlines()[2]
    assert "NOT ADMISSIBLE" in outs[1]
    assert (tmp_path / "region.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow  # 17 s at load 5-7 (pytest --durations, 2026-12-04)
def test_the_checks_tightness_reaches_the_terminal_as_the_doc_says(tmp_path: Path) -> None:
    out = _cli("check", "--claim", "textbook", "--out", str(tmp_path), "--no-progress", "--width", "200")
    assert out.returncode == 0, out.stdout + out.stderr
    summary = json.loads((tmp_path / "report.json").read_text())["claims"][0]["tightness"]["summary"]
    row = next(ln for ln in out.stdout.splitlines() if ln.lstrip().startswith("textbook.theorem3_1"))
    assert summary in row  # today's table prints "-" in the tightness column
    assert f"`{summary}`" in DOC.read_text(encoding="utf-8")


@pytest.mark.slow  # 24 s at load 5-7 (pytest --durations, 2026-12-04)
def test_an_installed_paper_is_found_through_its_entry_point(tmp_path: Path) -> None:
    """The ``fedbounds.papers`` entry point alone (a distribution's metadata on the path, as pip leaves it) registers
    the paper: no register_paper call, no edit to fedbounds. (tests/test_wheel.py does the same with pip, slow.)"""
    dist = tmp_path / "site" / "fedbounds_textbook_paper-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fedbounds-textbook-paper\nVersion: 0.1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[fedbounds.papers]\ntextbook = textbook_proxgrad\n", encoding="utf-8")
    env = {**__import__("os").environ, "PYTHONPATH": f"{tmp_path / 'site'}:{PAPERS}"}
    out = subprocess.run([sys.executable, "-m", "fedbounds", "feasible", "textbook", "--L", "2", "--D2", "9", "--epsilon", "0.007"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert "T = 1,286" in out.stdout
    out = subprocess.run([sys.executable, "-m", "fedbounds", "claims", "--paper", "textbook"], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 0 and "textbook.theorem3_1" in out.stdout, out.stderr
    # a plugin that cannot be imported is named in one line, exit 2
    (dist / "entry_points.txt").write_text("[fedbounds.papers]\nbroken = no_such_package_here\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "fedbounds", "claims"], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 2 and "broken" in out.stderr and "Traceback" not in out.stderr, out.stderr
