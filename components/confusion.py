"""Confusion-matrix heatmap (plotly) with layout and counts / row-normalized switches, and cell choice.

Takes a :class:`evaluators.metrics.classification.ClassificationReport`; computes nothing
itself (layouts and row normalization come from the report).  Usable by every family.
"""

from __future__ import annotations


import plotly.graph_objects as go
import streamlit as st

from evaluators.metrics.classification import ClassificationReport
from evaluators.reports.escape import html_text, visible
from evaluators.reports.format import fixed

#: The first is the default: true labels on rows, as scikit-learn, the overview's chart, the HTML report and the CLI.
LAYOUTS = {"true": "Rows = true · 行为真实 (scikit-learn)", "predicted": "Rows = predicted · 行为预测"}
VALUES = {"counts": "Counts · 计数", "normalized": "Row-normalized · 按行归一化"}


def confusion_figure(report: ClassificationReport, rows: str = "true", normalized: bool = False,
                     selected: tuple[str, str] | None = None) -> go.Figure:
    """Plotly heatmap of the matrix; cells show the count (and the row share when normalized).

    Parameters
    ----------
    report : ClassificationReport
    rows : {"true", "predicted"}
        Which labels run down the rows (default true labels, as scikit-learn).
    normalized : bool
        Colour by row share instead of counts.
    selected : (true label, predicted label), optional
        A cell outlined in orange (the one whose records are listed).
    """
    labels = [html_text(str(label), breaks=False) for label in report.labels]
    counts = report.matrix(rows)
    shares = report.row_normalized(rows)
    z = [[(v if v is not None else 0.0) for v in r] for r in shares] if normalized else counts
    text = [[f"{c}<br>{fixed(100 * s, 0)}%" if (normalized and s is not None) else str(c) for c, s in zip(cr, sr)]
            for cr, sr in zip(counts, shares)]
    row_title, col_title = ("Predicted · 预测", "True · 真实") if rows == "predicted" else ("True · 真实", "Predicted · 预测")
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, text=text, texttemplate="%{text}", textfont={"size": 16},
        colorscale="Blues", zmin=0, zmax=1 if normalized else max(1, max((max(r) for r in counts), default=1)),
        hoverinfo="skip", colorbar={"title": "share" if normalized else "count"},
    ))
    # Heatmaps emit no selection events: an invisible square marker per cell makes cells clickable.
    cells = [(x, y, t) for y, row in zip(labels, text) for x, t in zip(labels, row)]
    fig.add_trace(go.Scatter(
        x=[c[0] for c in cells], y=[c[1] for c in cells], customdata=[c[2] for c in cells], mode="markers",
        marker={"symbol": "square", "size": 60, "opacity": 0.0}, showlegend=False,
        hovertemplate=f"{row_title}: %{{y}}<br>{col_title}: %{{x}}<br>%{{customdata}}<extra></extra>",
        selected={"marker": {"opacity": 0.0}}, unselected={"marker": {"opacity": 0.0}},
    ))
    fig.update_layout(
        xaxis={"title": col_title, "side": "top", "type": "category", "fixedrange": True},
        yaxis={"title": row_title, "autorange": "reversed", "type": "category", "fixedrange": True},
        clickmode="event+select", dragmode=False, hovermode="closest", hoverdistance=-1,
        height=120 + 90 * len(labels), margin={"l": 20, "r": 20, "t": 80, "b": 20},
        font={"family": "Noto Sans CJK SC, Noto Sans, sans-serif"},
    )
    names = [str(label) for label in report.labels]
    if selected is not None and selected[0] in names and selected[1] in names:
        t, p = names.index(selected[0]), names.index(selected[1])
        col, row = (t, p) if rows == "predicted" else (p, t)
        fig.add_shape(type="rect", x0=col - 0.5, x1=col + 0.5, y0=row - 0.5, y1=row + 0.5,
                      line={"color": "#ef6c00", "width": 4}, fillcolor="rgba(0,0,0,0)")
    return fig


def render_confusion(report: ClassificationReport, key: str = "confusion") -> tuple[str, str] | None:
    """Show the heatmap with its switches and return the chosen cell ``(true_label, predicted_label)``.

    A cell is chosen by clicking it in the chart, or with the two selectors under it
    (which also work without a mouse and in tests).  Returns ``None`` until a cell is chosen.
    """
    c1, c2 = st.columns(2)
    rows = c1.radio("Matrix layout · 矩阵方向", list(LAYOUTS), format_func=LAYOUTS.get, horizontal=True,
                    key=f"{key}_rows", help="The earlier fact-check script printed predictions on rows; "
                                            "scikit-learn puts true labels on rows.")
    values = c2.radio("Cell values · 单元格", list(VALUES), format_func=VALUES.get, horizontal=True, key=f"{key}_values")
    labels = [str(label) for label in report.labels]
    qp = st.query_params
    if f"{key}_true" not in st.session_state and qp.get("cell_true") in labels and qp.get("cell_pred") in labels:
        # a shared link opens with its cell chosen
        st.session_state[f"{key}_true"], st.session_state[f"{key}_pred"] = qp["cell_true"], qp["cell_pred"]
    chart_key = f"{key}_chart_{rows}_{values}"  # one chart per layout: a click keeps its meaning
    shown = {html_text(label, breaks=False): label for label in labels}
    # A click is read from the chart's state before the chart is drawn, so the clicked cell is
    # outlined in this run; it is applied once, so the selectors can still be changed by hand.
    try:
        state = st.session_state.get(chart_key)
        points = list(state["selection"]["points"]) if state else []
    except (KeyError, TypeError, AttributeError):
        points = []
    if points:
        x, y = shown.get(str(points[0].get("x"))), shown.get(str(points[0].get("y")))
        cell = (x, y) if rows == "predicted" else (y, x)
        if None not in cell and st.session_state.get(f"{chart_key}_applied") != cell:
            st.session_state[f"{chart_key}_applied"] = cell
            st.session_state[f"{key}_true"], st.session_state[f"{key}_pred"] = cell
    current = (st.session_state.get(f"{key}_true"), st.session_state.get(f"{key}_pred"))
    fig = confusion_figure(report, rows, values == "normalized",
                           selected=current if None not in current and "—" not in current else None)
    st.plotly_chart(fig, key=chart_key, on_select="rerun", selection_mode="points", config={"displayModeBar": False})
    s1, s2 = st.columns(2)
    options = ["—", *labels]
    true_label = s1.selectbox("True label · 真实标签", options, key=f"{key}_true", format_func=visible)
    pred_label = s2.selectbox("Predicted label · 预测标签", options, key=f"{key}_pred", format_func=visible)
    if true_label == "—" or pred_label == "—":
        for k in ("cell_true", "cell_pred"):
            if k in qp:
                del qp[k]
        return None
    qp["cell_true"], qp["cell_pred"] = true_label, pred_label  # the chosen cell is part of the link
    return true_label, pred_label
