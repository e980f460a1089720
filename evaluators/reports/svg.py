"""Static SVG charts for the self-contained HTML reports (no script, a few kilobytes each).

A report file is read offline, in any browser, long after it was written: its charts are drawn
here from plain numbers, with explicit colours, instead of sharing a plotly figure (and plotly's
process-wide default template, which Streamlit replaces by its placeholder theme colours) with
the page.  Inlining plotly.js would also cost 4.8 MB per file.

Every label from the data goes through :func:`evaluators.reports.escape.html_text`; each bar
and cell carries a ``<title>`` (the browser's tooltip) with its exact value and interval.

Functions
---------
grouped_bars(categories, series, lows, highs, *, title)
    One group per category, one bar per series, asymmetric error bars, a legend.
heatmap(rows, cols, counts, *, row_title, col_title, normalize_rows, title)
    A confusion matrix with the counts written in the cells.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

from evaluators.reports.escape import html_text
from evaluators.reports.format import fixed, percent

#: Series colours, in order (plotly's default colourway: distinct hues, readable on white).
PALETTE = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692", "#b6e880",
           "#ff97ff", "#fecb52")
_AXIS = "#57606a"
_GRID = "#e5e7eb"
_FONT = 'font-family="Noto Sans CJK SC, Noto Sans, sans-serif"'


def _num(x: float) -> str:
    return fixed(x, 1).rstrip("0").rstrip(".")


def _short(label: str, limit: int) -> str:
    return label if len(label) <= limit else label[: max(1, limit - 1)] + "…"


def _fmt(v: float | None, digits: int = 3) -> str:
    return fixed(v, digits)


def grouped_bars(categories: Sequence[str], series: Mapping[str, Sequence[float | None]],
                 lows: Mapping[str, Sequence[float | None]] | None = None,
                 highs: Mapping[str, Sequence[float | None]] | None = None, *,
                 title: str = "", level: float = 0.95, y_max: float = 1.0) -> str:
    """Grouped bars of scores in [0, ``y_max``], as one ``<figure>`` holding an inline ``<svg>``.

    Parameters
    ----------
    categories : sequence of str, length n
        One group of bars each (x axis).
    series : dict of series name -> n values (``None`` is drawn as a gap marked "—")
        One bar per category each, in :data:`PALETTE` order; the legend names them.
    lows, highs : dict of series name -> n interval bounds, optional
        Drawn as error bars where both bounds are given.
    title : str
        The figure caption.
    level : float
        Confidence level named in the tooltips.

    Returns
    -------
    str
        ``<figure class="chart">``; bars are ``<rect class="bar" data-series=...>`` with the
        series colour as their ``fill``; the SVG scales down to the page width (``viewBox``).
    """
    names = list(series)
    n_cat, n_ser = len(categories), max(1, len(names))
    bar_w = max(6.0, min(40.0, 520.0 / max(1, n_cat * n_ser)))
    group_w = bar_w * n_ser + max(10.0, bar_w)
    left, right, top, plot_h = 44.0, 12.0, 14.0, 240.0
    rotate = n_cat > 6 or any(len(c) > max(8, int(group_w / 7)) for c in categories)
    # a rotated label (at most 24 characters, a wide CJK one about 12 units, another about 7) drops
    # by sin(40°) of its length: the legend goes under the longest one
    longest = max((sum(12 if unicodedata.east_asian_width(ch) in "WF" else 7 for ch in _short(c, 24))
                   for c in categories), default=0)
    label_h = max(90.0, 0.65 * longest + 20) if rotate else 26.0
    width = max(520.0, left + right + n_cat * group_w)
    per_row = max(1, int((width - left - right) // 160))  # legend entries a row, inside the drawing
    legend_rows = (len(names) + per_row - 1) // per_row
    height = top + plot_h + label_h + 22.0 * legend_rows + 8
    base = top + plot_h

    def y(v: float) -> float:
        return base - plot_h * max(0.0, min(v, y_max * 1.05)) / (y_max * 1.05)

    out = [f'<svg class="chart-svg" viewBox="0 0 {_num(width)} {_num(height)}" width="100%" '
           f'style="max-width:{_num(width)}px" role="img" {_FONT} font-size="12">']
    for k in range(5):  # grid and y labels at 0, .25, .5, .75, 1 of y_max
        v = y_max * k / 4
        out.append(f'<line x1="{_num(left)}" x2="{_num(width - right)}" y1="{_num(y(v))}" y2="{_num(y(v))}" '
                   f'stroke="{_GRID}"/><text x="{_num(left - 6)}" y="{_num(y(v) + 4)}" text-anchor="end" '
                   f'fill="{_AXIS}">{v:g}</text>')
    for i, cat in enumerate(categories):
        x0 = left + i * group_w + (group_w - bar_w * n_ser) / 2
        for j, name in enumerate(names):
            v = list(series[name])[i]
            x = x0 + j * bar_w
            colour = PALETTE[j % len(PALETTE)]
            lo = (lows or {}).get(name)
            hi = (highs or {}).get(name)
            lo_v = None if lo is None else list(lo)[i]
            hi_v = None if hi is None else list(hi)[i]
            interval = (f" ({percent(level, 0)} CI {_fmt(lo_v)} – {_fmt(hi_v)})"
                        if lo_v is not None and hi_v is not None else "")
            tip = html_text(f"{cat} · {name}: {_fmt(v)}{interval}", breaks=False)
            if v is None:
                out.append(f'<text class="gap" x="{_num(x + bar_w / 2)}" y="{_num(base - 4)}" text-anchor="middle" '
                           f'fill="{_AXIS}">—<title>{tip}</title></text>')
                continue
            out.append(f'<rect class="bar" data-series="{html_text(name, breaks=False)}" x="{_num(x + 1)}" '
                       f'y="{_num(y(v))}" width="{_num(bar_w - 2)}" height="{_num(base - y(v))}" '
                       f'fill="{colour}"><title>{tip}</title></rect>')
            if lo_v is not None and hi_v is not None:
                cx = x + bar_w / 2
                cap = min(4.0, bar_w / 3)
                out.append(f'<path class="errorbar" d="M{_num(cx)} {_num(y(lo_v))}V{_num(y(hi_v))}'
                           f'M{_num(cx - cap)} {_num(y(lo_v))}H{_num(cx + cap)}'
                           f'M{_num(cx - cap)} {_num(y(hi_v))}H{_num(cx + cap)}" stroke="#1f2328" fill="none"/>')
        cx = left + i * group_w + group_w / 2
        label = html_text(_short(cat, 24), breaks=False)
        full = html_text(cat, breaks=False)
        if rotate:
            out.append(f'<text x="{_num(cx)}" y="{_num(base + 12)}" text-anchor="end" fill="#1f2328" '
                       f'transform="rotate(-40 {_num(cx)} {_num(base + 12)})">{label}<title>{full}</title></text>')
        else:
            out.append(f'<text x="{_num(cx)}" y="{_num(base + 16)}" text-anchor="middle" fill="#1f2328">'
                       f'{label}<title>{full}</title></text>')
    out.append(f'<line x1="{_num(left)}" x2="{_num(width - right)}" y1="{_num(base)}" y2="{_num(base)}" '
               f'stroke="{_AXIS}"/>')
    for j, name in enumerate(names):  # legend: entries 160 units apart, wrapped inside the drawing
        lx = left + (j % per_row) * 160.0
        ly = base + label_h + 22.0 * (j // per_row)
        out.append(f'<g class="legend"><rect class="legend-swatch" x="{_num(lx)}" y="{_num(ly)}" width="12" '
                   f'height="12" fill="{PALETTE[j % len(PALETTE)]}"/><text x="{_num(lx + 18)}" y="{_num(ly + 11)}" '
                   f'fill="#1f2328">{html_text(_short(name, 20), breaks=False)}'
                   f'<title>{html_text(name, breaks=False)}</title></text></g>')
    out.append("</svg>")
    caption = f"<figcaption>{html_text(title, breaks=False)}</figcaption>" if title else ""
    return f'<figure class="chart">{caption}{"".join(out)}</figure>'


def _blue(t: float) -> str:
    """White (0) to dark blue (1)."""
    lo, hi = (247, 251, 255), (8, 48, 107)
    r, g, b = (round(a + (c - a) * max(0.0, min(1.0, t))) for a, c in zip(lo, hi))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(rows: Sequence[str], cols: Sequence[str], counts: Sequence[Sequence[int]], *,
            row_title: str = "ground truth", col_title: str = "prediction", normalize_rows: bool = False,
            title: str = "") -> str:
    """A confusion matrix as an SVG grid: counts (and row shares on request) written in shaded cells.

    Parameters
    ----------
    rows, cols : sequence of str
        Row labels (``row_title``, top to bottom) and column labels (``col_title``).
    counts : rows x cols ints
    normalize_rows : bool
        Shade and label by the share of the row total.

    Returns
    -------
    str
        ``<figure class="chart">`` holding the ``<svg>``; cells are ``<rect class="cell">``.
    """
    cell_w, cell_h = 92.0, 40.0
    left = 18.0 + 8.0 * max([len(r) for r in rows] + [4])
    left = min(left, 200.0)
    top = 40.0
    width = left + cell_w * len(cols) + 12
    height = top + cell_h * len(rows) + 12
    peak = max([c for r in counts for c in r] + [1])
    out = [f'<svg class="chart-svg" viewBox="0 0 {_num(width)} {_num(height)}" width="100%" '
           f'style="max-width:{_num(width)}px" role="img" {_FONT} font-size="12">',
           f'<text x="{_num(left + cell_w * len(cols) / 2)}" y="12" text-anchor="middle" fill="{_AXIS}">'
           f'{html_text(col_title, breaks=False)}</text>',
           f'<text x="4" y="12" fill="{_AXIS}">{html_text(row_title, breaks=False)} ↓</text>']
    for j, c in enumerate(cols):
        out.append(f'<text x="{_num(left + cell_w * (j + 0.5))}" y="{_num(top - 8)}" text-anchor="middle" '
                   f'fill="#1f2328">{html_text(_short(c, 12), breaks=False)}<title>{html_text(c, breaks=False)}'
                   f'</title></text>')
    for i, (label, row) in enumerate(zip(rows, counts)):
        total = sum(row)
        yy = top + i * cell_h
        out.append(f'<text x="{_num(left - 6)}" y="{_num(yy + cell_h / 2 + 4)}" text-anchor="end" fill="#1f2328">'
                   f'{html_text(_short(label, 22), breaks=False)}<title>{html_text(label, breaks=False)}</title></text>')
        for j, n in enumerate(row):
            share = n / total if total else 0.0
            t = share if normalize_rows else n / peak
            text = f"{percent(share, 0)} ({n:,})" if normalize_rows and total else f"{n:,}"
            tip = html_text(f"{row_title}: {label} · {col_title}: {cols[j]} · {n:,}", breaks=False)
            out.append(f'<rect class="cell" x="{_num(left + j * cell_w)}" y="{_num(yy)}" width="{_num(cell_w)}" '
                       f'height="{_num(cell_h)}" fill="{_blue(t)}" stroke="#ffffff"><title>{tip}</title></rect>'
                       f'<text x="{_num(left + (j + 0.5) * cell_w)}" y="{_num(yy + cell_h / 2 + 4)}" '
                       f'text-anchor="middle" fill="{"#ffffff" if t > 0.5 else "#1f2328"}">{text}</text>')
    out.append("</svg>")
    caption = f"<figcaption>{html_text(title, breaks=False)}</figcaption>" if title else ""
    return f'<figure class="chart">{caption}{"".join(out)}</figure>'
