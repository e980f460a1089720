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
- :func:`mean_pairwise_cohen_kappa`: the mean over rater pairs of Cohen's kappa on the items
  both rated (Light 1971 for complete data).

Each has a ``*_ci`` twin returning an :class:`AgreementFigure`: the value with a percentile
bootstrap interval over items (95%, :data:`AGREEMENT_RESAMPLES` resamples, seeded), the number
of items behind it, and ``meaningful = False`` under :data:`MIN_ITEMS` items.

How the resamples are drawn (Efron & Tibshirani 1993): every statistic here depends on the
items only through how many items show each distinct *pattern* (Cohen: the cell of the two
raters' labels, a k x k table; Fleiss: an item's row of category counts; Krippendorff: a unit's
multiset of values; the mean of pairwise kappas: an item's ratings by every rater; accuracy:
agree or not).  Resampling n items with replacement gives pattern counts distributed as
``Multinomial(n, observed pattern frequencies)``, so each resample is drawn as those counts
(``rng.multinomial``, all resamples at once) and the statistic is evaluated on weighted
patterns: cost O(resamples x patterns) instead of O(resamples x items), the same bootstrap
distribution.  With many distinct patterns (more than ``n / COUNTS_RATIO``: continuous or
many-valued ratings on few items) the items are drawn by index as before
(:func:`evaluators.metrics.statistics.pattern_resample_weights`); the ``*_codes_ci`` /
``*_table_ci`` / ``*_counts_ci`` variants take ratings already coded as integers, so a review
session of 100,000 items is summarised with numpy, not a Python loop per item.

Undefined values (no item, or chance agreement 1) are ``None``, where the reference libraries
give NaN.

References
----------
- J. Cohen. 1960. "A Coefficient of Agreement for Nominal Scales". Educational and
  Psychological Measurement 20(1).
- J. Cohen. 1968. "Weighted kappa". Psychological Bulletin 70(4).
- J. L. Fleiss. 1971. "Measuring nominal scale agreement among many raters". Psychological
  Bulletin 76(5).
- R. J. Light. 1971. "Measures of response agreement for qualitative data". Psychological
  Bulletin 76(5).
- B. Efron, R. Tibshirani. 1993. *An Introduction to the Bootstrap*, ch. 13 (percentile interval).
- K. Krippendorff. 2011. "Computing Krippendorff's Alpha-Reliability". Annenberg School for
  Communication, University of Pennsylvania.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from evaluators.metrics.statistics import bootstrap_statistic_ci
from evaluators.results import DictMixin

WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")

#: Below this many items an agreement figure is flagged as not yet meaningful.
MIN_ITEMS = 30
#: Bootstrap resamples behind an agreement interval.
AGREEMENT_RESAMPLES = 2000


def sorted_labels(values: Iterable[Hashable]) -> list:
    """The distinct values sorted (mixed types: by type name, then text), scikit-learn's label order.

    Parameters
    ----------
    values : iterable of hashable
        Labels, repeated or not.

    Returns
    -------
    list
        Each distinct label once, sorted; labels of types that do not compare with each other are
        ordered by ``(type name, str(label))``.

    Examples
    --------
    >>> sorted_labels(["F", "T", "F", 1])
    [1, 'F', 'T']
    """
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
    cells, k = _pair_cells(a, b, labels)
    counts = np.bincount(cells, minlength=k * k).reshape(k, k).tolist() if k else []
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
    t = _fleiss_table(table)
    if t is None:
        return None
    value = _fleiss_batch(t, np.ones((1, t.shape[0])))[0]
    return None if np.isnan(value) else float(value)


def _fleiss_table(table) -> np.ndarray | None:
    t = np.asarray(table, dtype=float)
    if t.size == 0:
        return None
    raters = t.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of raters for every item")
    return t


