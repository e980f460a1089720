"""Persona-dialogue runs in shards: one shard's (model, case) replies scored (:func:`score_shard`) and the report of
the pooled shards (:func:`merged_report`), equal to the single-process report (see :mod:`evaluators.shards`).

Every shard reads the cases and every predictions file and matches the replies to the cases as one process does
(:func:`evaluators.dialogue.scoring.plan_dialogue`: the same matching, issues and counts); the replies are dealt by
(model, case key), so every model is split evenly, and each shard scores its own with the per-reply function of
the run (:func:`evaluators.dialogue.scoring._score_chunk`).  A reply's result travels as typed JSON; the merge puts
them back in the run's order and builds the report with :func:`evaluators.dialogue.scoring.with_results`, the
single-process run's code (per model with intervals, per scene, the model comparison and corpus BLEU computed
once).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from evaluators.dialogue.inputs import CaseSet
from evaluators.dialogue.run import DialogueInputs
from evaluators.dialogue.scoring import (
    CHUNK_CASES,
    CaseResult,
    DialogueConfig,
    DialogueReport,
    _score_chunk,
    case_key,
    plan_dialogue,
    with_results,
)
from evaluators.io.gt_patch import GTPatchSet
from evaluators.parallel import map_ordered
from evaluators.shards import assign, assignment_digest, pooled_rows

#: The per-item columns of a dialogue shard file: the reply's position in the run, its model (the group), its case
#: key (``scene#dialogue_index#occurrence``), its result and, with a GT patch, its result against the corrected
#: cases (typed JSON).
COLUMNS = ("index", "group", "id", "result", "after")


@dataclass(frozen=True)
class DialogueShard:
    """One shard of a persona run, scored.

    Attributes
    ----------
    plan : DialogueReport
        The run without results, decided on the whole input (:func:`plan_dialogue`).
    plan_after : DialogueReport or None
        With a GT patch: the run of the corrected cases, without results.
    keys : list of (model, case key)
        Every reply's key, in the run's order (model by model, case by case).
    assignment : str
        :func:`evaluators.shards.assignment_digest` of the whole run's assignment.
    positions : list of int
        This shard's replies' positions.
    results : list of CaseResult
        Their results, in order.
    after : list of CaseResult
        With a GT patch: their results against the corrected cases (before any further reference).
    """

    plan: DialogueReport
    keys: list[tuple[str, str]] = field(repr=False)
    assignment: str = ""
    positions: list[int] = field(default_factory=list, repr=False)
    results: list[CaseResult] = field(default_factory=list, repr=False)
    plan_after: DialogueReport | None = None
    after: list[CaseResult] = field(default_factory=list, repr=False)


def score_shard(inputs: DialogueInputs, config: DialogueConfig, shard: int, n_shards: int,
                seed: int = 0, *, workers: int = 1) -> DialogueShard:
    """Score shard ``shard`` of ``n_shards`` of a persona run (``workers`` processes score chunks of its replies, as
    in the single-process run).  With ``inputs.gt_patch`` its replies are scored twice, as the single-process run
    scores every reply: against the cases as read and against the corrected cases
    (:func:`evaluators.dialogue.patch.patch_cases`); the merge compares them.

    Raises
    ------
    KeyError, ValueError
        An unknown metric or invalid weights.
    GTPatchMismatch
        A patch made for another cases file.
    """
    preds = inputs.combined()
    plan, items = plan_dialogue(inputs.cases.cases, preds.rows, config, cases_file=inputs.cases.file,
                                issues=inputs.cases.issues + preds.issues)
    keys = [(model, case_key(case)) for model, case, _ in items]
    shards = assign(keys, n_shards, seed)
    positions = [k for k, s in enumerate(shards) if s == shard]

    def score(work: list) -> list[CaseResult]:
        return list(map_ordered(partial(_score_chunk, plan.config), [work[k] for k in positions], workers,
                                chunk_size=CHUNK_CASES))

    results = score(items)
    if not inputs.gt_patch:
        return DialogueShard(plan, keys, assignment_digest(shards), positions, results)
    from evaluators.dialogue.patch import patch_cases

    cases, _, _ = patch_cases(inputs.cases, inputs.gt_patch)  # as run_with_patch's run after the corrections
    plan_after, items_after = plan_dialogue(cases.cases, preds.rows, config, cases_file=cases.file,
                                            issues=cases.issues + preds.issues)
    if [(model, case_key(case)) for model, case, _ in items_after] != keys:
        raise ValueError("the corrected cases are not the cases as read")  # a correction changes replies, not keys
    return DialogueShard(plan, keys, assignment_digest(shards), positions, results, plan_after, score(items_after))


def shard_rows(result: DialogueShard) -> list[list]:
    """The shard's rows in :data:`COLUMNS` order (the result as typed JSON)."""
    from evaluators.io.typed_json import encode

    after = result.after or [None] * len(result.results)
    return [[k, *result.keys[k], encode(r), None if a is None else encode(a)]
            for k, r, a in zip(result.positions, result.results, after)]


def merged_report(plan: DialogueReport, columns: Sequence[str], rows: Sequence[Sequence], *,
                  patched: tuple[CaseSet, GTPatchSet, DialogueReport] | None = None) -> DialogueReport:
    """The report of the pooled rows of every shard, computed once (:func:`with_results`).

    Parameters
    ----------
    plan : DialogueReport
        The run without results (a shard's ``plan``).
    columns : sequence of str
        :data:`COLUMNS`.
    rows : sequence of sequence
        Every reply's row, any order (sorted here by position).
    patched : (CaseSet, GTPatchSet, DialogueReport), optional
        With a GT patch: the cases as read, the patch and the run of the corrected cases without results; the
        report is then :func:`evaluators.dialogue.patch.run_with_patch`'s, its two runs the pooled ones (the
        further references of accepted replies scored here, as there).

    Raises
    ------
    ValueError
        Other columns, a reply twice, or a result that does not decode.
    GTPatchMismatch
        As :func:`evaluators.dialogue.patch.patch_cases`.
    """
    from evaluators.io.typed_json import decode

    ordered = pooled_rows(columns, COLUMNS, rows, what="persona replies", item="reply")
    results = [decode(r[3]) for r in ordered]
    if not isinstance(plan, DialogueReport) or not all(isinstance(r, CaseResult) for r in results):
        raise ValueError("a row is not a persona reply's result")
    if patched is None:
        return with_results(plan, results)
    from evaluators.dialogue.patch import run_with_patch

    cases, patches, plan_after = patched
    after = [decode(r[4]) for r in ordered]
    if not all(isinstance(r, CaseResult) for r in after):
        raise ValueError("a row has no result against the corrected cases")

    def pooled(x: DialogueInputs, config: DialogueConfig, **_) -> DialogueReport:
        """The run before (the cases as read) or after the corrections, from the pooled rows."""
        return with_results(plan, results) if x.cases is cases else with_results(plan_after, after)

    return run_with_patch(DialogueInputs(cases, (), patches), plan.config, pooled)


__all__ = ["COLUMNS", "DialogueShard", "merged_report", "score_shard", "shard_rows"]
