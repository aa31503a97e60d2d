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
