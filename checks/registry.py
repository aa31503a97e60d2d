"""The catalogue of checks: check id -> the function that runs it, with the claim's provenance.

A check id equals the id of the claim it tests in :mod:`fedbounds.theory.registry` where that claim exists (paper
label and status are then read from there, so the table shows the theory layer's provenance); otherwise
the spec's own ``label`` / ``status`` are used. Check modules register themselves with :func:`register`;
:func:`all_checks` imports them on first use.

Each check returns a :class:`CheckResult`: its verdicts (one per instance or sub-claim), its negative
controls (each must come out ``violated``; design.md, principle 3), tightness figures, and plots.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from fedbounds.checks.runtime.profiles import Profile
from fedbounds.checks.verdicts.scope import Scope, scope_of, scoped_verdict
from fedbounds.checks.verdicts.verdict import HOLDS, VIOLATED, Verdict, combine, to_json_safe, worst_slack

__all__ = [
    "CheckContext",
    "CheckResult",
    "CheckSpec",
    "Curve",
    "Plot",
    "all_checks",
    "get_check",
    "register",
    "register_paper",
    "select_checks",
]

#: the papers, one package each, in table order; each package's ``MODULES`` names the modules (relative to
#: it) whose import registers its checks. :func:`register_paper` adds one at run time (docs/adding-a-paper.md).
PAPER_PACKAGES: list[str] = [
    "fedbounds.checks.fednmap",
    "fedbounds.checks.ds_fedproxgrad",
]


@dataclass
class Curve:
    """One line of a plot: ``y`` against ``x`` with an optional confidence band; ``role`` is
    ``observed``, ``bound`` or ``negative`` (a negative control) and sets the style."""

    label: str
    x: list[float]
    y: list[float]
    low: list[float] | None = None
    high: list[float] | None = None
    role: str = "observed"


@dataclass
class Plot:
    """A figure: trajectories against the claimed bound."""

    name: str
    title: str
    xlabel: str
    ylabel: str
    curves: list[Curve] = field(default_factory=list)
    logx: bool = False
    logy: bool = True


@dataclass(frozen=True)
class CheckContext:
    """What a check gets: the budget, the base seed, and a callback for progress messages."""

    profile: Profile
    seed: int = 0
    tick: Callable[[str], None] = lambda msg: None


@dataclass
class CheckResult:
    """The outcome of one check: verdicts, negative controls, tightness, plots, notes, and the verdicts' scope
    (:mod:`fedbounds.checks.verdicts.scope`: computed from the claim's hypotheses at each verdict's ``details["at"]``;
    ``scope`` set by a check overrides the computation, ``scope_caveat`` adds what else limits the evidence,
    ``scope_tag`` says the same in a word or two for the table)."""

    check_id: str
    verdicts: list[Verdict] = field(default_factory=list)
    negatives: list[Verdict] = field(default_factory=list)
    tightness: dict = field(default_factory=dict)
    plots: list[Plot] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    error: str | None = None
    scope: Scope | None = None
    scope_caveat: str = ""
    scope_tag: str = ""
    cpu: float = 0.0  # CPU seconds of the process that ran it (benchmarks/bench_quick_check.py, the cost table)

    @property
    def verdict(self) -> str:
        """Overall verdict ("error" when the check could not run)."""
        return "error" if self.error else combine(self.verdicts)

    def scope_info(self) -> Scope:
        """The verdicts' scope (inside the hypotheses, certified, outside both with the factors, or unstated)."""
        return scope_of(self.check_id, self.verdicts, given=self.scope, caveat=self.scope_caveat, tag=self.scope_tag)

    @property
    def verdict_shown(self) -> str:
        """The verdict as printed: starred (``holds*``) when the evidence lies only outside the hypotheses."""
        return self.verdict if self.error else scoped_verdict(self.verdict, self.scope_info())

    @property
    def worst_slack(self) -> float:
        return worst_slack(self.verdicts)

    @property
    def negatives_ok(self) -> bool:
        """Every negative control came out violated (vacuously true without controls)."""
        return all(v.status == VIOLATED for v in self.negatives)

    @property
    def instances(self) -> list[str]:
        return sorted({v.instance for v in self.verdicts})

    def to_dict(self) -> dict:
        scope = self.scope_info()
        return to_json_safe(
            {
                "check_id": self.check_id,
                "verdict": self.verdict,
                "verdict_shown": self.verdict if self.error else scoped_verdict(self.verdict, scope),
                "scope": scope.to_dict(),
                "worst_slack": self.worst_slack,
                "negatives_ok": self.negatives_ok,
                "verdicts": [v.to_dict() for v in self.verdicts],
                "negatives": [v.to_dict() for v in self.negatives],
                "tightness": self.tightness,
                "notes": self.notes,
                "elapsed_s": self.elapsed,
                "cpu_s": self.cpu,
                "error": self.error,
                "plots": [asdict(p) for p in self.plots],
            }
        )  # type: ignore[return-value]


