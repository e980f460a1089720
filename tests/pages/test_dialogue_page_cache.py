"""pages/4_Persona_Dialogue.py caching: each upload parsed once per content and name, the evaluation
once per inputs and settings, and a file's name (its format, the name in issues) part of every key."""

from __future__ import annotations

import json

import pytest

import evaluators.dialogue as dialogue
from tests.pages.helpers import DIALOGUE_PAGE, page_app, problem_line, problem_table, shown

pytestmark = pytest.mark.usefixtures("empty_result_store")

CASES = json.dumps({"test_cases_by_scene": {"park": [
    {"context": "Want to fly a kite?", "expected_response": "Yes, let's go!", "dialogue_index": 1},
    {"context": "你带了什么？", "expected_response": "我带了竹笋饼干。", "dialogue_index": 2},
    {"context": "no index: skipped, with an issue naming the file"},
]}}, ensure_ascii=False).encode("utf-8")
PREDS = "\n".join(json.dumps(row, ensure_ascii=False) for row in [
    {"model": "m1", "scene": "park", "dialogue_index": 1, "prediction": "Yes, let's go!"},
    {"model": "m1", "scene": "park", "dialogue_index": 2, "prediction": "我带了饼干。"},
]).encode("utf-8")


@pytest.fixture
def calls(monkeypatch) -> dict[str, int]:
    """Calls of the page's parsers and run function (the page imports them from evaluators.dialogue)."""
    counts = {"load_cases": 0, "load_predictions": 0, "run_dialogue": 0}
    for name in counts:
        original = getattr(dialogue, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            counts[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(dialogue, name, counted)
    return counts


def _upload(cases_name: str = "cases.json"):
    at = page_app(DIALOGUE_PAGE, timeout=180, source="upload")
    at.run()
    at.file_uploader(key="dialogue_cases").set_value((cases_name, CASES, "application/json"))
    at.file_uploader(key="dialogue_preds").set_value([("m1.jsonl", PREDS, "application/jsonl")])
    at.run()
    assert not at.exception and not at.error
    return at


def _issue_lines(at) -> list[str]:
    return [problem_line(row) for row in problem_table(at)]


def test_widget_reruns_neither_parse_nor_score_again(calls):
    at = _upload()
    assert calls == {"load_cases": 1, "load_predictions": 1, "run_dialogue": 1}
    assert [shown(m.label) for m in at.metric] == ["m1 · combined"]
    at.segmented_control(key="dialogue_view").set_value("cases").run()
    at.selectbox(key="dialogue_case_scene").set_value("park").run()
    at.selectbox(key="dialogue_case_pick").set_value(1).run()
    assert not at.exception
    assert calls == {"load_cases": 1, "load_predictions": 1, "run_dialogue": 1}
    # a setting that changes the scores scores again, from the files parsed before
    at.radio(key="dialogue_mode").set_value("difflib").run()
    assert not at.exception
    assert calls == {"load_cases": 1, "load_predictions": 1, "run_dialogue": 2}
    at.radio(key="dialogue_mode").set_value("default").run()
    assert calls["run_dialogue"] == 2  # the first setting's evaluation is still kept


def test_the_same_bytes_under_another_name_are_read_and_scored_again(calls):
    at = _upload("first.json")
    assert any("first.json" in line for line in _issue_lines(at))
    at.file_uploader(key="dialogue_cases").set_value(("second.json", CASES, "application/json"))
    at.run()
    assert not at.exception and not at.error
    lines = _issue_lines(at)
    assert any("second.json" in line for line in lines)
    assert not any("first.json" in line for line in lines)
    assert calls["load_cases"] == 2 and calls["run_dialogue"] == 2


def test_the_name_picks_the_format_of_the_same_bytes():
    at = _upload("cases.json")
    assert [shown(m.label) for m in at.metric] == ["m1 · combined"]
    # the same bytes named .jsonl are read line by line: one object without scene/dialogue_index, no case
    at.file_uploader(key="dialogue_cases").set_value(("cases.jsonl", CASES, "application/jsonl"))
    at.run()
    assert not at.exception
    assert any("No usable test case in cases.jsonl" in shown(e.value) for e in at.error)
    assert not at.metric


def test_downloads_are_written_on_click_not_on_every_rerun(deferred_downloads):
    made = deferred_downloads
    at = _upload()
    buttons = at.get("download_button")
    assert len(buttons) == 3 and all(b.proto.deferred_file_id and not b.proto.url for b in buttons)
    report = json.loads(made["persona_evaluation_report.json"]().decode("utf-8"))
    assert report["evaluation_info"]["total_test_cases"] == 2  # the third case has no dialogue_index: skipped
    # case 1 identical; case 2 "我带了饼干。" vs "我带了竹笋饼干。" lacks 竹笋: not exact, and
    # edit similarity 1 - 2 deletions / 8 characters = 0.75
    assert [r["metrics_all"]["exact_match_normalized"] for r in report["results"]] == [1.0, 0.0]
    assert [r["metrics_all"]["edit_similarity"] for r in report["results"]] == [1.0, 0.75]
    assert "Cases file: cases.json (2 cases)" in made["persona_evaluation_summary.txt"]().decode("utf-8")
    csv = made["persona_evaluation_human_annotation.csv"]().decode("utf-8")
    assert "我带了饼干。" in csv
