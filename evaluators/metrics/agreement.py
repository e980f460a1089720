"""Agreement statistics: Cohen's kappa (plain and weighted), Fleiss' kappa, Krippendorff's alpha.

The one home of these definitions; classification (kappa of a confusion matrix), review
(annotators) and memory (judge against stored labels) call them.  Each is checked against its
reference library in ``tests/unit/test_agreement.py``:

- :func:`cohen_kappa` / :func:`cohen_kappa_from_counts`: Cohen (1960); linear and quadratic
  weights as Cohen (1968).  Equals ``sklearn.metrics.cohen_kappa_score(a, b, weights=...)``.
- :func:`fleiss_kappa`: Fleiss (1971), every item rated by the same number of raters.  Equals
  ``statsmodels.stats.inter_rater.fleiss_kappa(table)``.
- :func:`krippendorff_alpha`: Krippendorff (2011), "Computing Krippendorff's alpha-reliability",
  from the coincidence matrix; missing ratings allowed; nominal, ordinal and interval
  distances.  Equals ``krippendorff.alpha(reliability_data, level_of_measurement=...)``.

Undefined values (no item, or chance agreement 1) are ``None``, where the reference libraries
give NaN.

References
----------
- J. Cohen. 1960. "A Coefficient of Agreement for Nominal Scales". Educational and
  Psychological Measurement 20(1).
- J. Cohen. 1968. "Weighted kappa". Psychological Bulletin 70(4).
- J. L. Fleiss. 1971. "Measuring nominal scale agreement among many raters". Psychological
  Bulletin 76(5).
- K. Krippendorff. 2011. "Computing Krippendorff's Alpha-Reliability". Annenberg School for
  Communication, University of Pennsylvania.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")


def sorted_labels(values: Iterable[Hashable]) -> list:
    """The distinct values sorted (mixed types: by type name, then text), scikit-learn's label order."""
    uniq = set(values)
    try:
        return sorted(uniq)
    except TypeError:
        return sorted(uniq, key=lambda v: (type(v).__name__, str(v)))


def cohen_kappa_from_counts(counts: Sequence[Sequence[int]], *, weights: str | None = None) -> float | None:
    """Cohen's kappa of a confusion matrix of two raters.

    ``kappa = 1 - sum(w * O) / sum(w * E)`` with ``O`` the observed counts, ``E`` the counts
    expected from the margins (``row_i * col_j / n``) and ``w`` the disagreement weights: 0 on
    the diagonal and 1 elsewhere (plain), ``|i - j|`` (linear) or ``(i - j)²`` (quadratic) over
    the label order.  Computed in integers up to one division, so hand-derived fractions come
    out exactly.

    Parameters
    ----------
    counts : array-like of int, shape (k, k)
        Rows: rater A's labels, columns: rater B's labels, in one label order.
    weights : {None, "linear", "quadratic"}

    Returns
    -------
    float or None
        In [-1, 1]; ``None`` when there is no item or the chance disagreement is 0 (every
        rating in one label; scikit-learn returns NaN).

    Raises
    ------
    ValueError
        For a matrix that is not square, negative counts or an unknown ``weights``.

    References
    ----------
    Cohen (1960); weights: Cohen (1968); ``sklearn.metrics.cohen_kappa_score``.
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    m = [[int(c) for c in row] for row in counts]
    k = len(m)
    if any(len(row) != k for row in m) or any(c < 0 for row in m for c in row):
        raise ValueError("counts must be a square matrix of non-negative counts")
    n = sum(map(sum, m))
    if n == 0:
        return None
    rows = [sum(r) for r in m]
    cols = [sum(m[i][j] for i in range(k)) for j in range(k)]

    def w(i: int, j: int) -> int:
        if weights is None:
            return int(i != j)
        return abs(i - j) if weights == "linear" else (i - j) ** 2

    observed = sum(w(i, j) * m[i][j] for i in range(k) for j in range(k) if i != j)
    expected = sum(w(i, j) * rows[i] * cols[j] for i in range(k) for j in range(k) if i != j)  # n * sum(w E)
    return None if expected == 0 else 1.0 - n * observed / expected


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable], *, weights: str | None = None,
                labels: Sequence[Hashable] | None = None) -> float | None:
    """Cohen's kappa of two raters on the same items.

    Parameters
    ----------
    a, b : sequence of hashable, shape (n,)
        Ratings paired by position.
    weights : {None, "linear", "quadratic"}
        Disagreement weights ``|i - j|`` or ``(i - j)²`` over the label order (ordinal ratings).
    labels : sequence, optional
        Label order (default: the sorted union, as scikit-learn).  Pairs with a label outside
        it are left out, as scikit-learn does.

    Returns
    -------
    float or None
        In [-1, 1]; ``None`` when chance disagreement is 0 (one label only) or no item.

    Raises
    ------
    ValueError
        For sequences of different lengths or an unknown ``weights``.

    References
    ----------
    Cohen (1960); Cohen (1968); ``sklearn.metrics.cohen_kappa_score``.
    """
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"the two raters must rate the same items: {len(a)} vs {len(b)} ratings")
    labels = list(labels) if labels is not None else sorted_labels(a + b)
    index = {v: i for i, v in enumerate(labels)}
    k = len(labels)
    counts = [[0] * k for _ in range(k)]
    for x, y in zip(a, b):
        i, j = index.get(x), index.get(y)
        if i is not None and j is not None:
            counts[i][j] += 1
    return cohen_kappa_from_counts(counts, weights=weights)


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from an items x categories table of rating counts.

    Parameters
    ----------
    table : array-like of int, shape (items, categories)
        ``table[i][j]``: raters who put item ``i`` in category ``j``; every row sums to the same
        number of raters (at least 2).

    Returns
    -------
    float or None
        ``(P_bar - P_e) / (1 - P_e)``; ``None`` when chance agreement ``P_e`` is 1 (one category
        only) or no item.

    Raises
    ------
    ValueError
        Rows with different totals or fewer than 2 raters.

    References
    ----------
    Fleiss (1971); ``statsmodels.stats.inter_rater.fleiss_kappa``.
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


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


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
        ``1 - (n - 1) * sum(o * delta) / sum(n_c n_k delta)`` over the coincidence matrix ``o``
        of the units with two or more ratings; ``None`` when no unit has two ratings or there
        is no variation at all.

    Raises
    ------
    ValueError
        Unknown level.

    References
    ----------
    Krippendorff (2011); ``krippendorff.alpha(reliability_data, level_of_measurement=...)``.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be nominal, ordinal or interval, not {level!r}")
    units: list[list[Any]] = []
    n_units = max((len(r) for r in reliability_data), default=0)
    for u in range(n_units):
        values = [r[u] for r in reliability_data if u < len(r) and not _missing(r[u])]
        if len(values) >= 2:
            units.append(values)
    domain = sorted({v for values in units for v in values})
    if not domain:
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
