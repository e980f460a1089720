"""Metrics of long-term-memory QA by question type.

:func:`compute_metrics` scores every question with the judge's score and the text
metrics of the shared registry (:mod:`evaluators.metrics.registry`), then averages them
overall and by question type.  Every value is a mean over questions (macro over
questions: each question weighs the same); ``task_averaged_judge_score`` is the mean of
the per-type judge scores (macro over types, LongMemEval's "task-averaged accuracy").

Output keys: the text metrics are keyed by their registry names (:data:`TEXT_METRICS`, one
name per definition everywhere); the two others are memory's own:

=======================  =========================================
key                      what
=======================  =========================================
judge_score              the judge (:mod:`evaluators.memory.judge`)
exact_match_normalized   normalised exact match (NFKC, case, punctuation)
token_f1_char            token F1 (SQuAD formula; CJK by character)
rouge1, rouge2, rougeL   ROUGE F-measure (Lin, 2004)
bleu1, bleu2, bleu4      sentence BLEU (Papineni et al., 2002)
meteor                   METEOR (Banerjee & Lavie, 2005)
bert_f1                  BERTScore F1 (optional install)
semantic_similarity      sentence-embedding cosine (optional install)
locomo_f1                LoCoMo parity (:mod:`evaluators.memory.locomo_parity`)
=======================  =========================================

ROUGE-1 and ``token_f1_char`` are one number by definition: ROUGE-1's F-measure is the F1
of the clipped unigram overlap (Lin, 2004), which is the SQuAD token F1 formula, and both
are computed on the same ``char`` tokens (CJK by character, other text by word) with the
same empty-side rule, so they agree on every answer (tested on the demo and the real
files).  ROUGE-1 is kept because papers report it; :data:`METRIC_HELP` says so wherever it
is shown.  ROUGE-2 and ROUGE-L differ.

Missing ground truth follows DESIGN.md: a question whose ground truth is empty is left
out of the text metrics (counted in ``gt_missing``); an empty prediction with a ground
truth is scored (as a miss).  A question without a judge score is left out of
``judge_score`` (``judged`` counts the others).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from evaluators import __version__
from evaluators.memory.judge import Judgement
from evaluators.memory.locomo_parity import locomo_score
from evaluators.memory.records import EvalResult
from evaluators.metrics.statistics import bootstrap_cis
from evaluators.policy import is_empty
from evaluators.results import DictMixin, mean_or_none

#: The registry metrics (:mod:`evaluators.metrics.registry`) memory scores, by their registry names: each
#: name is also the metric's output key.
TEXT_METRICS: tuple[str, ...] = ("exact_match_normalized", "token_f1_char", "rouge1", "rouge2", "rougeL", "bleu1",
                                 "bleu2", "bleu4", "meteor", "bert_f1", "semantic_similarity")
#: Names earlier versions used, still accepted as input (``--metrics f1``); outputs use the new keys.
RENAMED: dict[str, str] = {"exact_match": "exact_match_normalized", "f1": "token_f1_char",
                           "sbert_similarity": "semantic_similarity"}
ALL_METRICS: tuple[str, ...] = ("judge_score", *TEXT_METRICS, "locomo_f1")
#: Metrics that need ``requirements-optional.txt`` (models); computed only when asked for.
OPTIONAL_METRICS: tuple[str, ...] = ("bert_f1", "semantic_similarity")
#: Metrics that need data nothing downloads at run time; computed only when asked for
#: (METEOR needs nltk's WordNet: :data:`METEOR_DATA_HINT`).
NEEDS_DATA_METRICS: tuple[str, ...] = ("meteor",)
#: How to get METEOR's data, once, with network (said in the CLI's --help and the page's help).
METEOR_DATA_HINT = "python -m nltk.downloader wordnet omw-1.4"
#: A note shown with a metric (its help), where its value needs one to be read right.
METRIC_HELP: dict[str, str] = {
    "rouge1": "ROUGE-1 F equals F1 (char) on every answer, by definition: both are the F1 of the clipped "
              "unigram overlap (Lin 2004; SQuAD's f1_score) on the same tokens (CJK by character, other text by "
              "word). It is kept because papers report ROUGE-1; ROUGE-2 and ROUGE-L differ.",
    "token_f1_char": "Token F1 (SQuAD formula) on CJK characters and other words; ROUGE-1 F is the same number.",
}

#: ``metrics=None`` computes these.
DEFAULT_METRICS: tuple[str, ...] = tuple(m for m in ALL_METRICS
                                         if m not in OPTIONAL_METRICS + NEEDS_DATA_METRICS and m != "locomo_f1")


@dataclass(frozen=True)
class QuestionScores(DictMixin):
    """All scores of one question.

    Attributes
    ----------
    question_id, question_type : str
    scores : dict
        ``metric -> value`` (``None`` where not computed: no judge score, GT missing).
    judgement : Judgement or None
        The judge's verdict with its reasoning, when one was given.
    """

    question_id: str
    question_type: str
    scores: dict[str, float | None] = field(default_factory=dict)
    judgement: Judgement | None = None


def _check_names(metrics: Sequence[str] | None) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(RENAMED.get(m, m) for m in (DEFAULT_METRICS if metrics is None else metrics)))
    unknown = [m for m in names if m not in ALL_METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; expected some of {', '.join(ALL_METRICS)}")
    return names


def metric_availability(metrics: Sequence[str] | None = None) -> dict[str, str | None]:
    """``metric -> None`` (can run here) or the reason it cannot, with the install command.

    ``judge_score`` and ``locomo_f1`` are always available; the text metrics are asked of
    the registry (``Metric.unavailable_reason``: missing optional package, model or data).

    Parameters
    ----------
    metrics : sequence of str, optional
        Metric keys (earlier names in :data:`RENAMED` accepted); ``None``: :data:`ALL_METRICS`.

    Returns
    -------
    dict of str to (str or None)
        One entry per metric, in order; the reason names the install command.

    Raises
    ------
    ValueError
        An unknown metric name.
    """
    names = ALL_METRICS if metrics is None else _check_names(metrics)
    out: dict[str, str | None] = {}
    for key in names:
        if key not in TEXT_METRICS:
            out[key] = None
            continue
        from evaluators.metrics.registry import get_metric

        out[key] = get_metric(key).unavailable_reason()
    return out


def resolve_metrics(metrics: Sequence[str] | None) -> tuple[tuple[str, ...], dict[str, str]]:
    """The metrics to compute and those left out.

    Parameters
    ----------
    metrics : sequence of str or None
        ``None``: :data:`DEFAULT_METRICS` that can run here; the others are returned with
        their reason, never scored 0.

    Returns
    -------
    (names, unavailable)
        ``unavailable`` is ``{metric: reason}``; empty when metrics were named explicitly
        (a named metric that cannot run raises when it is computed).
    """
    if metrics is not None:
        return _check_names(metrics), {}
    availability = metric_availability(DEFAULT_METRICS)
    names = tuple(m for m in DEFAULT_METRICS if availability[m] is None)
    return names, {m: r for m, r in availability.items() if r is not None}


def _registry_metrics(names: Sequence[str]) -> dict[str, Any]:
    """Registry objects for the text metrics asked for.

    Raises
    ------
    MetricUnavailable (an ImportError)
        When a metric's optional package, model or data is missing; the message names
        the install command.
    """
    wanted = [m for m in names if m in TEXT_METRICS]
    if not wanted:
        return {}
    from evaluators.metrics.registry import MetricUnavailable, get_metric

    out = {}
    for name in wanted:
        metric = get_metric(name)
        reason = metric.unavailable_reason()
        if reason:
            raise MetricUnavailable(f"{name}: {reason}")
        out[name] = metric
    return out


def metric_signatures(metrics: Sequence[str] | None = None) -> dict[str, str]:
    """``metric -> signature`` (tokenizer, normalisation, library version) for display and downloads.

    Parameters
    ----------
    metrics : sequence of str, optional
        Metric keys; ``None``: :data:`DEFAULT_METRICS`.

    Returns
    -------
    dict of str to str
        ``judge_score`` first, then the text metrics, then ``locomo_f1``, for those asked for.

    Raises
    ------
    ValueError
        An unknown metric name.
    MetricUnavailable
        A text metric asked for cannot run here.
    """
    names = _check_names(metrics)
    out = {}
    if "judge_score" in names:
        out["judge_score"] = "judge:evalboard.memory.judge|modes=continuous(0.2 steps),binary(LongMemEval official)," \
                             "adversarial(rule)"
    for key, metric in _registry_metrics(names).items():
        out[key] = metric.signature
    if "locomo_f1" in names:
        from evaluators.memory.locomo_parity import SIGNATURE

        out["locomo_f1"] = SIGNATURE
    return out


def _judge_value(value: Any) -> tuple[float | None, Judgement | None]:
    if isinstance(value, Judgement):
        return value.score, value
    if value is None:
        return None, None
    return float(value), None


#: Questions per chunk sent to a worker process (``workers > 1``).
CHUNK_QUESTIONS = 500


def _score_chunk(metrics: Sequence[str] | None, chunk: list[tuple[EvalResult, Any]]) -> list[QuestionScores]:
    """:func:`score_questions` of ``(result, its judge score)`` pairs, in a worker process."""
    return score_questions([r for r, _ in chunk], {r.question_id: j for r, j in chunk if j is not None},
                           metrics=metrics)


def score_questions(results: Iterable[EvalResult], judge_scores: Mapping[str, Any] | None = None, *,
                    metrics: Sequence[str] | None = None, workers: int = 1) -> list[QuestionScores]:
    """Per-question scores (the rows behind :func:`compute_metrics`).

    ``workers > 1`` scores chunks of :data:`CHUNK_QUESTIONS` questions in worker processes
    (:mod:`evaluators.parallel`) with this same function; the rows are identical and in order.

    Parameters
    ----------
    results : iterable of EvalResult
    judge_scores : mapping, optional
        ``question_id -> score in [0, 1]`` or :class:`~evaluators.memory.judge.Judgement`.
    metrics : sequence of str, optional
        Keys from :data:`ALL_METRICS`; default as :func:`compute_metrics`.

    Returns
    -------
    list of QuestionScores
        In input order.

    Raises
    ------
    ValueError
        Unknown metric name.
    MetricUnavailable (an ImportError)
        A metric asked for cannot run here (optional install missing); never a 0.
    """
    names, _ = resolve_metrics(metrics)
    text_keys = tuple(_registry_metrics(names))  # raises MetricUnavailable here
    if workers > 1:
        from functools import partial

        from evaluators.parallel import chunked, imap_chunks

        judged = judge_scores or {}
        pairs = [(r, judged.get(r.question_id)) for r in results]
        return [row for _, rows in imap_chunks(partial(_score_chunk, list(names)), chunked(pairs, CHUNK_QUESTIONS),
                                               workers, here=False) for row in rows]
    scorer = None
    if text_keys:
        from evaluators.metrics.registry import PairScorer

        scorer = PairScorer(text_keys)  # each text tokenized once for all the metrics
    judge_scores = judge_scores or {}
    rows = []
    for r in results:
        scores: dict[str, float | None] = {}
        judgement = None
        if "judge_score" in names:
            scores["judge_score"], judgement = _judge_value(judge_scores.get(r.question_id))
        if scorer is not None:
            values = {} if is_empty(r.ground_truth) else scorer.score(r.prediction, r.ground_truth)
            for name in text_keys:
                scores[name] = values.get(name)
        if "locomo_f1" in names:
            try:
                scores["locomo_f1"] = locomo_score(r)
            except ValueError:
                scores["locomo_f1"] = None
        rows.append(QuestionScores(r.question_id, r.question_type, scores, judgement))
    return rows


#: Seed of the bootstrap intervals (the same rows give the same intervals).
CI_SEED = 0


def _block(count: int, names: Sequence[str], columns: Mapping[str, Sequence[float | None]]
           ) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """One block (overall or one type) without intervals: count, the mean of each metric, judged, gt_missing;
    and ``metric -> its values`` (``None`` left out) for the intervals.

    ``columns`` are the metrics' values of the block's rows (``metric -> values``, row order).
    """
    out: dict[str, Any] = {"count": count}
    kept: dict[str, list[float]] = {}
    for name in names:
        values = kept[name] = [v for v in columns[name] if v is not None]
        out[name] = mean_or_none(values)
    if "judge_score" in names:
        out["judged"] = len(kept["judge_score"])
    text_names = [n for n in names if n in TEXT_METRICS]
    if text_names:
        out["gt_missing"] = count - len(kept[text_names[0]])
    return out, kept


def _add_intervals(blocks: Sequence[tuple[dict[str, Any], dict[str, list[float]]]], names: Sequence[str],
                   ci_resamples: int) -> list[dict[str, Any]]:
    """The blocks with ``{metric}_ci_low`` / ``{metric}_ci_high`` after each mean: a 95% percentile bootstrap
    interval (seed :data:`CI_SEED`).  Identical value lists (ROUGE-1 and F1 (char) by definition) are
    resampled once: same values and seed, same interval; the others together on threads (:func:`bootstrap_cis`)."""
    distinct: list[list[float]] = []
    where: list[dict[str, int]] = []
    for _, kept in blocks:
        where.append({})
        for name, values in kept.items():
            if values:
                k = next((i for i, seen in enumerate(distinct) if seen == values), None)
                if k is None:
                    k = len(distinct)
                    distinct.append(values)
                where[-1][name] = k
    found = bootstrap_cis(distinct, n_resamples=ci_resamples, seed=CI_SEED, unit="question")
    out = []
    for (block, _), at in zip(blocks, where):
        ordered: dict[str, Any] = {"count": block["count"]}
        for name in names:
            ordered[name] = block[name]
            if name in at:
                ordered[f"{name}_ci_low"], ordered[f"{name}_ci_high"] = found[at[name]].ci_low, found[at[name]].ci_high
        ordered.update((k, v) for k, v in block.items() if k not in ordered)  # judged, gt_missing
        out.append(ordered)
    return out


def _take(rows: Sequence[QuestionScores], names: Sequence[str]) -> dict[str, Sequence[float | None]]:
    """``metric -> values`` of ``rows`` (row order; ``None`` where a row has none), read once per row."""
    if len(names) > 1 and rows:
        get = itemgetter(*names)
        try:
            return dict(zip(names, zip(*[get(row.scores) for row in rows])))
        except KeyError:  # a row without some metric: None there
            pass
    return {name: [row.scores.get(name) for row in rows] for name in names}


def _pick(column: Sequence[float | None], index: list[int]) -> Sequence[float | None]:
    return itemgetter(*index)(column) if len(index) > 1 else [column[index[0]]]


def compute_metrics(results: Iterable[EvalResult], judge_scores: Mapping[str, Any] | None = None, *,
                    metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """Overall and by-type metrics of long-term-memory QA results.

    Parameters
    ----------
    results : iterable of EvalResult
    judge_scores : mapping, optional
        ``question_id -> score`` (or ``Judgement``); questions without one are left out
        of ``judge_score``.
    metrics : sequence of str, optional
        Keys from :data:`ALL_METRICS`.  Default: the :data:`DEFAULT_METRICS` (everything
        but the model-based ``bert_f1``, ``semantic_similarity``, ``meteor`` (it needs
        nltk's WordNet data) and the LoCoMo parity ``locomo_f1``) that can run here; any
        that cannot is listed in ``unavailable`` with its reason instead of being scored.

    Returns
    -------
    dict
        ``{"overall": {...}, "by_type": {type: {..., "count": n}}, "metrics": [...],
        "unavailable": {metric: reason}, "aggregation": "...", "signature": {...}}``.  Each block has ``count``, one
        value per metric (a mean over questions, ``None`` when no question has a
        value), ``judged`` (questions with a judge score) and ``gt_missing``;
        ``overall`` adds ``task_averaged_judge_score`` (mean of the per-type judge
        scores).  Empty input gives ``count`` 0, ``None`` values and an empty
        ``by_type`` (nothing to average is not a score of 0).

    Raises
    ------
    ValueError
        Unknown metric name.
    MetricUnavailable (an ImportError)
        A metric named in ``metrics`` cannot run here; its message names the install
        command.

    References
    ----------
    Metric definitions: :mod:`evaluators.metrics.registry`; per-type reporting as in
    LoCoMo (Maharana et al., 2024) and LongMemEval (Wu et al., 2025).
    """
    names, unavailable = resolve_metrics(metrics)
    rows = score_questions(results, judge_scores, metrics=names)
    return aggregate_rows(rows, names, unavailable=unavailable)


def aggregate_rows(rows: Sequence[QuestionScores], metrics: Sequence[str], *,
                   unavailable: Mapping[str, str] | None = None, ci_resamples: int = 0) -> dict[str, Any]:
    """Aggregate :func:`score_questions` rows as :func:`compute_metrics` does.

    ``unavailable`` (``{metric: reason}``) is passed through to the output.  With
    ``ci_resamples`` > 0 every mean gets a 95% percentile bootstrap interval over its
    questions (``{metric}_ci_low``, ``{metric}_ci_high``; seed :data:`CI_SEED`; see
    :func:`evaluators.metrics.statistics.bootstrap_ci`), and ``ci`` names the settings.

    Parameters
    ----------
    rows : sequence of QuestionScores
        One per question (:func:`score_questions`).
    metrics : sequence of str
        The metric keys the rows hold.
    unavailable : mapping of str to str, optional
        Metrics left out, with their reasons.
    ci_resamples : int
        Bootstrap resamples per mean (0: no interval).

    Returns
    -------
    dict
        ``overall`` and ``by_type`` (question type -> block): each block has ``count``, each
        metric's mean in [0, 1] (``None`` when no question has a value), ``judged`` (questions
        with a judge score) and ``gt_missing`` (questions without GT, left out of the text
        metrics); ``overall`` also ``task_averaged_judge_score`` (mean over types); then
        ``metrics``, ``unavailable``, ``aggregation`` and ``signature``.

    Raises
    ------
    ValueError
        An unknown metric name.

    References
    ----------
    Efron & Tibshirani (1993), ch. 13 (percentile interval).
    """
    names = _check_names(metrics)
    by_type: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_type.setdefault(row.question_type, []).append(i)
    columns = _take(rows, names)
    overall_block = _block(len(rows), names, columns)
    type_blocks = {t: _block(len(index), names, {n: _pick(columns[n], index) for n in names})
                   for t, index in by_type.items()}
    blocks = [overall_block, *type_blocks.values()]
    done = _add_intervals(blocks, names, ci_resamples) if ci_resamples else [block for block, _ in blocks]
    overall, types = done[0], dict(zip(type_blocks, done[1:]))
    if "judge_score" in names:
        overall["task_averaged_judge_score"] = mean_or_none(t["judge_score"] for t in types.values())
    return {
        "overall": overall,
        "by_type": types,
        "metrics": list(names),
        "unavailable": dict(unavailable or {}),
        "aggregation": "mean over questions (macro over questions); task_averaged_judge_score = mean over types",
        "signature": {"evalboard": __version__, **metric_signatures(names)},
        "ci": (f"bootstrap(percentile, mean, n_resamples={ci_resamples}, level=0.95, seed={CI_SEED}, unit=question)"
               if ci_resamples else None),
    }
