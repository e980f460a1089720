"""Does the order of memory systems survive another tokenization? (issue 31)

The overlap metrics of a memory report (``token_f1_char``, ROUGE, BLEU) cut Chinese by
characters.  :func:`memory_sensitivity` recomputes them for every system under characters,
jieba, a big dictionary, HMM on and a user dictionary, with the shared engine
(:func:`evaluators.metrics.sensitivity.rank_sensitivity`): each system's mean with its
interval, and every pair of systems whose order changes, with the paired interval of the
difference.  Under ``char`` the numbers are the report's (same tokens, same formulas).

Questions are paired across systems by ``question_id``; a question whose ground truth is empty
is left out (as from the report's text metrics); an empty prediction scores 0.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from evaluators.memory.records import EvalResult
from evaluators.metrics.sensitivity import SensitivityReport, rank_sensitivity
from evaluators.policy import is_empty

#: Memory metric key -> the engine's metric computing it on another tokenization's tokens.
#: ``rouge1`` is ``token_f1_char`` by definition (one engine metric, shown under both names
#: in the report); ``exact_match_normalized`` compares normalised strings, not tokens, and
#: ``meteor``, ``bert_f1``, ``semantic_similarity``, ``judge_score`` do not count tokens.
TOKEN_METRICS: dict[str, str] = {"token_f1_char": "token_f1", "rouge1": "token_f1", "rouge2": "rouge2",
                                 "rougeL": "rougeL", "bleu1": "bleu1", "bleu2": "bleu2", "bleu4": "bleu4"}
#: Engine metrics when the report's metrics name none of :data:`TOKEN_METRICS`.
DEFAULT_ENGINE_METRICS = ("token_f1", "rouge2", "rougeL", "bleu1", "bleu2", "bleu4")


def engine_metrics(names: Sequence[str] | None) -> tuple[str, ...]:
    """The engine metrics of the memory metrics ``names`` (in order, once each); all of them when none counts tokens.

    Parameters
    ----------
    names : sequence of str or None
        Memory metric keys (a report's ``names``).

    Returns
    -------
    tuple of str
        Metric names of :mod:`evaluators.metrics.sensitivity`; :data:`DEFAULT_ENGINE_METRICS` when
        none of ``names`` is in :data:`TOKEN_METRICS`.

    Examples
    --------
    >>> engine_metrics(["judge_score", "rouge1", "token_f1_char", "bleu4"])
    ('token_f1', 'bleu4')
    """
    found = tuple(dict.fromkeys(TOKEN_METRICS[n] for n in names or () if n in TOKEN_METRICS))
    return found or DEFAULT_ENGINE_METRICS


def memory_runs(results_by_system: Mapping[str, Sequence[EvalResult]]) -> dict[str, list[tuple[str, str, tuple[str, ...]]]]:
    """System -> ``(question_id, prediction, (ground_truth,))`` of its questions with a ground truth.

    Parameters
    ----------
    results_by_system : mapping of str to sequence of EvalResult

    Returns
    -------
    dict of str to list of (str, str, tuple of str)
        The runs :func:`evaluators.metrics.sensitivity.rank_sensitivity` takes; questions without
        ground truth are left out (missing-GT policy).
    """
    return {system: [(r.question_id, r.prediction or "", (r.ground_truth,)) for r in results
                     if not is_empty(r.ground_truth)]
            for system, results in results_by_system.items()}


def memory_sensitivity(results_by_system: Mapping[str, Sequence[EvalResult]], *,
                       metrics: Sequence[str] | None = None, user_dict: str | os.PathLike | None = None,
                       big_dictionary: str | os.PathLike | None = None, script: str | None = None,
                       n_resamples: int = 1000, seed: int = 0) -> SensitivityReport:
    """Rank sensitivity of memory systems over tokenizations (see the module docstring).

    Parameters
    ----------
    results_by_system : mapping of str to sequence of EvalResult
        System -> its answers (other systems paired to the run's question ids already, as
        :func:`evaluators.memory.compare.pair_results` does).
    metrics : sequence of str, optional
        Memory metric keys (the report's ``names``); mapped by :data:`TOKEN_METRICS`.
    user_dict, big_dictionary : path, optional
        jieba dictionaries of the ``jieba_user`` and ``jieba_big`` tokenizations.
    script : str, optional
        OpenCC configuration applied to answers and ground truths first (recorded in the provenance).
    n_resamples : int
        Bootstrap resamples of the intervals (0: none).
    seed : int

    Returns
    -------
    SensitivityReport

    Raises
    ------
    ValueError
        No system, or no question with a ground truth.
    """
    return rank_sensitivity(memory_runs(results_by_system), big_dictionary=big_dictionary, user_dict=user_dict,
                            script=script, metrics=engine_metrics(metrics), n_resamples=n_resamples, seed=seed)