@dataclass(frozen=True)
class CheckSpec:
    """A registered check. ``erratum``: the check demonstrates an erratum; ``expect`` is then the verdict that
    the erratum's evidence predicts (``violated`` where the check runs the printed claim and it fails,
    ``holds`` where it runs the corrected statement), and any other verdict fails the suite."""

    check_id: str
    func: Callable[[CheckContext], CheckResult]
    title: str
    label: str
    status: str
    erratum: bool = False
    family: str = ""
    expect: str | None = None

    def __post_init__(self) -> None:
        if self.erratum and self.expect not in (str(HOLDS), str(VIOLATED)):
            raise ValueError(f"erratum check {self.check_id} must declare expect='holds' or 'violated', got {self.expect!r}")
        if not self.erratum and self.expect is not None:
            raise ValueError(f"check {self.check_id}: only erratum checks declare an expected verdict")

    def provenance(self) -> tuple[str, str]:
        """(paper label, status) from the theory registry where it knows this id, else the spec's own."""
        try:
            reg = importlib.import_module("fedbounds.theory.registry")
            claim = reg.get_claim(self.check_id)
        except (ImportError, ValueError, KeyError, AttributeError):
            return self.label, self.status
        return str(claim.provenance.label), str(claim.status)

    def accepts(self, result: CheckResult) -> bool:
        """Whether the result lets the suite pass: no error, negative controls violated, and the verdict the
        erratum's evidence predicts (an erratum check) or no violated verdict (any other check)."""
        if result.error or not result.negatives_ok:
            return False
        if self.erratum:
            return result.verdict == self.expect
        return result.verdict != str(VIOLATED)


_CHECKS: dict[str, CheckSpec] = {}
_LOADED = False


def register(
    check_id: str, *, title: str, label: str, status: str, erratum: bool = False, family: str = "", expect: str | None = None
) -> Callable[[Callable[[CheckContext], CheckResult]], Callable[[CheckContext], CheckResult]]:
    """Decorator registering ``func(ctx) -> CheckResult`` under ``check_id`` (``expect``: see :class:`CheckSpec`)."""

    def deco(func: Callable[[CheckContext], CheckResult]) -> Callable[[CheckContext], CheckResult]:
        _CHECKS[check_id] = CheckSpec(check_id, func, title, label, status, erratum, family or check_id.split(".")[0], expect)
        return func

    return deco


def _discover() -> None:
    """Papers installed from outside (the ``fedbounds.papers`` entry points, :func:`fedbounds.theory.registry.discover_papers`):
    each one's ``CHECKS`` package joins :data:`PAPER_PACKAGES`."""
    global _LOADED
    from fedbounds.theory.registry import discover_papers

    for root in discover_papers().values():
        package = getattr(root, "CHECKS", None)
        if package and package not in PAPER_PACKAGES:
            PAPER_PACKAGES.append(package)
            _LOADED = False


def _load() -> None:
    global _LOADED
    _discover()
    if _LOADED:
        return
    for package in PAPER_PACKAGES:
        for module in importlib.import_module(package).MODULES:
            importlib.import_module(f"{package}.{module}")
    _LOADED = True


def register_paper(package: str) -> None:
    """Add a paper's checks package (its ``MODULES`` register the checks on import)."""
    global _LOADED
    if package not in PAPER_PACKAGES:
        PAPER_PACKAGES.append(package)
        _LOADED = False


def all_checks() -> list[CheckSpec]:
    """Every registered check, in registration order."""
    _load()
    return list(_CHECKS.values())


def get_check(check_id: str) -> CheckSpec:
    """The check ``check_id``; a ValueError lists the known ids."""
    _load()
    try:
        return _CHECKS[check_id]
    except KeyError:
        raise ValueError(f"unknown claim {check_id!r}; known ids: {', '.join(_CHECKS)}") from None


def select_checks(claims: list[str] | None) -> list[CheckSpec]:
    """The checks named in ``claims`` (an id, or a family prefix such as ``ds``); all when ``None``."""
    specs = all_checks()
    if not claims:
        return specs
    out: list[CheckSpec] = []
    for c in claims:
        hit = [s for s in specs if s.check_id == c] or [s for s in specs if s.check_id.startswith(c + ".")]
        if not hit:
            raise ValueError(f"unknown claim {c!r}; known ids: {', '.join(s.check_id for s in specs)}")
        out.extend(s for s in hit if s not in out)
    return out
