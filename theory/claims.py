"""The claim type: a paper's statement as sympy, with its provenance and status.

Status (design.md, principle 2):

* ``verbatim``: as printed in the paper;
* ``derived``: we proved it; the proof is a test or a notebook;
* ``reconstructed``: the printed text is lost; this is our reading;
* ``erratum``: the printed claim is wrong or needs an unstated condition; ``evidence`` says how we know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import sympy as sp

FEDNMAP = "FedNMap (Huang, Pu, Johansson), arXiv 2602.03357"
DS_FEDPROXGRAD = "DS FedProxGrad (Arif), arXiv 2512.08671"


class Status(StrEnum):
    VERBATIM = "verbatim"
    DERIVED = "derived"
    RECONSTRUCTED = "reconstructed"
    ERRATUM = "erratum"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Provenance:
    """Where a claim comes from: the paper, its label there, and the note that reconstructs it."""

    paper: str
    label: str
    source: str = ""
    note: str = ""


@dataclass(frozen=True)
class Claim:
    """A statement of a paper.

    ``hypotheses`` are sympy relations (step-size conditions, assumptions on constants); ``quantity``
    names what the ``conclusion`` bounds (for example ``"E[psi(x_T)] - psi*"``), and ``relation`` says
    how (``"<="`` for an upper bound, ``"=="`` for an identity, ``"->"`` for a limit, ``"O"`` for a rate
    known only up to constants). ``depends_on`` lists the ids of the claims it uses.
    """

    id: str
    title: str
    provenance: Provenance
    status: Status
    quantity: str
    conclusion: sp.Expr | sp.Basic | None
    relation: str = "<="
    hypotheses: tuple[sp.Basic, ...] = ()
    depends_on: tuple[str, ...] = ()
    unknowns: tuple[sp.Symbol, ...] = ()
    evidence: str = ""
    statement: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def free_symbols(self) -> set[sp.Symbol]:
        syms: set[sp.Symbol] = set()
        if self.conclusion is not None:
            syms |= self.conclusion.free_symbols
        for h in self.hypotheses:
            syms |= h.free_symbols
        return syms

    def latex(self) -> str:
        """The claim as LaTeX: hypotheses, then the conclusion."""
        parts = [sp.latex(h) for h in self.hypotheses]
        hyp = r",\quad ".join(parts)
        if self.conclusion is None:
            concl = r"\text{" + self.quantity + "}"
        elif self.relation == "O":
            concl = r"\text{" + self.quantity + r"} = \mathcal{O}\!\left(" + sp.latex(self.conclusion) + r"\right)"
        else:
            rel = {"<=": r"\le", "==": "=", ">=": r"\ge", "->": r"\to"}.get(self.relation, self.relation)
            concl = r"\text{" + self.quantity + "} " + rel + " " + sp.latex(self.conclusion)
        return (hyp + r"\ \Longrightarrow\ " if hyp else "") + concl
