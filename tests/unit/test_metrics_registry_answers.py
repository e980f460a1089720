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


def test_answer_metrics_cite_the_official_scripts():
    for name in ("exact_match_squad", "token_f1_squad"):
        assert "evaluate-v1.1.py" in get_metric(name).description
    for name in ("exact_match_cmrc", "token_f1_cmrc"):
        assert "cmrc2018_evaluate.py" in get_metric(name).description


def test_qa_signature_is_the_registered_metrics_signatures():
    """One signature per definition: the QA report signs its EM/F1 with the registry's strings."""
    from evaluators.metrics import cmrc, squad
    from evaluators.qa.evaluate import signature

    en, zh = get_metric("exact_match_squad").signature, get_metric("exact_match_cmrc").signature
    assert get_metric("token_f1_squad").signature == en == squad.SIGNATURE
    assert get_metric("token_f1_cmrc").signature == zh == cmrc.signature()
    assert f"qa: en={en}; zh={zh}; " in signature("qa")


@pytest.mark.parametrize("lang, pred, golds, expected", [
    # en: vs "dog" nothing shared; vs "a cat sat down": [cat, sat] of [cat, sat, down], P 1, R 2/3 -> F1 0.8
    ("en", "the cat sat", ("dog", "a cat sat down"), (0.0, 0.8)),
    # zh: "北京。" -> "北京" after the symbol list: equal to the second gold -> EM 1, F1 1
    ("zh", "北京。", ("上海", "北京"), (1.0, 1.0)),
])
def test_official_pair_is_the_registered_metrics_maximised_over_golds(lang, pred, golds, expected):
    from evaluators.metrics.answers import OFFICIAL
    from evaluators.qa.evaluate import official_scores, record_metric_names

    pair = OFFICIAL[lang]
    em_name, f1_name = pair.names
    by_registry = (max(get_metric(em_name).score(pred, g) for g in golds),
                   max(get_metric(f1_name).score(pred, g) for g in golds))
    assert pair.scores(pred, golds) == pytest.approx(expected) == by_registry
    got_lang, *got = official_scores(pred, golds)
    assert got_lang == lang and got == pytest.approx(expected)
    assert record_metric_names(pair.tokenizer) == (em_name, f1_name)


def test_record_metric_names_of_each_rule_set():
    from evaluators.qa.evaluate import record_metric_names

    assert record_metric_names("squad-v1.1") == ("exact_match_squad", "token_f1_squad")
    assert record_metric_names("cmrc2018") == ("exact_match_cmrc", "token_f1_cmrc")
    assert record_metric_names("verdict") is None and record_metric_names(None) is None
