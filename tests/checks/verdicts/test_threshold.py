"""Three-valued threshold searches: an undecided probe is never counted as failing (checks/verdicts/threshold.py)."""

from __future__ import annotations

import pytest
from fedbounds.checks.verdicts.threshold import (
    FAILS,
    MEETS,
    UNKNOWN,
    Window,
    largest_meeting,
    nested_consistent,
    smallest_meeting,
)

GRID = [0.0] + [2.0 ** (k / 2) / 64 for k in range(0, 24)]


def smallest_probe(threshold: float, unknown: tuple[float, float] = (0.0, 0.0)):
    """MEETS at and above ``threshold``, UNKNOWN inside the open interval ``unknown``, FAILS elsewhere below."""
    a, b = unknown

    def probe(x: float) -> str:
        if a < x < b:
            return UNKNOWN
        return MEETS if x >= threshold else FAILS

    return probe


def test_smallest_meeting_brackets_the_threshold():
    w = smallest_meeting(smallest_probe(0.128), GRID, rel_tol=0.01)
    assert w.low < 0.128 <= w.high
    assert w.high - w.low <= 0.01 * w.high + 1e-12
    assert w.unknown == ()


def test_smallest_meeting_unknown_below_the_threshold_is_not_a_failure():
    # solvers undecided on (0.1, 0.2), threshold 0.128 inside it: the old search counted the unknown probes as
    # failing and returned a threshold above 0.2 (the bias of the committed SMALLEST_C0 table)
    w = smallest_meeting(smallest_probe(0.128, unknown=(0.1, 0.2)), GRID, rel_tol=0.01)
    assert w.high is not None and w.low is not None
    assert w.low <= 0.128 <= w.high  # the window still contains the true threshold
    assert w.low <= 0.1  # nothing undecided was used as a failing end
    assert w.unknown  # and the undecided probes are reported


def test_smallest_meeting_no_meeting_probe():
    w = smallest_meeting(lambda x: FAILS, GRID)
    assert w.high is None and w.low == GRID[-1]


def test_smallest_meeting_everything_undecided():
    w = smallest_meeting(lambda x: UNKNOWN, GRID)
    assert w.low is None and w.high is None and len(w.unknown) == len(GRID)


def largest_probe(threshold: float, unknown: tuple[float, float] = (0.0, 0.0)):
    a, b = unknown

    def probe(x: float) -> str:
        if a < x < b:
            return UNKNOWN
        return MEETS if x <= threshold else FAILS

    return probe


def test_largest_meeting_doubling_brackets():
    w = largest_meeting(largest_probe(195.0), 16.0, 4096.0, rel_tol=0.05)
    assert w.low <= 195.0 < w.high and w.high - w.low <= 0.05 * w.high


def test_largest_meeting_unknown_probe_is_not_a_failure():
    # an undecided probe at 32 (between start 16 and the threshold 195): the old search stopped there
    w = largest_meeting(largest_probe(195.0, unknown=(31.0, 33.0)), 16.0, 4096.0, rel_tol=0.05)
    assert w.low is not None and w.low > 150.0
    assert 32.0 in w.unknown


def test_largest_meeting_bisection_mode_unknown_midpoint():
    # absorbed gamma: bisection on [0, 4]; the midpoint 2 is undecided, the threshold is 2.05
    w = largest_meeting(largest_probe(2.05, unknown=(1.9, 2.1)), 0.0, 4.0, rel_tol=1e-3, abs_tol=1e-3,
                        bisect_from_start=True)
    assert w.low is not None and w.high is not None
    assert w.low <= 2.05 <= w.high
    assert w.high > 2.05  # the undecided 2 never became a failing end


def test_largest_meeting_start_not_met():
    assert largest_meeting(largest_probe(1.0), 16.0, 64.0) == Window(None, None, ((16.0, FAILS),))


def test_bad_probe_answer():
    with pytest.raises(ValueError, match="one of"):
        smallest_meeting(lambda x: "false", GRID)


def test_nested_consistency():
    n1, n2 = Window(0.20, 0.224), Window(0.12, 0.128)
    # n = 2 contains n = 1: its smallest C_0 cannot be below n = 1's
    assert not nested_consistent(n1, n2, "smallest")
    assert nested_consistent(Window(0.10, 0.128), n2, "smallest")
    # largest step: n = 2's cannot exceed n = 1's
    assert not nested_consistent(Window(180.0, 192.0), Window(200.0, 210.0), "largest")
    assert nested_consistent(Window(180.0, 200.0), Window(190.0, 210.0), "largest")
    assert nested_consistent(Window(None, 0.1), Window(0.3, None), "smallest")


def test_counting_unknown_as_failure_is_the_bias():
    # the control of the test above: the same probe with "unknown" read as "fails" (the old search) misses the
    # threshold, so the assertion there can fail
    biased = smallest_probe(0.128, unknown=(0.1, 0.2))
    w = smallest_meeting(lambda x: FAILS if biased(x) == UNKNOWN else biased(x), GRID, rel_tol=0.01)
    assert w.low > 0.128
