"""Action-layer evaluation: category, type, context, status, function per aligned event.

For each GT event and each field, by the missing-GT policy:

- GT value empty: the field is skipped (not in any denominator), whatever was predicted.
- GT value present, event aligned: correct when the canonical labels are equal, or the predicted
  label is one a review accepted there (:mod:`evaluators.narrative.patch`); a missing predicted
  value is wrong.
- GT value present, event missed (no aligned prediction): wrong (false negative).
- Predicted events without a GT partner are extra and not counted.

``action_<field>_accuracy`` = correct / GT-present fields of that kind.  An event is a
*complete match* when every GT-present field is correct and a *partial match* when some
but not all are; both ratios are over events with at least one GT-present field.  The
component score is the micro field accuracy: all correct fields / all GT-present fields.
The category confusion matrix counts (GT category, predicted category) over events whose
GT category is present (``""`` = no predicted value or missed event).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from evaluators.narrative.base import ComponentEvaluator, ComponentResult, EvalContext, Mismatch, ValidityCounter, ensure_context
from evaluators.narrative.locate import action_key
from evaluators.narrative.patch import accepted_labels
from evaluators.results import build_frozen, safe_div
from evaluators.schema.narrative import ACTION_FIELDS, ActionLayer

TAXONOMY_FIELD = {f: f"action_{f}" for f in ACTION_FIELDS}


class ActionEventRow(NamedTuple):
    """Field-by-field comparison of one GT event (``status``: compared, missed or skipped)."""

    status: str
    gt_index: int
    pred_index: int | None
    gt_event: str
    pred_event: str
    gt: dict[str, str]
    pred: dict[str, str]
    correct: dict[str, bool | None]


@dataclass(frozen=True)
class ActionLayerResult(ComponentResult):
    """Action-layer scores of one document pair."""

    score_field = "action_layer_field_accuracy"
    detail_fields = ('events',)

    action_category_accuracy: float | None
    action_type_accuracy: float | None
    action_context_accuracy: float | None
    action_status_accuracy: float | None
    action_function_accuracy: float | None
    action_layer_complete_match: float | None
    action_layer_partial_match: float | None
    action_layer_field_accuracy: float | None
    field_correct: dict[str, int]
    field_total: dict[str, int]
    n_events_evaluated: int
    n_events_skipped: int
    n_events_missed: int
    complete_matches: int
    partial_matches: int
    category_confusion: dict[str, dict[str, int]]
    events: list[ActionEventRow] = field(default_factory=list)


class ActionLayerEvaluator(ComponentEvaluator):
    """Evaluate the action layer of aligned events (seed API)."""

    component = "action_layer"

    def evaluate(self, prediction: Any, ground_truth: Any, text: str | None = None, *,
                 context: EvalContext | None = None) -> ActionLayerResult:
        """Score action-layer fields (see the module docstring).

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
        ActionLayerResult
        """
        ctx = ensure_context(prediction, ground_truth, text, context, self.config)
        return evaluate_action_layer(ctx)


def _fields(al: ActionLayer | None) -> dict[str, str]:
    if al is None:
        return dict.fromkeys(ACTION_FIELDS, "")
    return {"category": al.category, "type": al.type, "context": al.context, "status": al.status,
            "function": al.function}


def evaluate_action_layer(ctx: EvalContext) -> ActionLayerResult:
    """Action-layer scores for a prepared context (see the module docstring).

    Parameters
    ----------
    ctx : EvalContext
        The prepared pair of documents (:func:`evaluators.narrative.base.build_context`): parsed GT
        and prediction, the aligned events, taxonomy and config.

    Returns
    -------
    ActionLayerResult
        Per-field accuracy over aligned events whose GT field has a value (missing-GT policy).
    """
    tax = ctx.tax
    validity = ValidityCounter(tax)
    correct = {f: 0 for f in ACTION_FIELDS}
    total = {f: 0 for f in ACTION_FIELDS}
    evaluated = skipped_events = missed_events = complete = partial = 0
    confusion: dict[str, dict[str, int]] = {}
    rows: list[ActionEventRow] = []
    mismatches: list[Mismatch] = []
    gt_events = ctx.gt.doc.narrative_events
    pred_events = ctx.pred.doc.narrative_events
    by_gt = ctx.alignment.pred_for_gt()

    maps = {f: tax[TAXONOMY_FIELD[f]].values for f in ACTION_FIELDS}
    gt_rows = [_fields(e.action_layer) for e in gt_events]
    pred_rows = [_fields(e.action_layer) for e in pred_events]
    for f in ACTION_FIELDS:
        validity.add(TAXONOMY_FIELD[f], "gt", [r[f] for r in gt_rows])
        validity.add(TAXONOMY_FIELD[f], "pred", [r[f] for r in pred_rows])
    no_prediction = dict.fromkeys(ACTION_FIELDS, "")
    gt_ids, pred_ids = ctx.alignment.gt_ids, ctx.alignment.pred_ids
    accepted = bool(ctx.gt.accepted)
    for gi in range(len(gt_events)):
        gid = gt_ids[gi]
        g = gt_rows[gi]
        canon_g = {f: maps[f][g[f]] for f in ACTION_FIELDS}
        pair = by_gt.get(gi)
        if pair is None:
            p, pid, pj = no_prediction, "", None
        else:
            pj = pair.pred_index
            p = pred_rows[pj]
            pid = pred_ids[pj]
        if not any(canon_g.values()):
            skipped_events += 1
            rows.append(ActionEventRow("skipped", gi, pj, gid, pid, g, p, dict.fromkeys(ACTION_FIELDS)))
            continue
        evaluated += 1
        if pair is None:
            missed_events += 1
        ok: dict[str, bool | None] = {}
        n_ok = n_present = 0
        for f in ACTION_FIELDS:
            gv = canon_g[f]
            if not gv:
                ok[f] = None
                continue
            n_present += 1
            pv = maps[f][p[f]]
            good = bool(pv) and (pv == gv or (accepted and pv in accepted_labels(ctx.gt, action_key(gid, f), maps[f])))
            ok[f] = good
            total[f] += 1
            if good:
                correct[f] += 1
                n_ok += 1
            else:
                mismatches.append(Mismatch("action_layer", f, g[f], p[f], gid, pid,
                                           "GT event not aligned to any predicted event" if pair is None else ""))
            if f == "category":
                row = confusion.setdefault(gv, {})
                key = pv if pair is not None else ""
                row[key] = row.get(key, 0) + 1
        if n_ok == n_present:
            complete += 1
        elif n_ok > 0:
            partial += 1
        rows.append(ActionEventRow("compared" if pair is not None else "missed", gi, pj, gid, pid, g, p, ok))

    all_total = sum(total.values())
    reason = None
    if evaluated == 0:
        reason = "ground truth has no action-layer values to compare"
    empty_fields = {f"gt_fields_empty_{f}": evaluated - total[f] for f in ACTION_FIELDS}
    if evaluated:
        parts = []
        if skipped_events:
            parts.append(f"{skipped_events} GT events have an empty action layer (skipped)")
        empty = [f"{f} {evaluated - total[f]}" for f in ACTION_FIELDS if evaluated - total[f]]
        if empty:
            parts.append("GT fields left empty in evaluated events (skipped): " + ", ".join(empty))
        reason = "; ".join(parts) or None
    return build_frozen(ActionLayerResult, {
        "action_category_accuracy": safe_div(correct["category"], total["category"]),
        "action_type_accuracy": safe_div(correct["type"], total["type"]),
        "action_context_accuracy": safe_div(correct["context"], total["context"]),
        "action_status_accuracy": safe_div(correct["status"], total["status"]),
        "action_function_accuracy": safe_div(correct["function"], total["function"]),
        "action_layer_complete_match": safe_div(complete, evaluated),
        "action_layer_partial_match": safe_div(partial, evaluated),
        "action_layer_field_accuracy": safe_div(sum(correct.values()), all_total),
        "field_correct": correct,
        "field_total": total,
        "n_events_evaluated": evaluated,
        "n_events_skipped": skipped_events,
        "n_events_missed": missed_events,
        "complete_matches": complete,
        "partial_matches": partial,
        "category_confusion": confusion,
        "gt_incomplete": evaluated == 0 or skipped_events > 0 or any(empty_fields.values()),
        "reason": reason,
        "skipped": {"gt_events_without_action_layer": skipped_events, **empty_fields},
        "validity": validity.report(),
        "events": rows,
        "mismatches": mismatches,
    })
