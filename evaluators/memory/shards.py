"""Long-term-memory runs in shards: one shard's questions scored (:func:`score_shard`) and the report of the pooled
shards (:func:`merged_report`), equal to the single-process report (see :mod:`evaluators.shards`).

Every shard resolves the whole input and decides the run's plan on it as one process does
(:func:`evaluators.memory.run.plan_memory`: the metrics, the judge scores read from the stored labels or a judge
cache); the questions are dealt by (question type, question id), so every type is split evenly, and each shard
scores its own with the per-question function (:func:`evaluators.memory.metrics.score_questions`).  A question's
row travels with the question itself (typed JSON, :mod:`evaluators.io.typed_json`); the merge puts them back in
input order and builds the report with :func:`evaluators.memory.run.report_of_rows`, the single-process run's
code: the metrics with their intervals, the LoCoMo table, LongMemEval's table and the judge agreement are computed
once, on the pooled questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evaluators.memory.inputs import ResolvedInputs
from evaluators.memory.metrics import QuestionScores, score_questions
from evaluators.memory.records import EvalResult
from evaluators.memory.run import (
    JudgeCacheChoice,
    MemoryConfig,
    MemoryPlan,
    MemoryReport,
    plan_memory,
    report_of_rows,
)
from evaluators.shards import assign, assignment_digest, pooled_rows

#: The per-item columns of a memory shard file: the question's position, type (the group) and id, the question
#: itself, its row of scores, its judgement that still fits (or null), whether its cached judgement is stale and,
#: with a GT patch, ``[row, judgement, stale]`` against the corrected ground truth.
COLUMNS = ("index", "group", "id", "result", "row", "judgement", "stale", "after")


@dataclass(frozen=True)
class MemoryShard:
    """One shard of a memory run, scored.

    Attributes
    ----------
    plan : MemoryPlan
        Decided on the whole input.
    n_questions : int
        Questions of the whole input.
    assignment : str
        :func:`evaluators.shards.assignment_digest` of the whole input's assignment.
    positions : list of int
        This shard's questions' positions in the input.
    rows : list of QuestionScores
        Their scores, in input order.
    patched : ResolvedInputs or None
        With a GT patch: the inputs with the corrected ground truths (:func:`evaluators.memory.patch.patch_inputs`).
    plan_after : MemoryPlan or None
        With a GT patch: the plan of ``patched``.
    rows_after : list of QuestionScores
        With a GT patch: this shard's questions scored against the corrected ground truths.
    """

    plan: MemoryPlan
    n_questions: int
    assignment: str
    positions: list[int] = field(repr=False)
    rows: list[QuestionScores] = field(repr=False)
    patched: ResolvedInputs | None = field(default=None, repr=False)
    plan_after: MemoryPlan | None = None
    rows_after: list[QuestionScores] = field(default_factory=list, repr=False)


def keys_of(results: Sequence[EvalResult]) -> list[tuple[str, str]]:
    """Every question's shard key: ``(question type, question id)``."""
    return [(r.question_type, r.question_id) for r in results]


def score_shard(inputs: ResolvedInputs, config: MemoryConfig, shard: int, n_shards: int,
                seed: int = 0) -> MemoryShard:
    """Score shard ``shard`` of ``n_shards`` of a memory run (no judge run).  With ``config.gt_patch`` its
    questions are scored twice, as the single-process run scores every question: against the ground truth as read
    and against the corrected one (:func:`evaluators.memory.patch.patch_inputs`); the merge compares them.

    Raises
    ------
    ValueError
        ``config`` asks for a judge run (not in shards yet); an unknown metric.
    GTPatchMismatch
        A patch made for another file than the inputs' ground truth.
    ImportError
        A metric asked for cannot run here.
    """
    if config.judge is not None:
        raise ValueError("memory shards do not run the judge yet: judge first (--judge --cache FILE), then shard "
                         "with --cache FILE")
    shards = assign(keys_of(inputs.results), n_shards, seed)
    positions = [k for k, s in enumerate(shards) if s == shard]
    plain = replace(config, gt_patch=None)

    def scored(x: ResolvedInputs) -> tuple[MemoryPlan, list[QuestionScores]]:
        plan = plan_memory(x, plain)
        mine = [x.results[k] for k in positions]
        judge_scores = plan.judge_scores or {}
        return plan, score_questions(mine, {r.question_id: judge_scores[r.question_id] for r in mine
                                            if r.question_id in judge_scores},
                                     metrics=plan.names, workers=config.workers)

    plan, rows = scored(inputs)
    if not config.gt_patch:
        return MemoryShard(plan, len(inputs.results), assignment_digest(shards), positions, rows)
    from evaluators.memory.patch import patch_inputs

    patched, _, _ = patch_inputs(inputs, config.gt_patch)  # as run_with_patch's run after the corrections
    plan_after, rows_after = scored(patched)
    return MemoryShard(plan, len(inputs.results), assignment_digest(shards), positions, rows, patched, plan_after,
                       rows_after)


def shard_rows(inputs: ResolvedInputs, result: MemoryShard) -> list[list]:
    """The shard's rows in :data:`COLUMNS` order (question, row and judgement as typed JSON)."""
    from evaluators.io.typed_json import encode

    def judged(plan: MemoryPlan, qid: str) -> list:
        judgement = plan.judgements.get(qid)
        return [None if judgement is None else encode(judgement), qid in stale[id(plan)]]

    stale = {id(p): set(p.stale) for p in (result.plan, result.plan_after) if p is not None}
    after = result.rows_after or [None] * len(result.rows)
    out = []
    for k, row, row_after in zip(result.positions, result.rows, after):
        r = inputs.results[k]
        out.append([k, r.question_type, r.question_id, encode(r), encode(row), *judged(result.plan, r.question_id),
                    None if row_after is None else [encode(row_after), *judged(result.plan_after, r.question_id)]])
    return out


