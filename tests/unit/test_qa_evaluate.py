"""QA / fact-check evaluation: field resolution, inputs, detection, per-record scores, reports."""

from __future__ import annotations

import json
import math

import pytest

from evaluators.demo import demo_path
from evaluators.qa import QAConfig, detect_task, evaluate_qa
from evaluators.reports.qa import records_csv, report_json
from evaluators.qa.fields import DEFAULT_GT_FIELDS, answer_texts, resolve

# The earlier script's ten-sample example (EVALUATION_FIX_CN.md of zhenhaodai/ace, test_confusion_matrix_standalone.py).
TEN = [("成立", "T"), ("该主张成立", "T"), ("不成立", "T"), ("不成立", "F"), ("该主张不成立", "F"), ("成立", "F"),
       ("不确定", "F"), ("证据不足", "uncertain"), ("不确定", "uncertain"), ("成立", "uncertain")]


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def ten_sample_bytes() -> bytes:
    return jsonl({"claim": f"测试{i + 1}", "final_answer": p, "original_row": {"人工评测结果": g}}
                 for i, (p, g) in enumerate(TEN))


def test_ten_sample_example_reproduces_exactly():
    r = evaluate_qa(ten_sample_bytes(), "ten.jsonl")
    assert r.task == "factcheck"
    c = r.classification
    assert f"{100 * c.accuracy:.2f}%" == "60.00%"
    assert c.matrix("predicted") == [[2, 1, 1], [1, 2, 0], [0, 1, 2]]
    table = {m.label: (f"{100 * m.precision:.2f}%", f"{100 * m.recall:.2f}%", f"{100 * m.f1:.2f}%", m.support)
             for m in c.per_class}
    assert table == {"T": ("50.00%", "66.67%", "57.14%", 3), "F": ("66.67%", "50.00%", "57.14%", 4),
                     "uncertain": ("66.67%", "66.67%", "66.67%", 3)}
    # EM and F1 on verdicts, as the earlier script printed them: 60.00% and 60.00%
    assert (r.overall.exact_match, r.overall.token_f1, r.overall.n) == (pytest.approx(0.6), pytest.approx(0.6), 10)
    assert r.gt_fields_used == {"original_row.人工评测结果": 10}


# ------------------------------------------------------------------ field resolution


def test_gt_priority_original_row_first_then_root_then_english():
    rec = {"original_row": {"人工评测结果": float("nan"), "标准答案": "", "答案": "A1"}, "人工评测结果": "root", "answer": "en"}
    assert resolve(rec, DEFAULT_GT_FIELDS).field == "original_row.答案"
    rec = {"original_row": {"query": 1.0}, "标准答案": "B", "answer": "en"}
    assert resolve(rec, DEFAULT_GT_FIELDS).field == "标准答案"
    rec = {"answer": None, "answers": [], "answers_objects": [{"spans": ["james madison"]}], "label": "x"}
    got = resolve(rec, DEFAULT_GT_FIELDS)
    assert (got.field, got.texts) == ("answers_objects", ("james madison",))
    assert resolve({"label": 1}, DEFAULT_GT_FIELDS).texts == ("Yes",)   # HoVer integer label
    assert resolve({"question": "q"}, DEFAULT_GT_FIELDS) is None
    assert resolve({"answer": "x", "gold": "y"}, ("gold", "answer")).field == "gold"  # configurable order


def test_answer_texts_shapes():
    assert answer_texts([{"text": "a", "answer_start": 0}, {"text": "b"}]) == ("a", "b")      # SQuAD answers
    assert answer_texts('["北京", "北京市"]') == ("北京", "北京市")                          # JSON list in a CSV cell
    assert answer_texts(1999.0) == ("1999",) and answer_texts(["", " "]) == ()
    assert answer_texts({"text": ["x", "y"], "answer_start": [1, 2]}) == ("x", "y")         # datasets-style answers


# ------------------------------------------------------------------ input handling


