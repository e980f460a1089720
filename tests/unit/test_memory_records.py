"""evaluators.memory records and loaders: EvalResult JSON/JSONL round trip, LoCoMo and
LongMemEval loading (category mapping, adversarial items), predictions keyed by id."""

import json

import pytest

from evaluators.memory.loaders import (
    attach_predictions, detect_format, load_locomo, load_longmemeval, load_mem0_locomo, load_predictions,
    load_results_file,
)
from evaluators.memory.records import (
    ADVERSARIAL_GROUND_TRUTH, EvalResult, canonical_type, read_results, results_to_json, results_to_jsonl,
)

EN = EvalResult("conv-1", "conv-1_q0", "temporal", "When did Alice move to Boston?", "7 May 2023",
                "She moved on 7 May 2023.", metadata={"category": 2, "evidence": ["D1:3"]})
ZH = EvalResult("conv-zh", "conv-zh_q1", "single_hop", "小明养的猫叫什么名字？", "咪咪", "它叫咪咪。")

# A LoCoMo-shaped file written for these tests: one item of each category; the
# adversarial items have `adversarial_answer` (one also has `answer`, as 2 of the 446
# real ones do).
LOCOMO = [{
    "sample_id": "conv-t",
    "conversation": {"speaker_a": "Alice", "speaker_b": "Bob"},
    "qa": [
        {"question": "Which cities did Bob visit?", "answer": "Paris, Rome", "evidence": ["D1:2"], "category": 1},
        {"question": "When did Bob move?", "answer": 2020, "evidence": ["D2:2"], "category": 2},
        {"question": "Would Bob enjoy hiking?", "answer": "Likely yes; he likes the outdoors", "category": 3},
        {"question": "Where did Bob move from?", "answer": "New York", "category": 4},
        {"question": "What did Alice adopt?", "adversarial_answer": "a dog", "category": 5},
        {"question": "小明去了哪里？", "answer": "北京", "adversarial_answer": "上海", "category": 5},
    ],
}]


def test_jsonl_round_trip_keeps_every_field_english_and_chinese():
    text = results_to_jsonl([EN, ZH])
    assert "小明" in text  # non-ASCII kept as is, not \u-escaped
    report = read_results(text.encode("utf-8"), "r.jsonl")
    assert report.issues == []
    assert report.results == [EN, ZH]
    assert report.results[0].metadata == {"category": 2, "evidence": ["D1:3"]}
    again = read_results(results_to_json([EN, ZH]).encode("utf-8"), "r.json")
    assert again.results == [EN, ZH]


