"""Data-frame display of user text: cells are not Markdown, but hidden characters are still made visible.

pandas is imported when a table is drawn, not with this module: a page that shows no table on its
first run (Review before any session exists) does not pay its import (about 0.4 s, more under load).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import streamlit as st

from evaluators.reports.escape import visible
from evaluators.reports.format import MISSING  # what a missing value shows (never the literal "None")

if TYPE_CHECKING:
    import pandas as pd


def visible_frame(data: Any) -> pd.DataFrame:
    """A copy of ``data`` (a DataFrame or anything ``pd.DataFrame`` takes) with every text cell through
    :func:`evaluators.reports.escape.visible`.

    Parameters
    ----------
    data : pandas.DataFrame, list of dict, or dict
        The table as it would be given to ``st.dataframe``; numbers, ``None`` and other cells are kept.

    Returns
    -------
    pandas.DataFrame
        Same shape, index and columns; a right-to-left override or a zero-width space in a name
        shows as ``⟨U+202E⟩`` / ``⟨U+200B⟩`` instead of reordering or hiding text.
        Only text (object or string dtype) columns are looked at (numbers cost nothing).
        In a text column, a missing value (``None``, NaN) shows as :data:`MISSING` ("—")
        instead of the grid's literal "None"; numeric columns keep their missing values
        (the grid shows those greyed), so they still sort as numbers.

    >>> visible_frame([{"model": "evil\u202egnp", "score": -0.5}]).to_dict("records")
    [{'model': 'evil⟨U+202E⟩gnp', 'score': -0.5}]
    """
    import pandas as pd

    frame = data.copy() if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    for column, dtype in frame.dtypes.items():
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            values = frame[column]
            if values.map(lambda v: isinstance(v, str)).any():  # a text column
                frame[column] = values.map(lambda v: visible(v) if isinstance(v, str) else
                                           MISSING if v is None or (isinstance(v, float) and math.isnan(v)) else v)
    return frame


#: Column names that hold counts: shown as integers ("70", never "70.000"), a missing one as "—".
COUNT_COLUMNS = frozenset({"n", "count", "support", "predicted", "tp", "fp", "fn", "tn", "n_items", "n_labels",
                           "turns", "line", "records", "questions", "items", "n_paired", "n_compared", "reviewers",
                           "decisions", "skipped", "errors", "warnings"})


def count_columns(frame: pd.DataFrame, counts: Any = None) -> list[str]:
    """The numeric columns of ``frame`` that hold counts: those named in ``counts`` (default
    :data:`COUNT_COLUMNS`) whose values are all whole numbers or missing."""
    import pandas as pd

    names = COUNT_COLUMNS if counts is None else set(counts)
    out = []
    for column in frame.columns:
        if column not in names or not pd.api.types.is_numeric_dtype(frame[column]) \
                or pd.api.types.is_bool_dtype(frame[column]):
            continue
        values = frame[column].dropna()
        if all(float(v).is_integer() for v in values):
            out.append(column)
    return out


def show_table(data: Any, *, where: Any = None, counts: Any = None, column_config: dict | None = None,
               **kwargs: Any) -> Any:
    """``st.dataframe`` of a table that may hold user text and missing values, the one way every page shows one.

    Text goes through :func:`visible_frame`; every missing value, text or number, shows as
    :data:`MISSING` ("—", the grid's ``placeholder``: the grid's own default is the literal "None");
    count columns (:func:`count_columns`) are nullable integers shown without decimals.  Numbers stay
    numbers, so columns still sort numerically.

    Parameters
    ----------
    data : DataFrame, list of dict or dict
    where : Streamlit container, optional
        ``st`` (default), a column or a tab: ``where.dataframe(...)`` is called.
    counts : iterable of str, optional
        Column names that hold counts (default :data:`COUNT_COLUMNS`).
    column_config : dict, optional
        Passed on; a count column gets ``NumberColumn(format="%d")`` unless configured here.
    **kwargs
        Passed to ``st.dataframe`` (``hide_index``, ``key``, ``on_select`` ...).

    Returns
    -------
    What ``st.dataframe`` returns (the selection state when ``on_select`` is set).
    """
    frame = visible_frame(data)
    config = dict(column_config or {})
    for column in count_columns(frame, counts):
        try:
            frame[column] = frame[column].astype("Int64")
        except (TypeError, ValueError, OverflowError):  # a whole number past int64: left as it is
            continue
        config.setdefault(column, st.column_config.NumberColumn(column, format="%d"))
    kwargs.setdefault("hide_index", True)
    return (where or st).dataframe(frame, placeholder=MISSING, column_config=config or None, **kwargs)


def dataframe(data: Any, *, where: Any = None, **kwargs: Any) -> Any:
    """``st.dataframe`` with missing values shown as :data:`MISSING` (for a frame or Styler already
    made visible); :func:`show_table` does the rest for plain data."""
    kwargs.setdefault("placeholder", MISSING)
    return (where or st).dataframe(data, **kwargs)
