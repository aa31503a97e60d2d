"""The linear-speedup figure is ONE panel comparing the methods, fitted slopes rounded to 2 decimals in the legend
(issue 20, item 6): the committed study's figure (redrawn from its CSVs) and ``fedbounds report``'s product figure."""

from __future__ import annotations

import csv
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from fedbounds.checks.studies import fednmap_speedup as efficiency
from fedbounds.checks.sweep import report

STUDY = Path(__file__).resolve().parents[3] / "results" / "fednmap_speedup"


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The matplotlib figures saved while the test runs (nothing is written)."""
    from matplotlib.figure import Figure

    figures: list[Any] = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: figures.append(self))
    return figures


def _panels(fig: Any) -> list[Any]:
    return [ax for ax in fig.axes if ax.get_visible()]


def _legend(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_study_figure_is_one_panel_with_each_methods_slope(drawn: list[Any], tmp_path: Path) -> None:
    points, slopes = efficiency.read_study_csv(STUDY)
    efficiency.comparison_figure(points, slopes, tmp_path / "rounds_vs_nQ.png")
    (fig,) = drawn
    (ax,) = _panels(fig)
    legend = _legend(ax)
    with (STUDY / "slopes.csv").open() as fh:
        committed = {r["method"]: float(r["slope"]) for r in csv.DictReader(fh) if r["axis"] == "nQ" and r["series"] == "all"}
    assert len(committed) == 4
    for method, slope in committed.items():
        (entry,) = [t for t in legend if t.startswith(f"{method} (")]
        assert f"slope {slope:.2f} [" in entry, entry
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_committed_study_figure_is_the_one_panel_version() -> None:
    """The committed PNG was redrawn (four side-by-side panels were 1680 x 380 pixels)."""
    head = (STUDY / "rounds_vs_nQ.png").read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert width / height < 2, (width, height)


def _point(method: str, n: int, Q: int, rounds: float) -> report.Point:
    r = round(rounds)
    return report.Point({"method": method, "n": n, "Q": Q}, seeds=[0, 1], rounds=[r, r], statuses=["reached"] * 2,
                        mean=float(r), ci_low=float(r), ci_high=float(r))


def test_report_product_figure_is_one_panel_one_line_per_method(drawn: list[Any], tmp_path: Path) -> None:
    pts = [_point("a", n, Q, 4096 / (n * Q)) for n in (1, 2, 4) for Q in (1, 2, 4)]
    pts += [_point("b", n, Q, 4096 / math.sqrt(n * Q)) for n in (1, 2, 4) for Q in (1, 2, 4)]
    settings = {"grid_keys": ["method", "n", "Q"], "axes": ["n", "Q"], "tune": [], "expected_slope": -1.0, "level": 0.95}
    slopes: list[dict] = []
    path = report._plot_axis("synth", ["n", "Q"], pts, settings, tmp_path, slopes)
    assert path is not None and path.name == "synth_rounds_vs_product.png"
    (fig,) = drawn
    (ax,) = _panels(fig)
    legend = _legend(ax)
    assert any(t.startswith("method=a: slope -1.00") for t in legend), legend
    assert any(t.startswith("method=b: slope -0.50") for t in legend), legend
    assert {r["series"] for r in slopes} == {"method=a", "method=b"}
