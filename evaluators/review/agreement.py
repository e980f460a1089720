"""Agreement of a review session's annotators, and of the automatic verdict with them.

The statistics (Cohen's kappa plain and weighted, Fleiss' kappa, Krippendorff's alpha) are
defined once, in :mod:`evaluators.metrics.agreement`; this module holds the review rules: which
decisions count (submitted ones), which fields are rated (the label, nominal; the 1-5 score,
ordinal), how annotator pairs and the Fleiss table are formed, and what the automatic verdict
of each item kind is.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from evaluators.metrics.agreement import (
    AGREEMENT_RESAMPLES, MIN_ITEMS, AgreementFigure, agreement_figure, cohen_kappa_ci, fleiss_kappa_ci,
    krippendorff_alpha_ci, mean_pairwise_cohen_kappa_ci,
)
from evaluators.review.items import automatic_score
from evaluators.review.labels import human_verdict


def _figure_fields(fig: AgreementFigure) -> dict[str, Any]:
    """The interval fields of a figure, flat, for a table row."""
    return {"ci_low": fig.ci_low, "ci_high": fig.ci_high, "meaningful": fig.meaningful, "note": fig.note}


def session_agreement(decisions: Sequence[Any], *, n_resamples: int = AGREEMENT_RESAMPLES,
                      seed: int = 0) -> dict[str, Any]:
    """Agreement of a session's submitted decisions, for the labels and for the 1-5 scores.

    Every figure comes with a 95% percentile bootstrap interval over its items and the number
    of items behind it, and is flagged under :data:`~evaluators.metrics.agreement.MIN_ITEMS`
    items (:class:`~evaluators.metrics.agreement.AgreementFigure`).

    Parameters
    ----------
    decisions : sequence of :class:`~evaluators.review.store.Decision`
    n_resamples : int
        Bootstrap resamples per interval (0: none).
    seed : int

    Returns
    -------
    dict
        ``{"label": {...}, "score": {...}}``, each with ``n_items`` (items rated by two or more
        annotators), ``n_annotators``, ``cohen_kappa_mean`` (mean over annotator pairs with
        shared items; quadratic weights for scores) and ``pairs`` (each with ``n_items``,
        ``cohen_kappa``, ``ci_low``, ``ci_high``, ``meaningful``, ``note``), ``fleiss_kappa``
        (over the items rated by the most common number of raters, ``fleiss_items``) and
        ``krippendorff_alpha`` (nominal for labels, ordinal for scores); ``figures`` maps
        ``cohen_kappa_mean``, ``fleiss_kappa`` and ``krippendorff_alpha`` to their
        :class:`~evaluators.metrics.agreement.AgreementFigure` as a dict; ``meaningful`` is
        false while fewer than ``MIN_ITEMS`` items have two reviews.
    """
    settings = {"n_resamples": n_resamples, "seed": seed}
    out: dict[str, Any] = {}
    for field, level, weights in (("label", "nominal", None), ("score", "ordinal", "quadratic")):
        ratings: dict[int, dict[str, Any]] = {}
        for d in decisions:
            value = getattr(d, field)
            if d.status == "submitted" and value is not None:
                ratings.setdefault(d.item_id, {})[d.annotator] = value
        shared = {i: r for i, r in ratings.items() if len(r) >= 2}
        annotators = sorted({a for r in ratings.values() for a in r})
        pairs = []
        for x, y in combinations(annotators, 2):
            both = [r for r in shared.values() if x in r and y in r]
            if both:
                fig = cohen_kappa_ci([r[x] for r in both], [r[y] for r in both], weights=weights, **settings)
                if fig.value is not None:
                    pairs.append({"a": x, "b": y, "n_items": len(both), "cohen_kappa": fig.value,
                                  **_figure_fields(fig)})
        table: list[list[int]] = []
        fleiss_items = None
        if shared:
            counts = [len(r) for r in shared.values()]
            modal = max(set(counts), key=lambda c: (counts.count(c), c))
            rows = [r for r in shared.values() if len(r) == modal]
            categories = sorted({v for r in rows for v in r.values()})
            table = [[list(r.values()).count(c) for c in categories] for r in rows]
            fleiss_items = len(rows)
        data = [[shared[i].get(a) for i in sorted(shared)] for a in annotators]
        figures = {"cohen_kappa_mean": mean_pairwise_cohen_kappa_ci(data, weights=weights, **settings),
                   "fleiss_kappa": fleiss_kappa_ci(table, **settings),
                   "krippendorff_alpha": krippendorff_alpha_ci(data, level, **settings)}
        out[field] = {
            "n_items": len(shared), "n_annotators": len(annotators),
            "cohen_kappa_mean": figures["cohen_kappa_mean"].value,
            "pairs": pairs, "fleiss_kappa": figures["fleiss_kappa"].value, "fleiss_items": fleiss_items,
            "krippendorff_alpha": figures["krippendorff_alpha"].value, "level": level,
            "figures": {name: fig.to_dict() for name, fig in figures.items()},
            "meaningful": len(shared) >= MIN_ITEMS,
        }
    return out


def automatic_agreement(items: Sequence[Any], decisions: Sequence[Any], *, threshold: float = 0.5,
                        n_resamples: int = AGREEMENT_RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """Agreement of the automatic verdict (metric or LLM judge) with each human, beside human vs human.

    A human ``acceptable_variant`` or ``correct`` counts as correct (1) and ``model_error`` as wrong (0); a
    ``gt_error`` is left out (the reference itself is disputed).  The automatic verdict is correct
    when its score (exact match, judge score, combined or keyword score by item kind) is at least
    ``threshold``.  Every figure carries a 95% bootstrap interval over its items and a flag
    under :data:`~evaluators.metrics.agreement.MIN_ITEMS` items, as :func:`session_agreement`.

    Returns
    -------
    dict
        ``source`` (what the automatic verdict is), ``threshold``, ``per_annotator``: rows with
        ``annotator``, ``n_items``, ``accuracy`` (share of items where the two agree) and
        ``cohen_kappa``, each with ``*_ci_low`` / ``*_ci_high``, and ``meaningful`` / ``note``;
        ``krippendorff_alpha`` (nominal) over the humans and the automatic verdict as one more
        rater, with ``n_items``; ``human_kappa``: the reviewers' mean pairwise Cohen's kappa on the
        **same two labels** (right = ``acceptable_variant`` or ``correct``, wrong = ``model_error``; ``gt_error``
        left out), the ceiling to read the automatic verdict's kappa against (the session's own
        agreement figures use all three labels: a different, lower-chance-agreement scale), with
        ``labels`` naming that set; ``figures``: the alpha's and the ceiling's
        :class:`~evaluators.metrics.agreement.AgreementFigure` as dicts.
    """
    auto: dict[int, int] = {}
    source = None
    for item in items:
        value, what = automatic_score(item.payload)
        source = source or what
        if value is not None:
            auto[item.id] = int(value >= threshold)
    human: dict[str, dict[int, int]] = {}
    for d in decisions:
        if d.status == "submitted" and human_verdict(d.label) is not None and d.item_id in auto:
            human.setdefault(d.annotator, {})[d.item_id] = human_verdict(d.label)
    settings = {"n_resamples": n_resamples, "seed": seed}
    rows = []
    for annotator, ratings in sorted(human.items()):
        ids = sorted(ratings)
        a, h = [auto[i] for i in ids], [ratings[i] for i in ids]
        same = np.asarray([x == y for x, y in zip(a, h)], dtype=float)
        accuracy = agreement_figure("accuracy", float(same.mean()), len(ids), lambda w, s=same: (w @ s) / s.size,
                                    **settings)
        kappa = cohen_kappa_ci(a, h, **settings)
        rows.append({"annotator": annotator, "n_items": len(ids),
                     "accuracy": accuracy.value, "accuracy_ci_low": accuracy.ci_low,
                     "accuracy_ci_high": accuracy.ci_high, "cohen_kappa": kappa.value,
                     "cohen_kappa_ci_low": kappa.ci_low, "cohen_kappa_ci_high": kappa.ci_high,
                     "meaningful": accuracy.meaningful, "note": accuracy.note or kappa.note})
    rated = sorted({i for r in human.values() for i in r})
    data = [[auto[i] for i in rated]] + [[r.get(i) for i in rated] for r in human.values()]
    alpha = krippendorff_alpha_ci(data, "nominal", **settings)
    # the people with each other on the same two labels (items two or more of them rated right / wrong)
    both = [i for i in rated if sum(i in r for r in human.values()) >= 2]
    ceiling = mean_pairwise_cohen_kappa_ci([[r.get(i) for i in both] for r in human.values()], **settings)
    return {"source": source, "threshold": threshold, "per_annotator": rows,
            "krippendorff_alpha": alpha.value if rated else None, "n_items": len(rated),
            "human_kappa": ceiling.value if both else None, "human_kappa_items": len(both),
            "labels": "right (acceptable_variant or correct) / wrong (model_error); gt_error left out",
            "figures": {"krippendorff_alpha": alpha.to_dict(), "human_kappa": ceiling.to_dict()}}
