"""Argument validation for the public API of ``fedbounds.algorithms``, in the manner of scikit-learn.

Every public entry point (``run``, ``run_exact``, ``make_instance`` and the instance factories, the oracles,
the regularisers, ``rng.stream``) checks its arguments up front with these helpers, so that a bad value ends in
one line that names the parameter and what it accepts, never in an AttributeError, IndexError or a solver's
LinAlgError further down.

All failures raise :class:`InvalidParameterError`, which is both a ValueError and a TypeError (as
scikit-learn's ``InvalidParameterError`` is): callers that catch either keep working, and ``err.parameter``
names the parameter at fault. Types are strict: ``True`` is not a number, a complex number is not a real one,
a string is not an array; numpy scalars and 0-d numeric arrays count as numbers.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

__all__ = [
    "InvalidParameterError",
    "check_array",
    "check_bool",
    "check_callable",
    "check_choice",
    "check_integer",
    "check_mapping",
    "check_object",
    "check_real",
    "check_seed",
    "describe",
]


class InvalidParameterError(ValueError, TypeError):
    """A public argument is of the wrong type or out of range; ``parameter`` names it."""

    def __init__(self, parameter: str, message: str) -> None:
        self.parameter = parameter
        super().__init__(" ".join(message.split()))  # one line, whatever the value's repr holds


def describe(value: Any, limit: int = 60) -> str:
    """A short one-line description of ``value`` for a message: its repr (cut at ``limit``) and, for
    non-builtin types, the type name."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not replace the message
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    if type(value).__module__ != "builtins" or isinstance(value, bool):
        return f"{text} ({type(value).__name__})"
    return text


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_) or (isinstance(value, np.ndarray) and value.dtype == bool)


