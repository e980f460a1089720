"""The automatic metric against the people's final verdicts, with bootstrap intervals, beside the
agreement of the people with each other (the ceiling a metric can be expected to reach).

For each reviewed item with a final label (:func:`evaluators.review.gt_patch.final_labels`):
the human verdict is *right* for ``acceptable_variant`` and *wrong* for ``model_error``
(``gt_error`` items are left out: the reference itself was wrong); the automatic verdict is
*right* when the item's score (``exact_match``, ``token_f1``, a judge, combined or keyword score)
is at least ``threshold``.  Reported: the 2 x 2 confusion of the two, accuracy (share of items
where they agree) and Cohen's kappa (Cohen 1960), each with a percentile bootstrap interval over
items (the 4 cell counts drawn from a multinomial, as resampling the items; Efron & Tibshirani
1993, ch. 13), and the mean pairwise Cohen's kappa of the annotators on the same labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluators.results import DictMixin
from evaluators.review.agreement import AUTOMATIC, cohen_kappa, session_agreement
from evaluators.review.gt_patch import final_labels
from evaluators.review.store import ReviewStore


@dataclass(frozen=True)
class MetricAgreement(DictMixin):
    """An automatic verdict against the final human labels.

    Attributes
    ----------
    source : str
        The score used (``exact_match`` ...).
    threshold : float
    n_items : int
        Items with a final right / wrong label and a score.
    n_left_out : int
        Final labels not compared (GT errors, items without the score).
    confusion : list of list of int, shape (2, 2)
        Rows: automatic wrong / right; columns: human wrong / right.
    accuracy, accuracy_ci_low, accuracy_ci_high : float
    cohen_kappa, cohen_kappa_ci_low, cohen_kappa_ci_high : float or None
        ``None`` when undefined (one verdict only on both sides); interval ``None`` when kappa is
        undefined in more than half the resamples.
    human_kappa : float or None
        Mean pairwise Cohen's kappa of the annotators' labels (``None`` without shared items).
    signature : str
    """

    source: str
    threshold: float
    n_items: int
    n_left_out: int
    confusion: list
    accuracy: float
    accuracy_ci_low: float
    accuracy_ci_high: float
    cohen_kappa: float | None
    cohen_kappa_ci_low: float | None
    cohen_kappa_ci_high: float | None
    human_kappa: float | None
    signature: str


def _score(payload: dict, source: str | None) -> tuple[float | None, str]:
    path, _ = AUTOMATIC.get(payload.get("kind", ""), ((), None))
    if source:
        path = tuple(source.split("."))
    value: Any = payload
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    name = ".".join(path) or "none"
    return ((float(value), name) if isinstance(value, (int, float)) and not isinstance(value, bool) else (None, name))


def kappa_from_counts(counts: np.ndarray) -> np.ndarray:
    """Cohen's kappa of 2 x 2 tables, vectorised: ``counts`` shape (..., 2, 2) -> (...), NaN where undefined."""
    c = np.asarray(counts, dtype=float)
    n = c.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (c[..., 0, 0] + c[..., 1, 1]) / n
        rows, cols = c.sum(axis=-1) / n[..., None], c.sum(axis=-2) / n[..., None]
        pe = (rows * cols).sum(axis=-1)
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def metric_against_people(store: ReviewStore, session_id: int, *, source: str | None = None,
                          threshold: float = 0.5, n_resamples: int = 2000, confidence_level: float = 0.95,
                          seed: int = 0) -> MetricAgreement:
    """Compare an automatic verdict with a session's final labels (module docstring).

    Parameters
    ----------
    store : ReviewStore
    session_id : int
    source : str, optional
        Payload key of the score (dotted for nested, e.g. ``scores.judge_score``); default by item
        kind (:data:`evaluators.review.agreement.AUTOMATIC`: exact match for QA ...).
    threshold : float
        The verdict is right when the score is >= ``threshold``.
    n_resamples, confidence_level, seed
        Bootstrap settings.

    Raises
    ------
    ValueError
        No item with a right / wrong final label and a score, or a level outside (0, 1).
    """
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    auto, human, name, left_out = [], [], source or "", 0
    finals = final_labels(store, session_id)
    for f in finals:
        value, name = _score(f.item.payload, source)
        if f.label not in ("acceptable_variant", "model_error") or value is None:
            left_out += 1
            continue
        auto.append(int(value >= threshold))
        human.append(int(f.label == "acceptable_variant"))
    if not auto:
        raise ValueError("no reviewed item has a right / wrong final label and an automatic score")
    counts = np.zeros((2, 2), dtype=np.int64)
    for a, h in zip(auto, human):
        counts[a, h] += 1
    n = len(auto)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, counts.ravel() / n, size=n_resamples).reshape(n_resamples, 2, 2)
    alpha = 100 * (1 - confidence_level) / 2
    acc = (draws[:, 0, 0] + draws[:, 1, 1]) / n
    kappas = kappa_from_counts(draws)
    ok = kappas[~np.isnan(kappas)]
    k_lo, k_hi = (np.percentile(ok, [alpha, 100 - alpha]) if ok.size * 2 >= n_resamples else (None, None))
    human_kappa = session_agreement(store.decisions(session_id))["label"]["cohen_kappa_mean"]
    a_lo, a_hi = np.percentile(acc, [alpha, 100 - alpha])
    return MetricAgreement(
        name, threshold, n, left_out, counts.tolist(), float((counts[0, 0] + counts[1, 1]) / n), float(a_lo),
        float(a_hi), cohen_kappa(auto, human), None if k_lo is None else float(k_lo),
        None if k_hi is None else float(k_hi), human_kappa,
        f"bootstrap(percentile, 2x2 multinomial, n_resamples={n_resamples}, level={confidence_level:g}, "
        f"seed={seed}, unit=item); verdict right when {name} >= {threshold:g}")
