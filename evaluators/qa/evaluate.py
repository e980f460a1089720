"""Score QA and fact-check records: EM / F1 per language, verdicts and the classification report.

Per record:

- the ground truth is resolved by field priority (:mod:`evaluators.qa.fields`); a record
  without one is counted and listed by id ("missing ground truth") and left out of every
  denominator;
- the prediction is the first non-empty prediction field, with ``<think>`` blocks removed
  and the last ``<answer>`` tag's content used when present; an empty prediction is
  scored 0 (missing prediction: an error, in the denominators);
- **QA**: English answers get SQuAD v1.1 EM / F1 (:mod:`evaluators.metrics.squad`), Chinese
  ones CMRC 2018 EM / F1 (:mod:`evaluators.metrics.cmrc`); the language is chosen per record
  (Chinese when the gold answer or the prediction holds a CJK character) unless fixed;
- **fact-check**: gold and prediction are normalized to T / F / uncertain
  (:mod:`evaluators.qa.verdict`); EM and F1 of a record are both 1 when the verdicts
  agree (as the earlier script), so their means equal the accuracy.  A prediction with no
  verdict is ``unparsed`` (its own matrix column); a gold value with no verdict is listed
  and left out.

EM and F1 of a file are means over the scored records (macro over records); they are
also given per language and per group (``system`` / ``model`` field) when present.
"""

from __future__ import annotations

import dataclasses

import re
import sys
from collections import Counter
from functools import partial
from itertools import chain
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from evaluators import __version__
from evaluators.io import InputIssue, Record, RecordSet
from evaluators.metrics import cmrc, squad
from evaluators.metrics.classification import SIGNATURE as CLASSIFICATION_SIGNATURE
from evaluators.metrics.classification import ClassificationReport, classification_report
from evaluators.metrics.statistics import ClassificationIntervals, bootstrap_ci, classification_intervals
from evaluators.parallel import chunked, imap_chunks
from evaluators.qa import verdict as verdicts
from evaluators.qa.fields import (DEFAULT_GT_FIELDS, DEFAULT_PRED_FIELDS, GROUP_FIELDS, ID_FIELDS, QUESTION_FIELDS,
                                  Resolved, get_path, resolve, text_field)
from evaluators.qa.records import QASource, open_qa_source
from evaluators.qa.store import RecordStore
from evaluators.results import DictMixin

TASKS = ("auto", "qa", "factcheck")
LANGS = ("auto", "en", "zh")
#: Dataset-name fragments that mark a fact-check task (the earlier script's list).
FACTCHECK_NAME_HINTS = ("hover", "exfever", "fever", "fact")
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

STATUS_SCORED = "scored"
STATUS_MISSING_PREDICTION = "missing_prediction"
STATUS_MISSING_GT = "missing_gt"
STATUS_GOLD_UNPARSED = "gold_unparsed"

AGGREGATION = "mean over scored records (macro over records)"


@dataclass(frozen=True)
class QAConfig(DictMixin):
    """How to read and score a QA / fact-check file.

    Attributes
    ----------
    dataset : str or None
        Dataset name (only used to detect fact-check tasks: hover, exfever, fever, fact).
    task : {"auto", "qa", "factcheck"}
        Fixed task, or detection (:func:`detect_task`).
    lang : {"auto", "en", "zh"}
        Tokenization for QA: per record (auto), SQuAD (en) or CMRC 2018 (zh) for all.
    gt_fields, pred_fields : tuple of str
        Field priority for the ground truth and the prediction.
    group_field : str or None
        Field to break scores down by; ``"auto"`` picks the first of ``system``, ``model``,
        ``method``, ``run`` present; ``None`` for none.
    ci_resamples : int
        Bootstrap resamples for the confidence intervals of EM and F1 (0: no intervals).
    ci_level : float
        Confidence level of the intervals, in (0, 1).
    ci_seed : int
        Seed of the resampling (the same inputs and settings give the same intervals).
    """

    dataset: str | None = None
    task: str = "auto"
    lang: str = "auto"
    gt_fields: tuple[str, ...] = DEFAULT_GT_FIELDS
    pred_fields: tuple[str, ...] = DEFAULT_PRED_FIELDS
    group_field: str | None = "auto"
    ci_resamples: int = 10_000
    ci_level: float = 0.95
    ci_seed: int = 0

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {self.lang!r}")
        if not self.gt_fields or not self.pred_fields:
            raise ValueError("gt_fields and pred_fields must not be empty")