def test_broken_line_reported_rest_scored_and_missing_gt_listed():
    data = (jsonl([{"id": "a", "question": "q", "answer": "Mars", "final_answer": "Mars"}])
            + b'{"id": "b", "answer": broken\n'
            + jsonl([{"id": "c", "question": "无答案", "final_answer": "x"},
                     {"id": "d", "answer": "北京", "final_answer": "北京"}]))
    r = evaluate_qa(data, "mixed.jsonl")
    assert [(i.line, i.kind) for i in r.issues] == [(2, "json")]
    assert r.n_records == 3 and r.overall.n == 2 and r.overall.exact_match == 1.0
    assert r.missing_gt == ("c",)
    assert {k: v.n for k, v in r.by_lang.items()} == {"en": 1, "zh": 1}


def test_json_nan_counts_as_absent():
    data = b'[{"id": "x", "original_row": {"\xe4\xba\xba\xe5\xb7\xa5\xe8\xaf\x84\xe6\xb5\x8b\xe7\xbb\x93\xe6\x9e\x9c": NaN}, "answer": "T", "final_answer": NaN, "prediction": "T"}]'
    r = evaluate_qa(data, "nan.json")
    rec = r.records[0]
    assert (rec.gold_field, rec.prediction_field, rec.exact_match) == ("answer", "prediction", 1.0)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gb18030"])
def test_csv_in_each_encoding(encoding):
    text = "id,question,答案,final_answer\nq1,中国的首都？,北京,北京\nq2,Capital of France?,Paris,paris.\n"
    r = evaluate_qa(text.encode(encoding), "qa.csv")
    assert r.overall.n == 2 and r.overall.exact_match == 1.0
    assert [x.lang for x in r.records] == ["zh", "en"] and r.records[0].gold_field == "答案"


def test_language_override_and_tokenizer_recorded():
    data = jsonl([{"id": 1, "answer": "1999", "final_answer": "1999年"}])
    auto = evaluate_qa(data, "a.jsonl").records[0]
    assert (auto.lang, auto.tokenizer, auto.token_f1) == ("zh", "cmrc2018", pytest.approx(2 / 3))  # [1999 年] vs [1999]
    en = evaluate_qa(data, "a.jsonl", QAConfig(lang="en")).records[0]
    assert (en.lang, en.tokenizer, en.token_f1) == ("en", "squad-v1.1", 0.0)  # one token "1999年" vs "1999"


def test_answer_tag_and_think_removed_before_scoring():
    data = jsonl([{"answer": "1989", "final_answer": "<think>The wall fell in 1989? or 1990</think><answer>1989</answer>"}])
    rec = evaluate_qa(data, "t.jsonl").records[0]
    assert rec.prediction == "1989" and rec.exact_match == 1.0 and rec.id == "#1"


def test_squad_dataset_with_prediction_map():
    dataset = {"version": "v1.0", "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [
        {"id": "Q1", "question": "首都？", "answers": [{"text": "北京", "answer_start": 0}, {"text": "北京市", "answer_start": 0}]},
        {"id": "Q2", "question": "Who?", "answers": [{"text": "Jane Austen", "answer_start": 0}]},
        {"id": "Q3", "question": "none", "answers": [{"text": "x", "answer_start": 0}]}]}]}]}
    preds = {"Q1": "北京市", "Q2": "Austen", "Q9": "stray"}
    r = evaluate_qa(json.dumps(dataset, ensure_ascii=False).encode(), "dev.json",
                    predictions=json.dumps(preds, ensure_ascii=False).encode(), predictions_file="p.json")
    assert r.n_records == 3 and r.missing_prediction == ("Q3",)
    q1, q2, _ = r.records
    assert (q1.exact_match, q1.token_f1) == (1.0, 1.0)                 # matches the second gold exactly
    assert (q2.exact_match, q2.token_f1) == (0.0, pytest.approx(2 / 3))  # [austen] vs [jane austen]
    assert any("Q9" in i.message and i.severity == "warning" for i in r.issues)


