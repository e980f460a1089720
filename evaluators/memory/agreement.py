"""Stored judge labels: reading them, agreement with our judge, LongMemEval's accuracy table.

- :func:`load_judge_labels` reads an official judge's output (LongMemEval's
  ``*.eval-results-<model>`` JSONL with ``autoeval_label``), flat label files
  (``question_id`` + ``label``/``score``/``llm_score``), mem0 LoCoMo results
  (``llm_score``) or an EvalBoard judge cache.
- :func:`judge_agreement`: accuracy and Cohen's kappa (:mod:`evaluators.metrics.agreement`, through
  the confusion matrix of :func:`~evaluators.metrics.classification.classification_report`)
  between two judges' binary labels.
- :func:`longmemeval_accuracy`: per-type, task-averaged, overall and abstention accuracy as
  LongMemEval's ``print_qa_metrics.py`` prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluators.io import InputError, InputIssue, read_records
from evaluators.io.readers import add_json_records, read_json_document
from evaluators.memory.judge import CACHE_FORMAT, JudgeCache, Judgement
from evaluators.memory.loaders import load_mem0_locomo
from evaluators.memory.records import EvalResult, lines_despite_bad_bytes
from evaluators.metrics.agreement import AGREEMENT_RESAMPLES, cohen_kappa_ci
from evaluators.metrics.classification import classification_report
from evaluators.policy import is_empty
from evaluators.results import DictMixin, safe_div

LABEL_FIELDS = ("label", "score", "llm_score", "judge_score", "correct", "autoeval_label")
_TRUE = {"yes", "true", "correct", "1", "right", "是", "正确", "对"}
_FALSE = {"no", "false", "wrong", "incorrect", "0", "否", "错误", "错"}


def label_value(value: Any) -> float:
    """A stored label as a score in [0, 1].

    Accepts booleans, numbers in [0, 1], the strings yes/no, true/false, correct/wrong
    (any case; also 是/否, 正确/错误) and LongMemEval's ``{"model", "label"}`` object.

    Parameters
    ----------
    value : object
        A stored label as parsed.

    Returns
    -------
    float
        In [0, 1]; 1.0 or 0.0 for the words and booleans.

    Examples
    --------
    >>> label_value("是"), label_value({"model": "gpt-4o", "label": False}), label_value(0.8)
    (1.0, 0.0, 0.8)

    Raises
    ------
    ValueError
        For anything else (the message shows the value).
    """
    if isinstance(value, Mapping) and "label" in value:
        return label_value(value["label"])
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and 0.0 <= value <= 1.0:
        return float(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _TRUE:
            return 1.0
        if low in _FALSE:
            return 0.0
        try:
            number = float(low)
        except ValueError:
            number = -1.0
        if 0.0 <= number <= 1.0:
            return number
    raise ValueError(f"not a judge label: {value!r} (expected true/false, yes/no, correct/wrong or a number in [0, 1])")


@dataclass
class StoredLabels(DictMixin):
    """Labels read from a file.

    Attributes
    ----------
    labels : dict
        ``question_id -> score`` in [0, 1].
    models : dict
        ``judge model -> number of labels`` where the file names the model.
    format : str
        ``longmemeval``, ``records``, ``mem0_locomo`` or ``judge_cache``.
    issues : list of InputIssue
    hypotheses : dict
        ``question_id -> hypothesis`` when the file carries the judged answers
        (LongMemEval's output does).
    """

    labels: dict[str, float] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)
    format: str = "records"
    issues: list[InputIssue] = field(default_factory=list)
    hypotheses: dict[str, str] = field(default_factory=dict)


def stored_labels_from_results(results: Iterable[EvalResult], key: str = "llm_score") -> dict[str, float]:
    """Labels kept in the results' metadata (mem0's ``llm_score`` by default).

    Parameters
    ----------
    results : iterable of EvalResult
    key : str
        The metadata field holding the label.

    Returns
    -------
    dict of str to float
        Question id -> :func:`label_value`, for results with a non-empty value.

    Raises
    ------
    ValueError
        A value :func:`label_value` cannot read.
    """
    out = {}
    for r in results:
        if key in r.metadata and not is_empty(r.metadata[key]):
            out[r.question_id] = label_value(r.metadata[key])
    return out


def load_judge_labels(data: bytes, file: str = "<labels>", *, dataset=None) -> StoredLabels:
    """Read a file of stored judge labels.

    Parameters
    ----------
    data : bytes
        One of: LongMemEval's judge output (JSONL, ``question_id``, ``hypothesis``,
        ``autoeval_label: {model, label}``); JSONL/JSON/CSV records with
        ``question_id`` and one of :data:`LABEL_FIELDS`; mem0's LoCoMo results
        (``llm_score``; pass ``dataset`` to get the dataset's question ids); an EvalBoard
        judge cache.
    file : str
        Name used in issues.
    dataset : LoadReport, optional
        The LoCoMo dataset, for mem0 results.

    Returns
    -------
    StoredLabels
        Bad lines are reported with their line and skipped.
    """
    out = StoredLabels()
    lines = None
    try:
        value, parsed = read_json_document(data, file)
    except InputError as exc:  # undecodable as a whole: a JSONL file keeps its good lines
        lines = lines_despite_bad_bytes(data, file, exc.issue)
        if lines is None:
            out.issues.append(exc.issue)
            return out
        value, parsed = None, None
    if parsed is not None and parsed.errors:  # not one JSON document: JSONL or CSV records
        value, parsed = None, None
    if isinstance(value, dict) and value.get("format") == CACHE_FORMAT:
        cache = JudgeCache.from_value(value, file)
        out.format = "judge_cache"
        out.issues.extend(cache.issues)
        for qid, j in cache.judgements().items():
            if j.score is not None:
                out.labels[qid] = j.score
                out.models[j.model or "unknown"] = out.models.get(j.model or "unknown", 0) + 1
        return out
    if isinstance(value, dict) and any(isinstance(v, list) for v in value.values()):
        report = load_mem0_locomo(value, file, dataset=dataset)
        if report.results:
            out.format = "mem0_locomo"
            out.issues.extend(report.issues)
            out.labels = stored_labels_from_results(report.results)
            out.hypotheses = {r.question_id: r.prediction for r in report.results}
            return out
    records = lines if lines is not None else (
        add_json_records(value, parsed) if parsed is not None else read_records(data, file))
    out.issues.extend(records.issues)
    for rec in records.records:
        where = rec.where()
        qid = rec.data.get("question_id", rec.data.get("qid"))
        if is_empty(qid):
            out.issues.append(InputIssue(file, "missing 'question_id'", **where))
            continue
        name = next((f for f in LABEL_FIELDS if f in rec.data), None)
        if name is None:
            out.issues.append(InputIssue(file, f"missing the label (one of {', '.join(LABEL_FIELDS)})", **where))
            continue
        raw = rec.data[name]
        try:
            score = label_value(raw)
        except ValueError as exc:
            out.issues.append(InputIssue(file, str(exc), **where))
            continue
        if name == "autoeval_label":
            out.format = "longmemeval"
            model = raw.get("model") if isinstance(raw, Mapping) else None
            if model:
                out.models[model] = out.models.get(model, 0) + 1
        if "hypothesis" in rec.data:
            out.hypotheses[str(qid)] = str(rec.data["hypothesis"])
        if str(qid) in out.labels:
            out.issues.append(InputIssue(file, f"duplicate question_id {qid!r}; the first is kept",
                                         severity="warning", **where))
            continue
        out.labels[str(qid)] = score
    return out


@dataclass(frozen=True)
class JudgeAgreement(DictMixin):
    """Agreement between our judge and stored labels on the questions both scored.

    Attributes
    ----------
    n_compared : int
        Questions with a score from both.
    n_only_ours, n_only_stored : int
        Questions scored by one side only (left out of the figures).
    threshold : float
        A score >= threshold counts as "correct" (binary label 1).
    accuracy : float or None
        Share of compared questions where the binary labels agree (``None`` if none).
    cohen_kappa : float or None
        Cohen's kappa of the binary labels; ``None`` with ``kappa_reason`` when undefined.
    kappa_reason : str or None
    confusion_matrix : dict
        ``{"both_correct", "both_wrong", "ours_only_correct", "stored_only_correct"}``.
    disagreements : tuple of str
        Question ids where the labels differ.
    cohen_kappa_ci_low, cohen_kappa_ci_high : float or None
        Percentile bootstrap interval of ``cohen_kappa``, the compared questions resampled
        (:func:`evaluators.metrics.agreement.cohen_kappa_ci`); ``None`` when the kappa is undefined,
        with no resample, or when it is undefined on more than half of the resamples.
    ci : str or None
        How the interval was made (resamples, level, seed); ``None`` without a kappa.
    """

    n_compared: int
    n_only_ours: int
    n_only_stored: int
    threshold: float
    accuracy: float | None
    cohen_kappa: float | None
    kappa_reason: str | None
    confusion_matrix: dict[str, int]
    disagreements: tuple[str, ...]
    cohen_kappa_ci_low: float | None = None
    cohen_kappa_ci_high: float | None = None
    ci: str | None = None


def judge_agreement(ours: Mapping[str, float | Judgement | None], stored: Mapping[str, float | None], *,
                    threshold: float = 0.5, n_resamples: int = AGREEMENT_RESAMPLES, seed: int = 0) -> JudgeAgreement:
    """Compare our judge's scores with stored labels (e.g. LongMemEval's official judge).

    Parameters
    ----------
    ours : mapping
        ``question_id -> score`` (or :class:`Judgement`); ``None`` scores are left out.
    stored : mapping
        ``question_id -> label`` in [0, 1].
    threshold : float
        Binarisation cut (continuous scores of 0.6 and more count as correct at 0.5).
    n_resamples : int
        Bootstrap resamples of the kappa's interval (>= 0; 0: no interval).
    seed : int
        Seed of the resampling.

    Returns
    -------
    JudgeAgreement

    References
    ----------
    Accuracy = share of equal binary labels; Cohen (1960) kappa, as
    ``sklearn.metrics.cohen_kappa_score``; its interval: percentile bootstrap over the compared
    questions (Efron & Tibshirani 1993, ch. 13).
    """
    def score_of(v):
        return v.score if isinstance(v, Judgement) else v

    ours_s = {q: score_of(v) for q, v in ours.items() if score_of(v) is not None}
    stored_s = {q: v for q, v in stored.items() if v is not None}
    common = [q for q in ours_s if q in stored_s]
    a = [int(ours_s[q] >= threshold) for q in common]
    b = [int(stored_s[q] >= threshold) for q in common]
    report = classification_report(a, b, labels=[1, 0])  # rows: ours, columns: stored
    (both_correct, ours_only), (stored_only, both_wrong) = report.counts
    reason = figure = None
    if report.cohen_kappa is None:
        reason = "no question scored by both" if not common else "undefined: both judges gave one label throughout"
    else:
        figure = cohen_kappa_ci(a, b, labels=[1, 0], n_resamples=n_resamples, seed=seed)
    return JudgeAgreement(
        n_compared=len(common), n_only_ours=sum(1 for q in ours_s if q not in stored_s),
        n_only_stored=sum(1 for q in stored_s if q not in ours_s), threshold=threshold,
        accuracy=report.accuracy, cohen_kappa=report.cohen_kappa, kappa_reason=reason,
        confusion_matrix={"both_correct": both_correct, "both_wrong": both_wrong, "ours_only_correct": ours_only,
                          "stored_only_correct": stored_only},
        disagreements=tuple(q for q, x, y in zip(common, a, b) if x != y),
        cohen_kappa_ci_low=figure.ci_low if figure else None, cohen_kappa_ci_high=figure.ci_high if figure else None,
        ci=figure.method if figure else None,
    )


@dataclass(frozen=True)
class TypeAccuracy(DictMixin):
    """Accuracy of one question type: ``correct / count`` (``None`` when count is 0)."""

    question_type: str
    count: int
    correct: float
    accuracy: float | None


@dataclass(frozen=True)
class LongMemEvalReport(DictMixin):
    """LongMemEval's accuracy table (``print_qa_metrics.py``).

    Attributes
    ----------
    by_type : tuple of TypeAccuracy
        The six official types in the official order (types without labels have count 0
        and accuracy ``None``; the official script prints NaN).
    task_averaged : float or None
        Mean of the per-type accuracies over the types that have labels (macro over
        types).  The official script averages all six and gives NaN when one is empty.
    overall : float or None
        Correct / labelled questions: the mean of each question's 0 or 1 (macro over questions).
    abstention : TypeAccuracy
        The ``_abs`` questions.
    n_labels : int
        Labels joined with a question.
    unknown_ids : tuple of str
        Labelled ids not in the question table (the official script fails on them;
        here they are listed and left out).
    """

    by_type: tuple[TypeAccuracy, ...]
    task_averaged: float | None
    overall: float | None
    abstention: TypeAccuracy
    n_labels: int
    unknown_ids: tuple[str, ...]


#: The order of ``type2acc`` in the official ``print_qa_metrics.py``.
LONGMEMEVAL_ORDER = ("single_session_user", "single_session_preference", "single_session_assistant",
                     "multi_session", "temporal_reasoning", "knowledge_update")


def longmemeval_accuracy(questions: Iterable[EvalResult], labels: Mapping[str, float]) -> LongMemEvalReport:
    """Join stored labels with the question table and compute LongMemEval's accuracies.

    Parameters
    ----------
    questions : iterable of EvalResult
        The question table (:func:`evaluators.memory.loaders.load_longmemeval`).
    labels : mapping
        ``question_id -> label`` in [0, 1] (binary for the official judge).

    Returns
    -------
    LongMemEvalReport

    References
    ----------
    xiaowu0162/LongMemEval ``src/evaluation/print_qa_metrics.py``.
    """
    by_id = {q.question_id: q for q in questions}
    buckets: dict[str, list[float]] = {t: [] for t in LONGMEMEVAL_ORDER}
    abstention: list[float] = []
    unknown = []
    for qid, label in labels.items():
        q = by_id.get(qid)
        if q is None:
            unknown.append(qid)
            continue
        buckets.setdefault(q.question_type, []).append(label)
        if "_abs" in qid:
            abstention.append(label)

    def acc(name: str, values: list[float]) -> TypeAccuracy:
        return TypeAccuracy(name, len(values), float(sum(values)), safe_div(sum(values), len(values)))

    rows = tuple(acc(t, v) for t, v in buckets.items())
    per_type = [r.accuracy for r in rows if r.accuracy is not None]
    all_values = [v for vals in buckets.values() for v in vals]
    return LongMemEvalReport(
        by_type=rows, task_averaged=safe_div(sum(per_type), len(per_type)),
        overall=safe_div(sum(all_values), len(all_values)), abstention=acc("abstention", abstention),
        n_labels=len(all_values), unknown_ids=tuple(unknown),
    )


__all__ = ["StoredLabels", "load_judge_labels", "label_value", "stored_labels_from_results",
           "JudgeAgreement", "judge_agreement", "TypeAccuracy", "LongMemEvalReport",
           "longmemeval_accuracy"]