def _fleiss_batch(t: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of the rows of ``t`` weighted by ``w`` (shape (B, rows): draw counts of items, or of
    distinct rows standing for the items that show them), NaN where P_e = 1."""
    m = t[0].sum()
    n = w.sum(axis=1)  # items in each resample
    p_j = (w @ t) / (n * m)[:, None]
    p_i = ((t * t).sum(axis=1) - m) / (m * (m - 1))
    p_bar, p_e = (w @ p_i) / n, (p_j ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p_e == 1, np.nan, (p_bar - p_e) / (1 - p_e))


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
    counts, domain = _pairable_units(reliability_data, level)
    if counts is None:
        return None
    value = _alpha_batch(_coincidences(counts, np.ones((1, counts.shape[0]))), domain, level)[0]
    return None if np.isnan(value) else float(value)


def _pairable_units(reliability_data: Sequence[Sequence[Any]], level: str) -> tuple[np.ndarray | None, list]:
    """Value counts (units x values) of the units with two or more ratings, and the sorted values."""
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
        return None, domain
    index = {v: i for i, v in enumerate(domain)}
    counts = np.zeros((len(units), len(domain)))
    for u, values in enumerate(units):
        for v in values:
            counts[u, index[v]] += 1
    return counts, domain


def _coincidences(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Coincidence matrices (B, k, k) of the units weighted by ``w`` (B, units).

    A unit with value counts ``c`` and ``m = sum(c)`` ratings adds ``(c_c c_d - [c = d] c_c) / (m - 1)``
    (every ordered pair of its ratings, weight ``1 / (m - 1)``; Krippendorff 2011, sec. C).
    """
    units, k = counts.shape
    m = counts.sum(axis=1)
    per_unit = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / (m - 1)[:, None, None]
    return (w @ per_unit.reshape(units, k * k)).reshape(-1, k, k)


def _alpha_batch(o: np.ndarray, domain: list, level: str) -> np.ndarray:
    """Krippendorff's alpha of coincidence matrices ``o`` (B, k, k); NaN where undefined."""
    k = len(domain)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    if level == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(k), o.shape)
    elif level == "interval":
        v = np.asarray(domain, dtype=float)
        delta = np.broadcast_to((v[:, None] - v[None, :]) ** 2, o.shape)
    else:  # ordinal: (sum of the counts from c to d, less half of the two ends)²
        cum = np.concatenate([np.zeros((o.shape[0], 1)), np.cumsum(n_c, axis=1)], axis=1)
        idx = np.arange(k)
        lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
        delta = (cum[:, hi + 1] - cum[:, lo] - (n_c[:, :, None] + n_c[:, None, :]) / 2) ** 2
    expected = (n_c[:, :, None] * n_c[:, None, :] * delta).sum(axis=(1, 2))
    observed = (o * delta).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((expected == 0) | (n <= 1), np.nan, 1.0 - (n - 1) * observed / expected)


# --------------------------------------------------------------------------- intervals


@dataclass(frozen=True)
class AgreementFigure(DictMixin):
    """One agreement figure with its bootstrap interval over items.

    Attributes
    ----------
    statistic : str
        ``cohen_kappa``, ``cohen_kappa_mean``, ``fleiss_kappa``, ``krippendorff_alpha``,
        ``accuracy`` ...
    value : float or None
        The figure on all items; ``None`` when undefined (``note`` says why).
    ci_low, ci_high : float or None
        Percentile bootstrap interval (items resampled with replacement); ``None`` when the
        value is undefined, when no resample was asked for, or when the statistic is undefined
        on more than half of the resamples.
    n_items : int
        Items behind the figure (the unit that is resampled).
    meaningful : bool
        ``n_items >= MIN_ITEMS`` and a defined value.
    note : str or None
        Why the figure is not meaningful, for display.
    method : str
        How the interval was made.
    """

    statistic: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    meaningful: bool
    note: str | None
    method: str


