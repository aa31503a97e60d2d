"""Instance data with NaN or infinity is rejected at construction, naming the array (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest
from fedbounds.algorithms.instances import Fairness, LeastSquares, Logistic, SigmoidLeastSquares


def _glm_data(n: int = 2, m: int = 4, p: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, m, p))
    A /= 2 * np.linalg.norm(A, axis=-1, keepdims=True)
    return A, (rng.random((n, m)) < 0.5).astype(float)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("array", ["A", "b"])
def test_least_squares_rejects_nonfinite_data(array: str, bad: float) -> None:
    data = {"A": np.ones((2, 3, 2)), "b": np.ones((2, 3))}
    data[array][(0,) * data[array].ndim] = bad
    with pytest.raises(ValueError, match=rf"^{array} must be finite"):
        LeastSquares(**data)


@pytest.mark.parametrize("cls", [Logistic, SigmoidLeastSquares])
@pytest.mark.parametrize("array", ["A", "y"])
def test_glms_reject_nonfinite_data(cls: type, array: str) -> None:
    A, y = _glm_data()
    data = {"A": A, "y": y}
    data[array][(0,) * data[array].ndim] = np.nan
    with pytest.raises(ValueError, match=rf"^{array} must be finite"):
        cls(**data)


def test_fairness_rejects_a_nonfinite_sensitive_attribute() -> None:
    A, y = _glm_data()
    s = np.zeros_like(y)
    s[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"^s must be finite"):
        Fairness(A=A, y=y, s=s)


def test_nonnumeric_data_names_the_array() -> None:
    with pytest.raises(ValueError, match=r"^A must be"):
        LeastSquares(A=[["x"]], b=[1.0])
