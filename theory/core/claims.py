"""The claim type: a paper's statement as sympy, with its provenance and status.

Status (design.md, principle 2):

* ``verbatim``: as printed in the paper;
* ``derived``: we proved it; the proof is a step of :mod:`fedbounds.theory.core.proofs` (named in ``proof``) checked by a test;
* ``reconstructed``: the printed text is lost; this is our reading;
* ``erratum``: the printed claim is false or needs an unstated condition; ``evidence`` (a counterexample or a
  proof) says how we know, and ``depends_on`` names the claim it corrects;
* ``remark``: the printed claim is true but notable (a condition sufficient, not necessary; a loose bound; an
  unused assumption or lemma; a modelling choice); ``evidence`` gives the reason, ``depends_on`` the claim it
  comments on.

Hypotheses carry their own status (``hypotheses_status``, by default the claim's): FedNMap's Theorem 8 is a
verbatim bound under reconstructed hypotheses (docs/provenance.md §2).

A derived claim names in ``reaches`` the proof steps that take its own expression as a keyword argument, so that
tests/theory/test_derived_reach.py can perturb that expression (x2, /2) and watch the proof fail.

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
    REMARK = "remark"

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
    is the LaTeX of ``quantity``. ``hypotheses_status`` is the status of the hypotheses when it differs from the
    claim's (FedNMap's Theorem 8: a verbatim bound under reconstructed conditions); the LaTeX marks them. ``reaches``
    lists ``(step, keyword, expression)``: the proof step ``step`` takes the claim's ``expression`` (``"conclusion"`` or a
    key of ``extra``) as its keyword argument ``keyword``, so a perturbed expression can be fed to the proof.
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
    hypotheses_status: Status | None = None
    reaches: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status(self.status))
        hyp = self.status if self.hypotheses_status is None else Status(self.hypotheses_status)
        object.__setattr__(self, "hypotheses_status", hyp)
        self._check_reaches()
        if not self.provenance.label:
            raise ValueError(f"claim {self.id}: provenance needs a label")
        bad = [k for k in self.evidence_kinds if k not in EVIDENCE_KINDS]
        if bad:
            raise ValueError(f"claim {self.id}: evidence kinds {bad} not in {EVIDENCE_KINDS}")
        if self.status in (Status.ERRATUM, Status.REMARK) and not (self.evidence and self.evidence_kinds and self.depends_on):
            raise ValueError(f"{self.status} {self.id} needs evidence, evidence_kinds and depends_on (the claim it corrects or "
                             "comments on)")
        if self.status is Status.DERIVED and not self.proof:
            raise ValueError(f"derived claim {self.id} must name its proof steps (fedbounds.theory.core.proofs)")
        if self.status is Status.DERIVED and not self.reaches:
            raise ValueError(f"derived claim {self.id} must name in reaches the proof step that takes its own expression")

    def _check_reaches(self) -> None:
        """Each (step, keyword, expression) of ``reaches`` names a step of ``proof`` and an expression the claim holds."""
        for step, keyword, key in self.reaches:
            if step not in self.proof:
                raise ValueError(f"claim {self.id}: reaches names step {step!r}, which is not in its proof {self.proof}")
            if not keyword:
                raise ValueError(f"claim {self.id}: reaches entry for {step!r} needs the keyword that carries the expression")
            if key != "conclusion" and key not in self.extra:
                raise ValueError(f"claim {self.id}: reaches names expression {key!r}, neither 'conclusion' nor a key of extra")

    def expression(self, key: str) -> sp.Basic:
        """The claim's own expression ``key``: ``"conclusion"`` or a key of ``extra``."""
        return self.conclusion if key == "conclusion" else self.extra[key]

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
        from fedbounds.theory.core.printing import latex as tex

        if self.latex_text:
            return self.latex_text
        parts = [tex(h) for h in self.hypotheses]
        hyp = r",\quad ".join(parts)
        if hyp and self.hypotheses_status is not self.status:
            hyp = r"\underbrace{" + hyp + r"}_{\text{[" + str(self.hypotheses_status) + "]}}"
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
            "hypotheses_status": str(self.hypotheses_status),
            "reaches": [list(r) for r in self.reaches],
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