def agreement_figure(statistic: str, value: float | None, n_items: int,
                     resampled: Callable[[np.ndarray], np.ndarray], *, n_resamples: int = AGREEMENT_RESAMPLES,
                     confidence_level: float = 0.95, seed: int = 0, min_items: int = MIN_ITEMS,
                     patterns: np.ndarray | None = None) -> AgreementFigure:
    """An agreement figure with its percentile bootstrap interval over its ``n_items`` items.

    Parameters
    ----------
    statistic : str
        Its name.
    value : float or None
        The statistic on all items.
    n_items : int
    resampled : callable
        ``resampled(weights) -> values``: the statistic for each row of ``weights``, shape
        (block, n_items), the draw counts of a resample (NaN where undefined); with ``patterns``
        shape (block, P), the draw counts per pattern; see
        :func:`evaluators.metrics.statistics.bootstrap_statistic_ci`.
    n_resamples : int
        0 for no interval.
    confidence_level : float
    seed : int
    min_items : int
        Fewer items than this: ``meaningful`` is false.
    patterns : numpy.ndarray of int, shape (n_items,), optional
        Each item's pattern (``numpy.unique``'s inverse) when the statistic depends on the items
        only through the pattern counts: the resamples are drawn as multinomial pattern counts
        (module docstring).

    Returns
    -------
    AgreementFigure

    References
    ----------
    Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile interval).
    """
    low = high = None
    method = (f"bootstrap(percentile, items resampled, n_resamples={n_resamples}, level={confidence_level:g}, "
              f"seed={seed})")
    if value is not None and n_items and n_resamples:
        low, high, _ = bootstrap_statistic_ci(n_items, resampled, n_resamples=n_resamples,
                                              confidence_level=confidence_level, seed=seed, patterns=patterns)
    elif not n_resamples:
        method = "no interval (n_resamples=0)"
    if value is None:
        note = "undefined: no items" if not n_items else "undefined: no variation (chance agreement 1)"
    elif n_items < min_items:
        note = f"not yet meaningful: {n_items} item{'s' if n_items != 1 else ''} (fewer than {min_items})"
    else:
        note = None
    return AgreementFigure(statistic, value, low, high, n_items, value is not None and n_items >= min_items, note,
                           method)


def _weight_matrix(k: int, weights: str | None) -> np.ndarray:
    i, j = np.indices((k, k))
    if weights is None:
        return (i != j).astype(float)
    return np.abs(i - j).astype(float) if weights == "linear" else ((i - j) ** 2).astype(float)


