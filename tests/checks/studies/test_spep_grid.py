"""The stochastic-PEP evidence grid as a sweep (issue 21, item 7): the spec, a cell through `fedbounds sweep`, resume,
the store -> the committed JSON, and the cell's work estimate."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.pep.solve import DEFAULT_REL_TOL
from fedbounds.checks.studies import spep_grid as spep_cells
from fedbounds.checks.sweep.spec import REGISTERED_CELLS, SpecError, check_work, load_spec, parse_spec
from fedbounds.theory.fednmap.spep_floor import GRID_FILE

SPEC = Path(spep_cells.__file__).resolve().parents[1] / "specs" / "fednmap_spep_grid.toml"


def _tiny(grid: str, params: str = 'k = 16.0\nmu = 0.1\nform = "auto"\nQ = 1\n') -> str:
    """The shipped spec with its grid replaced (one (n, Q) and a few (C_0, C_c))."""
    head = SPEC.read_text().split("[params]")[0].replace('name = "fednmap_spep_grid"', 'name = "spep_tiny"')
    return f"{head}[params]\n{params}\n[grid]\n{grid}\n[target]\nmetric = \"psi_gap\"\nvalue = 1.0\n\n[report]\naxes = []\n"


def test_the_spec_parses_and_names_the_registered_cell() -> None:
    spec = load_spec("fednmap_spep_grid")
    assert spec.cell == spep_cells.CELL and spec.cell in REGISTERED_CELLS
    assert spec.grid["n"] == [1, 2, 4] and spec.grid["Q"] == [1, 2] and spec.size == 180
    assert len({c.key for c in spec.iter_cells()}) == 180
    p = spep_cells._point(spec.cells()[0].config)
    assert (p["k"], p["mu"], p["symmetric"]) == (16.0, 0.1, False)


def test_work_estimate_follows_the_sdp_not_the_gradient_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped grid is accepted; the full form at n = 64 (a 448 x 448 Gram matrix) is refused naming grid.n, which
    the engine's estimate (rounds x replicas x n x Q gradients: 128 operations) would have let through; the block form
    at n = 64 (two 7 x 7 blocks, about 200 CPU s measured) is accepted."""
    monkeypatch.delenv("FEDBOUNDS_MAX_CELL_WORK", raising=False)
    spec = load_spec("fednmap_spep_grid")
    work, where, value = spep_cells.cell_work(spec.instance["params"], spec.params, spec.grid)
    assert 1e8 < work < 1e11 and (where, value) == ("grid.n", 4)
    big = _tiny("n = [64]\nC_0 = [1.0]\nC_c = [1e-3]", 'k = 16.0\nmu = 0.1\nform = "full"\nQ = 2\n')
    with pytest.raises(SpecError, match=r"spec field 'grid.n': 64 makes one cell about .* operations"):
        parse_spec(big)
    check_work("pep_class", {"L": 1.0, "rho": 0.1}, {"Q": 2}, {"n": [64]}, 1, 1)  # the generic estimate: no objection
    parse_spec(big.replace('form = "full"', 'form = "symmetric"'))


