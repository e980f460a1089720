"""The automatic metric against the people's final verdicts, with bootstrap intervals, beside the
agreement of the people with each other (the ceiling a metric can be expected to reach).

For each reviewed item with a final label (:func:`evaluators.review.gt_patch.final_labels`):
the human verdict is *right* for ``acceptable_variant`` and ``correct`` and *wrong* for ``model_error``
(``gt_error`` items are left out: the reference itself was wrong); the automatic verdict is
*right* when the item's score (``exact_match``, ``token_f1``, a judge, combined or keyword score)
is at least ``threshold``.  Reported: the 2 x 2 confusion of the two, accuracy (share of items
where they agree, :func:`evaluators.metrics.statistics.bootstrap_ci`) and Cohen's kappa (Cohen
1960, :func:`evaluators.metrics.agreement.cohen_kappa_ci`), each with a percentile bootstrap
interval over items (Efron & Tibshirani 1993, ch. 13), and the mean pairwise Cohen's kappa of the
annotators (:func:`evaluators.review.agreement.session_agreement`) on **the same two labels**
(:data:`LABEL_SET`): right (``acceptable_variant`` or ``correct``) and wrong (``model_error``); a ``gt_error``
decision is left out of the people's agreement as a ``gt_error`` final label is left out of the
metric's, so the ceiling and the metric's kappa are on one label set (a 3-label kappa of the people
beside a 2-label kappa of the metric compares different things: more categories, lower chance
agreement).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evaluators.metrics.agreement import AgreementFigure, cohen_kappa_ci
from evaluators.metrics.statistics import bootstrap_ci
from evaluators.results import DictMixin
from evaluators.review.agreement import session_agreement
from evaluators.review.items import AUTOMATIC, score_at
from evaluators.review.gt_patch import final_labels
from evaluators.review.store import ReviewStore, human_verdict


#: The labels both kappas are computed on (right, wrong; a ``correct`` decision is read as right);
#: ``gt_error`` is left out of both.
LABEL_SET = ("acceptable_variant", "model_error")


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
    cohen_kappa : AgreementFigure
        The value (``None`` when undefined: one verdict only on both sides), its interval, and
        whether it is meaningful yet (:data:`evaluators.metrics.agreement.MIN_ITEMS` items).
    human_kappa : AgreementFigure
        Mean pairwise Cohen's kappa of the annotators' labels on :data:`LABEL_SET` (``gt_error``
        decisions left out; its value ``None`` without items two people labelled right or wrong);
        its interval at 95%.
    signature : str
    label_set : str
        The labels of both kappas, in words.
    """

    source: str
    threshold: float
    n_items: int
    n_left_out: int
    confusion: list
    accuracy: float
    accuracy_ci_low: float
    accuracy_ci_high: float
    cohen_kappa: AgreementFigure
    human_kappa: AgreementFigure
    signature: str
    label_set: str = "right (acceptable_variant or correct) / wrong (model_error); gt_error left out"


def _score(payload: dict, source: str | None) -> tuple[float | None, str]:
    path, _ = AUTOMATIC.get(payload.get("kind", ""), ((), None))
    if source:
        path = tuple(source.split("."))
    return score_at(payload, path), ".".join(path) or "none"


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
        kind (:data:`evaluators.review.items.AUTOMATIC`: exact match for QA ...).
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
        if human_verdict(f.label) is None or value is None:
            left_out += 1
            continue
        auto.append(int(value >= threshold))
        human.append(human_verdict(f.label))
    if not auto:
        raise ValueError("no reviewed item has a right / wrong final label and an automatic score")
    counts = np.zeros((2, 2), dtype=np.int64)
    for a, h in zip(auto, human):
        counts[a, h] += 1
    settings = {"n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed}
    accuracy = bootstrap_ci(np.equal(auto, human).astype(float), unit="item", **settings)
    kappa = cohen_kappa_ci(auto, human, labels=[0, 1], **settings)
    # the people on the metric's two labels: a gt_error decision is left out, as a gt_error final label is
    # (``correct`` is right as ``acceptable_variant`` is: both are read as the first label of LABEL_SET)
    people = session_agreement([replace(d, label=LABEL_SET[0] if human_verdict(d.label) else LABEL_SET[1])
                                for d in store.decisions(session_id) if human_verdict(d.label) is not None],
                               n_resamples=n_resamples, seed=seed)
    human_kappa = AgreementFigure(**people["label"]["figures"]["cohen_kappa_mean"])
    return MetricAgreement(
        name, threshold, len(auto), left_out, counts.tolist(), accuracy.estimate, accuracy.ci_low, accuracy.ci_high,
        kappa, human_kappa,
        f"{accuracy.signature}; kappa: {kappa.method}; verdict right when {name} >= {threshold:g}")
