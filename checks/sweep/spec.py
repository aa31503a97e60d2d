"""Sweep specs: a TOML file describing a grid of experiment cells, parsed and validated up front.

A spec names an algorithm, an instance (with its parameters), an oracle, fixed algorithm parameters, and the
lists to take the Cartesian product over; every point of the product is run once per seed, and each such
(point, seed) is a *cell*. A cell's configuration is a plain JSON-able dict; its key is the sha256 of its
canonical JSON (sorted keys, no whitespace, floats written by ``repr`` so that they round-trip exactly), so
the same configuration and seed always have the same key, whichever spec or machine produced them.

Example (``checks/specs/tiny.toml`` is a complete one)::

    name = "speedup"
    algorithm = "fednmap"
    rounds = 400                  # or {base = 40000, per = ["n", "Q"], min = 100, max = 40000}
    replicas = 8
    seeds = {start = 0, count = 10}   # or a list [0, 1, 2]
    metrics = ["psi_gap"]

    [instance]                    # make_instance(name, **rest); the grid may set "n"
    name = "least_squares"
    p = 10

    [oracle]                      # make_oracle({...}); omit for the instance's default
    kind = "gaussian"
    sigma2 = 1.0

    [params]                      # fixed algorithm parameters
    gamma = 0.1

    [grid]                        # bare names are algorithm parameters, except n (clients, an instance
    n = [1, 2, 4]                 # parameter); "instance.x", "oracle.x", "params.x" route explicitly
    Q = [1, 2, 4]
    eta_a = [0.01, 0.02]

    [scale]                       # optional: a parameter that follows the grid, here the effective
    eta_s = {times = ["n"], max = 1.0}   # eta_s = min(eta_s * n, 1.0); the coordinate keeps the base value

    [target]                      # rounds to reach it are the cell's headline number
    metric = "psi_gap"
    value = 1e-3

    [report]                      # how `fedbounds report` draws the speedup figures
    axes = ["n", "Q"]
    tune = ["eta_a"]              # best (fewest mean rounds) over these at every (n, Q)
    expected_slope = -1.0

An optional top-level ``cell = "module:function"`` replaces :func:`fedbounds.checks.sweep.cell.compute_cell` (it must
be importable wherever cells run, take the configuration dict and return a dict like
:func:`fedbounds.checks.sweep.cell.summarize` does); it is then part of every key. With the default cell, the instance,
its parameters, the oracle and the algorithm's parameters are checked against the engine's registries.

Every validation error is a :class:`SpecError` (a ``ValueError``) whose message names the field, e.g.
``spec field 'grid.Q': expected a list of integers >= 1, got 'x'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import itertools
import json
import math
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CELLS_ENV",
    "CELL_FORMAT",
    "CELL_WORK",
    "DEFAULT_CELL",
    "REGISTERED_CELLS",
    "Cell",
    "Spec",
    "SpecError",
    "canonical_json",
    "cell_allowed",
    "cell_key",
    "check_cell_work",
    "load_spec",
    "parse_spec",
]

#: Version of the cell configuration layout; part of every key, bumped when a cell's meaning changes.
CELL_FORMAT = 1
#: The cell computation used unless a spec names another (``cell = "module:function"``).
DEFAULT_CELL = "fedbounds.checks.sweep.cell:compute_cell"
#: The cell functions a spec may name: the project's own. A spec is data, so it must not choose arbitrary code
#: to import and call; a cell of one's own (a plugin, a test) is allowed by naming it in :data:`CELLS_ENV`.
REGISTERED_CELLS = frozenset(
    {
        DEFAULT_CELL,
        "fedbounds.checks.sweep.cell:compute_study_cell",
        "fedbounds.checks.studies.exact_cells:compute_inside_cell",
        "fedbounds.checks.studies.spep_grid:compute_spep_cell",
    }
)
CELLS_ENV = "FEDBOUNDS_CELLS"
#: cells whose work is not rounds x replicas x n x Q local gradients: cell -> its estimator ``module:function``, called
#: as ``f(instance params, params, grid) -> (operations, field, value)`` for the spec's most expensive cell
CELL_WORK: dict[str, str] = {
    "fedbounds.checks.studies.spep_grid:compute_spep_cell": "fedbounds.checks.studies.spep_grid:cell_work",
}


def cell_allowed(cell: str) -> bool:
    """Whether a spec may name ``cell``: a registered cell, or one the user allowed in ``$FEDBOUNDS_CELLS``."""
    import os

    extra = {c.strip() for c in os.environ.get(CELLS_ENV, "").split(",") if c.strip()}
    bad = [c for c in sorted(extra) if not _CELL_NAME.fullmatch(c)]
    if bad:
        raise ValueError(f"${CELLS_ENV}: {bad[0]!r} is not a cell name; expected comma-separated module:function "
                         "(dotted Python names, e.g. mypkg.cells:compute)")
    return cell in REGISTERED_CELLS or cell in extra


_CELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")

#: Algorithm names of the engine contract (used when ``fedbounds.algorithms.run`` cannot be imported).
_CONTRACT_ALGORITHMS = (
    "fednmap",
    "ds_fedproxgrad",
    "fedproxgrad",
    "prox_sgd",
    "norm_sgd",
    "fedmid",
    "fedda",
    "fedavg_prox",
    "scaffold_prox",
    "fedprox_prox",
)
#: Metric names of the engine contract.
_CONTRACT_METRICS = (
    "psi_gap",
    "psi",
    "normal_map_sq",
    "natural_residual_sq",
    "grad_F_sq",
    "F",
    "dist_sq",
    "gamma_emp",
    "eta",
    "uplink",
)
#: Parameters that must be integers >= 1 wherever they appear.
_INT_PARAMS = frozenset({"n", "Q", "p", "m", "batch", "num_samples"})
#: Parameters that must be integers >= 0 wherever they appear (data and instance seeds).
_SEED_PARAMS = frozenset({"seed", "data_seed"})
#: Most cells a spec may expand to (each is a row in the store and a task to schedule).
MAX_CELLS = 1_000_000
#: Parameters that must be finite floats > 0 (ints are accepted and stored as floats, so 1 and 1.0 are one cell).
_POSITIVE_FLOAT_PARAMS = frozenset({"gamma", "eta_a", "eta_s", "eta", "eta_hat", "mu", "gamma_eval", "lam", "c"})
#: Parameters that must be finite floats >= 0.
_NONNEG_FLOAT_PARAMS = frozenset({"sigma2", "heterogeneity", "noise", "rho"})

_TOP_FIELDS = {
    "name",
    "description",
    "algorithm",
    "rounds",
    "replicas",
    "seeds",
    "metrics",
    "cell",
    "instance",
    "oracle",
    "params",
    "grid",
    "target",
    "report",
    "scale",
}
_REQUIRED_FIELDS = ("name", "algorithm", "rounds", "seeds", "instance", "grid", "target")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
#: the largest spec file read (a spec is a few kB; a device or a huge file is refused before reading it whole)
MAX_SPEC_BYTES = 1 << 20
_CELL_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class SpecError(ValueError):
    """A malformed spec; the message names the offending field."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field = field_name
        super().__init__(f"spec field '{field_name}': {message}")


