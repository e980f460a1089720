"""Score QA and fact-check records: EM / F1 per language, verdicts and the classification report.

Per record:

- the ground truth is resolved by field priority (:mod:`evaluators.qa.fields`); a record
  without one is counted and listed by id ("missing ground truth") and left out of every
  denominator;
- the prediction is the first non-empty prediction field, with ``<think>`` blocks removed
  and the last ``<answer>`` tag's content used when present; an empty prediction is
  scored 0 (missing prediction: an error, in the denominators);
- **QA**: English answers get SQuAD v1.1 EM / F1 (the registered ``exact_match_squad`` /
  ``token_f1_squad``), Chinese ones CMRC 2018 EM / F1 (``exact_match_cmrc`` / ``token_f1_cmrc``),
  both from the registry's :data:`evaluators.metrics.answers.OFFICIAL`; the language is chosen per
  record (Chinese when the gold answer or the prediction holds a CJK character) unless fixed; a
  record's ``tokenizer`` (``squad-v1.1`` / ``cmrc2018``) names the pair (:func:`record_metric_names`);
- **fact-check**: gold and prediction are normalized to T / F / uncertain
  (:mod:`evaluators.qa.verdict`); EM and F1 of a record are both 1 when the verdicts
  agree (as the earlier script), so their means equal the accuracy.  A prediction with no
  verdict is ``unparsed`` (its own matrix column); a gold value with no verdict is listed
  and left out.

EM and F1 of a file are means over the scored records (macro over records); they are
also given per language and per group (``system`` / ``model`` field) when present.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sys
import tempfile
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from evaluators import __version__
from evaluators.io import InputIssue, Record, RecordSet
from evaluators.metrics import cmrc
from evaluators.metrics.answers import OFFICIAL
from evaluators.metrics.classification import SIGNATURE as CLASSIFICATION_SIGNATURE
from evaluators.metrics.classification import ClassificationReport, classification_report
from evaluators.metrics.statistics import ClassificationIntervals, bootstrap_ci, classification_intervals
from evaluators.io.readers import detect_encoding, iter_jsonl_values, jsonl_block
from evaluators.parallel import Inherited, chunked, forks_workers, gc_paused, imap_chunks, local_pool
from evaluators.policy import is_empty
from evaluators.qa import verdict as verdicts
from evaluators.qa.fields import (
    DEFAULT_GT_FIELDS,
    DEFAULT_PRED_FIELDS,
    GROUP_FIELDS,
    ID_FIELDS,
    QUESTION_FIELDS,
    answer_texts,
    get_path,
    resolve,
    text_field,
)
from evaluators.qa.records import QASource, open_qa_source
from evaluators.qa.store import RecordStore
from evaluators.results import DictMixin
from evaluators.text.script import convert

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
    script : str or None
        Traditional/Simplified conversion of prediction and gold answers before QA scoring
        (an OpenCC configuration: ``t2s``, ``tw2s``, ``hk2s``, ``s2t`` ...,
        :data:`evaluators.text.script.SCRIPT_CONFIGS`); ``None`` (default): none.  Written into
        the signature and the report's ``provenance``.
    user_dict : str or None
        A jieba user dictionary (path) for the run's jieba-based numbers (``sensitivity``); its
        SHA-256 is recorded in the report's ``provenance``.
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
    script: str | None = None
    user_dict: str | None = None

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {self.lang!r}")
        if not self.gt_fields or not self.pred_fields:
            raise ValueError("gt_fields and pred_fields must not be empty")
        if self.script:
            from evaluators.text.script import check_config

            object.__setattr__(self, "script", check_config(self.script))


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
        ``squad-v1.1``, ``cmrc2018`` or ``verdict``: which definitions ``exact_match`` and ``token_f1``
        hold (:func:`record_metric_names`).
    exact_match, token_f1 : float or None
        In [0, 1]; ``None`` when not scored.  QA: the registered ``exact_match_squad`` / ``token_f1_squad``
        (``squad-v1.1``) or ``exact_match_cmrc`` / ``token_f1_cmrc`` (``cmrc2018``), maximised over the
        gold answers; fact-check: both the verdict match (1 or 0; their mean is the accuracy).
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
    provenance : dict
        How the text was cut (:func:`text_provenance`): ``{"qa": ..., "jieba": ...}``, each a
        :class:`~evaluators.text.provenance.TextProvenance` as a dict (tokenizer, package version,
        dictionary and user dictionary SHA-256, HMM, normalisation, script conversion, stop words).
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
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def n_scored(self) -> int:
        """Records in the denominators."""
        return self.overall.n

    def records_in_cell(self, true_label: str, predicted_label: str, limit: int | None = None
                        ) -> tuple[list[QARecordResult], int]:
        """Fact-check records whose gold verdict is ``true_label`` and predicted verdict ``predicted_label``.

        Parameters
        ----------
        true_label, predicted_label : str
            Verdict labels of the confusion matrix (``T``, ``F``, ``uncertain``, ``unparsed``).
        limit : int, optional
            Records returned at most; ``None``: all.

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


#: Why an input without any record is refused (:func:`unusable_reason`; a shard refuses it on the whole input).
NO_RECORDS = "no usable records (expected JSONL, a JSON array of objects, CSV or a SQuAD-style dataset)"


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
        return NO_RECORDS
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
    """True when ``text`` holds a CJK ideograph (basic block, extension A or compatibility).

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    bool

    Examples
    --------
    >>> has_cjk("Beijing 北京"), has_cjk("Beijing")
    (True, False)
    """
    return _CJK.search(text) is not None


def official_lang(prediction: str, golds: Sequence[str], lang: str = "auto") -> str:
    """The language whose official rules score a pair: ``lang``, or under ``"auto"`` ``"zh"`` when the
    prediction or a gold answer holds a CJK ideograph (:func:`has_cjk`), else ``"en"``.

    Parameters
    ----------
    prediction : str
        Model answer.
    golds : sequence of str
        Its gold answers.
    lang : {"auto", "en", "zh"}
        ``QAConfig.lang``; anything but ``"auto"`` is returned as it is.

    Returns
    -------
    str
        ``"zh"`` (CMRC 2018 rules) or ``"en"`` (SQuAD v1.1 rules), or ``lang`` itself.

    Examples
    --------
    >>> official_lang("Paris", ["巴黎", "Paris"])
    'zh'
    """
    if lang != "auto":
        return lang
    return "zh" if (has_cjk(prediction) or any(has_cjk(g) for g in golds)) else "en"


