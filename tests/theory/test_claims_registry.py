"""The claim catalogue: ids, provenance, status, dependencies, LaTeX, JSON."""

from __future__ import annotations

import json

import pytest
import sympy as sp
from fedbounds.theory import registry
from fedbounds.theory.core.claims import EVIDENCE_KINDS, Claim, Provenance, Status
from fedbounds.theory.ds_fedproxgrad import PAPER as DS_FEDPROXGRAD
from fedbounds.theory.fednmap import PAPER as FEDNMAP

#: ids other streams use (contracts.md) and ids the brief names
CONTRACT_IDS = [
    "fednmap.theorem8",
    "fednmap.theorem5.conditions",
    "fednmap.nat_nor_relation",
    "fednmap.lyapunov",
    "ds.lemma5_2",
    "ds.theorem5_3",
    "ds.corollary_ii",
    "ds.constant_step_floor",
    "erratum.constant_gamma_floor",
]

#: the findings, by the claim each corrects or comments on, and the status each has (docs/provenance.md §1.4-§1.5):
#: erratum = false as printed or needs an unstated condition; remark = true but notable
REQUIRED_FINDINGS = {
    "erratum.ds_lower_bound_unstated": ("ds.theorem5_3", "erratum"),
    "erratum.ds_phi_prefix": ("ds.lemma5_2", "erratum"),
    "erratum.ds_schedule_at_zero": ("ds.corollary_i", "erratum"),
    "erratum.fednmap_delta_f": ("fednmap.theorem5.complexity", "erratum"),
    "erratum.fednmap_complexity_rho": ("fednmap.theorem5.complexity", "erratum"),
    "erratum.ds_weak_convexity_unused": ("ds.assumption.weak_convexity", "remark"),
    "erratum.ds_mu_r_unspecified": ("ds.assumption.strong_convexity", "remark"),
    "erratum.fednmap_pl_complexity": ("fednmap.theorem8.complexity", "remark"),
    "erratum.fednmap_theorem8_m_coupling": ("fednmap.theorem8", "remark"),
    "erratum.fednmap_sum_index": ("fednmap.compact_form", "remark"),
    "erratum.ds_inexactness_gradient_step": ("ds.assumption.inexactness", "remark"),
    "erratum.ds_inexactness_relative": ("ds.assumption.inexactness", "remark"),
    "erratum.constant_gamma_floor": ("ds.assumption.inexactness", "remark"),
    "erratum.ds_loose_19": ("ds.coefficient20", "remark"),
    "erratum.ds_corollary_ii_horizon": ("ds.corollary_ii.rate", "remark"),
    "erratum.ds_lemma_a1_unused": ("ds.lemma_a1", "remark"),
    "ds.pep.lemma5_2": ("ds.lemma5_2", "remark"),
    "ds.pep.absorption": ("ds.absorption", "remark"),
    "ds.spep.sigma2": ("ds.lemma5_2", "remark"),
    "ds.spep.G2": ("ds.lemma5_2", "remark"),
    "fednmap.pep.largest_step": ("fednmap.theorem5.conditions", "remark"),
    "fednmap.spep.constant_36": ("fednmap.theorem8", "remark"),
    "fednmap.spep.constant_12100": ("fednmap.theorem8", "remark"),
}

CLAIMS = registry.all_claims()


def test_ids_unique_and_contract_ids_present() -> None:
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids))
    for cid in CONTRACT_IDS:
        assert registry.get_claim(cid).id == cid


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_claim_is_well_formed(claim: Claim) -> None:
    assert claim.provenance.paper in (FEDNMAP, DS_FEDPROXGRAD)
    assert claim.provenance.label and claim.provenance.source
    assert isinstance(claim.status, Status)
    assert claim.id.split(".")[0] in ("fednmap", "ds", "erratum")
    ids = {c.id for c in CLAIMS}
    for dep in claim.depends_on:
        assert dep in ids, f"{claim.id} depends on unknown {dep}"
        assert dep != claim.id
    for h in claim.hypotheses:
        assert isinstance(h, sp.Basic) and h not in (sp.true, sp.false), f"{claim.id}: hypothesis {h} evaluated away"
    assert set(claim.evidence_kinds) <= set(EVIDENCE_KINDS)
    tex = claim.latex()
    assert tex and "None" not in tex
    assert tex.count("{") == tex.count("}"), f"{claim.id}: unbalanced braces in {tex}"
    json.dumps(claim.to_dict())


@pytest.mark.parametrize(("eid", "corrects", "status"), sorted((k, *v) for k, v in REQUIRED_FINDINGS.items()))
def test_required_findings(eid: str, corrects: str, status: str) -> None:
    e = registry.get_claim(eid)
    assert e.status is Status(status)
    assert corrects in e.depends_on
    if not e.proof:  # numeric evidence without a proof step must be reproduced at every run by a check of that id
        from fedbounds.checks.registry import get_check

        assert e.evidence_kinds == ("numeric",) and get_check(eid).erratum, (
            f"{eid}: a finding carries a proof step, a counterexample step, or a check that reproduces its numbers")
    assert e.evidence and e.evidence_kinds
    for kind in e.evidence_kinds:
        assert e.evidence.count(kind + ":") >= 1, f"{eid}: evidence text does not say what its {kind} evidence is"


def test_every_finding_is_listed() -> None:
    found = {c.id for s in ("erratum", "remark") for c in registry.claims_by_status(s)}
    assert found == set(REQUIRED_FINDINGS)


