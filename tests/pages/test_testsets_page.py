"""AppTest for the test-set page: demo single and multi-turn sets, highlights, real uploads, bad input."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from evaluators.reports.escape import md

from tests.conftest import require_shared
from tests.pages.helpers import TESTSETS_PAGE, metric_values, run_page, static_rows


def _app() -> AppTest:
    return run_page(TESTSETS_PAGE)


_metrics = metric_values


def _html(at) -> str:
    return "\n".join(md.value for md in at.markdown)


def _upload(items: tuple[str, bytes], answers: tuple[str, bytes]) -> AppTest:
    at = _app()
    at.radio(key="_source_widget").set_value("upload").run()
    assert at.info and "Upload a test set" in at.info[0].value
    at.file_uploader(key="ts_items").upload(*items)
    at.file_uploader(key="ts_answers").upload(*answers)
    at.run()
    assert not at.exception, at.exception
    return at


def test_demo_single_turn_scores_and_highlights():
    at = _app()
    m = _metrics(at)
    # evaluators/demo/testsets (tests/unit/test_testsets.py::test_single_demo_breakdowns item by item):
    # keyword scores q_001..q_008 = 1, .5, 0, .5, 1, 1, 1, 0 (q_008 unanswered; q_009 has no keywords, unscored)
    # mean (1+.5+0+.5+1+1+1+0)/8 = 5/8 = 0.625; keywords found 1+1+0+1+4+2+2+0 = 11 of 1+2+1+2+4+2+2+3 = 17
    # -> 11/17 = 0.647
    assert m["Mean score"] == "0.625" and m["Recall"] == "0.647" and m["Scored items"] == "8 / 9"
    html = _html(at)
    assert "<mark" in html and ">林远</mark>" in html          # matched keyword highlighted in the answer
    assert ">ＢＲＡＳＳ</mark>" in html                         # found through NFKC, highlighted as written
    assert "✗ 橘色" in html                                     # missing keyword listed
    # the first screen: category and difficulty as static SVG bars and tables, no Plotly chart, no grid
    assert not at.get("plotly_chart") and not at.dataframe
    charts = [m.value for m in at.markdown if '<figure class="chart">' in m.value]
    assert len(charts) == 2 and 'data-series="mean_score"' in charts[0] and 'data-series="keyword_recall"' in charts[0]
    # mean keyword score by category (tests/unit/test_testsets.py::test_single_demo_breakdowns):
    # character 1.0, location 1.0, event 0.5, relation 0.25, item 0.75
    by_category = {r[0]: r[3] for r in static_rows(at, "category")}
    assert by_category == {"character": "100.00%", "location": "100.00%", "event": "50.00%", "relation": "25.00%",
                           "item": "75.00%"}
    # easy 2.5 / 3 = 83.33%, medium 0.5, hard 0.5
    assert {r[0]: r[3] for r in static_rows(at, "difficulty")} == {"easy": "83.33%", "medium": "50.00%",
                                                                   "hard": "50.00%"}
    at.segmented_control(key="ts_view").set_value("charts").run()
    assert len(at.get("plotly_chart")) == 2                     # the interactive charts, one click away
    at.segmented_control(key="ts_view").set_value("items").run()
    assert sorted(next(d.value for d in at.dataframe if "question" in d.value.columns)["id"]) == [
        f"q_00{k}" for k in range(1, 10)]


def test_demo_multi_turn_turn_by_turn():
    at = _app()
    at.radio(key="ts_demo").set_value("multi").run()
    m = _metrics(at)
    # points covered: mt_001 turns 2/2, 1/2, 1/1 and mt_002 2/2, 0/1 (turn 2 unanswered) -> 6/8 = 0.750;
    # per dialogue 4/5 and 2/3 -> (4/5 + 2/3)/2 = 0.7333
    assert m["Points covered"] == "0.750" and m["Mean dialogue coverage"] == "0.733"
    assert "Turn 2</b> · needs context" in _html(at)
    at.selectbox[0].select("mt_002").run()
    html = _html(at)
    assert "Traveller follow-up" in html and "no answer" in html  # turn 2 of mt_002 has no answer


def test_upload_escapes_answers_and_reports_bad_items():
    items = {"items": [
        {"id": "a1", "category": "item", "difficulty": "easy", "question": "What?", "expected_answer": "x",
         "source": {"file": "f.txt", "line_range": [1, 1]}, "keywords": ["script"]},
        {"id": "a2", "category": "weapon", "difficulty": "easy", "question": "q", "expected_answer": "x",
         "source": {"file": "f.txt"}}]}
    answers = {"a1": "<script>alert(1)</script>"}
    at = _upload(("set.json", json.dumps(items).encode()), ("ans.json", json.dumps(answers).encode()))
    html = _html(at)
    assert "<script>" not in html and "&lt;" in html and ">script</mark>" in html
    problems = static_rows(at, "severity")  # the input-problems table (severity, count, where, problem)
    assert [row[2] for row in problems] == ["set.json at items[1].category"]


def test_upload_invalid_json_shows_located_error():
    at = _upload(("set.json", b'{"items": [\n  {"id": }'), ("ans.json", b"{}"))
    assert at.error and md("set.json:2:10: invalid JSON") in at.error[0].value  # file, line, column (markdown-escaped)


@pytest.mark.realdata
def test_upload_real_keyword_sets():
    factual = require_shared("keyword_qa", "factual_qa.json")
    doc = json.loads(factual.read_text(encoding="utf-8"))
    answers = {i["id"]: i["expected_answer"] for i in doc["items"][:4]}   # 4 of 8 answered, each with its keywords
    at = _upload((factual.name, factual.read_bytes()), ("answers.json", json.dumps(answers, ensure_ascii=False).encode()))
    m = _metrics(at)
    assert m["Mean score"] == "0.500" and m["No answer"] == "4"        # (4 x 1.0 + 4 x 0.0) / 8
    multi = require_shared("keyword_qa", "multi_turn.json")
    rows = "".join(json.dumps({"id": "mt_002", "turn": 2, "answer": "是恰斯卡救了它"}, ensure_ascii=False) + "\n")
    at = _upload((multi.name, multi.read_bytes()), ("answers.jsonl", rows.encode()))
    assert _metrics(at)["Points covered"] == f"{1 / 15:.3f}"         # one of the 15 expected points


def test_a_test_set_alone_shows_a_preview_and_an_answer_template():
    from tests.conftest import ROOT

    data = (ROOT / "evaluators" / "demo" / "testsets" / "factual_demo.json").read_bytes()
    at = _app()
    at.radio(key="_source_widget").set_value("upload").run()
    at.file_uploader(key="ts_items").upload("factual_demo.json", data).run()
    assert not at.exception, at.exception
    from evaluators.testsets import load_test_set

    preview = next(d.value for d in at.dataframe if "expected answer" in d.value.columns)
    assert list(preview["id"]) == [i.id for i in load_test_set(data, "factual_demo.json").items]
    assert len(preview) == 9  # the demo's 9 items
    assert any(b.proto.label == "Download answer template · 下载回答模板" for b in at.get("download_button"))


def test_a_test_set_without_a_valid_item_says_why_there_is_no_template():
    """Issue 26.4: an empty download says why instead of giving a file with no id in it."""
    from tests.pages.helpers import shown

    at = _app()
    at.radio(key="_source_widget").set_value("upload").run()
    at.file_uploader(key="ts_items").upload("broken.json", b'{"items": [{"question": "x"}]}').run()
    assert not at.exception, at.exception
    assert not [b for b in at.get("download_button") if "answer template" in b.proto.label]
    assert any("answer template" in shown(c.value) and "no valid item" in shown(c.value) for c in at.caption)


def test_answer_template_and_csv_round_trip():
    import csv
    import io

    from evaluators.reports.testsets import answer_template, report_csv
    from evaluators.testsets import evaluate_test_set, load_answers, load_test_set
    from tests.conftest import ROOT

    demo = ROOT / "evaluators" / "demo" / "testsets"
    for items, answers in (("factual_demo.json", "factual_demo_answers.json"),
                           ("multi_turn_demo.json", "multi_turn_demo_answers.jsonl")):
        test_set = load_test_set((demo / items).read_bytes(), items)
        template = answer_template(test_set)
        # the template reads back as answers for every item (or turn), all empty: everything unanswered
        empty = evaluate_test_set(test_set, load_answers(template.encode("utf-8"), "template.json"))
        if test_set.kind == "multi_turn":
            assert len(empty.missing_prediction) == sum(len(d.turns) for d in test_set.items)
        else:  # an item without keywords has no automatic score ("no_keywords"), the others are unanswered
            assert len(empty.missing_prediction) + len(empty.no_keywords) == len(test_set.items)
        report = evaluate_test_set(test_set, load_answers((demo / answers).read_bytes(), answers))
        rows = list(csv.DictReader(io.StringIO(report_csv(report))))
        if test_set.kind == "multi_turn":
            assert len(rows) == sum(len(d.turns) for d in report.dialogues)
            assert [float(r["coverage"]) for r in rows] == [t.coverage for d in report.dialogues for t in d.turns]
        else:
            assert [r["id"] for r in rows] == [r.id for r in report.items]
            assert [r["score"] and float(r["score"]) for r in rows] == [r.score if r.score is not None else ""
                                                                       for r in report.items]


def test_a_huge_one_line_answer_is_shown_cut_and_scored_whole():
    """Issue 20 point 10: a 21 MB one-line answers file; page peak <= 3x the input + 200 MB (was 1.4 GB)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = r'''
import json, re, sys
from evaluators.demo import demo_path
from tests.pages.helpers import TESTSETS_PAGE, page_app
def hwm():
    return int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024
items = demo_path("testsets", "factual_demo.json").read_bytes()
big = json.dumps({"q_001": "林远 " + "x " * (10 << 20), "q_002": "阿橘"}, ensure_ascii=False).encode()
at = page_app(TESTSETS_PAGE, source="upload", timeout=300)
at.run()
base = hwm()
at.file_uploader(key="ts_items").set_value(("items.json", items, "application/json"))
at.file_uploader(key="ts_answers").set_value(("answers.json", big, "application/json"))
at.run()
assert not at.exception
shown = "\n".join(m.value for m in at.markdown)
print(json.dumps({"base": base, "peak": hwm(), "input": len(big) / 2**20,
                  "metrics": {m.label.split(" · ")[0]: m.value for m in at.metric},
                  "cut": bool(re.search(r"\+20,968,523 characters", shown))}))
'''
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["peak"] <= out["base"] + 3 * out["input"] + 200, out
    # shown cut to 3,000 characters (3 + 20,971,520 - 3,000 left out), scored on the whole answer
    assert out["metrics"]["Scored items"] == "8 / 9" and out["cut"], out
