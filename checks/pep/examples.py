"""What the PEPit-style example functions share (``fedbounds.checks.<paper>.pep.examples``): argument checks that
name the parameter and its allowed range (before any work), the ``verbose`` levels, and the printed guarantees.

``verbose``: -1 prints nothing; 0 the two guarantees, as PEPit's examples print them; 1 also the certificate's
one-line summary (per solver: value, status, duality gap, seconds).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from fedbounds.checks.pep.solve import Certificate

__all__ = ["check_integer", "check_number", "check_verbose", "print_guarantees", "tau"]


def check_number(name: str, value: Any, *, low: float = 0.0, strict: bool = True) -> float:
    """``value`` as a float, or a ValueError naming ``name`` unless it is a finite number > ``low`` (>= if not ``strict``)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (value <= low if strict else value < low):
        raise ValueError(f"{name} must be a finite number {'>' if strict else '>='} {low:g}, got {value!r}")
    return float(value)


def check_integer(name: str, value: Any, low: int = 1) -> int:
    """``value`` as an int, or a ValueError naming ``name`` unless it is an integer >= ``low``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value == int(value)
    if not ok or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_verbose(verbose: Any) -> int:
    """The verbose level, -1, 0 or 1, or a ValueError naming it."""
    if isinstance(verbose, bool) or verbose not in (-1, 0, 1):
        raise ValueError(f"verbose must be -1 (silent), 0 (the guarantees) or 1 (and the solvers), got {verbose!r}")
    return int(verbose)


def tau(cert: Certificate, value: float | None) -> float:
    """``value`` when ``cert`` is certified; inf when every solver says unbounded; nan (unknown) otherwise."""
    if cert.unbounded:
        return math.inf
    return float(value) if cert.certified and value is not None else math.nan


def print_guarantees(verbose: int, title: str, cert: Certificate, pep: str, theory: str) -> None:
    """Print, at ``verbose`` >= 0, the example's title and its two guarantees (PEPit's layout)."""
    if verbose < 0:
        return
    if verbose >= 1:
        print(f"(PEP) {cert.summary()}")
    print(f"*** Example file: {title} ***")
    print(f"\tPEP guarantee ({cert.status}):\t{pep}")
    print(f"\tTheoretical guarantee:\t{theory}")
