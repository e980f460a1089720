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

from evaluators.metrics.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha


def session_agreement(decisions: Sequence[Any]) -> dict[str, Any]:
    """Agreement of a session's submitted decisions, for the labels and for the 1-5 scores.

    Parameters
    ----------
    decisions : sequence of :class:`~evaluators.review.store.Decision`

    Returns
    -------
    dict
        ``{"label": {...}, "score": {...}}``, each with ``n_items`` (items rated by two or more
        annotators), ``n_annotators``, ``cohen_kappa_mean`` (mean over annotator pairs with
        shared items; quadratic weights for scores) and ``pairs``, ``fleiss_kappa`` (over the
        items rated by the most common number of raters, ``fleiss_items``) and
        ``krippendorff_alpha`` (nominal for labels, ordinal for scores).
    """
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
                kappa = cohen_kappa([r[x] for r in both], [r[y] for r in both], weights=weights)
                if kappa is not None:
                    pairs.append({"a": x, "b": y, "n_items": len(both), "cohen_kappa": kappa})
        fleiss = fleiss_items = None
        if shared:
            counts = [len(r) for r in shared.values()]
            modal = max(set(counts), key=lambda c: (counts.count(c), c))
            rows = [r for r in shared.values() if len(r) == modal]
            categories = sorted({v for r in rows for v in r.values()})
            table = [[list(r.values()).count(c) for c in categories] for r in rows]
            fleiss, fleiss_items = fleiss_kappa(table), len(rows)
        data = [[shared[i].get(a) for i in sorted(shared)] for a in annotators]
        out[field] = {
            "n_items": len(shared), "n_annotators": len(annotators),
            "cohen_kappa_mean": float(np.mean([p["cohen_kappa"] for p in pairs])) if pairs else None,
            "pairs": pairs, "fleiss_kappa": fleiss, "fleiss_items": fleiss_items,
            "krippendorff_alpha": krippendorff_alpha(data, level) if shared else None, "level": level,
        }
    return out


#: Where an item keeps its automatic verdict, by item kind: (payload path, what it is).
AUTOMATIC = {"qa": (("exact_match",), "exact match"), "memory": (("scores", "judge_score"), "LLM judge"),
             "dialogue": (("combined",), "combined score"), "testsets": (("score",), "keyword score")}


def _automatic(payload: dict) -> tuple[float | None, str | None]:
    path, what = AUTOMATIC.get(payload.get("kind", ""), ((), None))
    value: Any = payload
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return (float(value), what) if isinstance(value, (int, float)) and not isinstance(value, bool) else (None, what)


def automatic_agreement(items: Sequence[Any], decisions: Sequence[Any], *, threshold: float = 0.5) -> dict[str, Any]:
    """Agreement of the automatic verdict (metric or LLM judge) with each human, beside human vs human.

    A human ``acceptable_variant`` counts as correct (1) and ``model_error`` as wrong (0); a
    ``gt_error`` is left out (the reference itself is disputed).  The automatic verdict is correct
    when its score (exact match, judge score, combined or keyword score by item kind) is at least
    ``threshold``.

    Returns
    -------
    dict
        ``source`` (what the automatic verdict is), ``threshold``, ``per_annotator``: rows with
        ``annotator``, ``n_items``, ``accuracy`` (share of items where the two agree) and
        ``cohen_kappa``; ``krippendorff_alpha`` (nominal) over the humans and the automatic
        verdict as one more rater, with ``n_items``.
    """
    auto: dict[int, int] = {}
    source = None
    for item in items:
        value, what = _automatic(item.payload)
        source = source or what
        if value is not None:
            auto[item.id] = int(value >= threshold)
    human: dict[str, dict[int, int]] = {}
    for d in decisions:
        if d.status == "submitted" and d.label in ("acceptable_variant", "model_error") and d.item_id in auto:
            human.setdefault(d.annotator, {})[d.item_id] = int(d.label == "acceptable_variant")
    rows = []
    for annotator, ratings in sorted(human.items()):
        ids = sorted(ratings)
        a, h = [auto[i] for i in ids], [ratings[i] for i in ids]
        rows.append({"annotator": annotator, "n_items": len(ids),
                     "accuracy": sum(x == y for x, y in zip(a, h)) / len(ids), "cohen_kappa": cohen_kappa(a, h)})
    rated = sorted({i for r in human.values() for i in r})
    data = [[auto[i] for i in rated]] + [[r.get(i) for i in rated] for r in human.values()]
    return {"source": source, "threshold": threshold, "per_annotator": rows,
            "krippendorff_alpha": krippendorff_alpha(data, "nominal") if rated else None, "n_items": len(rated)}
