"""The public Python API validates its arguments up front and names the parameter (issue 24, item 8).

Each case is one the issue's probe found: before the fix it raised a TypeError/AttributeError/IndexError or an
unnamed LinAlgError, or it was accepted silently (``eta_a = True``, complex data). Now each raises
``InvalidParameterError`` (a ValueError and a TypeError, like scikit-learn's) whose one-line message names the
parameter and ``err.parameter`` is that name. tests/test_api_fuzz.py fuzzes the same entry points.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fedbounds.algorithms._validate import InvalidParameterError, check_array, check_integer, check_real
from fedbounds.algorithms.instances import make_instance
from fedbounds.algorithms.instances.least_squares import LeastSquares
from fedbounds.algorithms.instances.logistic import Logistic
from fedbounds.algorithms.oracles import GaussianOracle, make_oracle
from fedbounds.algorithms.regularizers import L1, make_regularizer
from fedbounds.algorithms.rng import stream
from fedbounds.algorithms.run import run

PROBLEM = make_instance("least_squares", n=2, p=3, m=4)
FEDNMAP = {"gamma": 0.1, "eta_a": 0.05, "Q": 2}


def _fednmap(**override: Any) -> Callable[[], Any]:
    return lambda: run("fednmap", PROBLEM, {**FEDNMAP, **override}, rounds=1)


CASES: list[tuple[str, Callable[[], Any], str]] = [
    # empty data: m = 0 was an unnamed LinAlgError, p = 0 an IndexError
    ("A-m-0", lambda: LeastSquares(np.ones((2, 0, 3)), np.ones((2, 0))).solution(), "A"),
    ("A-p-0", lambda: LeastSquares(np.ones((2, 4, 0)), np.ones((2, 4))).solution(), "A"),
    ("logistic-A-m-0", lambda: Logistic(np.ones((2, 0, 3)), np.ones((2, 0))), "A"),
    ("logistic-A-p-0", lambda: Logistic(np.ones((2, 4, 0)), np.ones((2, 4))), "A"),
    # None, bool, complex, strings where a number is expected
    ("eta_a-None", _fednmap(eta_a=None), "eta_a"),
    ("eta_a-True", _fednmap(eta_a=True), "eta_a"),
    ("eta_a-complex", _fednmap(eta_a=0.1 + 1j), "eta_a"),
    ("eta_a-str", _fednmap(eta_a="0.1"), "eta_a"),
    ("Q-None", _fednmap(Q=None), "Q"),
    ("Q-str", _fednmap(Q="2"), "Q"),
    ("z0-complex", _fednmap(z0=np.ones(3) * 1j), "z0"),
    ("c0-complex", _fednmap(c0=np.ones((2, 3)) * 1j), "c0"),
    ("fedproxgrad-x0-complex", lambda: run("fedproxgrad", PROBLEM, {"eta": 0.05, "x0": np.ones(3) * 1j}, rounds=1), "x0"),
    ("prox_sgd-eta-None", lambda: run("prox_sgd", PROBLEM, {"eta": None}, rounds=1), "eta"),
    # run's own arguments
    ("run-algorithm-None", lambda: run(None, PROBLEM, FEDNMAP, rounds=1), "algorithm"),
    ("run-algorithm-list", lambda: run(["fednmap"], PROBLEM, FEDNMAP, rounds=1), "algorithm"),
    ("run-problem-None", lambda: run("fednmap", None, FEDNMAP, rounds=1), "problem"),
    ("run-oracle-str", lambda: run("fednmap", PROBLEM, FEDNMAP, rounds=1, oracle="gaussian"), "oracle"),
    ("run-rounds-None", lambda: run("fednmap", PROBLEM, FEDNMAP, rounds=None), "rounds"),
    ("run-seed-minus-1", lambda: run("fednmap", PROBLEM, FEDNMAP, rounds=1, seed=-1), "seed"),
    ("run-params-list", lambda: run("fednmap", PROBLEM, [("gamma", 0.1)], rounds=1), "params"),
    ("run-metrics-str", lambda: run("fednmap", PROBLEM, FEDNMAP, rounds=1, metrics="psi"), "metrics"),
    ("run-callback-int", lambda: run("fednmap", PROBLEM, FEDNMAP, rounds=1, callback=1), "callback"),
    ("run-progress-str", lambda: run("fednmap", PROBLEM, FEDNMAP, rounds=1, progress="yes"), "progress"),
    # instances
    ("make_instance-seed-minus-1", lambda: make_instance("least_squares", seed=-1), "seed"),
    ("make_instance-seed-float", lambda: make_instance("least_squares", seed=1.5), "seed"),
    ("make_instance-n-None", lambda: make_instance("least_squares", n=None), "n"),
    ("make_instance-heterogeneity-True", lambda: make_instance("least_squares", heterogeneity=True), "heterogeneity"),
    ("make_instance-name-list", lambda: make_instance(["lasso"]), "name"),
    ("make_instance-phi-weight-None", lambda: make_instance("least_squares", phi={"name": "l1", "weight": None}), "phi"),
    ("logistic-phi-int", lambda: make_instance("logistic", n=2, p=3, m=4, phi=3), "phi"),
    ("LeastSquares-complex", lambda: LeastSquares(np.ones((2, 4, 3)) * 1j, np.ones((2, 4))), "A"),
    ("LeastSquares-phi-str", lambda: LeastSquares(np.ones((2, 4, 3)), np.ones((2, 4)), "l1"), "phi"),
    # oracles, regularisers, streams
    ("GaussianOracle-True", lambda: GaussianOracle(True), "sigma2"),
    ("GaussianOracle-None", lambda: GaussianOracle(None), "sigma2"),
    ("make_oracle-kind-list", lambda: make_oracle({"kind": ["gaussian"]}), "kind"),
    ("L1-True", lambda: L1(True), "weight"),
    ("make_regularizer-list", lambda: make_regularizer(["l1"]), "name"),
    ("prox-gamma-None", lambda: L1(0.1).prox(np.ones(3), None), "gamma"),
    ("prox-z-complex", lambda: L1(0.1).prox(np.ones(3) * 1j, 0.5), "z"),
    ("stream-seed-None", lambda: stream(None, 0, 0), "seed"),
    ("stream-t-str", lambda: stream(0, "1", 0), "t"),
]


@pytest.mark.parametrize(("call", "parameter"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_is_named(call: Callable[[], Any], parameter: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        call()
    err = info.value
    assert err.parameter == parameter
    assert parameter in str(err) and "\n" not in str(err)
    assert isinstance(err, ValueError) and isinstance(err, TypeError)


def test_valid_arguments_still_pass() -> None:
    """The negative control: the same entry points with valid values (numpy scalars, 0-d arrays, integral
    floats, bool arrays of labels) are accepted, so the cases above fail because of the one bad value."""
    traj = run("fednmap", PROBLEM, {"gamma": np.float64(0.1), "eta_a": np.array(0.05), "Q": 2.0}, rounds=1, seed=np.int64(3))
    assert traj.rounds_completed == 1
    assert make_instance("least_squares", n=2, p=3, m=4, seed=np.int64(1), phi={"name": "l1", "weight": 0.1}).p == 3
    assert Logistic(np.full((2, 4, 3), 0.5), np.ones((2, 4), dtype=bool)).m == 4
    assert GaussianOracle(np.float32(0.5)).sigma2 == 0.5
    assert isinstance(stream(np.uint64(1), 0, 0), np.random.Generator)


@pytest.mark.parametrize(
    ("check", "value", "fragment"),
    [
        (lambda v: check_real("x", v, low=0.0, low_open=True), True, "x must be a real number > 0, got True (bool)"),
        (lambda v: check_real("x", v, low=0.0, low_open=True), float("nan"), "x must be finite and > 0, got nan"),
        (lambda v: check_real("x", v, low=0.0, high=1.0, high_open=True), 1.0, "x must be finite and in [0, 1), got 1.0"),
        (lambda v: check_integer("k", v, 1), 2.5, "k must be an integer >= 1, got 2.5"),
        (lambda v: check_integer("k", v, 0, 9), 10, "k must be an integer in [0, 9], got 10"),
        (lambda v: check_array("A", v), "abc", "A must be a real numeric array, got 'abc'"),
        (lambda v: check_array("A", v), [1.0, 1j], "A must be a real numeric array, got complex data"),
        (lambda v: check_array("A", v, shape=(3,)), np.ones(2), "A must be a finite array of shape (3,), got shape (2,)"),
    ],
)
def test_messages_name_the_parameter_and_the_range(check: Callable[[Any], Any], value: Any, fragment: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        check(value)
    assert fragment in str(info.value)


def test_messages_stay_on_one_line() -> None:
    """A value whose repr spans lines (a big array, a hostile object) is summarised on one line."""

    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    for bad in (np.ones((50, 50)) * 1j, Hostile(), "a\nb"):
        with pytest.raises(InvalidParameterError) as info:
            check_real("eta", bad)
        assert "\n" not in str(info.value) and str(info.value).startswith("eta must be")
