"""How a predictions file fits the cases (issue 26.2): counts for the headline, and a stored report's own cases."""

from __future__ import annotations

import json

from evaluators.dialogue import load_cases, load_predictions
from evaluators.dialogue.matching import prediction_fit

CASES = {"test_cases_by_scene": {"公园": [
    {"scene": "公园", "dialogue_index": 1, "context": "你好", "expected_response": "你好呀"},
    {"scene": "公园", "dialogue_index": 2, "context": "Where is George?", "expected_response": "In the garden."}]}}


def _report(rows):
    return json.dumps({"results": rows}, ensure_ascii=False).encode("utf-8")


def test_a_report_of_other_cases_is_counted_and_offers_its_own():
    # row 1 fits; row 2 answered another prompt; row 3 has no case: 2 of 3 rows do not match
    report = _report([
        {"scene": "公园", "dialogue_index": 1, "context": "你好", "expected_response": "你好呀", "prediction": "你好"},
        {"scene": "公园", "dialogue_index": 2, "context": "Where is Peppa?", "expected_response": "Upstairs.",
         "prediction": "Upstairs."},
        {"scene": "家", "dialogue_index": 1, "context": "饿了", "expected_response": "吃饭吧", "prediction": "好"}])
    cases = load_cases(json.dumps(CASES, ensure_ascii=False).encode("utf-8"), "cases.json")
    (fit,) = prediction_fit(cases.cases, [load_predictions(report, "run.json")])
    assert (fit.n_rows, fit.n_fit, fit.n_other_prompt, fit.n_no_case, fit.n_duplicate) == (3, 1, 1, 1, 0)
    assert fit.n_off == 2 and fit.n_own_cases == 3 and fit.offers_own_cases
    assert fit.headline().startswith("2 of 3 rows of run.json do not match the uploaded cases: 1 has no case")
    assert "carries its own 3 cases" in fit.headline()
    own = load_cases(report, "run.json")                                     # scored against its own cases
    (again,) = prediction_fit(own.cases, [load_predictions(report, "run.json")])
    assert again.n_off == 0 and again.headline() is None


def test_a_stray_row_of_a_report_of_these_cases_is_counted_but_offers_nothing():
    report = _report([
        {"scene": "公园", "dialogue_index": 1, "context": "你好", "expected_response": "你好呀", "prediction": "你好"},
        {"scene": "公园", "dialogue_index": 2, "context": "Where is George?", "expected_response": "In the garden.",
         "prediction": "Garden."},
        {"scene": "家", "dialogue_index": 9, "context": "?", "expected_response": "!", "prediction": "!"}])
    cases = load_cases(json.dumps(CASES, ensure_ascii=False).encode("utf-8"), "cases.json")
    (fit,) = prediction_fit(cases.cases, [load_predictions(report, "run.json")])
    assert fit.n_off == 1 and not fit.offers_own_cases
    assert "carries its own" not in fit.headline()
