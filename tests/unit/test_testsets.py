"""Keyword test sets: schema validation, keyword scores, expected points, answers files, breakdowns."""

from __future__ import annotations

import json

import pytest

from evaluators.demo import demo_path
from evaluators.io import InputError
from evaluators.testsets import (RUBRIC, evaluate_multi_turn, evaluate_single, keyword_score, keyword_spans,
                                 load_answers, load_test_set, parse_test_set, point_coverage)


def item(**over):
    base = dict(id="fact_001", category="character", difficulty="easy", question="伊法的职业是什么？",
                expected_answer="医生", source={"file": "chapter0.txt", "line_range": [34, 34]}, keywords=["医生"])
    base.update(over)
    return base


# ------------------------------------------------------------------ schema


def test_schema_reports_each_bad_item_with_its_path_and_keeps_the_rest():
    doc = {"version": "1.0", "description": "d", "items": [
        item(),
        item(id="fact_002", category="weapon"),
        item(id="fact_003", difficulty="extreme"),
        {k: v for k, v in item(id="fact_004").items() if k != "expected_answer"},
        item(id="fact_005", source={"file": "x", "line_range": [9, 3]}),
        item(),  # duplicate id
        item(id="fact_006", question="Where?", keywords=["inn", " "]),
    ]}
    ts = parse_test_set(doc, "set.json")
    # an unknown category only groups: the item is kept, with a warning
    assert [i.id for i in ts.items] == ["fact_001", "fact_002", "fact_006"] and ts.kind == "single"
    assert ts.items[2].keywords == ["inn"]  # blank keyword dropped
    msgs = {i.path: i.message for i in ts.issues}
    sev = {i.path: i.severity for i in ts.issues}
    assert msgs["items[1].category"] == ("category 'weapon' is not one of character, location, event, relation, "
                                         "item; the item is kept and grouped under its own category")
    assert sev["items[1].category"] == "warning"
    assert msgs["items[2].difficulty"].startswith("difficulty must be one of easy, medium, hard")
    assert msgs["items[3].expected_answer"] == "required field 'expected_answer' is missing"
    assert "line_range" in next(p for p in msgs if p.startswith("items[4]"))
    assert "duplicate id" in msgs["items[5].id"]


def test_an_item_of_an_unknown_category_is_scored_in_its_own_group():
    doc = {"items": [item(), item(id="org_1", category="organization", question="哪个组织？", expected_answer="花羽会",
                                  keywords=["花羽会"])]}
    ts = parse_test_set(doc, "set.json")
    report = evaluate_single(ts, load_answers(json.dumps({"fact_001": "医生", "org_1": "是花羽会"}).encode(), "a.json"))
    assert list(report.by_category) == ["character", "organization"]  # known categories first, then others
    assert report.by_category["organization"].n_items == 1 and report.by_category["organization"].mean_score == 1.0
    # both items fully covered: every resample mean is 1
    assert (report.overall.mean_score_ci_low, report.overall.mean_score_ci_high) == (1.0, 1.0)
    wrong = evaluate_single(ts, load_answers(json.dumps({"fact_001": "农民", "org_1": "是花羽会"}).encode(), "a.json"))
    # scores 0 and 1: resample means 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4 -> interval [0, 1]
    assert wrong.overall.mean_score == 0.5
    assert (wrong.overall.mean_score_ci_low, wrong.overall.mean_score_ci_high) == (0.0, 1.0)


def test_schema_multi_turn_and_errors():
    doc = {"items": [{"id": "mt_001", "scenario": "追问", "turns": [
        {"turn": 1, "user": "伊法是谁？", "expected_points": ["花羽会的医生"]},
        {"turn": 2, "user": "他的助理？", "expected_points": [{"point": "咔库库", "keywords": ["咔库库"]}],
         "requires_context": True}]},
        {"id": "mt_002", "scenario": "s", "turns": [{"turn": 1, "user": "u", "expected_points": []}]}]}
    ts = parse_test_set(doc, "mt.json")
    assert ts.kind == "multi_turn" and [d.id for d in ts.items] == ["mt_001"]
    assert ts.issues[0].path.startswith("items[1].turns[0].expected_points")
    with pytest.raises(InputError):
        parse_test_set({"version": "1"}, "x.json")
    with pytest.raises(InputError) as exc:
        load_test_set(b'{"items": [', "broken.json")
    assert exc.value.issue.line == 1


