"""Several long-term-memory systems on the same questions: side by side and a paired comparison.

Each system's per-question rows come from :func:`evaluators.memory.metrics.score_questions`
(the rows behind every memory report); questions are matched by ``question_id``.

- :func:`systems_table`: each system's overall mean of a metric with its 95% bootstrap
  interval (questions resampled, :func:`evaluators.memory.metrics.aggregate_rows`).
- :func:`questions_matrix`: questions x systems, the metric's value per system and the spread.
- :func:`compare_two`: paired bootstrap and approximate randomization of B - A on the
  questions both scored (:func:`evaluators.metrics.statistics.compare_paired_scores`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluators.memory.metrics import QuestionScores, aggregate_rows, score_questions
from evaluators.metrics.statistics import PairedScores, compare_paired_scores


def systems_table(rows_by_system: Mapping[str, Sequence[QuestionScores]], metric: str, *,
                  ci_resamples: int = 10_000) -> list[dict[str, Any]]:
    """One row per system: ``system``, ``n`` (questions with a value), ``mean``, ``ci_low``, ``ci_high``.

    Values are in [0, 1] (``None`` when no question has one); bounds are ``None`` without
    resamples.
    """
    out = []
    for name, rows in rows_by_system.items():
        overall = aggregate_rows(rows, [metric], ci_resamples=ci_resamples)["overall"]
        out.append({"system": name, "n": sum(r.scores.get(metric) is not None for r in rows),
                    "mean": overall.get(metric), "ci_low": overall.get(f"{metric}_ci_low"),
                    "ci_high": overall.get(f"{metric}_ci_high")})
    return out


def questions_matrix(rows_by_system: Mapping[str, Sequence[QuestionScores]], metric: str) -> list[dict[str, Any]]:
    """Questions x systems: ``question_id``, ``question_type``, ``<system>`` value each, and ``spread``.

    ``spread`` is the highest minus the lowest value among systems that have one (``None`` with
    fewer than two).  Questions in order of first appearance.
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

    Raises
    ------
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
    """
    return score_questions(list(results), None, metrics=list(metrics)) if metrics else []
