"""Fuzzy ratio (rapidfuzz and difflib modes), edit similarity, keyword Jaccard."""

from difflib import SequenceMatcher

import pytest

from evaluators.metrics.registry import get_metric
from evaluators.metrics.similarity import jaccard, stopwords
from evaluators.text.tokenize import jieba_raw


@pytest.mark.parametrize("prediction, reference, expected", [
    # rapidfuzz ratio = 2*LCS/(len p + len r).  abcd vs acbd: LCS 3 -> 6/8.
    ("acbd", "abcd", 0.75),
    # 再见，妈妈！ (6) vs 再见。 (3): NFKC turns ，！。 into ,!. ; LCS 再见 = 2 -> 4/9.
    ("再见，妈妈！", "再见。", 4 / 9),
    ("Hello World", "hello world", 1.0),   # normalized (lower case) before comparing
])
def test_fuzzy_ratio_rapidfuzz(prediction, reference, expected):
    assert get_metric("fuzzy_ratio").score(prediction, reference) == pytest.approx(expected)


@pytest.mark.parametrize("prediction, reference, expected", [
    # SequenceMatcher(None, reference, prediction): the earliest longest block of 好好吃好 in 吃的好 is
    # 好 (ref[0], pred[2]); nothing is left on its right in pred, nothing on its left in ref -> M = 1,
    # ratio = 2*1/7.  The LCS is 吃好 (2), so rapidfuzz gives 4/7: difflib <= rapidfuzz.
    ("吃的好", "好好吃好", 2 / 7),
    ("bca", "aaba", 2 / 7),              # the same shape in English letters
    ("再见，妈妈！我会做个好梦的！", "再见。", 4 / 17),  # a real stored value: 2*2/(14+3)
])
def test_fuzzy_ratio_difflib_mode(prediction, reference, expected):
    assert get_metric("fuzzy_ratio", mode="difflib").score(prediction, reference) == pytest.approx(expected)
    assert SequenceMatcher(None, reference, prediction).ratio() == pytest.approx(expected)


def test_difflib_is_below_rapidfuzz_where_greedy_blocks_miss_the_lcs():
    assert get_metric("fuzzy_ratio").score("吃的好", "好好吃好") == pytest.approx(4 / 7)
    assert get_metric("fuzzy_ratio", mode="difflib").score("吃的好", "好好吃好") == pytest.approx(2 / 7)
    # difflib is not symmetric: swapping the arguments finds the block 吃 first and then 好 -> 4/7.
    assert SequenceMatcher(None, "吃的好", "好好吃好").ratio() == pytest.approx(4 / 7)


@pytest.mark.parametrize("prediction, reference, expected", [
    ("sitting", "kitten", 1 - 3 / 7),        # Levenshtein 3 (k->s, e->i, +g), max length 7
    ("我喜欢狗狗", "我喜欢猫", 1 - 2 / 5),     # 猫->狗 and one insertion, max length 5
    ("", "", 1.0),
    ("abc", "", 0.0),
])
def test_edit_similarity(prediction, reference, expected):
    assert get_metric("edit_similarity").score(prediction, reference) == pytest.approx(expected)


@pytest.mark.parametrize("prediction, reference, expected", [
    # jieba: 你/喜欢/吃/香蕉 vs 我/喜欢/吃/苹果; stop words 你, 我 removed -> {喜欢, 吃, 香蕉} vs {喜欢, 吃, 苹果}:
    # 2 shared of 4 -> 0.5.
    ("你喜欢吃香蕉", "我喜欢吃苹果", 0.5),
    # the, a are stop words: {cat, likes, milk} vs {cat, likes, fish} -> 2/4.
    ("A cat likes milk.", "The cat likes fish!", 0.5),
    # only stop words on one side: fall back to all words {我, 也, 是} vs {我, 是} -> 2/3.
    ("我也是", "我是", 2 / 3),
])
def test_keyword_jaccard(prediction, reference, expected):
    assert get_metric("keyword_jaccard").score(prediction, reference) == pytest.approx(expected)


def test_keyword_jaccard_difflib_mode_keeps_punctuation_and_stop_words():
    # set(jieba.cut): {再见, 。} vs {再见, ，, 妈妈, ！}: 1 shared of 5.
    assert set(jieba_raw("再见，妈妈！")) == {"再见", "，", "妈妈", "！"}
    assert get_metric("keyword_jaccard", mode="difflib").score("再见，妈妈！", "再见。") == pytest.approx(1 / 5)
    assert get_metric("keyword_jaccard", mode="difflib").score("", "") == 1.0
    assert get_metric("keyword_jaccard", mode="difflib").score("", "你好") == 0.0


def test_shipped_stopwords_cover_both_languages():
    words = stopwords()
    assert {"的", "了", "我", "the", "a", "is"} <= words
    assert "佩奇" not in words and "cat" not in words


def test_jaccard_edge_cases():
    assert jaccard(set(), set()) == 1.0
    assert jaccard({"a"}, set()) == 0.0
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)


@pytest.mark.parametrize("name", ["fuzzy_ratio", "edit_similarity", "keyword_jaccard"])
@pytest.mark.parametrize("text", ["佩奇喜欢跳泥坑。", "Peppa likes muddy puddles."])
def test_text_against_itself_scores_one(name, text):
    assert get_metric(name).score(text, text) == 1.0
    assert get_metric(name, mode="difflib").score(text, text) == 1.0
