"""Segmentation agreement: boundary similarity (B), Pk and WindowDiff.

Segmentations are given as *segment masses*: the lengths, in units (sentences here),
of consecutive segments, e.g. ``[2, 3, 6]`` is 11 units with boundaries after unit 2
and unit 5.  Boundary *positions* are 0-based indices into the ``sum(masses) - 1``
potential boundary slots (slot ``p`` lies between unit ``p`` and unit ``p + 1``).

The definitions reproduce segeval 2.0.11 exactly for a single boundary type (its
defaults: ``n_t = 2``, scaled transposition weights, window size from the reference)
while working on the sparse boundary sets, so the cost grows with the number of
boundaries rather than the number of units; segmentations without any boundary are
valid input (segeval raises on them).

References
----------
- C. Fournier. 2013. "Evaluating Text Segmentation using Boundary Edit Distance".
  ACL 2013.  (B, boundary edit distance, near-miss transpositions.)
- D. Beeferman, A. Berger, J. Lafferty. 1999. "Statistical Models for Text
  Segmentation". Machine Learning 34. (Pk.)
- L. Pevzner, M. Hearst. 2002. "A Critique and Improvement of an Evaluation Metric
  for Text Segmentation". Computational Linguistics 28(1). (WindowDiff.)
- segeval 2.0.11, ``segeval/similarity/boundary.py``, ``segeval/window/pk.py``,
  ``segeval/window/windowdiff.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import accumulate
from dataclasses import dataclass

from evaluators.results import DictMixin

SIGNATURE = "segmentation=segeval-2.0.11-compatible(single boundary type, n_t={n_t}, window=round(mean ref mass/2)>=2)"


def _slots(masses: Sequence[int]) -> list[int]:
    """Sorted boundary slots of a segmentation (validated: masses must be positive)."""
    if not masses:
        return []
    if min(masses) <= 0:
        raise ValueError(f"segment masses must be positive, got {list(masses)}")
    slots = list(accumulate(masses[:-1]))
    return [p - 1 for p in slots]


def boundary_positions(masses: Sequence[int]) -> frozenset[int]:
    """Boundary slots of a segmentation given by masses (``[2, 3, 6]`` -> ``{1, 4}``).

    Parameters
    ----------
    masses : sequence of int
        Segment lengths in units (sentences), shape (n_segments,), each >= 1, in text order;
        ``[]`` for no unit.

    Returns
    -------
    frozenset of int
        The ``len(masses) - 1`` boundary slots, each in ``[0, sum(masses) - 1)``.

    Raises
    ------
    ValueError
        If a mass is not a positive integer.
    """
    return frozenset(_slots(masses))


def masses_from_positions(n_units: int, positions: Iterable[int]) -> list[int]:
    """Segment masses from boundary slots over ``n_units`` units (inverse of :func:`boundary_positions`).

    Slots outside ``[0, n_units - 1)`` are ignored.  ``n_units == 0`` gives ``[]``.

    Parameters
    ----------
    n_units : int
        Units (sentences) of the text; 0 or less gives ``[]``.
    positions : iterable of int
        Boundary slots (slot ``p`` lies between unit ``p`` and unit ``p + 1``); duplicates count once.

    Returns
    -------
    list of int
        Positive masses summing to ``n_units``; ``[n_units]`` when no slot is inside.

    Examples
    --------
    >>> masses_from_positions(11, [1, 4])
    [2, 3, 6]
    """
    if n_units <= 0:
        return []
    cuts = sorted({p for p in positions if 0 <= p < n_units - 1})
    masses = []
    prev = -1
    for p in cuts:
        masses.append(p - prev)
        prev = p
    masses.append(n_units - 1 - prev)
    return masses


@dataclass(frozen=True)
class BoundaryEdits(DictMixin):
    """Boundary edit distance between a hypothesis and a reference segmentation.

    Attributes
    ----------
    matches : int
        Boundaries at the same slot in both (exact matches).
    transpositions : tuple of (int, int)
        Near misses: a hypothesis boundary and a reference boundary at slots less than
        ``n_t`` apart, as ``(slot_i, slot_j)`` with ``slot_i < slot_j``.
    insertions : tuple of int
        Boundaries only in the hypothesis (full misses, "additions" on its side).
    deletions : tuple of int
        Boundaries only in the reference.
    n_t : int
        Maximum transposition span (in slots) + 1, as in segeval (default 2 = adjacent slots).
    """

    matches: int
    transpositions: tuple[tuple[int, int], ...]
    insertions: tuple[int, ...]
    deletions: tuple[int, ...]
    n_t: int

    @property
    def weighted_edits(self) -> float:
        """Additions count 1 each; a transposition over ``d`` slots counts ``d / n_t``."""
        return len(self.insertions) + len(self.deletions) + sum(j - i for i, j in self.transpositions) / self.n_t

    @property
    def boundary_similarity(self) -> float:
        """B = 1 - weighted edits / (edits + matches); 1.0 when neither side has a boundary."""
        unweighted = len(self.insertions) + len(self.deletions) + len(self.transpositions)
        return boundary_similarity_from_counts(self.matches, unweighted, self.weighted_edits)


def boundary_similarity_from_counts(matches: int, edits: int, weighted_edits: float) -> float:
    """Boundary similarity B from counts (Fournier 2013): ``1 - weighted_edits / (edits + matches)``.

    ``edits`` counts insertions, deletions and near misses (transpositions) unweighted;
    ``weighted_edits`` weighs them.  1.0 when there is neither an edit nor a match.  Pooling
    the counts of several documents gives the micro-averaged B.

    Parameters
    ----------
    matches : int
        Boundaries at the same slot on both sides, >= 0.
    edits : int
        Insertions + deletions + transpositions, unweighted, >= 0.
    weighted_edits : float
        The same edits weighted (1 per insertion or deletion, ``d / n_t`` per transposition over
        ``d`` slots), in ``[0, edits]``.

    Returns
    -------
    float
        B in [0, 1] (1 is perfect).

    References
    ----------
    Fournier (2013), "Evaluating Text Segmentation using Boundary Edit Distance", ACL; segeval
    2.0.11 ``segeval/similarity/boundary.py``.
    """
    denominator = edits + matches
    if denominator == 0:
        return 1.0
    return (denominator - weighted_edits) / denominator


def boundary_edits(hypothesis: Iterable[int], reference: Iterable[int], n_t: int = 2) -> BoundaryEdits:
    """Boundary edit distance on boundary *slots* (Fournier 2013, as segeval computes it).

    Parameters
    ----------
    hypothesis, reference : iterable of int
        Boundary slots of the two segmentations (same number of units).
    n_t : int, default 2
        Transpositions may span up to ``n_t - 1`` slots; candidates are taken greedily
        by increasing span, then left to right, never reusing a slot (segeval's order).

    Returns
    -------
    BoundaryEdits
    """
    if n_t < 1:
        raise ValueError("n_t must be >= 1")
    hyp = set(hypothesis)
    ref = set(reference)
    diff = sorted(hyp ^ ref)
    diff_set = set(diff)
    used: set[int] = set()
    transpositions: list[tuple[int, int]] = []
    for span in range(1, n_t):
        for i in diff:
            if i in used:
                continue
            j = i + span
            if j in diff_set and j not in used and ((i in hyp) != (j in hyp)):
                transpositions.append((i, j))
                used.add(i)
                used.add(j)
    insertions = tuple(p for p in diff if p not in used and p in hyp)
    deletions = tuple(p for p in diff if p not in used and p in ref)
    transpositions.sort()
    return BoundaryEdits(len(hyp & ref), tuple(transpositions), insertions, deletions, n_t)


def boundary_similarity(hypothesis: Sequence[int], reference: Sequence[int], n_t: int = 2) -> float:
    """Boundary similarity B (Fournier 2013) of two segmentations given as masses.

    Parameters
    ----------
    hypothesis, reference : sequence of int
        Segment masses in units (sentences), shapes (n_hyp_segments,) and (n_ref_segments,);
        both must sum to the same number of units.  B is symmetric.
    n_t : int, default 2
        Near-miss tolerance in boundary slots (segeval's ``n_t``).

    Returns
    -------
    float in [0, 1]
        1 for identical segmentations, including two with no boundary.

    Raises
    ------
    ValueError
        If the masses sum to different totals or are not positive.

    Examples
    --------
    >>> boundary_similarity([2, 3, 6], [5, 6])
    0.5
    >>> boundary_similarity([2, 3, 6], [2, 2, 7])
    0.75
    """
    _check_same_length(hypothesis, reference)
    return boundary_edits(boundary_positions(hypothesis), boundary_positions(reference), n_t).boundary_similarity


def window_size(reference: Sequence[int]) -> int:
    """Pk/WindowDiff window: half the mean reference segment mass, rounded half to even, at least 2.

    This is segeval's ``compute_window_size`` (Python ``round`` on a Decimal).

    Parameters
    ----------
    reference : sequence of int
        Reference segment masses (units per segment).

    Returns
    -------
    int
        ``k >= 2``, in units; 2 for an empty reference.

    References
    ----------
    Beeferman et al. (1999), "Statistical Models for Text Segmentation"; segeval 2.0.11
    ``segeval/window/__init__.py`` ``compute_window_size``.

    Examples
    --------
    >>> window_size([2, 3, 6]), window_size([10, 10])  # 11 / 3 / 2 = 1.83 -> 2; 20 / 2 / 2 = 5
    (2, 5)
    """
    return _window_size_from_counts(sum(reference), len(reference))


def _window_size_from_counts(n_units: int, n_segments: int) -> int:
    """:func:`window_size` from the number of units and reference segments (no masses needed)."""
    if n_segments <= 0:
        return 2
    q, r = divmod(n_units, 2 * n_segments)
    if 2 * r > 2 * n_segments or (2 * r == 2 * n_segments and q % 2 == 1):
        q += 1
    return q if q > 1 else 2


def window_disagreements(hypothesis: Iterable[int], reference: Iterable[int], n_units: int,
                         window: int | None = None) -> tuple[int, int, int]:
    """Pk and WindowDiff counts from boundary slots.

    Parameters
    ----------
    hypothesis, reference : iterable of int
        Boundary slots (``0 <= slot < n_units - 1``).
    n_units : int
        Number of units of both segmentations.
    window : int, optional
        Window size ``k``; default half the mean reference segment mass (segeval's rule).

    Returns
    -------
    (pk_disagreements, windowdiff_disagreements, measurements)
        Windows ``i in [0, n_units - k)`` where exactly one side has a boundary between units
        ``i`` and ``i + k`` (Pk), and where the boundary counts differ (WindowDiff).
        Pk = first / measurements and WindowDiff = second / measurements; all 0 when there is
        no complete window.
    """
    ref = sorted(set(reference))
    hyp = sorted(set(hypothesis))
    k = window if window is not None else _window_size_from_counts(n_units, len(ref) + 1)
    m = n_units - k
    if m <= 0:
        return 0, 0, 0
    return _presence_disagreements(hyp, ref, k, m), _count_disagreements(hyp, ref, k, m), m


def _count_disagreements(hyp: list[int], ref: list[int], k: int, m: int) -> int:
    """Windows whose boundary counts differ (WindowDiff's count), by a sweep over the boundaries."""
    # Window i covers slots i .. i + k - 1: a boundary at slot p lies in windows [p - k + 1, p].
    events: list[tuple[int, int, int]] = []
    for side, slots in ((0, ref), (1, hyp)):
        for p in slots:
            lo = p - k + 1 if p - k + 1 > 0 else 0
            hi = p + 1 if p + 1 < m else m
            if lo < hi:
                events.append((lo, side, 1))
                events.append((hi, side, -1))
    if not events:
        return 0
    events.sort()
    a = b = 0
    prev = 0
    disagree = 0
    for pos, side, delta in events:
        if pos != prev:
            if a != b:
                disagree += pos - prev
            prev = pos
        if side == 0:
            a += delta
        else:
            b += delta
    if a != b:
        disagree += m - prev
    return disagree


def _coverage_mask(slots: list[int], k: int, m: int) -> int:
    """Bit ``i`` set when window ``i`` (of ``m``) contains at least one of the boundary ``slots``."""
    mask = 0
    for p in slots:
        lo = p - k + 1 if p - k + 1 > 0 else 0
        hi = p + 1 if p + 1 < m else m
        if lo < hi:
            mask |= ((1 << (hi - lo)) - 1) << lo
    return mask


def _presence_disagreements(hyp: list[int], ref: list[int], k: int, m: int) -> int:
    """Windows where exactly one side has a boundary between the window's ends (Pk's count)."""
    return (_coverage_mask(ref, k, m) ^ _coverage_mask(hyp, k, m)).bit_count()


def _window_metric(hypothesis: Sequence[int], reference: Sequence[int], window: int | None,
                   presence_only: bool) -> float:
    n = sum(reference)
    if sum(hypothesis) != n:
        _check_same_length(hypothesis, reference)
    ref, hyp = _slots(reference), _slots(hypothesis)
    k = window if window is not None else _window_size_from_counts(n, len(reference))
    m = n - k
    if m <= 0:
        return 0.0
    if presence_only:
        return _presence_disagreements(hyp, ref, k, m) / m
    return _count_disagreements(hyp, ref, k, m) / m


def pk(hypothesis: Sequence[int], reference: Sequence[int], window: int | None = None) -> float:
    """Pk (Beeferman et al. 1999): probability that a window's ends disagree on "same segment".

    Parameters
    ----------
    hypothesis, reference : sequence of int
        Segment masses in units (sentences), shapes (n_hyp_segments,) and (n_ref_segments,), same
        total.  Argument order as segeval's ``pk(hypothesis, reference)``.
    window : int, optional
        Window size ``k``; default :func:`window_size` of the reference.

    Returns
    -------
    float in [0, 1]
        0 is perfect.  With no complete window (fewer than ``k + 1`` units) segeval returns 0; so do we.

    Raises
    ------
    ValueError
        If the segmentations cover different numbers of units.

    Examples
    --------
    >>> round(pk([2, 3, 6], [2, 2, 7]), 10)  # 2 of the 9 windows (k = 2) disagree
    0.2222222222
    """
    return _window_metric(hypothesis, reference, window, True)


def window_diff(hypothesis: Sequence[int], reference: Sequence[int], window: int | None = None) -> float:
    """WindowDiff (Pevzner & Hearst 2002): share of windows whose boundary counts differ.

    Argument order as :func:`pk` (segeval's ``window_diff``, without the Lamprier et al. 2007
    edge fix).

    Parameters
    ----------
    hypothesis, reference : sequence of int
        Segment masses (units per segment, each >= 1), shapes (n_hyp_segments,) and
        (n_ref_segments,), same total.
    window : int, optional
        Window size ``k`` in units; default :func:`window_size` of the reference.

    Returns
    -------
    float in [0, 1]
        0 is perfect; 0 when there is no complete window (fewer than ``k + 1`` units).

    Raises
    ------
    ValueError
        The segmentations cover different numbers of units, or a mass is not positive.

    References
    ----------
    Pevzner & Hearst (2002), "A Critique and Improvement of an Evaluation Metric for Text
    Segmentation", Computational Linguistics 28(1); segeval 2.0.11 ``segeval/window/windowdiff.py``.

    Examples
    --------
    >>> round(window_diff([2, 3, 6], [2, 2, 7]), 10)  # 2 of the 9 windows (k = 2) differ in count
    0.2222222222
    """
    return _window_metric(hypothesis, reference, window, False)


def _check_same_length(hypothesis: Sequence[int], reference: Sequence[int]) -> None:
    if sum(hypothesis) != sum(reference):
        raise ValueError(
            f"segmentations cover different numbers of units ({sum(hypothesis)} != {sum(reference)})"
        )
