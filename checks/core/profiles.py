"""Budgets of the bound-checking suite: ``quick`` (the default of ``fedbounds check`` and of the test suite,
under 3 minutes on 2 cores) and ``full`` (more replicas, longer horizons, more instances).

A check reads its knobs with :meth:`Profile.get`: the per-check override if there is one, else the
profile-wide default. Everything that changes a number in the report is here, so a report records its
budget by naming its profile.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["FULL", "PROFILES", "QUICK", "Profile", "get_profile"]


@dataclass(frozen=True)
class Profile:
    """A budget: Monte Carlo ``replicas``, confidence ``level``, ``scale`` (multiplies horizons), how many
    seeded ``instances`` per family, and per-check overrides ``per_check[check_id][key]``."""

    name: str
    replicas: int
    level: float = 0.95
    scale: float = 1.0
    instances: int = 1
    per_check: dict[str, dict] = field(default_factory=dict)

    def get(self, check_id: str, key: str, default: object = None) -> object:
        """The override ``per_check[check_id][key]``, else the profile attribute ``key``, else ``default``."""
        over = self.per_check.get(check_id, {})
        if key in over:
            return over[key]
        return getattr(self, key, default)

    def rounds(self, base: int) -> int:
        """A horizon scaled by the profile (at least 1)."""
        return max(1, round(base * self.scale))

    def to_dict(self) -> dict:
        return asdict(self)


QUICK = Profile(name="quick", replicas=32, level=0.95, scale=1.0, instances=1)
FULL = Profile(name="full", replicas=128, level=0.95, scale=3.0, instances=3)

PROFILES: dict[str, Profile] = {p.name: p for p in (QUICK, FULL)}


def get_profile(name: str) -> Profile:
    """The profile called ``name``; a ValueError lists the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}") from None
