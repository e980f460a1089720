"""The light first screen of a page: static tables and static SVG charts, drawn on the server.

A page's first screen shows its headline without Streamlit's data grid (``st.dataframe``, a
browser chunk of its own and pandas on the server) and without Plotly (``st.plotly_chart``: a
4.7 MB browser chunk loaded with the first chart).  The interactive versions stay on the page's
other views (:func:`components.layout.view_switch`).

Both pieces reuse the renderers of the self-contained HTML reports, so a table or chart on the
page and in the downloaded report are the same drawing: :func:`evaluators.reports.html.table_html`
and :mod:`evaluators.reports.svg` (every label through
:func:`evaluators.reports.escape.html_text`, explicit colours per series, no script).  Tables are
given to ``st.html``, charts to ``st.markdown`` with HTML allowed (``st.html`` removes SVG); their
style rules come with :func:`components.layout.page_frame` (class ``eb-static``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st


def static_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, caption: str | None = None,
                 digits: int = 3, max_rows: int | None = None, where: Any = None) -> None:
    """A small table as static HTML (:func:`evaluators.reports.html.table_html`): no grid, no pandas.

    Parameters
    ----------
    columns : sequence of str, length k
    rows : sequence of rows of k values
        ``None`` shows "—", ints with thousands separators ("1,234", never "1234.0"), floats with
        ``digits`` decimals; text (user text included) is escaped.  Give ratios already formatted
        (:func:`evaluators.reports.format.percent`) to show them as on the metric cards.
    caption : str, optional
        A line under the table (escaped).
    max_rows : int, optional
        Show the first ``max_rows`` rows (the caption says so).
    where : Streamlit container, optional
        ``st`` (default), a column or a container.
    """
    from evaluators.reports.html import table_html

    table = table_html(columns, rows, caption=caption, digits=digits, max_rows=max_rows)
    (where or st).html(f'<div class="eb-static">{_breakable_headers(table)}</div>')


def _breakable_headers(table: str) -> str:
    """``table`` with a line break allowed after each underscore of its column titles but the first.

    "exact_match_normalized" over a column of "0.3333" made a table of fourteen scores 1,400 px wide
    (its last columns hidden past the edge of its box on a 1440 px page); broken after its underscores
    it takes the width of "normalized".  The first column holds the row names, kept on one line.
    The titles are already escaped: ``_`` never occurs inside an entity.
    """
    head, sep, rest = table.partition("</thead>")
    if not sep:
        return table
    first, *others = head.split("</th>")
    return "</th>".join([first, *(o.replace("_", "_<wbr>") for o in others)]) + sep + rest


def static_chart(svg: str, *, where: Any = None) -> None:
    """A chart drawn by :mod:`evaluators.reports.svg` (``grouped_bars``, ``heatmap``), shown as it is.

    ``svg`` is the renderer's ``<figure>``: its labels are already escaped, it holds no script and
    no blank line (so it stays one HTML block); it scales down to the column's width (its
    ``viewBox``).  Given to ``st.markdown`` with HTML allowed: ``st.html`` sanitizes SVG away.
    """
    (where or st).markdown(f'<div class="eb-static">{svg}</div>', unsafe_allow_html=True)


def static_records(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, *,
                   ratios: Sequence[str] = (), caption: str | None = None, max_rows: int | None = None,
                   where: Any = None) -> None:
    """:func:`static_table` of rows given as dicts (the rows a page would give ``show_table``).

    Parameters
    ----------
    rows : sequence of dict
        One dict per row; a key a row lacks shows "—".
    columns : sequence of str, optional
        Which keys, in order (default: the first row's keys).
    ratios : sequence of str
        Columns holding rates in [0, 1], shown as percentages with two decimals
        (:func:`evaluators.reports.format.percent`, as on the metric cards and in the grids).
    caption, max_rows, where
        As for :func:`static_table`.
    """
    from evaluators.reports.format import percent

    columns = list(columns if columns is not None else (rows[0] if rows else []))
    wanted = set(ratios)
    static_table(columns, [[percent(r.get(c)) if c in wanted else r.get(c) for c in columns] for r in rows],
                 caption=caption, max_rows=max_rows, where=where)