@dataclass(frozen=True, slots=True)
class QARecordResult(DictMixin):
    """One scored (or skipped) record.

    Attributes
    ----------
    index, line : int, int or None
        0-based position among the good records; 1-based line for JSONL/CSV.
    id : str
        The record id (an id field, else ``#<line or position>``).
    group : str or None
        Value of the group field.
    question : str or None
        Question or claim text.
    gold_answers : tuple of str
        Ground-truth answers (empty when missing).
    gold_field, prediction_field : str or None
        Fields the values came from.
    prediction_raw : str or None
        The prediction as stored.
    prediction : str
        The text scored (``<think>`` removed, ``<answer>`` content).
    status : str
        ``scored``, ``missing_prediction`` (scored 0), ``missing_gt`` or ``gold_unparsed`` (not scored).
    lang : str or None
        ``en`` / ``zh`` (QA) or ``None``.
    tokenizer : str or None
        ``squad-v1.1``, ``cmrc2018`` or ``verdict``.
    exact_match, token_f1 : float or None
        In [0, 1]; ``None`` when not scored.
    gold_verdict, predicted_verdict : str or None
        Fact-check verdicts (T / F / uncertain / unparsed).
    verdict_rule : str or None
        How the predicted verdict was found (see :class:`evaluators.qa.verdict.Verdict`).
    """

    index: int
    line: int | None
    id: str
    group: str | None
    question: str | None
    gold_answers: tuple[str, ...]
    gold_field: str | None
    prediction_raw: str | None
    prediction_field: str | None
    prediction: str
    status: str
    lang: str | None
    tokenizer: str | None
    exact_match: float | None
    token_f1: float | None
    gold_verdict: str | None = None
    predicted_verdict: str | None = None
    verdict_rule: str | None = None


@dataclass(frozen=True)
class ScoreSummary(DictMixin):
    """EM / F1 means over a subset of records.

    Attributes
    ----------
    n : int
        Scored records (the denominator).
    exact_match, token_f1 : float or None
        Means in [0, 1]; ``None`` when ``n == 0``.
    aggregation : str
        How the mean is taken.
    exact_match_ci_low, exact_match_ci_high, token_f1_ci_low, token_f1_ci_high : float or None
        Percentile bootstrap interval of each mean, records resampled
        (:func:`evaluators.metrics.statistics.bootstrap_ci`, settings in ``ci``); ``None``
        without scored records or with ``QAConfig.ci_resamples == 0``.
    ci : str or None
        The interval's signature (resamples, level, seed).
    """

    n: int
    exact_match: float | None
    token_f1: float | None
    aggregation: str = AGGREGATION
    exact_match_ci_low: float | None = None
    exact_match_ci_high: float | None = None
    token_f1_ci_low: float | None = None
    token_f1_ci_high: float | None = None
    ci: str | None = None


