"""Persona dialogue inputs: case and prediction formats, located issues, matching."""

import json

import pytest

from evaluators.demo import demo_path
from evaluators.dialogue import index_key, load_cases, load_predictions, match_predictions

BY_SCENE = {"test_cases_by_scene": {
    "01. 野餐": [
        {"context": "妈妈说：你想带什么？", "expected_response": "饼干！", "scene": "01. 野餐", "dialogue_index": 1},
        {"context": "妈妈说：坐这里吧。", "expected_response": "好呀。", "scene": "01. 野餐", "dialogue_index": 2},
        {"context": "妈妈说：你想带什么？", "expected_response": "饼干！", "scene": "01. 野餐", "dialogue_index": 1},
    ],
    "02. New friend": [
        {"context": "Lulu: Hello!", "expected_response": "Hello Lulu!", "dialogue_index": "1"},
        {"context": "no index", "expected_response": "x"},
    ],
}}


def _bytes(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def test_index_key_normalizes_numbers():
    assert index_key(7) == index_key("7") == index_key(7.0) == index_key(" 7 ") == "7"
    assert index_key("7a") == "7a"


def test_load_cases_by_scene_with_duplicates_and_bad_row():
    cs = load_cases(_bytes(BY_SCENE), "cases.json")
    assert [(c.scene, c.dialogue_index, c.occurrence) for c in cs.cases] == [
        ("01. 野餐", "1", 0), ("01. 野餐", "2", 0), ("01. 野餐", "1", 1), ("02. New friend", "1", 0)]
    assert cs.scenes == ["01. 野餐", "02. New friend"]  # the group's name fills a missing scene
    assert cs.n_duplicate_keys == 1
    bad = [i for i in cs.issues if i.severity == "error"]
    assert len(bad) == 1 and bad[0].path == "test_cases_by_scene.02. New friend[1]"
    assert any(i.kind == "duplicate" for i in cs.issues)


def test_load_cases_from_jsonl_and_csv_with_located_errors():
    jsonl = ('{"scene": "s", "dialogue_index": 1, "context": "c", "expected_response": "你好"}\n'
             '{broken\n'
             '{"scene": "s", "dialogue_index": 2, "context": "c", "expected_response": "Hi"}\n').encode()
    cs = load_cases(jsonl, "cases.jsonl")
    assert [c.expected_response for c in cs.cases] == ["你好", "Hi"]
    assert cs.issues[0].line == 2
    csv_text = "scene,dialogue_index,context,expected_response\ns,1,c,再见\n,2,c,x\n".encode("utf-8-sig")
    cs = load_cases(csv_text, "cases.csv")
    assert [c.expected_response for c in cs.cases] == ["再见"]
    assert cs.issues[0].line == 3 and "scene" in cs.issues[0].message


def test_load_cases_rejects_wrong_top_level_without_crashing():
    cs = load_cases(b'{"something": 1}', "x.json")
    assert cs.cases == [] and cs.issues[0].path == "$"
    cs = load_cases(b'{"test_cases_by_scene": ', "x.json")
    assert cs.cases == [] and cs.issues[0].kind == "json" and cs.issues[0].line == 1


def test_load_predictions_formats():
    jsonl = ('{"model": "m1", "scene": "s", "dialogue_index": 1, "prediction": "你好"}\n'
             '{"model": "m1", "scene": "s", "dialogue_index": "1", "prediction": "again"}\n'
             '{"model": "m1", "scene": "s", "dialogue_index": 3, "prediction": 5}\n').encode()
    ps = load_predictions(jsonl, "run.jsonl")
    assert [(r.model, r.dialogue_index, r.occurrence) for r in ps.rows] == [("m1", "1", 0), ("m1", "1", 1)]
    assert ps.issues[0].line == 3 and "must be text" in ps.issues[0].message
    csv_rows = "scene,dialogue_index,prediction\ns,1,Hello\n".encode()
    ps = load_predictions(csv_rows, "small-model.csv")
    assert ps.models == ["small-model"]  # no model column: the file name
    assert load_predictions(csv_rows, "x.csv", default_model="given").models == ["given"]


def test_demo_report_format_is_read_as_predictions_and_as_cases():
    data = demo_path("dialogue", "panda-chat-small_report.json").read_bytes()
    ps = load_predictions(data, "panda-chat-small_report.json")
    assert ps.models == ["panda-chat-small"] and len(ps.rows) == 13
    assert ps.rows[0].expected_response == "我想带竹笋饼干和我的小风筝！"
    cs = load_cases(data, "panda-chat-small_report.json")
    assert len(cs.cases) == 13


def test_matching_unmatched_duplicates_missing_and_mismatch():
    cs = load_cases(_bytes(BY_SCENE), "cases.json")
    rows = [
        {"model": "A", "scene": "01. 野餐", "dialogue_index": 1, "prediction": "饼干！"},
        {"model": "A", "scene": "01. 野餐", "dialogue_index": 1, "prediction": "第二次"},   # 2nd occurrence: matched
        {"model": "A", "scene": "01. 野餐", "dialogue_index": 1, "prediction": "第三次"},   # 3rd: duplicate
        {"model": "A", "scene": "01. 野餐", "dialogue_index": 9, "prediction": "?"},        # no such case
        {"model": "B", "scene": "02. New friend", "dialogue_index": 1, "prediction": "Hi",
         "expected_response": "Something else"},                                            # stored GT differs
        {"model": "B", "scene": "01. 野餐", "dialogue_index": 2, "prediction": "好",
         "expected_response": "好呀。", "context": "another prompt"},                         # context differs
    ]
    ps = load_predictions("\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode(), "p.jsonl")
    m = match_predictions(cs.cases, ps.rows)
    assert m.models == ["A", "B"]
    assert len(m.matched["A"]) == 2 and len(m.matched["B"]) == 2
    assert [r.prediction for r in m.duplicates] == ["第三次"]
    assert [r.dialogue_index for r in m.unmatched] == ["9"]
    assert m.missing["A"] == [("01. 野餐", "2", 0), ("02. New friend", "1", 0)]
    assert [r.model for r in m.expected_mismatch] == ["B"] and [r.model for r in m.context_mismatch] == ["B"]
    kinds = sorted(i.kind for i in m.issues())
    assert kinds == ["context_mismatch", "duplicate", "expected_mismatch", "unmatched"]
    assert all(i.line is not None for i in m.issues())


@pytest.mark.parametrize("payload", [b"", b"\xff\xfe\x00garbage", b"[1, 2]"])
def test_bad_prediction_files_give_issues_not_exceptions(payload):
    ps = load_predictions(payload, "bad.json")
    assert ps.rows == []
    assert ps.issues
