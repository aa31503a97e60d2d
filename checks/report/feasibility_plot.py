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
    if not ancestor.exists():  # never create folders the user did not ask for
        raise ValueError(f"--plot {text!r} cannot be written: its folder {str(ancestor)!r} does not exist; create it first")
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


def projected_margins(result: FeasibilityResult, axes: tuple[str, str]) -> tuple[dict[str, sp.Expr], list[str]]:
    """Each condition's margin as an expression in the two axis symbols (the other parameters at the point), and
    the conditions left out with why.

    A parameter off the axes that was not given (it sits at its largest admissible value) is projected out: its own
    upper-bound condition is met by a small enough value, so that condition is not drawn (holding the parameter at
    its bound would squeeze the region to a line: ``gamma,eta_hat`` with eta_a at its largest at the chosen gamma).
    """
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
    replaced_syms = {r for r, _ in links.values()}
    own = {c.name: c.parameter for c in result.conditions}
    dropped = []
    out = {}
    for name, expr in result.region.items():
        p = own.get(name)
        psym = result.region_symbols.get(p) if p is not None else None
        elsewhere = psym is not None and any(
            psym in e.xreplace({r: b for r, b in links.values()}).free_symbols for k, e in result.region.items() if k != name)
        if psym is not None and p not in axes and p not in result.given and psym not in replaced_syms and not elsewhere:
            dropped.append(f"{name} not drawn ({p} not given: met by a small enough {p})")
            continue
        for replaced, by in links.values():
            expr = expr.xreplace({replaced: by})
        free = {s: sp.Float(v) for s, v in fixed.items() if s in expr.free_symbols and s not in syms.values()}
        out[name] = expr.xreplace(free)
    return out, dropped


def region_margins(result: FeasibilityResult, axes: tuple[str, str]) -> dict[str, sp.Expr]:
    """The drawn conditions' margins in the two axis symbols (:func:`projected_margins` without the notes)."""
    return projected_margins(result, axes)[0]


def plot_region(result: FeasibilityResult, axes: tuple[str, str], path: str | Path, *, resolution: int = 240) -> Path:
    """:func:`draw_region` without the PEP steps, returning the path only."""
    return draw_region(result, axes, path, resolution=resolution)[0]


def _pep_segment(pep: dict | None, axes: tuple[str, str]) -> tuple[float, float] | None:
    """The end of the PEP-certified segment k (eta_a, eta_hat) in the plane ``axes``, or None."""
    if not pep or not pep.get("covered") or set(axes) != {"eta_a", "eta_hat"}:
        return None
    return (pep[axes[0]], pep[axes[1]])


def draw_region(
    result: FeasibilityResult, axes: tuple[str, str], path: str | Path, *, resolution: int = 240, pep: dict | None = None
) -> tuple[Path, str]:
    """Draw the feasible region of ``result``'s conditions in the plane ``axes`` and mark the chosen point; with
    ``pep`` (the report's ``pep_certified_steps`` data) covered and axes (eta_a, eta_hat), the PEP-certified steps too.

    Writes ``path`` in the format its extension names (png, pdf, svg, ...) and returns it with a note (what was
    projected out, or why the region is empty). ValueError if an axis is not a parameter of the theorem, or the path
    cannot be written (one line naming it).
    """
    out = check_plot_path(path)
    margins, dropped = projected_margins(result, axes)
    xs, ys = (result.region_symbols[a] for a in axes)
    xmax, ymax = _axis_range(result, axes[0]), _axis_range(result, axes[1])
    seg = _pep_segment(pep, axes)
    log = seg is not None
    if log:
        xlo, ylo = xmax / 16, ymax / 16  # the theorem's region starts below its bounds (axis ends are 1.6 x them)
        xmax, ymax = max(xmax, 1.3 * seg[0]), max(ymax, 1.3 * seg[1])
        gx, gy = np.geomspace(xlo, xmax, resolution), np.geomspace(ylo, ymax, resolution)
    else:
        gx, gy = np.linspace(xmax / resolution, xmax, resolution), np.linspace(ymax / resolution, ymax, resolution)
    X, Y = np.meshgrid(gx, gy)
    feasible = np.ones_like(X, dtype=bool)
    fig = Figure(figsize=(6.4, 4.8))
    ax = fig.subplots()
    colours = mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    handles = []
    for i, (name, expr) in enumerate(margins.items()):
        leftover = expr.free_symbols - {xs, ys}
        if leftover:
            dropped.append(f"{name} not drawn (depends on {', '.join(sorted(map(str, leftover)))})")
            continue
        fn = sp.lambdify((xs, ys), expr, modules="numpy")
        with np.errstate(all="ignore"):
            Z = np.broadcast_to(np.asarray(fn(X, Y), dtype=float), X.shape)
        ok = np.isfinite(Z) & (Z >= 0)
        feasible &= ok
        if np.nanmin(Z) < 0 < np.nanmax(Z):
            ax.contour(X, Y, Z, levels=[0.0], colors=colours[i % len(colours)], linewidths=1.5)
            handles.append(Line2D([], [], color=colours[i % len(colours)], label=f"{name}: boundary"))
    why = "; ".join(dropped)
    if feasible.any():
        ax.contourf(X, Y, feasible.astype(float), levels=[0.5, 1.5], colors=["#9fd69f"], alpha=0.5)
        handles.append(Rectangle((0, 0), 1, 1, color="#9fd69f", alpha=0.5, label="admissible (Theorem's conditions)"))
    else:
        empty = (f"no admissible point in the plane ({axes[0]}, {axes[1]}) with the other parameters at "
                 + (", ".join(f"{k} = {v:.3g}" for k, v in result.chosen.items() if k not in axes) or "the point")
                 + ": give them smaller values to open the region")
        ax.text(0.5, 0.5, "no admissible region here", transform=ax.transAxes, ha="center", va="center", color="crimson")
        why = "; ".join([*dropped, empty])
    if seg is not None:
        ts = np.geomspace(min(gx[0] / seg[0], gy[0] / seg[1]), 1.0, 50)
        (line,) = ax.plot(seg[0] * ts, seg[1] * ts, color="navy", linewidth=2.5,
                          label=f"PEP-certified steps (k <= {pep['k']:.3g} x printed at m = 1, eta_s fixed)")
        handles.append(line)
    px, py = result.chosen.get(axes[0]), result.chosen.get(axes[1])
    if px is not None and py is not None:
        at_point = [
            float(expr.xreplace({xs: sp.Float(px), ys: sp.Float(py)})) for expr in margins.values() if expr.free_symbols <= {xs, ys}
        ]
        status = "admissible" if all(v >= -1e-12 * max(1.0, abs(v)) for v in at_point) else "not admissible"
        (pt,) = ax.plot([px], [py], marker="*", markersize=14, color="crimson", linestyle="none", label=f"point ({status})")
        handles.append(pt)
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(gx[0], xmax)
        ax.set_ylim(gy[0], ymax)
    else:
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
    # staged beside the target and renamed over it: on a full disk the previous plot stays whole
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(tmp, format=out.suffix[1:].lower(), dpi=110)
        os.replace(tmp, out)
    except OSError as exc:
        raise ValueError(f"--plot {str(path)!r} cannot be written: {exc.strerror or exc}; any previous plot is kept") from None
    finally:
        tmp.unlink(missing_ok=True)
    return out, why
