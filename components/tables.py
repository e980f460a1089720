"""Data-frame display of user text: cells are not Markdown, but hidden characters are still made visible."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evaluators.reports.escape import visible


#: What a missing value of a text column shows (never the literal "None").
MISSING = "—"


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
    frame = data.copy() if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    for column, dtype in frame.dtypes.items():
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            values = frame[column]
            if values.map(lambda v: isinstance(v, str)).any():  # a text column
                frame[column] = values.map(lambda v: visible(v) if isinstance(v, str) else
                                           MISSING if v is None or (isinstance(v, float) and math.isnan(v)) else v)
    return frame
