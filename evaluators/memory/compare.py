"""Several long-term-memory systems on the same questions: side by side and a paired comparison.

Each system's per-question rows come from :func:`evaluators.memory.metrics.score_questions`
(the rows behind every memory report); questions are matched by ``question_id``.  Another
system's file is read against the same LoCoMo question file as the run (so mem0 items take
the same ids) and paired with the run's questions by :func:`pair_results`: by question id,
then, for the rest, on (conversation, question text); the rule applied is returned with the
counts (:class:`Pairing`) for display.

- :func:`systems_common`: the questions every system has a value for (systems are compared on
  these) and each system's own n.
- :func:`systems_table`: each system's overall mean of a metric with its 95% bootstrap
  interval (questions resampled, :func:`evaluators.memory.metrics.aggregate_rows`), over its own
  questions and over the common ones.
- :func:`questions_matrix`: questions x systems, the metric's value per system and the spread.
- :func:`compare_two`: paired bootstrap and approximate randomization of B - A on the
  questions both scored (:func:`evaluators.metrics.statistics.compare_paired_scores`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluators.io import InputIssue
from evaluators.memory.loaders import load_results_file
from evaluators.memory.metrics import QuestionScores, aggregate_rows, score_questions
from evaluators.memory.records import EvalResult, LoadReport
from evaluators.results import CommonItems, DictMixin, common_items
from evaluators.metrics.statistics import PairedScores, compare_paired_scores


def systems_common(rows_by_system: Mapping[str, Sequence[QuestionScores]], metric: str) -> CommonItems:
    """The questions every system has a value of ``metric`` for, and each system's own n
    (:func:`evaluators.results.common_items`): systems are compared on these.

    Parameters
    ----------
    rows_by_system : mapping of str to sequence of QuestionScores
        System -> its per-question scores (:func:`evaluators.memory.metrics.score_questions`).
    metric : str
        A metric key the rows hold.

    Returns
    -------
    CommonItems
        Unit ``questions``.
    """
    return common_items({name: [r.question_id for r in rows if r.scores.get(metric) is not None]
                         for name, rows in rows_by_system.items()}, unit="questions")


def systems_table(rows_by_system: Mapping[str, Sequence[QuestionScores]], metric: str, *,
                  ci_resamples: int = 10_000) -> list[dict[str, Any]]:
    """One row per system, over its own questions and over the questions common to every system.

    Keys: ``system``; ``n`` (questions with a value), ``mean``, ``ci_low``, ``ci_high`` over the
    system's own questions; ``n_common``, ``mean_common``, ``ci_low_common``, ``ci_high_common``
    over the questions every system has a value for (:func:`systems_common`; ``None`` means when
    none is common).  Compare systems by the common ones.  Values are in [0, 1] (``None`` when no
    question has one); bounds are ``None`` without resamples.

    Parameters
    ----------
    rows_by_system : mapping of str to sequence of QuestionScores
        System -> its per-question scores (:func:`evaluators.memory.metrics.score_questions`).
    metric : str
        A metric key the rows hold.
    ci_resamples : int
        Bootstrap resamples of each interval (0: none).

    Returns
    -------
    list of dict
        One row per system, in the mapping's order.
    """
    common = systems_common(rows_by_system, metric)
    keep = set(common.ids)
    out = []
    for name, rows in rows_by_system.items():
        overall = aggregate_rows(rows, [metric], ci_resamples=ci_resamples)["overall"]
        row = {"system": name, "n": common.n_by_system[name], "mean": overall.get(metric),
               "ci_low": overall.get(f"{metric}_ci_low"), "ci_high": overall.get(f"{metric}_ci_high")}
        if common.same:
            on_common = overall
        elif common.n_common:
            on_common = aggregate_rows([r for r in rows if r.question_id in keep], [metric],
                                       ci_resamples=ci_resamples)["overall"]
        else:
            on_common = {}
        row.update(n_common=common.n_common, mean_common=on_common.get(metric),
                   ci_low_common=on_common.get(f"{metric}_ci_low"), ci_high_common=on_common.get(f"{metric}_ci_high"))
        out.append(row)
    return out


def questions_matrix(rows_by_system: Mapping[str, Sequence[QuestionScores]], metric: str) -> list[dict[str, Any]]:
    """Questions x systems: ``question_id``, ``question_type``, ``<system>`` value each, and ``spread``.

    ``spread`` is the highest minus the lowest value among systems that have one (``None`` with
    fewer than two).  Questions in order of first appearance.

    Parameters
    ----------
    rows_by_system : mapping of str to sequence of QuestionScores
        System -> its per-question scores (:func:`evaluators.memory.metrics.score_questions`).
    metric : str
        A metric key the rows hold.

    Returns
    -------
    list of dict
        One row per question; a system without that question has ``None``.
    """
    names = list(rows_by_system)
    out: dict[str, dict[str, Any]] = {}
    for name, rows in rows_by_system.items():
        for r in rows:
            row = out.setdefault(r.question_id, {"question_id": r.question_id, "question_type": r.question_type,
                                                 **dict.fromkeys(names)})
            row[name] = r.scores.get(metric)
    for row in out.values():
        values = [row[n] for n in names if row[n] is not None]
        row["spread"] = max(values) - min(values) if len(values) > 1 else None
    return list(out.values())


def compare_two(rows_by_system: Mapping[str, Sequence[QuestionScores]], a: str, b: str, metric: str, *,
                n_resamples: int = 10_000, seed: int = 0) -> PairedScores:
    """System ``b`` against ``a`` on ``metric``, questions paired by id (keys: question ids).

    Parameters
    ----------
    rows_by_system : mapping of str to sequence of QuestionScores
        System -> its per-question scores (:func:`evaluators.memory.metrics.score_questions`).
    a, b : str
        Two systems of ``rows_by_system``.
    metric : str
        A metric key the rows hold.
    n_resamples : int
        Resamples of the paired bootstrap and the randomization test.
    seed : int
        Seed of the resampling.

    Returns
    -------
    PairedScores
        See :func:`evaluators.metrics.statistics.compare_paired_scores`.

    Raises
    ------
    KeyError
        ``a`` or ``b`` is not a system of ``rows_by_system``.
    ValueError
        When the two systems have no question with a value of ``metric`` in common.
    """
    return compare_paired_scores({r.question_id: r.scores.get(metric) for r in rows_by_system[a]},
                                 {r.question_id: r.scores.get(metric) for r in rows_by_system[b]}, a, b,
                                 n_resamples=n_resamples, seed=seed)


def score_system(results, metrics: Sequence[str]) -> list[QuestionScores]:
    """Another system's questions scored with ``metrics`` (text metrics; no judge), as its rows.

    The same per-question function as every memory report
    (:func:`evaluators.memory.metrics.score_questions`).

    Parameters
    ----------
    results : iterable of EvalResult
        The other system's answers.
    metrics : sequence of str
        Text metric keys (no ``judge_score``); empty gives ``[]``.

    Returns
    -------
    list of QuestionScores

    Raises
    ------
    MetricUnavailable
        A metric cannot run here.
    """
    return score_questions(list(results), None, metrics=list(metrics)) if metrics else []


def _text_key(result: EvalResult) -> tuple[str, str]:
    """(conversation, question text) with whitespace runs collapsed and case folded."""
    return result.sample_id, " ".join(result.question.split()).casefold()


@dataclass(frozen=True)
class Pairing(DictMixin):
    """How another system's questions were paired with the run's.

    Attributes
    ----------
    n_by_id : int
        Paired by ``question_id``.
    n_by_text : int
        Paired on (conversation, question text) (ids differ).
    n_unpaired : int
        The other system's questions left without a partner (not compared).
    examples : list of str
        Up to three unpaired question ids.
    """

    n_by_id: int = 0
    n_by_text: int = 0
    n_unpaired: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def rule(self) -> str:
        """``"question_id"``, ``"conversation+question"`` or ``"question_id, then conversation+question"``."""
        if self.n_by_text and self.n_by_id:
            return "question_id, then conversation+question"
        return "conversation+question" if self.n_by_text else "question_id"

    def describe(self) -> str:
        """One sentence for display: the rule and the counts."""
        parts = []
        if self.n_by_id:
            parts.append(f"{self.n_by_id} paired by question id")
        if self.n_by_text:
            parts.append(f"{self.n_by_text} paired on (conversation, question text) because their ids differ")
        if self.n_unpaired:
            parts.append(f"{self.n_unpaired} without a partner and not compared (e.g. {', '.join(self.examples)})")
        return "; ".join(parts) + "." if parts else "No question to pair."


def pair_results(base: Sequence[EvalResult], other: Sequence[EvalResult]) -> tuple[list[EvalResult], Pairing]:
    """``other``'s records paired with ``base``'s: by ``question_id``, then on (conversation, question text).

    A record of ``other`` whose id is one of ``base``'s keeps it.  The others are paired, in
    order, with the ``base`` records not yet paired that have the same conversation
    (``sample_id``) and question text (whitespace collapsed, case folded); the k-th such
    record of ``other`` takes the k-th of ``base`` (the same question asked twice in one
    conversation).  A paired record takes its partner's ``question_id``.

    Parameters
    ----------
    base : sequence of EvalResult
        The run's questions.
    other : sequence of EvalResult
        Another system's answers.

    Returns
    -------
    (records, Pairing)
        ``other``'s records in their order (paired ones re-keyed, unpaired ones as they were),
        and how they were paired.
    """
    base_ids = {r.question_id for r in base}
    by_id = [r for r in other if r.question_id in base_ids]
    taken = {r.question_id for r in by_id}
    free: dict[tuple[str, str], list[str]] = {}
    for r in base:
        if r.question_id not in taken:
            free.setdefault(_text_key(r), []).append(r.question_id)
    out: list[EvalResult] = []
    n_text, unpaired = 0, []
    for r in other:
        if r.question_id in base_ids:
            out.append(r)
            continue
        partners = free.get(_text_key(r))
        if partners:
            qid = partners.pop(0)
            out.append(EvalResult(r.sample_id, qid, r.question_type, r.question, r.ground_truth, r.prediction,
                                  r.abstention, {**r.metadata, "original_question_id": r.question_id}))
            n_text += 1
        else:
            out.append(r)
            unpaired.append(r.question_id)
    return out, Pairing(len(by_id), n_text, len(unpaired), unpaired[:3])


@dataclass(frozen=True)
class OtherSystem(DictMixin):
    """Another system on the run's questions: its ``rows`` (scored with the run's text metrics, re-keyed
    to the run's question ids), the ``pairing`` applied and the ``issues`` of its file."""

    rows: list[QuestionScores] = field(default_factory=list)
    pairing: Pairing = field(default_factory=Pairing)
    issues: list[InputIssue] = field(default_factory=list)


