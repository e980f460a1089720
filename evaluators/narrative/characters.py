"""Character evaluation: match names and aliases, precision/recall/F1, archetype accuracy.

Matching (one-to-one, each character used once):

1. ``exact``: the normalized names are equal (NFKC, case-folded, spaces and punctuation
   ignored; see :func:`evaluators.text.normalize.name_key`).
2. Among the rest, an optimal assignment (``linear_sum_assignment``) preferring, in this
   order, ``gt_alias`` (the predicted name is a GT alias), ``pred_alias`` (the GT name is a
   predicted alias) and ``alias_overlap`` (the two alias lists share a name).

precision = matched / predicted, recall = matched / GT, F1 their harmonic mean; archetype
accuracy = matched characters whose archetype agrees (through the taxonomy's canonical
labels, or is a label a review accepted there: :mod:`evaluators.narrative.patch`) / matched
characters whose GT archetype is not empty.  A GT list without
characters makes the component ``gt_incomplete`` (scores ``None``); the extra predicted
characters are then listed but not counted, per the missing-GT policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from evaluators.metrics.assignment import max_weight_assignment
from evaluators.narrative.base import (
    ComponentEvaluator, ComponentResult, EvalContext, Mismatch, ValidityCounter, ensure_context,
)
from evaluators.narrative.locate import character_key
from evaluators.narrative.patch import accepted_labels
from evaluators.results import build_frozen, prf, safe_div
from evaluators.schema.narrative import Character
from evaluators.text.normalize import name_key

_STAGE_SCORE = {"gt_alias": 3.0, "pred_alias": 2.0, "alias_overlap": 1.0}


class CharacterMatch(NamedTuple):
    """A matched GT/predicted character and how the match was made."""

    gt_name: str
    pred_name: str
    method: str
    via: str
    gt_archetype: str
    pred_archetype: str
    archetype_match: bool | None


@dataclass(frozen=True)
class CharacterResult(ComponentResult):
    """Character scores of one document pair.  Counts beside ratios; ``None`` = not computable."""

    score_field = "character_f1"

    character_precision: float | None
    character_recall: float | None
    character_f1: float | None
    character_archetype_accuracy: float | None
    missing_characters: list[str]
    extra_characters: list[str]
    matched_characters: list[CharacterMatch]
    n_predicted: int
    n_ground_truth: int
    n_matched: int
    n_missing: int
    n_extra: int
    archetype_correct: int
    archetype_total: int
    match_methods: dict[str, int]


class NameResolver:
    """Maps any spelling of a character (name or alias, GT or predicted) to one identity.

    GT names and aliases map to the GT character's name; predicted names and aliases of a
    matched predicted character map to its GT partner.  Unknown names map to their own
    normalized key.
    """

    def __init__(self):
        self._map: dict[str, str] = {}

    def add(self, spelling: str, identity: str) -> None:
        """Map a name or alias to a character (the first mapping of a spelling wins).

        Parameters
        ----------
        spelling : str
            A name or alias, compared by :func:`evaluators.text.normalize.name_key`.
        identity : str
            The GT character's name.
        """
        k = name_key(spelling)
        if k and k not in self._map:
            self._map[k] = identity

    def resolve(self, name: str) -> str:
        """Identity of ``name`` (``""`` for an empty name).

        Parameters
        ----------
        name : str

        Returns
        -------
        str
            The GT character's name; ``"?<key>"`` for a name no character has (so two unknown
            spellings of one name still compare equal), ``""`` for an empty one.
        """
        k = name_key(name) if name else ""
        if not k:
            return ""
        return self._map.get(k, "?" + k)


def _usable(chars: list[Character]) -> tuple[list[tuple[str, list[str], str]], int]:
    """(name, aliases, archetype) of characters that have a name or an alias; count of the others."""
    out = []
    skipped = 0
    for c in chars:
        name = c.name.strip()
        aliases = [a for a in c.alias if a.strip()]
        if not name and aliases:
            name, aliases = aliases[0], aliases[1:]
        if not name:
            skipped += 1
            continue
        out.append((name, aliases, c.archetype))
    return out, skipped


def match_characters(gt: list[tuple[str, list[str], str]], pred: list[tuple[str, list[str], str]]
                     ) -> list[tuple[int, int, str, str]]:
    """One-to-one matches ``(gt_index, pred_index, method, via)`` (see the module docstring).

    Parameters
    ----------
    gt, pred : list of (name, aliases, archetype)
        The usable characters of each side (a name, else the first alias, promoted).

    Returns
    -------
    list of (int, int, str, str)
        Sorted by GT index; ``method`` is ``exact``, ``gt_alias``, ``pred_alias`` or ``alias_overlap``,
        ``via`` the name or alias that matched.

    References
    ----------
    Kuhn (1955), "The Hungarian method for the assignment problem"; ``scipy.optimize.linear_sum_assignment``
    (:func:`evaluators.metrics.assignment.max_weight_assignment`).
    """
    matches = []
    gt_free = list(range(len(gt)))
    pred_by_key: dict[str, list[int]] = {}
    for j, (name, _, _) in enumerate(pred):
        pred_by_key.setdefault(name_key(name), []).append(j)
    used_pred: set[int] = set()
    rest_gt = []
    for i in gt_free:
        cands = [j for j in pred_by_key.get(name_key(gt[i][0]), []) if j not in used_pred]
        if cands:
            matches.append((i, cands[0], "exact", gt[i][0]))
            used_pred.add(cands[0])
        else:
            rest_gt.append(i)
    rest_pred = [j for j in range(len(pred)) if j not in used_pred]
    if rest_gt and rest_pred:
        scores = [[0.0] * len(rest_pred) for _ in rest_gt]
        how: dict[tuple[int, int], tuple[str, str]] = {}
        for r, i in enumerate(rest_gt):
            g_name = name_key(gt[i][0])
            g_alias = {name_key(a): a for a in gt[i][1]}
            for c, j in enumerate(rest_pred):
                p_name = name_key(pred[j][0])
                p_alias = {name_key(a): a for a in pred[j][1]}
                if p_name in g_alias:
                    method, via = "gt_alias", g_alias[p_name]
                elif g_name in p_alias:
                    method, via = "pred_alias", p_alias[g_name]
                else:
                    common = [k for k in g_alias if k in p_alias]
                    if not common:
                        continue
                    method, via = "alias_overlap", g_alias[common[0]]
                scores[r][c] = _STAGE_SCORE[method]
                how[(r, c)] = (method, via)
        for r, c in max_weight_assignment(scores):
            method, via = how[(r, c)]
            matches.append((rest_gt[r], rest_pred[c], method, via))
    matches.sort()
    return matches


class CharacterEvaluator(ComponentEvaluator):
    """Evaluate the ``characters`` list (seed API: ``evaluate`` and ``get_metrics_summary``)."""

    component = "characters"

    def evaluate(self, prediction: Any, ground_truth: Any, text: str | None = None, *,
                 context: EvalContext | None = None) -> CharacterResult:
        """Score predicted characters against GT.

        Parameters
        ----------
        prediction, ground_truth : narrative documents (dict, bytes, model or LoadedDocument)
        text : str, optional
            Unused for characters (kept for the common API).
        context : EvalContext, optional
            Shared context from :func:`evaluators.narrative.base.build_context`.

        Returns
        -------
        CharacterResult
        """
        ctx = ensure_context(prediction, ground_truth, text, context, self.config)
        result, _ = evaluate_characters(ctx)
        return result


def evaluate_characters(ctx: EvalContext) -> tuple[CharacterResult, NameResolver]:
    """Character scores plus the :class:`NameResolver` the relationship evaluator uses.

    Parameters
    ----------
    ctx : EvalContext
        The prepared pair of documents (:func:`evaluators.narrative.base.build_context`): parsed GT
        and prediction, the aligned events, taxonomy and config.

    Returns
    -------
    (CharacterResult, NameResolver)
        Precision, recall, F1 of the matches and archetype accuracy (``None`` when undefined; the
        component is ``gt_incomplete`` when the GT has no character), the counts behind them, and
        the resolver mapping every GT and matched predicted name or alias to the GT name.
    """
    validity = ValidityCounter(ctx.tax)
    gt, gt_skipped = _usable(ctx.gt.doc.characters)
    pred, pred_skipped = _usable(ctx.pred.doc.characters)
    matches = match_characters(gt, pred)

    resolver = NameResolver()
    for name, aliases, _ in gt:
        resolver.add(name, name)
        for a in aliases:
            resolver.add(a, name)
    matched_gt = {i for i, _, _, _ in matches}
    matched_pred = {j for _, j, _, _ in matches}
    for i, j, _, _ in matches:
        resolver.add(pred[j][0], gt[i][0])
        for a in pred[j][1]:
            resolver.add(a, gt[i][0])

    mismatches: list[Mismatch] = []
    records = []
    arch_correct = arch_total = 0
    methods: dict[str, int] = {"exact": 0, "gt_alias": 0, "pred_alias": 0, "alias_overlap": 0}
    arch = ctx.tax["archetype"].values
    validity.add("archetype", "gt", [c[2] for c in gt])
    validity.add("archetype", "pred", [c[2] for c in pred])
    for i, j, method, via in matches:
        methods[method] += 1
        g_arch, p_arch = arch[gt[i][2]], arch[pred[j][2]]
        ok = None
        if g_arch:
            arch_total += 1
            ok = g_arch == p_arch or (bool(ctx.gt.accepted) and p_arch in accepted_labels(
                ctx.gt, character_key(gt[i][0]) + ".archetype", arch))
            arch_correct += ok
            if not ok:
                mismatches.append(Mismatch("characters", "archetype", gt[i][2], pred[j][2],
                                           note=f"character {gt[i][0]}"))
        records.append(CharacterMatch(gt[i][0], pred[j][0], method, via, gt[i][2], pred[j][2], ok))

    missing = [gt[i][0] for i in range(len(gt)) if i not in matched_gt]
    extra = [pred[j][0] for j in range(len(pred)) if j not in matched_pred]
    for name in missing:
        mismatches.append(Mismatch("characters", "missing_character", gt_value=name))

    skipped = {"gt_characters_without_name": gt_skipped, "pred_characters_without_name": pred_skipped}
    if not gt:
        reason = "ground truth lists no characters; predicted characters are extra and not counted"
        precision = recall = f1 = None
        gt_incomplete = True
    else:
        for name in extra:
            mismatches.append(Mismatch("characters", "extra_character", pred_value=name))
        precision, recall, f1 = prf(len(matches), len(pred), len(gt))
        gt_incomplete = gt_skipped > 0
        reason = f"{gt_skipped} GT characters have no name and were skipped" if gt_skipped else None
    result = build_frozen(CharacterResult, {
        "character_precision": precision,
        "character_recall": recall,
        "character_f1": f1,
        "character_archetype_accuracy": safe_div(arch_correct, arch_total),
        "missing_characters": missing,
        "extra_characters": extra,
        "matched_characters": records,
        "n_predicted": len(pred),
        "n_ground_truth": len(gt),
        "n_matched": len(matches),
        "n_missing": len(missing),
        "n_extra": len(extra),
        "archetype_correct": arch_correct,
        "archetype_total": arch_total,
        "match_methods": methods,
        "gt_incomplete": gt_incomplete,
        "reason": reason,
        "skipped": skipped,
        "validity": validity.report(),
        "mismatches": mismatches,
    })
    return result, resolver