def _kappa_batch(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cohen's kappa of confusion matrices ``counts`` (B, k, k) with disagreement weights ``w``; NaN where undefined.

    The formula of :func:`cohen_kappa_from_counts`, in floating point over a stack.
    """
    n = counts.sum(axis=(1, 2))
    observed = (counts * w).sum(axis=(1, 2))
    expected = np.einsum("bi,ij,bj->b", counts.sum(axis=2), w, counts.sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected == 0, np.nan, 1.0 - n * observed / expected)


def row_patterns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-D array and each row's pattern: ``numpy.unique(rows, axis=0, return_inverse=True)``.

    Rows of small non-negative-span integers (codes, counts) are first packed into one int64 key
    each (first column most significant, so the order is the same lexicographic one) and sorted
    as plain integers, many times faster than the row sort of ``axis=0``.

    Parameters
    ----------
    rows : array-like, shape (n, m)

    Returns
    -------
    (distinct, inverse)
        ``distinct`` shape (P, m) in lexicographic order, ``inverse`` shape (n,) with
        ``distinct[inverse] == rows``.

    Raises
    ------
    ValueError
        ``rows`` is not 2-D.
    """
    m = np.asarray(rows)
    if m.ndim != 2:
        raise ValueError(f"rows must be a 2-D array, not of shape {m.shape}")
    if not m.size:
        distinct, inverse = np.unique(m, axis=0, return_inverse=True)
        return distinct, inverse.ravel()
    lo, hi = m.min(), m.max()
    span = int(hi - lo) + 1 if np.all(np.isfinite([lo, hi])) else 0
    if span and np.array_equal(m, np.round(m)) and m.shape[1] * np.log2(span) < 62:
        digits = (m - lo).astype(np.int64)
        keys = digits @ (span ** np.arange(m.shape[1] - 1, -1, -1, dtype=np.int64))
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return m[first], inverse.ravel()
    distinct, inverse = np.unique(m, axis=0, return_inverse=True)
    return distinct, inverse.ravel()


def _pair_cells(a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None):
    """Kept pairs' cell ids in a k x k matrix over ``labels`` (default the sorted union) and k."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"the two raters must rate the same items: {len(a)} vs {len(b)} ratings")
    labels = list(labels) if labels is not None else sorted_labels(a + b)
    index = {v: i for i, v in enumerate(labels)}
    k = len(labels)
    cells = [index[x] * k + index[y] for x, y in zip(a, b) if x in index and y in index]
    return np.asarray(cells, dtype=np.int64), k


def _cells_resampled(cells: np.ndarray, k: int, w_matrix: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Kappa of weighted cells: ``resampled(w)`` with ``w`` (B, len(cells)) the weight of each listed cell
    (an item, or a pattern standing for the items that show it)."""
    onehot = np.zeros((cells.size, k * k))
    onehot[np.arange(cells.size), cells] = 1.0

    def resampled(w: np.ndarray) -> np.ndarray:
        return _kappa_batch((w @ onehot).reshape(-1, k, k), w_matrix)

    return resampled


def _cohen_figure(cells: np.ndarray, k: int, weights: str | None, settings: dict,
                  by_patterns: bool = True) -> AgreementFigure:
    """The Cohen figure of pairs coded as cells ``a * k + b`` (item order), resampled as cell counts
    (``by_patterns``) or as items."""
    if not cells.size:
        return agreement_figure("cohen_kappa", None, 0, lambda w: w[:, 0], **settings)
    value = cohen_kappa_from_counts(np.bincount(cells, minlength=k * k).reshape(k, k), weights=weights)
    if not by_patterns:
        return agreement_figure("cohen_kappa", value, int(cells.size), _cells_resampled(cells, k, _weight_matrix(k, weights)),
                                **settings)
    distinct, inverse = np.unique(cells, return_inverse=True)
    return agreement_figure("cohen_kappa", value, int(cells.size), _cells_resampled(distinct, k, _weight_matrix(k, weights)),
                            patterns=inverse, **settings)


def cohen_kappa_ci(a: Sequence[Hashable], b: Sequence[Hashable], *, weights: str | None = None,
                   labels: Sequence[Hashable] | None = None, n_resamples: int = AGREEMENT_RESAMPLES,
                   confidence_level: float = 0.95, seed: int = 0, min_items: int = MIN_ITEMS,
                   by_patterns: bool = True) -> AgreementFigure:
    """:func:`cohen_kappa` with a percentile bootstrap interval over the rated items.

    Each resample draws the n (a, b) pairs with replacement and computes the kappa over the
    same label order as the full data (``labels``, default the sorted union), so weighted
    kappas keep their weights when a label is missing from a resample.

    Parameters
    ----------
    a, b, weights, labels
        As :func:`cohen_kappa`.
    n_resamples, confidence_level, seed, min_items
        As :func:`agreement_figure`.
    by_patterns : bool
        True (default): resamples drawn as multinomial counts of the k x k cells when there are few
        (module docstring); False: the items drawn by index as
        :func:`evaluators.metrics.statistics.resample_weights` draws them, the same resamples as
        other figures of the same items and seed (the judge lab's figures share them).

    Returns
    -------
    AgreementFigure
        ``statistic="cohen_kappa"``; ``n_items`` counts the pairs (inside ``labels``).

    Raises
    ------
    ValueError
        As :func:`cohen_kappa`.

    References
    ----------
    Cohen (1960); weights: Cohen (1968); interval: Efron & Tibshirani (1993), ch. 13.
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    labels = list(labels) if labels is not None else sorted_labels(list(a) + list(b))
    cells, k = _pair_cells(a, b, labels)
    return _cohen_figure(cells, k, weights, {"n_resamples": n_resamples, "confidence_level": confidence_level,
                                             "seed": seed, "min_items": min_items}, by_patterns)


def cohen_kappa_codes_ci(a: np.ndarray, b: np.ndarray, *, weights: str | None = None,
                         n_resamples: int = AGREEMENT_RESAMPLES, confidence_level: float = 0.95, seed: int = 0,
                         min_items: int = MIN_ITEMS) -> AgreementFigure:
    """:func:`cohen_kappa_ci` of two raters' coded labels (numpy; no Python loop per item).

    Parameters
    ----------
    a, b : array-like of int >= 0, shape (n,)
        Label codes in the label order (e.g. the index in :func:`sorted_labels`), paired by position.
        The kappa is over the codes present in ``a`` or ``b``, in code order: the figure of
        :func:`cohen_kappa_ci` of the decoded labels.
    weights : {None, "linear", "quadratic"}
    n_resamples, confidence_level, seed, min_items
        As :func:`agreement_figure`.

    Returns
    -------
    AgreementFigure
        ``statistic="cohen_kappa"``; ``n_items``: ``n``.

    Raises
    ------
    ValueError
        For arrays of different lengths, a negative code or an unknown ``weights``.

    References
    ----------
    Cohen (1960); Cohen (1968); interval: Efron & Tibshirani (1993), ch. 13.
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    a, b = np.asarray(a, dtype=np.int64).ravel(), np.asarray(b, dtype=np.int64).ravel()
    if a.size != b.size:
        raise ValueError(f"the two raters must rate the same items: {a.size} vs {b.size} ratings")
    if a.size and min(a.min(), b.min()) < 0:
        raise ValueError("label codes must be >= 0")
    used = np.unique(np.concatenate([a, b]))
    k = used.size
    cells = np.searchsorted(used, a) * k + np.searchsorted(used, b)
    return _cohen_figure(cells, k, weights, {"n_resamples": n_resamples, "confidence_level": confidence_level,
                                             "seed": seed, "min_items": min_items})


def cohen_kappa_table_ci(counts: Sequence[Sequence[int]], *, weights: str | None = None,
                         n_resamples: int = AGREEMENT_RESAMPLES, confidence_level: float = 0.95, seed: int = 0,
                         min_items: int = MIN_ITEMS) -> AgreementFigure:
    """:func:`cohen_kappa_from_counts` of a confusion matrix with its percentile bootstrap interval over items.

    The items are the ``sum(counts)`` rated pairs; a resample of them is a draw of the k x k
    cell counts from ``Multinomial(n, counts / n)`` (module docstring), so the interval costs
    O(resamples x k²) whatever the number of items.  The same figure as :func:`cohen_kappa_ci` of
    the pairs the table counts, listed cell by cell.

    Parameters
    ----------
    counts : array-like of int, shape (k, k)
        Rows: rater A's labels, columns: rater B's, in one label order (the resamples keep it).
    weights : {None, "linear", "quadratic"}
    n_resamples, confidence_level, seed, min_items
        As :func:`agreement_figure`.

    Returns
    -------
    AgreementFigure
        ``statistic="cohen_kappa"``; ``n_items``: ``sum(counts)``.

    Raises
    ------
    ValueError
        As :func:`cohen_kappa_from_counts`.

    References
    ----------
    Cohen (1960); Cohen (1968); interval: Efron & Tibshirani (1993), ch. 13.
    """
    cohen_kappa_from_counts(counts, weights=weights)  # validates
    m = np.asarray(counts, dtype=np.int64)
    k = m.shape[0] if m.ndim == 2 else 0
    cells = np.repeat(np.arange(k * k), m.ravel()) if k else np.zeros(0, dtype=np.int64)
    return _cohen_figure(cells, k, weights, {"n_resamples": n_resamples, "confidence_level": confidence_level,
                                             "seed": seed, "min_items": min_items})


def fleiss_kappa_ci(table: Sequence[Sequence[int]], *, n_resamples: int = AGREEMENT_RESAMPLES,
                    confidence_level: float = 0.95, seed: int = 0, min_items: int = MIN_ITEMS) -> AgreementFigure:
    """:func:`fleiss_kappa` with a percentile bootstrap interval over the items (rows of ``table``).

    Parameters
    ----------
    table : array-like of int, shape (items, categories)
        As :func:`fleiss_kappa`.
    n_resamples, confidence_level, seed, min_items
        As :func:`agreement_figure`.

    Returns
    -------
    AgreementFigure
        ``statistic="fleiss_kappa"``; ``n_items``: rows of ``table``; value ``None`` for an empty table.

    References
    ----------
    Fleiss (1971), "Measuring nominal scale agreement among many raters"; the interval is
    Efron's percentile bootstrap over items (:func:`agreement_figure`).

    Raises
    ------
    ValueError
        As :func:`fleiss_kappa`.
    """
    t = _fleiss_table(table)
    if t is None:
        return agreement_figure("fleiss_kappa", None, 0, lambda w: w[:, 0], n_resamples=n_resamples,
                                min_items=min_items)
    rows, inverse = row_patterns(t)  # items with one row of counts are one pattern
    return agreement_figure("fleiss_kappa", fleiss_kappa(t), t.shape[0], lambda w: _fleiss_batch(rows, w),
                            n_resamples=n_resamples, confidence_level=confidence_level, seed=seed,
                            min_items=min_items, patterns=inverse)


def krippendorff_alpha_ci(reliability_data: Sequence[Sequence[Any]], level: str = "nominal", *,
                          n_resamples: int = AGREEMENT_RESAMPLES, confidence_level: float = 0.95, seed: int = 0,
                          min_items: int = MIN_ITEMS) -> AgreementFigure:
    """:func:`krippendorff_alpha` with a percentile bootstrap interval over the units.

    The items are the pairable units (two or more ratings), in their column order; each
    resample draws them with replacement (the ratings of a unit stay together).  This is a
    bootstrap over items, not Krippendorff's (2011) bootstrap of pairable values.

    Parameters
    ----------
    reliability_data : array-like, shape (raters, units)
        A rating, or ``None`` / NaN where a rater did not rate a unit; as :func:`krippendorff_alpha`.
    level : {"nominal", "ordinal", "interval"}
        Level of measurement (the difference function), as :func:`krippendorff_alpha`.
    n_resamples, confidence_level, seed, min_items
        As :func:`agreement_figure`.

    Returns
    -------
    AgreementFigure
        ``statistic="krippendorff_alpha"``; ``n_items``: pairable units; value ``None`` when no
        unit is pairable.

    References
    ----------
    Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability"; the ``krippendorff``
    package is the test oracle.

    Raises
    ------
    ValueError
        Unknown level.
    """
    counts, domain = _pairable_units(reliability_data, level)
    return krippendorff_alpha_counts_ci(counts if counts is not None else np.zeros((0, 0)), domain, level,
                                        n_resamples=n_resamples, confidence_level=confidence_level, seed=seed,
                                        min_items=min_items)


def krippendorff_alpha_counts_ci(value_counts: np.ndarray, domain: Sequence[Any], level: str = "nominal", *,
                                 n_resamples: int = AGREEMENT_RESAMPLES, confidence_level: float = 0.95,
                                 seed: int = 0, min_items: int = MIN_ITEMS) -> AgreementFigure:
    """Krippendorff's alpha with its bootstrap interval over units, from each unit's value counts.

    Alpha depends on the units only through their multisets of values, so the units are
    compressed to their distinct rows of counts and a resample is a multinomial draw of how many
    units show each row (module docstring).

    Parameters
    ----------
    value_counts : array-like of int, shape (units, values)
        ``value_counts[u][v]``: ratings of unit ``u`` equal to ``domain[v]``; units with fewer
        than two ratings are left out (not pairable).
    domain : sequence, shape (values,)
        The values in their order (sorted; numbers for ordinal and interval).
    level : {"nominal", "ordinal", "interval"}
    n_resamples, confidence_level, seed, min_items
        As :func:`agreement_figure`.

    Returns
    -------
    AgreementFigure
        ``statistic="krippendorff_alpha"``; ``n_items``: pairable units; the value of
        :func:`krippendorff_alpha` of the ratings the counts describe (summed by distinct row: the
        same float with two or three ratings per unit, else equal up to rounding, 1e-15).

    Raises
    ------
    ValueError
        Unknown level, or counts not of ``len(domain)`` values.

    References
    ----------
    Krippendorff (2011); interval: Efron & Tibshirani (1993), ch. 13 (over units, the ratings of a
    unit kept together).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be nominal, ordinal or interval, not {level!r}")
    counts = np.asarray(value_counts, dtype=float).reshape(-1, len(domain)) if len(domain) else np.zeros((0, 0))
    counts = counts[counts.sum(axis=1) >= 2] if counts.size else counts
    settings = {"n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed,
                "min_items": min_items}
    if not counts.shape[0]:
        return agreement_figure("krippendorff_alpha", None, 0, lambda w: w[:, 0], **settings)
    rows, inverse = row_patterns(counts)
    # the coincidences of all units as those of their distinct rows times how many units show each: exactly
    # today's sums when units have two or three ratings (every term a multiple of 1/2), else equal up to rounding
    value = _alpha_batch(_coincidences(rows, np.bincount(inverse, minlength=rows.shape[0])[None, :].astype(float)),
                         list(domain), level)[0]
    return agreement_figure("krippendorff_alpha", None if np.isnan(value) else float(value), counts.shape[0],
                            lambda w: _alpha_batch(_coincidences(rows, w), list(domain), level),
                            patterns=inverse, **settings)


def _pairs(reliability_data: Sequence[Sequence[Any]]):
    """For each rater pair with shared items: (x, y, shared unit columns, ratings of x, ratings of y)."""
    out = []
    for x, y in combinations(range(len(reliability_data)), 2):
        rx, ry = reliability_data[x], reliability_data[y]
        cols = [u for u in range(min(len(rx), len(ry))) if not _missing(rx[u]) and not _missing(ry[u])]
        if cols:
            out.append((x, y, cols, [rx[u] for u in cols], [ry[u] for u in cols]))
    return out


def mean_pairwise_cohen_kappa(reliability_data: Sequence[Sequence[Any]], *,
                              weights: str | None = None) -> float | None:
    """Mean over rater pairs of Cohen's kappa on the items both raters rated.

    Parameters
    ----------
    reliability_data : array-like, shape (raters, items)
        A rating, or ``None`` / NaN where a rater did not rate an item.
    weights : {None, "linear", "quadratic"}
        As :func:`cohen_kappa` (each pair's label order: the sorted union of its ratings).

    Returns
    -------
    float or None
        The mean over pairs whose kappa is defined; ``None`` when no pair has one.

    References
    ----------
    Light (1971) (complete data: every rater rates every item); Cohen (1960, 1968).
    """
    kappas = [cohen_kappa(ra, rb, weights=weights) for _, _, _, ra, rb in _pairs(reliability_data)]
    kappas = [v for v in kappas if v is not None]
    return float(np.mean(kappas)) if kappas else None


def mean_pairwise_cohen_kappa_ci(reliability_data: Sequence[Sequence[Any]], *, weights: str | None = None,
                                 n_resamples: int = AGREEMENT_RESAMPLES, confidence_level: float = 0.95,
                                 seed: int = 0, min_items: int = MIN_ITEMS) -> AgreementFigure:
    """:func:`mean_pairwise_cohen_kappa` with a percentile bootstrap interval over items.

    The items are the columns rated by two or more raters; a resample draws them with
    replacement and every pair's kappa is computed on its own items within the resample
    (each pair keeps the label order of the full data), then averaged over the pairs whose
    kappa is defined.  The ratings are coded (:func:`sorted_labels` order) and handed to
    :func:`mean_pairwise_cohen_kappa_codes_ci`.

    Parameters
    ----------
    reliability_data : array-like, shape (raters, items)
        A rating, or ``None`` / NaN where a rater did not rate an item.
    weights : {None, "linear", "quadratic"}
        As :func:`cohen_kappa`.
    n_resamples, confidence_level, seed, min_items
        As :func:`agreement_figure`.

    Returns
    -------
    AgreementFigure
        ``statistic="cohen_kappa_mean"``; ``n_items``: columns rated by two or more raters.

    Raises
    ------
    ValueError
        ``weights`` is not one of the three.

    References
    ----------
    Light (1971); Cohen (1960, 1968).
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    labels = sorted_labels(v for r in reliability_data for v in r if not _missing(v))
    index = {v: i for i, v in enumerate(labels)}
    n_cols = max((len(r) for r in reliability_data), default=0)
    codes = np.full((n_cols, len(reliability_data)), -1, dtype=np.int64)
    for j, r in enumerate(reliability_data):
        codes[:len(r), j] = [-1 if _missing(v) else index[v] for v in r]
    return mean_pairwise_cohen_kappa_codes_ci(codes, weights=weights, n_resamples=n_resamples,
                                              confidence_level=confidence_level, seed=seed, min_items=min_items)


def mean_pairwise_cohen_kappa_codes_ci(codes: np.ndarray, *, weights: str | None = None,
                                       n_resamples: int = AGREEMENT_RESAMPLES, confidence_level: float = 0.95,
                                       seed: int = 0, min_items: int = MIN_ITEMS) -> AgreementFigure:
    """The mean over rater pairs of Cohen's kappa with its bootstrap interval over items, from coded ratings.

    Every pair's kappa is on the items both raters rated, over the labels that pair used in the
    full data (in code order), and the mean is over the pairs whose kappa is defined (Light 1971).
    The items are compressed to their distinct rows of codes (who gave which label); a resample
    is a multinomial draw of how many items show each row (module docstring), and each pair's
    confusion matrix in it is the weighted sum of the rows' cells.

    Parameters
    ----------
    codes : array-like of int, shape (items, raters)
        Label codes ``0 .. K - 1`` in the label order (e.g. the index in :func:`sorted_labels`),
        ``-1`` where a rater did not rate an item.  Items rated by fewer than two raters are left
        out.
    weights : {None, "linear", "quadratic"}
        Over each pair's label order, as :func:`cohen_kappa`.
    n_resamples, confidence_level, seed, min_items
        As :func:`agreement_figure`.

    Returns
    -------
    AgreementFigure
        ``statistic="cohen_kappa_mean"``; ``n_items``: items rated by two or more raters; the same
        figure as :func:`mean_pairwise_cohen_kappa_ci` of the decoded ratings.

    Raises
    ------
    ValueError
        ``weights`` is not one of the three.

    References
    ----------
    Light (1971); Cohen (1960, 1968); interval: Efron & Tibshirani (1993), ch. 13.
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    codes = np.asarray(codes, dtype=np.int64)
    codes = codes.reshape(codes.shape[0] if codes.ndim == 2 else 0, -1) if codes.size else np.zeros((0, 0), np.int64)
    codes = codes[(codes >= 0).sum(axis=1) >= 2]
    settings = {"n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed,
                "min_items": min_items}
    if not codes.shape[0]:
        return agreement_figure("cohen_kappa_mean", None, 0, lambda w: w[:, 0], **settings)
    rows, inverse = row_patterns(codes)
    counts = np.bincount(inverse.ravel(), minlength=rows.shape[0])
    parts, kappas = [], []
    for x, y in combinations(range(rows.shape[1]), 2):
        take = np.flatnonzero((rows[:, x] >= 0) & (rows[:, y] >= 0))
        if not take.size:
            continue
        used = np.unique(np.concatenate([rows[take, x], rows[take, y]]))  # the pair's labels, in code order
        k = used.size
        cells = np.searchsorted(used, rows[take, x]) * k + np.searchsorted(used, rows[take, y])
        table = np.bincount(cells, weights=counts[take], minlength=k * k).astype(np.int64).reshape(k, k)
        kappa = cohen_kappa_from_counts(table, weights=weights)
        if kappa is not None:
            kappas.append(kappa)
        parts.append((take, _cells_resampled(cells, k, _weight_matrix(k, weights))))

    def resampled(w: np.ndarray) -> np.ndarray:
        if not parts:
            return np.full(w.shape[0], np.nan)
        stack = np.stack([kappa(w[:, take]) for take, kappa in parts], axis=1)
        with np.errstate(invalid="ignore"):
            defined = ~np.isnan(stack)
            total = np.where(defined, stack, 0.0).sum(axis=1)
            count = defined.sum(axis=1)
            return np.where(count > 0, total / np.maximum(count, 1), np.nan)

    value = float(np.mean(kappas)) if kappas else None
    return agreement_figure("cohen_kappa_mean", value, int(codes.shape[0]), resampled, patterns=inverse,
                            **settings)
