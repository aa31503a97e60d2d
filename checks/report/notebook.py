"""Small display helpers shared by the derivation notebooks (``notebooks/``)."""

from __future__ import annotations

from fedbounds.theory.core.proofs import run_step
from fedbounds.theory.registry import get_claim


def show(claim_id: str) -> None:
    """Display a claim of the registry: id, status, the paper's label, and the statement as LaTeX."""
    from IPython.display import Markdown, Math, display

    c = get_claim(claim_id)
    display(Markdown(f"**`{c.id}`** [{c.status}], {c.label}: {c.title}"))
    display(Math(c.latex()))
    if c.provenance.note:
        display(Markdown(f"*note:* {c.provenance.note}"))


def proved(step: str) -> bool:
    """Run a proof step of :mod:`fedbounds.theory.core.proofs`, print each part's outcome, and return whether all hold."""
    res = run_step(step)
    print(f"{step} ({res.label}): " + "; ".join(f"{p.name}: {'ok' if p.proved else 'FAILED'}" for p in res.parts))
    return res.proved
