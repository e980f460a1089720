"""Review decisions -> GT patch (evaluators.review.gt_patch), and the corrected-answer column of the store."""

from __future__ import annotations

import hashlib

import pytest
import sqlalchemy as sa

from evaluators.io.gt_patch import apply_gt_patch, read_gt_patch, write_gt_patch
from evaluators.review import ReviewStore
from evaluators.review.gt_patch import build_gt_patch, final_labels

DIGEST = hashlib.sha256(b"gt file").hexdigest()
ITEMS = [
    {"kind": "qa", "id": "q0", "question": "capital of France?", "ground_truth": "Paris", "prediction": "Paris city"},
    {"kind": "qa", "id": "q1", "question": "中国的首都?", "ground_truth": "北京", "prediction": "北京市"},
    {"kind": "qa", "id": "q2", "question": "year?", "ground_truth": "1843 | 1844", "prediction": "1842"},
    {"kind": "qa", "id": "q3", "question": "who?", "ground_truth": "Lyon", "prediction": "Nice"},
    {"kind": "qa", "id": "q4", "question": "what?", "ground_truth": "a", "prediction": "b"},
    {"kind": "qa", "id": "q5", "question": "which?", "ground_truth": "x", "prediction": "y"},
]
GOLD = {"q0": ("Paris",), "q1": ("北京",), "q2": ("1843", "1844"), "q3": ("Lyon",), "q4": ("a",), "q5": ("x",)}


@pytest.fixture
def session(tmp_path):
    store = ReviewStore(tmp_path / "review.sqlite")
    s = store.create_session("s1", "qa", ITEMS, created_by="lead", k=2)
    items = {i.payload["id"]: i for i in store.items(s.id)}

    def both(rid, label_a, label_b=None, comment=""):
        store.save_decision(items[rid].id, "ann", label=label_a, comment=comment, status="submitted")
        store.save_decision(items[rid].id, "bob", label=label_b or label_a, status="submitted")

    both("q0", "acceptable_variant", comment="same city")        # agreed: add the prediction
    both("q1", "acceptable_variant", "model_error")                  # disagree, adjudicated below
    both("q2", "gt_error")                                           # adjudicated with a corrected answer
    both("q3", "gt_error")                                           # adjudicated, no corrected answer
    both("q4", "model_error")                                        # agreed model error: nothing
    both("q5", "acceptable_variant", "model_error")                  # disagree, not adjudicated: no final label
    store.adjudicate(items["q1"].id, "carol", "acceptable_variant", "全称")
    store.adjudicate(items["q2"].id, "carol", "gt_error", "born in 1842", corrected_answer=" 1842 ")
    store.adjudicate(items["q3"].id, "carol", "gt_error")
    return store, s


def test_final_labels_adjudication_first_then_agreement(session):
    store, s = session
    final = {f.item.payload["id"]: (f.label, f.source, f.who) for f in final_labels(store, s.id)}
    assert final == {"q0": ("acceptable_variant", "agreed", "ann, bob"),
                     "q1": ("acceptable_variant", "adjudicated", "carol"),
                     "q2": ("gt_error", "adjudicated", "carol"), "q3": ("gt_error", "adjudicated", "carol"),
                     "q4": ("model_error", "agreed", "ann, bob")}
    assert [c["corrected_answer"] for c in store.gt_corrections(s.id)] == [" 1842 ", None]


def test_build_patch_from_decisions_then_apply(session):
    store, s = session
    built = build_gt_patch(store, s.id, DIGEST, GOLD)
    got = [(e.record_id, e.op, e.old, e.new, e.who, e.session) for e in built.entries]
    assert got == [("q0", "add_answer", ("Paris",), ("Paris city",), "ann, bob", "s1"),
                   ("q1", "add_answer", ("北京",), ("北京市",), "carol", "s1"),
                   ("q2", "replace", ("1843", "1844"), ("1842",), "carol", "s1")]
    assert built.entries[0].why == "acceptable_variant: same city (agreed)"
    assert built.entries[2].why == "gt_error: born in 1842"
    assert built.skipped == (("q3", "GT error without a corrected answer (type it when adjudicating)"),)
    # through the file format and back, then applied
    patch = read_gt_patch(write_gt_patch(built.entries).encode("utf-8"), "s1.jsonl")
    out = apply_gt_patch(GOLD, patch.entries, DIGEST)
    assert out.answers == {"q0": ("Paris", "Paris city"), "q1": ("北京", "北京市"), "q2": ("1842",)}
    # without the GT, old answers come from the items (QA answers shown joined by " | ")
    assert build_gt_patch(store, s.id, DIGEST).entries[2].old == ("1843", "1844")
    # an id the GT file does not have is skipped, with the reason
    assert ("q0", "record id not in the GT file") in build_gt_patch(store, s.id, DIGEST,
                                                                   {k: v for k, v in GOLD.items() if k != "q0"}).skipped


def test_a_schema_2_database_is_upgraded_to_keep_corrected_answers(tmp_path):
    """Schema 3 (Alembic revision 0003) adds the column to a database made at schema 2."""
    from tests.helpers.review_db import upgrade_to

    path = tmp_path / "old.sqlite"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        upgrade_to(conn, "0002")
    assert "corrected_answer" not in {c["name"] for c in sa.inspect(engine).get_columns("adjudications")}
    engine.dispose()
    store = ReviewStore(path)
    s = store.create_session("old", "qa", ITEMS[:1], created_by="lead")
    item = store.items(s.id)[0]
    store.adjudicate(item.id, "carol", "gt_error", corrected_answer="Paris, France")
    assert store.adjudications(s.id)[0]["corrected_answer"] == "Paris, France"
    store.adjudicate(item.id, "carol", "model_error", corrected_answer="ignored")  # only a gt_error keeps one
    assert store.adjudications(s.id)[0]["corrected_answer"] is None


