"""Sweep specs (issue 8): parsing, validation errors that name the field, cell expansion and keys."""

from __future__ import annotations

import hashlib
import json

import pytest
from fedbounds.checks.sweep.spec import SpecError, cell_key, load_spec, parse_spec

BASE = """
name = "t"
algorithm = "fednmap"
rounds = 20
replicas = 2
seeds = [0, 1]
metrics = ["psi_gap"]

[instance]
name = "least_squares"
p = 3

[oracle]
kind = "gaussian"
sigma2 = 1.0

[params]
gamma = 0.5
eta_s = 1

[grid]
n = [1, 2]
Q = [1, 2, 4]
eta_a = [0.1]

[target]
metric = "psi_gap"
value = 0.05
"""


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_base_spec_expands_to_the_product_times_seeds() -> None:
    spec = parse_spec(BASE)
    cells = spec.cells()
    assert spec.size == len(cells) == 2 * 3 * 1 * 2
    assert len({c.key for c in cells}) == len(cells)
    # routing: n is an instance parameter, Q and eta_a algorithm parameters; seeds outermost
    first = cells[0].config
    assert first["instance"]["params"] == {"p": 3, "n": 1}
    assert first["params"] == {"gamma": 0.5, "eta_s": 1.0, "Q": 1, "eta_a": 0.1}
    assert [c.coords["seed"] for c in cells] == [0] * 6 + [1] * 6
    assert cells[0].coords == {"n": 1, "Q": 1, "eta_a": 0.1, "seed": 0}


def test_key_is_sha256_of_sorted_compact_json() -> None:
    cell = parse_spec(BASE).cells()[3]
    text = json.dumps(cell.config, sort_keys=True, separators=(",", ":"))
    assert cell.key == hashlib.sha256(text.encode()).hexdigest()
    assert cell_key(dict(reversed(list(cell.config.items())))) == cell.key


def test_int_and_float_spellings_of_a_step_are_one_cell() -> None:
    a = parse_spec(BASE).cells()
    b = parse_spec(_replace(BASE, "eta_s = 1\n", "eta_s = 1.0\n")).cells()
    assert [c.key for c in a] == [c.key for c in b]


def test_key_changes_with_seed_and_with_any_parameter() -> None:
    keys = {c.key for c in parse_spec(BASE).cells()}
    other = {c.key for c in parse_spec(_replace(BASE, "sigma2 = 1.0", "sigma2 = 1.0000000000000002")).cells()}
    assert keys.isdisjoint(other)
    seeds = {c.key for c in parse_spec(_replace(BASE, "seeds = [0, 1]", "seeds = [1, 2]")).cells()}
    assert len(keys & seeds) == 6  # seed 1 is shared


def test_seed_table_and_scaled_rounds() -> None:
    text = _replace(BASE, "seeds = [0, 1]", "seeds = {start = 5, count = 3}")
    text = _replace(text, "rounds = 20", 'rounds = {base = 100, per = ["n", "Q"], min = 10}')
    spec = parse_spec(text)
    assert spec.seeds == (5, 6, 7)
    rounds = {(c.coords["n"], c.coords["Q"]): c.config["rounds"] for c in spec.cells()}
    assert rounds == {(1, 1): 100, (1, 2): 50, (1, 4): 25, (2, 1): 50, (2, 2): 25, (2, 4): 13}


def test_scaled_parameter_follows_the_grid_and_keeps_its_base_as_coordinate() -> None:
    text = _replace(BASE, "eta_a = [0.1]", "eta_a = [0.1, 0.2]")
    text = _replace(text, "[target]", '[scale]\neta_s = {times = ["n"], over = ["Q"], max = 1.5}\neta_a = {times = ["Q"]}\n\n[target]')
    cells = parse_spec(text).cells()
    got = {(c.coords["n"], c.coords["Q"], c.coords["eta_a"]): (c.config["params"]["eta_s"], c.config["params"]["eta_a"]) for c in cells}
    assert got[(1, 1, 0.1)] == (1.0, 0.1)
    assert got[(2, 1, 0.2)] == (1.5, 0.2)  # 1 * 2 / 1 = 2, clamped to 1.5
    assert got[(2, 4, 0.1)] == (0.5, 0.4)
    assert got[(1, 2, 0.2)] == (0.5, 0.4)


def test_dotted_grid_keys_route_to_their_section() -> None:
    text = _replace(BASE, "[grid]\n", '[grid]\n"oracle.sigma2" = [0.5, 2.0]\n"instance.heterogeneity" = [0, 1]\n')
    text = _replace(text, "sigma2 = 1.0\n", "")
    cells = parse_spec(text).cells()
    assert {c.config["oracle"]["sigma2"] for c in cells} == {0.5, 2.0}
    assert {c.config["instance"]["params"]["heterogeneity"] for c in cells} == {0.0, 1.0}


def test_shipped_specs_parse() -> None:
    tiny = load_spec("tiny")
    assert tiny.name == "tiny" and 4 <= tiny.size <= 64
    big = load_spec("fednmap_speedup")
    assert big.grid["n"] == [1, 2, 4, 8, 16, 32, 64]
    assert big.grid["Q"] == [1, 2, 4, 8, 16, 32]
    assert big.report["axes"] == ["n", "Q"]
    assert big.cell == "fedbounds.checks.sweep.cell:compute_study_cell"
    # 4 methods x 7 n x 6 Q x 2 step constants; where the step is capped two constants give one cell
    assert big.size == 336 and len({c.key for c in big.iter_cells()}) == 332


