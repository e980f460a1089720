"""Stored judge labels, agreement (accuracy, Cohen's kappa vs scikit-learn) and
LongMemEval's per-type accuracy table (the kappa itself: tests/unit/test_agreement.py)."""

import json

import pytest
from sklearn.metrics import cohen_kappa_score

from evaluators.memory.agreement import (
    judge_agreement, label_value, load_judge_labels, longmemeval_accuracy,
)
from evaluators.memory.judge import JudgeCache, Judgement
from evaluators.memory.records import EvalResult
from evaluators.metrics.agreement import cohen_kappa_ci


@pytest.mark.parametrize("value, expected", [
    (True, 1.0), (False, 0.0), (1, 1.0), (0.4, 0.4), ("yes", 1.0), ("No", 0.0), ("CORRECT", 1.0), ("wrong", 0.0),
    ("正确", 1.0), ("错误", 0.0), ({"model": "gpt-4o-2024-08-06", "label": True}, 1.0), ("0.6", 0.6),
])
def test_label_values(value, expected):
    assert label_value(value) == expected


@pytest.mark.parametrize("value", ["maybe", 2, -1, None, [1]])
def test_bad_label_values(value):
    with pytest.raises(ValueError, match="not a judge label"):
        label_value(value)


def test_judge_agreement_counts():
    ours = {"a": 1.0, "b": 0.8, "c": 0.2, "d": 0.0, "e": 0.4, "f": Judgement(1.0, "continuous"), "g": None, "x": 1.0}
    stored = {"a": 1, "b": 0, "c": 0, "d": 1, "e": 0, "f": 1, "g": 1, "y": 0}
    agr = judge_agreement(ours, stored)
    # compared a..f (g has no score of ours; x, y only on one side). Binary at 0.5:
    # ours   1 1 0 0 0 1 ; stored 1 0 0 1 0 1 -> agree a, c, e, f = 4/6
    assert (agr.n_compared, agr.n_only_ours, agr.n_only_stored) == (6, 1, 2)
    assert agr.accuracy == pytest.approx(4 / 6)
    assert agr.confusion_matrix == {"both_correct": 2, "both_wrong": 2, "ours_only_correct": 1,
                                    "stored_only_correct": 1}
    assert agr.cohen_kappa == pytest.approx(cohen_kappa_score([1, 1, 0, 0, 0, 1], [1, 0, 0, 1, 0, 1]))
    assert set(agr.disagreements) == {"b", "d"}
    none = judge_agreement({"a": 1.0}, {"b": 1.0})
    assert none.accuracy is None and none.cohen_kappa is None and none.kappa_reason == "no question scored by both"
    assert none.cohen_kappa_ci_low is None and none.ci is None


def test_judge_agreement_kappa_interval():
    # 40 questions, 20 right and 20 wrong by both judges: kappa = (1 - 0.5) / (1 - 0.5) = 1 on every resample
    # holding both labels (one holding a single label has probability 2 * 0.5 ** 40 and is undefined): [1, 1]
    same = {f"q{i}": float(i % 2) for i in range(40)}
    agr = judge_agreement(same, same, n_resamples=500)
    assert agr.cohen_kappa == 1 and (agr.cohen_kappa_ci_low, agr.cohen_kappa_ci_high) == (1.0, 1.0)
    assert agr.ci == "bootstrap(percentile, items resampled, n_resamples=500, level=0.95, seed=0)"
    # the interval is cohen_kappa_ci's of the binary labels (ours 1 1 0 0 0 1, stored 1 0 0 1 0 1 above)
    ours = {"a": 1.0, "b": 0.8, "c": 0.2, "d": 0.0, "e": 0.4, "f": 1.0}
    stored = {"a": 1, "b": 0, "c": 0, "d": 1, "e": 0, "f": 1}
    agr = judge_agreement(ours, stored, n_resamples=300, seed=4)
    fig = cohen_kappa_ci([1, 1, 0, 0, 0, 1], [1, 0, 0, 1, 0, 1], labels=[1, 0], n_resamples=300, seed=4)
    assert (agr.cohen_kappa_ci_low, agr.cohen_kappa_ci_high) == (fig.ci_low, fig.ci_high)
    assert agr.cohen_kappa_ci_low <= agr.cohen_kappa <= agr.cohen_kappa_ci_high
    assert judge_agreement(ours, stored, n_resamples=0).cohen_kappa_ci_low is None  # no resample, no interval
    # one label throughout: kappa undefined, no interval
    flat = judge_agreement({"a": 1.0, "b": 1.0}, {"a": 1, "b": 1})
    assert flat.cohen_kappa is None and flat.cohen_kappa_ci_low is None


def test_load_labels_in_each_format():
    lme = "\n".join(json.dumps(x) for x in [
        {"question_id": "q1", "hypothesis": "Tokyo", "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": True}},
        {"question_id": "q2", "hypothesis": "x", "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": False}},
        {"question_id": "q3", "autoeval_label": {"model": "m"}},
    ]).encode()
    got = load_judge_labels(lme, "x.eval-results-gpt-4o")
    assert got.format == "longmemeval" and got.labels == {"q1": 1.0, "q2": 0.0}
    assert got.models == {"gpt-4o-2024-08-06": 2} and got.hypotheses["q1"] == "Tokyo"
    assert got.issues[0].line == 3
    csv_labels = "question_id,label\nz1,是\nz2,否\nz3,也许\n".encode("gb18030")
    got = load_judge_labels(csv_labels, "labels.csv")
    assert got.labels == {"z1": 1.0, "z2": 0.0} and got.issues[0].line == 4
    cache = JudgeCache()
    cache.put("c1", "fp", Judgement(0.6, "continuous", model="local"))
    got = load_judge_labels(cache.to_json().encode(), "cache.json")
    assert got.format == "judge_cache" and got.labels == {"c1": 0.6} and got.models == {"local": 1}
    mem0 = json.dumps({"0": [{"question": "q", "answer": "a", "response": "a", "category": "4", "llm_score": 1}]})
    got = load_judge_labels(mem0.encode(), "results.json")
    assert got.format == "mem0_locomo" and got.labels == {"conv0_0": 1.0}


def test_longmemeval_accuracy_hand_derived():
    qs = [EvalResult(q, q, t, "?", "a", "") for q, t in [
        ("u1", "single_session_user"), ("u2", "single_session_user"), ("t1", "temporal_reasoning"),
        ("t2_abs", "temporal_reasoning"), ("k1", "knowledge_update")]]
    labels = {"u1": 1.0, "u2": 0.0, "t1": 1.0, "t2_abs": 1.0, "zz": 1.0}
    rep = longmemeval_accuracy(qs, labels)
    by = {t.question_type: t for t in rep.by_type}
    assert [t.question_type for t in rep.by_type] == ["single_session_user", "single_session_preference",
                                                       "single_session_assistant", "multi_session",
                                                       "temporal_reasoning", "knowledge_update"]
    assert (by["single_session_user"].accuracy, by["temporal_reasoning"].accuracy) == (0.5, 1.0)
    assert by["knowledge_update"].count == 0 and by["knowledge_update"].accuracy is None
    assert rep.task_averaged == pytest.approx((0.5 + 1.0) / 2)  # over the types with labels
    assert rep.overall == pytest.approx(3 / 4)
    assert (rep.abstention.count, rep.abstention.accuracy) == (1, 1.0)
    assert rep.unknown_ids == ("zz",) and rep.n_labels == 4
