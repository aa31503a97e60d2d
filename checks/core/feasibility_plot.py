"""The feasible region of a theorem's step-size conditions in the plane of two parameters.

Drawn on a bare matplotlib Figure (no pyplot, so importing this never switches a notebook's backend).

The conditions are the result's own margins (``FeasibilityResult.region``: bound - value as sympy, the
theory's expressions with the constants substituted), evaluated on a grid with ``sympy.lambdify``; the
other parameters are held at the result's chosen point, which is marked.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib as mpl
import numpy as np
import sympy as sp
from fedbounds.theory.feasibility import FeasibilityResult
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle


def plot_formats() -> tuple[str, ...]:
    """The file extensions matplotlib writes (png, pdf, svg, eps, ...), sorted."""
    return tuple(sorted(Figure().canvas.get_supported_filetypes()))


def check_plot_path(path: str | Path) -> Path:
    """``path`` if a plot can be written there, else a one-line ValueError naming it (before any work).

    The extension must be one matplotlib writes (it picks the format); the path must not be a folder, and
    its nearest existing folder must be a writable folder.
    """
    text = str(path)
    if not text.strip():
        raise ValueError("--plot needs a file name, got ''")
    out = Path(text)
    ext = out.suffix[1:].lower()
    if ext not in plot_formats():
        shown = f"extension '.{ext}'" if ext else "no extension"
        raise ValueError(f"--plot {text!r} has {shown}; use a name ending in one of: {', '.join('.' + f for f in plot_formats())}")
    if out.is_dir():
        raise ValueError(f"--plot {text!r} is a directory; give a file name")
    ancestor = out.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(f"--plot {text!r} cannot be written: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ValueError(f"--plot {text!r} cannot be written: {ancestor} is not writable")
    return out


def _axis_range(result: FeasibilityResult, name: str) -> float:
    """The upper end of an axis: 1.6 x the larger of the point's value and the parameter's smallest bound."""
    value = float(result.chosen.get(name, 0.0) or 0.0)
    bounds = [c.bound for c in result.conditions if c.required and c.parameter == name]
    bounds += [b.upper for c in result.conditions if c.required for b in c.implied if b.parameter == name and b.upper is not None]
    bounds = [b for b in bounds if b is not None and np.isfinite(b) and b > 0]
    ref = max([value, min(bounds)] if bounds else [value])
    return 1.6 * ref if ref > 0 else 1.0


def region_margins(result: FeasibilityResult, axes: tuple[str, str]) -> dict[str, sp.Expr]:
    """Each condition's margin as an expression in the two axis symbols (the other parameters at the point)."""
    allowed = list(result.region_symbols)
    for a in axes:
        if a not in result.region_symbols:
            raise ValueError(f"--axes must be two of {', '.join(allowed)} for {result.theorem}, got {a!r}")
    syms = {a: result.region_symbols[a] for a in axes}
    links = {a: result.region_links[a] for a in axes if a in result.region_links}
    for a, (replaced, _) in links.items():
        if any(result.region_symbols[b] is replaced for b in axes):
            raise ValueError(f"--axes cannot combine {a} with the parameter it determines ({replaced})")
    fixed = {result.region_symbols[k]: v for k, v in result.chosen.items() if k in result.region_symbols and k not in axes}
    out = {}
    for name, expr in result.region.items():
        for replaced, by in links.values():
            expr = expr.xreplace({replaced: by})
        free = {s: sp.Float(v) for s, v in fixed.items() if s in expr.free_symbols and s not in syms.values()}
        out[name] = expr.xreplace(free)
    return out


def plot_region(result: FeasibilityResult, axes: tuple[str, str], path: str | Path, *, resolution: int = 240) -> Path:
    """Draw the feasible region of ``result``'s conditions in the plane ``axes`` and mark the chosen point.

    Writes ``path`` in the format its extension names (png, pdf, svg, ...) and returns it. ValueError if an
    axis is not a parameter of the theorem, or the path cannot be written (one line naming it).
    """
    out = check_plot_path(path)
    margins = region_margins(result, axes)
    xs, ys = (result.region_symbols[a] for a in axes)
    xmax, ymax = _axis_range(result, axes[0]), _axis_range(result, axes[1])
    X, Y = np.meshgrid(np.linspace(xmax / resolution, xmax, resolution), np.linspace(ymax / resolution, ymax, resolution))
    feasible = np.ones_like(X, dtype=bool)
    fig = Figure(figsize=(6.4, 4.8))
    ax = fig.subplots()
    colours = mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    handles = []
    for i, (name, expr) in enumerate(margins.items()):
        leftover = expr.free_symbols - {xs, ys}
        if leftover:
            continue  # a condition on a parameter that is neither an axis nor fixed: not drawable here
        fn = sp.lambdify((xs, ys), expr, modules="numpy")
        with np.errstate(all="ignore"):
            Z = np.broadcast_to(np.asarray(fn(X, Y), dtype=float), X.shape)
        ok = np.isfinite(Z) & (Z >= 0)
        feasible &= ok
        if np.nanmin(Z) < 0 < np.nanmax(Z):
            ax.contour(X, Y, Z, levels=[0.0], colors=colours[i % len(colours)], linewidths=1.5)
            handles.append(Line2D([], [], color=colours[i % len(colours)], label=f"{name}: boundary"))
    ax.contourf(X, Y, feasible.astype(float), levels=[0.5, 1.5], colors=["#9fd69f"], alpha=0.5)
    handles.append(Rectangle((0, 0), 1, 1, color="#9fd69f", alpha=0.5, label="admissible"))
    px, py = result.chosen.get(axes[0]), result.chosen.get(axes[1])
    if px is not None and py is not None:
        at_point = [
            float(expr.xreplace({xs: sp.Float(px), ys: sp.Float(py)})) for expr in margins.values() if expr.free_symbols <= {xs, ys}
        ]
        status = "admissible" if all(v >= -1e-12 * max(1.0, abs(v)) for v in at_point) else "not admissible"
        (pt,) = ax.plot([px], [py], marker="*", markersize=14, color="crimson", linestyle="none", label=f"point ({status})")
        handles.append(pt)
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, ymax)
    ax.set_xlabel(axes[0])
    ax.set_ylabel(axes[1])
    tied = {k for k, (replaced, _) in result.region_links.items() if str(replaced) in {str(result.region_symbols[a]) for a in axes}}
    tied |= {n for a in axes if a in result.region_links for n, s in result.region_symbols.items() if s is result.region_links[a][0]}
    others = ", ".join(f"{k}={v:.3g}" for k, v in result.chosen.items() if k in result.region_symbols and k not in axes and k not in tied)
    ax.set_title(f"{result.title}\n{others}", fontsize=9)
    ax.legend(handles=handles, fontsize=8, loc="upper right")
    fig.tight_layout()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, format=out.suffix[1:].lower(), dpi=110)
    except OSError as exc:
        raise ValueError(f"--plot {str(path)!r} cannot be written: {exc.strerror or exc}") from None
    return out
