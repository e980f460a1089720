"""QA answer metrics in the registry equal the QA module's definitions (hand-worked examples)."""

import pytest

from evaluators.metrics.registry import get_metric, metric_names


def test_answer_metrics_are_registered():
    for name in ("exact_match_squad", "token_f1_squad", "exact_match_cmrc", "token_f1_cmrc"):
        assert name in metric_names()


@pytest.mark.parametrize(
    "name, pred, ref, expected",
    [
        # "中国北京" vs "北京中国": longest common contiguous run 2 of 4 characters -> P = R = F1 = 0.5
        ("token_f1_cmrc", "中国北京", "北京中国", 0.5),
        ("exact_match_cmrc", "北京。", "北京", 1.0),  # 。 is in the official symbol list
        # SQuAD: "the cat sat" -> [cat, sat]; "a cat sat down" -> [cat, sat, down]: P 2/2, R 2/3, F1 0.8
        ("token_f1_squad", "the cat sat", "a cat sat down", 0.8),
        ("exact_match_squad", "The Cat!", "cat", 1.0),
    ],
)
def test_values(name, pred, ref, expected):
    assert get_metric(name).score(pred, ref) == pytest.approx(expected)
