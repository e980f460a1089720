"""Relationships and sentiment on aligned events, counted by the missing-GT policy."""

import pytest

from evaluators.narrative import NarrativeEvaluator
from tests.unit.narrative_builders import doc, event, rel, span

TEXT = "牛郎和老牛相依为命。老牛告诉牛郎去银河。王母娘娘划出天河。牛郎带着孩子追赶。"
S0, S1, S2, S3 = "牛郎和老牛相依为命。", "老牛告诉牛郎去银河。", "王母娘娘划出天河。", "牛郎带着孩子追赶。"
CHARS = [("牛郎", "", "Hero"), ("老牛", "", "Mentor"), ("王母娘娘", "王母", "Villain"), ("一儿一女", "孩子", "Everyman")]

GT = doc(TEXT, CHARS, [
    event("e1", span(TEXT, S0), [rel("牛郎", "老牛", "Social & Alliance", "ally", "positive")]),
    event("e2", span(TEXT, S1), [rel("老牛", "牛郎", "Hierarchy", "mentor_student", "positive"),
                                 rel("牛郎", "", "Neutral", "stranger", "")]),          # partial: no target
    event("e3", span(TEXT, S2), []),                                                  # GT empty: skipped
    event("e4", span(TEXT, S3), [rel("牛郎", "一儿一女", "Family & Kinship", "parent_child", "positive")]),
    event("e5", {"start": 0, "end": len(TEXT), "text": TEXT},                          # missed: IoU < .5
          [rel("王母娘娘", "牛郎", "Adversarial", "enemy", "hostile")]),
])
PRED = doc(TEXT, CHARS, [
    event("p1", span(TEXT, S0), [rel("牛郎", "老牛", "Social & Alliance", "friend", "positive")]),
    event("p2", span(TEXT, S1), [rel("老牛", "牛郎", "权威与阶级(Hierarchy)", "mentor_student", "neutral"),
                                 rel("牛郎", "银河", "Neutral", "stranger", "neutral"),
                                 rel("老牛", "织女", "Romance", "lover", "romantic")]),
    event("p3", span(TEXT, S2), [rel("王母", "牛郎", "Adversarial", "enemy", "hostile")]),
    event("p4", span(TEXT, S3), [{"doer": "牛郎", "receiver": "孩子", "type": "parent_child"},
                                 rel("牛郎", "孩子", "Family & Kinship", "parent_child", "")]),
    event("p5", {"start": 29, "end": 31, "text": "牛郎"}, [rel("牛郎", "织女", "Romance", "lover", "romantic")]),
])


@pytest.fixture(scope="module")
def result():
    return NarrativeEvaluator().evaluate(PRED, GT)


def test_alignment_of_the_fixture(result):
    assert [(p.gt_id, p.pred_id) for p in result.alignment.pairs] == [
        ("e1", "p1"), ("e2", "p2"), ("e3", "p3"), ("e4", "p4")]
    assert result.alignment.missed == (4,)     # e5 covers the whole text: IoU with any prediction < .5
    assert result.alignment.spurious == (4,)   # p5 is two characters inside S3


def test_relationship_counts(result):
    r = result.relationships
    # GT counted: R1 (e1), R2 and R3 (e2), R4 (e4), R5 (e5, missed event: a false negative) = 5.
    # Predicted counted: e1: 1, e2: 3, e4: 1 valid (the doer/receiver record is a schema error) = 5.
    # Matched: R1 (牛郎->老牛), R2 (老牛->牛郎), R3 on its agent 牛郎 (GT target empty), R4 via the alias 孩子.
    assert (r.total_relationships_gt, r.total_relationships_pred, r.total_relationships_correct) == (5, 5, 4)
    assert r.relationship_precision == pytest.approx(4 / 5)
    assert r.relationship_recall == pytest.approx(4 / 5)
    assert r.relationship_f1 == pytest.approx(4 / 5)
    # Level 1: R1 ok, R2 ok through the canonical form of "权威与阶级(Hierarchy)", R3 ok, R4 ok -> 4/4.
    assert (r.level1_correct, r.level1_total) == (4, 4)
    # Level 2: R1 ally != friend, the rest equal -> 3/4.  Strict (both levels) -> 3 of 5 / 5.
    assert (r.level2_correct, r.level2_total, r.level2_accuracy) == (3, 4, 0.75)
    assert r.strict_correct == 3 and r.relationship_strict_f1 == pytest.approx(3 / 5)
    assert (r.n_events_evaluated, r.n_events_skipped) == (3, 1)
    # Extra, not counted: p3's relationship (GT e3 empty) and p5's (spurious event).
    assert r.n_pred_extra == 2
    assert r.n_invalid_pred == 1
    # All 5 distinct GT pairs appear in some prediction (王母 resolves to 王母娘娘 in p3).
    assert (r.pairs_covered, r.pairs_total) == (5, 5)
    assert r.gt_incomplete is True and "1 aligned GT events have no relationships" in r.reason


