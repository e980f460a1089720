"""compare_paired_scores: pairing by key, outcomes, and the same figures as the paired functions."""

import pytest

from evaluators.metrics.statistics import approximate_randomization, compare_paired_scores, paired_bootstrap


def test_pairs_by_key_and_leaves_out_unscored_items():
    a = {"d1": 0.5, "d2": 0.25, "d3": None, "d4": 1.0}
    b = {"d1": 0.75, "d2": 0.25, "d3": 0.5, "d5": 0.0}
    c = compare_paired_scores(a, b, "A", "B", n_resamples=2000)
    # paired: d1 (B +0.25, won), d2 (tied); d3 unscored in A, d4 only in A, d5 only in B
    assert c.n_paired == 2 and c.only_a == 1 and c.only_b == 2
    assert c.outcomes == {"d1": "won", "d2": "tied"}
    assert c.bootstrap.delta == pytest.approx((0.25 + 0.0) / 2)
    assert c.bootstrap == paired_bootstrap([0.5, 0.25], [0.75, 0.25], n_resamples=2000)
    assert c.randomization == approximate_randomization([0.5, 0.25], [0.75, 0.25], n_resamples=2000)


def test_no_common_item_is_an_error():
    with pytest.raises(ValueError, match="no scored item in common"):
        compare_paired_scores({"a": 1.0}, {"b": 1.0})
