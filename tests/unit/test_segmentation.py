"""Boundary similarity B, Pk and WindowDiff: worked examples and parity with segeval."""

import random

import pytest

from evaluators.metrics.segmentation import (
    boundary_edits, boundary_positions, boundary_similarity, masses_from_positions, pk, window_diff, window_size,
)


def test_boundary_positions_and_back():
    # masses [2, 3, 6]: 11 units, boundary slots after unit index 1 and 4.
    assert boundary_positions([2, 3, 6]) == {1, 4}
    assert masses_from_positions(11, {1, 4}) == [2, 3, 6]
    assert masses_from_positions(5, set()) == [5]


def test_b_one_full_miss():
    # [2,3,6] vs [5,6]: slots {1,4} vs {4}. One match (4), one addition (1), no transposition.
    # B = (edits + matches - weighted edits) / (edits + matches) = (1 + 1 - 1) / 2 = 0.5
    assert boundary_similarity([2, 3, 6], [5, 6]) == 0.5


def test_b_near_miss():
    # [2,3,6] vs [2,2,7]: slots {1,4} vs {1,3}. Match at 1; 3 and 4 are adjacent -> one
    # transposition of span 1, weighted 1 / n_t = 1/2.  B = (1 + 1 - 0.5) / 2 = 0.75
    e = boundary_edits({1, 4}, {1, 3})
    assert (e.matches, e.transpositions, e.insertions, e.deletions) == (1, ((3, 4),), (), ())
    assert boundary_similarity([2, 3, 6], [2, 2, 7]) == 0.75


def test_pk_worked_example():
    # reference [2,2,7] (11 units, 3 segments): k = round(11 / 3 / 2) = round(1.83) = 2.
    # Segment labels per unit: ref 1 1 2 2 3 3 3 3 3 3 3, hyp [2,3,6] 1 1 2 2 2 3 3 3 3 3 3.
    # Windows i = 0..8 ask "are units i and i+2 in the same segment?":
    #   i=0,1: both differ (agree); i=2: ref 2|3 differ, hyp 2|2 same (disagree);
    #   i=3: both differ (agree); i=4: ref 3|3 same, hyp 2|3 differ (disagree); i=5..8: both same.
    # Pk = 2 / 9.
    assert window_size([2, 2, 7]) == 2
    assert pk([2, 3, 6], [2, 2, 7]) == pytest.approx(2 / 9)


def test_windowdiff_worked_example():
    # Same windows as Pk; boundary counts in window [i, i+2): ref slots {1,3}, hyp slots {1,4}.
    # i=2: ref counts slot 3 -> 1, hyp slots 2..3 -> 0: differ.  i=3: ref slot 3 ->1, hyp slot 4 -> 1: same.
    # i=4: ref none (slots 4,5), hyp slot 4 -> 1: differ.  2 of 9 windows differ.
    assert window_diff([2, 3, 6], [2, 2, 7]) == pytest.approx(2 / 9)


def test_no_boundaries_do_not_crash():
    assert boundary_similarity([11], [11]) == 1.0
    assert boundary_similarity([11], [5, 6]) == 0.0  # one addition, no match: (1 - 1) / 1
    assert pk([11], [11]) == 0.0 and window_diff([11], [11]) == 0.0
    assert pk([1], [1]) == 0.0  # no complete window


def test_different_lengths_are_rejected():
    with pytest.raises(ValueError, match="different numbers of units"):
        boundary_similarity([2, 3], [6])


def test_window_size_rounds_half_to_even():
    assert window_size([5]) == 2  # 5/2 = 2.5 -> 2
    assert window_size([7]) == 4  # 3.5 -> 4
    assert window_size([1, 1, 1]) == 2  # 0.5 -> 0, floored at 2


def _random_masses(rng, n):
    k = rng.randint(1, min(n, 10))
    cuts = sorted(rng.sample(range(1, n), k - 1)) if k > 1 else []
    b = [0] + cuts + [n]
    return [b[i + 1] - b[i] for i in range(len(b) - 1)]


def test_parity_with_segeval_on_random_segmentations():
    segeval = pytest.importorskip("segeval")
    rng = random.Random(7)
    compared = 0
    for _ in range(600):
        n = rng.randint(3, 60)
        a, b = _random_masses(rng, n), _random_masses(rng, n)
        n_t = rng.choice([2, 3, 4])
        if len(a) > 1 or len(b) > 1:  # segeval cannot compute B without any boundary
            assert boundary_similarity(a, b, n_t) == pytest.approx(float(segeval.boundary_similarity(a, b, n_t=n_t)))
            compared += 1
        assert pk(a, b) == pytest.approx(float(segeval.pk(a, b)))
        if n > window_size(b):
            assert window_diff(a, b) == pytest.approx(float(segeval.window_diff(a, b)))
    assert compared > 500