@dataclass(frozen=True)
class QAReport(DictMixin):
    """Result of :func:`evaluate_qa`.

    Attributes
    ----------
    file : str
        Input name.
    config : QAConfig
        Settings used.
    task, task_reason : str
        ``qa`` or ``factcheck`` and why.
    n_records : int
        Good records read.
    overall : ScoreSummary
        EM / F1 over scored records.
    by_lang, by_group : dict of str to ScoreSummary
        Break-downs (``by_group`` empty without a group field).
    group_field : str or None
        The field used for ``by_group``.
    missing_gt, missing_prediction, gold_unparsed, unparsed_predictions : tuple of str
        Record ids in each situation (``missing_gt`` and ``gold_unparsed`` are not scored;
        the other two are scored as errors).
    classification : ClassificationReport or None
        Fact-check only: confusion matrix over T / F / uncertain (+ unparsed) and metrics.
    gt_fields_used, pred_fields_used : dict of str to int
        How many records took their value from each field.
    issues : tuple of InputIssue
        Problems found while reading (broken lines ...).
    signature : str
        Tokenizers, normalization, matching rules and package version.
    records : RecordStore (a sequence of QARecordResult)
        Every record, in input order; compact for streamed files (see :mod:`evaluators.qa.store`).
    classification_ci : ClassificationIntervals or None
        Fact-check with ``QAConfig.ci_resamples``: bootstrap intervals of per-class F1, macro F1
        and accuracy (pairs resampled, :func:`evaluators.metrics.statistics.classification_intervals`).
    """

    file: str
    config: QAConfig
    task: str
    task_reason: str
    n_records: int
    overall: ScoreSummary
    by_lang: dict[str, ScoreSummary]
    by_group: dict[str, ScoreSummary]
    group_field: str | None
    missing_gt: tuple[str, ...]
    missing_prediction: tuple[str, ...]
    gold_unparsed: tuple[str, ...]
    unparsed_predictions: tuple[str, ...]
    classification: ClassificationReport | None
    gt_fields_used: dict[str, int]
    pred_fields_used: dict[str, int]
    issues: tuple[InputIssue, ...]
    signature: str
    records: RecordStore | tuple[QARecordResult, ...] = field(repr=False, default=())
    classification_ci: ClassificationIntervals | None = None

    @property
    def n_scored(self) -> int:
        """Records in the denominators."""
        return self.overall.n

    def records_in_cell(self, true_label: str, predicted_label: str, limit: int | None = None
                        ) -> tuple[list[QARecordResult], int]:
        """Fact-check records whose gold verdict is ``true_label`` and predicted verdict ``predicted_label``.

        Returns
        -------
        (records, n)
            The first ``limit`` such records (all when ``limit`` is None), in file order, and how
            many there are.  Only the returned records are re-derived from a record store.
        """
        counted = (STATUS_SCORED, STATUS_MISSING_PREDICTION)
        if isinstance(self.records, RecordStore):
            cols = zip(self.records.column("status"), self.records.column("gold_verdict"),
                       self.records.column("predicted_verdict"))
            hits = [i for i, (s, g, p) in enumerate(cols) if s in counted and g == true_label and p == predicted_label]
            return [self.records[i] for i in hits[:limit]], len(hits)
        hits = [r for r in self.records if r.status in counted
                and r.gold_verdict == true_label and r.predicted_verdict == predicted_label]
        return hits[:limit], len(hits)


def unusable_reason(report: QAReport, config: QAConfig, predictions_file: str | None = None) -> str | None:
    """Why a scored file must not be shown as a result (``None`` when it can).

    A file whose records have no ground truth, or none of which has a prediction, would be
    scored 0%: that is a missing input, not a result.  The text says what was looked for
    and how to give it (used by the CLI, which exits 2, and by the QA page).

    Parameters
    ----------
    report : QAReport
    config : QAConfig
        The fields that were looked in.
    predictions_file : str, optional
        The separate predictions file, when one was given.
    """
    if report.n_records == 0:
        return "no usable records (expected JSONL, a JSON array of objects, CSV or a SQuAD-style dataset)"
    if report.overall.n == 0:
        return (f"none of the {report.n_records} records has a ground-truth answer "
                f"(looked in: {', '.join(config.gt_fields)})")
    if len(report.missing_prediction) == report.overall.n:
        if predictions_file:
            return (f"no prediction found for any of the {report.overall.n} records: no id in {predictions_file} "
                    "matches a record id")
        return (f"no prediction found in any of the {report.overall.n} records (looked in: "
                f"{', '.join(config.pred_fields)}); add predictions to the records, name their field, or give a "
                "predictions file {id: answer} (--predictions)")
    return None