@pytest.mark.parametrize(
    ("old", "new", "field", "words"),
    [
        ('name = "t"\n', "", "name", "missing"),
        ('algorithm = "fednmap"', 'algorithm = "fedfoo"', "algorithm", "unknown algorithm 'fedfoo'"),
        ("Q = [1, 2, 4]", 'Q = [1, "x"]', "grid.Q", "expected a list of integers >= 1, got 'x'"),
        ("Q = [1, 2, 4]", "Q = []", "grid.Q", "empty list"),
        ("Q = [1, 2, 4]", "Q = 4", "grid.Q", "expected a list of integers >= 1, got 4"),
        ("Q = [1, 2, 4]", "Q = [0, 1]", "grid.Q", "got 0"),
        ("Q = [1, 2, 4]", "Q = [1, 1]", "grid.Q", "duplicate"),
        ("eta_a = [0.1]", "eta_a = [-0.1]", "grid.eta_a", "numbers > 0"),
        ("eta_a = [0.1]", "gamma = [0.1]", "grid.gamma", "also fixed in [params]"),
        ("eta_a = [0.1]", 'eta_a = [0.1]\n"bogus.x" = [1]', "grid.bogus.x", "must start with"),
        ("rounds = 20", "rounds = 0", "rounds", "integer >= 1"),
        ("rounds = 20", 'rounds = "many"', "rounds", "integer >= 1"),
        ("rounds = 20", 'rounds = {base = 10, per = ["m"]}', "rounds.per", "not a grid key"),
        ("replicas = 2", "replicas = 2.5", "replicas", "integer >= 1"),
        ("seeds = [0, 1]", "seeds = []", "seeds", "non-empty list"),
        ("seeds = [0, 1]", "seeds = [0, -1]", "seeds", "integers >= 0"),
        ("seeds = [0, 1]", "seeds = {start = 0}", "seeds.count", "missing"),
        ('metrics = ["psi_gap"]', 'metrics = ["loss"]', "metrics", "unknown metric 'loss'"),
        ('metric = "psi_gap"', 'metric = "accuracy"', "target.metric", "unknown metric"),
        ("value = 0.05", 'value = "small"', "target.value", "finite number"),
        ("value = 0.05", "value = nan", "target.value", "finite number"),
        ('[instance]\nname = "least_squares"', "[instance]", "instance.name", "registry name"),
        ("p = 3", "p = 3.5", "instance.p", "integer >= 1"),
        ("sigma2 = 1.0", "sigma2 = -1.0", "oracle.sigma2", ">= 0"),
        ("gamma = 0.5", "gamma = 0", "params.gamma", "> 0"),
        ("replicas = 2", "replicas = 2\nrepliacs = 3", "repliacs", "unknown field"),
        ("value = 0.05", 'value = 0.05\n\n[report]\naxes = ["m"]', "report.axes", "not a grid key"),
        ("value = 0.05", 'value = 0.05\n\n[report]\naxes = ["n"]\ntune = ["n"]', "report.tune", "both an axis"),
        ("[target]", '[scale]\neta_s = {times = ["m"]}\n[target]', "scale.eta_s.times", "not a grid key"),
        ("[target]", '[scale]\nmu = {times = ["n"]}\n[target]', "scale.mu", "no parameter 'mu'"),
        ("[target]", "[scale]\neta_s = {}\n[target]", "scale.eta_s", "at least one grid key"),
        ("[target]", '[scale]\neta_s = {times = ["n"], max = -1}\n[target]', "scale.eta_s.max", "> 0"),
        ('kind = "gaussian"', 'kind = "laplace"', "oracle.kind", "unknown oracle 'laplace'"),
        ("sigma2 = 1.0", "sigma2 = 1.0\nbatch = 4", "oracle.batch", "no parameter 'batch'"),
        ('name = "least_squares"', 'name = "least_squarez"', "instance.name", "unknown instance 'least_squarez'"),
        ("p = 3", "p = 3\nq = 2", "instance.q", "no parameter 'q'"),
        ("gamma = 0.5", "gamma = 0.5\nstep = 0.1", "params.step", "no parameter 'step'"),
        ("eta_a = [0.1]", "eta = [0.1]", "grid.eta", "no parameter 'eta'"),
        ("eta_a = [0.1]", 'variant = ["A", "B"]', "params", "needs ['eta_a']"),
    ],
)
def test_malformed_spec_names_the_field(old: str, new: str, field: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(_replace(BASE, old, new))
    assert info.value.field == field
    assert str(info.value).startswith(f"spec field '{field}': ")
    assert words in str(info.value)


def test_missing_grid_table_and_bad_toml() -> None:
    start = BASE.index("[grid]")
    end = BASE.index("[target]")
    with pytest.raises(SpecError, match=r"spec field 'grid': missing"):
        parse_spec(BASE[:start] + BASE[end:])
    with pytest.raises(SpecError, match=r"not valid TOML"):
        parse_spec(BASE + "\nQ = [1, 2\n")


def test_missing_file_is_a_value_error(tmp_path) -> None:
    with pytest.raises(ValueError, match="cannot read spec"):
        load_spec(tmp_path / "nope.toml")
