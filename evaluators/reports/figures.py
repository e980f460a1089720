"""Plotly figures shared by the pages and the HTML report (they take plain numbers, compute nothing).

Plotly reads a subset of HTML in category labels (``<b>``, ``<a href>``, ``<span style>``): user labels
go in through :func:`evaluators.reports.escape.html_text`, so they show as typed."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from evaluators.reports.escape import html_text
from evaluators.reports.format import fixed, percent

FONT = "Noto Sans CJK SC, Noto Sans, sans-serif"


def scores_by_document(documents: Sequence[str], components: Sequence[str], values: list[list[float | None]],
                       *, title: str = "Component scores by document") -> go.Figure:
    """Grouped bars: one group per document, one bar per component (``None`` drawn as a gap).

    ``values[i][j]`` is the score of document ``i`` on component ``j``.
    """
    fig = go.Figure()
    for j, comp in enumerate(components):
        ys = [row[j] for row in values]
        fig.add_bar(name=comp, x=[html_text(d, breaks=False) for d in documents], y=ys,
                    text=[fixed(v, 2) for v in ys], textposition="outside",
                    hovertemplate=f"%{{x}}<br>{comp}: %{{y:.3f}}<extra></extra>")
    fig.update_layout(barmode="group", title=two_line_title(title), yaxis=dict(range=[0, 1.12], title="score"),
                      legend=dict(orientation="h", y=-0.2), height=380, margin=dict(t=50, b=40, l=40, r=10),
                      font=dict(family=FONT))
    return fig


def confusion_heatmap(rows: Sequence[str], cols: Sequence[str], counts: list[list[int]], *,
                      row_title: str = "ground truth", col_title: str = "prediction",
                      normalize_rows: bool = False, title: str = "") -> go.Figure:
    """Heatmap of a confusion matrix; counts are written in the cells (row-normalised on request)."""
    z: list[list[float]] = []
    text: list[list[str]] = []
    for r in counts:
        total = sum(r)
        if normalize_rows:
            z.append([c / total if total else 0.0 for c in r])
            text.append([f"{percent(c / total, 0)}<br>({c})" if total else "0" for c in r])
        else:
            z.append([float(c) for c in r])
            text.append([str(c) for c in r])
    fig = go.Figure(go.Heatmap(z=z, x=[html_text(c, breaks=False) for c in cols], y=[html_text(r, breaks=False) for r in rows],
                               text=text, texttemplate="%{text}",
                               colorscale="Blues", showscale=False,
                               hovertemplate=f"{row_title}: %{{y}}<br>{col_title}: %{{x}}<br>%{{text}}<extra></extra>"))
    fig.update_layout(title=two_line_title(title), xaxis=dict(title=col_title, side="bottom"),
                      yaxis=dict(title=row_title, autorange="reversed"),
                      height=max(260, 60 + 45 * len(rows)),
                      margin=dict(t=(60 if " (" in title else 40) if title else 10, b=40, l=10, r=10),
                      font=dict(family=FONT))
    return fig


def metric_by_system(systems: Sequence[str], metrics: dict[str, Sequence[float | None]],
                     ci_low: dict[str, Sequence[float | None]] | None = None,
                     ci_high: dict[str, Sequence[float | None]] | None = None, *,
                     title: str = "Scores by system", level: float = 0.95) -> go.Figure:
    """Grouped bars of each metric by system, with asymmetric error bars for the intervals.

    Parameters
    ----------
    systems : sequence of str, length n
    metrics : dict of metric name -> n values in [0, 1] (``None`` drawn as a gap)
    ci_low, ci_high : dict of metric name -> n bounds, optional
        Interval bounds (``None`` where there is none); drawn as error bars.
    level : float
        Confidence level named in the hover text.
    """
    fig = go.Figure()
    labels = [html_text(s, breaks=False) for s in systems]
    tops: dict[str, list[float | None]] = {}
    for j, (name, values) in enumerate(metrics.items()):
        lows = (ci_low or {}).get(name)
        highs = (ci_high or {}).get(name)
        error = None
        if lows is not None and highs is not None:
            error = dict(type="data", symmetric=False,
                         array=[None if v is None or h is None else h - v for v, h in zip(values, highs)],
                         arrayminus=[None if v is None or lo is None else v - lo for v, lo in zip(values, lows)])
        tops[name] = list(highs) if highs is not None else [None] * len(values)
        fig.add_bar(name=html_text(name, breaks=False), x=labels, y=list(values), error_y=error,
                    offsetgroup=str(j), legendgroup=str(j),
                    hovertemplate=f"%{{x}}<br>{html_text(name, breaks=False)}: %{{y:.3f}}"
                                  + (f" ({percent(level, 0)} CI shown as the bar)" if error else "")
                                  + "<extra></extra>")
    if len(systems) * len(metrics) <= MAX_LABELLED_BARS:
        for j, (name, values) in enumerate(metrics.items()):  # after every bar: fig.data[j] is series j's bars
            fig.add_trace(value_labels(labels, list(values), tops[name], group=str(j)))
    fig.update_layout(barmode="group", scattermode="group", title=two_line_title(title),
                      yaxis=dict(range=[0, 1.12], title="score"), legend=dict(orientation="h", y=-0.2), height=380,
                      margin=dict(t=60, b=40, l=40, r=10), font=dict(family=FONT))
    return fig


#: Most bars a chart writes its values over: with more, a label (five characters) is wider than its bar
#: on a phone and runs across the next bar's error bar; the values are in the table beside the chart
#: and in each bar's hover text.
MAX_LABELLED_BARS = 8


def two_line_title(title: str) -> str:
    """A chart title with its parenthesis on a second, smaller line (plotly does not wrap a title: one
    line was cut at the edge of a 390 px phone).

    >>> two_line_title("EM and F1 by system (error bars: 95% bootstrap CI)")
    'EM and F1 by system<br><sup>(error bars: 95% bootstrap CI)</sup>'
    >>> two_line_title("Scores")
    'Scores'
    """
    head, sep, tail = title.partition(" (")
    return f"{head}<br><sup>({tail}</sup>" if sep and head else title


def value_labels(x: Sequence[str], values: Sequence[float | None], tops: Sequence[float | None], *, group: str,
                 digits: int = 3) -> go.Scatter:
    """The value of each bar written just above its error bar's upper end (above the bar where it has none).

    A bar's text placed by plotly (``textposition`` "inside" or "outside") sits at the bar's top,
    where the error bar crosses it; this text trace is drawn above the whisker instead.  Give the
    bars ``offsetgroup=group`` and the figure ``scattermode="group"`` (with ``barmode="group"``) so
    that each label stands over its own bar; ``legendgroup=group`` hides it with its bars.

    Parameters
    ----------
    x : sequence of str, length n
        The bars' categories (as given to the bars).
    values : sequence of float or None, length n
        The bars' heights; ``None`` is labelled "—" (:data:`~evaluators.reports.format.MISSING`) at the axis.
    tops : sequence of float or None, length n
        The upper ends of the error bars (``None`` where a bar has none).
    group : str
        The bars' ``offsetgroup`` (and ``legendgroup``).
    """
    ys = [0.0 if v is None else (v if t is None else max(v, t)) for v, t in zip(values, tops)]
    return go.Scatter(x=list(x), y=ys, mode="text", text=[fixed(v, digits) for v in values],
                      textposition="top center", offsetgroup=group, legendgroup=group, showlegend=False,
                      hoverinfo="skip", cliponaxis=False)


def runs_trend(runs: Sequence[str], lines: dict[str, dict[str, Sequence[float | None]]], *,
               flagged: Sequence[int] = (), gt_changes: Sequence[tuple[int, str]] = (),
               title: str = "Trend over runs", level: float = 0.95) -> go.Figure:
    """A metric over runs in time order: each line with its interval band, flagged steps and GT changes marked.

    Parameters
    ----------
    runs : sequence of str, length n
        Run names (the x axis, in time order).
    lines : dict of line name -> {"mean", "low", "high": n values in [0, 1] or ``None``}
        E.g. ``{"as scored": ..., "on the current GT": ...}`` or one line per slice value; a band is drawn
        between ``low`` and ``high``, ``None`` leaves a gap.
    flagged : sequence of int
        Indices of runs whose step from the previous run is flagged (marked on the first line).
    gt_changes : sequence of (int, str)
        Index of the first run on a new GT version and its label (``"GT v0 → v1"``): a dashed vertical line.
    title : str
    level : float
        The bands' confidence level (legend and hover).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    colors = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")
    fills = ("rgba(31,119,180,0.18)", "rgba(214,39,40,0.15)", "rgba(44,160,44,0.15)", "rgba(148,103,189,0.15)",
             "rgba(255,127,14,0.15)", "rgba(140,86,75,0.15)", "rgba(23,190,207,0.15)", "rgba(127,127,127,0.15)")
    x = [html_text(r, breaks=False) for r in runs]
    fig = go.Figure()
    for j, (name, line) in enumerate(lines.items()):
        label = html_text(name, breaks=False)
        color, fill = colors[j % len(colors)], fills[j % len(fills)]
        fig.add_scatter(x=x, y=list(line["high"]), mode="lines", line=dict(width=0), showlegend=False,
                        legendgroup=str(j), hoverinfo="skip", connectgaps=False)
        fig.add_scatter(x=x, y=list(line["low"]), mode="lines", line=dict(width=0), fill="tonexty",
                        fillcolor=fill, name=f"{label} {percent(level, 0)} CI", legendgroup=str(j),
                        hoverinfo="skip", connectgaps=False)
        fig.add_scatter(x=x, y=list(line["mean"]), mode="lines+markers", name=label, legendgroup=str(j),
                        line=dict(color=color), hovertemplate=f"%{{x}}<br>{label}: %{{y:.3f}}<extra></extra>")
    if flagged and lines:
        first = next(iter(lines.values()))["mean"]
        fig.add_scatter(x=[x[i] for i in flagged], y=[first[i] for i in flagged], mode="markers",
                        marker=dict(symbol="star", size=16, color="#d62728", line=dict(width=1, color="#000000")),
                        name="flagged step", hovertemplate="%{x}: flagged step<extra></extra>")
    for i, label in gt_changes:
        fig.add_vline(x=i - 0.5, line=dict(dash="dash", color="#7f7f7f"))
        fig.add_annotation(x=i - 0.5, y=1.04, text=html_text(label, breaks=False), showarrow=False,
                           font=dict(size=11), yanchor="bottom")
    fig.update_layout(title=two_line_title(title), yaxis=dict(range=[0, 1.1], title="score"),
                      xaxis=dict(type="category", automargin=True), legend=dict(orientation="h", y=-0.3),
                      height=420, margin=dict(t=60, b=40, l=40, r=10), font=dict(family=FONT))
    return fig