def has_cjk(text: str) -> bool:
    """True when ``text`` holds a CJK ideograph (basic block, extension A or compatibility)."""
    return _CJK.search(text) is not None


def detect_task(records: Sequence[Mapping[str, Any]], dataset: str | None,
                gt_fields: Sequence[str] = DEFAULT_GT_FIELDS) -> tuple[str, str]:
    """Decide between ``qa`` and ``factcheck``.

    Fact-check when the dataset name contains hover, exfever, fever or fact, or when at
    least half of the records have a ``claim`` field and at least 80 % of the ground
    truths are verdict spellings (T / F / uncertain, supports / refutes ...).

    Returns
    -------
    (task, reason)
    """
    if dataset:
        low = dataset.lower()
        for hint in FACTCHECK_NAME_HINTS:
            if hint in low:
                return "factcheck", f"dataset name {dataset!r} contains {hint!r}"
    if not records:
        return "qa", "no records"
    n_claim = sum(1 for r in records if text_field(r, ("claim",)) is not None)
    golds = [g for g in (resolve(r, gt_fields) for r in records) if g is not None]
    n_verdict = sum(1 for g in golds if verdicts.is_verdict_like(g.raw if not isinstance(g.raw, list) else g.texts[0]))
    if n_claim * 2 >= len(records) and golds and n_verdict >= 0.8 * len(golds):
        return "factcheck", f"'claim' field in {n_claim} of {len(records)} records and {n_verdict} of {len(golds)} answers are verdicts"
    return "qa", f"no fact-check dataset name; {n_claim} claims, {n_verdict} of {len(golds)} answers are verdicts"


def pick_group_field(records: Sequence[Mapping[str, Any]], setting: str | None) -> str | None:
    """The group field of ``records`` for the setting ``QAConfig.group_field``.

    ``None`` disables grouping, a name is used as given, and ``"auto"`` picks the first of
    :data:`~evaluators.qa.fields.GROUP_FIELDS` with a non-blank string value in any record.
    """
    if setting is None:
        return None
    if setting != "auto":
        return setting
    for name in GROUP_FIELDS:
        if any(isinstance(r.get(name), str) and r.get(name).strip() for r in records):
            return name
    return None


def _prediction(record: Mapping[str, Any], fields: Sequence[str]) -> tuple[str | None, str | None, Any]:
    """(field, text, raw) of the first non-empty prediction field."""
    for name in fields:
        value = get_path(record, name)
        if value is None or (isinstance(value, float) and value != value):
            continue
        if isinstance(value, str) and not value.strip():
            continue
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, str) and v.strip()), None)
            if value is None:
                continue
        return name, str(value), value
    return None, None, None


def _summary(n: int, em_sum: float, f1_sum: float) -> ScoreSummary:
    """Means over ``n`` scored records from the sums of their EM and F1."""
    return ScoreSummary(n, em_sum / n if n else None, f1_sum / n if n else None)


def _with_ci(summary: ScoreSummary, scores: tuple | None, config: QAConfig) -> ScoreSummary:
    """``summary`` with bootstrap intervals of EM and F1 from the records' ``(em, f1)`` arrays."""
    if not config.ci_resamples or scores is None or not len(scores[0]):
        return summary
    return with_intervals(summary, scores[0], scores[1], n_resamples=config.ci_resamples,
                          confidence_level=config.ci_level, seed=config.ci_seed)