def official_scores(prediction: str, golds: Sequence[str], lang: str = "auto",
                    script: str | None = None) -> tuple[str, float, float]:
    """``(lang, EM, F1)`` of one QA prediction against its gold answers by the official rules: CMRC 2018's
    (:func:`evaluators.metrics.cmrc.cmrc_scores`) for Chinese, SQuAD v1.1's
    (:func:`evaluators.metrics.squad.squad_scores`) otherwise.  The language is chosen on the texts as
    given (:func:`official_lang`); ``script`` (an OpenCC config) converts both sides before scoring.
    The one rule of the QA report's EM / F1 columns (the scorer and ``script_effect`` call it).

    Parameters
    ----------
    prediction : str
        Model answer (after verdict/answer extraction).
    golds : sequence of str
        Gold answers, at least one.
    lang : {"auto", "en", "zh"}
        See :func:`official_lang`.
    script : str, optional
        OpenCC configuration (``"t2s"`` ...) applied to both sides after the language is chosen.

    Returns
    -------
    (lang, exact_match, token_f1) : (str, float, float)
        EM 0.0 or 1.0 and F1 in [0, 1], maximized over the gold answers.

    Raises
    ------
    ValueError
        No gold answer.

    References
    ----------
    SQuAD v1.1 ``evaluate-v1.1.py`` (Rajpurkar et al. 2016); CMRC 2018 ``cmrc2018_evaluate.py``
    (Cui et al. 2019).

    Examples
    --------
    >>> official_scores("北京", ["北京市"])  # CMRC: common run 北京, P = 2/2, R = 2/3
    ('zh', 0.0, 0.8)
    """
    golds = tuple(golds)
    lang = official_lang(prediction, golds, lang)
    if script:
        prediction, golds = convert(prediction, script), tuple(convert(g, script) for g in golds)
    em, f1 = OFFICIAL[lang].scores(prediction, golds)
    return lang, em, f1


#: ``QARecordResult.tokenizer`` -> the registry names of what its ``exact_match`` / ``token_f1`` hold (QA).
_RECORD_METRICS = {official.tokenizer: official.names for official in OFFICIAL.values()}


def record_metric_names(tokenizer: str | None) -> tuple[str, str] | None:
    """The registered metrics behind a QA record's ``exact_match`` / ``token_f1`` values.

    Parameters
    ----------
    tokenizer : str or None
        The record's ``tokenizer`` (:class:`QARecordResult`).

    Returns
    -------
    (exact match name, F1 name) or None
        ``("exact_match_squad", "token_f1_squad")`` for ``squad-v1.1``, ``("exact_match_cmrc",
        "token_f1_cmrc")`` for ``cmrc2018``; ``None`` for a fact-check record (``verdict``: the verdict
        match, a classification outcome, :mod:`evaluators.qa.verdict`) or a record not scored.
    """
    return _RECORD_METRICS.get(tokenizer)


