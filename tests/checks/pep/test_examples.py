"""The PEPit-style entry points (issue 20, item 6): each runs its docstring's Example (a doctest: the printed
guarantees must match) at one small point, and the value it returns is compared with the committed evidence.

One SDP pair per function: the doctest's own run is the one whose ``(pepit_tau, theoretical_tau)`` is checked.
"""

from __future__ import annotations

import doctest
import math
import re
from typing import Any

import pytest
from fedbounds.checks.ds_fedproxgrad.pep import examples as ds_examples
from fedbounds.checks.fednmap.pep import examples as fednmap_examples
from fedbounds.theory.ds_fedproxgrad.claims import PEP_LEMMA5_2
from fedbounds.theory.fednmap import pep_evidence
from fedbounds.theory.fednmap.claims import PEP_SHAPE_EXPONENT


def _run_example(function: Any) -> dict[str, Any]:
    """Run ``function``'s docstring Example as a doctest; return the names it left (pepit_tau, theoretical_tau)."""
    (test,) = [t for t in doctest.DocTestFinder().find(function) if t.examples]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, clear_globs=False)
    assert runner.failures == 0, f"the Example of {function.__name__} does not print what its docstring shows"
    return test.globs


@pytest.mark.slow  # 26 s at load 5-7 (pytest --durations, 2026-12-04)
def test_fednmap_descent_matches_the_committed_grid() -> None:
    got = _run_example(fednmap_examples.wc_fednmap_descent)
    pepit_tau, theoretical_tau = got["pepit_tau"], got["theoretical_tau"]
    (row,) = [r for r in pep_evidence.DESCENT if (r["rho"], r["n"], r["Q"], r["T"], r["k"]) == (0.1, 2, 1, 1, 1.0)]
    assert row["status"] in ("certified", "proved")
    # the committed value is the ratio w d T = pepit_tau / theoretical_tau; d = eta_hat/9 at the printed step
    assert theoretical_tau == pytest.approx(1.0 / row["descent_coef"], rel=1e-12)
    assert pepit_tau / theoretical_tau == pytest.approx(row["value"], rel=1e-3)
    assert pepit_tau <= theoretical_tau


def test_fednmap_largest_step_matches_the_committed_step() -> None:
    got = _run_example(fednmap_examples.wc_fednmap_largest_step)
    pepit_tau, theoretical_tau = got["pepit_tau"], got["theoretical_tau"]
    (row,) = [r for r in pep_evidence.STEPS if (r["rho"], r["n"], r["Q"], r["T"]) == (0.1, 2, 1, 1)]
    assert pep_evidence.is_evidence(row) and (row["C_0"], row["C_c"]) == (2.0, 1.0)
    assert theoretical_tau == pytest.approx(row["eta_hat_printed"], rel=1e-12)
    assert pepit_tau / theoretical_tau == pytest.approx(row["k"], rel=1e-12)


def test_fednmap_pl_contraction_matches_the_claimed_exponent_ratio() -> None:
    got = _run_example(fednmap_examples.wc_fednmap_pl_contraction)
    pepit_tau, theoretical_tau = got["pepit_tau"], got["theoretical_tau"]
    # the claim publishes the ratio as a curve over C_0; the example runs at C_0 = 1, (n, Q, mu) = (2, 1, 0.1)
    claimed = float(re.search(r"C_0=1 \(n=2, Q=1, mu=0.1\): x([\d.]+)", PEP_SHAPE_EXPONENT.evidence).group(1))
    assert (1 - pepit_tau) / (1 - theoretical_tau) == pytest.approx(claimed, abs=0.1)
    assert pepit_tau <= theoretical_tau < 1


def test_ds_lemma52_matches_the_claimed_worst_case() -> None:
    got = _run_example(ds_examples.wc_ds_fedproxgrad_lemma52)
    pepit_tau, theoretical_tau = got["pepit_tau"], got["theoretical_tau"]
    claimed = float(re.search(r"dual values (-[\d.]+)", PEP_LEMMA5_2.evidence).group(1))
    phi = float(re.search(r"Phi_PEP = ([\d.]+)", PEP_LEMMA5_2.evidence).group(1))
    assert pepit_tau == pytest.approx(claimed, rel=1e-4)
    eta = -theoretical_tau * 4  # theoretical_tau = -eta Phi with the printed Phi = 1/4
    assert -pepit_tau / eta == pytest.approx(phi, abs=1e-4)
    assert pepit_tau <= theoretical_tau


@pytest.mark.slow
def test_ds_absorption_matches_the_claimed_threshold() -> None:
    """About 10 certificate pairs (a bisection): slow."""
    from fedbounds.theory.ds_fedproxgrad.claims import PEP_ABSORPTION

    got = _run_example(ds_examples.wc_ds_fedproxgrad_absorption)
    pepit_tau, theoretical_tau = got["pepit_tau"], got["theoretical_tau"]
    claimed = float(re.search(r"certified threshold ([\d.]+) against", PEP_ABSORPTION.evidence).group(1))
    # a bisection to 0.05 x the printed threshold from below: within that of the claim's finer one, never above it
    assert claimed - 0.05 * theoretical_tau <= pepit_tau <= claimed
    assert pepit_tau >= theoretical_tau


@pytest.mark.parametrize(
    ("function", "kwargs", "name"),
    [
        (fednmap_examples.wc_fednmap_descent, {"n": 0}, "n"),
        (fednmap_examples.wc_fednmap_descent, {"step_multiple": 0}, "step_multiple"),
        (fednmap_examples.wc_fednmap_descent, {"verbose": 2}, "verbose"),
        (fednmap_examples.wc_fednmap_pl_contraction, {"mu": -1}, "mu"),
        (ds_examples.wc_ds_fedproxgrad_lemma52, {"N": 1.5}, "N"),
        (ds_examples.wc_ds_fedproxgrad_lemma52, {"gamma_r": -0.1}, "gamma_r"),
        (ds_examples.wc_ds_fedproxgrad_lemma52, {"B": 0}, "B"),
        (ds_examples.wc_ds_fedproxgrad_lemma52, {"lam": -1}, "lam"),
        (ds_examples.wc_ds_fedproxgrad_absorption, {"tol": 0}, "tol"),
        (fednmap_examples.wc_fednmap_descent, {"rho": -1}, "rho"),
        (fednmap_examples.wc_fednmap_pl_contraction, {"Q": 0}, "Q"),
        (fednmap_examples.wc_fednmap_largest_step, {"k_max": 1}, "k_max"),
    ],
)
def test_bad_arguments_name_the_parameter(function: Any, kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must"):
        function(**{**kwargs, "verbose": kwargs.get("verbose", -1)})


def test_silent_at_verbose_minus_one(capsys: pytest.CaptureFixture[str]) -> None:
    tau = ds_examples.wc_ds_fedproxgrad_lemma52(verbose=-1)
    assert capsys.readouterr().out == "" and math.isfinite(tau[0])
