"""Problem instances that know their constants (each exact or a stated bound; design.md, principle 5).

``INSTANCES`` maps a registry name to a seeded factory; ``make_instance(name, **params)`` builds one for a
spec or the CLI. A ``phi`` parameter may be a regulariser, a name (``"l1"``) or a table
(``{name = "mcp", lam = 0.1, theta = 3.0}``), built with ``fedbounds.algorithms.regularizers.make_regularizer``.

| name                    | module        | problem                                                          |
|-------------------------|---------------|------------------------------------------------------------------|
| least_squares           | least_squares | heterogeneous least squares, any phi (exact L, mu)               |
| lasso                   | least_squares | least squares + l1 (the PL example of both papers)               |
| least_squares_mcp/scad  | least_squares | least squares + MCP / SCAD (weakly convex phi)                   |
| logistic                | logistic      | synthetic(alpha, beta) logistic regression, optional l2 and phi  |
| nonconvex_logistic      | nonconvex     | logistic + alpha sum w^2/(1 + w^2) (notes 3.1)                   |
| sigmoid_least_squares   | nonconvex     | (sigmoid(a^T x) - y)^2 (notes 3.1)                               |
| fairness                | fairness      | DS FedProxGrad fairness instance, r = Delta^2 (notes 3)          |
| breast_cancer, digits   | real_data     | scikit-learn data, Dirichlet label skew, logistic loss           |
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from fedbounds.algorithms._validate import InvalidParameterError, check_mapping, describe
from fedbounds.algorithms.instances.fairness import Fairness, fairness
from fedbounds.algorithms.instances.least_squares import (
    LeastSquares,
    heterogeneous_least_squares,
    lasso,
    least_squares_mcp,
    least_squares_scad,
)
from fedbounds.algorithms.instances.logistic import BinaryGLM, Logistic, synthetic_logistic
from fedbounds.algorithms.instances.nonconvex import SigmoidLeastSquares, nonconvex_logistic, sigmoid_least_squares
from fedbounds.algorithms.instances.real_data import breast_cancer, digits

__all__ = [
    "INSTANCES",
    "BinaryGLM",
    "Fairness",
    "LeastSquares",
    "Logistic",
    "SigmoidLeastSquares",
    "make_instance",
]

INSTANCES: dict[str, Callable[..., Any]] = {
    "least_squares": heterogeneous_least_squares,
    "lasso": lasso,
    "least_squares_mcp": least_squares_mcp,
    "least_squares_scad": least_squares_scad,
    "logistic": synthetic_logistic,
    "nonconvex_logistic": nonconvex_logistic,
    "sigmoid_least_squares": sigmoid_least_squares,
    "fairness": fairness,
    "breast_cancer": breast_cancer,
    "digits": digits,
}


def _regularizer(spec: Any) -> Any:
    from fedbounds.algorithms.regularizers import make_regularizer

    if spec is None or hasattr(spec, "prox"):
        return spec
    try:
        if isinstance(spec, str):
            return make_regularizer(spec)
        if isinstance(spec, Mapping):
            params = check_mapping("phi", spec)
            name = params.pop("name", None)
            if name is None:
                name = params.pop("kind", None)
            if not isinstance(name, str):
                raise InvalidParameterError("phi", f"phi must name its regulariser (key 'name'), got {describe(dict(spec))}")
            return make_regularizer(name, **params)
    except InvalidParameterError as err:
        if err.parameter == "phi":
            raise
        raise InvalidParameterError("phi", f"phi: {err}") from None
    raise InvalidParameterError("phi", f"phi must be a regulariser, a name or a table with 'name', got {describe(spec)}")


def make_instance(name: str, **params: Any) -> Any:
    """Build the registered instance ``name`` with ``params`` (each factory's keyword arguments).

    Unknown names and parameters are a ValueError listing the allowed ones.
    """
    if not isinstance(name, str) or name not in INSTANCES:
        raise InvalidParameterError("name", f"name must be one of {sorted(INSTANCES)}, got {describe(name)}")
    factory = INSTANCES[name]
    allowed = list(inspect.signature(factory).parameters)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise InvalidParameterError(str(unknown[0]), f"unknown parameter(s) {unknown} for instance {name!r}; allowed: {allowed}")
    if "phi" in params:
        params = {**params, "phi": _regularizer(params["phi"])}
    return factory(**params)