def detect_task(records: Sequence[Mapping[str, Any]], dataset: str | None,
                gt_fields: Sequence[str] = DEFAULT_GT_FIELDS) -> tuple[str, str]:
    """Decide between ``qa`` and ``factcheck``.

    Fact-check when the dataset name contains hover, exfever, fever or fact, or when at
    least half of the records have a ``claim`` field and at least 80 % of the ground
    truths are verdict spellings (T / F / uncertain, supports / refutes ...).

    Parameters
    ----------
    records : sequence of mapping
        The file's records (or a sample of them: :data:`DETECTION_SAMPLE`).
    dataset : str, optional
        Dataset or file name, checked for the fact-check hints first.
    gt_fields : sequence of str
        Fields that may hold the ground truth, in order of preference.

    Returns
    -------
    (task, reason) : (str, str)
        ``"qa"`` or ``"factcheck"``, and one sentence saying why (shown to the user).
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

    Parameters
    ----------
    records : sequence of mapping
        The records (or a sample).
    setting : str or None
        ``None``, ``"auto"`` or a field name.

    Returns
    -------
    str or None
        The field the report groups by (systems side by side), or ``None``.
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


def score_summary(exact_match: Sequence[float], token_f1: Sequence[float], config: QAConfig) -> ScoreSummary:
    """EM / F1 means of per-record scores, with their intervals as ``config`` asks.

    The summary :func:`evaluate_records` makes of streamed sums, made of lists (a re-scored
    subset: :func:`evaluators.qa.patch.rebuild_report`).

    Parameters
    ----------
    exact_match, token_f1 : sequence of float, shape (n,)
        The records' scores in [0, 1], in the same order.
    config : QAConfig
        ``ci_resamples`` (0: no interval), ``ci_level``, ``ci_seed``.

    Returns
    -------
    ScoreSummary
        ``n`` records; means ``None`` when ``n == 0``.
    """
    return _with_ci(_summary(len(exact_match), sum(exact_match), sum(token_f1)), (exact_match, token_f1), config)


def with_intervals(summary: ScoreSummary, exact_match, token_f1, *, n_resamples: int = 10_000,
                   confidence_level: float = 0.95, seed: int = 0) -> ScoreSummary:
    """``summary`` (or a subclass) with percentile bootstrap intervals of its EM and F1 means.

    ``exact_match`` and ``token_f1`` are the per-record scores behind the means (records are
    resampled, :func:`evaluators.metrics.statistics.bootstrap_ci`).  Unchanged when there is
    no record or ``n_resamples`` is 0.

    Parameters
    ----------
    summary : ScoreSummary
        The means; a copy with the intervals is returned.
    exact_match, token_f1 : array-like of float, shape (n,)
        Per-record scores in [0, 1], same records in the same order.
    n_resamples : int
        Bootstrap resamples (0: no interval).
    confidence_level : float
        In (0, 1).
    seed : int
        Seed of the resampling.

    Returns
    -------
    ScoreSummary
        Of the same class, with ``exact_match_ci_low/high``, ``token_f1_ci_low/high`` and ``ci``
        (the interval's signature) set.

    Raises
    ------
    ValueError
        Non-finite scores or a level outside (0, 1) (:func:`~evaluators.metrics.statistics.bootstrap_ci`).

    References
    ----------
    Efron & Tibshirani (1993), ch. 13 (percentile interval).
    """
    if not n_resamples or not len(exact_match):
        return summary
    settings = {"n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed, "unit": "record"}
    em, f1 = bootstrap_ci(exact_match, **settings), bootstrap_ci(token_f1, **settings)
    return dataclasses.replace(summary, exact_match_ci_low=em.ci_low, exact_match_ci_high=em.ci_high,
                               token_f1_ci_low=f1.ci_low, token_f1_ci_high=f1.ci_high, ci=em.signature)


def signature(task: str, script: str | None = None) -> str:
    """Signature string of a QA or fact-check evaluation (with the script conversion of QA, if any).

    Parameters
    ----------
    task : {"qa", "factcheck"}
        The detected or chosen task.
    script : str, optional
        OpenCC configuration of a QA run (named in the signature).

    Returns
    -------
    str
        EvalBoard's version and the scoring rules (SQuAD v1.1 and CMRC 2018 with NLTK's version for
        QA; verdict normalization and classification for fact-check).
    """
    if task == "factcheck":
        return f"evalboard {__version__}; factcheck: {verdicts.SIGNATURE}; {CLASSIFICATION_SIGNATURE}; EM=F1=verdict match"
    text = f"evalboard {__version__}; qa: en={OFFICIAL['en'].signature}; zh={OFFICIAL['zh'].signature}; {AGGREGATION}"
    if script:
        from evaluators.text.provenance import script_label

        text += f"; script={script_label(script)}"
    return text


def text_provenance(config: QAConfig) -> dict[str, dict]:
    """How a QA run's text is cut: ``{"qa": <the EM/F1 tokenization>, "jieba": <the run's jieba setup>}``.

    ``qa`` is the CMRC 2018 / SQuAD tokenization of the EM and F1 columns (NLTK for non-Chinese
    runs); ``jieba`` is the jieba setup of the run's word-level numbers (``sensitivity``):
    version, the dictionary's and user dictionary's SHA-256, HMM off.  Both name the script
    conversion.  Digests are computed once per file.

    Parameters
    ----------
    config : QAConfig
        Its ``script`` and jieba settings are read.

    Returns
    -------
    dict of str to dict
        ``{"qa": ..., "jieba": ...}``, each a :class:`~evaluators.text.provenance.TextProvenance`
        as a dict.
    """
    from evaluators.text.provenance import JiebaSetup, TextProvenance, script_label

    qa = TextProvenance(tokenizer="cmrc2018+squad", package="nltk", version=cmrc._nltk_version(), nfkc=False,
                        case="lower", punctuation="cmrc2018 symbol list (zh) / ASCII punctuation (en) removed",
                        script=script_label(config.script))
    jieba = JiebaSetup(user_dict=config.user_dict).provenance(config.script)
    return {"qa": qa.to_dict(), "jieba": jieba.to_dict()}  # provenance() names the stop-word digest itself


@dataclass
class _Block:
    """What :func:`_score_block` gives back for a block of lines: columns for the store, ids, field counts,
    issues and the rendered rows."""

    offsets: list[int]
    lengths: list[int]
    lines: list[int]
    exact_match: Sequence[float | None]
    token_f1: Sequence[float | None]
    status: Sequence[str]
    lang: Sequence[str | None]
    gold_verdict: Sequence[str | None]
    predicted_verdict: Sequence[str | None]
    group: Sequence[str | None]
    special: dict[str, list[str]]
    gt_used: Counter[str]
    pred_used: Counter[str]
    issues: list[InputIssue]
    text: bytes | None
    id_keys: list[int]
    first_index: int
    skipped: int
    spilled: tuple[str, int, int] | None = None


def _read_range(path: str | Path, offset: int, size: int) -> bytes:
    """``size`` bytes of the file ``path`` from ``offset``."""
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(size)


def _score_block(scorer: Scorer | Inherited, render: Callable[[list[tuple], str], bytes] | None, signature_text: str,
                 file: str, key: Callable[[tuple], int], spill: tuple[str, int] | None, payload: tuple) -> _Block:
    """Parse, score (and render) a block of UTF-8 JSONL lines, in this process or in a worker.

    ``payload``: ``(block, offset, size, first_line, first_index, path)``, the block's bytes (``None``:
    read ``size`` bytes from ``offset`` of the file ``path``), its offset in the input, the number of its
    first line and the position among the input's records of its first record.  ``key`` maps
    ``(group, id)`` to the integer that finds repeated ids (``hash``, as :func:`_id_key`, or
    :func:`_portable_id_key`).  Lines, offsets and issues are the input's; the rows are rendered in
    blocks, as :func:`evaluate_records` renders them.  With ``spill = (folder, pid)``, a process other
    than ``pid`` (a worker) appends the rows to a file of its own in the folder and the block says
    where (``spilled``) instead of carrying them.
    """
    block, base, size, first_line, first_index, path = payload
    if block is None:
        block = _read_range(path, base, size)
    if isinstance(scorer, Inherited):  # a worker's own scorer, its memo kept from block to block
        scorer = scorer()
    with gc_paused():  # thousands of records alive at once, none in a reference cycle: no collection traverses them
        part = _scored_block(scorer, render, signature_text, file, key, block, base, first_line, first_index)
    if spill is not None and part.text and spill[1] != os.getpid():
        out = _SPILLS.get(spill[0])
        if out is None:
            out = _SPILLS[spill[0]] = open(os.path.join(spill[0], f"{os.getpid()}.rows"), "ab")
        offset = out.tell()
        out.write(part.text)
        out.flush()  # read by the parent as soon as it has this block
        part.spilled, part.text = (out.name, offset, len(part.text)), None
    return part


#: Files that this process appends rendered rows to, by folder (see :func:`_score_block`).
_SPILLS: dict[str, BinaryIO] = {}


def _scored_block(scorer: Scorer, render: Callable[[list[tuple], str], bytes] | None, signature_text: str,
                  file: str, key: Callable[[tuple], int], block: bytes, base: int, first_line: int,
                  first_index: int) -> _Block:
    """The body of :func:`_score_block`."""
    datas, lines, offsets, lengths, issues = jsonl_block(block, file, first_line=first_line, base=base)
    values = scorer.values
    ask_question = render is not None
    rows = [values(d, i, ln, ask_question) for i, d, ln in zip(range(first_index, first_index + len(datas)), datas,
                                                                lines)]
    del datas
    n_lines = block.count(b"\n") + (1 if block and block[-1:] != b"\n" else 0)
    cols: list[Sequence] = list(zip(*rows)) if rows else [()] * len(dataclasses.fields(QARecordResult))
    ids, groups, gold_fields, pred_fields, statuses, pred_vs = cols[2], cols[3], cols[6], cols[8], cols[10], cols[16]
    special = _special_lists()
    if statuses.count(STATUS_SCORED) != len(statuses):
        for rid, status in zip(ids, statuses):
            if status != STATUS_SCORED:
                special[status].append(rid)
    unparsed = verdicts.UNPARSED
    if unparsed in pred_vs:
        special["unparsed_predictions"] = [rid for rid, status, pv in zip(ids, statuses, pred_vs)
                                           if status == STATUS_SCORED and pv == unparsed]
    gt_used, pred_used = Counter(gold_fields), Counter(pred_fields)
    for counter in (gt_used, pred_used):
        counter.pop(None, None)
        counter.pop("", None)
    text = render(rows, signature_text) if render is not None else None
    n_records = len(rows)
    del rows
    return _Block(offsets, lengths, lines, cols[13], cols[14], statuses, cols[11], cols[15], pred_vs, groups,
                  special, gt_used, pred_used, issues, text, list(map(key, zip(groups, ids))), first_index,
                  n_lines - n_records)


def _id_key(rid: str, group: str | None) -> int:
    """Integer of a record's (group, id) that finds repeated ids (equal ids, equal keys): Python's hash.

    The same in this process and in workers forked from it (they inherit the hash seed);
    :func:`_portable_id_key` for workers started afresh.
    """
    return hash((group, rid))


def _portable_id_key(group_id: tuple[str | None, str]) -> int:
    """:func:`_id_key` of ``(group, id)`` as CRC-32, the same in every process (workers not forked)."""
    group, rid = group_id
    return zlib.crc32(f"{group}\x00{rid}".encode("utf-8", "surrogatepass"))


#: Repeated record ids reported one by one (the rest are counted in one more warning).
REPEATED_IDS_LISTED = 20


def _repeated_ids(store: RecordStore, keys: array, file: str, group_field: str | None) -> list[InputIssue]:
    """A located warning per record id that stands more than once (within one group, with a group field).

    Records are all scored; comparisons of runs pair by id and keep an id's first record.
    Candidates come from equal hashes; their ids are read back to rule out collisions.
    """
    if len(keys) < 2:
        return []
    codes = np.frombuffer(keys, dtype=np.int64)
    _, inverse, counts = np.unique(codes, return_inverse=True, return_counts=True)
    candidates = np.flatnonzero(counts[inverse] > 1).tolist()
    if not candidates:
        return []
    seen: dict[tuple[str | None, str], list[QARecordResult]] = {}
    for i in candidates:
        r = store[i]
        seen.setdefault((r.group, r.id), []).append(r)
    repeated = [(key, rs) for key, rs in seen.items() if len(rs) > 1]
    repeated.sort(key=lambda item: item[1][1].index)  # by where the id comes back first
    out = []
    for (group, rid), rs in repeated[:REPEATED_IDS_LISTED]:
        where = ", ".join(f"line {r.line}" if r.line is not None else f"record {r.index + 1}" for r in rs)
        scope = f" in {group_field} {group!r}" if group_field and group is not None else ""
        second = rs[1]
        out.append(InputIssue(file, f"record id {rid!r} stands {len(rs)} times{scope} ({where}): every record is "
                              "scored; comparisons pair records by id and keep the first",
                              line=second.line, severity="warning", kind="duplicate"))
    if len(repeated) > REPEATED_IDS_LISTED:
        out.append(InputIssue(file, f"{len(repeated) - REPEATED_IDS_LISTED} more record id(s) stand more than once",
                              severity="warning", kind="duplicate"))
    return out


def _count(rid: str, status: str, pred_v: str | None, gold_field: str | None, pred_field: str | None,
           special: dict[str, list[str]], gt_used: Counter[str], pred_used: Counter[str]) -> None:
    """Book one scored record: the id lists of the report and the field counts."""
    if pred_field:
        pred_used[pred_field] += 1
    if gold_field:
        gt_used[gold_field] += 1
    if status != STATUS_SCORED:
        special[status].append(rid)
    elif pred_v == verdicts.UNPARSED:
        special["unparsed_predictions"].append(rid)


#: Records looked at to detect the task and the group field of a streamed file (a
#: :class:`~evaluators.io.RecordSet`, already in memory, is looked at whole).
DETECTION_SAMPLE = 2000


def verdict_classification(pairs: Sequence[tuple[str, str]], config: QAConfig):
    """The fact-check confusion matrix and per-class table of ``(gold, predicted)`` verdict pairs, with
    multinomial bootstrap intervals when ``config.ci_resamples`` asks for them.

    The labels are T / F / uncertain (the averaged ones), plus ``unparsed`` when a prediction has it.

    Parameters
    ----------
    pairs : sequence of (str, str)
        ``(gold verdict, predicted verdict)`` per scored record, normalized labels.
    config : QAConfig
        ``ci_resamples`` (0: no intervals), ``ci_level``, ``ci_seed``.

    Returns
    -------
    (ClassificationReport, intervals or None)
        The report (rows true, columns predicted; macro averages over T / F / uncertain) and the
        multinomial bootstrap intervals of its figures, ``None`` when not asked for or no pair.
    """
    labels = list(verdicts.VERDICTS) + ([verdicts.UNPARSED] if any(p == verdicts.UNPARSED for _, p in pairs) else [])
    classification = classification_report([t for t, _ in pairs], [p for _, p in pairs], labels,
                                           average_labels=verdicts.VERDICTS)
    intervals = None
    if config.ci_resamples and classification.n and not classification.n_outside_labels:
        intervals = classification_intervals(
            classification.counts, classification.labels, classification.average_labels,
            n_resamples=config.ci_resamples, confidence_level=config.ci_level, seed=config.ci_seed)
    return classification, intervals


def evaluate_records(
    records: RecordSet | Iterable[Record | InputIssue],
    config: QAConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    file: str | None = None,
    total: int | None = None,
    reader: Callable[[int, int], bytes] | None = None,
    workers: int = 1,
    rows: RowSink | None = None,
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
    rows : RowSink, optional
        Receives each record's rendered row as it is scored (in input order), so a writer
        streams instead of materialising every record after the report.

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
        stream: Iterator[Any] = iter(records.records)
        sample_size = max(1, total)
    else:
        issues, stream = [], iter(records)
        sample_size = DETECTION_SAMPLE
    head: list[tuple] = []  # (data, line, index, raw, offset) of the first records
    for item in stream:
        if isinstance(item, InputIssue):
            issues.append(item)
            continue
        head.append(item if type(item) is tuple else (item.data, item.line, item.index, item.raw, item.offset))
        if len(head) >= sample_size:
            break
    task, reason, sampled, group_field = _decide([r[0] for r in head], config)
    gt_used: Counter[str] = Counter()
    pred_used: Counter[str] = Counter()
    scorer = Scorer(task, config, group_field)
    store = RecordStore(scorer.record, reader)
    special = _special_lists()
    sig = signature(task, config.script)
    render, write = (rows.render, rows.write) if rows is not None else (None, None)
    total = total or 0

    def items() -> Iterator[tuple]:  # issues are collected here, records go on to be scored as tuples
        yield from head
        for item in stream:
            if type(item) is tuple:
                yield item
            elif isinstance(item, InputIssue):
                issues.append(item)
            else:
                yield item.data, item.line, item.index, item.raw, item.offset

    append = store.append_values
    unparsed = verdicts.UNPARSED
    done = 0
    id_keys = array("q")  # a hash of each record's (group, id), to find repeated ids at the end

    def score_here(records: Iterable[tuple]) -> None:
        """Score records in this process, rows rendered in blocks."""
        nonlocal done
        values = scorer.values
        ask_question = render is not None
        pending: list[tuple] = []  # values of the records not yet rendered
        cols: tuple[list, ...] = tuple([] for _ in range(10))  # lines kept by offset: the store's columns, batched
        offsets, lengths, lines, ems, f1s, statuses, langs, gold_vs, pred_vs, groups = cols

        def flush() -> None:
            if offsets:
                store.extend_lines(*cols)
                for c in cols:
                    c.clear()

        for data, line, index, raw, offset in records:
            v = values(data, index, line, ask_question or raw is None)
            rid, group, gold_field, pred_field, status = v[2], v[3], v[6], v[8], v[10]
            id_keys.append(_id_key(rid, group))
            if raw is None:  # records read whole are kept whole
                flush()
                store.append(QARecordResult(*v))
            elif offset is not None and reader is not None:
                offsets.append(offset)
                lengths.append(len(raw))
                lines.append(line)
                ems.append(v[13])
                f1s.append(v[14])
                statuses.append(status)
                langs.append(v[11])
                gold_vs.append(v[15])
                pred_vs.append(v[16])
                groups.append(group)
                if len(offsets) >= ROWS_PER_WRITE:
                    flush()
            else:
                flush()
                append(raw, offset, line, v[13], v[14], status, v[11], v[15], v[16], group)
            if pred_field:
                pred_used[pred_field] += 1
            if gold_field:
                gt_used[gold_field] += 1
            if status != STATUS_SCORED:
                special[status].append(rid)
            elif v[16] == unparsed:
                special["unparsed_predictions"].append(rid)
            if render is not None:
                pending.append(v)
                if len(pending) >= ROWS_PER_WRITE:
                    write(render(pending, sig))
                    pending = []
            done += 1
            if progress is not None and done % 250 == 0:
                progress(done, total)
        flush()
        if pending:
            write(render(pending, sig))

    if workers <= 1:
        score_here(items())
    else:
        work = partial(_score_chunk, scorer, render, sig)
        for chunk, (compact, text) in imap_chunks(work, chunked(items(), CHUNK_RECORDS), workers,
                                                  payload=lambda chunk: (chunk[0][3] is None,
                                                                         [(d, i, ln) for d, ln, i, _, _ in chunk])):
            for (_, _, _, raw, offset), c in zip(chunk, compact):
                if raw is None:  # records read whole are kept whole (all their values came back)
                    store.append(QARecordResult(*c))
                    c = _compact(c)
                line, rid, group, status, lang, em, f1, gold_v, pred_v, gold_field, pred_field = c
                id_keys.append(_id_key(rid, group))
                if raw is not None:
                    append(raw, offset, line, em, f1, status, lang, gold_v, pred_v, group)
                _count(rid, status, pred_v, gold_field, pred_field, special, gt_used, pred_used)
            if text is not None:
                write(text)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    n_sample = len(head)
    head.clear()
    return _finish(file or "<input>", config, task, reason, sampled, n_sample, group_field, store, id_keys, special,
                   gt_used, pred_used, issues, progress, total)


def _decide(sample: Sequence[Mapping[str, Any]], config: QAConfig) -> tuple[str, str, bool, str | None]:
    """``(task, reason, sampled, group_field)`` decided on the records ``sample`` (see :func:`evaluate_records`).

    ``sampled``: whether the reason counts records (then said to be a sample when the file is longer).
    """
    if config.task == "auto":
        task, reason = detect_task(sample, config.dataset, config.gt_fields)
        sampled = not reason.startswith("dataset name")
    else:
        task, reason, sampled = config.task, "set by the user", False
    return task, reason, sampled, pick_group_field(sample, config.group_field)


def _special_lists() -> dict[str, list[str]]:
    """The report's lists of record ids by situation, empty."""
    return {STATUS_MISSING_GT: [], STATUS_MISSING_PREDICTION: [], STATUS_GOLD_UNPARSED: [], "unparsed_predictions": []}


