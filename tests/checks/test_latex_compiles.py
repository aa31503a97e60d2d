"""``fedbounds feasible --latex`` (every theorem) and ``fedbounds claims --latex`` give LaTeX a paper can ``\\input``:
compiled with pdflatex where one is installed (the packages named in the fragment's header comment, nothing else),
otherwise every expression parsed by matplotlib's mathtext."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fedbounds.checks.cli import main

FEASIBLE = {
    "fednmap.theorem8": ["fednmap", "--n", "50", "--Q", "10", "--L", "2", "--rho", "0.05", "--sigma", "0.1", "--mu", "0.5",
                         "--epsilon", "1e-3"],
    "fednmap.theorem5": ["fednmap", "--n", "10", "--Q", "5", "--L", "1", "--rho", "0.1", "--sigma", "1", "--T", "100", "--epsilon", "0.1"],
    "ds.corollary_ii": ["ds-fedproxgrad", "--L-f", "1", "--G", "1", "--B", "1", "--sigma", "1", "--Delta0", "1", "--epsilon", "0.5"],
    "ds.theorem5_3": ["ds-fedproxgrad", "--L-f", "1", "--G", "1", "--B", "1", "--sigma", "1", "--alpha", "0.75", "--epsilon", "1e-3"],
}


def _fragments(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    out = {}
    for theorem, argv in FEASIBLE.items():
        main(["feasible", *argv, "--latex"])
        text = capsys.readouterr().out
        assert f"% fedbounds feasible: {theorem} " in text, text[:200]
        out[theorem] = text
    main(["claims", "--latex"])
    out["claims"] = capsys.readouterr().out
    return out


def test_every_theorem_covered() -> None:
    from fedbounds.theory.feasibility import declarations

    assert {s.name for s in declarations()} <= set(FEASIBLE)


def test_the_fragments_have_no_float_exponents_or_text_names(capsys: pytest.CaptureFixture[str]) -> None:
    for name, tex in _fragments(capsys).items():
        body = "\n".join(ln.split("  % ")[0] for ln in tex.splitlines() if not ln.startswith("%"))
        assert not re.search(r"\d(\.\d+)?e[-+]?\d", body), (name, re.search(r".{30}\d(\.\d+)?e[-+]?\d.{10}", body))
        assert not re.search(r"\d\.0\b", body), (name, re.search(r".{30}\d\.0\b.{10}", body))  # 6000.0: a whole number is 6000
        assert r"\cdot 10^" not in body, name  # the \times 10^{b} form throughout
        assert r"\text{E[psi" not in body and r"\text{gamma}" not in body and r"\text{alpha}" not in body, name
        if name != "claims":
            assert r"\usepackage{amsmath,amssymb}" in tex.splitlines()[1]


def _document(frags: dict[str, str], where: Path) -> Path:
    body = []
    for name, tex in frags.items():
        path = where / f"{name.replace('.', '_')}.tex"
        if name == "claims":  # one display per claim line
            tex = "\n".join(ln if ln.startswith("%") or not ln.strip() else rf"\[ {ln} \]" for ln in tex.splitlines())
        path.write_text(tex, encoding="utf-8")
        body.append(rf"\input{{{path.stem}}}")
    doc = where / "paper.tex"
    doc.write_text("\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n" + "\n".join(body)
                   + "\n\\end{document}\n", encoding="utf-8")
    return doc


def _maths(tex: str) -> list[str]:
    """Each maths line of a fragment, as one mathtext expression (alignment marks and line ends removed)."""
    out = []
    for ln in tex.splitlines():
        ln = ln.split("  % ")[0].strip()
        if not ln or ln.startswith("%") or ln.startswith(r"\begin") or ln.startswith(r"\end"):
            continue
        ln = ln.removesuffix(r"\\").replace("&&", r"\quad ").replace("&", "").replace(r"\,", "")
        out.append(ln)
    return out


@pytest.mark.slow  # 10 s at load 5-7 (pytest --durations, 2026-12-04)
def test_the_latex_compiles_or_parses(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    frags = _fragments(capsys)
    engine = shutil.which("pdflatex")
    if engine:
        doc = _document(frags, tmp_path)
        res = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stdout[-3000:]
        assert (tmp_path / "paper.pdf").stat().st_size > 1000
        return
    from matplotlib.mathtext import MathTextParser

    parser = MathTextParser("agg")
    unsupported = (r"\Longrightarrow", r"\textstyle", r"\wedge", r"\mathbf", r"\limits", r"\underbrace")
    failed = []
    for name, tex in frags.items():
        for expr in _maths(tex):
            for macro in unsupported:  # mathtext lacks these; their arguments are still parsed
                expr = expr.replace(macro, " ")
            expr = expr.replace(r"\tfrac", r"\frac")
            expr = re.sub(r"\\le(?![a-z])", r"\\leq", re.sub(r"\\ge(?![a-z])", r"\\geq", expr))  # LaTeX's short names
            try:
                parser.parse(f"${expr}$", dpi=72)
            except ValueError as exc:
                failed.append(f"{name}: {str(exc).strip().splitlines()[-1]}")
    assert not failed, "\n".join(failed)
