"""Checks of a self-contained HTML report opened in Chromium (issue 20, point 4): its bars, its width."""

from __future__ import annotations

import re

#: Streamlit's plotly theme writes placeholder colours (``#000001`` ... ``#000040``) that only its
#: frontend replaces; a static file holding one draws black bars.
PLACEHOLDER = re.compile(r"^#0000[0-9a-f]{2}$", re.I)


def bar_fills(pg) -> dict[str, set[str]]:
    """``{series name: {fill colours of its bars}}`` over every chart of the open report."""
    pairs = pg.locator("figure.chart rect.bar").evaluate_all(
        "els => els.map(e => [e.getAttribute('data-series'), e.getAttribute('fill')])")
    out: dict[str, set[str]] = {}
    for series, fill in pairs:
        out.setdefault(series, set()).add(fill)
    return out


def assert_series_coloured(pg) -> None:
    """Each chart draws bars; within a chart every series has one fill, different from the others',
    none a placeholder; the legend swatches differ from each other too."""
    charts = pg.locator("figure.chart")
    assert charts.count() >= 1, "the report draws no chart"
    for k in range(charts.count()):
        chart = charts.nth(k)
        if chart.locator("rect.cell").count():  # a heatmap: shaded cells, no series
            continue
        pairs = chart.locator("rect.bar").evaluate_all(
            "els => els.map(e => [e.getAttribute('data-series'), getComputedStyle(e).fill])")
        assert pairs, f"chart {k} draws no bar"
        fills: dict[str, set[str]] = {}
        for series, fill in pairs:
            fills.setdefault(series, set()).add(fill)
        assert all(len(f) == 1 for f in fills.values()), fills
        colours = [next(iter(f)) for f in fills.values()]
        assert len(set(colours)) == len(colours), f"two series share a colour in chart {k}: {fills}"
        assert not any(c in ("rgb(0, 0, 0)",) or PLACEHOLDER.match(c) for c in colours), fills
        swatches = chart.locator(".legend-swatch").evaluate_all("els => els.map(e => getComputedStyle(e).fill)")
        # a series with no value anywhere (say an unjudged judge_score) has a swatch and no bar
        assert len(swatches) >= len(fills) and len(set(swatches)) == len(swatches), swatches
        assert set(colours) <= set(swatches), (colours, swatches)


def page_overflow(pg) -> int:
    """How many CSS pixels the report is wider than the window (0: nothing cut or scrolled sideways)."""
    return pg.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