def test_rubric_is_part_of_the_schema():
    assert sorted(RUBRIC) == [1, 2, 3, 4, 5]
    assert RUBRIC[5][0] == "完全正确，信息完整" and RUBRIC[1][1] == "completely wrong or irrelevant"


# ------------------------------------------------------------------ keyword score


@pytest.mark.parametrize("answer,keywords,score", [
    ("伊法是花羽会的医生", ["伊法", "医生"], 1.0),              # all -> 1.0
    ("伊法是花羽会的医生", ["伊法", "医生", "咔库库"], 2 / 3),    # some -> the fraction
    ("我不知道", ["伊法", "医生"], 0.0),                         # none -> 0.0
    ("Owen stayed at the INN", ["inn", "harbour"], 0.5),        # case folding
    ("an old ＢＲＡＳＳ compass", ["brass", "Compass"], 1.0),   # NFKC full-width
    ("", ["inn"], 0.0),
])
def test_keyword_score(answer, keywords, score):
    assert keyword_score(answer, keywords).score == pytest.approx(score)


def test_keyword_score_without_keywords_is_none():
    ks = keyword_score("anything", [])
    assert ks.score is None and ks.n_keywords == 0


def test_keyword_spans_map_back_to_original_text():
    answer = "阿橘提醒林远点亮ＢＲＡＳＳ灯"
    spans = keyword_spans(answer, ["林远", "brass", "阿橘提醒", "提醒"])
    assert [answer[s:e] for s, e in spans] == ["阿橘提醒林远", "ＢＲＡＳＳ"]  # overlapping spans merged
    assert keyword_spans("", ["x"]) == []


def test_point_coverage_rules():
    p = point_coverage("伊法是花羽会的医生", "花羽会的医生")
    assert (p.rule, p.covered) == ("verbatim", True)
    p = point_coverage("恰斯卡和伊法都在那里", "恰斯卡、伊法所在")
    assert (p.rule, p.covered) == ("verbatim", False)   # the point itself must appear
    p = point_coverage("Owen, a painter, came.", "a painter")
    assert p.covered                                       # punctuation and spaces ignored
    p = point_coverage("咔库库会学舌", "会学舌的龙", ["学舌", "龙"])
    assert (p.rule, p.covered, p.found) == ("keywords", False, ("学舌",))


# ------------------------------------------------------------------ answers files


def test_answers_formats(tmp_path):
    obj = load_answers(json.dumps({"a": "x", "b": {"answer": "y", "human_score": 4}, "c": {"1": "t1", "2": "t2"},
                                   "d": ["u1", "u2"], "e": {"answer": "z", "human_score": 9}}).encode(), "a.json")
    ans = obj.answers
    assert ans[("a", None)].text == "x" and ans[("b", None)].human_score == 4
    assert ans[("c", 2)].text == "t2" and ans[("d", 1)].text == "u1"
    assert ans[("e", None)].human_score is None and "human_score must be an integer from 1 to 5" in obj.issues[0].message
    recs = load_answers(b'{"id": "mt_001", "turn": 2, "response": "r"}\n{"turn": 1, "answer": "no id"}\n'
                        b'{"id": "x", "turns": [{"turn": 1, "answer": "t"}]}\n', "p.jsonl")
    assert recs.answers[("mt_001", 2)].text == "r" and recs.answers[("x", 1)].text == "t"
    assert recs.issues[0].line == 2
    csv = load_answers("id,answer,human_score\nq1,北京,5\nq2,上海,\n".encode("utf-8-sig"), "p.csv")
    assert csv.answers[("q1", None)] .human_score == 5 and csv.answers[("q2", None)].human_score is None


