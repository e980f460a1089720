"""Action layer (incl. a partial action_layer and a missed event) and text spans (B, Pk, WindowDiff)."""

import pytest

from evaluators.narrative import NarrativeEvaluator
from tests.unit.narrative_builders import action, doc, event, span

EN = "The wolf attacked. The girl ran. Nothing happened. The hunter found the truth."


def _action_result():
    gt = doc(EN, [], [
        event("e1", span(EN, "The wolf attacked."), action_layer=action("physical", "attack", "ambush", "success",
                                                                         "climax")),
        event("e2", span(EN, "The girl ran."), action_layer=action("communicative", "", "", "success", "")),  # partial
        event("e3", span(EN, "Nothing happened."), action_layer=action()),                         # all empty
        event("e4", span(EN, "The hunter found the truth."),
              action_layer=action("mental", "realize", "discovery", "success", "resolution")),
    ])
    pred = doc(EN, [], [
        event("p1", span(EN, "The wolf attacked."), action_layer=action("Physical & Conflict", "attack", "duel",
                                                                         "Success", "climax")),
        event("p2", span(EN, "The girl ran."), action_layer=action("communicative", "persuade", "beg", "failure",
                                                                    "trigger")),
        event("p3", span(EN, "Nothing happened."), action_layer=action("physical", "attack")),
        # no prediction for "The hunter found the truth.": e4 is missed
    ])
    return NarrativeEvaluator().evaluate(pred, gt).action_layer


def test_action_field_accuracies_by_hand():
    a = _action_result()
    # category: e1 physical = "Physical & Conflict" (canonical), e2 equal, e4 missed -> 2/3
    # type:     e1 equal, e2 GT empty (skipped), e4 missed -> 1/2
    # context:  e1 ambush != duel, e4 missed -> 0/2
    # status:   e1 success = Success, e2 success != failure, e4 missed -> 1/3
    # function: e1 equal, e2 GT empty (skipped; the predicted "trigger" is extra), e4 missed -> 1/2
    assert a.field_correct == {"category": 2, "type": 1, "context": 0, "status": 1, "function": 1}
    assert a.field_total == {"category": 3, "type": 2, "context": 2, "status": 3, "function": 2}
    assert a.action_category_accuracy == pytest.approx(2 / 3)
    assert a.action_type_accuracy == 0.5 and a.action_context_accuracy == 0.0
    assert a.action_status_accuracy == pytest.approx(1 / 3) and a.action_function_accuracy == 0.5
    # micro field accuracy = (2 + 1 + 0 + 1 + 1) / (3 + 2 + 2 + 3 + 2) = 5/12
    assert a.action_layer_field_accuracy == pytest.approx(5 / 12)
    assert a.score == pytest.approx(5 / 12)
    # Events: e1 4/5 (partial), e2 1/2 (partial), e4 0/5 (neither); e3 skipped.
    assert (a.n_events_evaluated, a.n_events_skipped, a.n_events_missed) == (3, 1, 1)
    assert (a.complete_matches, a.partial_matches) == (0, 2)
    assert a.action_layer_partial_match == pytest.approx(2 / 3) and a.action_layer_complete_match == 0.0
    assert a.category_confusion == {"physical": {"physical": 1}, "communicative": {"communicative": 1},
                                    "mental": {"": 1}}
    assert a.gt_incomplete is True


def test_action_layer_identity_and_complete_match():
    text = "他下定决心。她哭了。"
    d = doc(text, [], [event("a", span(text, "他下定决心。"), action_layer=action("mental", "resolve", "vow", "success",
                                                                            "character_arc")),
                       event("b", span(text, "她哭了。"), action_layer=action("existential", "express_emotion", "cry",
                                                                          "", ""))])
    a = NarrativeEvaluator().evaluate(d, d).action_layer
    assert a.action_layer_complete_match == 1.0 and a.action_layer_field_accuracy == 1.0
    # b has status and function empty in GT: 8 GT-present fields in all.
    assert sum(a.field_total.values()) == 8


ZH = "甲。乙。丙。丁。戊。己。"  # six sentences of 2 characters: starts 0, 2, 4, 6, 8, 10


