"""Real-data instances (scikit-learn's bundled breast_cancer and digits) and the Dirichlet label-skew split:
every sample assigned, equal client sizes, skew (and zeta2) growing as the concentration falls, and the
preprocessing against scikit-learn's own StandardScaler and normalize.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fedbounds.algorithms.instances import make_instance
from fedbounds.algorithms.instances.real_data import dirichlet_split, label_skew
from fedbounds.algorithms.regularizers import L1
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.preprocessing import StandardScaler, normalize


def check_partition(classes: np.ndarray, parts: np.ndarray, n: int) -> None:
    N = classes.size
    m = -(-N // n)
    assert parts.shape == (n, m)
    counts = np.bincount(parts.ravel(), minlength=N)
    assert np.all(counts >= 1)  # every sample assigned
    assert counts.max() <= 2
    assert int((counts == 2).sum()) == n * m - N < n  # only the padding is used twice


@settings(max_examples=25)
@given(
    N=st.integers(1, 300),
    C=st.integers(1, 6),
    n=st.integers(1, 12),
    concentration=st.floats(1e-3, 1e3),
    seed=st.integers(0, 2**16),
)
def test_dirichlet_split_assigns_every_sample_in_equal_sizes(N, C, n, concentration, seed):
    n = min(n, N)
    classes = np.random.default_rng(seed).integers(0, C, N)
    parts = dirichlet_split(classes, n, concentration, np.random.default_rng(seed))
    check_partition(classes, parts, n)


def test_skew_grows_as_concentration_falls():
    _, d = load_digits(return_X_y=True)
    mean_skew = []
    for conc in (0.1, 1.0, 10.0, 1000.0):
        mean_skew.append(np.mean([label_skew(d, dirichlet_split(d, 10, conc, np.random.default_rng(s))) for s in range(3)]))
    assert all(a > b for a, b in itertools.pairwise(mean_skew)), mean_skew
    assert mean_skew[-1] < 0.05 < 0.5 < mean_skew[0]


def test_label_skew_independently():
    """TV distance to the pooled class distribution, recomputed by counting."""
    classes = np.array([0, 0, 1, 1, 1, 2])
    parts = np.array([[0, 1, 5], [2, 3, 4]])
    # pooled: (2, 3, 1)/6; client 0: (2, 0, 1)/3, client 1: (0, 3, 0)/3
    tv0 = 0.5 * (abs(2 / 3 - 2 / 6) + abs(0 - 3 / 6) + abs(1 / 3 - 1 / 6))
    tv1 = 0.5 * (abs(0 - 2 / 6) + abs(1 - 3 / 6) + abs(0 - 1 / 6))
    assert label_skew(classes, parts) == pytest.approx((tv0 + tv1) / 2)


def test_split_is_seeded():
    _, y = load_breast_cancer(return_X_y=True)
    a = dirichlet_split(y, 7, 0.3, np.random.default_rng(4))
    b = dirichlet_split(y, 7, 0.3, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["breast_cancer", "digits"])
def test_preprocessing_and_labels_against_sklearn(name):
    prob = make_instance(name, n=5, concentration=0.5, seed=1)
    if name == "breast_cancer":
        X, target = load_breast_cancer(return_X_y=True)
        y = target
    else:
        X, target = load_digits(return_X_y=True)
        y = (target % 2 == 0).astype(float)
    Z = normalize(StandardScaler().fit_transform(X))
    np.testing.assert_allclose(prob.A, Z[prob.split], atol=1e-12)
    np.testing.assert_array_equal(prob.y, y[prob.split])
    np.testing.assert_array_equal(prob.classes, target[prob.split])
    assert np.allclose(np.linalg.norm(prob.A, axis=-1), 1.0)
    check_partition(target, prob.split, 5)
    assert prob.num_samples == prob.split.shape[1]


def test_digits_one_vs_rest_and_l1():
    prob = make_instance("digits", n=4, task=7, l1=1e-3, l2=0.0)
    assert np.array_equal(prob.y, (prob.classes == 7).astype(float))
    assert isinstance(prob.phi, L1) and prob.phi.weight == 1e-3 and prob.l2 == 0.0
    assert "mu" not in prob.constants
    assert prob.solution().residual < 1e-10


@pytest.mark.parametrize("name", ["breast_cancer", "digits"])
def test_zeta2_grows_as_concentration_falls(name):
    z = [make_instance(name, n=5, concentration=c, seed=0).constants["zeta2"].value for c in (0.1, 1000.0)]
    assert z[0] > z[1]