def test_answers_keyed_by_id_with_lists_of_turn_objects_are_an_answer_map():
    # Two list fields, so the object is not a container of records: each key is a dialogue id.
    obj = load_answers(json.dumps({"d1": [{"answer": "x"}, {"answer": "y"}], "d2": [{"answer": "z"}]}).encode(),
                       "a.json")
    assert {k: a.text for k, a in obj.answers.items()} == {("d1", 1): "x", ("d1", 2): "y", ("d2", 1): "z"}
    assert not obj.issues


def test_answer_record_issues_name_the_json_path():
    obj = load_answers(json.dumps({"answers": [{"id": "a", "answer": "x"}, {"answer": "no id"}]}).encode(), "a.json")
    assert [(i.path, i.message) for i in obj.issues] == [("answers[1]", "answer record without 'id'")]


# ------------------------------------------------------------------ demo sets (hand-derived)


def test_single_demo_breakdowns():
    ts = load_test_set(demo_path("testsets", "factual_demo.json").read_bytes(), "factual_demo.json")
    r = evaluate_single(ts, load_answers(demo_path("testsets", "factual_demo_answers.json").read_bytes()))
    scores = {i.id: i.score for i in r.items}
    assert scores == {"q_001": 1.0, "q_002": 0.5, "q_003": 0.0, "q_004": 0.5, "q_005": 1.0, "q_006": 1.0,
                      "q_007": 1.0, "q_008": 0.0, "q_009": None}
    assert r.missing_prediction == ("q_008",) and r.no_keywords == ("q_009",) and r.extra_answers == ("q_999",)
    assert r.overall.mean_score == pytest.approx(5 / 8)           # 8 scored items
    assert (r.overall.keywords_found, r.overall.keywords_total) == (11, 17)
    # character q_001 1; location q_006 1 (q_009 unscored); event (q_003 0 + q_005 1)/2; relation (q_004 0.5 +
    # q_008 0)/2 = 0.25; item (q_002 0.5 + q_007 1)/2
    assert {k: v.mean_score for k, v in r.by_category.items()} == pytest.approx(
        {"character": 1.0, "location": 1.0, "event": 0.5, "relation": 0.25, "item": 0.75})
    assert {k: v.mean_score for k, v in r.by_difficulty.items()} == pytest.approx(
        {"easy": 2.5 / 3, "medium": 0.5, "hard": 0.5})
    assert r.overall.mean_human_score == pytest.approx(4.0) and r.overall.n_human == 3   # (5 + 3 + 4) / 3
    with pytest.raises(ValueError):
        evaluate_multi_turn(ts, load_answers(b"{}"))


def test_multi_turn_demo_coverage():
    ts = load_test_set(demo_path("testsets", "multi_turn_demo.json").read_bytes(), "multi_turn_demo.json")
    r = evaluate_multi_turn(ts, load_answers(demo_path("testsets", "multi_turn_demo_answers.jsonl").read_bytes(),
                                             "multi_turn_demo_answers.jsonl"))
    turns = [(t.dialogue_id, t.turn, t.coverage) for d in r.dialogues for t in d.turns]
    assert turns == [("mt_001", 1, 1.0), ("mt_001", 2, 0.5), ("mt_001", 3, 1.0), ("mt_002", 1, 1.0), ("mt_002", 2, 0.0)]
    assert (r.overall.n_covered, r.overall.n_points) == (6, 8)
    assert r.overall.coverage_macro == pytest.approx(3.5 / 5)
    assert r.dialogue_macro == pytest.approx((4 / 5 + 2 / 3) / 2)
    assert r.missing_prediction == ("mt_002#2",)
    assert r.by_requires_context["with context"].n_turns == 3
    with pytest.raises(ValueError):
        evaluate_single(ts, load_answers(b"{}"))