def _scalar(value: Any) -> Any:
    """A 0-d numpy array as its scalar; anything else unchanged."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


def check_real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allowed: str | None = None,
) -> float:
    """``value`` as a finite float in the interval given by ``low`` and ``high`` (closed unless ``*_open``).

    Not a real number (None, a bool, a complex number, a string, a sequence): TypeError-flavoured error.
    NaN, infinity or out of range: ValueError-flavoured. ``allowed`` overrides the range text of the message.
    """
    v = _scalar(value)
    if _is_bool(v) or not isinstance(v, numbers.Real):
        allowed = _range_text(low, high, low_open, high_open, allowed)
        raise InvalidParameterError(name, f"{name} must be a real number{allowed}, got {describe(value)}")
    f = float(v)
    ok = np.isfinite(f)
    if ok and low is not None:
        ok = f > low if low_open else f >= low
    if ok and high is not None:
        ok = f < high if high_open else f <= high
    if not ok:
        allowed = _range_text(low, high, low_open, high_open, allowed, sep=" and")
        raise InvalidParameterError(name, f"{name} must be finite{allowed}, got {describe(value)}")
    return f


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool, allowed: str | None, sep: str = "") -> str:
    if allowed is not None:
        return f"{sep} {allowed}"
    if low is not None and high is not None:
        return f"{sep} in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{sep} {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{sep} {'<' if high_open else '<='} {high:g}"
    return ""


def check_integer(name: str, value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int in [minimum, maximum]; a float with an integral value (3.0) is accepted, a bool is not."""
    v = _scalar(value)
    bounds = f" >= {minimum}" if maximum is None else f" in [{minimum}, {maximum}]"
    if minimum is None:
        bounds = "" if maximum is None else f" <= {maximum}"
    if _is_bool(v) or not isinstance(v, numbers.Real):
        raise InvalidParameterError(name, f"{name} must be an integer{bounds}, got {describe(value)}")
    if isinstance(v, numbers.Integral):
        i = int(v)
    else:
        f = float(v)
        if not (np.isfinite(f) and f == int(f)):
            raise InvalidParameterError(name, f"{name} must be an integer{bounds}, got {describe(value)}")
        i = int(f)
    if (minimum is not None and i < minimum) or (maximum is not None and i > maximum):
        raise InvalidParameterError(name, f"{name} must be an integer{bounds}, got {describe(value)}")
    return i


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is True or False (a numpy bool too); anything else, 0 and 1 included, is an error."""
    v = _scalar(value)
    if not isinstance(v, bool | np.bool_):
        raise InvalidParameterError(name, f"{name} must be True or False, got {describe(value)}")
    return bool(v)


def check_choice(name: str, value: Any, options: Iterable[Any]) -> Any:
    """``value`` if it is one of ``options`` (compared by type and equality, so True is not 1)."""
    opts = list(options)
    for o in opts:
        if type(value) is type(o) and value == o:
            return value
    raise InvalidParameterError(name, f"{name} must be one of {opts}, got {describe(value)}")


def check_mapping(name: str, value: Any, *, allow_none: bool = False) -> dict:
    """``value`` as a dict with string keys (None -> {} when ``allow_none``)."""
    if value is None and allow_none:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidParameterError(name, f"{name} must be a dict{' or None' if allow_none else ''}, got {describe(value)}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise InvalidParameterError(name, f"{name} must have string keys, got {describe(bad[0])}")
    return dict(value)


def check_callable(name: str, value: Any, *, allow_none: bool = False) -> Any:
    """``value`` if it is callable (or None when ``allow_none``)."""
    if value is None and allow_none:
        return None
    if not callable(value):
        raise InvalidParameterError(name, f"{name} must be callable{' or None' if allow_none else ''}, got {describe(value)}")
    return value


def check_object(name: str, value: Any, what: str, methods: tuple[str, ...] = (), attributes: tuple[str, ...] = ()) -> Any:
    """``value`` if it has the callable ``methods`` and the ``attributes`` (duck typing); ``what`` says what
    was expected, e.g. "an oracle such as GaussianOracle(0.1)"."""
    missing = [m for m in methods if not callable(getattr(value, m, None))]
    missing += [a for a in attributes if not hasattr(value, a)]
    if missing:
        lacks = ", ".join(f"{m}()" if m in methods else m for m in missing)
        raise InvalidParameterError(name, f"{name} must be {what} (it lacks {lacks}), got {describe(value)}")
    return value


def check_array(
    name: str,
    value: Any,
    *,
    ndim: int | tuple[int, ...] | None = None,
    shape: tuple[int | None, ...] | None = None,
    finite: bool = True,
    nonempty: bool = True,
) -> np.ndarray:
    """``value`` as a float array: numeric (bool and real dtypes; never complex, strings or objects), with
    ``ndim`` axes or the ``shape`` (None entries are free), finite unless ``finite=False``, and non-empty."""
    if isinstance(value, str | bytes) or value is None:
        raise InvalidParameterError(name, f"{name} must be a real numeric array, got {describe(value)}")
    try:
        raw = np.asarray(value)
    except Exception:  # ragged nested lists and the like
        raise InvalidParameterError(name, f"{name} must be a real numeric array, got {describe(value)}") from None
    if raw.dtype == object:
        try:
            raw = np.asarray(raw.tolist(), dtype=float) if all(isinstance(_scalar(v), numbers.Real) for v in raw.flat) else raw
        except Exception:
            pass
    if not (raw.dtype == bool or np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating)):
        kind = "complex" if np.issubdtype(raw.dtype, np.complexfloating) else f"dtype {raw.dtype}"
        raise InvalidParameterError(name, f"{name} must be a real numeric array, got {kind} data ({describe(value)})")
    arr = raw.astype(float)
    if ndim is not None:
        dims = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in dims:
            want = " or ".join(str(d) for d in dims)
            raise InvalidParameterError(name, f"{name} must have {want} axes, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("..." if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            raise InvalidParameterError(name, f"{name} must be a finite array of shape {want}, got shape {arr.shape}")
    if nonempty and arr.size == 0:
        raise InvalidParameterError(name, f"{name} must not be empty, got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0]) if arr.ndim else ()
        raise InvalidParameterError(name, f"{name} must be finite: {bad} NaN or infinite entries, the first at index {where}")
    return arr


def check_seed(name: str, value: Any) -> int:
    """A seed for ``numpy.random.default_rng``/``SeedSequence``: an integer >= 0 (below 2**128)."""
    return check_integer(name, value, 0, 2**128 - 1)