def canonical_json(obj: Any) -> str:
    """The canonical JSON text of ``obj``: sorted keys, no whitespace, ASCII, no NaN or infinity.

    Python writes floats with ``repr``, the shortest text that reads back as the same float64, so the text
    (and therefore the key) is exact.
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def cell_key(config: Mapping[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of a cell's configuration (which includes its seed)."""
    return hashlib.sha256(canonical_json(config).encode("ascii")).hexdigest()


@dataclass(frozen=True)
class Cell:
    """One unit of work: a configuration (JSON-able, seed included), its key, and its grid coordinates."""

    key: str
    config: dict
    coords: dict


@dataclass(frozen=True)
class Spec:
    """A validated sweep spec. Use :meth:`cells` to expand the grid."""

    name: str
    algorithm: str
    instance: dict
    oracle: dict | None
    params: dict
    grid: dict[str, list]
    seeds: tuple[int, ...]
    replicas: int
    rounds: int | dict
    metrics: tuple[str, ...]
    target: dict
    cell: str = DEFAULT_CELL
    report: dict = field(default_factory=dict)
    scale: dict = field(default_factory=dict)
    description: str = ""
    source: str = ""

    @property
    def fingerprint(self) -> str:
        """sha256 (hex) of the canonical JSON of everything that decides the cells: two specs with the same
        fingerprint expand to the same cells, whatever their comments, description or report settings."""
        body = {
            "name": self.name,
            "algorithm": self.algorithm,
            "instance": self.instance,
            "oracle": self.oracle,
            "params": self.params,
            "grid": self.grid,
            "seeds": list(self.seeds),
            "replicas": self.replicas,
            "rounds": self.rounds,
            "metrics": list(self.metrics),
            "target": self.target,
            "cell": self.cell,
            "scale": self.scale,
            "format": CELL_FORMAT,
        }
        return hashlib.sha256(canonical_json(body).encode("ascii")).hexdigest()

    @property
    def size(self) -> int:
        """Number of grid cells: the product of the grid's list lengths times the number of seeds. Distinct
        configurations can be fewer (a clamped ``[scale]`` can map two grid points to one configuration); a
        sweep computes each distinct configuration once."""
        return math.prod(len(v) for v in self.grid.values()) * len(self.seeds)

    def rounds_for(self, coords: Mapping[str, Any]) -> int:
        """The rounds of the cell at ``coords``: the fixed ``rounds``, or ``ceil(base / prod(coords[per]))``
        clamped to ``[min, max]`` for a scaled budget."""
        if isinstance(self.rounds, int):
            return self.rounds
        r = self.rounds
        scale = math.prod(float(coords[k]) for k in r["per"])
        return int(min(max(math.ceil(r["base"] / scale), r["min"]), r["max"]))

    def iter_cells(self) -> Iterator[Cell]:
        """The cells in run order: seeds outermost (a partial run covers the whole grid with fewer seeds),
        then the grid in the spec's key order."""
        keys = list(self.grid)
        for seed in self.seeds:
            for values in itertools.product(*(self.grid[k] for k in keys)):
                coords = dict(zip(keys, values, strict=True))
                config = self._config(coords, seed)
                yield Cell(cell_key(config), config, {**coords, "seed": seed})

    def cells(self) -> list[Cell]:
        """All cells (see :meth:`iter_cells`)."""
        return list(self.iter_cells())

    def _config(self, coords: Mapping[str, Any], seed: int) -> dict:
        inst = dict(self.instance["params"])
        oracle = dict(self.oracle) if self.oracle is not None else None
        params = dict(self.params)
        for key, value in coords.items():
            section, name = _route(key)
            if section == "instance":
                inst[name] = value
            elif section == "oracle":
                oracle = {**(oracle or {}), name: value}
            else:
                params[name] = value
        sections = {"instance": inst, "oracle": oracle, "params": params}
        for key, rule in self.scale.items():
            section, name = _route(key)
            target = sections[section]
            assert target is not None  # validated: the scaled parameter exists
            target[name] = _apply_scale(name, target[name], rule, coords)
        config = {
            "format": CELL_FORMAT,
            "algorithm": self.algorithm,
            "instance": {"name": self.instance["name"], "params": inst},
            "oracle": oracle,
            "params": params,
            "rounds": self.rounds_for(coords),
            "replicas": self.replicas,
            "metrics": list(self.metrics),
            "target": dict(self.target),
            "seed": int(seed),
        }
        if self.cell != DEFAULT_CELL:
            config["cell"] = self.cell
        return config


