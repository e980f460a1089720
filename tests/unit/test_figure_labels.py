"""Bar values in the plotly figures stand above the error bar's upper end, not across the whisker."""

from __future__ import annotations

import pytest

from evaluators.reports.figures import MAX_LABELLED_BARS, metric_by_system, two_line_title, value_labels
from evaluators.reports.format import MISSING


def test_labels_stand_above_the_upper_whisker_end():
    # system "基线" (Chinese) and "rag-7b" (English): EM 0.5 with CI [0.2, 0.8], 0.25 with no interval
    fig = metric_by_system(["基线", "rag-7b"], {"exact_match": [0.5, 0.25]},
                           {"exact_match": [0.2, None]}, {"exact_match": [0.8, None]}, title="EM (CI)")
    bars, labels = fig.data
    assert bars.type == "bar" and bars.text is None            # no text on the bar (it sat on the whisker)
    assert labels.mode == "text" and list(labels.text) == ["0.500", "0.250"]
    assert list(labels.y) == [0.8, 0.25]                         # above 0.5 + 0.3 of whisker; the bar top without one
    assert labels.offsetgroup == bars.offsetgroup and fig.layout.scattermode == "group"
    assert labels.textposition == "top center" and labels.showlegend is False


def test_many_bars_carry_no_labels():
    systems = [f"s{i}" for i in range(MAX_LABELLED_BARS)]          # 8 systems x 2 metrics = 16 bars
    fig = metric_by_system(systems, {"exact_match": [0.5] * 8, "token_f1": [0.6] * 8})
    assert [t.type for t in fig.data] == ["bar", "bar"]


def test_missing_value_is_labelled_at_the_axis():
    trace = value_labels(["中文", "English"], [None, 0.4], [None, 0.9], group="0")
    assert list(trace.text) == [MISSING, "0.400"] and list(trace.y) == [0.0, 0.9]


@pytest.mark.parametrize("title, expected", [
    ("EM and F1 by system (error bars: 95% bootstrap CI)", "EM and F1 by system<br><sup>(error bars: 95% bootstrap CI)</sup>"),
    ("按系统 (95% 区间)", "按系统<br><sup>(95% 区间)</sup>"),
    ("Action category: GT × prediction", "Action category: GT × prediction"),
])
def test_two_line_title(title, expected):
    assert two_line_title(title) == expected