def _finish(file: str, config: QAConfig, task: str, reason: str, sampled: bool, n_sample: int,
            group_field: str | None, store: RecordStore, id_keys: array, special: dict[str, list[str]],
            gt_used: Counter[str], pred_used: Counter[str], issues: list[InputIssue],
            progress: Callable[[int, int], None] | None, total: int) -> QAReport:
    """The report of scored records: repeated ids, the classification, the aggregates and their intervals."""
    if progress is not None:
        progress(len(store), total or len(store))
    issues.extend(_repeated_ids(store, id_keys, file, group_field))
    if sampled and len(store) > n_sample:
        reason += f" (in a sample: the first {n_sample:,} of {len(store):,} records)"

    classification = None
    classification_ci = None
    if task == "factcheck":
        status = store.column("status")
        gold, pred = store.column("gold_verdict"), store.column("predicted_verdict")
        classification, classification_ci = verdict_classification(
            [(g, p) for s, g, p in zip(status, gold, pred) if s in (STATUS_SCORED, STATUS_MISSING_PREDICTION)], config)
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
        missing_gt=tuple(special[STATUS_MISSING_GT]),
        missing_prediction=tuple(special[STATUS_MISSING_PREDICTION]),
        gold_unparsed=tuple(special[STATUS_GOLD_UNPARSED]),
        unparsed_predictions=tuple(special["unparsed_predictions"]),
        classification=classification,
        gt_fields_used=dict(gt_used),
        pred_fields_used=dict(pred_used),
        issues=tuple(issues),
        signature=signature(task, config.script),
        records=store,
        classification_ci=classification_ci,
        provenance=text_provenance(config),
    )


