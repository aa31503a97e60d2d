"""The README states both commands' cost (from the benchmark, or a marked placeholder the lead fills in), the
PASS / inconclusive rule with --strict, and lists every notebook."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_both_commands_state_their_cost() -> None:
    for key in ("check", "tests"):
        m = re.search(rf"<!-- cost:{key} -->(.*?)<!-- /cost:{key} -->", README, re.S)
        assert m, f"README lost its cost:{key} marker"
        text = " ".join(m.group(1).split())
        assert "MEASURE" in text or re.search(r"[\d.]+ s wall, [\d.]+ CPU-seconds", text), text
    # the figures sit right under the two commands, before the next section
    head = README.split("## The layers", 1)[0]
    assert "<!-- cost:check -->" in head and "<!-- cost:tests -->" in head


def test_the_rule_names_inconclusive_and_strict() -> None:
    assert "PASS (1 inconclusive: <claim>)" in README and "--strict" in README


def test_every_notebook_is_listed() -> None:
    section = README.split("## Notebooks", 1)[1].split("\n## ", 1)[0]
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        assert f"({nb.name[:2]})" in section, nb.name