@pytest.mark.timeout(120)
def test_a_tiny_sweep_reproduces_the_committed_rows_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two cells through `fedbounds sweep` (n = 2, Q = 1, C_0 = 0 (no descent) and 1, C_c = 1e-3) equal the committed rows
    to the certificate tolerance; a second run computes nothing; the store -> JSON keeps the rows as stored."""
    spec, store = tmp_path / "tiny.toml", tmp_path / "tiny.sqlite"
    spec.write_text(_tiny("n = [2]\nC_0 = [0.0, 1.0]\nC_c = [1e-3]"))
    assert main(["sweep", str(spec), "--store", str(store), "--processes", "1", "--no-progress"]) == 0
    assert "2 computed" in capsys.readouterr().out
    assert main(["sweep", str(spec), "--store", str(store), "--processes", "1", "--no-progress"]) == 0
    assert "2 already stored, 0 computed" in capsys.readouterr().out
    data = spep_cells.evidence_from_store(store)
    committed = {(r["n"], r["Q"], r["C_0"], r["C_c"]): r for r in json.loads(GRID_FILE.read_text())["rows"]}
    assert len(data["rows"]) == 2
    for row in data["rows"]:
        ref = committed[(row["n"], row["Q"], row["C_0"], row["C_c"])]
        assert row["status"] == ref["status"] and row["form"] == ref["form"] == "full"
        if row["C_0"] == 0.0:
            assert math.isinf(row["K"]) and ref["K"] == "inf" and row["verdict"] == ref["verdict"] == "no descent"
        else:
            assert math.isclose(row["K"], ref["K"], rel_tol=DEFAULT_REL_TOL) and row["verdict"] == ref["verdict"] == "holds"
            assert math.isclose(row["floor_ratio"], ref["floor_ratio"], rel_tol=DEFAULT_REL_TOL)


def test_the_store_must_hold_this_cell_at_the_graded_scale(tmp_path: Path) -> None:
    """Negative control: a store at k = 8 is refused (the grade's comparison is at k = 16); so is a missing store."""
    from fedbounds.checks.sweep.runner import run_sweep

    spec = parse_spec(_tiny("n = [1]\nC_0 = [1.0]\nC_c = [1e-3]", 'k = 8.0\nmu = 0.1\nform = "auto"\nQ = 1\n'))
    store = tmp_path / "k8.sqlite"
    run_sweep(spec, store, processes=1, progress=False)
    with pytest.raises(ValueError, match="k = 8"):
        spep_cells.evidence_from_store(store)
    with pytest.raises(ValueError, match="does not exist"):
        spep_cells.evidence_from_store(tmp_path / "none.sqlite")


def test_the_committed_evidence_is_the_shipped_spec_swept() -> None:
    """theory/fednmap/spep_grid.json was written from a store of this spec (its fingerprint) and holds every cell once."""
    data = json.loads(GRID_FILE.read_text())
    spec = load_spec("fednmap_spep_grid")
    assert data["spec"] == {"name": spec.name, "fingerprint": spec.fingerprint, "cells": spec.size}
    want = {(c.config["instance"]["params"]["n"], c.config["params"]["Q"], c.config["params"]["C_0"], c.config["params"]["C_c"])
            for c in spec.iter_cells()}
    got = [(r["n"], r["Q"], r["C_0"], r["C_c"]) for r in data["rows"]]
    assert len(got) == len(set(got)) and set(got) == want
    assert {r["form"] for r in data["rows"] if r["n"] >= 3} == {"symmetric"}


def test_a_bad_cell_parameter_is_one_line_naming_it() -> None:
    cfg = load_spec("fednmap_spep_grid").cells()[0].config
    for section, name, value, words in (("params", "form", "diagonal", "params.form"), ("instance", "L", 2.0, "instance.L"),
                                        ("params", "C_c", -1.0, "params.C_c"), ("params", "Q", 0, "params.Q")):
        bad = json.loads(json.dumps(cfg))
        (bad["params"] if section == "params" else bad["instance"]["params"])[name] = value
        with pytest.raises(ValueError, match=words):
            spep_cells.compute_spep_cell(bad)


def test_an_unwritable_target_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a FileNotFoundError traceback from the atomic writer."""
    store = tmp_path / "s.sqlite"
    spec = tmp_path / "tiny.toml"
    spec.write_text(_tiny("n = [1]\nC_0 = [0.0]\nC_c = [1e-3]"))
    assert main(["sweep", str(spec), "--store", str(store), "--processes", "1", "--no-progress"]) == 0
    capsys.readouterr()
    target = tmp_path / "missing" / "grid.json"
    assert spep_cells.main([str(store), "--write", "--target", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err and "Traceback" not in err