_FIELDS = tuple(f.name for f in dataclasses.fields(QARecordResult))


def report_of_results(results: Iterable[QARecordResult] | Iterable[tuple[Sequence, bytes]], config: QAConfig, *,
                      file: str, task: str, reason: str, sampled: bool, n_sample: int, group_field: str | None,
                      issues: Iterable[InputIssue] = (),
                      rescore: Callable[[Any, int, int | None], QARecordResult] | None = None) -> QAReport:
    """The report of records scored elsewhere (the shards of a run, pooled): what :func:`evaluate_records` gives.

    The records are booked as :func:`evaluate_records` books them, then :func:`_finish` computes every aggregate
    and interval once, so the report equals the single-process one when the records, the reading problems and the
    decision (task, group field, detection sample) are the whole input's.

    Parameters
    ----------
    results : iterable of QARecordResult, or of (values, raw)
        Every record of the input, in input order (by ``index``): whole results, or with ``rescore`` each
        record's values (the fields of QARecordResult in order) and a UTF-8 JSON text the store keeps instead of
        the record (a record of a million is then a few hundred bytes, not Python objects).
    config : QAConfig
        The settings every record was scored with.
    file : str
        The input's name.
    task, reason : str
        The task and why (decided once on the whole input, :func:`_decide`).
    sampled : bool
        Whether ``reason`` counts the records of a detection sample.
    n_sample : int
        Records in the detection sample.
    group_field : str or None
        The group field decided on the whole input.
    issues : iterable of InputIssue
        The input's reading problems, in input order.
    rescore : callable, optional
        ``rescore(parsed raw, index, line) -> QARecordResult``: the record back from its kept text.

    Returns
    -------
    QAReport
    """
    store = RecordStore(rescore or Scorer(task, config, group_field).record)
    special = _special_lists()
    gt_used: Counter[str] = Counter()
    pred_used: Counter[str] = Counter()
    id_keys = array("q")
    for item in results:
        if rescore is None:
            store.append(item)
            v = tuple(getattr(item, name) for name in _FIELDS)
        else:
            v, raw = item
            store.append_values(raw, None, v[1], v[13], v[14], v[10], v[11], v[15], v[16], v[3])
        id_keys.append(_id_key(v[2], v[3]))
        _count(v[2], v[10], v[16], v[6], v[8], special, gt_used, pred_used)
    return _finish(file, config, task, reason, sampled, n_sample, group_field, store, id_keys, special, gt_used,
                   pred_used, list(issues), None, 0)


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
    return Scorer(task, config or QAConfig(), group_field).record(data, index, line)


#: Records per chunk sent to a worker process (``workers > 1``).
CHUNK_RECORDS = 2000

#: (prediction, gold answers) pairs whose scores a :class:`Scorer` remembers (then it starts afresh).
MEMO_PAIRS = 100_000

_ABSENT = object()
_ORIGINAL_ROW = "original_row"


