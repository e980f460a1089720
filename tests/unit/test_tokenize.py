"""Tokenizers: CJK kept, English words as rouge-score splits them, signatures, tokenize once."""

import pytest
from rouge_score import tokenize as rouge_tokenize

from evaluators.metrics.registry import PairScorer
from evaluators.text import tokenize as tk
from evaluators.text.tokenize import TextView, char_tokens, get_tokenizer, jieba_tokens, whitespace_tokens


@pytest.mark.parametrize("text, expected", [
    ("我喜欢猫。", ["我", "喜", "欢", "猫"]),                                  # Chinese: one token per character
    ("Hello, World! It's 3pm.", ["hello", "world", "it", "s", "3pm"]),       # English: words, lower case
    ("我喜欢 Peppa Pig！", ["我", "喜", "欢", "peppa", "pig"]),               # mixed
    ("ＡＢＣ１２３，你好", ["abc123", "你", "好"]),                             # full-width folded by NFKC
    ("", []),
])
def test_char_tokens(text, expected):
    assert char_tokens(text) == expected


@pytest.mark.parametrize("text", [
    "The quick brown fox jumps over the lazy dog.",
    "It's 10:30 -- isn't it? Yes, e-mail me at a@b.com!",
    "ROUGE-L F1 = 0.75; BLEU-4 (smoothed)",
])
def test_char_tokens_equal_rouge_score_default_on_ascii_english(text):
    assert char_tokens(text) == rouge_tokenize.tokenize(text, None)


def test_rouge_score_default_drops_chinese_but_ours_keeps_it():
    assert rouge_tokenize.tokenize("我喜欢猫", None) == []
    assert char_tokens("我喜欢猫") == ["我", "喜", "欢", "猫"]


@pytest.mark.parametrize("text, expected", [
    ("我喜欢吃苹果。", ["我", "喜欢", "吃", "苹果"]),
    ("I like Peppa Pig!", ["i", "like", "peppa", "pig"]),
])
def test_jieba_tokens_drop_punctuation_and_space(text, expected):
    assert jieba_tokens(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Hello, world! (don't)", ["hello", "world", "don't"]),
    ("你好，世界 再见", ["你好,世界", "再见"]),  # no spaces in Chinese: one token per run (NFKC turns ， into ,)
])
def test_whitespace_tokens(text, expected):
    assert whitespace_tokens(text) == expected


def test_signatures_name_tokenizer_normalization_and_version():
    assert get_tokenizer("char").signature.startswith("tok=char(cjk-chars+words)|norm=nfkc+lower")
    assert "jieba-0." in get_tokenizer("jieba").signature
    assert get_tokenizer("mixed") is get_tokenizer("char")
    with pytest.raises(KeyError, match="known: char, jieba, mixed, whitespace"):
        get_tokenizer("bpe")


def test_text_view_tokenizes_once(monkeypatch):
    calls = {"char": 0, "jieba": 0}
    for name in calls:
        original = tk.TOKENIZERS[name]

        def counting(text, _f=original.func, _n=name):
            calls[_n] += 1
            return _f(text)

        monkeypatch.setitem(tk.TOKENIZERS, name, tk.Tokenizer(name, original.signature, counting))
    names = ["exact_match_normalized", "token_f1_char", "rouge1", "rouge2", "rougeL", "bleu1", "bleu2", "bleu4", "keyword_jaccard"]
    scores = PairScorer(names).score("我喜欢吃苹果", "我喜欢吃香蕉")
    assert all(scores[n] is not None for n in names)
    # 7 char-token metrics and 1 jieba metric, 2 texts: each tokenizer ran once per text.
    assert calls == {"char": 2, "jieba": 2}
    view = TextView("Hello")
    assert view.tokens("char") is view.tokens("char")


def test_text_view_matches_never_reuses_a_freed_views_counts():
    # best_reference's pattern: one prediction view scored against a fresh reference view per
    # reference, each freed before the next is built (CPython often gives the next one the same id()).
    pred = TextView("the cat sat")
    got = [pred.matches(TextView(ref), "char", 1) for ref in ("the cat sat", "dog runs far")]
    # "the cat sat" vs itself: 3 common tokens; vs "dog runs far": none in common
    assert got == [3, 0]
    # the same text in another view is the same count (the cache is by content)
    assert pred.matches(TextView("the cat"), "char", 1) == 2

