"""Inter-annotator agreement: Cohen's kappa (plain and weighted), Fleiss' kappa, Krippendorff's alpha.

Definitions, each checked against its reference library in the tests:

- :func:`cohen_kappa`: Cohen (1960); linear / quadratic weights as Cohen (1968).  Equals
  ``sklearn.metrics.cohen_kappa_score(a, b, weights=...)``.
- :func:`fleiss_kappa`: Fleiss (1971), every item rated by the same number of raters.  Equals
  ``statsmodels.stats.inter_rater.fleiss_kappa(table)``.
- :func:`krippendorff_alpha`: Krippendorff (2011), "Computing Krippendorff's alpha-reliability",
  from the coincidence matrix; missing ratings allowed; nominal, ordinal and interval
  distances.  Equals ``krippendorff.alpha(reliability_data, level_of_measurement=...)``.

:func:`session_agreement` applies them to a review session's submitted decisions: the labels
(nominal) and the 1-5 scores (ordinal), with the number of items behind each figure.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import combinations
from typing import Any

import numpy as np


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable], *, weights: str | None = None,
                labels: Sequence[Hashable] | None = None) -> float | None:
    """Cohen's kappa of two raters on the same items.

    Parameters
    ----------
    a, b : sequence, shape (n,)
        Ratings paired by position.
    weights : {None, "linear", "quadratic"}
        Disagreement weights ``|i - j|`` or ``(i - j)²`` over the label order (ordinal ratings).
    labels : sequence, optional
        Label order (default: sorted union, as scikit-learn).

    Returns
    -------
    float or None
        In [-1, 1]; ``None`` when chance disagreement is 0 (one label only) or no item.

    Raises
    ------
    ValueError
        For sequences of different lengths or an unknown ``weights``.
    """
    if len(a) != len(b):
        raise ValueError("the two raters must rate the same items")
    if not len(a):
        return None
    labels = list(labels) if labels is not None else sorted(set(a) | set(b))
    index = {v: i for i, v in enumerate(labels)}
    k = len(labels)
    confusion = np.zeros((k, k))
    for x, y in zip(a, b):
        confusion[index[x], index[y]] += 1
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    elif weights == "quadratic":
        w = ((i - j) ** 2).astype(float)
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    denominator = float((w * expected).sum())
    return None if denominator == 0 else 1.0 - float((w * confusion).sum()) / denominator


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from a items x categories table of rating counts.

    Parameters
    ----------
    table : array-like of int, shape (items, categories)
        ``table[i][j]``: raters who put item ``i`` in category ``j``; every row sums to the same
        number of raters (at least 2).

    Returns
    -------
    float or None
        ``None`` when chance agreement is 1 (one category only) or no item.

    Raises
    ------
    ValueError
        Rows with different totals or fewer than 2 raters.
    """
    t = np.asarray(table, dtype=float)
    if t.size == 0:
        return None
    raters = t.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of raters for every item")
    n, m = t.shape[0], raters[0]
    p_j = t.sum(axis=0) / (n * m)
    p_i = ((t * t).sum(axis=1) - m) / (m * (m - 1))
    p_bar, p_e = p_i.mean(), float((p_j ** 2).sum())
    return None if p_e == 1 else float((p_bar - p_e) / (1 - p_e))


def krippendorff_alpha(reliability_data: Sequence[Sequence[Any]], level: str = "nominal") -> float | None:
    """Krippendorff's alpha of raters x units data with missing values.

    Parameters
    ----------
    reliability_data : array-like, shape (raters, units)
        A rating, or ``None`` / NaN where a rater did not rate a unit.  Ordinal and interval
        levels need numbers (ordinal: the order of the values present).
    level : {"nominal", "ordinal", "interval"}

    Returns
    -------
    float or None
        ``None`` when fewer than two pairable values exist or there is no variation at all.

    Raises
    ------
    ValueError
        Unknown level.
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"level must be nominal, ordinal or interval, not {level!r}")
    units: list[list[Any]] = []
    n_units = max((len(r) for r in reliability_data), default=0)
    for u in range(n_units):
        values = [r[u] for r in reliability_data if u < len(r) and r[u] is not None
                  and not (isinstance(r[u], float) and np.isnan(r[u]))]
        if len(values) >= 2:
            units.append(values)
    domain = sorted({v for values in units for v in values})
    if len(domain) < 1 or not units:
        return None
    index = {v: i for i, v in enumerate(domain)}
    k = len(domain)
    o = np.zeros((k, k))
    for values in units:
        m = len(values)
        for x in range(m):
            for y in range(m):
                if x != y:
                    o[index[values[x]], index[values[y]]] += 1.0 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    elif level == "interval":
        v = np.asarray(domain, dtype=float)
        delta = (v[:, None] - v[None, :]) ** 2
    else:
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        delta = np.zeros((k, k))
        for c in range(k):
            for d in range(k):
                lo, hi = min(c, d), max(c, d)
                delta[c, d] = (cum[hi + 1] - cum[lo] - (n_c[c] + n_c[d]) / 2) ** 2
    expected = float((np.outer(n_c, n_c) * delta).sum())
    if expected == 0 or n <= 1:
        return None
    return 1.0 - (n - 1) * float((o * delta).sum()) / expected


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
