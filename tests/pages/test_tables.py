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


def test_static_table_titles_break_after_underscores_but_the_first():
    from components.static import _breakable_headers
    from evaluators.reports.html import table_html

    # the first title (row names) stays whole; "exact_match" and "关键_词" may break after "_";
    # text in the caption and the cells is left alone
    table = table_html(["question_type", "exact_match", "关键_词 <b>"], [["single_hop", 0.5, "a_b"]], caption="x_y")
    out = _breakable_headers(table)
    assert "<th>question_type</th><th>exact_<wbr>match</th><th>关键_<wbr>词 &lt;b&gt;</th>" in out
    assert "<td>single_hop</td>" in out and "<caption>x_y</caption>" in out