def test_read_results_accepts_aliases_and_locates_bad_lines():
    lines = [
        {"question_id": "a", "category": "4", "question": "Q?", "answer": 3, "response": "3"},
        {"question_id": "b", "question_type": "knowledge-update", "answer": "东京", "hypothesis": "东京"},
        {"question_type": "temporal", "answer": "x", "prediction": "y"},              # no id
        {"question_id": "c", "answer": "x", "prediction": "y"},                         # no type
        {"question_id": "a", "question_type": "temporal", "answer": "x", "prediction": "y"},  # duplicate
    ]
    data = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n{broken\n"
    report = read_results(data.encode("gb18030"), "mixed.jsonl")
    assert [r.question_id for r in report.results] == ["a", "b"]
    a, b = report.results
    assert (a.question_type, a.ground_truth, a.prediction) == ("single_hop", "3", "3")  # category 4 = single-hop
    assert (b.question_type, b.ground_truth) == ("knowledge_update", "东京")
    located = {(i.line, i.message.split(" (")[0]) for i in report.issues}
    assert located == {
        (3, "missing 'question_id'"), (4, "missing 'question_type'"),
        (5, "duplicate question_id 'a'; the first is kept"), (6, "invalid JSON on this line: Expecting property name "
                                                                  "enclosed in double quotes"),
    }


@pytest.mark.parametrize("value, expected", [
    (1, "multi_hop"), ("2", "temporal"), (3, "open_domain"), ("4", "single_hop"), (5, "adversarial"),
    ("single-session-preference", "single_session_preference"), ("temporal-reasoning", "temporal_reasoning"),
    ("Multi Hop", "multi_hop"), ("多跳", "多跳"),
])
def test_canonical_type_follows_the_official_locomo_mapping(value, expected):
    # snap-research/LoCoMo task_eval/evaluation_stats.py CATEGORY_MAPPING:
    # 1 Multi-hop, 2 Temporal, 3 Open-domain, 4 Single-hop, 5 Adversarial.
    assert canonical_type(value) == expected


def test_load_locomo_maps_categories_and_handles_adversarial_items():
    report = load_locomo(LOCOMO, "locomo.json")
    assert report.issues == []
    types = [r.question_type for r in report.results]
    assert types == ["multi_hop", "temporal", "open_domain", "single_hop", "adversarial", "adversarial"]
    ids = [r.question_id for r in report.results]
    assert ids == [f"conv-t_q{i}" for i in range(6)]
    assert report.results[1].ground_truth == "2020"  # int answers become text, as str() in the official code
    adv_en, adv_zh = report.results[4], report.results[5]
    # No `answer`: the benchmark asks "(a) Not mentioned in the conversation (b) <adversarial_answer>";
    # the expected choice is (a), the distractor is kept.
    assert adv_en.ground_truth == ADVERSARIAL_GROUND_TRUTH and adv_en.abstention
    assert adv_en.metadata["adversarial_answer"] == "a dog"
    # With both fields the official gpt_utils.py uses `answer` as the distractor.
    assert adv_zh.metadata["adversarial_answer"] == "北京"
    assert all(r.prediction == "" for r in report.results)


def test_load_locomo_reports_bad_items_with_json_paths():
    bad = [{"sample_id": "s", "qa": [{"question": "q", "category": 9}, {"question": "q", "category": 2},
                                     "oops", {"question": "ok", "answer": "a", "category": 4}]}, 3]
    report = load_locomo(bad, "bad.json")
    assert [r.question_id for r in report.results] == ["s_q3"]
    assert [(i.path, i.message) for i in report.issues] == [
        ("[0].qa[0].category", "unknown category 9; expected 1-5"),
        ("[0].qa[1]", "missing 'answer'"),
        ("[0].qa[2]", "expected a QA object"),
        ("[1]", "expected an object with a 'qa' list"),
    ]


def test_load_longmemeval_types_and_abstention():
    questions = [
        {"question_id": "q1", "question_type": "single-session-user", "question": "Where do I work?",
         "answer": "Acme", "question_date": "2023/05/28 (Sun) 19:47"},
        {"question_id": "q2_abs", "question_type": "multi-session", "question": "我的狗叫什么？",
         "answer": "你没有提到过狗。"},
        {"question_id": "q3", "question_type": "knowledge-update", "question": "How many?", "answer": 4},
        {"question_id": "q4", "question_type": "made-up", "answer": "x"},
        {"question_id": "q5", "question_type": "", "answer": "x"},
        {"question_id": "q6", "question_type": "multi-session"},
    ]
    report = load_longmemeval(json.dumps(questions, ensure_ascii=False).encode("utf-8"), "lme.json")
    assert [(r.question_id, r.question_type, r.abstention) for r in report.results] == [
        ("q1", "single_session_user", False), ("q2_abs", "multi_session", True), ("q3", "knowledge_update", False),
        ("q4", "made_up", False)]
    assert report.results[2].ground_truth == "4"
    assert report.results[0].metadata["question_date"] == "2023/05/28 (Sun) 19:47"
    # an unknown type is kept with a warning; an empty type or a missing answer skips the question
    assert [(i.path, i.severity) for i in report.issues] == [
        ("[3].question_type", "warning"), ("[4].question_type", "error"), ("[5]", "error")]


def test_predictions_keyed_by_question_id_are_joined():
    questions = load_locomo(LOCOMO).results
    preds = "\n".join(json.dumps(x, ensure_ascii=False) for x in [
        {"question_id": "conv-t_q0", "hypothesis": "Paris and Rome"},
        {"question_id": "conv-t_q5", "prediction": "没有提及"},
        {"question_id": "nope", "prediction": "x"},
        {"question_id": "conv-t_q0", "prediction": "dup"},
        {"prediction": "no id"},
    ]).encode("utf-8")
    table, issues = load_predictions(preds, "p.jsonl")
    assert table == {"conv-t_q0": "Paris and Rome", "conv-t_q5": "没有提及", "nope": "x"}
    assert [i.line for i in issues] == [4, 5]
    joined, join_issues = attach_predictions(questions, table, "p.jsonl")
    assert [r.prediction for r in joined] == ["Paris and Rome", "", "", "", "", "没有提及"]
    assert [i.message.split(" ")[0] for i in join_issues] == ["4", "1"]  # 4 without prediction, 1 unknown id
    # a JSON object {question_id: answer} is accepted too
    assert load_predictions(b'{"a": "x", "b": 2}', "p.json")[0] == {"a": "x", "b": "2"}


def test_mem0_results_take_dataset_ids_when_the_dataset_is_given():
    dataset = load_locomo(LOCOMO)
    mem0 = {"0": [
        {"question": "Which cities did Bob visit?", "answer": "Paris, Rome", "response": "Paris", "category": "1",
         "llm_score": 1, "f1_score": 0.67},
        {"question": "Where did Bob move from?", "answer": "New York", "response": "NYC", "category": "4",
         "llm_score": 0},
        {"question": "Not in the dataset?", "answer": "x", "response": "y", "category": "2"},
    ]}
    with_ids = load_mem0_locomo(mem0, "results.json", dataset=dataset)
    assert [r.question_id for r in with_ids.results] == ["conv-t_q0", "conv-t_q3", "conv0_2"]
    assert with_ids.results[0].metadata["llm_score"] == 1 and with_ids.results[0].metadata["evidence"] == ["D1:2"]
    assert len(with_ids.issues) == 1 and with_ids.issues[0].path == "0[2]"
    without = load_mem0_locomo(json.dumps(mem0).encode(), "results.json")
    assert [r.question_id for r in without.results] == ["conv0_0", "conv0_1", "conv0_2"]
    assert detect_format(mem0) == "mem0_locomo"


def test_load_results_file_recognises_each_shape():
    assert load_results_file(json.dumps(LOCOMO).encode(), "l.json").format == "locomo"
    lme = [{"question_id": "q", "question_type": "multi-session", "question": "?", "answer": "a"}]
    assert load_results_file(json.dumps(lme).encode(), "q.json").format == "longmemeval"
    assert load_results_file(results_to_jsonl([EN]).encode(), "r.jsonl").results == [EN]
    broken = load_results_file(b"\xff\xfe\xfa\xfb\x81", "bad.json")
    assert broken.results == [] and broken.issues[0].kind == "decode"
    csv_text = "question_id,question_type,question,ground_truth,prediction\nz1,4,问题,答案,答案\n"
    assert load_results_file(csv_text.encode("utf-8-sig"), "r.csv").results[0].question_type == "single_hop"


def test_the_local_judge_store_is_named_by_the_sha256_of_the_results_jsonl(monkeypatch):
    """memory-<first 16 hex of SHA-256(results_to_jsonl(results))>.json, also when an answer is hashed in
    pieces (a long one: set to a few characters here) and never copied whole."""
    import hashlib

    from evaluators.memory import run as run_mod
    from evaluators.memory.records import results_to_jsonl

    results = [EvalResult("s", "q1", "single_hop", "谁？", "林远", "林远 went \"home\"\n"),
               EvalResult("s", "q2", "temporal", "When?", "2023", "x " * 50, metadata={"a": [1, 2.5, None, "é"]})]
    want = "memory-" + hashlib.sha256(results_to_jsonl(results).encode("utf-8")).hexdigest()[:16] + ".json"
    assert run_mod.local_judge_store("/tmp", results).name == want
    monkeypatch.setattr(run_mod, "_DIGEST_CHARS", 7)
    assert run_mod.local_judge_store("/tmp", results).name == want