def test_rows_for_the_ui(result):
    rows = {row.gt_event or row.pred_event: row for row in result.relationships.events}
    assert rows["e2"].status == "compared" and [m.match_on for m in rows["e2"].matched] == ["agent+target", "agent"]
    assert [(s.agent, s.target) for s in rows["e2"].spurious] == [("老牛", "织女")]
    assert rows["e3"].status == "skipped"
    assert rows["e4"].n_invalid_pred == 1
    assert rows["e5"].status == "missed"
    assert rows["p5"].status == "spurious"


def test_sentiment_on_matched_pairs(result):
    s = result.sentiment
    # Matched pairs: R1 positive/positive, R2 positive/neutral, R3 GT "" (skipped), R4 positive/"" (missing).
    # micro: correct 1, predicted 2, GT 3 -> P = 1/2, R = 1/3, F1 = (2 * 1/2 * 1/3) / (5/6) = 0.4
    assert (s.total_sentiment_correct, s.total_sentiment_pred, s.total_sentiment_gt) == (1, 2, 3)
    assert s.sentiment_precision == pytest.approx(0.5)
    assert s.sentiment_recall == pytest.approx(1 / 3)
    assert s.sentiment_f1 == pytest.approx(0.4)
    assert s.n_relationships_skipped == 1
    # Polarity: R1 same, R2 positive vs neutral, R4 no prediction -> 1/3.
    assert s.sentiment_polarity_accuracy == pytest.approx(1 / 3)


def test_sentiment_macro_equals_sklearn(result):
    import numpy as np
    import sklearn.metrics as sklearn  # a dev requirement (requirements-dev.txt): never skipped
    y_true = ["positive", "positive", "positive"]
    y_pred = ["positive", "neutral", "(none)"]
    # undefined values are skipped, not counted as 0 (zero_division=nan), as in the QA per-class table
    p, r, f, _ = sklearn.precision_recall_fscore_support(
        y_true, y_pred, labels=["neutral", "positive"], average="macro", zero_division=np.nan)
    s = result.sentiment
    assert (s.sentiment_macro_precision, s.sentiment_macro_recall, s.sentiment_macro_f1) == pytest.approx((p, r, f))
    # by hand: positive P=1 R=1/3 F1=.5; neutral P=0, R undefined (no GT neutral: skipped), F1=0
    # -> macro P (1 + 0) / 2 = .5, R 1/3 (positive only), F1 (.5 + 0) / 2 = .25
    assert (p, r, f) == pytest.approx((0.5, 1 / 3, 0.25))
    assert s.per_label["neutral"]["recall"] is None and s.per_label["positive"]["recall"] == pytest.approx(1 / 3)


def test_english_relationship_labels_through_the_taxonomy():
    text = "The fox tricked the crow. The crow dropped the cheese."
    gt = doc(text, [("Fox", "", "Trickster"), ("Crow", "", "Everyman")],
             [event("g1", span(text, "The fox tricked the crow."),
                    [rel("Fox", "Crow", "Adversarial", "rival", "negative")])])
    pred = doc(text, [("fox", "", "trickster"), ("crow", "", "everyman")],
               [event("x", span(text, "The fox tricked the crow."),
                      [rel("fox", "CROW", "adversary", "Rival", "Negative")])])
    r = NarrativeEvaluator().evaluate(pred, gt)
    assert r.relationships.relationship_f1 == 1.0
    assert r.relationships.level1_accuracy == 1.0 and r.relationships.level2_accuracy == 1.0
    assert r.sentiment.sentiment_f1 == 1.0


def test_no_gt_relationships_gives_none_with_reason():
    text = "一。二。"
    gt = doc(text, [("甲", "", "")], [event("g", span(text, "一。"), [])])
    pred = doc(text, [("甲", "", "")], [event("p", span(text, "一。"), [rel("甲", "乙", "Romance", "lover")])])
    r = NarrativeEvaluator().evaluate(pred, gt)
    assert r.relationships.relationship_f1 is None and r.relationships.relationship_precision is None
    assert "no relationships to compare" in r.relationships.reason
    assert r.sentiment.sentiment_f1 is None
    assert r.left_out["relationships"].startswith("ground truth has no relationships")
