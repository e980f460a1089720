"""Relationship evaluation on aligned events.

For every aligned event pair, GT and predicted relationships are matched one-to-one on
``(agent, target)``, with names resolved through the character matching (aliases and
predicted names that matched a GT character count as that character).  A GT
relationship with an empty target (or agent) is a partial record: it matches a predicted
relationship on the field it has.

Counting follows the missing-GT policy (DESIGN.md):

- GT event with relationships, prediction aligned: each GT relationship is matched or a
  false negative; each valid predicted relationship is matched or a false positive.
- GT event with an empty list: skipped (``n_events_skipped``); predicted relationships
  there are *extra*, not false positives.
- Missed GT event (no aligned prediction): its relationships are false negatives.
- Spurious predicted event (no GT event): its relationships are extra, not counted.
- Predicted relationships that do not fit the schema (``doer``/``receiver``/``type``) are
  reported per event as schema errors (``n_invalid_pred``), not silently unmatched and
  not counted as false positives.

precision = matched / predicted, recall = matched / GT, F1; a *strict* match also needs
equal level-1 and level-2 labels (on the GT fields that have values; a label a review accepted
at that place counts as equal, :mod:`evaluators.narrative.patch`).  ``level1_accuracy``
and ``level2_accuracy`` are taken over matched pairs whose GT label is not empty.
``relationship_pair_coverage`` is the share of distinct GT (agent, target) pairs of the
document that appear in some predicted relationship of any event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from evaluators.narrative.base import (
    ComponentEvaluator, ComponentResult, EvalContext, Mismatch, ValidityCounter, ensure_context,
)
from evaluators.narrative.characters import NameResolver, evaluate_characters
from evaluators.narrative.loader import LoadedDocument
from evaluators.narrative.locate import relationship_key
from evaluators.narrative.patch import accepted_labels
from evaluators.results import build_frozen, prf, safe_div
from evaluators.schema.narrative import Relationship


class RelationshipPair(NamedTuple):
    """A matched GT/predicted relationship and its label comparison."""

    gt_event: str
    pred_event: str
    gt: Relationship
    pred: Relationship
    match_on: str  # "agent+target", "agent" or "target"
    level1_match: bool | None
    level2_match: bool | None


class EventRelationships(NamedTuple):
    """Relationships of one GT event (or one spurious predicted event), side by side.

    ``status``: ``compared``, ``skipped`` (GT list empty), ``missed`` (GT event unaligned)
    or ``spurious`` (predicted event unaligned).
    """

    status: str
    gt_index: int | None
    pred_index: int | None
    gt_event: str
    pred_event: str
    matched: list[RelationshipPair]
    missed: list[Relationship]
    spurious: list[Relationship]
    n_invalid_pred: int


@dataclass(frozen=True)
class RelationshipResult(ComponentResult):
    """Relationship scores of one document pair."""

    score_field = "relationship_f1"
    detail_fields = ('events', 'matched_pairs')

    relationship_precision: float | None
    relationship_recall: float | None
    relationship_f1: float | None
    relationship_strict_precision: float | None
    relationship_strict_recall: float | None
    relationship_strict_f1: float | None
    level1_accuracy: float | None
    level2_accuracy: float | None
    relationship_pair_coverage: float | None
    n_events_evaluated: int
    n_events_skipped: int
    total_relationships_pred: int
    total_relationships_gt: int
    total_relationships_correct: int
    strict_correct: int
    level1_correct: int
    level1_total: int
    level2_correct: int
    level2_total: int
    pairs_covered: int
    pairs_total: int
    n_pred_extra: int
    n_invalid_pred: int
    events: list[EventRelationships] = field(default_factory=list)
    matched_pairs: list[RelationshipPair] = field(default_factory=list)


def match_relationships(gk: list[tuple[str, str]], pk: list[tuple[str, str]]
                        ) -> tuple[list[tuple[int, int, str]], list[int], list[int]]:
    """Match GT and predicted relationships of one event on resolved (agent, target) keys.

    Full (agent, target) matches first, then partial GT records (an empty agent or target)
    on the field they have; list order breaks ties.

    Parameters
    ----------
    gk, pk : list of (agent, target)
        Resolved identities (:meth:`NameResolver.resolve`) of the GT and predicted records.

    Returns
    -------
    (matches, unmatched_gt, unmatched_pred)
        ``matches`` as ``(gt_index, pred_index, match_on)``.
    """
    free_pred = list(range(len(pk)))
    matches: list[tuple[int, int, str]] = []
    pending = []
    for i, (a, t) in enumerate(gk):
        if not a or not t:
            pending.append(i)
            continue
        for j in free_pred:
            if pk[j] == (a, t):
                matches.append((i, j, "agent+target"))
                free_pred.remove(j)
                break
        else:
            pending.append(i)
    unmatched_gt = []
    for i in pending:
        a, t = gk[i]
        hit = None
        if a and not t:
            hit = next((j for j in free_pred if pk[j][0] == a), None)
            on = "agent"
        elif t and not a:
            hit = next((j for j in free_pred if pk[j][1] == t), None)
            on = "target"
        if hit is None:
            unmatched_gt.append(i)
        else:
            matches.append((i, hit, on))
            free_pred.remove(hit)
    matches.sort()
    return matches, sorted(unmatched_gt), free_pred


class RelationshipEvaluator(ComponentEvaluator):
    """Evaluate relationships of aligned events (seed API: ``evaluate``, ``get_metrics_summary``)."""

    component = "relationships"

    def evaluate(self, prediction: Any, ground_truth: Any, text: str | None = None, *,
                 context: EvalContext | None = None, resolver: NameResolver | None = None) -> RelationshipResult:
        """Score relationships (see the module docstring).

        Parameters
        ----------
        prediction, ground_truth : narrative documents
        text : str, optional
            Source text overriding ``text_content`` (used for span alignment).
        context : EvalContext, optional
            Shared context (alignment) from the composite.
        resolver : NameResolver, optional
            Character identities; computed from the character matching when absent.
        """
        ctx = ensure_context(prediction, ground_truth, text, context, self.config)
        if resolver is None:
            _, resolver = evaluate_characters(ctx)
        return evaluate_relationships(ctx, resolver)


def _rel_str(r: Relationship) -> str:
    return f"{r.agent} -> {r.target or '∅'}"


def _compare_level(canon, field_name: str, g: Relationship, p: Relationship, gid: str, pid: str,
                   mismatches: list[Mismatch], gt: LoadedDocument | None = None) -> bool | None:
    """Compare one label field through ``canon`` (raw -> canonical); ``None`` when the GT label is empty.

    A predicted label a review accepted at that place of ``gt`` (a patched GT,
    :mod:`evaluators.narrative.patch`) is correct too.
    """
    g_raw, p_raw = getattr(g, field_name), getattr(p, field_name)
    gv = canon[g_raw]
    if not gv:
        return None
    pv = canon[p_raw]
    ok = gv == pv or (gt is not None and bool(gt.accepted) and pv in accepted_labels(
        gt, f"{relationship_key(gid, g.agent, g.target)}.{field_name}", canon))
    if not ok:
        mismatches.append(Mismatch("relationships", field_name, g_raw, p_raw, gid, pid, _rel_str(g)))
    return ok


def evaluate_relationships(ctx: EvalContext, resolver: NameResolver) -> RelationshipResult:
    """Relationship scores for a prepared context (see the module docstring).

    Parameters
    ----------
    ctx : EvalContext
        The prepared pair of documents (:func:`evaluators.narrative.base.build_context`): parsed GT
        and prediction, the aligned events, taxonomy and config.
    resolver : NameResolver
        Predicted names and aliases -> GT names (:func:`evaluators.narrative.characters.evaluate_characters`).

    Returns
    -------
    RelationshipResult
        Relationship precision / recall / F1 (and strict: labels too), level-1 and level-2 label
        accuracies, pair coverage, the counts behind them and the matched pairs (for sentiment).
    """
    validity = ValidityCounter(ctx.tax)
    gt_events = ctx.gt.doc.narrative_events
    pred_events = ctx.pred.doc.narrative_events
    invalid_by_event = ctx.pred.invalid_relationships_by_event()
    tp = strict = n_pred = n_gold = 0
    l1c = l1t = l2c = l2t = 0
    n_extra = n_invalid = 0
    evaluated = skipped_events = gt_unusable = 0
    rows: list[EventRelationships] = []
    pairs_out: list[RelationshipPair] = []
    mismatches: list[Mismatch] = []

    def usable(rels: list[Relationship]) -> tuple[list[Relationship], int]:
        ok = [r for r in rels if r.agent.strip() or r.target.strip()]
        return ok, len(rels) - len(ok)

    for side, events in (("gt", gt_events), ("pred", pred_events)):
        rels = [r for e in events for r in e.relationships]
        validity.add("relationship_level1", side, [r.relationship_level1 for r in rels])
        validity.add("relationship_level2", side, [r.relationship_level2 for r in rels])
    lv1 = ctx.tax["relationship_level1"].values
    lv2 = ctx.tax["relationship_level2"].values

    key_cache: dict[str, str] = {}

    def keys(rels: list[Relationship]) -> list[tuple[str, str]]:
        out = []
        for r in rels:
            a = key_cache.get(r.agent)
            if a is None:
                a = key_cache[r.agent] = resolver.resolve(r.agent)
            t = key_cache.get(r.target)
            if t is None:
                t = key_cache[r.target] = resolver.resolve(r.target)
            out.append((a, t))
        return out

    by_gt = ctx.alignment.pred_for_gt()
    gt_pairs: set[tuple[str, str]] = set()
    gt_ids, pred_ids = ctx.alignment.gt_ids, ctx.alignment.pred_ids
    for gi, gev in enumerate(gt_events):
        gid = gt_ids[gi]
        gt_rels, bad = usable(gev.relationships)
        gt_unusable += bad
        gkeys = keys(gt_rels)
        gt_pairs.update(gkeys)
        pair = by_gt.get(gi)
        if pair is None:
            if gt_rels:
                n_gold += len(gt_rels)
                rows.append(EventRelationships("missed", gi, None, gid, "", [], gt_rels, [], 0))
                for r in gt_rels:
                    mismatches.append(Mismatch("relationships", "missing_relationship", _rel_str(r), "",
                                               gid, "", "GT event not aligned to any predicted event"))
            continue
        pev = pred_events[pair.pred_index]
        pid = pred_ids[pair.pred_index]
        inv = invalid_by_event.get(pair.pred_index, 0)
        n_invalid += inv
        if not gt_rels:
            skipped_events += 1
            n_extra += len(pev.relationships)
            rows.append(EventRelationships("skipped", gi, pair.pred_index, gid, pid, [], [],
                                           list(pev.relationships), inv))
            continue
        evaluated += 1
        matches, un_gt, un_pred = match_relationships(gkeys, keys(pev.relationships))
        n_gold += len(gt_rels)
        n_pred += len(pev.relationships)
        matched = []
        for i, j, on in matches:
            g, p = gt_rels[i], pev.relationships[j]
            tp += 1
            ok1 = _compare_level(lv1, "relationship_level1", g, p, gid, pid, mismatches, ctx.gt)
            ok2 = _compare_level(lv2, "relationship_level2", g, p, gid, pid, mismatches, ctx.gt)
            if ok1 is not None:
                l1t += 1
                l1c += ok1
            if ok2 is not None:
                l2t += 1
                l2c += ok2
            if ok1 is not False and ok2 is not False:
                strict += 1
            rp = RelationshipPair(gid, pid, g, p, on, ok1, ok2)
            matched.append(rp)
            pairs_out.append(rp)
        missed = [gt_rels[i] for i in un_gt]
        spurious = [pev.relationships[j] for j in un_pred]
        for r in missed:
            mismatches.append(Mismatch("relationships", "missing_relationship", _rel_str(r), "", gid, pid))
        for r in spurious:
            mismatches.append(Mismatch("relationships", "spurious_relationship", "", _rel_str(r), gid, pid))
        rows.append(EventRelationships("compared", gi, pair.pred_index, gid, pid, matched, missed, spurious, inv))

    for pj in ctx.alignment.spurious:
        pev = pred_events[pj]
        n_extra += len(pev.relationships)
        inv = invalid_by_event.get(pj, 0)
        n_invalid += inv
        if pev.relationships or inv:
            rows.append(EventRelationships("spurious", None, pj, "", pred_ids[pj], [], [],
                                           list(pev.relationships), inv))

    # Document-level pair coverage.
    pred_pairs = {k for e in pred_events for k in keys(e.relationships)}
    pred_agents = {a for a, _ in pred_pairs}
    pred_targets = {t for _, t in pred_pairs}
    covered = 0
    for a, t in gt_pairs:
        if a and t:
            covered += (a, t) in pred_pairs
        elif a:
            covered += a in pred_agents
        else:
            covered += t in pred_targets

    precision, recall, f1 = prf(tp, n_pred, n_gold, precision_needs_gold=True)
    sp, sr, sf = prf(strict, n_pred, n_gold, precision_needs_gold=True)
    reasons = []
    if skipped_events:
        reasons.append(f"{skipped_events} aligned GT events have no relationships (skipped; "
                       f"{n_extra} predicted relationships there or in spurious events are extra, not counted)")
    if gt_unusable:
        reasons.append(f"{gt_unusable} GT relationships have neither agent nor target (skipped)")
    if n_gold == 0:
        reasons.insert(0, "ground truth has no relationships to compare")
    if n_invalid:
        reasons.append(f"{n_invalid} predicted relationships do not fit the schema (see issues)")
    return build_frozen(RelationshipResult, {
        "relationship_precision": precision,
        "relationship_recall": recall,
        "relationship_f1": f1,
        "relationship_strict_precision": sp,
        "relationship_strict_recall": sr,
        "relationship_strict_f1": sf,
        "level1_accuracy": safe_div(l1c, l1t),
        "level2_accuracy": safe_div(l2c, l2t),
        "relationship_pair_coverage": safe_div(covered, len(gt_pairs)),
        "n_events_evaluated": evaluated,
        "n_events_skipped": skipped_events,
        "total_relationships_pred": n_pred,
        "total_relationships_gt": n_gold,
        "total_relationships_correct": tp,
        "strict_correct": strict,
        "level1_correct": l1c,
        "level1_total": l1t,
        "level2_correct": l2c,
        "level2_total": l2t,
        "pairs_covered": covered,
        "pairs_total": len(gt_pairs),
        "n_pred_extra": n_extra,
        "n_invalid_pred": n_invalid,
        "gt_incomplete": bool(skipped_events or gt_unusable or n_gold == 0),
        "reason": "; ".join(reasons) or None,
        "skipped": {"gt_events_without_relationships": skipped_events, "gt_relationships_unusable": gt_unusable,
                 "pred_relationships_extra": n_extra, "pred_relationships_invalid": n_invalid},
        "validity": validity.report(),
        "events": rows,
        "matched_pairs": pairs_out,
        "mismatches": mismatches,
    })
