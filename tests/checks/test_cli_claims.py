"""``fedbounds claims``: listing, filters, LaTeX, JSON, and one-line errors with exit status 2."""

from __future__ import annotations

import json

import pytest
from fedbounds.checks.cli import main
from fedbounds.theory.registry import all_claims, claims_by_paper


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["claims", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_lists_every_claim(capsys: pytest.CaptureFixture[str]) -> None:
    # wide enough for one line per claim (tests/checks/report/test_table.py: fitting)
    rc, out, err = _run(capsys, "--full", "--width", "1000")
    assert rc == 0 and not err
    header = out.splitlines()[0].split()
    assert header[:4] == ["id", "label", "status", "statement"]
    for c in all_claims():
        assert c.id in out
    assert f"{len(all_claims())} claims" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("ds.eq16 "))
    assert "verbatim" in line and "ds.lemma5_1, ds.eq13" in line and "eq. (16)" in line


def test_filters(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--paper", "ds", "--status", "erratum")
    assert rc == 0
    # a claim's row starts at column 0 with its id; wrapped or stacked cells continue on indented lines
    ids = [ln.split()[0] for ln in out.splitlines() if ln.strip() and not ln.startswith((" ", "-")) and "." in ln.split()[0]]
    expected = [c.id for c in claims_by_paper("ds") if c.status.value == "erratum"]
    assert ids == expected and ids
    assert all(i.startswith("erratum.ds_") or i == "erratum.constant_gamma_floor" for i in ids)


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--json", "--paper", "fednmap")
    data = json.loads(out)
    assert rc == 0 and {d["paper"] for d in data} == {"fednmap"}
    t8 = next(d for d in data if d["id"] == "fednmap.theorem8")
    assert t8["status"] == "verbatim" and t8["label"] == "Theorem 8" and "12100" in t8["conclusion"]
    assert set(t8["unknowns"]) == {"C_0", "E[L_0]"} and t8["latex"]


def test_latex(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--latex", "--status", "derived")
    assert rc == 0
    assert "% fednmap.nat_nor_relation" in out and r"\le" in out and "% ds.corollary_ii " in out
    assert "% ds.lemma5_2 " not in out  # verbatim, filtered out


def test_one_claim(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--id", "erratum.constant_gamma_floor")
    assert rc == 0
    assert "numeric: see checks claim erratum.constant_gamma_floor" in out and "depends on: ds.assumption.inexactness" in out


@pytest.mark.parametrize(("argv", "needle"), [(["--status", "proved"], "verbatim, derived, reconstructed, erratum"),
                                              (["--paper", "fedavg"], "invalid choice"),
                                              (["--id", "ds.lemma9"], "valid ids"),
                                              (["--latex", "--json"], "not allowed")])
def test_bad_input_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    rc, out, err = _run(capsys, *argv)
    assert rc == 2 and not out
    assert len(err.strip().splitlines()) == 1 and needle in err and err.startswith("fedbounds")


def test_default_is_one_line_per_claim_in_80_columns(capsys: pytest.CaptureFixture[str]) -> None:
    """The default listing: id, status, label and statement on one line each (--full: the wrapped table)."""
    rc, out, err = _run(capsys)
    assert rc == 0 and not err
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    body = [ln for ln in lines if ln.split() and ln.split()[0] in {c.id for c in all_claims()}]
    assert len(body) == len(all_claims())  # one line each, nothing wrapped
    assert len(lines) == len(all_claims()) + 4  # header, rule, blank, count


def test_one_claim_reads_singular_and_empty_evidence_kinds_are_not_printed(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "--paper", "ds", "--status", "verbatim")
    n = sum(1 for c in all_claims() if c.id.startswith("ds") and c.status.value == "verbatim")
    assert f"{n} claim" + ("" if n == 1 else "s") in out
    for c in all_claims():
        if c.evidence and not c.evidence_kinds:
            _, out, _ = _run(capsys, "--id", c.id)
            assert "evidence:   []" not in out
            break
