"""evaluators.memory.inputs: the one resolver of the page's uploads and the CLI's options."""

from __future__ import annotations

import json

from evaluators.memory.inputs import LLM_SCORE_SOURCE, pick_judge_scores, resolve_inputs
from evaluators.memory.judge import Judgement

QUESTIONS = [
    {"question_id": "t1", "question_type": "temporal-reasoning", "question": "When did I move?", "answer": "May 2023"},
    {"question_id": "u1", "question_type": "single-session-user", "question": "我的猫叫什么？", "answer": "咪咪"},
    {"question_id": "u2_abs", "question_type": "single-session-user", "question": "What is my dog's name?",
     "answer": "You never mentioned a dog."},
]
#: LongMemEval's judge output: the judged hypothesis and the judge's label, for two of the three questions.
LABELS = [
    {"question_id": "t1", "hypothesis": "In May 2023.",
     "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": True}},
    {"question_id": "u1", "hypothesis": "叫咪咪。", "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": False}},
]


def _json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def test_questions_and_a_judge_output_score_the_judged_hypotheses():
    inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)), labels=("out.eval-results", _jsonl(LABELS)))
    assert [(r.question_id, r.prediction) for r in inputs.results] == [("t1", "In May 2023."), ("u1", "叫咪咪。")]
    assert inputs.stored_labels == {"t1": 1.0, "u1": 0.0}
    assert inputs.stored_source == "out.eval-results"
    assert "Predictions: the 2 hypotheses in out.eval-results; the other 1 question(s) of lme.json are left out." \
        in inputs.notes
    # LongMemEval's table counts the labelled questions of the whole question file
    assert [r.question_id for r in inputs.longmemeval_questions()] == ["t1", "u1", "u2_abs"]
    assert inputs.issues == []


def test_a_predictions_file_wins_over_the_hypotheses():
    preds = _jsonl([{"question_id": "t1", "prediction": "June"}])
    inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)), predictions=("p.jsonl", preds),
                            labels=("out.eval-results", _jsonl(LABELS)))
    assert [(r.question_id, r.prediction) for r in inputs.results] == [("t1", "June"), ("u1", ""), ("u2_abs", "")]
    assert any("2 question(s) have no prediction" in i.message for i in inputs.issues)


def test_questions_alone_are_scored_with_empty_predictions_and_said_so():
    inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)))
    assert [r.prediction for r in inputs.results] == ["", "", ""]
    assert inputs.notes == ["No predictions file: every prediction of the 3 question(s) of lme.json is empty "
                            "(give one keyed by question_id)."]
    assert inputs.longmemeval_questions() is None  # no stored labels


def test_mem0_results_carry_their_stored_labels():
    mem0 = {"0": [{"question": "Where?", "answer": "Oslo", "response": "Oslo", "category": "4", "llm_score": 1},
                  {"question": "When?", "answer": "May", "response": "June", "category": "2", "llm_score": 0}]}
    inputs = resolve_inputs(results=("results.json", _json(mem0)))
    assert inputs.stored_labels == {"conv0_0": 1.0, "conv0_1": 0.0}
    assert inputs.stored_source == f"{LLM_SCORE_SOURCE} results.json"
    assert inputs.longmemeval_questions() is None
    # a labels file replaces them
    labels = _jsonl([{"question_id": "conv0_1", "label": "yes"}])
    assert resolve_inputs(results=("results.json", _json(mem0)), labels=("l.jsonl", labels)).stored_labels == {
        "conv0_1": 1.0}


def test_bad_inputs_are_located_never_raised():
    inputs = resolve_inputs(questions=("q.json", b'[{"a": 1}]'), predictions=("p.jsonl", b"{oops\n"),
                            judge_cache=("c.json", b'{"entries": {}}'))
    assert inputs.results == []
    messages = [(i.file, i.severity, i.message) for i in inputs.issues]
    assert ("q.json", "error", "not a LoCoMo or LongMemEval question file; ignored") in messages
    assert any(f == "c.json" and m.startswith("not a judge cache") for f, _, m in messages)
    assert ("p.jsonl", "warning", "ignored: predictions need a question file to be joined with") in messages
    broken = resolve_inputs(questions=("q.json", b'[{"question_id": "x",\n oops]'))
    assert broken.results == [] and broken.issues[0].file == "q.json" and broken.issues[0].line == 2


def test_judgements_win_over_stored_labels():
    j = Judgement(score=0.6, mode="continuous")
    inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)), labels=("out.eval-results", _jsonl(LABELS)))
    assert pick_judge_scores({"t1": j}, inputs.stored, inputs.stored_source) == ({"t1": j}, "judge")
    assert pick_judge_scores({}, inputs.stored, inputs.stored_source) == (
        {"t1": 1.0, "u1": 0.0}, "stored labels from out.eval-results")
    assert pick_judge_scores(None, None) == (None, "")


def test_an_undecodable_file_in_any_role_is_an_issue_not_an_exception():
    binary = b"\x81\x00\xff garbage"
    for role in ("results", "predictions", "labels", "judge_cache"):
        inputs = resolve_inputs(questions=("lme.json", _json(QUESTIONS)), **{role: (f"{role}.bin", binary)})
        assert any(i.file == f"{role}.bin" and "cannot be decoded" in i.message for i in inputs.issues), role
    inputs = resolve_inputs(questions=("q.bin", binary))
    assert inputs.results == [] and inputs.issues[0].file == "q.bin"
