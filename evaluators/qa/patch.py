"""QA / fact-check scores after review corrections: a GT patch applied to a scored report.

:func:`patch_report` applies GT patch entries (:mod:`evaluators.io.gt_patch`) to the answers of a
:class:`~evaluators.qa.evaluate.QAReport`'s records (every record with a patched id: in a file of
several systems the GT belongs to the question, so all systems' records of that id change) and
scores the changed records again with the same rules (:func:`~evaluators.qa.evaluate.score_record`:
SQuAD v1.1 / CMRC 2018 EM and F1, verdict match); the report's means, intervals and confusion
matrix are recomputed from the records.  The GT file is never edited.

:func:`qa_corrections` puts each run's scores before and after side by side: means with bootstrap
intervals, the paired difference (paired bootstrap on EM and F1, McNemar's exact test on EM,
:mod:`evaluators.metrics.statistics`) and, with two or more runs, the pairs of systems whose
order changed (rank flips).

:func:`patch_run` (the QA page) goes through the corrections skeleton of every task
(:func:`evaluators.metrics.before_after.run_before_after` with :func:`adapter`): the scored reports are
the run before, :func:`apply_to_reports` the patch, :func:`rescore_report` the run after.  The QA
commands apply the same two steps (:func:`patch_reports`) when they read their inputs and compare
later, when they write (:func:`qa_corrections`, the skeleton's last step with the same values).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from evaluators.io.gt_patch import (GTPatchSet, PatchApplication, PatchEntry, apply_gt_patch, check_digest,
                                    check_matched)
from evaluators.metrics.before_after import (  # noqa: F401 (PatchEffect, RankFlip, ScoreChange re-exported)
    Corrections, CorrectionsAdapter, PatchedInputs, PatchEffect, RankFlip, ScoreChange, corrections_of,
    run_before_after, score_effect)
from evaluators.qa import verdict as verdicts
from evaluators.qa.evaluate import (
    STATUS_GOLD_UNPARSED,
    STATUS_MISSING_GT,
    STATUS_MISSING_PREDICTION,
    STATUS_SCORED,
    QARecordResult,
    QAReport,
    ScoreSummary,
    score_record,
    score_summary,
    verdict_classification,
)

COUNTED = (STATUS_SCORED, STATUS_MISSING_PREDICTION)
#: The metrics compared before and after a patch.
QA_METRICS = ("exact_match", "token_f1")
#: The 0/1 metrics among them (McNemar's exact test).
BINARY_METRICS = ("exact_match",)
_GT_KEY, _PRED_KEY, _GROUP_KEY = "answers", "prediction", "group"


def gold_answers(records: Iterable[QARecordResult]) -> dict[str, tuple[str, ...]]:
    """Record id -> GT answers (the first record of an id that has a GT; ``()`` when none has one).

    Parameters
    ----------
    records : iterable of QARecordResult
        A report's records, in file order.

    Returns
    -------
    dict of str to tuple of str
        One entry per record id; what :func:`evaluators.io.gt_patch.apply_gt_patch` corrects.
    """
    out: dict[str, tuple[str, ...]] = {}
    for r in records:
        if not out.get(r.id):
            out[r.id] = tuple(r.gold_answers)
    return out


def rescore(record: QARecordResult, answers: Sequence[str], task: str, config) -> QARecordResult:
    """``record`` scored again against ``answers`` with the report's rules (task, language setting).

    The new result keeps the record's position, fields and group; its ``gold_answers`` are
    ``answers``.

    Parameters
    ----------
    record : QARecordResult
        The record as first scored (its raw prediction is scored again).
    answers : sequence of str
        The corrected GT answers (an empty sequence: the record becomes ``missing_gt``).
    task : {"qa", "factcheck"}
        The report's task.
    config : QAConfig
        The report's settings (language, script conversion).

    Returns
    -------
    QARecordResult
    """
    data = {"id": record.id, _GT_KEY: list(answers), _GROUP_KEY: record.group}
    if record.question is not None:
        data["question"] = record.question
    if record.prediction_raw is not None:
        data[_PRED_KEY] = record.prediction_raw
    cfg = dataclasses.replace(config, gt_fields=(_GT_KEY,), pred_fields=(_PRED_KEY,))
    new = score_record(data, task, cfg, _GROUP_KEY, index=record.index, line=record.line)
    return dataclasses.replace(new, group=record.group, gold_field=record.gold_field or _GT_KEY,
                               prediction_field=record.prediction_field)


def _summary(records: Sequence[QARecordResult], config) -> ScoreSummary:
    return score_summary([r.exact_match for r in records], [r.token_f1 for r in records], config)


def rebuild_report(report: QAReport, records: Sequence[QARecordResult]) -> QAReport:
    """``report`` with its aggregates (means, intervals, id lists, confusion matrix) made from ``records``.

    Parameters
    ----------
    report : QAReport
        The report to rebuild (its task, group field and config are kept).
    records : sequence of QARecordResult
        Its records, some re-scored (:func:`rescore`), in file order.

    Returns
    -------
    QAReport
        A copy; the means count records whose status is counted and that have an EM.
    """
    config = report.config
    counted = [r for r in records if r.status in COUNTED and r.exact_match is not None]
    by_lang = {lang: _summary([r for r in counted if r.lang == lang], config)
               for lang in sorted({r.lang for r in counted if r.lang})}
    by_group = {}
    if report.group_field:
        by_group = {g: _summary([r for r in counted if r.group == g], config)
                    for g in sorted({r.group for r in counted if r.group is not None})}
    classification = classification_ci = None
    if report.task == "factcheck":
        classification, classification_ci = verdict_classification(
            [(r.gold_verdict, r.predicted_verdict) for r in counted], config)
    return dataclasses.replace(
        report, records=tuple(records), overall=_summary(counted, config), by_lang=by_lang, by_group=by_group,
        missing_gt=tuple(r.id for r in records if r.status == STATUS_MISSING_GT),
        missing_prediction=tuple(r.id for r in records if r.status == STATUS_MISSING_PREDICTION),
        gold_unparsed=tuple(r.id for r in records if r.status == STATUS_GOLD_UNPARSED),
        unparsed_predictions=tuple(r.id for r in records if r.status == STATUS_SCORED
                                   and r.predicted_verdict == verdicts.UNPARSED),
        classification=classification, classification_ci=classification_ci)


def patch_report(report: QAReport, entries: Iterable[PatchEntry], gt_digest: str, *, refuse_unmatched: bool = True
                 ) -> tuple[QAReport, PatchApplication]:
    """Apply GT patch entries to a scored report and score the changed records again.

    Parameters
    ----------
    report : QAReport
        Scored from the GT file whose SHA-256 is ``gt_digest``.
    entries : iterable of PatchEntry
        In order (several patch files: concatenated).
    gt_digest : str
        :func:`evaluators.io.gt_patch.file_sha256` of that GT file (entries keyed by record, version 3,
        apply to every record with their id and GT, whatever the file).
    refuse_unmatched : bool
        As :func:`evaluators.io.gt_patch.apply_gt_patch`.

    Returns
    -------
    (QAReport, PatchApplication)
        The patched report (records in the same order; only patched ids re-scored) and what
        each entry did.

    Raises
    ------
    evaluators.io.gt_patch.GTPatchMismatch
        An entry bound to another GT file, or keyed entries for none of the records.
    """
    application = apply_gt_patch(gold_answers(report.records), entries, gt_digest, refuse_unmatched=refuse_unmatched)
    return rescore_report(report, application), application


def rescore_report(report: QAReport, application: PatchApplication) -> QAReport:
    """``report`` with the records of every id ``application`` changed scored again against their new answers
    (:func:`rescore`), the others as they were, and its aggregates made again (:func:`rebuild_report`).

    Parameters
    ----------
    report : QAReport
    application : PatchApplication
        What the patch did to ``report``'s records (:func:`apply_to_reports`, :func:`patch_report`).

    Returns
    -------
    QAReport
        Records in the same order.
    """
    records = list(report.records)
    if not application.answers:
        return rebuild_report(report, records)
    out = [rescore(r, application.answers[r.id], report.task, report.config) if r.id in application.answers else r
           for r in records]
    return rebuild_report(report, out)


def _pairs(before: Sequence[QARecordResult], after: Sequence[QARecordResult]):
    if len(before) != len(after):
        raise ValueError(f"before and after must be the same records: {len(before)} vs {len(after)}")
    out = []
    for b, a in zip(before, after):
        if b.index != a.index or b.id != a.id:
            raise ValueError(f"before and after must be the same records in the same order ({b.id} vs {a.id})")
        if b.status in COUNTED and a.status in COUNTED:
            out.append((b, a))
    return out


def _values(before: Mapping[str, Sequence[QARecordResult]], after: Mapping[str, Sequence[QARecordResult]]):
    """Run -> metric -> values of the records scored before and after (:func:`_pairs`)."""
    if list(before) != list(after):
        raise ValueError("before and after must have the same runs")
    values_b, values_a = {}, {}
    for run in before:
        pairs = _pairs(before[run], after[run])
        values_b[run] = {m: [getattr(b, m) for b, _ in pairs] for m in QA_METRICS}
        values_a[run] = {m: [getattr(a, m) for _, a in pairs] for m in QA_METRICS}
    return values_b, values_a


def patch_reports(reports: Sequence[QAReport], gt_files: Sequence[tuple[str, str]], patches: GTPatchSet
                  ) -> tuple[list[QAReport], tuple[tuple[str, PatchApplication], ...]]:
    """Apply GT patches to scored reports, each scored from its own GT file.

    Parameters
    ----------
    reports : sequence of QAReport
    gt_files : sequence of (str, str)
        ``(name, SHA-256)`` of each report's GT file, in the order of ``reports``.
    patches : GTPatchSet
        An entry bound to a file (versions 1 and 2) applies to the reports of the GT file it was made
        for; a keyed entry (version 3) to every report holding its record with its GT (both sides of a
        comparison, another run of the dataset).

    Returns
    -------
    (list of QAReport, tuple of (str, PatchApplication))
        The patched reports, and what the entries did in each report (named by the report's file).

    Raises
    ------
    GTPatchMismatch
        An entry bound to none of the GT files, or keyed entries none of which is for a record of the
        reports (nothing is applied).
    """
    applications = apply_to_reports(reports, gt_files, patches)
    return [rescore_report(r, app) for r, (_, app) in zip(reports, applications)], applications


def apply_to_reports(reports: Sequence[QAReport], gt_files: Sequence[tuple[str, str]], patches: GTPatchSet
                     ) -> tuple[tuple[str, PatchApplication], ...]:
    """What GT patches do to the records of scored reports (nothing scored again: :func:`rescore_report`).

    Parameters
    ----------
    reports, gt_files, patches
        As :func:`patch_reports` (which is this, then :func:`rescore_report` of each report).

    Returns
    -------
    tuple of (str, PatchApplication)
        Per report, in order: its file and what the entries did to its records.

    Raises
    ------
    GTPatchMismatch
        An entry bound to none of the GT files, or keyed entries none of which is for a record of the
        reports.
    """
    check_digest(patches.entries, dict(gt_files))
    applications = tuple((report.file, apply_gt_patch(gold_answers(report.records),
                                                      [e for e in patches.entries if e.keyed or e.gt_digest == digest],
                                                      digest, refuse_unmatched=False))
                         for report, (_, digest) in zip(reports, gt_files))
    check_matched(patches.entries, [app for _, app in applications])
    return applications


def qa_corrections(before: Sequence[QAReport], after: Sequence[QAReport],
                   applications: Sequence[tuple[str, PatchApplication]], files: Sequence[str] = (), *,
                   n_resamples: int = 10_000, seed: int = 0) -> Corrections:
    """What GT patches did to QA reports: the applications and every run's EM / F1 before and after.

    Parameters
    ----------
    before, after : sequence of QAReport
        The reports before the patches and as :func:`patch_reports` returned them (same order).
    applications : sequence of (str, PatchApplication)
        What the entries did, per report (:func:`patch_reports`).
    files : sequence of str
        The patch files.
    n_resamples : int
        Bootstrap resamples (>= 1) of the intervals and paired tests.
    seed : int

    Returns
    -------
    Corrections
        :func:`evaluators.metrics.before_after.corrections_of` of every run's EM (binary: McNemar's
        exact test) and F1 on the records counted both times (runs: :func:`evaluators.qa.compare.runs_of`);
        ``effect`` ``None`` with a ``note`` when there is none.

    Raises
    ------
    ValueError
        Runs that differ between ``before`` and ``after``, or records that are not the same.
    """
    values_b, values_a = run_values(before, after)
    return corrections_of(applications, values_b, values_a, QA_METRICS, files=files, binary=BINARY_METRICS,
                          n_resamples=n_resamples, seed=seed, unit="record")


def run_values(before: Sequence[QAReport], after: Sequence[QAReport]):
    """Run -> metric -> values of every run's records counted before and after (:data:`QA_METRICS`; runs:
    :func:`evaluators.qa.compare.runs_of`): what :func:`qa_corrections` compares.

    Raises
    ------
    ValueError
        Runs that differ between ``before`` and ``after``, or records that are not the same.
    """
    from evaluators.qa.compare import runs_of

    return _values(runs_of(before), runs_of(after))


def adapter(gt_files: Sequence[tuple[str, str]], *, n_resamples: int, seed: int = 0) -> CorrectionsAdapter:
    """The QA task's :class:`~evaluators.metrics.before_after.CorrectionsAdapter` over scored reports.

    QA patches a scored report rather than running its inputs again: the skeleton's inputs are the
    reports, the run before is the reports themselves (given to
    :func:`~evaluators.metrics.before_after.run_before_after` as ``before``), the patch is
    :func:`apply_to_reports` and the run after scores again the records whose answers changed
    (:func:`rescore_report`).  Values are paired record by record (:func:`run_values`: records counted
    both times), so they are read from both runs at once.

    Parameters
    ----------
    gt_files : sequence of (str, str)
        ``(name, SHA-256)`` of each report's GT file, in the order of the reports.
    n_resamples : int
        Bootstrap resamples (>= 1) of the intervals and paired tests.
    seed : int

    Returns
    -------
    CorrectionsAdapter
        For :func:`~evaluators.metrics.before_after.run_before_after` of the reports, with ``before`` the reports.
    """
    return CorrectionsAdapter(
        patch=lambda reports, patches: PatchedInputs(list(reports), apply_to_reports(reports, gt_files, patches)),
        run=list, run_after=lambda p: [rescore_report(r, app) for r, (_, app) in zip(p.inputs, p.applications)],
        values=run_values, metrics=QA_METRICS, binary=BINARY_METRICS, unit="record", n_resamples=n_resamples,
        seed=seed)


def patch_run(result, sources: Sequence, patches: GTPatchSet, *, n_resamples: int | None = None, seed: int = 0):
    """A :class:`~evaluators.qa.run.QARun` after GT patches (what the QA page applies; the CLI commands
    apply the same :func:`patch_reports`).

    Parameters
    ----------
    result : QARun
    sources : sequence of QAInput
        The inputs ``result`` was scored from (the GT file of input ``i`` is its ``source``).
    patches : GTPatchSet
    n_resamples : int, optional
        Resamples of the before / after intervals and paired tests (default: the run's
        ``ci_resamples``, 2000 when that is 0).
    seed : int

    Returns
    -------
    (QARun, Corrections)
        The run with every usable report patched, and what the patches did with the scores before
        and after.

    Raises
    ------
    GTPatchMismatch
        An entry made for none of the inputs' files.
    """
    from evaluators.io.gt_patch import file_sha256

    usable = [(i, x) for i, x in enumerate(result.inputs) if x.usable]
    gt_files = [(x.file, file_sha256(sources[i].source)) for i, x in usable]
    before = [x.report for _, x in usable]
    resamples = n_resamples if n_resamples is not None else (result.config.ci_resamples or 2000)
    _, after, corrections, _ = run_before_after(before, patches, adapter(gt_files, n_resamples=max(1, resamples),
                                                                         seed=seed), before=before)
    return with_reports(result, after), corrections


def with_reports(result, reports: Sequence[QAReport]):
    """``result`` (a :class:`~evaluators.qa.run.QARun`) with its usable inputs' reports replaced by
    ``reports``, in order.

    Parameters
    ----------
    result : QARun
        The run.
    reports : sequence of QAReport
        One per usable input of ``result``, in input order (extra reports are ignored).

    Returns
    -------
    QARun
        A copy; unusable inputs are kept as they are.
    """
    inputs = list(result.inputs)
    usable = [i for i, x in enumerate(inputs) if x.usable]
    for i, report in zip(usable, reports):
        inputs[i] = dataclasses.replace(inputs[i], report=report)
    return dataclasses.replace(result, inputs=tuple(inputs))
