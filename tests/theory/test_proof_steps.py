"""Every proof step of fedbounds.theory.core.proofs is decided by sympy (identities simplify to 0, inequalities reduce to a
sign sympy decides under positive symbols), and every claim that cites a step is backed by it."""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.theory.core import proofs
from fedbounds.theory.core.claims import Status
from fedbounds.theory.registry import all_claims


@pytest.mark.parametrize("name", sorted(proofs.steps()))
def test_step_is_proved(name: str) -> None:
    result = proofs.steps()[name]()
    assert result.parts, f"{name} has no parts"
    failed = [(p.name, p.residual) for p in result.failed()]
    assert result.proved, f"{name}: not proved: {failed}"


def test_every_step_is_cited_by_a_claim() -> None:
    cited = {p for c in all_claims() for p in c.proof}
    assert set(proofs.steps()) <= cited, f"uncited steps: {sorted(set(proofs.steps()) - cited)}"


@pytest.mark.parametrize("claim", [c for c in all_claims() if c.status is Status.DERIVED], ids=lambda c: c.id)
def test_derived_claims_name_existing_steps(claim) -> None:
    assert claim.proof, f"derived claim {claim.id} names no proof"
    for name in claim.proof:
        assert name in proofs.steps(), f"{claim.id}: unknown proof step {name}"


def test_run_step_unknown_name() -> None:
    with pytest.raises(ValueError, match="ds_eq21"):
        proofs.run_step("no_such_step")


def test_deciders_are_not_vacuous() -> None:
    x = sp.Symbol("x", real=True)
    p = sp.Symbol("p", positive=True)
    assert proofs.decide_zero(sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1)[0]
    assert not proofs.decide_zero(x - p)[0]
    assert proofs.decide_nonnegative((x - p) ** 2)[0]
    assert not proofs.decide_nonnegative(x)[0]
    assert not proofs.decide_nonnegative(p - 1)[0]
    assert proofs.decide_nonnegative(p / (1 + p))[0]
    assert proofs.decide_psd(x**2 - x * p + p**2, (x, p))[0]
    assert not proofs.decide_psd(x**2 - 3 * x * p + p**2, (x, p))[0]
    assert not proofs.decide_psd(x**3, (x,))[0]  # not a quadratic form


def test_counterexample_is_none_for_a_proved_step() -> None:
    assert proofs.counterexample(proofs.steps()["ds_eq21"]()) is None
