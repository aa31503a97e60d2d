"""The claim type: a paper's statement as sympy, with its provenance and status.

Status (design.md, principle 2):

* ``verbatim``: as printed in the paper;
* ``derived``: we proved it; the proof is a step of :mod:`fedbounds.theory.core.proofs` (named in ``proof``) checked by a test;
* ``reconstructed``: the printed text is lost; this is our reading;
* ``erratum``: the printed claim is wrong or needs an unstated condition; ``evidence`` says how we know, and
  ``depends_on`` names the claim it corrects.

Evidence kinds (``evidence_kinds``): ``sympy`` (a step of :mod:`fedbounds.theory.core.proofs` decides it), ``counterexample``
(an explicit instance, computed with sympy), ``numeric`` (a run of the algorithms, produced by the checks),
``textual`` (a reading of the printed text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import sympy as sp

#: short paper keys (the ``--paper`` option of ``fedbounds claims``) -> paper; filled from each paper package's
#: ``KEY`` and ``PAPER`` by :func:`fedbounds.theory.registry.load_papers`
PAPERS: dict[str, str] = {}

EVIDENCE_KINDS = ("sympy", "counterexample", "numeric", "textual")

#: relation -> LaTeX (``O`` and ``O~`` are rates known up to constants / up to constants and logarithms)
_RELATION_LATEX = {"<=": r"\le", "==": "=", ">=": r"\ge", "->": r"\to", "<": "<", ">": ">", "in": r"\in"}


class Status(StrEnum):
    VERBATIM = "verbatim"
    DERIVED = "derived"
    RECONSTRUCTED = "reconstructed"
    ERRATUM = "erratum"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Provenance:
    """Where a claim comes from.

    ``paper``: the paper; ``label``: its label there ("Theorem 8", "Lemma 5.2"); ``source``: the note (file and
    section) that reconstructs or checks it; ``note``: a remark; ``equation``: the display number, e.g. "(22)".
    """

    paper: str
    label: str
    source: str = ""
    note: str = ""
    equation: str = ""

    @property
    def paper_key(self) -> str:
        """``fednmap`` or ``ds`` (the paper's registered key)."""
        from fedbounds.theory.registry import load_papers

        load_papers()
        for key, paper in PAPERS.items():
            if paper == self.paper:
                return key
        return self.paper


@dataclass(frozen=True)
class Claim:
    """A statement of a paper.

    ``hypotheses`` are sympy relations (step-size conditions, assumptions on constants); ``quantity``
    names what the ``conclusion`` bounds (for example ``"E[psi(x_T)] - psi*"``), and ``relation`` says
    how (``"<="`` for an upper bound, ``"=="`` for an identity, ``"->"`` for a limit, ``"O"`` / ``"O~"`` for a
    rate known only up to constants (and logarithms)). ``depends_on`` lists the ids of the claims it uses
    (for an erratum: the claim it corrects). ``unknowns`` are symbols whose values the paper does not give.
    ``proof`` names the steps of :mod:`fedbounds.theory.core.proofs` that prove a derived claim or support an erratum.
    ``extra`` holds further named expressions (lambdify them with :func:`fedbounds.theory.core.evaluate.to_function`).
    ``latex_text`` replaces the generated LaTeX (for statements that are not a formula); ``quantity_latex``
    is the LaTeX of ``quantity``.
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
    proof: tuple[str, ...] = ()
    evidence_kinds: tuple[str, ...] = ()
    latex_text: str = ""
    quantity_latex: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status(self.status))
        if not self.provenance.label:
            raise ValueError(f"claim {self.id}: provenance needs a label")
        bad = [k for k in self.evidence_kinds if k not in EVIDENCE_KINDS]
        if bad:
            raise ValueError(f"claim {self.id}: evidence kinds {bad} not in {EVIDENCE_KINDS}")
        if self.status is Status.ERRATUM and not (self.evidence and self.evidence_kinds and self.depends_on):
            raise ValueError(f"erratum {self.id} needs evidence, evidence_kinds and depends_on (the claim it corrects)")
        if self.status is Status.DERIVED and not self.proof:
            raise ValueError(f"derived claim {self.id} must name its proof steps (fedbounds.theory.core.proofs)")

    @property
    def paper(self) -> str:
        """``fednmap`` or ``ds``."""
        return self.provenance.paper_key

    @property
    def label(self) -> str:
        return self.provenance.label + (f", eq. {self.provenance.equation}" if self.provenance.equation else "")

    @property
    def variables(self) -> tuple[str, ...]:
        """The names of the conclusion's symbols (for an O-expression: the variables it is stated in)."""
        if not isinstance(self.conclusion, sp.Basic):
            return ()
        return tuple(sorted(s.name for s in self.conclusion.free_symbols if isinstance(s, sp.Symbol)))

    @property
    def free_symbols(self) -> set[sp.Symbol]:
        syms: set[sp.Symbol] = set()
        if isinstance(self.conclusion, sp.Basic):
            syms |= self.conclusion.free_symbols
        for h in self.hypotheses:
            syms |= h.free_symbols
        return syms

    def short(self, width: int = 72) -> str:
        """The statement (or the title), cut to ``width`` characters."""
        text = " ".join((self.statement or self.title).split())
        return text if len(text) <= width else text[: width - 3] + "..."

    def latex(self) -> str:
        """The claim as LaTeX: hypotheses, then the conclusion (``latex_text`` when the claim is not a formula)."""
        from fedbounds.theory.core.symbols import LATEX_NAMES

        def tex(expr: sp.Basic) -> str:
            return sp.latex(expr, symbol_names=LATEX_NAMES)

        if self.latex_text:
            return self.latex_text
        parts = [tex(h) for h in self.hypotheses]
        hyp = r",\quad ".join(parts)
        quantity = self.quantity_latex or (r"\text{" + _escape(self.quantity) + "}")
        if self.conclusion is None:
            concl = quantity
        elif self.relation == "O":
            concl = quantity + r" = \mathcal{O}\!\left(" + tex(self.conclusion) + r"\right)"
        elif self.relation == "O~":
            concl = quantity + r" = \tilde{\mathcal{O}}\!\left(" + tex(self.conclusion) + r"\right)"
        else:
            rel = _RELATION_LATEX.get(self.relation, self.relation)
            concl = quantity + " " + rel + " " + tex(self.conclusion)
        return (hyp + r"\ \Longrightarrow\ " if hyp else "") + concl

    def to_dict(self) -> dict:
        """A JSON-ready description (expressions as strings)."""
        return {
            "id": self.id,
            "title": self.title,
            "paper": self.paper,
            "label": self.label,
            "equation": self.provenance.equation,
            "source": self.provenance.source,
            "note": self.provenance.note,
            "status": str(self.status),
            "statement": self.statement,
            "quantity": self.quantity,
            "relation": self.relation,
            "conclusion": None if self.conclusion is None else str(self.conclusion),
            "variables": list(self.variables),
            "hypotheses": [str(h) for h in self.hypotheses],
            "depends_on": list(self.depends_on),
            "unknowns": [s.name for s in self.unknowns],
            "evidence": self.evidence,
            "evidence_kinds": list(self.evidence_kinds),
            "proof": list(self.proof),
            "latex": self.latex(),
            "extra": {k: _jsonable(v) for k, v in self.extra.items()},
        }


_TEXT_ESCAPES = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "_": r"\_", "^": r"\textasciicircum{}", "#": r"\#",
                 "%": r"\%", "&": r"\&", "$": r"\$", "~": r"\textasciitilde{}"}


def _escape(text: str) -> str:
    """``text`` made safe for LaTeX's ``\\text{...}``."""
    return "".join(_TEXT_ESCAPES.get(ch, ch) for ch in text)


def _jsonable(value: object) -> object:
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value)
