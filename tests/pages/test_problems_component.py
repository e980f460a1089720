"""The one input-problems face (components/problems.py, issue 27): counts by severity, identical problems
folded into one row with their count, a CSV of every problem, a red box when the problems keep something from being used."""

from __future__ import annotations

import csv
import io

from streamlit.testing.v1 import AppTest

from components.problems import problem_rows, problems_csv
from evaluators.io import InputIssue
from tests.pages.helpers import problem_table, shown

ISSUES = [InputIssue("答案.jsonl", "missing 'question_type'", line=n) for n in (2, 5, 9)] + [
    InputIssue("answers.jsonl", "unknown label 'maybe'", line=4, severity="warning", kind="label"),
    InputIssue("broken.json", "invalid JSON: Expecting value", line=1, column=1, kind="json"),
]


def _app(error=None, none=False):
    from components.problems import show_problems
    from evaluators.io import InputIssue

    issues = [] if none else [InputIssue("答案.jsonl", "missing 'question_type'", line=n) for n in (2, 5, 9)] + [
        InputIssue("answers.jsonl", "unknown label 'maybe'", line=4, severity="warning", kind="label"),
        InputIssue("broken.json", "invalid JSON: Expecting value", line=1, column=1, kind="json"),
    ]
    show_problems(issues, key="t", error=error)


def test_three_identical_problems_are_one_row_with_a_count_of_three_and_the_csv_has_every_problem():
    at = AppTest.from_function(_app).run()
    assert not at.exception, at.exception
    (expander,) = at.expander
    # 4 errors (3 identical + the unreadable file), 1 warning
    assert expander.label == "Input problems: 4 errors, 1 warning — the rest of the data is still scored"
    # the file that was lost first (kind json), then the other errors, then warnings; 5 problems -> 3 rows
    assert problem_table(at) == [
        {"severity": "error", "where": "broken.json:1:1", "problem": "invalid JSON: Expecting value", "count": "1"},
        {"severity": "error", "where": "答案.jsonl: line 2, 5, 9 (3 lines)", "problem": "missing 'question_type'",
         "count": "3"},
        {"severity": "warning", "where": "answers.jsonl:4", "problem": "unknown label 'maybe'", "count": "1"},
    ]
    assert [b.proto.label for b in at.get("download_button")] == ["Download all problems (CSV)"]
    rows = list(csv.DictReader(io.StringIO(problems_csv(ISSUES).decode("utf-8-sig"))))
    assert len(rows) == 5 and [r["line"] for r in rows if r["file"] == "答案.jsonl"] == ["2", "5", "9"]
    assert rows[0] == {"severity": "error", "kind": "json", "file": "broken.json", "line": "1", "path": "",
                       "message": "invalid JSON: Expecting value"}


def test_problems_that_stop_the_page_put_the_first_one_in_a_red_box():
    at = AppTest.from_function(_app, kwargs={"error": "No usable question in the upload:"}).run()
    assert [shown(e.value) for e in at.error] == [
        "No usable question in the upload: error: broken.json:1:1: invalid JSON: Expecting value "
        "(and 2 more problems, listed below)"]
    assert at.expander[0].label == "Input problems: 4 errors, 1 warning"  # not "the rest is still scored"


def test_a_severity_given_replaces_each_problems_own():
    rows = problem_rows(ISSUES[:3], "warning")
    assert rows == [{"severity": "warning", "where": "答案.jsonl: line 2, 5, 9 (3 lines)",
                     "problem": "missing 'question_type'", "count": 3}]
    assert problems_csv(ISSUES[:1], "warning").decode("utf-8-sig").splitlines()[1].startswith("warning,schema,")


def test_no_problem_shows_nothing():
    at = AppTest.from_function(_app, kwargs={"none": True}).run()
    assert not at.exception, at.exception
    assert not at.expander and not at.error and not at.html
