"""The calibration set from review sessions: final labels -> human verdicts, GT errors left out, the guidelines
version named by its text, mixed versions refused unless pooled."""

import hashlib

import pytest

from evaluators.judgelab import calibrate
from evaluators.judgelab.from_review import default_item_id, labels_from_review
from evaluators.review import ReviewStore

ITEMS = [
    {"kind": "memory", "id": "q0", "question_type": "temporal", "question": "when?", "ground_truth": "May",
     "prediction": "in May", "system": "mem0"},
    {"kind": "memory", "id": "q1", "question_type": "temporal", "question": "何时?", "ground_truth": "五月",
     "prediction": "六月", "system": "mem0"},
    {"kind": "memory", "id": "q2", "question_type": "single-hop", "question": "who?", "ground_truth": "Ann",
     "prediction": "Bob", "system": "mem0"},
    {"kind": "memory", "id": "q3", "question_type": "single-hop", "question": "where?", "ground_truth": "Rome",
     "prediction": "Roma", "system": "mem0"},
    {"kind": "memory", "id": "q4", "question_type": "single-hop", "question": "what?", "ground_truth": "x",
     "prediction": "y", "system": "mem0"},
]


def _v(n, text):
    return f"v{n}:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"


def test_final_labels_become_human_verdicts_with_their_guidelines_version(tmp_path):
    store = ReviewStore(tmp_path / "review.sqlite")
    s = store.create_session("cal", "memory", ITEMS, created_by="lead", k=2)
    store.update_session(s.id, guidelines="Right = same meaning as the reference.", by="lead")
    items = {i.payload["id"]: i for i in store.items(s.id)}
    # q0: both right under v1 -> 1 ; q1: both wrong -> 0 ; q2: they disagree, adjudicated wrong -> 0
    # q3: both say the GT is wrong -> left out ; q4: one decision under v1, one under v2 -> mixed version
    for rid, a, b in (("q0", "acceptable_variant", "acceptable_variant"), ("q1", "model_error", "model_error"),
                      ("q2", "correct", "model_error"), ("q3", "gt_error", "gt_error")):
        store.save_decision(items[rid].id, "ann", label=a, guidelines_version=1)
        store.save_decision(items[rid].id, "bob", label=b, guidelines_version=1)
    store.adjudicate(items["q2"].id, "carol", "model_error")
    store.update_session(s.id, guidelines="Right = same meaning; partial answers are wrong.", by="lead")
    store.save_decision(items["q4"].id, "ann", label="model_error", guidelines_version=1)
    store.save_decision(items["q4"].id, "bob", label="model_error", guidelines_version=2)
    got = labels_from_review(store, [s.id])
    v1, v2 = _v(1, "Right = same meaning as the reference."), _v(2, "Right = same meaning; partial answers are wrong.")
    by_id = {lab.item_id: lab for lab in got.labels}
    assert sorted(by_id) == ["q0@mem0", "q1@mem0", "q2@mem0", "q4@mem0"]
    assert (by_id["q0@mem0"].label, by_id["q0@mem0"].slice, by_id["q0@mem0"].guidelines_version) == (1, "temporal", v1)
    assert (by_id["q1@mem0"].label, by_id["q1@mem0"].guidelines_version) == (0, v1)
    # adjudicated: the session's current guidelines version (v2)
    assert (by_id["q2@mem0"].label, by_id["q2@mem0"].guidelines_version) == (0, v2)
    assert by_id["q4@mem0"].guidelines_version == f"mixed({v1}, {v2})"
    assert got.left_out == (("q3@mem0", "final label gt_error: not a right / wrong verdict on the output"),)
    # three guidelines versions among the labels: refused, unless pooled
    with pytest.raises(ValueError, match="3 guidelines versions"):
        calibrate(got.labels, [])
    assert calibrate(got.labels, [], pool_guidelines=True, n_resamples=10).n_labels == 4
    store.engine.dispose()


def test_default_item_id():
    assert default_item_id({"id": "q1", "system": "mem0"}) == "q1@mem0"
    assert default_item_id({"id": 7}) == "7"