def test_boundary_similarity_pk_windowdiff_on_sentences():
    gt = doc(ZH, [], [event("A", {"start": 0, "end": 4, "text": "甲。乙。"}),
                      event("B", {"start": 4, "end": 6, "text": "丙。"}),
                      event("C", {"start": 6, "end": 12, "text": "丁。戊。己。"})])
    pred = doc(ZH, [], [event("X", {"start": 0, "end": 6, "text": "甲。乙。丙。"}),
                        event("Y", {"start": 6, "end": 12, "text": "丁。戊。己。"})])
    t = NarrativeEvaluator().evaluate(pred, gt).text_span
    # GT boundaries before sentences 2 and 3 (masses [2, 1, 3]); predicted before sentence 3 ([3, 3]).
    assert t.ground_truth_boundaries == [2, 3] and t.predicted_boundaries == [3]
    # One exact match, one GT-only boundary (a deletion), no near miss: B = (1 + 1 - 1) / 2 = 0.5
    assert (t.exact_matches, t.near_misses, t.insertions, t.deletions) == (1, 0, 0, 1)
    assert t.boundary_score == 0.5
    # k = max(2, round(6 / 3 / 2)) = 2; 4 windows; Pk disagrees at i=0 -> 1/4; WindowDiff differs at i=0,1 -> 2/4
    assert t.pk == 0.25 and t.window_diff == 0.5
    # A-X IoU 4/6 (partial), C-Y IoU 1 (correct), B missed; overlap = (2/3 + 1) / 2
    assert t.span_categories == {"correct": 1, "partial": 1, "missed": 1, "spurious": 0, "extra": 0}
    assert t.overlap_ratio == pytest.approx(5 / 6)


def test_offsets_inside_sentences_snap_to_the_nearest_boundary():
    text = "One. Two two. Three."  # sentences start at 0, 5, 14
    gt = doc(text, [], [event("g", {"start": 5, "end": 14, "text": "Two two. "})])
    pred = doc(text, [], [event("p", {"start": 6, "end": 13, "text": "wo two."})])
    t = NarrativeEvaluator().evaluate(pred, gt).text_span
    assert t.boundary_score == 1.0            # 6 -> 5 and 13 -> 14: same sentence boundaries
    assert t.overlap_ratio == pytest.approx(7 / 9)
    assert t.span_categories["partial"] == 1


def test_no_text_no_boundary_score_but_overlap():
    gt = doc("", [], [event("g", {"start": 0, "end": 10, "text": "abc"})])
    pred = doc("", [], [event("p", {"start": 0, "end": 5, "text": "abc"})])
    t = NarrativeEvaluator().evaluate(pred, gt).text_span
    assert t.boundary_score is None and "no source text" in t.reason
    assert t.overlap_ratio == 0.5


def test_gt_without_spans_is_incomplete():
    gt = doc(ZH, [], [event("g", None)])
    pred = doc(ZH, [], [event("p", {"start": 0, "end": 4, "text": "甲。乙。"})])
    r = NarrativeEvaluator().evaluate(pred, gt)
    assert r.text_span.boundary_score is None and r.text_span.gt_incomplete
    assert r.component_scores["text_span"] is None
    # the predicted span is paired by list order with the span-less GT event: extra, not spurious
    assert r.text_span.span_categories["extra"] == 1


def test_no_inner_gt_boundary_leaves_b_undefined_instead_of_perfect():
    # A one-sentence story: the GT event covers it whole, the prediction has no event at all.
    # Both segmentations have no inner boundary, so B would be a meaningless 1.0.
    text = "牛郎和织女在鹊桥上相会"
    gt = doc(text, [], [event("g", {"start": 0, "end": len(text), "text": text})])
    t = NarrativeEvaluator().evaluate(doc(text, [], []), gt).text_span
    assert t.boundary_score is None and "no sentence boundary" in t.reason
    assert t.span_categories["missed"] == 1


def test_pk_windowdiff_none_when_the_story_is_too_short_for_a_window():
    # Two sentences, GT boundary between them: k = max(2, round(2 / 2 / 2)) = 2 >= 2 units: no window.
    text = "甲。乙。"
    gt = doc(text, [], [event("a", span(text, "甲。")), event("b", span(text, "乙。"))])
    t = NarrativeEvaluator().evaluate(gt, gt).text_span
    assert t.boundary_score == 1.0 and t.pk is None and t.window_diff is None and t.windows == 0


@pytest.mark.parametrize("kwargs", [{"n_t": 0}, {"correct_iou": 5}, {"min_iou": 0}])
def test_bad_settings_are_rejected(kwargs):
    from evaluators.narrative import NarrativeConfig

    with pytest.raises(ValueError):
        NarrativeConfig(**kwargs)