def test_reviewed_estimate_from_session_labels(session):
    from evaluators.metrics.ppi import classical_mean, ppi_mean
    from evaluators.review.estimate import human_labels, reviewed_estimate

    store, s = session
    final = final_labels(store, s.id)
    # q0, q1 acceptable -> 1; q4 model error -> 0; q2 gt_error rescored against 1842 -> EM 1; q3 not rescored: out
    human = human_labels(final, rescored={(None, "q2"): 1.0})
    assert human == {(None, "q0"): 1.0, (None, "q1"): 1.0, (None, "q2"): 1.0, (None, "q4"): 0.0}
    # the run: 10 records, EM 0 on the six reviewed ones, and 4 more never reviewed
    auto = {(None, f"q{i}"): 0.0 for i in range(6)} | {(None, f"u{i}"): float(i % 2) for i in range(4)}
    est = reviewed_estimate(auto, human, metric="exact_match")
    assert (est.n_records, est.n_reviewed, est.n_unknown, est.automatic) == (10, 4, 0, 0.2)
    assert est.human_only == classical_mean([1, 1, 1, 0])
    # unreviewed: q3 (GT error not rescored), q5 (no final label), u0-u3
    assert est.reviewed == ppi_mean([1, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1, 0, 1])
    # the metric is constant on the reviewed records: no information, lam 0 -> the human mean 3/4
    assert est.reviewed.lam == 0 and est.reviewed.estimate == 0.75
    with pytest.raises(ValueError, match="at least 2"):
        reviewed_estimate(auto, {(None, "q0"): 1.0})
    # everything reviewed: the estimate is the human one
    every = reviewed_estimate({k: 0.0 for k in human}, human)
    assert every.reviewed == every.human_only


def test_metric_against_people(tmp_path):
    from sklearn.metrics import cohen_kappa_score

    from evaluators.review.metric_agreement import metric_against_people

    # 10 QA items: EM says right on q0-q4, wrong on q5-q9.  People (two annotators, agreeing except on q9):
    # right on q0-q3 and q5-q6 (variants EM missed), wrong on q4 and q7-q8; q9 adjudicated gt_error (left out).
    items = [{"kind": "qa", "id": f"q{i}", "question": f"问题 {i}", "ground_truth": "a", "prediction": f"p{i}",
              "exact_match": 1.0 if i < 5 else 0.0, "token_f1": 0.4 + 0.05 * i} for i in range(10)]
    store = ReviewStore(tmp_path / "r.sqlite")
    s = store.create_session("m", "qa", items, created_by="lead", k=2)
    human = {0: 1, 1: 1, 2: 1, 3: 1, 4: 0, 5: 1, 6: 1, 7: 0, 8: 0}
    for item in store.items(s.id):
        i = int(item.payload["id"][1:])
        if i == 9:
            store.save_decision(item.id, "ann", label="gt_error")
            store.save_decision(item.id, "bob", label="model_error")
            store.adjudicate(item.id, "carol", "gt_error", corrected_answer="b")
            continue
        # right is "correct" on even ids, "acceptable variant" on odd ones: both read as right, for the metric and
        # the people's ceiling alike (correct decisions left out of the ceiling dropped q0 and q2 from it)
        label = ("correct" if i % 2 == 0 else "acceptable_variant") if human[i] else "model_error"
        store.save_decision(item.id, "ann", label=label)
        store.save_decision(item.id, "bob", label=label)
    m = metric_against_people(store, s.id, n_resamples=4000)
    # rows automatic wrong/right, columns human wrong/right:
    # auto wrong (q5-q8): human wrong q7, q8 -> 2; right q5, q6 -> 2.  auto right (q0-q4): wrong q4 -> 1; right 4
    assert m.confusion == [[2, 2], [1, 4]] and (m.n_items, m.n_left_out) == (9, 1)
    # accuracy (2 + 4) / 9; kappa: po = 6/9, pe = (4/9)(3/9) + (5/9)(6/9) = 42/81 -> (54/81 - 42/81) / (39/81) = 12/39
    assert m.accuracy == pytest.approx(6 / 9) and m.cohen_kappa.value == pytest.approx(12 / 39)
    auto = [1, 1, 1, 1, 1, 0, 0, 0, 0]
    people = [human[i] for i in range(9)]
    assert m.cohen_kappa.value == pytest.approx(cohen_kappa_score(auto, people))
    assert m.accuracy_ci_low <= m.accuracy <= m.accuracy_ci_high
    assert m.cohen_kappa.ci_low < m.cohen_kappa.value < m.cohen_kappa.ci_high
    assert not m.cohen_kappa.meaningful and m.cohen_kappa.n_items == 9   # fewer than 30 items: said so
    # the ceiling is on the metric's two labels (right / wrong): q9's gt_error decision is left out, as its
    # gt_error final label is, so q9 is no shared item; on q0-q8 the people agree: kappa 1 (a 3-label kappa
    # with q9 as gt_error vs model_error would be lower and compare different things)
    assert m.human_kappa.value == pytest.approx(cohen_kappa_score(
        ["acceptable_variant" if human[i] else "model_error" for i in range(9)],
        ["acceptable_variant" if human[i] else "model_error" for i in range(9)])) == pytest.approx(1.0)
    assert m.human_kappa.n_items == m.cohen_kappa.n_items == 9
    assert "gt_error left out" in m.label_set
    # F1 >= 0.6 as the verdict: right on q4-q8 (0.6 ... 0.8)
    f1 = metric_against_people(store, s.id, source="token_f1", threshold=0.6, n_resamples=500)
    assert f1.source == "token_f1" and f1.confusion == [[0, 4], [3, 2]]
