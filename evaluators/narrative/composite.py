"""Composite narrative evaluation: all components of one document pair, one overall score.

``overall_score`` is the weighted mean of the available component scores (weights
configurable, default equal).  A component whose score is ``None`` (ground truth
missing, nothing to compare) is left out, the remaining weights are renormalised, and
``left_out`` says why.  Component scores:

=============== ===================================================================
characters      ``character_f1``
relationships   ``relationship_f1``
sentiment       micro ``sentiment_f1`` on matched relationships
action_layer    ``action_layer_field_accuracy`` (micro over GT-present fields)
text_span       ``boundary_score`` (boundary similarity B, sentence units)
=============== ===================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluators.io.errors import InputIssue
from evaluators.narrative.action_layer import ActionLayerResult, evaluate_action_layer
from evaluators.narrative.alignment import Alignment
from evaluators.narrative.base import (
    COMPONENTS,
    DEFAULT_CONFIG,
    SUMMARY_KEYS,
    EvalContext,
    Mismatch,
    NarrativeConfig,
    build_context,
)
from evaluators.narrative.characters import CharacterResult, evaluate_characters
from evaluators.narrative.loader import load_document
from evaluators.narrative.relationships import RelationshipResult, evaluate_relationships
from evaluators.narrative.sentiment import SentimentResult, evaluate_sentiment
from evaluators.narrative.text_span import TextSpanResult, evaluate_text_span
from evaluators.parallel import gc_paused
from evaluators.results import DictMixin, build_frozen, prf, to_jsonable


@dataclass(frozen=True)
class EventSummary(DictMixin):
    """Event-level counts of the alignment."""

    total_events_ground_truth: int
    total_events_predicted: int
    events_aligned: int
    events_missed: int
    events_spurious: int
    event_precision: float | None
    event_recall: float | None
    event_f1: float | None
    alignment_methods: dict[str, int]


@dataclass(frozen=True)
class NarrativeResult:
    """Everything known about one scored document pair.

    Attributes
    ----------
    story_id, gt_file, pred_file : str
    overall_score : float or None
        Weighted mean of available component scores, in [0, 1].
    component_scores : dict
        ``{characters, relationships, sentiment, action_layer, text_span}`` -> float or None.
    left_out : dict
        Components left out of the overall score and why.
    weights_used : dict
        Renormalised weights of the components that entered the overall score.
    detailed_results : dict
        Component name -> its result (a :class:`~evaluators.narrative.base.ComponentResult`).
    alignment : Alignment
    summary : EventSummary
    issues : list of InputIssue
        Schema problems of both files (with JSON paths) and conversions.
    warnings : list of str
        Everything the user should know: offsets repaired, labels outside the taxonomy,
        alignments without text evidence, records left out.
    text_source : str
        Which text spans were checked against (``ground_truth``, ``prediction``, ``argument``, ``none``).
    text : str
        That text (for overlays).
    signature : str
        Settings, taxonomy and version that produced the numbers.
    """

    story_id: str
    gt_file: str
    pred_file: str
    overall_score: float | None
    component_scores: dict[str, float | None]
    left_out: dict[str, str]
    weights_used: dict[str, float]
    detailed_results: dict[str, Any]
    alignment: Alignment
    summary: EventSummary
    issues: list[InputIssue]
    warnings: list[str]
    text_source: str
    text: str
    signature: str

    @property
    def gt_incomplete(self) -> dict[str, bool]:
        """Per component: whether some GT was empty and skipped (see each result's ``reason``)."""
        return {c: bool(r.gt_incomplete) for c, r in self.detailed_results.items()}

    @property
    def characters(self) -> CharacterResult:
        return self.detailed_results["characters"]

    @property
    def relationships(self) -> RelationshipResult:
        return self.detailed_results["relationships"]

    @property
    def sentiment(self) -> SentimentResult:
        return self.detailed_results["sentiment"]

    @property
    def action_layer(self) -> ActionLayerResult:
        return self.detailed_results["action_layer"]

    @property
    def text_span(self) -> TextSpanResult:
        return self.detailed_results["text_span"]

    def mismatches(self) -> list[Mismatch]:
        """Every mismatch of every component, in component order."""
        out: list[Mismatch] = []
        for c in COMPONENTS:
            out.extend(self.detailed_results[c].mismatches)
        return out

    def without_rows(self) -> NarrativeResult:
        """A copy with every score, count, issue and warning but no per-row detail.

        The component results lose their row lists and mismatches, the alignment its pairs
        and spans (``summary`` keeps the event counts), ``text`` is empty: all that batch
        totals, tables and problem counts read.  A worker that has already written a
        document's report sends this back instead of the whole result (a quarter of the bytes).
        """
        al = self.alignment
        values = dict(self.__dict__)
        values.update(detailed_results={c: r.without_rows() for c, r in self.detailed_results.items()},
                      alignment=Alignment((), (), (), (), (), al.min_iou, al.warnings), text="")
        return build_frozen(NarrativeResult, values)

    def to_dict(self, *, include_text: bool = False) -> dict[str, Any]:
        """JSON-ready dict with the report keys of the seed design (plus additions)."""
        # The parts with a to_dict() are JSON-ready already: only the others go through to_jsonable
        # (walking a whole report twice took as long as scoring it).
        d = {
            "story_id": self.story_id,
            "gt_file": self.gt_file,
            "pred_file": self.pred_file,
            "overall_score": to_jsonable(self.overall_score),
            "component_scores": to_jsonable(dict(self.component_scores)),
            "left_out": to_jsonable(dict(self.left_out)),
            "weights_used": to_jsonable(dict(self.weights_used)),
            "gt_incomplete": self.gt_incomplete,
            "detailed_results": {c: r.to_dict() for c, r in self.detailed_results.items()},
            "summary": self.summary.to_dict(),
            "alignment": self.alignment.to_dict(),
            "issues": [i.to_dict() for i in self.issues],
            "warnings": list(self.warnings),
            "text_source": self.text_source,
            "signature": self.signature,
        }
        if include_text:
            d["text"] = self.text
        return d


def weighted_overall(scores: dict[str, float | None], weights: dict[str, float]
                     ) -> tuple[float | None, dict[str, float], dict[str, str]]:
    """Weighted mean of available scores; returns (overall, renormalised weights, left-out reasons).

    Parameters
    ----------
    scores : dict of str to (float or None)
        Component -> its score in [0, 1], ``None`` when it could not be computed.
    weights : dict of str to float
        Component -> weight >= 0 (every component of ``scores`` must have one).

    Returns
    -------
    (overall, used, left_out) : (float or None, dict of str to float, dict of str to str)
        The weighted mean of the available components with weights renormalised to sum to 1
        (``None`` when none is available), those weights, and why each other component was left out.

    Examples
    --------
    >>> weighted_overall({"characters": 1.0, "sentiment": 0.5, "text_span": None},
    ...                  {"characters": 1, "sentiment": 1, "text_span": 1})
    (0.75, {'characters': 0.5, 'sentiment': 0.5}, {'text_span': 'score not available'})
    """
    avail = {c: s for c, s in scores.items() if s is not None and weights.get(c, 0) > 0}
    left = {c: "score not available" for c, s in scores.items() if s is None}
    left.update({c: "weight 0" for c, s in scores.items() if s is not None and weights.get(c, 0) == 0})
    total = sum(weights[c] for c in avail)
    if not avail or total == 0:
        return None, {}, left
    used = {c: weights[c] / total for c in avail}
    return sum(used[c] * avail[c] for c in avail), used, left


def _warnings(ctx: EvalContext, details: dict[str, Any]) -> list[str]:
    out = []
    spans = details["text_span"]
    for side, status in (("GT", spans.gt_span_status), ("prediction", spans.pred_span_status)):
        rep, unv, mis = (status.get(k, 0) for k in ("offset_repaired", "offset_unverified", "missing"))
        if rep:
            out.append(f"{side}: {rep} span offsets repaired by locating the span text")
        if unv:
            out.append(f"{side}: {unv} span offsets could not be verified against the text (kept as given)")
        if mis:
            out.append(f"{side}: {mis} events have no usable span")
    out.extend(ctx.alignment.warnings)
    for comp in ("characters", "relationships", "sentiment", "action_layer"):
        for f, sides in details[comp].validity.items():
            for side, v in sides.items():
                if v["invalid_labels"]:
                    labels = ", ".join(f"{k!r}×{n}" for k, n in list(v["invalid_labels"].items())[:6])
                    who = "GT" if side == "gt" else "prediction"
                    out.append(f"{who}: {v['total'] - v['valid']} of {v['total']} {f} labels are outside the "
                               f"taxonomy ({labels})")
    n_inv = len(ctx.pred.invalid_records)
    if n_inv:
        out.append(f"prediction: {n_inv} records do not fit the schema and were left out (see issues)")
    if ctx.gt.invalid_records:
        out.append(f"GT: {len(ctx.gt.invalid_records)} records do not fit the schema and were left out (see issues)")
    if ctx.text_source == "prediction":
        out.append("GT has no text_content; spans were checked against the prediction's text")
    return out


class NarrativeEvaluator:
    """Score a predicted JSON v3 document against GT on every component (seed: CompositeEvaluator).

    Parameters
    ----------
    config : NarrativeConfig, optional
        Alignment threshold, near-miss tolerance, weights, taxonomy.
    """

    def __init__(self, config: NarrativeConfig | None = None):
        self.config = config or DEFAULT_CONFIG

    def evaluate(self, prediction: Any, ground_truth: Any, text: str | None = None, *,
                 gt_file: str | None = None, pred_file: str | None = None,
                 story_id: str | None = None) -> NarrativeResult:
        """Evaluate one document pair.

        Parameters
        ----------
        prediction, ground_truth : bytes, str (JSON), dict, NarrativeDocument or LoadedDocument
        text : str, optional
            Source text for the spans, overriding the documents' ``text_content``.
        gt_file, pred_file : str, optional
            File names for messages and reports.
        story_id : str, optional
            Document id for reports (default: GT ``metadata.id``, else from the file name).

        Returns
        -------
        NarrativeResult

        Raises
        ------
        InputError
            If a document is unusable as a whole (undecodable, invalid JSON, not an object).
        """
        with gc_paused():  # thousands of short-lived, acyclic objects per document
            return self._evaluate(prediction, ground_truth, text, gt_file, pred_file, story_id)

    def _evaluate(self, prediction, ground_truth, text, gt_file, pred_file, story_id) -> NarrativeResult:
        gt = load_document(ground_truth, gt_file or "ground_truth")
        pred = load_document(prediction, pred_file or "prediction")
        ctx = build_context(pred, gt, text, self.config)
        chars, resolver = evaluate_characters(ctx)
        rels = evaluate_relationships(ctx, resolver)
        details = {
            "characters": chars,
            "relationships": rels,
            "sentiment": evaluate_sentiment(ctx, rels.matched_pairs),
            "action_layer": evaluate_action_layer(ctx),
            "text_span": evaluate_text_span(ctx),
        }
        scores = {c: details[c].score for c in COMPONENTS}
        overall, used, left = weighted_overall(scores, self.config.weights)
        for c in list(left):
            if details[c].reason and left[c] == "score not available":
                left[c] = details[c].reason
        al = ctx.alignment
        ep, er, ef = prf(len(al.pairs), al.n_pred, al.n_gt)
        summary = EventSummary(al.n_gt, al.n_pred, len(al.pairs), len(al.missed), len(al.spurious), ep, er, ef,
                               al.method_counts())
        return build_frozen(NarrativeResult, {
            "story_id": story_id or gt.story_id,
            "gt_file": gt.file,
            "pred_file": pred.file,
            "overall_score": overall,
            "component_scores": scores,
            "left_out": left,
            "weights_used": used,
            "detailed_results": details,
            "alignment": al,
            "summary": summary,
            "issues": list(gt.issues) + list(pred.issues),
            "warnings": _warnings(ctx, details),
            "text_source": ctx.text_source,
            "text": ctx.text,
            "signature": self.config.signature,
        })

    @staticmethod
    def get_metrics_summary(result: NarrativeResult) -> dict[str, float | None]:
        """Flat ``{metric: value}`` with ``overall_score`` and every component's headline metrics."""
        return get_metrics_summary(result)


def evaluate(prediction: Any, ground_truth: Any, text: str | None = None,
             config: NarrativeConfig | None = None) -> NarrativeResult:
    """Shortcut for ``NarrativeEvaluator(config).evaluate(prediction, ground_truth, text)``.

    Parameters
    ----------
    prediction, ground_truth : dict, bytes, NarrativeDocument or LoadedDocument
        The two JSON v3 (or v2) documents of one story.
    text : str, optional
        The story text, overriding the documents' own.
    config : NarrativeConfig, optional
        Weights, thresholds and taxonomy; default ``NarrativeConfig()``.

    Returns
    -------
    NarrativeResult
    """
    return NarrativeEvaluator(config).evaluate(prediction, ground_truth, text)


def get_metrics_summary(result: NarrativeResult) -> dict[str, float | None]:
    """Flat ``{metric: value}``: ``overall_score`` plus the headline metrics of each component.

    Parameters
    ----------
    result : NarrativeResult

    Returns
    -------
    dict of str to (float or None)
        ``overall_score`` first, then :data:`SUMMARY_KEYS` of each component, values in [0, 1]
        or ``None`` where undefined.
    """
    out: dict[str, float | None] = {"overall_score": result.overall_score}
    for comp, keys in SUMMARY_KEYS.items():
        r = result.detailed_results[comp]
        for k in keys:
            out[k] = getattr(r, k)
    return out