def _spec(name: str) -> tuple[str, str | None, str | None]:
    """``(name, head, rest)`` of a field name (``head``/``rest`` split at the first dot, else None)."""
    if "." not in name:
        return name, None, None
    head, rest = name.split(".", 1)
    return name, head, rest


class Scorer:
    """Scores records of one file: the task, settings and group field fixed, field names split once.

    :meth:`values` is the one per-record computation: :meth:`record` builds a
    :class:`QARecordResult` from it, and a streamed file keeps only the compact columns it
    gives (a record is re-derived later by :meth:`record`, from the same values).  Picklable:
    worker processes get one per chunk.

    The field lookups give exactly what :func:`~evaluators.qa.fields.resolve`,
    :func:`~evaluators.qa.fields.text_field` and :func:`_prediction` give (tested).
    """

    def __init__(self, task: str, config: QAConfig, group_field: str | None):
        self.task, self.config, self.group_field = task, config, group_field
        self._gt = [_spec(n) for n in config.gt_fields]
        self._pred = [_spec(n) for n in config.pred_fields]
        self._ids = [(n, f"{_ORIGINAL_ROW}.{n}") for n in ID_FIELDS]
        self._questions = [(n, f"{_ORIGINAL_ROW}.{n}") for n in QUESTION_FIELDS]
        self._memo: dict[tuple[str, tuple[str, ...]], tuple[str, float, float]] = {}
        self._plans: dict[tuple, tuple[list, list, list, list]] = {}

    def __getstate__(self) -> dict:  # a worker starts with an empty memo
        return {**self.__dict__, "_memo": {}, "_plans": {}}

    def _plan(self, record: Mapping[str, Any]) -> tuple[list, list, list, list]:
        """The field names that can hold a value in records with ``record``'s keys (a record's shape).

        A name can only be found when it is a key, or its head (``original_row`` of
        ``original_row.label``) is; records of one file share a few shapes, so the names are
        narrowed once per shape, in priority order: the lookups then skip absent fields.
        """
        shape = tuple(record)
        plan = self._plans.get(shape)
        if plan is None:
            keys = set(shape)
            has_row = _ORIGINAL_ROW in keys
            plan = ([x for x in self._gt if x[0] in keys or (x[1] is not None and x[1] in keys)],
                    [x for x in self._pred if x[0] in keys or (x[1] is not None and x[1] in keys)],
                    [x for x in self._ids if x[0] in keys or x[1] in keys or has_row],
                    [x for x in self._questions if x[0] in keys or x[1] in keys or has_row])
            if len(self._plans) >= 1000:
                self._plans.clear()
            self._plans[shape] = plan
        return plan

    @staticmethod
    def _text(record: Mapping[str, Any], names: list[tuple[str, str]], allow_numbers: bool) -> str | None:
        """:func:`~evaluators.qa.fields.text_field` over names without dots."""
        inner = record.get(_ORIGINAL_ROW)
        if inner is not None and not isinstance(inner, Mapping):
            inner = None
        for name, dotted in names:
            value = record.get(name)
            if value is not None:
                if isinstance(value, str):
                    if value.strip():
                        return value
                elif allow_numbers and isinstance(value, int) and not isinstance(value, bool):
                    return str(value)
            value = record[dotted] if dotted in record else inner.get(name) if inner is not None else None
            if value is not None:
                if isinstance(value, str):
                    if value.strip():
                        return value
                elif allow_numbers and isinstance(value, int) and not isinstance(value, bool):
                    return str(value)
        return None

    def _gold(self, record: Mapping[str, Any], specs: list | None = None) -> tuple[str, Any, tuple[str, ...]] | None:
        """:func:`~evaluators.qa.fields.resolve` as ``(field, raw, texts)``."""
        for name, head, rest in self._gt if specs is None else specs:
            value = record.get(name, _ABSENT)
            if value is _ABSENT:
                if head is None:
                    continue
                inner = record.get(head)
                if inner is None or not isinstance(inner, Mapping):
                    continue
                value = get_path(inner, rest)
            if value is None:
                continue
            if type(value) is str:
                stripped = value.strip()
                if not stripped:
                    continue
                if not (stripped[0] == "[" and stripped[-1] == "]"):
                    return name, value, (value,)
            elif is_empty(value):
                continue
            texts = answer_texts(value, name)
            if texts:
                return name, value, texts
        return None

    def _prediction(self, record: Mapping[str, Any], specs: list | None = None) -> tuple[str | None, str | None, Any]:
        """:func:`_prediction` with the field names split once."""
        for name, head, rest in self._pred if specs is None else specs:
            value = record.get(name, _ABSENT)
            if value is _ABSENT:
                if head is None:
                    continue
                inner = record.get(head)
                if inner is None or not isinstance(inner, Mapping):
                    continue
                value = get_path(inner, rest)
            if value is None or (isinstance(value, float) and value != value):
                continue
            if type(value) is str:
                if not value.strip():
                    continue
                return name, value, value
            if isinstance(value, list):
                value = next((v for v in value if isinstance(v, str) and v.strip()), None)
                if value is None:
                    continue
            return name, str(value), value
        return None, None, None

    def _scores(self, prediction: str, texts: tuple[str, ...], missing: bool) -> tuple[str, float, float]:
        """``(lang, EM, F1)`` of a QA prediction against its gold answers, remembered for repeated pairs."""
        key = (prediction, texts)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if missing:
            hit = (official_lang(prediction, texts, self.config.lang), 0.0, 0.0)
        else:
            hit = official_scores(prediction, texts, self.config.lang, self.config.script)
        if len(self._memo) >= MEMO_PAIRS:
            self._memo.clear()
        self._memo[key] = hit
        return hit

    def values(self, data: Mapping[str, Any], index: int, line: int | None, question: bool = True) -> tuple:
        """The values of a :class:`QARecordResult`, in field order (``question`` None unless asked for).

        Parameters
        ----------
        data : mapping
            One parsed record.
        index : int
            Its 0-based position among the file's records.
        line : int or None
            Its 1-based line in the file (JSONL, CSV), ``None`` when it has none.
        question : bool
            Read the question text too (pages and writers need it; aggregates do not).

        Returns
        -------
        tuple
            The 18 fields of :class:`QARecordResult` in order; a record without ground truth has
            status ``missing_gt`` and no score.
        """
        gt_specs, pred_specs, id_names, q_names = self._plan(data)
        group, rid = self._key(data, id_names, index, line)
        q = self._text(data, q_names, False) if question and q_names else None
        gold = self._gold(data, gt_specs)
        pred_field, pred_raw, pred_value = self._prediction(data, pred_specs)
        prediction = verdicts.extract_answer(pred_raw) if pred_raw is not None else ""
        if gold is None:
            return (index, line, rid, group, q, (), None, pred_raw, pred_field, prediction, STATUS_MISSING_GT,
                    None, None, None, None, None, None, None)
        gold_field, gold_raw, texts = gold
        missing = not prediction.strip()
        status = STATUS_MISSING_PREDICTION if missing else STATUS_SCORED
        if self.task == "factcheck":
            gold_v = verdicts.normalize_verdict(gold_raw if not isinstance(gold_raw, (list, dict)) else texts[0])
            pred_v = verdicts.normalize_verdict(pred_value if pred_value is not None else None)
            if gold_v.label == verdicts.UNPARSED:
                return (index, line, rid, group, q, texts, gold_field, pred_raw, pred_field, prediction,
                        STATUS_GOLD_UNPARSED, None, "verdict", None, None, gold_v.label, pred_v.label, pred_v.rule)
            hit = 1.0 if pred_v.label == gold_v.label else 0.0
            return (index, line, rid, group, q, texts, gold_field, pred_raw, pred_field, prediction, status, None,
                    "verdict", hit, hit, gold_v.label, pred_v.label, pred_v.rule)
        lang, em, f1 = self._scores(prediction, texts, missing)
        return (index, line, rid, group, q, texts, gold_field, pred_raw, pred_field, prediction, status, lang,
                OFFICIAL[lang].tokenizer, em, f1, None, None, None)

    def key(self, data: Mapping[str, Any], index: int, line: int | None) -> tuple[str | None, str]:
        """``(group, id)`` of one record, as :meth:`values` finds them (without scoring it): a shard's item key.

        Parameters
        ----------
        data : mapping
            One parsed record.
        index : int
            Its 0-based position among the file's records.
        line : int or None
            Its 1-based line in the file, if any.
        """
        return self._key(data, self._plan(data)[2], index, line)

    def _key(self, data: Mapping[str, Any], id_names, index: int, line: int | None) -> tuple[str | None, str]:
        """``(group, id)`` of a record (the one rule of :meth:`values` and :meth:`key`): its id field, else
        ``#line`` (``#position`` without lines); its group field's value (interned: few distinct values), ``None``
        when blank or absent."""
        rid = self._text(data, id_names, True) if id_names else None
        rid = rid.strip() if rid is not None else f"#{line if line is not None else index + 1}"
        group = None
        if self.group_field:
            g = data.get(self.group_field)
            if g is not None:
                g = g if type(g) is str else str(g)
                group = sys.intern(g) if g.strip() else None
        return group, rid

    def record(self, data: Mapping[str, Any], index: int, line: int | None) -> QARecordResult:
        """The full :class:`QARecordResult` of one record.

        Parameters
        ----------
        data : mapping
            One parsed record.
        index : int
            Its 0-based position among the records.
        line : int or None
            Its 1-based line in the file, if any.

        Returns
        -------
        QARecordResult
        """
        return QARecordResult(*self.values(data, index, line))


