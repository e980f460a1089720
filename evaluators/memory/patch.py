"""Long-term-memory scores after review corrections (a GT patch, :mod:`evaluators.io.gt_patch`).

The ground truth a patch corrects is the file the scored answers come with
(:attr:`~evaluators.memory.inputs.ResolvedInputs.gt_file`: the results file when one is given,
else the question file); a patch's ``record_id`` is the ``question_id``.  What a correction means
for a question:

- ``replace`` (a *GT error* with the corrected answer typed at adjudication): the corrected
  answer becomes the question's ground truth.  A judgement of the old ground truth no longer
  fits: a cached judgement is stale (its fingerprint holds the ground truth) and a stored label
  (a labels file, mem0's ``llm_score``) of that question is not used; ``--judge`` judges the
  question again against the corrected answer.
- ``add_answer`` (a reviewer's *acceptable variant*): the answer becomes one more reference of
  the question.  Every text metric of the question (exact match, token F1, ROUGE, BLEU, LoCoMo
  F1 ...) is the maximum over its references, as SQuAD scores several gold answers
  (``metric_max_over_ground_truths``).  The judge score is left as judged: it was given against
  the ground truth, which stands.
- Questions no entry changes keep their scores.

:func:`run_with_patch` is what :func:`~evaluators.memory.run.run_memory` does when its config
holds a patch: the run before and after the corrections, and the headline metrics compared
question by question (:func:`evaluators.metrics.before_after.score_effect`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from evaluators.io.gt_patch import GTPatchSet, PatchApplication, apply_gt_patch
from evaluators.memory import metrics as metrics_mod
from evaluators.memory.inputs import ResolvedInputs
from evaluators.memory.records import EvalResult
from evaluators.metrics.before_after import CorrectionsAdapter, PatchedInputs, per_run, run_before_after

#: Metrics compared before and after (those the run computed), in this order; exact match is binary.
EFFECT_METRICS = ("judge_score", "exact_match_normalized", "token_f1_char", "locomo_f1")
BINARY_METRICS = ("exact_match_normalized",)


def gold_answers(results: Sequence[EvalResult]) -> dict[str, tuple[str, ...]]:
    """Question id -> ``(ground_truth,)``: the GT a patch corrects.

    Parameters
    ----------
    results : sequence of EvalResult
        The run's questions.

    Returns
    -------
    dict of str to tuple of str
        One answer per question id (a later duplicate id overwrites an earlier one).
    """
    return {r.question_id: (r.ground_truth,) for r in results}


def patch_inputs(inputs: ResolvedInputs, patches: GTPatchSet
                 ) -> tuple[ResolvedInputs, dict[str, tuple[str, ...]], PatchApplication]:
    """The inputs with the corrected ground truths, and the extra references of each question.

    Parameters
    ----------
    inputs : ResolvedInputs
        The resolved long-memory inputs (their ``gt_file`` and ``gt_digest`` bind the patch).
    patches : GTPatchSet
        The GT patch files read.

    Returns
    -------
    (ResolvedInputs, references, PatchApplication)
        ``references``: question id -> its further accepted answers (``add_answer``); the inputs'
        stored labels lose the questions whose ground truth was replaced.

    Raises
    ------
    GTPatchMismatch
        An entry bound to another file than ``inputs.gt_file``, or keyed entries for none of its records.
    """
    entries = patches.for_file(inputs.gt_file or "<the memory inputs>", inputs.gt_digest or "")
    app = apply_gt_patch(gold_answers(inputs.results), entries, inputs.gt_digest or "")
    references: dict[str, tuple[str, ...]] = {}
    replaced: set[str] = set()
    results = []
    for r in inputs.results:
        if r.question_id in app.answers:
            corrected, refs = app.one_reference(r.question_id, r.ground_truth)
            if corrected is not None:
                replaced.add(r.question_id)
                r = dataclasses.replace(r, ground_truth=corrected, metadata=dict(r.metadata))
            if refs:
                references[r.question_id] = refs
        results.append(r)
    stored = inputs.stored
    if stored is not None and replaced & set(stored.labels):
        stored = dataclasses.replace(stored, labels={q: v for q, v in stored.labels.items() if q not in replaced})
    return dataclasses.replace(inputs, results=results, stored=stored), references, app


def best_over_references(rows: Sequence, results: Sequence[EvalResult], references: dict[str, tuple[str, ...]],
                         names: Sequence[str]) -> list:
    """Rows whose text metrics are the maximum over each question's references (its ground truth first).

    Parameters
    ----------
    rows : sequence of QuestionScores
        Scored against each question's ground truth, in the order of ``results``.
    results : sequence of EvalResult
    references : dict
        Question id -> further references.
    names : sequence of str
        The run's metrics (``judge_score`` is left as it is).
    """
    text = [m for m in names if m != "judge_score"]
    if not references or not text:
        return list(rows)
    variants = [dataclasses.replace(r, ground_truth=ref) for r in results for ref in references.get(r.question_id, ())]
    extra: dict[str, list] = {}
    for row in metrics_mod.score_questions(variants, None, metrics=text):
        extra.setdefault(row.question_id, []).append(row)
    out = []
    for row in rows:
        if row.question_id in extra:
            scores = dict(row.scores)
            for m in text:
                values = [v for v in [scores.get(m), *(x.scores.get(m) for x in extra[row.question_id])]
                          if v is not None]
                scores[m] = max(values) if values else None
            row = dataclasses.replace(row, scores=scores)
        out.append(row)
    return out


def adapter(inputs: ResolvedInputs, config, run, **kwargs) -> CorrectionsAdapter:
    """The memory task's :class:`~evaluators.metrics.before_after.CorrectionsAdapter` (rules in the module
    docstring): the inputs patched (:func:`patch_inputs`), ``run`` before and after (its own cache key),
    text metrics over the further references after (:func:`best_over_references`, aggregates made again),
    the headline metrics of :data:`EFFECT_METRICS` the run computed compared question by question.

    Parameters
    ----------
    inputs : ResolvedInputs
        As read (the GT file names the run in the before / after table).
    config : MemoryConfig
        With ``gt_patch``.
    run : callable
        :func:`~evaluators.memory.run.run_memory`, called without the patch.
    **kwargs
        ``progress``, ``memo``, ``key`` of ``run``.

    Returns
    -------
    CorrectionsAdapter
        For :func:`~evaluators.metrics.before_after.run_before_after` of ``inputs`` and ``config.gt_patch``.
    """
    plain = dataclasses.replace(config, gt_patch=None)
    key = kwargs.pop("key", ())
    name = inputs.gt_file or "run"
    entries = config.gt_patch.entries  # the after run's cache key

    def patch(x: ResolvedInputs, patches: GTPatchSet) -> PatchedInputs:
        patched, references, app = patch_inputs(x, patches)
        return PatchedInputs(patched, ((x.gt_file or "", app),), tuple(app.issues), references)

    def run_after(patched: PatchedInputs):
        after = run(patched.inputs, plain, key=("gt-patch", key, entries), **kwargs)
        rows = best_over_references(after.rows, patched.inputs.results, patched.extra, after.names)
        metrics = after.metrics
        if patched.extra:
            metrics = metrics_mod.aggregate_rows(rows, after.names, unavailable=after.metrics.get("unavailable"),
                                                 ci_resamples=max(0, config.ci_resamples))
        return dataclasses.replace(after, rows=rows, metrics=metrics)

    def compared(before, after) -> list[str]:
        return [m for m in EFFECT_METRICS if m in after.names]

    def values(report) -> dict:
        return {name: {m: [r.scores.get(m) for r in report.rows] for m in EFFECT_METRICS if m in report.names}}

    return CorrectionsAdapter(patch=patch, run=lambda x: run(x, plain, key=key, **kwargs), values=per_run(values),
                              metrics=compared, binary=BINARY_METRICS, run_after=run_after, unit="question",
                              n_resamples=config.ci_resamples or 2000, seed=0)


def run_with_patch(inputs: ResolvedInputs, config, run, **kwargs):
    """``run(inputs, config)`` before and after ``config.gt_patch`` (rules in the module docstring), through
    :func:`evaluators.metrics.before_after.run_before_after` with :func:`adapter`.

    Parameters
    ----------
    inputs : ResolvedInputs
    config : MemoryConfig
        With ``gt_patch``.
    run : callable
        :func:`~evaluators.memory.run.run_memory` (called twice, without the patch).
    **kwargs
        ``progress``, ``memo``, ``key`` of ``run``.

    Returns
    -------
    MemoryReport
        After the corrections, with ``before`` (the report of the inputs as read) and
        ``corrections``.

    Raises
    ------
    GTPatchMismatch
        As :func:`patch_inputs`; and whatever ``run`` raises.
    """
    before, after, corrections, issues = run_before_after(inputs, config.gt_patch,
                                                          adapter(inputs, config, run, **kwargs))
    return dataclasses.replace(after, issues=after.issues + list(issues), before=before, corrections=corrections)
