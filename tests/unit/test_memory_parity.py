"""LoCoMo parity F1: hand-derived values of the benchmark's published scoring.

Scoring (snap-research/LoCoMo task_eval/evaluation.py): normalise (drop commas, lower,
drop ASCII punctuation, drop a/an/the/and), Porter-stem, multiset token F1; multi-hop
splits both sides on commas (mean over answer parts of the best F1); open-domain keeps
the answer before the first ';'; adversarial = contains "no information available" or
"not mentioned".
"""

import random

import pytest

from evaluators.memory.locomo_parity import (
    locomo_multi_answer_f1, locomo_parity, locomo_score, locomo_token_f1, normalize_answer, stemmed_tokens,
)
from evaluators.memory.records import EvalResult
from tests.helpers import locomo_reference


def r(qid, category, gt, pred):
    types = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
    return EvalResult("s", qid, types[category], "?", gt, pred, metadata={"category": category})


def test_normalisation_and_stemming():
    assert normalize_answer("The cat, and a Dog!") == "cat dog"
    # Porter stems: running -> run, flooring -> floor, natural -> natur, january -> januari
    assert stemmed_tokens("Running on natural flooring in January") == ["run", "on", "natur", "floor", "in",
                                                                        "januari"]


def test_token_f1_hand_derived():
    # "19 January, 2023" -> [19, januari, 2023]; "9 February 2023" -> [9, februari, 2023]
    # common {2023}: P = 1/3, R = 1/3, F1 = 1/3 (a real mem0 item, conv-30_q0)
    assert locomo_token_f1("9 February 2023", "19 January, 2023") == pytest.approx(1 / 3)
    # stemming makes "runs" match "running": [she, run, daili] vs [run] -> P=1/3, R=1 -> F1 = 2*(1/3)/(4/3) = 0.5
    assert locomo_token_f1("she runs daily", "running") == pytest.approx(0.5)
    # multiset: [a a b] -> [b] after dropping article "a"; pred [b b] vs gold [b]: common 1, P=1/2, R=1, F1=2/3
    assert locomo_token_f1("b b", "a a b") == pytest.approx(2 / 3)
    assert locomo_token_f1("", "Paris") == 0.0
    # Chinese has no spaces: one token each side; equal strings match, partial overlap gives 0
    assert locomo_token_f1("北京", "北京") == 1.0
    assert locomo_token_f1("在北京", "北京") == 0.0


def test_multi_hop_splits_on_commas():
    # real mem0 item conv-30_q5: gold parts "By the water" | "with natural light and Marley flooring",
    # prediction parts "By the water" | "great natural light."
    # part 1: [by, water] vs [by, water] = 1.0
    # part 2: gold [with, natur, light, marley, floor] vs [great, natur, light]: common 2, P=2/3, R=2/5,
    #         F1 = 2*(2/3)*(2/5)/((2/3)+(2/5)) = 0.5;  mean (1.0 + 0.5)/2 = 0.75
    gold = "By the water, with natural light and Marley flooring"
    pred = "By the water, great natural light."
    assert locomo_multi_answer_f1(pred, gold) == pytest.approx(0.75)
    assert locomo_score(r("q", 1, gold, pred)) == pytest.approx(0.75)
    # without the split (a single-hop item) it is one bag: gold 7 stems, pred 5, common 4 (by, water, natur, light)
    # P = 4/5, R = 4/7, F1 = 2*(4/5)(4/7)/((4/5)+(4/7)) = 2/3
    assert locomo_score(r("q", 4, gold, pred)) == pytest.approx(2 / 3)


def test_open_domain_keeps_the_answer_before_the_semicolon():
    # real mem0 item conv-26_q42: "National park; she likes the outdoors" -> "National park"
    assert locomo_score(r("q", 3, "National park; she likes the outdoors", "National park.")) == 1.0
    # a temporal item keeps the whole answer: [nation, park, she, like, outdoor] ("the" dropped) vs
    # [nation, park]: P = 2/2, R = 2/5, F1 = 2*1*(2/5)/(1+2/5) = 4/7
    assert locomo_score(r("q", 2, "National park; she likes the outdoors", "National park.")) == pytest.approx(4 / 7)


def test_adversarial_uses_the_benchmarks_check():
    assert locomo_score(r("q", 5, "Not mentioned in the conversation", "It is not mentioned.")) == 1.0
    assert locomo_score(r("q", 5, "Not mentioned in the conversation", "No information available")) == 1.0
    assert locomo_score(r("q", 5, "Not mentioned in the conversation", "a dog")) == 0.0


def test_report_means_per_category_in_the_official_order():
    results = [
        r("a", 2, "19 January, 2023", "9 February 2023"),   # 1/3
        r("b", 2, "2020", "2020"),                           # 1
        r("c", 5, "Not mentioned", "not mentioned"),         # 1
        r("d", 4, "咪咪", "咪咪"),                            # 1
        EvalResult("s", "e", "multi_session", "?", "x", "x"),  # not LoCoMo: skipped, not scored 0
    ]
    report = locomo_parity(results)
    assert [(c.category, c.count) for c in report.by_category] == [(4, 1), (2, 2), (5, 1)]
    temporal = report.by_category[1]
    assert temporal.mean == pytest.approx((1 / 3 + 1) / 2)
    assert report.overall == pytest.approx((1 / 3 + 1 + 1 + 1) / 4)
    assert report.count == 4 and list(report.skipped) == ["e"]


def test_random_texts_score_as_the_published_scoring_does():
    """Parity with tests/helpers/locomo_reference.py (the published code re-stated) on random texts."""
    rng = random.Random(1986)
    words = ["the", "a", "An", "and", "Paris", "paris,", "running", "runs", "January", "19", "2023,", "Lisbon",
             ",", ";", "not mentioned", "No information available", "cat's", "U.S.", "—", "北京", "café", "", " "]
    for _ in range(3000):
        category = rng.randint(1, 5)
        gold = " ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
        pred = " ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
        expected = locomo_reference.question_score(pred, gold, category)
        assert locomo_score(r("q", category, gold, pred)) == pytest.approx(expected, abs=1e-12), (category, gold, pred)
        assert normalize_answer(pred) == locomo_reference.normalize_answer(pred)


def test_a_long_answer_is_normalised_in_pieces_with_the_same_stemmed_counts(monkeypatch):
    """Pieces cut before whitespace (set to a few characters here) give the words of the whole text:
    commas, punctuation, articles, a final sigma and Chinese next to every cut."""
    import importlib
    from collections import Counter

    lp = importlib.import_module("evaluators.memory.locomo_parity")  # the package re-exports a function of that name

    rng = random.Random(2)
    words = ["The", "cat,", "and", "a", "Dog!", "running", "ΟΔΟΣ", "北京", "2023.", "an", "x"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 60))) + rng.choice(["", " ", "\n"])
             for _ in range(200)]
    expected = [Counter(stemmed_tokens(t)) for t in texts]
    monkeypatch.setattr(lp, "NORMALIZE_CHUNK_CHARS", 7)
    assert [lp._stemmed_counts(t) for t in texts] == expected
    # "x x ... x" (10,000 words) against "x y": common 1, P = 1/10,000, R = 1/2, F1 = 2PR/(P+R) = 2/10,002
    assert locomo_token_f1("x " * 10_000, "x y") == pytest.approx(2 / 10_002)
