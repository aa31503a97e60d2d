"""The catalogue of claims: both papers and the errata, looked up by id.

Ids look like ``fednmap.theorem8``, ``fednmap.theorem5.conditions``, ``ds.lemma5_2``, ``erratum.<name>``.
"""

from __future__ import annotations

from functools import lru_cache

from fedbounds.theory.core.claims import PAPERS, Claim, Status

__all__ = ["all_claims", "claims_by_paper", "claims_by_status", "get_claim"]


@lru_cache(maxsize=1)
def _catalogue() -> tuple[Claim, ...]:
    from fedbounds.theory import errata
    from fedbounds.theory.ds_fedproxgrad import claims as ds_fedproxgrad
    from fedbounds.theory.fednmap import claims as fednmap

    claims = (*fednmap.CLAIMS, *ds_fedproxgrad.CLAIMS, *errata.CLAIMS)
    seen: set[str] = set()
    for claim in claims:
        if claim.id in seen:
            raise RuntimeError(f"duplicate claim id {claim.id}")
        seen.add(claim.id)
    return claims


def all_claims() -> list[Claim]:
    """Every claim: FedNMap's, DS FedProxGrad's, then the errata."""
    return list(_catalogue())


def get_claim(claim_id: str) -> Claim:
    """The claim with this id; ValueError listing the valid ids otherwise."""
    for claim in _catalogue():
        if claim.id == claim_id:
            return claim
    raise ValueError(f"unknown claim id {claim_id!r}; valid ids: {', '.join(c.id for c in _catalogue())}")


def claims_by_paper(paper: str) -> list[Claim]:
    """The claims of one paper (``fednmap`` or ``ds``, or the paper's full name), errata included."""
    full = PAPERS.get(paper, paper)
    if full not in PAPERS.values():
        raise ValueError(f"unknown paper {paper!r}; use one of {', '.join(PAPERS)}")
    return [c for c in _catalogue() if c.provenance.paper == full]


def claims_by_status(status: str | Status) -> list[Claim]:
    """The claims with this status (verbatim, derived, reconstructed, erratum)."""
    try:
        wanted = Status(status)
    except ValueError:
        raise ValueError(f"unknown status {status!r}; use one of {', '.join(s.value for s in Status)}") from None
    return [c for c in _catalogue() if c.status is wanted]