def _apply_scale(name: str, value: float, rule: Mapping[str, Any], coords: Mapping[str, Any]) -> float | int:
    """``clamp(value * prod(coords[times]) / prod(coords[over]), min, max)``; rounded up for integer parameters."""
    v = float(value) * math.prod(float(coords[k]) for k in rule["times"]) / math.prod(float(coords[k]) for k in rule["over"])
    v = min(max(v, rule.get("min", -math.inf)), rule.get("max", math.inf))
    return max(math.ceil(v), 1) if name in _INT_PARAMS else v


def _route(grid_key: str) -> tuple[str, str]:
    """Where a grid key goes: ``("instance" | "oracle" | "params", name)``."""
    if "." in grid_key:
        section, name = grid_key.split(".", 1)
        return section, name
    return ("instance", grid_key) if grid_key == "n" else ("params", grid_key)


# ---------------------------------------------------------------- validation helpers


def _describe(value: Any) -> str:
    return repr(value)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (isinstance(v, int | float)) and not isinstance(v, bool)


def _json_value(where: str, value: Any) -> Any:
    """Check that ``value`` is JSON-able (no TOML dates, no NaN/inf) and return it unchanged."""
    if isinstance(value, bool | str) or _is_int(value):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SpecError(where, f"expected a finite number, got {_describe(value)}")
        return value
    if isinstance(value, list):
        return [_json_value(f"{where}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): _json_value(f"{where}.{k}", v) for k, v in value.items()}
    raise SpecError(where, f"expected a number, string, boolean, list or table, got {_describe(value)}")


def _typed_value(where: str, name: str, value: Any) -> Any:
    """Validate a parameter value by its name's known type; ints become floats for float parameters."""
    value = _json_value(where, value)
    if name in _INT_PARAMS:
        if not (_is_int(value) and value >= 1):
            raise SpecError(where, f"expected an integer >= 1, got {_describe(value)}")
    elif name in _SEED_PARAMS:
        if not (_is_int(value) and value >= 0):
            raise SpecError(where, f"expected an integer >= 0, got {_describe(value)}")
    elif name in _POSITIVE_FLOAT_PARAMS:
        if not (_is_number(value) and value > 0):
            raise SpecError(where, f"expected a finite number > 0, got {_describe(value)}")
        value = float(value)
    elif name in _NONNEG_FLOAT_PARAMS:
        if not (_is_number(value) and value >= 0):
            raise SpecError(where, f"expected a finite number >= 0, got {_describe(value)}")
        value = float(value)
    return value


def _grid_list(where: str, name: str, values: Any) -> list:
    """Validate one grid list: non-empty, no duplicates, every entry of the parameter's type."""
    if name in _INT_PARAMS:
        kind = "a list of integers >= 1"
    elif name in _SEED_PARAMS:
        kind = "a list of integers >= 0"
    elif name in _POSITIVE_FLOAT_PARAMS:
        kind = "a list of numbers > 0"
    elif name in _NONNEG_FLOAT_PARAMS:
        kind = "a list of numbers >= 0"
    else:
        kind = "a list of values"
    if not isinstance(values, list):
        raise SpecError(where, f"expected {kind}, got {_describe(values)}")
    if not values:
        raise SpecError(where, f"expected {kind}, got an empty list")
    out = []
    for v in values:
        try:
            out.append(_typed_value(where, name, v))
        except SpecError:
            raise SpecError(where, f"expected {kind}, got {_describe(v)}") from None
    seen: set[str] = set()
    for v in out:
        c = canonical_json(v)
        if c in seen:
            raise SpecError(where, f"duplicate value {_describe(v)}")
        seen.add(c)
    return out


def _table(data: Mapping[str, Any], key: str, *, required: bool) -> dict | None:
    if key not in data:
        if required:
            raise SpecError(key, "missing (required)")
        return None
    value = data[key]
    if not isinstance(value, dict):
        raise SpecError(key, f"expected a table, got {_describe(value)}")
    return value


def _int_field(where: str, value: Any, minimum: int) -> int:
    if not (_is_int(value) and value >= minimum):
        raise SpecError(where, f"expected an integer >= {minimum}, got {_describe(value)}")
    return int(value)


def _algorithm_known(name: str) -> bool:
    """Whether the engine registry (or, while it cannot be imported, the contract's list) has ``name``."""
    try:
        from fedbounds.algorithms.run import ALGORITHMS

        return name in ALGORITHMS
    except ImportError:
        return name in _CONTRACT_ALGORITHMS


def _known_metrics() -> tuple[str, ...]:
    try:
        from fedbounds.algorithms.metrics import METRIC_NAMES
    except ImportError:
        return _CONTRACT_METRICS
    return tuple(dict.fromkeys([*_CONTRACT_METRICS, *METRIC_NAMES]))


# ---------------------------------------------------------------- parsing


def parse_spec(text: str, *, source: str = "<spec>") -> Spec:
    """Parse and validate a spec from TOML text. Raises :class:`SpecError` naming the first bad field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError("<toml>", f"{source} is not valid TOML: {exc}") from None
    except RecursionError:
        raise SpecError("<toml>", f"{source} nests tables or arrays too deeply to be a spec") from None
    try:
        return _validate(data, text)
    except RecursionError:
        raise SpecError("<toml>", f"{source} nests tables or arrays too deeply to be a spec") from None


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file. A bare name without a suffix (``tiny``) finds a shipped spec in
    ``checks/specs/``."""
    p = Path(path)
    specs_dir = Path(__file__).resolve().parent.parent / "specs"
    bare = not p.exists() and p.suffix == "" and p.parent == Path(".")
    if bare and (specs_dir / f"{p.name}.toml").exists():
        p = specs_dir / f"{p.name}.toml"
    try:
        text = _read_spec_text(p)
    except UnicodeDecodeError as exc:
        raise ValueError(f"spec {str(p)!r} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})") from None
    except OSError as exc:
        hint = ""
        if bare:
            hint = f", and no shipped spec has that name (shipped: {', '.join(sorted(q.stem for q in specs_dir.glob('*.toml')))})"
        raise ValueError(f"cannot read spec {str(path)!r}: {exc.strerror or exc}{hint}") from None
    return parse_spec(text, source=str(p))


def _read_spec_text(p: Path) -> str:
    """The text of a regular file of at most :data:`MAX_SPEC_BYTES` (a FIFO, a device such as ``/dev/zero``
    or a folder is refused without reading it)."""
    import stat

    st = p.stat()
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "is a folder, not a spec file", str(p))
    if not stat.S_ISREG(st.st_mode):
        raise OSError(22, "not a regular file (a device, FIFO or socket)", str(p))
    if st.st_size > MAX_SPEC_BYTES:
        raise OSError(27, f"larger than {MAX_SPEC_BYTES} bytes; a spec is a small TOML file", str(p))
    with open(p, "rb") as fh:
        return fh.read(MAX_SPEC_BYTES + 1).decode("utf-8")


def _validate(data: dict, text: str) -> Spec:
    unknown = sorted(set(data) - _TOP_FIELDS)
    if unknown:
        raise SpecError(unknown[0], f"unknown field; expected one of {sorted(_TOP_FIELDS)}")
    for key in _REQUIRED_FIELDS:
        if key not in data:
            raise SpecError(key, "missing (required)")

    name = data["name"]
    if not (isinstance(name, str) and _NAME_RE.match(name)):
        raise SpecError("name", f"expected a name of at most 64 letters, digits, '_', '.', '-', got {_describe(name)}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise SpecError("description", f"expected a string, got {_describe(description)}")

    algorithm = data["algorithm"]
    if not isinstance(algorithm, str) or not _algorithm_known(algorithm):
        raise SpecError("algorithm", f"unknown algorithm {_describe(algorithm)}; expected one of {list(_CONTRACT_ALGORITHMS)}")

    cell = data.get("cell", DEFAULT_CELL)
    if not (isinstance(cell, str) and _CELL_RE.match(cell)):
        raise SpecError("cell", f"expected 'module:function', got {_describe(cell)}")
    if not cell_allowed(cell):
        raise SpecError(
            "cell",
            f"{cell!r} is not a registered cell function; registered: {sorted(REGISTERED_CELLS)} "
            f"(a cell of your own: name it in the environment variable {CELLS_ENV}, comma-separated)",
        )

    # instance
    inst = _table(data, "instance", required=True)
    assert inst is not None
    inst_name = inst.get("name")
    if not (isinstance(inst_name, str) and inst_name):
        raise SpecError("instance.name", f"expected the instance's registry name (a string), got {_describe(inst_name)}")
    inst_params = {k: _typed_value(f"instance.{k}", k, v) for k, v in inst.items() if k != "name"}

    # oracle
    oracle_t = _table(data, "oracle", required=False)
    oracle = None if oracle_t is None else {k: _typed_value(f"oracle.{k}", k, v) for k, v in oracle_t.items()}

    # fixed algorithm parameters
    params_t = _table(data, "params", required=False) or {}
    params = {k: _typed_value(f"params.{k}", k, v) for k, v in params_t.items()}

    # grid
    grid_t = _table(data, "grid", required=True)
    assert grid_t is not None
    if not grid_t:
        raise SpecError("grid", "expected at least one parameter list, got an empty table")
    grid: dict[str, list] = {}
    for key, values in grid_t.items():
        where = f"grid.{key}"
        section, pname = _route(key)
        if section not in ("instance", "oracle", "params") or not pname:
            raise SpecError(where, "a dotted grid key must start with 'instance.', 'oracle.' or 'params.'")
        if pname == "seed" and section != "instance":
            raise SpecError(where, "seeds are not a grid parameter; list them in 'seeds'")
        if section == "instance" and pname == "name":
            raise SpecError(where, "the instance name cannot be swept; write one spec per instance")
        fixed = {"instance": inst_params, "oracle": oracle or {}, "params": params}[section]
        if pname in fixed:
            raise SpecError(where, f"also fixed in [{section}]; give it in one place")
        grid[key] = _grid_list(where, pname, values)
    if oracle is None and any(_route(k)[0] == "oracle" for k in grid):
        raise SpecError("oracle", "missing: the grid sweeps an oracle parameter but there is no [oracle] table")

    # seeds, replicas, rounds
    seeds = _seeds(data["seeds"])
    replicas = _int_field("replicas", data.get("replicas", 1), 1)
    rounds = _rounds(data["rounds"], grid)

    # metrics and target
    known_metrics = _known_metrics()
    metrics_v = data.get("metrics", [])
    if not isinstance(metrics_v, list) or not all(isinstance(m, str) for m in metrics_v):
        raise SpecError("metrics", f"expected a list of metric names, got {_describe(metrics_v)}")
    for m in metrics_v:
        if m not in known_metrics:
            raise SpecError("metrics", f"unknown metric {m!r}; expected some of {sorted(known_metrics)}")
    target = _target(data["target"], known_metrics)
    metrics = tuple(sorted({*metrics_v, target["metric"]}))

    report = _report(data.get("report", {}), grid)
    scale = _scale(data.get("scale", {}), grid, {"instance": inst_params, "oracle": oracle or {}, "params": params})
    cells = math.prod(len(v) for v in grid.values()) * len(seeds)
    if cells > MAX_CELLS:
        raise SpecError("grid", f"the grid times the seeds makes {cells} cells; at most {MAX_CELLS}")
    check_memory(inst_name, inst_params, grid, replicas, rounds, len(metrics))
    if cell in CELL_WORK:
        check_cell_work(cell, inst_params, params, grid)
    else:
        check_work(inst_name, inst_params, params, grid, replicas, rounds)
    if cell == DEFAULT_CELL:
        _check_engine_names(algorithm, inst_name, inst_params, params, grid)
        if oracle is not None:
            _check_oracle(oracle, grid)

    return Spec(
        name=name,
        algorithm=algorithm,
        instance={"name": inst_name, "params": inst_params},
        oracle=oracle,
        params=params,
        grid=grid,
        seeds=seeds,
        replicas=replicas,
        rounds=rounds,
        metrics=metrics,
        target=target,
        cell=cell,
        report=report,
        scale=scale,
        description=description,
        source=text,
    )


def memory_limit() -> int:
    """Bytes one cell may plan to use: half the machine's physical memory (8 GiB where it cannot be read)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")) // 2
    except (AttributeError, ValueError, OSError):
        return 8 * 2**30


def _cell_bytes(sizes: Mapping[str, int], metrics: int) -> int:
    """A rough lower estimate of one cell's memory: the data (n m p), per-client Hessians (n p^2), the
    replicated iterates (a few R n p) and the recorded metrics ((T + 1) R per metric), in float64."""
    n, m, p, r, t = (sizes[k] for k in ("n", "m", "p", "replicas", "rounds"))
    return 8 * (n * m * p + n * p * p + 6 * r * n * p + (t + 1) * r * max(metrics, 1))


def _sizes(
    inst_name: str, inst_params: Mapping[str, Any], grid: Mapping[str, list], replicas: int, rounds: int | dict
) -> dict[str, tuple[str, int]]:
    """The largest n, m, p, replicas and rounds a cell of the spec can have, each with the field that sets it."""
    defaults: dict[str, Any] = {}
    with contextlib.suppress(ImportError, KeyError):
        from fedbounds.algorithms.instances import INSTANCES

        defaults = {k: v.default for k, v in inspect.signature(INSTANCES[inst_name]).parameters.items()}
    fields: dict[str, tuple[str, int]] = {}
    for k in ("n", "m", "p"):
        if k in grid:
            fields[k] = (f"grid.{k}", max(int(v) for v in grid[k]))
        elif f"instance.{k}" in grid:
            fields[k] = (f"grid.instance.{k}", max(int(v) for v in grid[f"instance.{k}"]))
        elif k in inst_params:
            fields[k] = (f"instance.{k}", int(inst_params[k]))
        else:
            d = defaults.get(k)
            fields[k] = (f"instance.{k}", int(d) if _is_int(d) else 1)
    fields["replicas"] = ("replicas", int(replicas))
    fields["rounds"] = ("rounds", int(rounds if isinstance(rounds, int) else rounds["max"]))
    return fields


def check_memory(
    inst_name: str, inst_params: Mapping[str, Any], grid: Mapping[str, list], replicas: int, rounds: int | dict, metrics: int
) -> None:
    """Reject, before any cell runs, sizes whose arrays cannot fit in memory; the error names the field to
    reduce (the one whose reduction to 1 saves the most)."""
    fields = _sizes(inst_name, inst_params, grid, replicas, rounds)
    sizes = {k: v for k, (_, v) in fields.items()}
    need, limit = _cell_bytes(sizes, metrics), memory_limit()
    if need <= limit:
        return
    culprit = min(fields, key=lambda k: _cell_bytes({**sizes, k: 1}, metrics))
    where, value = fields[culprit]
    raise SpecError(where, f"{value} makes one cell need about {need / 2**30:.3g} GiB, more than the {limit / 2**30:.3g} GiB allowed")


#: the environment variable that raises :func:`work_limit`
WORK_ENV = "FEDBOUNDS_MAX_CELL_WORK"


def work_limit() -> float:
    """Floating-point operations one cell may plan: 1e13 (hours on one core), or ``$FEDBOUNDS_MAX_CELL_WORK``."""
    text = os.environ.get(WORK_ENV, "").strip()
    if not text:
        return 1e13
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"${WORK_ENV} must be a number of operations, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"${WORK_ENV} must be a positive finite number, got {text!r}")
    return value


def check_work(
    inst_name: str,
    inst_params: Mapping[str, Any],
    params: Mapping[str, Any],
    grid: Mapping[str, list],
    replicas: int,
    rounds: int | dict,
) -> None:
    """Reject, before any cell runs, a cell whose arithmetic alone would take hours: rounds x replicas x n x Q
    local gradients of m x p each. Validation bounds time as memory: ``Q = 10**12`` fits in memory but never ends.
    The limit is :func:`work_limit` (raise it with ``$FEDBOUNDS_MAX_CELL_WORK``)."""
    fields = _sizes(inst_name, inst_params, grid, replicas, rounds)
    if "Q" in grid:
        fields["Q"] = ("grid.Q", max(int(v) for v in grid["Q"] if _is_int(v)) if any(_is_int(v) for v in grid["Q"]) else 1)
    elif _is_int(params.get("Q")):
        fields["Q"] = ("params.Q", int(params["Q"]))
    work = math.prod(float(v) for _, v in fields.values())
    limit = work_limit()
    if work <= limit:
        return
    culprit = max((k for k in fields if k != "m"), key=lambda k: fields[k][1])
    where, value = fields[culprit]
    raise SpecError(
        where,
        f"{value} makes one cell about {work:.3g} operations, more than the {limit:.3g} allowed "
        f"(hours of computing; raise the limit with ${WORK_ENV} if you mean it)",
    )


def check_cell_work(cell: str, inst_params: Mapping[str, Any], params: Mapping[str, Any], grid: Mapping[str, list]) -> None:
    """:func:`check_work` for a cell with its own estimator (:data:`CELL_WORK`): the same limit, the same message."""
    import importlib

    module, _, func = CELL_WORK[cell].partition(":")
    work, where, value = getattr(importlib.import_module(module), func)(inst_params, params, grid)
    limit = work_limit()
    if work > limit:
        raise SpecError(
            where,
            f"{value} makes one cell about {work:.3g} operations, more than the {limit:.3g} allowed "
            f"(hours of computing; raise the limit with ${WORK_ENV} if you mean it)",
        )


def _check_engine_names(algorithm: str, inst_name: str, inst_params: Mapping, params: Mapping, grid: Mapping[str, list]) -> None:
    """For the default cell: the instance is registered, and every instance and algorithm parameter (fixed or
    swept) is one the factory / the algorithm accepts. Skipped for whatever part of the engine cannot be
    imported (the cell then reports it)."""
    swept = {
        section: [(f"grid.{k}", name) for k in grid for sec, name in [_route(k)] if sec == section] for section in ("instance", "params")
    }
    try:
        import inspect

        from fedbounds.algorithms.instances import INSTANCES
    except ImportError:
        pass
    else:
        if inst_name not in INSTANCES:
            raise SpecError("instance.name", f"unknown instance {inst_name!r}; expected one of {sorted(INSTANCES)}")
        allowed = list(inspect.signature(INSTANCES[inst_name]).parameters)
        for where, name in [*((f"instance.{k}", k) for k in inst_params), *swept["instance"]]:
            if name not in allowed:
                raise SpecError(where, f"instance {inst_name!r} has no parameter {name!r}; allowed: {allowed}")
    try:
        from fedbounds.algorithms.run import ALGORITHMS

        alg = ALGORITHMS[algorithm]
    except (ImportError, KeyError):
        return
    required, optional = getattr(alg, "required", None), getattr(alg, "optional", None)
    if required is None or optional is None:
        return
    allowed = [*required, *optional, "gamma_eval"]
    for where, name in [*((f"params.{k}", k) for k in params), *swept["params"]]:
        if name not in allowed:
            raise SpecError(where, f"algorithm {algorithm!r} has no parameter {name!r}; allowed: {allowed}")
    given = set(params) | {name for _, name in swept["params"]}
    missing = [k for k in required if k not in given]
    if missing:
        raise SpecError("params", f"algorithm {algorithm!r} needs {missing} (in [params] or [grid])")


def _scale(value: Any, grid: Mapping[str, list], fixed: Mapping[str, Mapping]) -> dict:
    """``[scale]``: parameter -> {times, over, min, max}; the parameter is fixed or swept and numeric, the
    factors are grid keys holding positive numbers."""
    if not isinstance(value, dict):
        raise SpecError("scale", f"expected a table, got {_describe(value)}")
    out: dict[str, dict] = {}
    for key, rule in value.items():
        where = f"scale.{key}"
        section, name = _route(key)
        if section not in fixed:
            raise SpecError(where, "a dotted key must start with 'instance.', 'oracle.' or 'params.'")
        if key in grid:
            values = grid[key]
        elif name in fixed[section]:
            values = [fixed[section][name]]
        else:
            raise SpecError(where, f"no parameter {name!r} in [{section}] or [grid] to scale")
        if not all(_is_number(v) and v > 0 for v in values):
            raise SpecError(where, "only a parameter holding positive numbers can be scaled")
        if not isinstance(rule, dict):
            raise SpecError(where, f"expected a table with 'times', 'over', 'min', 'max', got {_describe(rule)}")
        extra = sorted(set(rule) - {"times", "over", "min", "max"})
        if extra:
            raise SpecError(f"{where}.{extra[0]}", "unknown field; expected 'times', 'over', 'min', 'max'")
        clean: dict[str, Any] = {}
        for part in ("times", "over"):
            keys = rule.get(part, [])
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise SpecError(f"{where}.{part}", f"expected a list of grid keys, got {_describe(keys)}")
            for k in keys:
                if k not in grid:
                    raise SpecError(f"{where}.{part}", f"{k!r} is not a grid key; expected some of {list(grid)}")
                if k == key:
                    raise SpecError(f"{where}.{part}", "a parameter cannot scale by itself")
                if not all(_is_number(v) and v > 0 for v in grid[k]):
                    raise SpecError(f"{where}.{part}", f"grid key {k!r} must hold positive numbers to scale by")
            clean[part] = list(keys)
        if not clean["times"] and not clean["over"]:
            raise SpecError(where, "expected at least one grid key in 'times' or 'over'")
        for bound in ("min", "max"):
            if bound in rule:
                b = rule[bound]
                if not (_is_number(b) and math.isfinite(b) and b > 0):
                    raise SpecError(f"{where}.{bound}", f"expected a finite number > 0, got {_describe(b)}")
                clean[bound] = float(b)
        if clean.get("min", 0.0) > clean.get("max", math.inf):
            raise SpecError(f"{where}.max", "expected max >= min")
        out[key] = clean
    return out


def _check_oracle(oracle: Mapping[str, Any], grid: Mapping[str, list]) -> None:
    """For the default cell: the oracle kind is registered and its keys (fixed or swept) are its fields."""
    try:
        import dataclasses

        from fedbounds.algorithms.oracles import ORACLES
    except ImportError:
        return
    swept = [(f"grid.{k}", _route(k)[1]) for k in grid if _route(k)[0] == "oracle"]
    kinds = [oracle["kind"]] if "kind" in oracle else [v for k, v in grid.items() if k == "oracle.kind"]
    if not kinds:
        raise SpecError("oracle.kind", f"missing (required); expected one of {sorted(ORACLES)}")
    for kind in kinds:
        if kind not in ORACLES:
            where = "oracle.kind" if "kind" in oracle else "grid.oracle.kind"
            raise SpecError(where, f"unknown oracle {kind!r}; expected one of {sorted(ORACLES)}")
        allowed = [f.name for f in dataclasses.fields(ORACLES[kind]) if f.name != "name"]
        for where, name in [*((f"oracle.{k}", k) for k in oracle if k != "kind"), *swept]:
            if name != "kind" and name not in allowed:
                raise SpecError(where, f"oracle {kind!r} has no parameter {name!r}; allowed: {allowed}")


def _seeds(value: Any) -> tuple[int, ...]:
    if isinstance(value, dict):
        extra = sorted(set(value) - {"start", "count"})
        if extra:
            raise SpecError(f"seeds.{extra[0]}", "unknown field; expected 'start' and 'count'")
        if "count" not in value:
            raise SpecError("seeds.count", "missing (required)")
        start = _int_field("seeds.start", value.get("start", 0), 0)
        count = _int_field("seeds.count", value["count"], 1)
        if count > MAX_CELLS:
            raise SpecError("seeds.count", f"expected at most {MAX_CELLS} seeds, got {count}")
        if start + count > 2**63:
            raise SpecError("seeds.start", f"expected seeds below 2**63, got start {start} and count {count}")
        return tuple(range(start, start + count))
    if not isinstance(value, list) or not value:
        raise SpecError("seeds", f"expected a non-empty list of integers >= 0 or {{start, count}}, got {_describe(value)}")
    for v in value:
        if not (_is_int(v) and v >= 0):
            raise SpecError("seeds", f"expected a list of integers >= 0, got {_describe(v)}")
    if len(value) > MAX_CELLS:
        raise SpecError("seeds", f"expected at most {MAX_CELLS} seeds, got {len(value)}")
    if len(set(value)) != len(value):
        raise SpecError("seeds", "duplicate seeds")
    return tuple(int(v) for v in value)


def _rounds(value: Any, grid: Mapping[str, list]) -> int | dict:
    if not isinstance(value, dict):
        return _int_field("rounds", value, 1)
    extra = sorted(set(value) - {"base", "per", "min", "max"})
    if extra:
        raise SpecError(f"rounds.{extra[0]}", "unknown field; expected 'base', 'per', 'min', 'max'")
    if "base" not in value:
        raise SpecError("rounds.base", "missing (required)")
    base = _int_field("rounds.base", value["base"], 1)
    per = value.get("per", [])
    if not isinstance(per, list) or not all(isinstance(k, str) for k in per):
        raise SpecError("rounds.per", f"expected a list of grid keys, got {_describe(per)}")
    for k in per:
        if k not in grid:
            raise SpecError("rounds.per", f"{k!r} is not a grid key; expected some of {list(grid)}")
        if not all(_is_number(v) and v > 0 for v in grid[k]):
            raise SpecError("rounds.per", f"grid key {k!r} must hold positive numbers to scale the rounds")
    lo = _int_field("rounds.min", value.get("min", 1), 1)
    hi = _int_field("rounds.max", value.get("max", base), 1)
    if hi < lo:
        raise SpecError("rounds.max", f"expected max >= min = {lo}, got {hi}")
    return {"base": base, "per": list(per), "min": lo, "max": hi}


def _target(value: Any, known_metrics: tuple[str, ...]) -> dict:
    if not isinstance(value, dict):
        raise SpecError("target", f"expected a table with 'metric' and 'value', got {_describe(value)}")
    extra = sorted(set(value) - {"metric", "value", "upper", "level"})
    if extra:
        raise SpecError(f"target.{extra[0]}", "unknown field; expected 'metric', 'value', 'upper', 'level'")
    for key in ("metric", "value"):
        if key not in value:
            raise SpecError(f"target.{key}", "missing (required)")
    metric = value["metric"]
    if not isinstance(metric, str) or metric not in known_metrics:
        raise SpecError("target.metric", f"unknown metric {_describe(metric)}; expected one of {sorted(known_metrics)}")
    v = value["value"]
    if not (_is_number(v) and math.isfinite(v)):
        raise SpecError("target.value", f"expected a finite number, got {_describe(v)}")
    upper = value.get("upper", False)
    if not isinstance(upper, bool):
        raise SpecError("target.upper", f"expected true or false, got {_describe(upper)}")
    out: dict[str, Any] = {"metric": metric, "value": float(v), "upper": upper}
    if upper:
        level = value.get("level", 0.95)
        if not (_is_number(level) and 0 < level < 1):
            raise SpecError("target.level", f"expected a number in (0, 1), got {_describe(level)}")
        out["level"] = float(level)
    elif "level" in value:
        raise SpecError("target.level", "only meaningful with upper = true")
    return out


def _report(value: Any, grid: Mapping[str, list]) -> dict:
    if not isinstance(value, dict):
        raise SpecError("report", f"expected a table, got {_describe(value)}")
    extra = sorted(set(value) - {"axes", "tune", "expected_slope", "level"})
    if extra:
        raise SpecError(f"report.{extra[0]}", "unknown field; expected 'axes', 'tune', 'expected_slope', 'level'")
    default_axes = [k for k in ("n", "Q") if k in grid]
    axes = value.get("axes", default_axes)
    tune = value.get("tune", [])
    for where, keys in (("report.axes", axes), ("report.tune", tune)):
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise SpecError(where, f"expected a list of grid keys, got {_describe(keys)}")
        for k in keys:
            if k not in grid:
                raise SpecError(where, f"{k!r} is not a grid key; expected some of {list(grid)}")
    for k in axes:
        if not all(_is_number(v) and v > 0 for v in grid[k]):
            raise SpecError("report.axes", f"grid key {k!r} must hold positive numbers to be a log-log axis")
    if set(axes) & set(tune):
        raise SpecError("report.tune", "a key cannot be both an axis and tuned over")
    slope = value.get("expected_slope", -1.0)
    if not (_is_number(slope) and math.isfinite(slope)):
        raise SpecError("report.expected_slope", f"expected a finite number, got {_describe(slope)}")
    level = value.get("level", 0.95)
    if not (_is_number(level) and 0 < level < 1):
        raise SpecError("report.level", f"expected a number in (0, 1), got {_describe(level)}")
    return {"axes": list(axes), "tune": list(tune), "expected_slope": float(slope), "level": float(level)}
