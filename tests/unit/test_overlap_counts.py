"""One count per pair for every char-token overlap metric (issue 21): ``ngram_matches``, ``overlap_counts``
and ``PairScorer.score`` give the values of the per-metric functions on two TextViews, long texts included."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from evaluators.metrics import overlap
from evaluators.metrics.registry import PairScorer, get_metric
from evaluators.text.tokenize import TextView, char_token_chunks, char_tokens, ngram_matches, normalize

OVERLAP_METRICS = ["exact_match_normalized", "token_f1_char", "rouge1", "rouge2", "rougeL", "bleu1", "bleu2", "bleu4"]

PAIRS = [
    ("我喜欢狗", "我喜欢猫"),
    ("乔治去踩泥坑了", "佩奇去踩泥坑"),
    ("the cat ran", "the cat sat"),
    ("the the the the", "the cat is on the mat"),
    ("Peppa likes jumping in muddy puddles!", "Peppa loves jumping in muddy puddles with George."),
    ("", ""),
    ("", "北京"),
    ("Beijing", ""),
    ("!!!", "..."),
    ("Ｐｅｐｐａ　Ｐｉｇ", "peppa pig"),
    ("林远 went to 北京 in 2023", "In 2023, 林远 went to 北京."),
    ("a b a b a b a b", "b a b a"),
]


def naive_matches(a: list[str], b: list[str], n: int) -> int:
    """The definition: sum over n-grams of min(count in a, count in b)."""
    ca = Counter(tuple(a[i:i + n]) for i in range(len(a) - n + 1))
    cb = Counter(tuple(b[i:i + n]) for i in range(len(b) - n + 1))
    return sum(min(c, cb[g]) for g, c in ca.items())


def per_metric(prediction: str, reference: str) -> dict[str, float]:
    """Each metric's own function on two views (the reference values)."""
    return {name: get_metric(name).score_views(TextView(prediction), TextView(reference)) for name in OVERLAP_METRICS}


def test_ngram_matches_hand_worked_chinese_and_english():
    # 乔/治/去/踩/泥/坑/了 vs 佩/奇/去/踩/泥/坑: unigrams 去踩泥坑 = 4; bigrams 去踩, 踩泥, 泥坑 = 3;
    # trigrams 去踩泥, 踩泥坑 = 2; 4-gram 去踩泥坑 = 1.
    assert ngram_matches(char_tokens("乔治去踩泥坑了"), char_tokens("佩奇去踩泥坑"), 4) == [4, 3, 2, 1]
    # the x4 vs the/cat/is/on/the/mat: "the" min(4, 2) = 2; no shared bigram, so the higher orders are 0.
    assert ngram_matches(["the"] * 4, "the cat is on the mat".split(), 4) == [2, 0, 0, 0]
    assert ngram_matches([], ["a"], 2) == [0, 0]


@pytest.mark.parametrize("small", [True, False], ids=["list-count", "counters"])
def test_ngram_matches_equal_the_definition_on_random_token_lists(small, monkeypatch):
    if not small:  # every pair through the Counter path
        monkeypatch.setattr("evaluators.text.tokenize.SMALL_MATCH_TOKENS", 0)
    rng = random.Random(7)
    vocab = ["我", "你", "猫", "the", "cat", "a"]
    for _ in range(400):
        a = [rng.choice(vocab) for _ in range(rng.randint(0, 40))]
        b = [rng.choice(vocab) for _ in range(rng.randint(0, 40))]
        assert ngram_matches(a, b, 4) == [naive_matches(a, b, n) for n in range(1, 5)], (a, b)


