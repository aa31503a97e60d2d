"""The result line of ``fedbounds check`` names inconclusive claims, and ``--strict`` fails on them."""

from __future__ import annotations

from dataclasses import dataclass

from fedbounds.checks.commands.check import result_line


@dataclass
class _Res:
    verdict: str
    error: str | None = None


@dataclass
class _Spec:
    check_id: str

    def accepts(self, res: _Res) -> bool:  # as CheckSpec.accepts for a check that is not an erratum
        return res.error is None and res.verdict != "violated"


def test_inconclusive_is_named_and_strict_fails_on_it() -> None:
    pairs = [(_Spec("ds.lemma5_2"), _Res("holds")), (_Spec("fednmap.lyapunov"), _Res("inconclusive"))]
    assert result_line(pairs) == (True, "PASS (1 inconclusive: fednmap.lyapunov)")
    assert result_line(pairs, strict=True) == (False, "FAIL (--strict: 1 inconclusive: fednmap.lyapunov)")
    held = pairs[:1]
    assert result_line(held, strict=True) == (True, "PASS")
    ok, line = result_line([*pairs, (_Spec("x.y"), _Res("violated"))])
    assert not ok and line.startswith("FAIL (a claim is violated") and "1 inconclusive: fednmap.lyapunov" in line


def test_check_has_strict_and_verbose() -> None:
    import argparse

    from fedbounds.checks.commands import check

    p = argparse.ArgumentParser()
    check.configure(p)
    a = p.parse_args(["--strict", "--verbose"])
    assert a.strict and a.verbose


def test_the_compact_report_is_one_line_per_claim_in_80_columns() -> None:
    """format_compact: a header, a rule, one line per claim (id, verdict, scope, slack, tightness), the controls' line
    and the legend, none past 80 columns however long a claim's notes or tightness summary."""
    import numpy as np
    from fedbounds.checks.registry import CheckResult, CheckSpec
    from fedbounds.checks.report.suite import format_compact
    from fedbounds.checks.verdicts.verdict import compare

    pairs = []
    for k in range(3):
        cid = f"fednmap.some.rather.long.claim_id_{k}"
        res = CheckResult(cid, notes=["a very long note " * 20], tightness={"summary": "0.118 at round 5 (loose x8.44; one instance) " * 3})
        res.verdicts.append(compare(cid, "i", np.array([1.0]), 2.0, exact=True))
        res.negatives.append(compare(cid, "ctrl", np.array([3.0]), 2.0, exact=True).with_details(control="bound / 10"))
        pairs.append((CheckSpec(cid, lambda ctx: None, title="t", label="L", status="verbatim"), res))
    lines = format_compact(pairs, 80).splitlines()
    assert max(len(ln) for ln in lines) <= 80
    rows = [ln for ln in lines if ln.lstrip().startswith("fednmap.some")]
    assert len(rows) == 3 and all("holds" in r and "2" in r for r in rows)
    assert "a very long note" not in "\n".join(lines)
