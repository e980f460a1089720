"""The missing-GT policy table of DESIGN.md, case by case."""

import pytest

from evaluators.policy import GTStatus, counts_in_denominator, handle_missing_ground_truth, is_empty


@pytest.mark.parametrize("value", [None, "", "   ", [], {}, float("nan")])
def test_empty_values(value):
    assert is_empty(value)


@pytest.mark.parametrize("value", ["成立", "x", [""], {"a": 1}, 0, 0.0, False])
def test_non_empty_values(value):
    assert not is_empty(value)


@pytest.mark.parametrize(
    "gt, pred, status, counted",
    [
        ("", "Family & Kinship", GTStatus.EXTRA, False),   # GT empty, prediction present: extra, not a FP
        (None, [], GTStatus.MATCHED, False),               # both empty: matched, not counted
        ("敌对", "", GTStatus.MISSING, True),               # GT present, prediction empty: FN, counted
        ("hostile", "hostile", GTStatus.COMPARED, True),   # both present: compared, counted
        ([], ["ally"], GTStatus.EXTRA, False),
        ({"type": "attack"}, {}, GTStatus.MISSING, True),
    ],
)
def test_policy_table(gt, pred, status, counted):
    assert handle_missing_ground_truth(gt, pred) is status
    assert counts_in_denominator(status) is counted