# ------------------------------------------------------------------ fact-check


def test_detect_task():
    assert detect_task([], "hover_dev")[0] == "factcheck"
    assert detect_task([], "CFEVER")[0] == "factcheck"
    assert detect_task([{"claim": "c", "label": "SUPPORTS"}, {"claim": "d", "label": "NOT ENOUGH INFO"}], None)[0] == "factcheck"
    assert detect_task([{"claim": "c", "answer": "Paris"}], None)[0] == "qa"
    assert detect_task([{"question": "q", "answer": "yes"}], "hotpotqa")[0] == "qa"   # verdict-like but no claims


def test_task_override():
    r = evaluate_qa(ten_sample_bytes(), "ten.jsonl", QAConfig(task="qa"))
    assert r.task == "qa" and r.classification is None


def test_unparsed_prediction_column_and_gold_unparsed():
    rows = [{"claim": "a", "label": "supports", "final_answer": "no idea"},
            {"claim": "b", "label": "refutes", "final_answer": "refutes"},
            {"claim": "c", "label": "maybe?", "final_answer": "T"},
            {"claim": "d", "label": "supports", "final_answer": ""}]
    r = evaluate_qa(jsonl(rows), "fc.jsonl", QAConfig(task="factcheck"))
    c = r.classification
    assert c.labels == ("T", "F", "uncertain", "unparsed")
    assert c.matrix("predicted")[3] == [2, 0, 0, 0]  # "no idea" and the empty answer, both true T
    assert r.unparsed_predictions == ("#1",) and r.missing_prediction == ("#4",) and r.gold_unparsed == ("#3",)
    assert r.overall.n == 3 and r.overall.exact_match == pytest.approx(1 / 3)
    assert c.macro.n_classes == 3  # averages over T / F / uncertain only
    rows, n = r.records_in_cell("T", "unparsed")
    assert [x.predicted_verdict for x in rows] == ["unparsed", "unparsed"] and n == 2
    first, n = r.records_in_cell("T", "unparsed", limit=1)
    assert (len(first), n) == (1, 2) and first[0] == rows[0]


# ------------------------------------------------------------------ demo data (hand-derived)


def test_qa_demo_numbers():
    r = evaluate_qa(demo_path("qa", "qa_demo.jsonl").read_bytes(), "qa_demo.jsonl")
    assert r.task == "qa" and r.missing_gt == ("en-06",) and r.missing_prediction == ("zh-04",)
    f1 = {x.id: x.token_f1 for x in r.records}
    assert f1["en-02"] == pytest.approx(0.5)      # 2 of 6 predicted tokens, both gold tokens
    assert f1["zh-02"] == pytest.approx(2 / 3)    # 作者是曹雪芹 vs 曹雪芹: P 3/6, R 1
    assert f1["zh-03"] == pytest.approx(6 / 7)    # [约 6300 公 里] vs [6300 公 里]: P 3/4, R 1
    assert f1["zh-05"] == pytest.approx(0.5)      # 宋朝 vs 唐朝: run 朝
    assert f1["zh-06"] == pytest.approx(0.25)     # 7 tokens vs [h2o]: P 1/7, R 1
    assert r.overall.n == 11 and r.overall.exact_match == pytest.approx(4 / 11)
    # English F1 sum 3.5 = en-01 1 (Mars) + en-02 0.5 + en-03 0 (Sydney vs Canberra) + en-04 1 (the <answer>
    # 1989) + en-05 1 ("Pacific Ocean" = gold "the Pacific Ocean" without its article); zh-01 1, zh-04 0 (empty)
    assert r.overall.token_f1 == pytest.approx((3.5 + 1 + 2 / 3 + 6 / 7 + 0.5 + 0.25) / 11)
    assert r.by_lang["en"].token_f1 == pytest.approx(3.5 / 5) and r.by_lang["zh"].exact_match == pytest.approx(1 / 6)