def test_errata_have_a_counterexample_or_a_proof() -> None:
    for e in registry.claims_by_status("erratum"):
        assert {"counterexample", "sympy"} & set(e.evidence_kinds), f"{e.id}: an erratum needs a counterexample or a proof"


def test_hypotheses_status() -> None:
    t8 = registry.get_claim("fednmap.theorem8")
    assert t8.status is Status.VERBATIM and t8.hypotheses_status is Status.RECONSTRUCTED
    assert r"\text{[reconstructed]}" in t8.latex() and t8.to_dict()["hypotheses_status"] == "reconstructed"
    t5 = registry.get_claim("fednmap.theorem5.bound")
    assert t5.status is Status.RECONSTRUCTED and t5.hypotheses_status is Status.VERBATIM and r"\text{[verbatim]}" in t5.latex()
    lemma = registry.get_claim("ds.lemma5_2")
    assert lemma.hypotheses_status is Status.VERBATIM and r"\underbrace" not in lemma.latex()


def test_errata_correct_non_errata() -> None:
    for e in [*registry.claims_by_status("erratum"), *registry.claims_by_status("remark")]:
        assert all(not d.startswith("erratum.") for d in e.depends_on)
        assert e.paper == registry.get_claim(e.depends_on[0]).paper


def test_numeric_evidence_points_to_the_checks() -> None:
    e = registry.get_claim("erratum.constant_gamma_floor")
    assert "numeric: see checks claim erratum.constant_gamma_floor" in e.evidence


def test_get_claim_unknown_lists_ids() -> None:
    with pytest.raises(ValueError, match=r"valid ids: .*fednmap\.theorem8"):
        registry.get_claim("fednmap.theorem9")


@pytest.mark.slow  # 10 s at load 5-7 (pytest --durations, 2026-12-04)
def test_by_paper_and_status() -> None:
    fed = registry.claims_by_paper("fednmap")
    ds = registry.claims_by_paper("ds")
    assert len(fed) + len(ds) == len(CLAIMS)
    assert all(c.paper == "fednmap" for c in fed) and all(c.paper == "ds" for c in ds)
    assert registry.claims_by_paper(FEDNMAP) == fed
    with pytest.raises(ValueError, match="fednmap"):
        registry.claims_by_paper("fedavg")
    by_status = sum(len(registry.claims_by_status(s)) for s in Status)
    assert by_status == len(CLAIMS)
    with pytest.raises(ValueError, match="verbatim"):
        registry.claims_by_status("proved")
    for s in Status:
        assert registry.claims_by_status(s), f"no claim with status {s}"


def test_claim_validation() -> None:
    prov = Provenance(FEDNMAP, "Theorem 8")
    with pytest.raises(ValueError, match="proof"):
        Claim("x.y", "t", prov, Status.DERIVED, "q", sp.S.One)
    with pytest.raises(ValueError, match="reaches"):
        Claim("x.y", "t", prov, Status.DERIVED, "q", sp.S.One, proof=("ds_eq21",))
    with pytest.raises(ValueError, match="not in its proof"):
        Claim("x.y", "t", prov, Status.DERIVED, "q", sp.S.One, proof=("ds_eq21",), reaches=(("ds_eq13", "printed", "conclusion"),))
    with pytest.raises(ValueError, match="evidence"):
        Claim("erratum.x", "t", prov, Status.REMARK, "q", sp.S.One, depends_on=("fednmap.theorem8",))
    with pytest.raises(ValueError, match="evidence"):
        Claim("erratum.x", "t", prov, Status.ERRATUM, "q", sp.S.One, depends_on=("fednmap.theorem8",))
    with pytest.raises(ValueError, match="label"):
        Claim("x.y", "t", Provenance(FEDNMAP, ""), Status.VERBATIM, "q", sp.S.One)
    with pytest.raises(ValueError, match="evidence kinds"):
        Claim("x.y", "t", prov, Status.VERBATIM, "q", sp.S.One, evidence_kinds=("vibes",))
    c = Claim("x.y", "t", prov, "verbatim", "E[psi]_T & 50%", sp.Symbol("a"), relation="O~")
    assert c.status is Status.VERBATIM
    assert r"\tilde{\mathcal{O}}" in c.latex() and r"\_" in c.latex() and r"\&" in c.latex() and r"\%" in c.latex()


def test_statuses_match_the_sources() -> None:
    """Spot checks against the notes' tags: [V] verbatim, [D] derived, [I] reconstructed."""
    assert registry.get_claim("fednmap.theorem8").status is Status.VERBATIM
    assert registry.get_claim("fednmap.eta_hat").status is Status.RECONSTRUCTED
    assert registry.get_claim("fednmap.lyapunov").status is Status.RECONSTRUCTED
    assert registry.get_claim("fednmap.nat_nor_relation").status is Status.DERIVED
    assert registry.get_claim("fednmap.theorem5.conditions").status is Status.VERBATIM
    assert registry.get_claim("ds.corollary_ii").status is Status.DERIVED
    assert registry.get_claim("ds.constant_step_floor").status is Status.DERIVED
    assert registry.get_claim("ds.lemma5_2").status is Status.VERBATIM
    t8 = registry.get_claim("fednmap.theorem8")
    assert {s.name for s in t8.unknowns} == {"C_0", "E[L_0]"}