def with_intervals(summary: ScoreSummary, exact_match, token_f1, *, n_resamples: int = 10_000,
                   confidence_level: float = 0.95, seed: int = 0) -> ScoreSummary:
    """``summary`` (or a subclass) with percentile bootstrap intervals of its EM and F1 means.

    ``exact_match`` and ``token_f1`` are the per-record scores behind the means (records are
    resampled, :func:`evaluators.metrics.statistics.bootstrap_ci`).  Unchanged when there is
    no record or ``n_resamples`` is 0.
    """
    if not n_resamples or not len(exact_match):
        return summary
    settings = {"n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed, "unit": "record"}
    em, f1 = bootstrap_ci(exact_match, **settings), bootstrap_ci(token_f1, **settings)
    return dataclasses.replace(summary, exact_match_ci_low=em.ci_low, exact_match_ci_high=em.ci_high,
                               token_f1_ci_low=f1.ci_low, token_f1_ci_high=f1.ci_high, ci=em.signature)


def signature(task: str) -> str:
    """Signature string of a QA or fact-check evaluation."""
    if task == "factcheck":
        return f"evalboard {__version__}; factcheck: {verdicts.SIGNATURE}; {CLASSIFICATION_SIGNATURE}; EM=F1=verdict match"
    return f"evalboard {__version__}; qa: en={squad.SIGNATURE}; zh={cmrc.signature()}; {AGGREGATION}"


#: Records looked at to detect the task and the group field of a streamed file (a
#: :class:`~evaluators.io.RecordSet`, already in memory, is looked at whole).
DETECTION_SAMPLE = 2000


def evaluate_records(
    records: RecordSet | Iterable[Record | InputIssue],
    config: QAConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    file: str | None = None,
    total: int | None = None,
    reader: Callable[[int, int], bytes] | None = None,
    workers: int = 1,
) -> QAReport:
    """Score QA or fact-check records, from a :class:`~evaluators.io.RecordSet` or a stream.

    Parameters
    ----------
    records : RecordSet or iterable of Record / InputIssue
        Records as read by :func:`evaluators.qa.records.read_qa_records`, or a stream such as
        :func:`evaluators.io.readers.iter_jsonl` (issues in the stream are collected).  A
        stream is scored as it is read and each record's fields are dropped once scored, so
        a large file needs little more memory than its results.
    config : QAConfig, optional
        Defaults: automatic task, language and group.
    progress : callable, optional
        Called as ``progress(done, total)`` every few hundred records (``total`` is 0 when
        unknown, for a stream).
    file : str, optional
        File name for a stream (a RecordSet carries its own).
    total : int, optional
        Number of records of a stream, if known (for the progress bar).
    reader : callable, optional
        ``reader(offset, length) -> bytes`` reading a streamed line back from the input the
        caller keeps; per-record results then hold offsets instead of copies of the lines.
    workers : int
        Worker processes scoring chunks of :data:`CHUNK_RECORDS` records (:mod:`evaluators.parallel`);
        the report is identical to the one of ``workers=1``.

    Returns
    -------
    QAReport

    Notes
    -----
    With ``task="auto"`` / ``group_field="auto"`` the task and the group field are decided on
    all records of a RecordSet, and on the first :data:`DETECTION_SAMPLE` records of a stream.
    """
    config = config or QAConfig()
    if isinstance(records, RecordSet):
        file, issues, total = records.file, list(records.issues), len(records.records)
        stream: Iterator[Record | InputIssue] = iter(records.records)
        sample_size = max(1, total)
    else:
        issues, stream = [], iter(records)
        sample_size = DETECTION_SAMPLE
    head: list[Record] = []
    for item in stream:
        if isinstance(item, InputIssue):
            issues.append(item)
            continue
        head.append(item)
        if len(head) >= sample_size:
            break
    sample = [r.data for r in head]
    if config.task == "auto":
        task, reason = detect_task(sample, config.dataset, config.gt_fields)
    else:
        task, reason = config.task, "set by the user"
    group_field = pick_group_field(sample, config.group_field)
    del sample
    gt_used: Counter[str] = Counter()
    pred_used: Counter[str] = Counter()

    def rescore(data: Mapping[str, Any], index: int, line: int | None) -> QARecordResult:
        return _score_one(data, index, line, task, config, group_field, Counter(), Counter())

    store = RecordStore(rescore, reader)
    special: dict[str, list[str]] = {"missing_gt": [], "missing_prediction": [], "gold_unparsed": [],
                                     "unparsed_predictions": []}
    total = total or 0
    def records_only():  # issues are collected here, records go on to be scored
        for item in chain(head, stream):
            if isinstance(item, InputIssue):
                issues.append(item)
            else:
                yield item

    def scored() -> Iterator[tuple[Record, QARecordResult]]:
        if workers <= 1:
            for rec in records_only():
                yield rec, _score_one(rec.data, rec.index, rec.line, task, config, group_field, gt_used, pred_used)
            return
        work = partial(_score_chunk, task, config, group_field)
        for chunk, (results, gt_counts, pred_counts) in imap_chunks(
                work, chunked(records_only(), CHUNK_RECORDS), workers,
                payload=lambda chunk: [(r.data, r.index, r.line) for r in chunk]):
            gt_used.update(gt_counts)
            pred_used.update(pred_counts)
            yield from zip(chunk, results)

    for k, (rec, r) in enumerate(scored()):
        if progress is not None and k % 250 == 0:
            progress(k, total)
        store.append(r, rec.raw, rec.offset)
        if r.status == STATUS_MISSING_GT:
            special["missing_gt"].append(r.id)
        elif r.status == STATUS_MISSING_PREDICTION:
            special["missing_prediction"].append(r.id)
        elif r.status == STATUS_GOLD_UNPARSED:
            special["gold_unparsed"].append(r.id)
        elif r.status == STATUS_SCORED and r.predicted_verdict == verdicts.UNPARSED:
            special["unparsed_predictions"].append(r.id)
    head.clear()
    if progress is not None:
        progress(len(store), total or len(store))

    classification = None
    classification_ci = None
    if task == "factcheck":
        status = store.column("status")
        gold, pred = store.column("gold_verdict"), store.column("predicted_verdict")
        pairs = [(g, p) for s, g, p in zip(status, gold, pred) if s in (STATUS_SCORED, STATUS_MISSING_PREDICTION)]
        labels = list(verdicts.VERDICTS)
        if any(p == verdicts.UNPARSED for _, p in pairs):
            labels.append(verdicts.UNPARSED)
        classification = classification_report([t for t, _ in pairs], [p for _, p in pairs], labels,
                                                average_labels=verdicts.VERDICTS)
        if config.ci_resamples and classification.n and not classification.n_outside_labels:
            classification_ci = classification_intervals(
                classification.counts, classification.labels, classification.average_labels,
                n_resamples=config.ci_resamples, confidence_level=config.ci_level, seed=config.ci_seed)
    lang_sums, lang_scores = store.sums("lang"), store.scores("lang") if config.ci_resamples else {}
    by_lang = {lang: _with_ci(_summary(*lang_sums[lang]), lang_scores.get(lang), config)
               for lang in sorted(k for k in lang_sums if k)}
    by_group = {}
    if group_field:
        sums = store.sums("group")  # records without a group value are counted in the overall score only
        group_scores = store.scores("group") if config.ci_resamples else {}
        by_group = {g: _with_ci(_summary(*sums[g]), group_scores.get(g), config)
                    for g in sorted(g for g in sums if g is not None)}

    return QAReport(
        file=file or "<input>",
        config=config,
        task=task,
        task_reason=reason,
        n_records=len(store),
        overall=_with_ci(_summary(*store.sums().get(None, (0, 0.0, 0.0))),
                         store.scores().get(None) if config.ci_resamples else None, config),
        by_lang=by_lang,
        by_group=by_group,
        group_field=group_field,
        missing_gt=tuple(special["missing_gt"]),
        missing_prediction=tuple(special["missing_prediction"]),
        gold_unparsed=tuple(special["gold_unparsed"]),
        unparsed_predictions=tuple(special["unparsed_predictions"]),
        classification=classification,
        gt_fields_used=dict(gt_used),
        pred_fields_used=dict(pred_used),
        issues=tuple(issues),
        signature=signature(task),
        records=store,
        classification_ci=classification_ci,
    )


def score_record(data: Mapping[str, Any], task: str, config: QAConfig | None = None, group_field: str | None = None,
                 *, index: int = 0, line: int | None = None) -> QARecordResult:
    """Score one record: the per-record function behind every report (and the unit to distribute).

    Parameters
    ----------
    data : mapping
        One input record (JSON object or CSV row).
    task : {"qa", "factcheck"}
        As decided for the whole file (:func:`detect_task` on a sample, or set by the user).
    config : QAConfig, optional
    group_field : str, optional
        As decided for the whole file (:func:`pick_group_field`).
    index, line : int
        Position of the record (0-based) and its line (1-based), shown in the result.

    Returns
    -------
    QARecordResult
        EM and F1 in [0, 1] (SQuAD v1.1 for English, CMRC 2018 for Chinese, verdict match for
        fact-check), or a status saying why the record is not scored.

    Notes
    -----
    A report's means are plain means of these results' ``exact_match`` / ``token_f1`` over
    the records with status ``scored`` or ``missing_prediction``; see ``docs/scaling.md`` for
    running this function on Dask or Ray.
    """
    return _score_one(data, index, line, task, config or QAConfig(), group_field, Counter(), Counter())


#: Records per chunk sent to a worker process (``workers > 1``).
CHUNK_RECORDS = 2000


def _score_chunk(task: str, config: QAConfig, group_field: str | None,
                 items: list[tuple[Mapping[str, Any], int, int | None]]
                 ) -> tuple[list[QARecordResult], Counter[str], Counter[str]]:
    """:func:`_score_one` over ``(data, index, line)`` items in a worker; with the field counts."""
    gt_used: Counter[str] = Counter()
    pred_used: Counter[str] = Counter()
    return ([_score_one(d, i, ln, task, config, group_field, gt_used, pred_used) for d, i, ln in items],
            gt_used, pred_used)


def _score_one(data: Mapping[str, Any], index: int, line: int | None, task: str, config: QAConfig,
               group_field: str | None, gt_used: Counter[str], pred_used: Counter[str]) -> QARecordResult:
    rid = text_field(data, ID_FIELDS, allow_numbers=True) or f"#{line if line is not None else index + 1}"
    group = None
    if group_field:
        g = data.get(group_field)
        group = sys.intern(str(g)) if g is not None and str(g).strip() else None  # few distinct values
    question = text_field(data, QUESTION_FIELDS)
    gold: Resolved | None = resolve(data, config.gt_fields)
    pred_field, pred_raw, pred_value = _prediction(data, config.pred_fields)
    prediction = verdicts.extract_answer(pred_raw) if pred_raw is not None else ""
    base = dict(index=index, line=line, id=rid.strip(), group=group, question=question,
                gold_answers=gold.texts if gold else (), gold_field=gold.field if gold else None,
                prediction_raw=pred_raw, prediction_field=pred_field, prediction=prediction)
    if pred_field:
        pred_used[pred_field] += 1
    if gold is None:
        return QARecordResult(**base, status=STATUS_MISSING_GT, lang=None, tokenizer=None,
                              exact_match=None, token_f1=None)
    gt_used[gold.field] += 1
    missing_pred = not prediction.strip()
    status = STATUS_MISSING_PREDICTION if missing_pred else STATUS_SCORED
    if task == "factcheck":
        gold_v = verdicts.normalize_verdict(gold.raw if not isinstance(gold.raw, (list, dict)) else gold.texts[0])
        pred_v = verdicts.normalize_verdict(pred_value if pred_value is not None else None)
        if gold_v.label == verdicts.UNPARSED:
            return QARecordResult(**base, status=STATUS_GOLD_UNPARSED, lang=None, tokenizer="verdict",
                                  exact_match=None, token_f1=None, gold_verdict=gold_v.label,
                                  predicted_verdict=pred_v.label, verdict_rule=pred_v.rule)
        hit = 1.0 if pred_v.label == gold_v.label else 0.0
        return QARecordResult(**base, status=status, lang=None, tokenizer="verdict", exact_match=hit,
                              token_f1=hit, gold_verdict=gold_v.label, predicted_verdict=pred_v.label,
                              verdict_rule=pred_v.rule)
    if config.lang == "auto":
        lang = "zh" if (has_cjk(prediction) or any(has_cjk(g) for g in gold.texts)) else "en"
    else:
        lang = config.lang
    if missing_pred:
        em = f1 = 0.0
    elif lang == "zh":
        em, f1 = cmrc.cmrc_scores(prediction, gold.texts)
    else:
        em, f1 = squad.squad_scores(prediction, gold.texts)
    return QARecordResult(**base, status=status, lang=lang, tokenizer="cmrc2018" if lang == "zh" else "squad-v1.1",
                          exact_match=em, token_f1=f1)


def evaluate_source(source: QASource, config: QAConfig | None = None, *,
                    progress: Callable[[int, int], None] | None = None, workers: int = 1) -> QAReport:
    """Score an input read once by :func:`evaluators.qa.records.open_qa_source` (records, not bytes)."""
    if source.streamed:
        return evaluate_records(source.records, config, progress, file=source.file, total=source.total,
                                reader=source.reader, workers=workers)
    return evaluate_records(source.records, config, progress, workers=workers)


def evaluate_qa(data: bytes | bytearray | memoryview, file: str = "<input>", config: QAConfig | None = None, *,
                predictions: bytes | None = None, predictions_file: str = "<predictions>",
                progress: Callable[[int, int], None] | None = None, workers: int = 1) -> QAReport:
    """Read and score a QA / fact-check file.

    Parameters
    ----------
    data : bytes-like
        Records (JSONL, JSON array, CSV) or a SQuAD-style dataset.  A ``bytearray`` or
        ``memoryview`` is copied to ``bytes`` once (the per-record results read lines back
        from it).
    file : str
        Its name (messages, format sniffing).
    config : QAConfig, optional
        Settings.
    predictions : bytes, optional
        A separate predictions file (``{id: answer}`` or records with id and prediction),
        joined to the records by id.
    predictions_file : str
        Its name.
    progress : callable, optional
        ``progress(done, total)``.
    workers : int
        Worker processes (see :func:`evaluate_records`).

    Returns
    -------
    QAReport

    Raises
    ------
    InputError
        When a file cannot be decoded (or the predictions file is not valid JSON).
    """
    source = open_qa_source(data, file, predictions=predictions, predictions_file=predictions_file,
                            count_lines=progress is not None)
    return evaluate_source(source, config, progress=progress, workers=workers)


def evaluate_qa_file(source: str | Path | BinaryIO, config: QAConfig | None = None, *, name: str | None = None,
                     predictions: bytes | None = None, predictions_file: str = "<predictions>",
                     progress: Callable[[int, int], None] | None = None, workers: int = 1) -> QAReport:
    """:func:`evaluate_qa` on a file on disk or an open binary file; JSONL is read one line at a time.

    The file is never held in memory whole when it is JSONL (and no separate predictions
    file is given): memory is the results plus one line (plus the caller's own copy, if any).
    Other formats are read whole.

    Parameters
    ----------
    source : path or seekable binary file (an upload, ``open(path, "rb")``)
    name : str, optional
        File name for messages and format sniffing (default: the path, or the file's ``name``).

    Raises
    ------
    OSError
        If the file cannot be read.
    InputError
        As :func:`evaluate_qa`.
    """
    opened = open_qa_source(source, name, predictions=predictions, predictions_file=predictions_file,
                            count_lines=progress is not None)
    return evaluate_source(opened, config, progress=progress, workers=workers)