@dataclass(frozen=True)
class RowSink:
    """Where per-record rows go while a file is scored (a streaming writer), in input order.

    Attributes
    ----------
    render : callable
        ``render(values, signature) -> bytes``: the UTF-8 text of the rows of consecutive
        records, each given as the values of a :class:`QARecordResult` in field order (a
        tuple).  It runs in the worker processes when there are several, so it must be
        picklable (a module-level function).
    write : callable
        ``write(data)``: called in this process with the rendered rows, in input order.
    indexed : bool
        Whether the rows show a record's ``index`` (its position among the records): a block
        rendered in a worker from a wrong guess of its first position is then rendered again.
    write_range : callable, optional
        ``write_range(path, offset, length)``: like ``write``, for rows that a worker process
        wrote to a file of its own (the bytes from ``offset`` of the file ``path``); the file is
        removed once the input is scored.  Without it, workers send their rows back.
    reset : callable, optional
        ``reset()``: forget the rows written so far (a JSONL input read as UTF-8 turned out not to
        be, and is read again).  Without it, the whole input's encoding is checked before any row.
    """

    render: Callable[[list[tuple], str], bytes]
    write: Callable[[bytes], None]
    indexed: bool = False
    write_range: Callable[[str, int, int], None] | None = None
    reset: Callable[[], None] | None = None


#: Records rendered at once by a :class:`RowSink` in one process (rows are written in blocks of this many).
ROWS_PER_WRITE = 1000


#: Positions in :meth:`Scorer.values` of what the compact store and the aggregates keep.
_I_LINE, _I_ID, _I_GROUP, _I_GOLD_FIELD, _I_PRED_FIELD, _I_STATUS, _I_LANG = 1, 2, 3, 6, 8, 10, 11
_I_EM, _I_F1, _I_GOLD_V, _I_PRED_V = 13, 14, 15, 16


def _compact(v: tuple) -> tuple:
    """What the store keeps of a record's values (line, id, group, status, lang, EM, F1, verdicts, fields)."""
    return (v[_I_LINE], v[_I_ID], v[_I_GROUP], v[_I_STATUS], v[_I_LANG], v[_I_EM], v[_I_F1], v[_I_GOLD_V],
            v[_I_PRED_V], v[_I_GOLD_FIELD], v[_I_PRED_FIELD])


def _score_chunk(scorer: Scorer, render: Callable[[list[tuple], str], bytes] | None, signature_text: str,
                 payload: tuple[bool, list[tuple[Mapping[str, Any], int, int | None]]]
                 ) -> tuple[list[tuple], bytes | None]:
    """A chunk of ``(data, index, line)`` scored in a worker.

    Returns the compact values of each record (all its values when ``payload[0]`` asks for
    whole records), and the rows' text when rendering.
    """
    full, items = payload
    need_all = full or render is not None
    values = [scorer.values(d, i, ln, need_all) for d, i, ln in items]
    text = render(values, signature_text) if render is not None else None
    return (values if full else [_compact(v) for v in values]), text


def evaluate_source(source: QASource, config: QAConfig | None = None, *,
                    progress: Callable[[int, int], None] | None = None, workers: int = 1,
                    rows: RowSink | None = None) -> QAReport:
    """Score an input read once by :func:`evaluators.qa.records.open_qa_source` (records, not bytes).

    A JSONL file on disk or in bytes is scored block by block (:func:`evaluate_blocks`); other
    inputs record by record (:func:`evaluate_records`).  The report is the same either way.

    Parameters
    ----------
    source : QASource
        The opened input.
    config : QAConfig, optional
        Default ``QAConfig()``.
    progress : callable, optional
        ``progress(done, total)`` in records.
    workers : int
        Worker processes (1: this process); the report does not depend on it.
    rows : RowSink, optional
        Where per-record rows are written while scoring (streaming writers).

    Returns
    -------
    QAReport

    Raises
    ------
    InputError
        An input that is neither UTF-8 nor GB18030.
    """
    if source.streamed and source.opener is not None and source.blocks is not None and source.reader is not None:
        return evaluate_blocks(source, config, progress=progress, workers=workers, rows=rows)
    if source.streamed:
        return evaluate_records(source.records, config, progress, file=source.file, total=source.total,
                                reader=source.reader, workers=workers, rows=rows)
    return evaluate_records(source.records, config, progress, workers=workers, rows=rows)


def _jsonl_stream(opener: Callable[[], BinaryIO], file: str, encoding: str, **kwargs) -> Iterator[tuple | InputIssue]:
    """:func:`~evaluators.io.readers.iter_jsonl_values` over the opened input (closed at the end)."""
    with opener() as f:
        yield from iter_jsonl_values(f, file, encoding=encoding, **kwargs)


