"""Real data: scikit-learn's bundled ``breast_cancer`` and ``digits`` (design.md, Data), as federated logistic
regression with a Dirichlet label skew across n clients.

Preprocessing: features standardised (zero mean, unit variance per feature; constant features set to 0), then
every row normalised to ||a|| = 1, so the constants are those of ``logistic.Logistic``: L = (1/4) max_i
lambda_max(A_i^T A_i/m) + l2 (exact, attained at x = 0), mu >= l2, zeta2 at the certified x*. Optional
l1 (phi = l1 * ||x||_1) and l2 (inside f, giving mu); the default l2 = 1e-3 keeps x* finite (breast_cancer is
nearly separable after standardisation).

Split (``dirichlet_split``): Dirichlet(concentration * prior) label proportions per client (Hsu, Qi and
Brown 2019), balanced so that every client holds exactly m = ceil(N/n) samples, which the minibatch oracle
needs: the proportions are scaled to the class supplies by Sinkhorn iterations, rounded with exact margins,
and every sample is assigned to exactly one client, except that n m - N < n randomly chosen samples are
assigned twice (padding). Small concentration: strong label skew; large: close to i.i.d.
"""

from __future__ import annotations

import numpy as np
from fedbounds.algorithms._validate import check_seed
from fedbounds.algorithms.base import check_int, check_positive
from fedbounds.algorithms.instances.logistic import Logistic
from fedbounds.algorithms.regularizers import L1, Zero


def _dirichlet_rows(rng: np.random.Generator, alpha: np.ndarray, n: int) -> np.ndarray:
    """n draws of Dirichlet(alpha), robust to tiny alpha (gamma variates that underflow to 0)."""
    g = rng.gamma(alpha, size=(n, alpha.size))
    empty = g.sum(axis=1) == 0
    if np.any(empty):  # all variates underflowed: the limit is a one-hot draw with probabilities alpha/sum(alpha)
        picks = rng.choice(alpha.size, size=int(empty.sum()), p=alpha / alpha.sum())
        g[np.flatnonzero(empty), picks] = 1.0
    return g / g.sum(axis=1, keepdims=True)


def dirichlet_split(classes: np.ndarray, n: int, concentration: float, rng: np.random.Generator) -> np.ndarray:
    """Equal-size Dirichlet label-skew split; returns indices (n, m) into ``classes``, m = ceil(N/n).

    1. Pad: n m - N (< n) samples, drawn without replacement, are used twice; the class supplies S_c count them.
    2. Client proportions q_i ~ Dirichlet(concentration * prior), prior = S / sum(S).
    3. Sinkhorn scaling of (q_ic) to row sums m and column sums S_c (keeps the draws' cross-ratios, i.e. skew).
    4. Integer counts with exact column sums (largest remainders per class), then single-unit moves between an
       over-full and an under-full client (the class that best matches their targets) until every row is m.
    5. Each class's shuffled samples are dealt to the clients by these counts.
    """
    classes = np.asarray(classes)
    N = classes.size
    n = check_int("n", n)
    if n > N:
        raise ValueError(f"n must lie in [1, {N}] (the number of samples), got {n}")
    concentration = check_positive("concentration", concentration)
    m = -(-N // n)
    pool = np.concatenate([np.arange(N), rng.choice(N, size=n * m - N, replace=False)])
    labels, cls = np.unique(classes[pool], return_inverse=True)
    C = labels.size
    S = np.bincount(cls, minlength=C).astype(float)
    Q = np.maximum(_dirichlet_rows(rng, concentration * S / S.sum(), n), 1e-12)
    P = Q.copy()
    for _ in range(10_000):
        P *= (m / P.sum(axis=1))[:, None]
        P *= (S / P.sum(axis=0))[None, :]
        if np.max(np.abs(P.sum(axis=1) - m)) < 1e-9:
            break
    counts = np.floor(P).astype(int)
    for c in range(C):
        short = int(S[c]) - counts[:, c].sum()
        if short > 0:
            counts[np.argsort(counts[:, c] - P[:, c])[:short], c] += 1
    rows = counts.sum(axis=1)
    while np.any(rows != m):
        i, j = int(np.argmax(rows)), int(np.argmin(rows))
        gain = (P[j] - counts[j]) - (P[i] - counts[i])
        gain[counts[i] == 0] = -np.inf
        c = int(np.argmax(gain))
        counts[i, c] -= 1
        counts[j, c] += 1
        rows[i] -= 1
        rows[j] += 1
    parts = [[] for _ in range(n)]
    for c in range(C):
        members = rng.permutation(pool[cls == c])
        ends = np.cumsum(counts[:, c])
        for i, chunk in enumerate(np.split(members, ends[:-1])):
            parts[i].append(chunk)
    return np.stack([np.concatenate(p_i) for p_i in parts])


def label_skew(classes: np.ndarray, parts: np.ndarray) -> float:
    """Mean over clients of the total-variation distance between the client's class distribution and the pooled one."""
    classes = np.asarray(classes)
    labels, inv = np.unique(classes, return_inverse=True)
    glob = np.bincount(inv[np.ravel(parts)], minlength=labels.size) / np.size(parts)
    tv = [0.5 * np.abs(np.bincount(inv[p_i], minlength=labels.size) / p_i.size - glob).sum() for p_i in parts]
    return float(np.mean(tv))


def _preprocess(X: np.ndarray) -> np.ndarray:
    """Standardise each feature (constant features -> 0), then normalise each row to unit norm."""
    X = np.asarray(X, dtype=float)
    sd = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return Z / np.where(norms > 0, norms, 1.0)


def _federated_logistic(
    X: np.ndarray, y: np.ndarray, classes: np.ndarray, n: int, concentration: float, l1: float, l2: float, seed: int, name: str
) -> Logistic:
    check_positive("l1", l1, strict=False)
    check_positive("l2", l2, strict=False)
    rng = np.random.default_rng(check_seed("seed", seed))
    parts = dirichlet_split(classes, n, concentration, rng)
    A = _preprocess(X)[parts]
    prob = Logistic(A, np.asarray(y, dtype=float)[parts], L1(l1) if l1 > 0 else Zero(), l2=l2, name=name)
    #: indices (n, m) of each client's samples in the original data set, and their classes
    prob.split = parts
    prob.classes = np.asarray(classes)[parts]
    prob.skew = label_skew(classes, parts)
    return prob


def breast_cancer(n: int = 10, concentration: float = 0.5, l1: float = 0.0, l2: float = 1e-3, seed: int = 0) -> Logistic:
    """Wisconsin breast cancer (569 samples, 30 features, malignant = 0 / benign = 1), Dirichlet split on the label."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    return _federated_logistic(X, y, y, n, concentration, l1, l2, seed, "breast_cancer")


def digits(
    n: int = 10, concentration: float = 0.5, task: str | int = "parity", l1: float = 0.0, l2: float = 1e-3, seed: int = 0
) -> Logistic:
    """Optical digits (1797 samples, 64 features) as a binary task: ``"parity"`` (y = 1 for even digits) or an
    integer k in 0..9 (one-vs-rest, y = 1 for digit k). The Dirichlet split is on the ten digit classes."""
    from sklearn.datasets import load_digits

    X, d = load_digits(return_X_y=True)
    if task == "parity":
        y = (d % 2 == 0).astype(float)
    elif not isinstance(task, bool) and isinstance(task, int | np.integer) and 0 <= task <= 9:
        y = (d == task).astype(float)
    else:
        raise ValueError(f"task must be 'parity' or an integer in [0, 9], got {task!r}")
    return _federated_logistic(X, y, d, n, concentration, l1, l2, seed, "digits")
