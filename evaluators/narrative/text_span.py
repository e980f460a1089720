"""Text-span evaluation: sentence-level segmentation agreement and span overlap.

Segmentation
    The source text is split into sentences (:mod:`evaluators.text.sentences`).  Every
    usable event span contributes a boundary at its start and at its end, each snapped to
    the nearest sentence boundary; the GT and predicted boundary sets are compared with
    boundary similarity B (Fournier 2013, near-miss tolerance ``n_t`` sentences, default
    2), the primary score ``boundary_score``, and with Pk and WindowDiff (window from the
    GT segmentation).  ``exact_matches``, ``near_misses`` (transpositions), ``insertions``
    (boundaries only in the prediction) and ``deletions`` (only in GT) are the edit counts.

Overlap
    ``overlap_ratio`` is the mean character IoU of aligned events whose spans are both
    usable.  Every span gets a category: ``correct`` (aligned, IoU >= ``correct_iou``),
    ``partial`` (aligned, 0 < IoU < ``correct_iou``), ``missed`` (GT span without an
    overlapping partner), ``spurious`` (predicted span without an overlapping partner),
    ``extra`` (predicted span whose aligned GT event has no usable span: not counted, per
    the missing-GT policy).

Without any usable GT span the component is ``gt_incomplete`` and ``boundary_score`` is
``None``; without source text there are no sentences, so B, Pk and WindowDiff are ``None``
(the overlap is still computed from the offsets).  When the GT spans mark no boundary
inside the text (a one-sentence story, spans within one sentence) there is no segmentation
to compare and B is ``None`` too; Pk and WindowDiff are ``None`` when the story is too short
for a single window.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from evaluators.metrics.segmentation import boundary_edits, window_disagreements
from evaluators.narrative.base import ComponentEvaluator, ComponentResult, EvalContext, Mismatch, ensure_context
from evaluators.narrative.spans import ResolvedSpan
from evaluators.results import build_frozen, mean_or_none
from evaluators.text.sentences import sentence_starts


class SpanRow(NamedTuple):
    """One span of the overlay: which event(s), where, how it was judged."""

    category: str
    gt_index: int | None
    pred_index: int | None
    gt_event: str
    pred_event: str
    gt_start: int | None
    gt_end: int | None
    pred_start: int | None
    pred_end: int | None
    iou: float | None
    method: str


@dataclass(frozen=True)
class TextSpanResult(ComponentResult):
    """Span scores of one document pair."""

    score_field = "boundary_score"
    detail_fields = ('spans', 'sentence_offsets')

    boundary_score: float | None
    pk: float | None
    window_diff: float | None
    exact_matches: int
    near_misses: int
    insertions: int
    deletions: int
    weighted_edits: float
    n_t: int
    pk_disagreements: int
    window_diff_disagreements: int
    windows: int
    overlap_ratio: float | None
    overlap_scores: list[float]
    n_ground_truth_spans: int
    n_predicted_spans: int
    n_sentences: int
    ground_truth_boundaries: list[int]
    predicted_boundaries: list[int]
    span_categories: dict[str, int]
    gt_span_status: dict[str, int]
    pred_span_status: dict[str, int]
    spans: list[SpanRow] = field(default_factory=list)
    sentence_offsets: list[int] = field(default_factory=list)


class TextSpanEvaluator(ComponentEvaluator):
    """Evaluate event text spans (seed API)."""

    component = "text_span"

    def evaluate(self, prediction: Any, ground_truth: Any, text: str | None = None, *,
                 context: EvalContext | None = None) -> TextSpanResult:
        """Score spans (see the module docstring); ``text`` overrides the documents' text.

        Parameters
        ----------
        prediction, ground_truth : dict, bytes, NarrativeDocument or LoadedDocument
            The two JSON v3 (or v2) documents; ignored when ``context`` is given.
        text : str, optional
            The story text, overriding the documents' own.
        context : EvalContext, optional
            A context already built for this pair (shared by the components).

        Returns
        -------
        TextSpanResult
        """
        ctx = ensure_context(prediction, ground_truth, text, context, self.config)
        return evaluate_text_span(ctx)


def snap_boundaries(spans: list[ResolvedSpan], starts: tuple[int, ...], text_len: int) -> set[int]:
    """Boundary slots (between sentence ``j - 1`` and ``j`` is slot ``j - 1``) of a set of spans.

    Each span start and end is snapped to the nearest sentence boundary offset
    (``starts`` plus the end of the text); ties go to the earlier boundary.

    Parameters
    ----------
    spans : list of ResolvedSpan
        Half-open character spans ``[start, end)``; unusable ones are skipped.
    starts : tuple of int
        Character offset of each sentence's start, ascending (n sentences).
    text_len : int
        Length of the text in characters.

    Returns
    -------
    set of int
        Slots in ``[0, n - 1)``, for :func:`evaluators.metrics.segmentation.boundary_edits`
        (Fournier 2013) and Pk / WindowDiff; empty with fewer than two sentences.
    """
    n = len(starts)
    if n < 2:
        return set()
    points = (*starts, text_len)
    last = len(points)
    slots = set()
    for s in spans:
        if not s.usable:
            continue
        for off in (s.start, s.end):
            k = bisect_left(points, off)
            if k >= last:
                j = n
            elif k == 0 or points[k] == off:
                j = k
            else:
                j = k if points[k] - off < off - points[k - 1] else k - 1
            if 0 < j < n:
                slots.add(j - 1)
    return slots


def _row_key(r: SpanRow) -> int:
    return r.gt_start if r.gt_start is not None else (r.pred_start or 0)


def evaluate_text_span(ctx: EvalContext) -> TextSpanResult:
    """Span scores for a prepared context (see the module docstring).

    Parameters
    ----------
    ctx : EvalContext
        The prepared pair of documents (:func:`evaluators.narrative.base.build_context`): parsed GT
        and prediction, the aligned events, taxonomy and config.

    Returns
    -------
    TextSpanResult
    """
    al = ctx.alignment
    cfg = ctx.config
    gt_spans, pred_spans = al.gt_spans, al.pred_spans
    gt_ok = [s.usable for s in gt_spans]
    pred_ok = [s.usable for s in pred_spans]
    gt_usable = [s for s, ok in zip(gt_spans, gt_ok) if ok]
    pred_usable = [s for s, ok in zip(pred_spans, pred_ok) if ok]
    gt_status = dict(Counter(s.status for s in gt_spans))
    pred_status = dict(Counter(s.status for s in pred_spans))
    gid, pid = al.gt_ids, al.pred_ids
    correct_iou = cfg.correct_iou

    rows: list[SpanRow] = []
    overlaps: list[float] = []
    cats = dict.fromkeys(("correct", "partial", "missed", "spurious", "extra"), 0)
    mismatches: list[Mismatch] = []
    paired_gt: set[int] = set()
    paired_pred: set[int] = set()

    for p in al.pairs:
        gi, pj = p.gt_index, p.pred_index
        g, q = gt_spans[gi], pred_spans[pj]
        if gt_ok[gi] and pred_ok[pj] and p.iou is not None and p.iou > 0:
            overlaps.append(p.iou)
            cat = "correct" if p.iou >= correct_iou else "partial"
            cats[cat] += 1
            rows.append(SpanRow(cat, gi, pj, gid[gi], pid[pj], g.start, g.end, q.start, q.end, p.iou, p.method))
            paired_gt.add(gi)
            paired_pred.add(pj)
            if cat == "partial":
                mismatches.append(Mismatch("text_span", "span", f"[{g.start}, {g.end})", f"[{q.start}, {q.end})",
                                           gid[gi], pid[pj], f"IoU {p.iou:.3f}"))
        elif gt_ok[gi] and pred_ok[pj]:  # aligned without text evidence and the spans do not overlap
            overlaps.append(0.0)
        elif pred_ok[pj]:
            cats["extra"] += 1
            rows.append(SpanRow("extra", gi, pj, gid[gi], pid[pj], None, None, q.start, q.end, None, p.method))
            paired_pred.add(pj)
    for i, g in enumerate(gt_spans):
        if gt_ok[i] and i not in paired_gt:
            cats["missed"] += 1
            rows.append(SpanRow("missed", i, None, gid[i], "", g.start, g.end, None, None, None, ""))
            mismatches.append(Mismatch("text_span", "missed_span", f"[{g.start}, {g.end})", "", gid[i]))
    for j, q in enumerate(pred_spans):
        if pred_ok[j] and j not in paired_pred:
            cats["spurious"] += 1
            rows.append(SpanRow("spurious", None, j, "", pid[j], None, None, q.start, q.end, None, ""))
            mismatches.append(Mismatch("text_span", "spurious_span", "", f"[{q.start}, {q.end})", "", pid[j]))
    rows.sort(key=_row_key)

    starts = sentence_starts(ctx.text) if ctx.text else ()
    b = pk_v = wd_v = None
    exact = near = ins = dele = pk_d = wd_d = windows = 0
    weighted = 0.0
    gt_b: set[int] = set()
    pred_b: set[int] = set()
    reason = None
    if not gt_usable:
        reason = "ground truth has no usable text spans"
    elif not starts:
        reason = "no source text: sentence boundaries cannot be derived (overlap still computed from offsets)"
    else:
        gt_b = snap_boundaries(gt_usable, starts, len(ctx.text))
        pred_b = snap_boundaries(pred_usable, starts, len(ctx.text))
        if not gt_b:
            reason = ("the GT spans mark no sentence boundary inside the text (one segment): the segmentation "
                      "cannot be compared; see the span overlap")
        else:
            edits = boundary_edits(pred_b, gt_b, cfg.n_t)
            b = edits.boundary_similarity
            exact, near = edits.matches, len(edits.transpositions)
            ins, dele = len(edits.insertions), len(edits.deletions)
            weighted = edits.weighted_edits
            pk_d, wd_d, windows = window_disagreements(pred_b, gt_b, len(starts))
            if windows:
                pk_v, wd_v = pk_d / windows, wd_d / windows
    unusable_gt = len(gt_spans) - len(gt_usable)
    if reason is None and unusable_gt:
        reason = f"{unusable_gt} GT events have no usable span (skipped)"
    return build_frozen(TextSpanResult, {
        "boundary_score": b,
        "pk": pk_v,
        "window_diff": wd_v,
        "exact_matches": exact,
        "near_misses": near,
        "insertions": ins,
        "deletions": dele,
        "weighted_edits": weighted,
        "n_t": cfg.n_t,
        "pk_disagreements": pk_d,
        "window_diff_disagreements": wd_d,
        "windows": windows,
        "overlap_ratio": mean_or_none(overlaps),
        "overlap_scores": overlaps,
        "n_ground_truth_spans": len(gt_usable),
        "n_predicted_spans": len(pred_usable),
        "n_sentences": len(starts),
        "ground_truth_boundaries": sorted(x + 1 for x in gt_b),
        "predicted_boundaries": sorted(x + 1 for x in pred_b),
        "span_categories": cats,
        "gt_span_status": gt_status,
        "pred_span_status": pred_status,
        "gt_incomplete": not gt_usable or unusable_gt > 0,
        "reason": reason,
        "skipped": {"gt_events_without_usable_span": unusable_gt},
        "validity": {},  # spans carry no labels
        "spans": rows,
        "sentence_offsets": list(starts),
        "mismatches": mismatches,
    })
