"""evaluators.reports.format: one spelling of missing, counts as integers, differences in points."""

import doctest
import math

import evaluators.reports.format as fmt
from evaluators.io import InputIssue


def test_doctests():
    assert doctest.testmod(fmt).failed == 0


def test_missing_is_one_spelling_for_none_and_nan():
    assert {fmt.number(None), fmt.number(math.nan), fmt.percent(None), fmt.points(None)} == {fmt.MISSING} == {"—"}


def test_numbers_counts_percent_points_and_p_values():
    assert fmt.number(2 / 3) == "0.667" and fmt.number(2 / 3, 4) == "0.6667"
    assert fmt.number(70) == "70" and fmt.number(True) == "1"  # a count never shows decimals
    assert fmt.percent(0.6) == "60.00%"
    assert fmt.points(0.1094) == "+10.94 pts"  # 100 x 0.1094
    assert fmt.p_value(0.04) == "p = 0.04"
    assert fmt.p_value(1 / 10001, True) == "p < 0.0001"  # 1 / (R + 1) with R = 10,000 rounds up to 1e-4
    assert fmt.p_value(None).startswith("p not computed")


def test_one_problem_line():
    issue = InputIssue("answers.jsonl", "expected an object", line=3)
    assert fmt.problem(issue) == f"error: {issue.location()}: expected an object"
    assert fmt.problem(issue, "warning").startswith("warning: answers.jsonl")