def shard_extra(inputs: ResolvedInputs, result: MemoryShard) -> dict[str, Any]:
    """What the merge needs of the whole input besides the questions: the inputs' names, notes and problems, the
    stored labels (without their hypotheses) and the questions of LongMemEval's table (id and type)."""
    from evaluators.io.typed_json import encode

    stored = inputs.stored
    if stored is not None:
        stored = replace(stored, hypotheses={}, issues=[])
    lme = inputs.longmemeval_questions()
    if result.plan_after is not None:  # the plan's problems after the corrections (the judge store's, again)
        after = {"issues_after": encode(result.plan_after.issues)}
    else:
        after = {}
    problem = result.plan.choice.problem  # a judge store that cannot be read: 'memory --cache' refuses the run
    return {**after, "judge_cache_problem": None if problem is None else encode(problem), "files": inputs.files, "notes": list(inputs.notes), "issues": encode(result.plan.issues),
            "input_issues": encode(list(inputs.issues)), "stored": encode(stored),
            "stored_source": inputs.stored_source, "gt": [inputs.gt_role, inputs.gt_file, inputs.gt_digest],
            "lme_questions": None if lme is None else [[q.question_id, q.question_type] for q in lme]}


def _decided(plan: MemoryPlan) -> dict[str, Any]:
    return {"metrics": list(plan.names), "unavailable": plan.unavailable, "judge": plan.judge,
            "n_judgements": len(plan.judgements), "n_stale": len(plan.stale)}


def plan_decision(result: MemoryShard) -> dict[str, Any]:
    """The part of the plan every shard must have decided alike (written into the manifest's ``decision``; with a
    GT patch, the plan after the corrections too, under ``after``)."""
    out = _decided(result.plan)
    if result.plan_after is not None:
        out["after"] = _decided(result.plan_after)
    return out


def merged_report(config: MemoryConfig, decision: dict[str, Any], extra: dict[str, Any], columns: Sequence[str],
                  rows: Sequence[Sequence]) -> MemoryReport:
    """The report of the pooled rows of every shard, computed once (:func:`report_of_rows`); with
    ``config.gt_patch``, :func:`evaluators.memory.patch.run_with_patch`'s report, its two runs the pooled ones
    (the further references of accepted answers scored here, as there).

    Raises
    ------
    ValueError
        Other columns, a question twice, or a value that does not decode.
    GTPatchMismatch
        As :func:`evaluators.memory.patch.patch_inputs`.
    """
    from evaluators.io.typed_json import decode

    ordered = pooled_rows(columns, COLUMNS, rows, what="memory questions", item="question")
    results = [decode(r[3]) for r in ordered]
    scores = [decode(r[4]) for r in ordered]
    if not all(isinstance(r, EvalResult) for r in results) or not all(isinstance(s, QuestionScores) for s in scores):
        raise ValueError("a row is not a memory question with its scores")
    judgements = {r.question_id: decode(row[5]) for r, row in zip(results, ordered) if row[5] is not None}
    stale = [r.question_id for r, row in zip(results, ordered) if row[6]]
    gt_role, gt_file, gt_digest = extra["gt"]
    inputs = ResolvedInputs(results=results, stored=decode(extra["stored"]), stored_source=extra["stored_source"],
                            notes=list(extra["notes"]), issues=list(decode(extra["input_issues"])),
                            files=dict(extra["files"]), gt_role=gt_role, gt_file=gt_file, gt_digest=gt_digest)
    problem = extra.get("judge_cache_problem")
    problem = None if problem is None else decode(problem)
    plan = _plan(decision, judgements, stale, decode(extra["issues"]), problem)
    lme = extra.get("lme_questions")
    lme_questions = None if lme is None else [EvalResult("", qid, qtype, "", "", "") for qid, qtype in lme]
    if not config.gt_patch:
        return report_of_rows(inputs, config, plan, scores, lme_questions=lme_questions)
    from evaluators.memory.patch import run_with_patch

    if any(row[7] is None for row in ordered):
        raise ValueError("a row has no scores against the corrected ground truth")
    after = [[decode(row[7][0]), None if row[7][1] is None else decode(row[7][1]), row[7][2]] for row in ordered]
    plan_after = _plan(decision["after"], {r.question_id: j for r, (_, j, _) in zip(results, after) if j is not None},
                       [r.question_id for r, (_, _, st) in zip(results, after) if st], decode(extra["issues_after"]),
                       problem)
    scores_after = [row for row, _, _ in after]

    def pooled(x: ResolvedInputs, plain: MemoryConfig, **_) -> MemoryReport:
        """The run before (the inputs as read) or after the corrections, from the pooled rows."""
        if x is inputs:
            return report_of_rows(x, plain, plan, scores, lme_questions=lme_questions)
        return report_of_rows(x, plain, plan_after, scores_after,
                              lme_questions=lme_questions if x.stored is not None and x.stored.labels else None)

    return run_with_patch(inputs, config, pooled)


def _plan(decided: dict[str, Any], judgements: dict, stale: list[str], issues, problem=None) -> MemoryPlan:
    return MemoryPlan(tuple(decided["metrics"]), dict(decided["unavailable"]), judgements, stale, decided["judge"],
                      {}, list(issues), JudgeCacheChoice(None, "", problem))


__all__ = ["COLUMNS", "MemoryShard", "keys_of", "merged_report", "plan_decision", "score_shard", "shard_extra",
           "shard_rows"]
