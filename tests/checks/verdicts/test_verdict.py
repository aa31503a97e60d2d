"""fedbounds.checks.verdicts.verdict: the three verdicts, Bonferroni over points, slack, JSON round trip."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fedbounds.checks.verdicts.verdict import HOLDS, INCONCLUSIVE, VIOLATED, Verdict, combine, compare, decide, slack_of


def test_decide_three_outcomes() -> None:
    assert decide(0.5, 0.9, 1.0) == HOLDS
    assert decide(1.1, 1.3, 1.0) == VIOLATED
    assert decide(0.9, 1.1, 1.0) == INCONCLUSIVE
    # exact values: only round-off tolerance
    assert decide(1.0 + 1e-12, 1.0 + 1e-12, 1.0, exact=True) == HOLDS
    assert decide(1.0 + 1e-6, 1.0 + 1e-6, 1.0, exact=True) == VIOLATED


def test_slack() -> None:
    assert slack_of(2.0, 1.0) == 2.0
    assert slack_of(1.0, -1.0) == math.inf
    assert slack_of(0.0, 1.0) == 0.0
    assert math.isnan(slack_of(-1.0, -1.0))


def test_compare_monte_carlo_and_exact() -> None:
    rng = np.random.default_rng(0)
    samples = 1.0 + 0.1 * rng.standard_normal((200, 5))  # true mean 1 at 5 points
    assert compare("c", "i", samples, 2.0, exact=False).status == HOLDS
    assert compare("c", "i", samples, 0.5, exact=False).status == VIOLATED
    assert compare("c", "i", samples, 1.0, exact=False).status == INCONCLUSIVE
    v = compare("c", "i", samples, np.array([2.0, 2.0, 0.5, 2.0, 2.0]), exact=False)
    assert v.status == VIOLATED and v.details["worst_index"] == 2 and v.details["points_violated"] == 1
    assert v.slack == pytest.approx(0.5 / samples[:, 2].mean())
    e = compare("c", "i", np.array([1.0, 3.0, 2.0]), np.array([2.0, 4.0, 2.5]), exact=True)
    assert e.status == HOLDS and e.exact and e.slack == pytest.approx(1.25) and e.observed == 2.0
    assert e.ci_low == e.ci_high == e.observed


def test_bonferroni_makes_family_honest() -> None:
    # 50 points whose true mean equals the bound: a per-point 95% test would call some "holds" or
    # "violated" by chance; the corrected family-wide test must not call "violated" often
    rng = np.random.default_rng(3)
    violated = 0
    for _ in range(200):
        s = rng.standard_normal((30, 50))
        violated += compare("c", "i", s, 0.0, exact=False).status == VIOLATED
    assert violated / 200 < 0.1


def test_json_round_trip_and_combine() -> None:
    v = compare("c", "inst", np.array([1.0, 0.0]), np.array([2.0, 1.0]), exact=True)
    d = json.loads(json.dumps(v.to_dict(), allow_nan=False))
    assert d["slack"] == 2.0
    w = Verdict.from_dict(d)
    assert w.status == v.status and w.slack == v.slack
    inf = compare("c", "inst", np.array([0.0]), np.array([1.0]), exact=True)
    assert json.loads(json.dumps(inf.to_dict(), allow_nan=False))["slack"] == "inf"
    assert Verdict.from_dict(inf.to_dict()).slack == math.inf
    bad = compare("c", "i", np.array([2.0]), 1.0, exact=True)
    assert combine([v, inf]) == "holds"
    assert combine([v, bad]) == "violated"
    assert combine([]) == "inconclusive"