def test_factcheck_demo_numbers():
    r = evaluate_qa(demo_path("qa", "factcheck_demo.jsonl").read_bytes(), "factcheck_demo.jsonl")
    c = r.classification
    assert r.task == "factcheck" and r.missing_gt == ("fc-09",)
    # rows = predicted, columns = true (T, F, uncertain, unparsed); fc-09 has no label:
    # predicted T: fc-01, 03, 10 true T; fc-04 true F; fc-07 true uncertain        -> [3, 1, 1, 0]
    # predicted F: fc-13 true T; fc-02, 06, 11, 14 true F                          -> [1, 4, 0, 0]
    # predicted uncertain: fc-05, 12, 16, all true uncertain                       -> [0, 0, 3, 0]
    # unparsed: fc-08, 15 (no verdict) and fc-17 (empty answer), all true T       -> [3, 0, 0, 0]
    assert c.matrix("predicted") == [[3, 1, 1, 0], [1, 4, 0, 0], [0, 0, 3, 0], [3, 0, 0, 0]]
    assert c.accuracy == pytest.approx(10 / 16)  # the diagonal 3 + 4 + 3 of 16 labelled claims
    assert r.unparsed_predictions == ("fc-08", "fc-15") and r.missing_prediction == ("fc-17",)


def test_exports_are_json_safe_and_carry_signature():
    r = evaluate_qa(demo_path("qa", "qa_demo.jsonl").read_bytes(), "qa_demo.jsonl")
    data = json.loads(report_json(r))
    assert data["signature"] == r.signature and "cmrc2018" in data["signature"]
    assert len(data["records"]) == 12 and data["records"][5]["exact_match"] is None
    text = records_csv(r)
    assert text.splitlines()[0].startswith("id,group,status") and text.count("\n") == 13  # header + 12 records
    assert not any(isinstance(v, float) and math.isnan(v) for v in data["overall"].values())


def test_confidence_intervals_of_em_and_f1_resample_the_scored_records():
    import json as _json

    from evaluators.metrics.statistics import bootstrap_ci
    from evaluators.qa import QAConfig, evaluate_qa

    rows = [{"id": str(i), "question": "q", "answer": "Paris", "prediction": p, "system": s}
            for i, (p, s) in enumerate([("Paris", "a"), ("paris!", "a"), ("Lyon", "a"), ("the Paris", "b"),
                                        ("Paris, France", "b"), ("", "b")])]
    data = "\n".join(_json.dumps(r) for r in rows).encode()
    report = evaluate_qa(data, "x.jsonl", QAConfig(ci_resamples=2000, ci_seed=5))
    o = report.overall
    # EM per record: 1, 1, 0, 1 ("the" is an article), 0, 0 -> mean 0.5; the interval is the bootstrap of that column
    ref = bootstrap_ci([1, 1, 0, 1, 0, 0], n_resamples=2000, seed=5, unit="record")
    assert o.exact_match == 0.5 and (o.exact_match_ci_low, o.exact_match_ci_high) == (ref.ci_low, ref.ci_high)
    assert o.exact_match_ci_low <= o.exact_match <= o.exact_match_ci_high
    assert o.token_f1_ci_low <= o.token_f1 <= o.token_f1_ci_high and "unit=record" in o.ci
    a = report.by_group["a"]
    ref_a = bootstrap_ci([1, 1, 0], n_resamples=2000, seed=5)
    assert (a.exact_match_ci_low, a.exact_match_ci_high) == (ref_a.ci_low, ref_a.ci_high)
    assert report.to_dict()["overall"]["exact_match_ci_high"] == o.exact_match_ci_high  # in the JSON report
    none = evaluate_qa(data, "x.jsonl", QAConfig(ci_resamples=0)).overall
    assert none.exact_match == 0.5 and none.exact_match_ci_low is None and none.ci is None
