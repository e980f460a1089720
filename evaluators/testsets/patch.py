"""Keyword test-set scores after review corrections (a GT patch, :mod:`evaluators.io.gt_patch`).

What a correction means for a keyword-scored item (single-turn sets; a patch's ``record_id`` is
the item's ``id``, its ``old`` answers the item's ``expected_answer``):

- ``add_answer`` (a reviewer's *acceptable variant*): the answer becomes an **accepted answer**
  of the item.  An answer that contains an accepted answer (NFKC + casefold, substring: the
  keyword rule) **passes**: score 1.0, every keyword of the item counted as found (the reviewer
  judged the answer complete).  Other answers are keyword-scored as before.
- ``replace`` (a *GT error* with the corrected answer typed at adjudication): the corrected
  answer replaces the expected answer **and its keywords**, which were drawn from the wrong
  answer: each corrected answer (usually one) becomes a keyword of the item, scored by the
  keyword rule (found / total).  Answers accepted before a replace are dropped with the old
  ground truth, as in :func:`~evaluators.io.gt_patch.apply_gt_patch`.
- Items no entry changes keep their scores (only changed items are scored again).

Multi-turn sets have no per-item answer to correct: a patch on one is refused (``ValueError``).
"""

from __future__ import annotations

from collections.abc import Sequence

from evaluators.io.gt_patch import GTPatchSet, apply_gt_patch
from evaluators.metrics.before_after import (Corrections, CorrectionsAdapter, PatchedInputs, per_run,
                                             run_before_after)
from evaluators.testsets.evaluate import (CI_RESAMPLES, AnswerSet, ItemResult, SingleTurnReport, answer_for,
                                          item_result, single_report)
from evaluators.testsets.schema import TestSet
from evaluators.testsets.scoring import fold

#: The metric compared before and after (the per-item keyword score; its mean is ``mean_score``).
METRIC = "keyword_score"


def require_single_turn(test_set: TestSet) -> None:
    """The one refusal of a GT patch on a multi-turn set (the run, its shards and the patch itself say it).

    Raises
    ------
    ValueError
        ``test_set`` is multi-turn: ``"<file>: GT patches apply to single-turn test sets ..."``.
    """
    if test_set.kind != "single":
        raise ValueError(f"{test_set.file}: GT patches apply to single-turn test sets (an expected answer per item "
                         "id); this is a multi-turn set")


def gold_answers(test_set: TestSet) -> dict[str, tuple[str, ...]]:
    """Item id -> ``(expected_answer,)`` of a single-turn set (the GT a patch corrects); a multi-turn set is
    refused (:func:`require_single_turn`)."""
    require_single_turn(test_set)
    return {item.id: (item.expected_answer,) for item in test_set.items}


def rescore_item(item, answer, corrected: Sequence[str] | None, accepted: Sequence[str]) -> ItemResult:
    """One item scored with its reviewed ground truth (rules in the module docstring).

    Parameters
    ----------
    item : TestItem
    answer : Answer or None
        The item's answer (:func:`~evaluators.testsets.evaluate.answer_for`).
    corrected : sequence of str or None
        The corrected answers (each one keyword), ``None`` when the expected answer stands.
    accepted : sequence of str
        Accepted answers.
    """
    if corrected is not None:
        item = item.model_copy(update={"expected_answer": " | ".join(corrected),
                                       "keywords": [c.strip() for c in corrected if c.strip()]})
    result = item_result(item, answer)
    text = result.answer
    if text is not None and any(a.strip() and fold(a.strip()) in fold(text) for a in accepted):
        return ItemResult(result.id, result.category, result.difficulty, result.question, result.expected_answer,
                          text, "scored", result.keywords, result.keywords, (), 1.0, result.human_score)
    return result


def patch_testsets(test_set: TestSet, answers: AnswerSet, report: SingleTurnReport, patches: GTPatchSet, gt_file: str,
                   gt_digest: str, *, n_resamples: int = CI_RESAMPLES) -> tuple[SingleTurnReport, Corrections]:
    """Apply GT patches to a scored single-turn set and score the changed items again.

    Parameters
    ----------
    test_set, answers : TestSet, AnswerSet
        What ``report`` was scored from.
    report : SingleTurnReport
    patches : GTPatchSet
    gt_file, gt_digest : str
        The test-set file's name and :func:`~evaluators.io.gt_patch.file_sha256`.
    n_resamples : int
        Bootstrap resamples of the before / after intervals and the paired test (>= 1).

    Returns
    -------
    (SingleTurnReport, Corrections)
        The report after the corrections (items in the same order) and what they did, with the
        mean keyword score before and after (items with a score both times; bootstrap intervals,
        paired bootstrap).

    Raises
    ------
    GTPatchMismatch
        A patch entry bound to another file, or keyed entries for none of its items.
    ValueError
        A multi-turn set.
    """
    _, after, corrections, _ = run_before_after(
        test_set, patches, adapter(answers, report, gt_file, gt_digest, n_resamples=n_resamples), before=report)
    return after, corrections


def adapter(answers: AnswerSet, report: SingleTurnReport, gt_file: str, gt_digest: str, *,
            n_resamples: int = CI_RESAMPLES) -> CorrectionsAdapter:
    """The test-set task's :class:`~evaluators.metrics.before_after.CorrectionsAdapter`: the patch applied to
    the items' expected answers (:func:`gold_answers`), the changed items of ``report`` scored again
    (:func:`rescore_item`; the others keep their results), the keyword score compared item by item.

    The run before is ``report`` itself (:func:`run_before_after` is given it as ``before``): a test set
    is scored once and patched, not run twice.

    Parameters
    ----------
    answers : AnswerSet
    report : SingleTurnReport
        Scored from the test set and ``answers``.
    gt_file, gt_digest : str
        The test-set file's name and :func:`~evaluators.io.gt_patch.file_sha256`.
    n_resamples : int
        Bootstrap resamples (clipped to >= 1).

    Returns
    -------
    CorrectionsAdapter
        For :func:`~evaluators.metrics.before_after.run_before_after` of the test set, with ``before=report``.
    """
    def patch(test_set: TestSet, patches: GTPatchSet) -> PatchedInputs:
        entries = patches.for_file(gt_file, gt_digest)
        app = apply_gt_patch(gold_answers(test_set), entries, gt_digest)
        return PatchedInputs(test_set, ((gt_file, app),), extra=app)

    def run_after(patched: PatchedInputs) -> SingleTurnReport:
        test_set, app = patched.inputs, patched.extra
        by_id = {item.id: item for item in test_set.items}
        rows = []
        for r in report.items:
            if r.id in app.answers:
                corrected, accepted = app.corrected_and_accepted(r.id)
                r = rescore_item(by_id[r.id], answer_for(answers, r.id), corrected, accepted)
            rows.append(r)
        return single_report(test_set, answers, rows)

    return CorrectionsAdapter(patch=patch, run=lambda test_set: report, run_after=run_after,
                              values=per_run(lambda r: {answers.file: {METRIC: [x.score for x in r.items]}}),
                              metrics=(METRIC,), unit="item", n_resamples=max(1, n_resamples), seed=0)
