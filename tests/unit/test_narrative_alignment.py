"""Event alignment: optimal IoU assignment, threshold, ids first, fallbacks, missed/spurious."""

import pytest

from evaluators.narrative.alignment import align_events
from evaluators.narrative.spans import resolve_span
from evaluators.schema import NarrativeEvent, TextSpan

TEXT = "x" * 100  # offsets only matter here; the text lets every span verify as "unverified"


def ev(eid, start=None, end=None, time_order=None):
    ts = None if start is None else TextSpan(start=start, end=end, text="")
    return NarrativeEvent(id=eid, text_span=ts, time_order=time_order)


def align(gt, pred, **kw):
    return align_events(gt, pred, [resolve_span(e.text_span, TEXT) for e in gt],
                        [resolve_span(e.text_span, TEXT) for e in pred], **kw)


def test_optimal_assignment_beats_greedy():
    # GT A=[0,10), B=[4,14); predicted X=[1,11), Y=[0,8).
    # IoU(A,X) = 9/11 = .818, IoU(A,Y) = 8/10 = .8, IoU(B,X) = 7/13 = .538, IoU(B,Y) = 4/14 = .286.
    # Greedy takes A-X first and leaves B with Y (.286 < .5): one pair.  The optimal assignment
    # over eligible pairs (IoU >= .5) takes A-Y + B-X = 1.338 > .818: two pairs.
    gt = [ev("A", 0, 10), ev("B", 4, 14)]
    pred = [ev("X", 1, 11), ev("Y", 0, 8)]
    al = align(gt, pred)
    got = {(p.gt_id, p.pred_id, round(p.iou, 4), p.method) for p in al.pairs}
    assert got == {("A", "Y", 0.8, "span_iou"), ("B", "X", round(7 / 13, 4), "span_iou")}
    assert al.missed == () and al.spurious == ()


def test_threshold_makes_missed_and_spurious():
    # IoU([0,10), [6,16)) = 4 / 16 = .25
    gt, pred = [ev("g", 0, 10)], [ev("p", 6, 16)]
    al = align(gt, pred)
    assert al.pairs == () and al.missed == (0,) and al.spurious == (0,)
    al = align(gt, pred, min_iou=0.2)
    assert [(p.gt_id, p.pred_id, p.iou) for p in al.pairs] == [("g", "p", 0.25)]


def test_ids_that_agree_are_paired_first():
    # e1 and e2 swapped their spans in the prediction, but the ids agree and the spans still
    # overlap enough (IoU([0,10), [0,8)) = .8, IoU([20,30), [21,30)) = .9): paired by id.
    gt = [ev("e1", 0, 10), ev("e2", 20, 30)]
    pred = [ev("e2", 21, 30), ev("e1", 0, 8)]
    al = align(gt, pred)
    assert [(p.gt_id, p.pred_id, p.method) for p in al.pairs] == [("e1", "e1", "id"), ("e2", "e2", "id")]


def test_ids_do_not_override_contradicting_spans():
    # The model numbered its own events: its "E1" is the GT's E2 text, its "E2" the GT's E3 text.
    gt = [ev("E1", 0, 5), ev("E2", 5, 14), ev("E3", 14, 18)]
    pred = [ev("E1", 5, 14), ev("E2", 14, 18)]
    al = align(gt, pred)
    # Same ids, IoU 0: the spans decide (E2-E1 and E3-E2 at IoU 1), and a warning says so.
    assert [(p.gt_id, p.pred_id, p.iou, p.method) for p in al.pairs] == [
        ("E2", "E1", 1.0, "span_iou"), ("E3", "E2", 1.0, "span_iou")]
    assert al.missed == (0,) and al.spurious == ()
    assert any("aligned by their spans instead" in w for w in al.warnings)


def test_duplicate_gt_ids_are_reported():
    al = align([ev("x", 0, 5), ev("x", 5, 10)], [ev("x", 0, 5)])
    assert any("GT event id 'x' appears more than once" in w for w in al.warnings)


def test_time_order_then_list_order_fallback_is_flagged():
    gt = [ev("a", 0, 10, time_order=1), ev("b", time_order=3), ev("c")]
    pred = [ev("p1", 0, 10, time_order=1), ev("p2", 50, 60, time_order=2), ev("p3", 70, 80, time_order=3)]
    al = align(gt, pred)
    got = [(p.gt_id, p.pred_id, p.method) for p in al.pairs]
    # a-p1 by span; b (no span, time_order 3) with p3; c (no span, no time_order) with p2 by position?
    # c is GT index 2 and the only free prediction is p2 at index 1: positions differ, so c stays missed.
    assert got == [("a", "p1", "span_iou"), ("b", "p3", "time_order")]
    assert al.missed == (2,) and al.spurious == (1,)
    assert any("aligned by time_order" in w for w in al.warnings)


def test_list_order_fallback():
    gt = [ev("a", 0, 10), ev("b")]
    pred = [ev("p1", 0, 10), ev("p2", 30, 40)]
    al = align(gt, pred)
    assert [(p.gt_id, p.pred_id, p.method, p.iou) for p in al.pairs] == [
        ("a", "p1", "span_iou", 1.0), ("b", "p2", "list_order", None)]
    assert al.method_counts() == {"id": 0, "span_iou": 1, "time_order": 0, "list_order": 1}


def test_bad_threshold_is_rejected():
    with pytest.raises(ValueError):
        align([ev("a", 0, 1)], [ev("b", 0, 1)], min_iou=0)


def test_event_labels_are_made_when_read_and_travel_as_a_tuple(monkeypatch):
    import pickle

    import evaluators.narrative.alignment as alignment

    text = "The fox ran into the woods at night and hid. 狐狸跑进了森林里，躲了起来。"
    gt = [NarrativeEvent(id="E1", event_type="escape", text_span=TextSpan(start=0, end=44, text="")),
          NarrativeEvent(id="E2", event_type="", text_span=TextSpan(start=45, end=60, text=""))]
    pred = [NarrativeEvent(id="P1", description="a description only")]
    calls = []
    label = alignment.event_label
    monkeypatch.setattr(alignment, "event_label", lambda *a: calls.append(a[1]) or label(*a))
    al = align_events(gt, pred, [resolve_span(e.text_span, text) for e in gt], [resolve_span(None, text)],
                      text=text)
    assert calls == []  # scoring does not read them
    # 6 words then "…"; Chinese: the first 14 characters of the span, then "…"; no span: the description
    expected_gt = ("escape: The fox ran into the woods…", "狐狸跑进了森林里，躲了起来。")
    assert len(al.gt_labels) == 2 and al.gt_labels == expected_gt and al.pred_labels == ("a description only",)
    assert al.label_of("E2") == "狐狸跑进了森林里，躲了起来。" and al.label_of("nope") == "nope"
    assert calls == [0, 1, 0]  # each event labelled once
    copy = pickle.loads(pickle.dumps(al))
    assert type(copy.gt_labels) is tuple and copy.gt_labels == expected_gt and copy == al