def score_other_system(file_name: str, data: bytes, metrics: Sequence[str], base: Sequence[EvalResult], *,
                       dataset: LoadReport | None = None) -> OtherSystem:
    """Read another system's results file (against the run's LoCoMo ``dataset``, when there is one, so mem0
    items take the same ids), pair it with ``base`` (:func:`pair_results`) and score it with ``metrics``.

    Parameters
    ----------
    file_name : str
        The file's name.
    data : bytes
        Its contents (any results layout :func:`evaluators.memory.loaders.load_results_file` reads).
    metrics : sequence of str
        Text metric keys.
    base : sequence of EvalResult
        The run's questions.
    dataset : LoadReport, optional
        The run's LoCoMo questions.

    Returns
    -------
    OtherSystem
    """
    paired, pairing, issues = read_other_system(file_name, data, base, dataset=dataset)
    return OtherSystem(score_system(paired, metrics), pairing, issues)


def read_other_system(file_name: str, data: bytes, base: Sequence[EvalResult], *,
                      dataset: LoadReport | None = None) -> tuple[list[EvalResult], Pairing, list[InputIssue]]:
    """Another system's results file read (against ``dataset``, as :func:`score_other_system`) and paired with
    ``base``: its answers under the run's question ids, the pairing applied, and the file's problems.

    Parameters
    ----------
    file_name : str
    data : bytes
    base : sequence of EvalResult
    dataset : LoadReport, optional
        As :func:`score_other_system`.

    Returns
    -------
    (records, Pairing, issues) : (list of EvalResult, Pairing, list of InputIssue)
    """
    loaded = load_results_file(data, file_name, dataset=dataset)
    paired, pairing = pair_results(base, loaded.results)
    return paired, pairing, list(loaded.issues)