def test_char_token_chunks_join_to_the_tokens_of_the_whole_text():
    rng = random.Random(3)
    alphabet = "ab 中文,x_y.Z9 é　"
    for _ in range(200):
        text = normalize("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))))
        for size in (1, 2, 5, 64):
            assert [t for chunk in char_token_chunks(text, size) for t in chunk] == char_tokens(text)


@pytest.mark.parametrize("prediction, reference", PAIRS)
def test_pair_scorer_counts_once_and_gives_each_metrics_own_value(prediction, reference):
    assert PairScorer(OVERLAP_METRICS).score(prediction, reference) == per_metric(prediction, reference)


def test_each_metric_read_from_counts_names_the_counter_the_scorer_calls_once_per_pair():
    """The registry imports no metric module: a metric with ``from_counts`` brings its ``counter``."""
    assert {get_metric(name).counter for name in OVERLAP_METRICS} == {overlap.overlap_counts}
    assert get_metric("fuzzy_ratio").counter is None and get_metric("fuzzy_ratio").from_counts is None
    scorer = PairScorer(OVERLAP_METRICS)
    calls = []
    scorer._counter = lambda *args: calls.append(args) or overlap.overlap_counts(*args)
    assert scorer.score("乔治去踩泥坑了", "佩奇去踩泥坑") == per_metric("乔治去踩泥坑了", "佩奇去踩泥坑")
    assert calls == [("乔治去踩泥坑了", "佩奇去踩泥坑", 4, True)]  # one count for the 8 metrics: BLEU-4 reads n <= 4


def test_long_texts_are_counted_in_pieces_with_the_same_values(monkeypatch):
    """Texts over LONG_TEXT_CHARS are tokenized piece by piece (set low here to use pieces of a few tokens)."""
    rng = random.Random(11)
    words = ["林", "远", "went", "to", "北", "京", "in", "2023", "the", "a"]
    pairs = [(" ".join(rng.choice(words) for _ in range(rng.randint(0, 120))),
              " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))) for _ in range(150)]
    pairs += [(r, p) for p, r in pairs[:50]]  # the long side as the reference too
    expected = [per_metric(p, r) for p, r in pairs]
    monkeypatch.setattr(overlap, "LONG_TEXT_CHARS", 8)
    monkeypatch.setattr("evaluators.text.tokenize.TOKEN_CHUNK_CHARS", 5)
    scorer = PairScorer(OVERLAP_METRICS)
    assert [scorer.score(p, r) for p, r in pairs] == expected


def test_a_long_answer_is_scored_from_counts_as_the_per_metric_functions_score_it():
    """600,000 tokens ("x x x ...", 1.2 M characters, over LONG_TEXT_CHARS): counted in pieces.

    "x" is 1 of the reference's 3 tokens: matches 1 (clipped), P = 1/600,000, R = 1/3;
    F1 = 2PR/(P+R) = 2 / (600,000 + 3); LCS = 1 gives the same ROUGE-L.
    """
    big = "x " * 600_000
    assert len(big) > overlap.LONG_TEXT_CHARS
    counts = overlap.overlap_counts(big, "x y z")
    assert counts == (False, 600_000, 3, (1, 0, 0, 0), 1)
    scores = PairScorer(OVERLAP_METRICS).score(big, "x y z")
    assert scores["token_f1_char"] == pytest.approx(2 / 600_003, rel=1e-12)
    assert scores == per_metric(big, "x y z")


def test_lcs_reduced_keeps_the_lcs_length():
    # short x,y,x: q dropped (not in short), then runs capped at short's count: x at 2, y at 1;
    # "x q x x" is one run of x once q is dropped.
    assert overlap.lcs_reduced("x q x x y y x".split(), ["x", "y", "x"]) == ["x", "x", "y", "x"]
    rng = random.Random(5)
    for _ in range(200):
        long = [rng.choice("abcq") for _ in range(rng.randint(0, 60))]
        short = [rng.choice("abc") for _ in range(rng.randint(0, 8))]
        assert overlap.lcs_length(overlap.lcs_reduced(long, short), short) == overlap.lcs_length(long, short)


def test_pair_scorer_with_another_metric_scores_views_as_before():
    names = [*OVERLAP_METRICS, "fuzzy_ratio"]
    scorer = PairScorer(names)
    for prediction, reference in PAIRS:
        views = scorer.score_views(TextView(prediction), TextView(reference))
        assert scorer.score(prediction, reference) == views


def test_random_texts_score_as_the_per_metric_functions():
    """ASCII texts (exact match read from the tokens) and mixed ones (from exact_key), with punctuation,
    underscores, full-width forms and katakana marks that exact_key drops though they are CJK tokens (・ ゛)."""
    rng = random.Random(13)
    ascii_alphabet = ["a", "B", "cat", "_", " ", ".", "-", "9", "x_y", "!", "  "]
    mixed_alphabet = [*ascii_alphabet, "北", "京", "・", "゛", "Ａ", "é", "　", "，"]
    scorer = PairScorer(OVERLAP_METRICS)
    for alphabet in (ascii_alphabet, mixed_alphabet):
        for _ in range(300):
            p = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
            r = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
            assert scorer.score(p, r) == per_metric(p, r), (p, r)
    # "a_b" and "ab": the same exact key (the underscore is dropped) though the tokens differ (a, b vs ab)
    assert scorer.score("a_b", "ab")["exact_match_normalized"] == 1.0
