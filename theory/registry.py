"""The catalogue of the papers and their claims, looked up by id.

One line per paper in :data:`PAPER_PACKAGES`: the package's ``KEY`` and ``PAPER`` name it, its ``claims`` and
``errata`` modules hold ``CLAIMS``, and importing its ``proofs`` module registers its sympy proof steps.
:func:`register_paper` adds a package at run time (docs/adding-a-paper.md).

Ids look like ``fednmap.theorem8``, ``fednmap.theorem5.conditions``, ``ds.lemma5_2``, ``erratum.<name>``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from fedbounds.theory.core.claims import PAPERS, Claim, Status

__all__ = [
    "ENTRY_POINT_GROUP",
    "PAPER_PACKAGES",
    "all_claims",
    "claims_by_paper",
    "claims_by_status",
    "discover_papers",
    "get_claim",
    "load_papers",
    "register_paper",
]

#: the papers, one package each, in catalogue order
PAPER_PACKAGES: list[str] = [
    "fedbounds.theory.fednmap",
    "fedbounds.theory.ds_fedproxgrad",
]

#: the entry-point group through which an installed package adds a paper (docs/adding-a-paper.md): the entry
#: point names the paper's root package, whose ``THEORY`` and ``CHECKS`` name its theory and checks packages
ENTRY_POINT_GROUP = "fedbounds.papers"

_loaded: dict[str, ModuleType] = {}
_discovered: dict[str, ModuleType] = {}


def discover_papers() -> dict[str, ModuleType]:
    """The papers installed from outside (entry points in :data:`ENTRY_POINT_GROUP`), loaded once: each one's
    theory package joins :data:`PAPER_PACKAGES` (its checks package joins the checks registry's, which calls this
    too). A plugin that cannot be loaded is named in one line (ValueError)."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _discovered:
            continue
        try:
            root = ep.load()
        except Exception as exc:
            raise ValueError(f"paper {ep.name!r} ({ENTRY_POINT_GROUP} entry point {ep.value!r}) cannot be loaded: {exc}") from None
        _discovered[ep.name] = root
        theory = getattr(root, "THEORY", None)
        if theory and theory not in PAPER_PACKAGES:
            PAPER_PACKAGES.append(theory)
            _catalogue_cache.clear()
    return dict(_discovered)
_catalogue_cache: list[tuple[Claim, ...]] = []


def _optional(package: str, module: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"{package}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.{module}":
            raise
        return None


def load_papers() -> dict[str, ModuleType]:
    """Import every registered paper package (its key and name go into ``PAPERS``) and its proof steps: the built-in
    ones, those added by :func:`register_paper` and those installed through :data:`ENTRY_POINT_GROUP`."""
    discover_papers()
    for package in PAPER_PACKAGES:
        if package in _loaded:
            continue
        module = importlib.import_module(package)
        PAPERS[module.KEY] = module.PAPER
        _loaded[package] = module
        _optional(package, "proofs")
    return dict(_loaded)


def register_paper(package: str) -> None:
    """Add a paper package (``KEY``, ``PAPER``, ``claims.CLAIMS``; optional ``errata`` and ``proofs``)."""
    if package not in PAPER_PACKAGES:
        PAPER_PACKAGES.append(package)
        _catalogue_cache.clear()
    load_papers()


def _catalogue() -> tuple[Claim, ...]:
    discover_papers()
    if _catalogue_cache:
        return _catalogue_cache[0]
    load_papers()
    modules = [_optional(pkg, name) for name in ("claims", "stochastic_claims", "errata") for pkg in PAPER_PACKAGES]
    claims = tuple(c for mod in modules if mod is not None for c in mod.CLAIMS)
    seen: set[str] = set()
    for claim in claims:
        if claim.id in seen:
            raise RuntimeError(f"duplicate claim id {claim.id}")
        seen.add(claim.id)
    _catalogue_cache.append(claims)
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
    load_papers()
    full = PAPERS.get(paper, paper)
    if full not in PAPERS.values():
        raise ValueError(f"unknown paper {paper!r}; use one of {', '.join(PAPERS)}")
    return [c for c in _catalogue() if c.provenance.paper == full]


def claims_by_status(status: str | Status) -> list[Claim]:
    """The claims with this status (verbatim, derived, reconstructed, erratum, remark)."""
    try:
        wanted = Status(status)
    except ValueError:
        raise ValueError(f"unknown status {status!r}; use one of {', '.join(s.value for s in Status)}") from None
    return [c for c in _catalogue() if c.status is wanted]
