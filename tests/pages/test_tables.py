"""The one table component (components/tables.py show_table): missing values "—", counts as integers (issue 20.6)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def _app():
    from components.tables import show_table

    # LongMemEval's accuracy table: a task-averaged row has no count, a type with no label no accuracy
    show_table([{"question_type": "single-session-user", "count": 70, "accuracy": 0.9},
                {"question_type": "task-averaged", "count": None, "accuracy": None},
                {"question_type": "没有标签", "count": 0, "accuracy": None}], key="t")


def test_missing_values_show_a_dash_and_counts_are_integers():
    at = AppTest.from_function(_app).run()
    assert not at.exception
    proto = at.dataframe[0].proto
    assert proto.placeholder == "—"  # the grid's own text for a missing cell was the literal "None"
    frame = at.dataframe[0].value
    assert str(frame["count"].dtype) == "Int64"  # 70, not 70.000 (a None had made the column float)
    assert frame["count"].tolist()[0] == 70 and frame["count"].isna().tolist() == [False, True, False]
    config = json.loads(proto.columns)
    assert config["count"]["type_config"]["format"] == "%d"
