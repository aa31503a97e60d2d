"""Fuzzing the public Python API of ``fedbounds.algorithms`` (issue 24, item 8).

Every public entry point is called with valid arguments except ONE, which hypothesis replaces by a bad value
of that parameter's kind (None, a bool, a complex number, a string, NaN, an out-of-range number, a wrong shape,
complex data, an object of the wrong type). The call must raise a ValueError or TypeError whose one-line
message names that parameter: never an AttributeError, IndexError, LinAlgError or a silent acceptance.

The ci profile (tests/conftest.py, derandomised) runs 25 examples per entry point; ``HYPOTHESIS_PROFILE=dev``
widens it. Instances are tiny (n = 2, p = 3, m = 4) and runs one round, so an accepted bad value costs little.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fedbounds.algorithms import oracles, regularizers
from fedbounds.algorithms.exact import run_exact
from fedbounds.algorithms.instances import make_instance
from fedbounds.algorithms.instances.least_squares import LeastSquares
from fedbounds.algorithms.instances.logistic import Logistic
from fedbounds.algorithms.rng import stream
from fedbounds.algorithms.run import run
from hypothesis import given, settings
from hypothesis import strategies as st

P = 3
SMALL = {"n": 2, "p": P, "m": 4}

# ------------------------------------------------------------------------------------- bad values per kind

_NOT_A_NUMBER = st.one_of(
    st.sampled_from([None, True, False, np.bool_(True), "0.1", "", b"1", [0.1], (0.1,), {"v": 0.1}, object(), 1j, 0.1 + 0j]),
    st.complex_numbers(allow_nan=False, allow_infinity=False).filter(lambda z: z.imag != 0),
    st.text(max_size=4),
)
_NONFINITE = st.sampled_from([float("nan"), float("inf"), float("-inf"), np.float64("nan")])
_NEGATIVE = st.one_of(st.floats(max_value=-1e-300, allow_nan=False, allow_infinity=False), st.integers(max_value=-1))

BAD: dict[str, st.SearchStrategy[Any]] = {
    # a real number > 0
    "pos": st.one_of(_NOT_A_NUMBER, _NONFINITE, _NEGATIVE, st.sampled_from([0, 0.0, -0.0])),
    # a real number > 0 or None (a default computed from the instance)
    "pos?": st.one_of(_NOT_A_NUMBER.filter(lambda v: v is not None), _NONFINITE, _NEGATIVE, st.sampled_from([0, 0.0])),
    # a real number >= 0
    "nonneg": st.one_of(_NOT_A_NUMBER, _NONFINITE, _NEGATIVE),
    # an integer >= 1
    "int1": st.one_of(
        _NOT_A_NUMBER, _NONFINITE, st.integers(max_value=0), st.floats(0.01, 1e6).filter(lambda x: x != int(x)), st.just(np.float64(2.5))
    ),
    # an integer >= 0 (a seed, a stream key)
    "int0": st.one_of(_NOT_A_NUMBER, _NONFINITE, st.integers(max_value=-1), st.floats(0.01, 1e6).filter(lambda x: x != int(x))),
    # True or False
    "bool": st.sampled_from([None, 0, 1, 1.0, "True", "false", np.float64(1.0), [True]]),
    # a (p,) real finite array or None
    "point": st.one_of(
        st.sampled_from(["abc", 1j, {"a": 1}, object()]),
        st.just(np.ones(P) * 1j),
        st.just(np.ones(P + 1)),
        st.just(np.ones((P, 1))),
        st.just(np.array([1.0, np.nan, 0.0])),
        st.just(np.array(["a", "b", "c"])),
        st.just([1.0, "x", 2.0]),
    ),
    # per-client (n, p) = (2, P) real finite array or None
    "clients": st.sampled_from(
        ["abc", 1j, np.ones((2, P)) * 1j, np.ones(P), np.ones((3, P)), np.full((2, P), np.inf), [[1.0, "x", 0.0]] * 2]
    ),
    # points (..., p) for a prox
    "points": st.sampled_from([None, "abc", 1.5, np.ones(3) * 1j, {}, object(), [1.0, "x"]]),
    # a registered name (algorithm, instance, regulariser, oracle kind)
    "name": st.one_of(st.sampled_from([None, 1, 1.5, True, [], ["fednmap"], {}, object(), b"fednmap"]), st.text(max_size=5)),
    # an object with methods (a problem, an oracle): never a string or a number
    "object": st.sampled_from(["gaussian", "exact", 1, 0.5, True, [], {"kind": "gaussian"}, object(), np.zeros(3)]),
    # a regulariser, a name or a table, or None
    "phi": st.sampled_from([1, 0.5, True, [], ["l1"], object(), "nope", {"weight": 1.0}, {"name": "l1", "weight": None}, {"name": 3}]),
    # a dict or None
    "mapping": st.sampled_from([1, "gamma", [("gamma", 0.1)], (1,), object(), True, {1: 0.1}]),
    # a callable or None
    "callable": st.sampled_from([1, "print", [], {}, True]),
    # a tuple of metric names or None
    "metrics": st.sampled_from(["psi", "psi_gap", ("nope",), [1], 3, {"psi": 1}, (None,)]),
    # per-client data of a given shape
    "data3": st.sampled_from([None, "A", 1.0, np.ones((2, 4)), np.ones((2, 0, 3)), np.ones((2, 4, 0)), np.ones((2, 4, 3)) * 1j]),
    "data2": st.sampled_from([None, "b", np.ones(4), np.ones((2, 0)), np.ones((2, 4)) * 1j, np.full((2, 4), np.nan)]),
}

# ------------------------------------------------------------------------------------- the entry points


def _lsq() -> Any:
    return make_instance("least_squares", **SMALL)


PROBLEM = _lsq()


def _run(**kw: Any) -> Any:
    args = {"algorithm": "fednmap", "problem": PROBLEM, "params": {"gamma": 0.1, "eta_a": 0.05, "Q": 2}, "rounds": 1}
    args.update(kw)
    return run(args.pop("algorithm"), args.pop("problem"), args.pop("params"), **args)


def _params(algorithm: str, valid: dict[str, Any]) -> Callable[..., Any]:
    def call(**kw: Any) -> Any:
        return run(algorithm, PROBLEM, {**valid, **kw}, rounds=1)

    return call


def _instance(name: str, **base: Any) -> Callable[..., Any]:
    def call(**kw: Any) -> Any:
        return make_instance(name, **{**base, **kw})

    return call


#: (id, call(**{param: value}), {param: kind})
ENTRY_POINTS: list[tuple[str, Callable[..., Any], dict[str, str]]] = [
    (
        "run",
        _run,
        {
            "algorithm": "name",
            "problem": "object",
            "params": "mapping",
            "rounds": "int0",
            "replicas": "int1",
            "seed": "int0",
            "oracle": "object",
            "metrics": "metrics",
            "progress": "bool",
            "callback": "callable",
        },
    ),
    (
        "fednmap",
        _params("fednmap", {"gamma": 0.1, "eta_a": 0.05, "Q": 2}),
        {
            "gamma": "pos",
            "eta_a": "pos",
            "eta_s": "pos",
            "Q": "int1",
            "correction": "bool",
            "z0": "point",
            "c0": "clients",
            "gamma_eval": "pos?",
        },
    ),
    ("prox_sgd", _params("prox_sgd", {"eta": 0.1}), {"eta": "pos", "x0": "point"}),
    ("norm_sgd", _params("norm_sgd", {"eta": 0.1, "gamma": 0.1}), {"eta": "pos", "gamma": "pos", "z0": "point"}),
    ("fedmid", _params("fedmid", {"eta_a": 0.05, "Q": 2}), {"eta_a": "pos", "Q": "int1", "eta_s": "pos", "x0": "point"}),
    ("fedprox_prox", _params("fedprox_prox", {"eta_a": 0.05, "Q": 2, "mu": 0.1}), {"eta_a": "pos", "Q": "int1", "mu": "pos"}),
    ("fedproxgrad", _params("fedproxgrad", {"eta": 0.05}), {"eta": "pos", "x0": "point"}),
    (
        "run_exact",
        lambda **kw: run_exact(
            kw.pop("algorithm", "fednmap"),
            kw.pop("problem", PROBLEM),
            kw.pop("params", {"gamma": 0.1, "eta_a": 0.05, "Q": 1}),
            rounds=kw.pop("rounds", 1),
            **kw,
        ),
        {"algorithm": "name", "problem": "object", "params": "mapping", "rounds": "int0", "oracle": "object"},
    ),
    (
        "least_squares",
        _instance("least_squares", **SMALL),
        {"n": "int1", "p": "int1", "m": "int1", "heterogeneity": "nonneg", "seed": "int0", "phi": "phi"},
    ),
    ("lasso", _instance("lasso", **SMALL), {"weight": "nonneg", "seed": "int0"}),
    ("least_squares_mcp", _instance("least_squares_mcp", **SMALL), {"lam": "nonneg", "theta": "pos?"}),
    ("least_squares_scad", _instance("least_squares_scad", **SMALL), {"lam": "nonneg", "a": "pos?"}),
    (
        "logistic",
        _instance("logistic", **SMALL),
        {"n": "int1", "p": "int1", "m": "int1", "alpha_het": "nonneg", "beta_het": "nonneg", "l2": "nonneg", "phi": "phi", "seed": "int0"},
    ),
    ("nonconvex_logistic", _instance("nonconvex_logistic", **SMALL), {"alpha_pen": "pos", "seed": "int0", "phi": "phi"}),
    ("sigmoid_least_squares", _instance("sigmoid_least_squares", **SMALL), {"l2": "nonneg", "seed": "int0"}),
    (
        "fairness",
        _instance("fairness", n=2, p=3, m=8, shifted_features=1),
        {
            "alpha_pen": "nonneg",
            "lam": "nonneg",
            "delta": "nonneg",
            "shifted_features": "int0",
            "B2": "pos",
            "gb_radius": "pos?",
            "seed": "int0",
        },
    ),
    (
        "breast_cancer",
        _instance("breast_cancer", n=2),
        {"n": "int1", "concentration": "pos", "l1": "nonneg", "l2": "nonneg", "seed": "int0"},
    ),
    ("make_instance", lambda **kw: make_instance(kw.pop("name"), **SMALL), {"name": "name"}),
    (
        "LeastSquares",
        lambda **kw: LeastSquares(**{"A": np.ones((2, 4, 3)), "b": np.ones((2, 4)), **kw}),
        {"A": "data3", "b": "data2", "phi": "object"},
    ),
    (
        "Logistic",
        lambda **kw: Logistic(**{"A": np.full((2, 4, 3), 0.5), "y": np.ones((2, 4)), **kw}),
        {"A": "data3", "y": "data2", "l2": "nonneg", "alpha_pen": "nonneg"},
    ),
    ("GaussianOracle", lambda **kw: oracles.GaussianOracle(**kw), {"sigma2": "nonneg"}),
    ("MinibatchOracle", lambda **kw: oracles.MinibatchOracle(**{"batch": 2, **kw}), {"batch": "int1", "replace": "bool"}),
    ("make_oracle", lambda **kw: oracles.make_oracle({"kind": kw["kind"]}), {"kind": "name"}),
    ("make_regularizer", lambda **kw: regularizers.make_regularizer(kw["name"]), {"name": "name"}),
    ("L1", lambda **kw: regularizers.L1(**kw), {"weight": "nonneg"}),
    ("ElasticNet", lambda **kw: regularizers.ElasticNet(**kw), {"l1": "nonneg", "l2": "nonneg"}),
    ("L2BallIndicator", lambda **kw: regularizers.L2BallIndicator(**kw), {"radius": "nonneg"}),
    ("MCP", lambda **kw: regularizers.MCP(**kw), {"lam": "nonneg", "theta": "pos"}),
    ("SCAD", lambda **kw: regularizers.SCAD(**kw), {"lam": "nonneg", "a": "pos"}),
    ("prox", lambda **kw: regularizers.L1(0.1).prox(**{"z": np.ones(3), "gamma": 0.5, **kw}), {"gamma": "pos", "z": "points"}),
    ("stream", lambda **kw: stream(**{"seed": 0, "t": 0, "l": 0, **kw}), {"seed": "int0", "t": "int0", "l": "int0"}),
]

_OK_TYPES = (ValueError, TypeError)


def _assert_named(call: Callable[..., Any], param: str, value: Any) -> None:
    try:
        call(**{param: value})
    except _OK_TYPES as err:
        msg = str(err)
        assert param in msg, f"{param}={value!r}: the message does not name {param!r}: {msg}"
        assert "\n" not in msg, f"{param}={value!r}: a message of more than one line: {msg!r}"
    except Exception as err:  # the wrong exception type is the failure this fuzz exists to find
        pytest.fail(f"{param}={value!r} raised {type(err).__name__}: {err}")
    else:
        pytest.fail(f"{param}={value!r} was accepted")


@pytest.mark.parametrize(("entry", "call", "kinds"), ENTRY_POINTS, ids=[e[0] for e in ENTRY_POINTS])
@settings(settings.default)  # the ci profile (tests/conftest.py) unless HYPOTHESIS_PROFILE says otherwise
@given(data=st.data())
def test_bad_value_is_named(entry: str, call: Callable[..., Any], kinds: dict[str, str], data: st.DataObject) -> None:
    param = data.draw(st.sampled_from(sorted(kinds)), label="parameter")
    value = data.draw(BAD[kinds[param]], label="value")
    _assert_named(call, param, value)
