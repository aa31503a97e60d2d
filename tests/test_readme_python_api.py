"""The README's "Python API" section (issue 20, item 6): its example runs, and the flag-to-key mapping it states
is the command line's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fedbounds.checks import cli
from fedbounds.theory.feasibility import declarations, resolve_theorem

ROOT = Path(__file__).resolve().parents[1]


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(r"^## Python API\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, "README.md has no '## Python API' section"
    return match.group(1)


def test_the_python_api_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", _section(), re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md (Python API)", "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out
    assert "fednmap.theorem8" in out and "ds.lemma5_2" in out


#: the README's rule: a flag is its key with '-' for '_', except these
EXCEPTIONS = {"--C0": "C_0", "--EL0": "EL_0", "--Delta0": "Delta_0"}
#: options of `feasible` that are not keys of the constants or parameters
NOT_KEYS = {"-h", "--help", "--epsilon", "--json", "--latex", "--plot", "--axes", "--width"}


def _key(flag: str) -> str:
    return EXCEPTIONS.get(flag, flag[2:].replace("-", "_"))


@pytest.mark.parametrize("theorem", ["fednmap", "ds-fedproxgrad"])
def test_the_stated_mapping_is_the_command_lines(theorem: str) -> None:
    """Every value flag of ``fedbounds feasible THEOREM`` maps by the README's rule to the key the API takes."""
    parser, _ = cli._build_parser(["feasible", theorem])
    feasible = next(a for a in parser._subparsers._group_actions[0].choices["feasible"]._actions if a.dest == "theorem")
    sub = feasible.choices[theorem]
    spec_name = resolve_theorem(theorem, {"mu": 1} if theorem == "fednmap" else {"alpha": 0.75})
    spec = next(s for s in declarations() if s.name == spec_name)
    keys = {p.name for p in (*spec.constants, *spec.params)} | {"sigma"}
    checked = 0
    for action in sub._actions:
        flags = [f for f in action.option_strings if f.startswith("--") and f not in NOT_KEYS]
        if not flags or action.nargs == 0 or (action.default is None and action.const is not None):
            continue  # output options and problem-class switches
        if not isinstance(action.type, type) or action.type is bool:
            continue
        key = action.dest.removeprefix("in_")  # the sub-commands built from TheoremSpecs store inputs as in_<key>
        for flag in flags:
            assert _key(flag) == key, f"{flag} is stored as {key!r}, the README says {_key(flag)!r}"
            assert key in keys, f"{flag}: the API does not take the key {key!r} (it takes {sorted(keys)})"
            checked += 1
    assert checked >= 9, checked
    assert "`--C0`, `--EL0` and `--Delta0`" in _section()


@pytest.mark.parametrize(
    ("constants", "params", "named"),
    [
        ({"C0": 1}, {}, "'C0'; allowed: L, rho"),  # the CLI's spelling is not a key: the error lists the keys
        ({"n": 2.5}, {}, "n must be an integer >= 1"),
        ({"L": -1}, {}, "L must be > 0"),
        ({}, {"eta-a": 1e-3}, "unknown parameter 'eta-a'; allowed: gamma, eta_a"),
    ],
)
def test_bad_api_input_names_the_parameter(constants: dict, params: dict, named: str) -> None:
    from fedbounds.theory.feasibility import feasibility

    base = {"L": 1, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1}
    with pytest.raises(ValueError, match=re.escape(named)):
        feasibility("fednmap", {**base, **constants}, params)
