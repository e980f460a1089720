"""Sentiment evaluation on matched relationships.

Sentiment is judged only where the relationship itself was found (pairs matched by
:mod:`evaluators.narrative.relationships`), so this component measures labelling, not
recall of relationships.  Labels are compared through the taxonomy's canonical form.

For a matched pair with GT sentiment ``g`` and predicted sentiment ``p``:

- ``g`` empty: skipped and counted (``n_relationships_skipped``), whatever ``p`` is.
- ``p`` empty: a false negative for ``g`` (missing).
- otherwise: a true positive for ``g`` if equal (or if ``p`` is a label a review accepted at
  that place: :mod:`evaluators.narrative.patch`), else a false negative for ``g`` and a false
  positive for ``p``.

Micro precision = correct / predicted labels, micro recall = correct / GT labels, F1
their harmonic mean (``sentiment_precision``, ``sentiment_recall``, ``sentiment_f1``).
Macro scores average per-label precision/recall/F1 over every label seen in GT or
prediction, from :func:`evaluators.metrics.classification.classification_report`: an
undefined per-label ratio (no prediction of the label, or no GT of it) is skipped, not
counted as 0 (scikit-learn's ``zero_division=np.nan``), as in every other per-class table.
Polarity accuracy compares the taxonomy polarity (positive /
neutral / negative) over pairs whose GT label has a known polarity; an unknown predicted
label counts as wrong.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from evaluators.metrics.classification import class_metrics
from evaluators.metrics.classification import macro_average as classes_macro_average
from evaluators.narrative.base import ComponentEvaluator, ComponentResult, EvalContext, Mismatch, ValidityCounter, ensure_context
from evaluators.narrative.locate import relationship_key
from evaluators.narrative.patch import accepted_labels
from evaluators.narrative.relationships import RelationshipPair, RelationshipResult
from evaluators.results import build_frozen, f1_score, prf, safe_div


@dataclass(frozen=True)
class SentimentResult(ComponentResult):
    """Sentiment scores of one document pair (micro unless named macro)."""

    score_field = "sentiment_f1"

    sentiment_precision: float | None
    sentiment_recall: float | None
    sentiment_f1: float | None
    sentiment_macro_precision: float | None
    sentiment_macro_recall: float | None
    sentiment_macro_f1: float | None
    sentiment_polarity_accuracy: float | None
    total_sentiment_correct: int
    total_sentiment_pred: int
    total_sentiment_gt: int
    polarity_correct: int
    polarity_total: int
    n_relationships_skipped: int
    pair_correct: list[bool | None]
    per_label: dict[str, dict[str, Any]]
    confusion: dict[str, dict[str, int]]


def label_scores(tp: int, fp: int, fn: int) -> dict[str, Any]:
    """Precision, recall, F1 (undefined precision/recall count as 0 in F1), support and counts of one label.

    Parameters
    ----------
    tp, fp, fn : int
        True positives, false positives and false negatives of the label, >= 0.

    Returns
    -------
    dict
        ``precision``, ``recall`` (``None`` when the denominator is 0), ``f1`` (0.0 when either is
        undefined or 0), ``support`` (tp + fn), ``tp``, ``fp``, ``fn``.

    Examples
    --------
    >>> label_scores(2, 0, 2)["f1"]  # P = 1, R = 1/2
    0.6666666666666666
    """
    lp = safe_div(tp, tp + fp)
    lr = safe_div(tp, tp + fn)
    return {"precision": lp, "recall": lr, "f1": f1_score(lp or 0.0, lr or 0.0), "support": tp + fn,
            "tp": tp, "fp": fp, "fn": fn}


def macro_average(per_label: dict[str, dict[str, Any]], key: str) -> float | None:
    """Mean of ``key`` over the labels where it is defined (``None`` values skipped; ``None`` if none is).

    The same rule as :func:`evaluators.metrics.classification.classification_report` and
    scikit-learn's ``zero_division=np.nan``: a class without predictions has no precision,
    one without support no recall, and neither is counted as 0.

    Parameters
    ----------
    per_label : dict of str to dict
        Label -> its :func:`label_scores`.
    key : str
        ``"precision"``, ``"recall"`` or ``"f1"``.

    Returns
    -------
    float or None
    """
    values = [v[key] for v in per_label.values() if v[key] is not None]
    return sum(values) / len(values) if values else None


class SentimentEvaluator(ComponentEvaluator):
    """Evaluate sentiment on matched relationships (seed API)."""

    component = "sentiment"

    def evaluate(self, prediction: Any, ground_truth: Any, text: str | None = None, *,
                 context: EvalContext | None = None,
                 relationships: RelationshipResult | None = None) -> SentimentResult:
        """Score sentiment labels of matched relationship pairs (see the module docstring).

        Parameters
        ----------
        prediction, ground_truth : dict, bytes, NarrativeDocument or LoadedDocument
            The two JSON v3 (or v2) documents; ignored when ``context`` is given.
        text : str, optional
            The story text, overriding the documents' own.
        context : EvalContext, optional
            A context already built for this pair (shared by the components).
        relationships : RelationshipResult, optional
            The relationship scores of this pair (their matched pairs are scored); computed when
            not given.

        Returns
        -------
        SentimentResult
        """
        ctx = ensure_context(prediction, ground_truth, text, context, self.config)
        if relationships is None:
            from evaluators.narrative.relationships import RelationshipEvaluator
            relationships = RelationshipEvaluator(ctx.config).evaluate(None, None, context=ctx)
        return evaluate_sentiment(ctx, relationships.matched_pairs)


def evaluate_sentiment(ctx: EvalContext, pairs: list[RelationshipPair]) -> SentimentResult:
    """Sentiment scores from matched relationship pairs.

    Parameters
    ----------
    ctx : EvalContext
        The prepared pair of documents (:func:`evaluators.narrative.base.build_context`): parsed GT
        and prediction, the aligned events, taxonomy and config.
    pairs : list of RelationshipPair
        The matched GT / predicted relationships (:func:`evaluators.narrative.relationships.evaluate_relationships`).

    Returns
    -------
    SentimentResult
        Micro precision / recall / F1 of the sentiment labels over the matched pairs
        (``sentiment_f1`` is the component score), per-label scores and their macro averages,
        polarity accuracy and the confusion matrix.
    """
    tax = ctx.tax
    validity = ValidityCounter(tax)
    tp: Counter = Counter()
    fp: Counter = Counter()
    fn: Counter = Counter()
    confusion: dict[str, Counter] = {}
    correct = n_pred = n_gt = skipped = pol_c = pol_t = 0
    mismatches: list[Mismatch] = []
    canon = tax["sentiment"].values
    polarity = tax.polarity_of_value
    validity.add("sentiment", "gt", [pr.gt.sentiment for pr in pairs])
    validity.add("sentiment", "pred", [pr.pred.sentiment for pr in pairs])
    pair_correct: list[bool | None] = []
    accepted = bool(ctx.gt.accepted)
    for pr in pairs:
        g, p = canon[pr.gt.sentiment], canon[pr.pred.sentiment]
        if not g:
            skipped += 1
            pair_correct.append(None)
            continue
        if accepted and p and p != g and p in accepted_labels(
                ctx.gt, relationship_key(pr.gt_event, pr.gt.agent, pr.gt.target) + ".sentiment", canon):
            p = g  # a label the review accepted at this place: correct (counted as the GT label)
        pair_correct.append(bool(p) and g == p)
        n_gt += 1
        confusion.setdefault(g, Counter())[p] += 1
        gpol = polarity.get(g)
        if gpol is not None:
            pol_t += 1
            pol_c += polarity.get(p) == gpol
        if not p:
            fn[g] += 1
            mismatches.append(Mismatch("sentiment", "sentiment", pr.gt.sentiment, "", pr.gt_event, pr.pred_event,
                                       f"{pr.gt.agent} -> {pr.gt.target}: no predicted sentiment"))
            continue
        n_pred += 1
        if g == p:
            correct += 1
            tp[g] += 1
        else:
            fn[g] += 1
            fp[p] += 1
            mismatches.append(Mismatch("sentiment", "sentiment", pr.gt.sentiment, pr.pred.sentiment, pr.gt_event,
                                       pr.pred_event, f"{pr.gt.agent} -> {pr.gt.target}"))
    precision, recall, f1 = prf(correct, n_pred, n_gt, precision_needs_gold=True)
    labels = sorted(set(tp) | set(fp) | set(fn))
    macro_p = macro_r = macro_f = None
    per_label: dict[str, dict[str, Any]] = {}
    if labels and n_gt:
        # the per-label table and its macro means: the classification report's own definitions
        # (a missing prediction is a false negative only)
        per_class = class_metrics(labels, tp, {lab: tp[lab] + fn[lab] for lab in labels},
                                  {lab: tp[lab] + fp[lab] for lab in labels})
        per_label = {m.label: {"precision": m.precision, "recall": m.recall, "f1": m.f1, "support": m.support,
                               "tp": m.tp, "fp": m.fp, "fn": m.fn} for m in per_class}
        macro = classes_macro_average(per_class)
        macro_p, macro_r, macro_f = macro.precision, macro.recall, macro.f1
    reason = None
    if not pairs:
        reason = "no matched relationships to compare sentiment on"
    elif n_gt == 0:
        reason = "no matched relationship has a GT sentiment"
    elif skipped:
        reason = f"{skipped} matched relationships have no GT sentiment (skipped)"
    return build_frozen(SentimentResult, {
        "sentiment_precision": precision,
        "sentiment_recall": recall,
        "sentiment_f1": f1,
        "sentiment_macro_precision": macro_p,
        "sentiment_macro_recall": macro_r,
        "sentiment_macro_f1": macro_f,
        "sentiment_polarity_accuracy": safe_div(pol_c, pol_t),
        "total_sentiment_correct": correct,
        "total_sentiment_pred": n_pred,
        "total_sentiment_gt": n_gt,
        "polarity_correct": pol_c,
        "polarity_total": pol_t,
        "n_relationships_skipped": skipped,
        "pair_correct": pair_correct,
        "per_label": per_label,
        "confusion": {g: dict(c) for g, c in confusion.items()},
        "gt_incomplete": bool(skipped) or (bool(pairs) and n_gt == 0),
        "reason": reason,
        "skipped": {"matched_relationships_without_gt_sentiment": skipped},
        "validity": validity.report(),
        "mismatches": mismatches,
    })