def evaluate_blocks(source: QASource, config: QAConfig | None = None, *,
                    progress: Callable[[int, int], None] | None = None, workers: int = 1,
                    rows: RowSink | None = None) -> QAReport:
    """Score a JSONL input (:attr:`QASource.opener` and :attr:`QASource.blocks`) in blocks of whole lines.

    The input is read as UTF-8 (with a BOM, UTF-8-SIG), each line checked as it is parsed; should a
    line not be UTF-8, what was scored is dropped (``rows.reset``) and the whole input's encoding is
    decided first (:func:`~evaluators.io.readers.detect_encoding`: the same rule as for other
    inputs).  The task and the group field are decided on
    the first :data:`DETECTION_SAMPLE` records; then every block of lines (about
    :data:`evaluators.qa.records.BLOCK_BYTES`) is parsed, scored and rendered by one function
    (:func:`_score_block`), in this process or, with ``workers > 1``, in worker processes forked
    from it that read their blocks from the file themselves; the results come back in input order
    and are merged here (a few columns per record; the rendered rows are written as they come).
    The report, and the rows, are the same for any worker count and the same as
    :func:`evaluate_records` gives for the stream of the same input.  An input that is not UTF-8
    (GB18030) is scored record by record by :func:`evaluate_records`.

    Parameters
    ----------
    source : QASource
        A JSONL input with ``opener`` and ``blocks``.
    config : QAConfig, optional
        Default ``QAConfig()``.
    progress : callable, optional
        ``progress(done, total)``.
    workers : int
        Worker processes forked from this one (1: none).
    rows : RowSink, optional
        Where the rendered rows go, in input order.

    Returns
    -------
    QAReport

    Raises
    ------
    InputError
        When the input is neither UTF-8 nor GB18030.
    """
    config = config or QAConfig()
    file = source.file
    if rows is None or rows.reset is not None:
        with source.opener() as f:
            bom = 3 if f.read(3) == b"\xef\xbb\xbf" else 0
        try:
            return _evaluate_utf8(source, config, "utf-8-sig" if bom else "utf-8", bom, progress, workers, rows)
        except UnicodeDecodeError:  # not UTF-8 after all: decided on the whole input, read again
            if rows is not None:
                rows.reset()
    with source.opener() as f:
        encoding, bom = detect_encoding(f, file)
    if encoding == "gb18030":  # lines are decoded and re-encoded: no offsets, record by record
        return evaluate_records(_jsonl_stream(source.opener, file, encoding), config, progress, file=file,
                                total=source.total, reader=source.reader, workers=workers, rows=rows)
    return _evaluate_utf8(source, config, encoding, bom, progress, workers, rows)


def _evaluate_utf8(source: QASource, config: QAConfig, encoding: str, bom: int,
                   progress: Callable[[int, int], None] | None, workers: int, rows: RowSink | None) -> QAReport:
    """:func:`evaluate_blocks` of an input read as UTF-8 (``encoding``: ``utf-8`` or ``utf-8-sig``, with a
    ``bom`` of 3 bytes); UnicodeDecodeError when a line is not UTF-8."""
    file = source.file
    sample: list[dict] = []
    head = _jsonl_stream(source.opener, file, encoding, keep_raw=False)
    for item in head:  # issues here come again from the blocks
        if type(item) is tuple:
            sample.append(item[0])
            if len(sample) >= DETECTION_SAMPLE:
                break
    head.close()
    task, reason, sampled, group_field = _decide(sample, config)
    n_sample = len(sample)
    del sample
    scorer = Scorer(task, config, group_field)
    store = RecordStore(scorer.record, source.reader)
    special = _special_lists()
    gt_used: Counter[str] = Counter()
    pred_used: Counter[str] = Counter()
    issues: list[InputIssue] = []
    id_keys = array("q")
    sig = signature(task, config.script)
    render = rows.render if rows is not None else None
    indexed = rows is not None and rows.indexed
    pool = workers > 1
    key = hash if not pool or forks_workers() else _portable_id_key  # hash((group, id)) is _id_key(id, group)
    # workers of this machine's pool write rows to files of their own (a Dask worker sends them back)
    spills = pool and local_pool() and rows is not None and rows.write_range is not None
    shared = Inherited(scorer) if pool else scorer
    with tempfile.TemporaryDirectory(prefix="evalboard-rows-") if spills else contextlib.nullcontext() as spill:
        work = partial(_score_block, shared, render, sig, file, key, (spill, os.getpid()) if spills else None)
        try:
            _merge_blocks(source, bom, work, workers, indexed, rows, store, issues, id_keys, special, gt_used,
                          pred_used, progress)
        finally:
            if pool:
                shared.close()
    return _finish(file, config, task, reason, sampled, n_sample, group_field, store, id_keys, special, gt_used,
                   pred_used, issues, progress, source.total or 0)


def _merge_blocks(source: QASource, bom: int, work: Callable[[tuple], _Block], workers: int, indexed: bool,
                  rows: RowSink | None, store: RecordStore, issues: list[InputIssue], id_keys: array,
                  special: dict[str, list[str]], gt_used: Counter[str], pred_used: Counter[str],
                  progress: Callable[[int, int], None] | None) -> None:
    """Score the blocks of ``source`` from ``bom`` with ``work`` (in workers when ``workers > 1``) and merge
    them in input order into the store, lists and counts given (see :func:`evaluate_blocks`)."""
    pool = workers > 1
    done = 0
    skipped = 0  # lines that are not records, in the blocks merged so far

    def payloads() -> Iterator[list[tuple]]:
        """One chunk (a list of one payload) per block; the position of its first record is the best guess
        from the blocks merged so far (it is right unless a block still in flight has a line that is not a
        record; the block is then rendered again here)."""
        first_line = 1
        for block, offset in source.blocks(bom):
            # a worker of this machine's pool reads its block from the file; a Dask worker gets the bytes
            send = None if pool and local_pool() and source.path is not None else block
            yield [(send, offset, len(block), first_line, first_line - 1 - skipped, source.path)]
            first_line += block.count(b"\n")

    for (payload,), part in imap_chunks(work, payloads(), workers, payload=lambda chunk: chunk[0]):
        if indexed and part.first_index != done:  # a guess that missed: the block's rows again, numbered
            part = work((payload[0], payload[1], payload[2], payload[3], done, payload[5]))
        issues.extend(part.issues)
        id_keys.extend(part.id_keys)
        store.extend_lines(part.offsets, part.lengths, part.lines, part.exact_match, part.token_f1, part.status,
                           part.lang, part.gold_verdict, part.predicted_verdict, part.group)
        for name, ids in part.special.items():
            special[name].extend(ids)
        gt_used.update(part.gt_used)
        pred_used.update(part.pred_used)
        if part.spilled is not None:
            rows.write_range(*part.spilled)
        elif part.text is not None:
            rows.write(part.text)
        done += len(part.lines)
        skipped += part.skipped
        if progress is not None:
            progress(done, source.total or 0)


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
