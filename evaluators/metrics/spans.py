"""Character-span overlap: IoU of half-open intervals and the pairwise IoU matrix."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def interval_iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    """Intersection over union of two half-open character intervals ``[start, end)``.

    Parameters
    ----------
    a, b : (int, int)
        Intervals with ``start < end`` (empty intervals give 0).

    Returns
    -------
    float in [0, 1]
        ``|a ∩ b| / |a ∪ b|`` in characters (the Jaccard index of the two character sets).

    Examples
    --------
    >>> interval_iou((0, 10), (5, 15))  # 5 shared characters of 15
    0.3333333333333333

    References
    ----------
    Jaccard (1912) index of the two character sets; the span IoU used for text-span matching.
    """
    inter = min(a[1], b[1]) - max(a[0], b[0])
    if inter <= 0:
        return 0.0
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def iou_matrix(rows: Sequence[tuple[int, int]], cols: Sequence[tuple[int, int]]) -> np.ndarray:
    """Pairwise :func:`interval_iou`, shape ``(len(rows), len(cols))``, as float64.

    Parameters
    ----------
    rows, cols : sequence of (int, int)
        Half-open character intervals ``[start, end)``, R and C of them.

    Returns
    -------
    numpy.ndarray of float64, shape (R, C)
        ``out[i, j] = interval_iou(rows[i], cols[j])`` in [0, 1]; zeros of that shape when a
        side is empty.

    References
    ----------
    Jaccard index of the two character sets (intersection over union of intervals).

    Examples
    --------
    >>> iou_matrix([(0, 10)], [(5, 15), (20, 30)]).round(4).tolist()
    [[0.3333, 0.0]]
    """
    if not rows or not cols:
        return np.zeros((len(rows), len(cols)))
    r = np.asarray(rows, dtype=np.int64)
    c = np.asarray(cols, dtype=np.int64)
    rs, re_ = r[:, 0:1], r[:, 1:2]
    cs, ce = c[:, 0], c[:, 1]
    inter = np.clip(np.minimum(re_, ce) - np.maximum(rs, cs), 0, None)
    union = (re_ - rs) + (ce - cs) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
    return out
