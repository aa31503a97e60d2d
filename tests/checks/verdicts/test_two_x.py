"""The 2x-detection column (fedbounds.checks.verdicts.two_x): computed from a report's worst slack, printed by
``fedbounds claims --json`` for every claim."""

from __future__ import annotations

import json

from fedbounds.checks.cli import main
from fedbounds.checks.verdicts.two_x import from_report


def _report(*rows: tuple[str, str, float, bool]) -> dict:
    return {"profile": "quick", "claims": [{"check_id": c, "verdict": v, "worst_slack": s, "erratum": e} for c, v, s, e in rows]}


def test_catcher_follows_the_worst_slack_and_the_family() -> None:
    rows = from_report(_report(("ds.lemma5_2", "holds", 1.5, False), ("ds.theorem5_3", "holds", 2.5, False),
                               ("ds.pep.lemma5_2", "holds", 1.9, False), ("erratum.ds_phi_prefix", "violated", 0.2, True),
                               ("fednmap.x", "inconclusive", 1.0, False)))
    assert rows["ds.lemma5_2"]["catcher"] == "a"  # halved bound violated: slack < 2
    assert rows["ds.theorem5_3"]["catcher"] == "d"  # loose by more than 2x: a 2x error passes
    assert rows["ds.pep.lemma5_2"]["catcher"] == "b"
    assert rows["erratum.ds_phi_prefix"]["catcher"] == "n/a"
    assert rows["fednmap.x"]["catcher"] == "d"


def test_claims_json_has_the_column_for_every_claim(capsys) -> None:
    assert main(["claims", "--json"]) == 0
    claims = json.loads(capsys.readouterr().out)
    assert claims and all(c["two_x"]["catcher"] in ("a", "b", "c", "d", "n/a") and c["two_x"]["why"] for c in claims)
