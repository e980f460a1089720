"""Overlap metrics: parity with rouge-score, nltk and sacrebleu, hand-worked Chinese/English values."""

import math
import random

import pytest
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu as nltk_corpus_bleu, sentence_bleu
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

from evaluators.metrics.overlap import bleu_from_tokens, corpus_bleu, overlap_f1, wordnet_missing
from evaluators.metrics.registry import MetricUnavailable, get_metric

EN_PAIRS = [
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
    ("Peppa likes jumping in muddy puddles!", "Peppa loves jumping in muddy puddles with George."),
    ("It is raining today", "Today it is sunny and warm"),
    ("the the the the", "the cat is on the mat"),
    ("Completely different words here", "Nothing in common at all"),
]


@pytest.mark.parametrize("prediction, reference", EN_PAIRS)
def test_rouge_equals_rouge_score_default_on_english(prediction, reference):
    ref = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"]).score(reference, prediction)
    for name in ("rouge1", "rouge2", "rougeL"):
        assert get_metric(name).score(prediction, reference) == pytest.approx(ref[name].fmeasure, abs=1e-12)


@pytest.mark.parametrize("prediction, reference, r1, r2, rl", [
    # ref 我/喜/欢/猫, pred 我/喜/欢/狗: 3 of 4 unigrams -> P=R=F=0.75; bigrams 我喜,喜欢 of 3 -> 2/3;
    # LCS 我喜欢 = 3 -> 0.75.
    ("我喜欢狗", "我喜欢猫", 0.75, 2 / 3, 0.75),
    # ref 佩/奇/去/踩/泥/坑 (6), pred 乔/治/去/踩/泥/坑/了 (7): 4 common unigrams -> P=4/7, R=4/6,
    # F = 2*(4/7)(4/6)/((4/7)+(4/6)) = 8/13; bigrams 去踩,踩泥,泥坑 = 3 of 5 (ref) and 6 (pred) -> F = 6/11;
    # LCS 去踩泥坑 = 4 -> 8/13.
    ("乔治去踩泥坑了", "佩奇去踩泥坑", 8 / 13, 6 / 11, 8 / 13),
    # English: ref the/cat/sat, pred the/cat/ran: 2/3 unigrams; bigram "the cat" 1 of 2 -> 0.5; LCS 2 -> 2/3.
    ("the cat ran", "the cat sat", 2 / 3, 0.5, 2 / 3),
])
def test_rouge_hand_worked(prediction, reference, r1, r2, rl):
    assert get_metric("rouge1").score(prediction, reference) == pytest.approx(r1)
    assert get_metric("rouge2").score(prediction, reference) == pytest.approx(r2)
    assert get_metric("rougeL").score(prediction, reference) == pytest.approx(rl)


def test_chinese_rouge_is_nonzero_where_rouge_score_default_gives_zero():
    default = rouge_scorer.RougeScorer(["rouge1"]).score("我喜欢猫", "我喜欢狗")["rouge1"].fmeasure
    assert default == 0.0  # its tokenizer drops every CJK character
    assert get_metric("rouge1").score("我喜欢狗", "我喜欢猫") == pytest.approx(0.75)


@pytest.mark.parametrize("prediction, reference, b1, b2, b4", [
    # 我喜欢狗 vs 我喜欢猫 (c = r = 4, BP = 1): p1 = 3/4, p2 = 2/3, p3 = 1/2, p4 = 0 -> method 1: 0.1/1.
    # BLEU-1 = 0.75; BLEU-2 = sqrt(3/4 * 2/3) = sqrt(0.5); BLEU-4 = (3/4 * 2/3 * 1/2 * 0.1) ** 0.25 = 0.025 ** 0.25.
    ("我喜欢狗", "我喜欢猫", 0.75, math.sqrt(0.5), 0.025 ** 0.25),
    # the cat ran vs the cat sat: p1 = 2/3, p2 = 1/2, p3 = 0 -> 0.1/1, p4: no 4-gram -> 0.1/max(1, 0) = 0.1.
    # BLEU-4 = (2/3 * 1/2 * 0.1 * 0.1) ** 0.25.
    ("the cat ran", "the cat sat", 2 / 3, math.sqrt(1 / 3), (2 / 3 * 0.5 * 0.01) ** 0.25),
    # Brevity: pred 我喜欢 (c=3) vs ref 我喜欢猫 (r=4): p1 = 1 -> BLEU-1 = exp(1 - 4/3).
    ("我喜欢", "我喜欢猫", math.exp(1 - 4 / 3), math.exp(1 - 4 / 3), math.exp(1 - 4 / 3) * (0.1 / 1) ** 0.25),
])
def test_bleu_hand_worked(prediction, reference, b1, b2, b4):
    assert get_metric("bleu1").score(prediction, reference) == pytest.approx(b1)
    assert get_metric("bleu2").score(prediction, reference) == pytest.approx(b2)
    assert get_metric("bleu4").score(prediction, reference) == pytest.approx(b4)


def _random_pairs(seed: int, n: int, vocab: list[str]):
    rng = random.Random(seed)
    for _ in range(n):
        ref = [rng.choice(vocab) for _ in range(rng.randint(1, 12))]
        hyp = [rng.choice(vocab) for _ in range(rng.randint(1, 12))]
        yield hyp, ref


@pytest.mark.parametrize("vocab", [list("我你他喜欢猫狗吃鱼"), "the a cat dog sat ran on mat big red".split()])
def test_sentence_bleu_equals_nltk_method1_on_same_tokens(vocab):
    smooth = SmoothingFunction().method1
    for hyp, ref in _random_pairs(7, 300, vocab):
        for n in (1, 2, 4):
            expected = sentence_bleu([ref], hyp, weights=(1 / n,) * n, smoothing_function=smooth)
            assert bleu_from_tokens(hyp, ref, n) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_sentence_bleu_equals_sacrebleu_floor_smoothing_on_same_tokens():
    # sacrebleu's "floor" smoothing (0.1) is method 1; on pairs with >= 1 matching unigram and
    # hypotheses of >= 4 tokens (so no order is empty), both definitions coincide.
    checked = 0
    for vocab in (list("我你他喜欢猫狗吃鱼"), "the a cat dog sat ran on mat big red".split()):
        for hyp, ref in _random_pairs(11, 300, vocab):
            if len(hyp) < 4 or not set(hyp) & set(ref):
                continue
            for n in (1, 2, 4):
                sb = BLEU(tokenize="none", smooth_method="floor", smooth_value=0.1, max_ngram_order=n,
                          effective_order=False)
                expected = sb.sentence_score(" ".join(hyp), [" ".join(ref)]).score / 100
                assert bleu_from_tokens(hyp, ref, n) == pytest.approx(expected, rel=1e-9)
            checked += 1
    assert checked > 100


def test_bleu_zero_without_unigram_match_like_nltk():
    assert bleu_from_tokens(["x", "y"], ["a", "b"], 4) == 0.0
    assert get_metric("bleu4").score("完全不同", "毫无关系") == 0.0


@pytest.mark.parametrize("lang, preds, refs", [
    ("zh", ["佩奇喜欢跳泥坑。", "乔治有一只恐龙玩具。", "今天天气很好，我们去公园吧！"],
           ["佩奇最喜欢跳泥坑。", "乔治有一个恐龙玩具。", "今天天气真好，我们去公园玩吧！"]),
    ("en", ["Peppa likes jumping in muddy puddles every day.", "George has a toy dinosaur.",
            "The weather is nice today."],
           ["Peppa loves jumping in muddy puddles every day.", "George has a dinosaur toy.",
            "The weather is lovely today."]),
])
def test_corpus_bleu_equals_nltk_on_sacrebleu_tokens(lang, preds, refs):
    result = corpus_bleu(preds, refs, lang=lang)
    assert result.tokenize == ("zh" if lang == "zh" else "13a")
    tokenizer = TokenizerZh() if lang == "zh" else BLEU(tokenize="13a").tokenizer
    hyps = [tokenizer(p).split() for p in preds]
    list_refs = [[tokenizer(r).split()] for r in refs]
    assert result.score == pytest.approx(nltk_corpus_bleu(list_refs, hyps), rel=1e-9)
    assert result.sys_len == sum(len(h) for h in hyps)
    assert "tok:" + result.tokenize in result.signature
    assert corpus_bleu([], [], lang=lang).score is None  # empty corpus: not computable, not 0


@pytest.mark.parametrize("prediction, reference, expected", [
    ("你好，佩奇！", "你好佩奇", 1.0),       # punctuation and full-width forms ignored
    ("Hello, World", "hello world", 1.0),  # case and punctuation ignored
    ("你好，佩奇", "你好，乔治", 0.0),
    ("The cat", "A cat", 0.0),              # articles are kept (stated normalization)
])
def test_exact_match_normalized(prediction, reference, expected):
    assert get_metric("exact_match_normalized").score(prediction, reference) == expected


@pytest.mark.parametrize("prediction, reference, expected", [
    ("  你好。 ", "你好。", 1.0),   # strip() only
    ("你好", "你好。", 0.0),        # punctuation matters
    ("Hello", "hello", 0.0),       # case matters
])
def test_exact_match_difflib_mode_is_strip_equality(prediction, reference, expected):
    assert get_metric("exact_match_normalized", mode="difflib").score(prediction, reference) == expected


@pytest.mark.parametrize("prediction, reference, expected", [
    # pred 我/喜/欢/狗 (4), ref 我/喜/欢/猫/猫 (5), common 3: P = 3/4, R = 3/5, F1 = 2*0.45/1.35 = 2/3.
    ("我喜欢狗", "我喜欢猫猫", 2 / 3),
    # pred the/cat/sat (3), ref the/cat (2): P = 2/3, R = 1, F1 = 0.8.
    ("the cat sat", "The cat.", 0.8),
    ("", "", 1.0),
    ("", "有内容", 0.0),
])
def test_token_f1_hand_worked(prediction, reference, expected):
    assert get_metric("token_f1_char").score(prediction, reference) == pytest.approx(expected)


def test_overlap_f1_counts_multiset():
    # pred a a b, ref a b b: common = min(2,1) + min(1,2) = 2 -> P = R = 2/3.
    assert overlap_f1(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx(2 / 3)


@pytest.mark.parametrize("name", ["rouge1", "rouge2", "rougeL", "bleu1", "bleu2", "bleu4", "token_f1_char"])
@pytest.mark.parametrize("text", ["佩奇喜欢跳泥坑。", "Peppa likes muddy puddles."])
def test_text_against_itself_scores_one(name, text):
    assert get_metric(name).score(text, text) == pytest.approx(1.0)


def test_meteor_unavailable_without_wordnet_never_zero():
    metric = get_metric("meteor")
    if wordnet_missing() is None:
        from nltk.translate.meteor_score import single_meteor_score

        value = metric.score("the cat sat on the mat", "a cat sat on a mat")
        assert value == pytest.approx(single_meteor_score("a cat sat on a mat".split(),
                                                          "the cat sat on the mat".split()))
        return
    assert not metric.is_available()
    with pytest.raises(MetricUnavailable, match="nltk.downloader wordnet"):
        metric.score("the cat sat on the mat", "a cat sat on a mat")


def test_nltk_data_dirs_equal_nltks_own_search_path_and_wordnet_found_in_one(tmp_path, monkeypatch):
    """Our copy of nltk's default search path (no nltk import) equals ``nltk.data.path``; data put in
    one of those folders is found without importing nltk."""
    import subprocess
    import sys

    from evaluators.metrics.overlap import nltk_data_dirs

    env_dir = tmp_path / "env_data"
    monkeypatch.setenv("NLTK_DATA", str(env_dir))
    code = ("import json, sys, nltk; from evaluators.metrics.overlap import nltk_data_dirs;"
            "print(json.dumps([list(nltk.data.path), nltk_data_dirs()]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import json

    theirs, ours = json.loads(out.stdout)
    assert ours == theirs
    assert nltk_data_dirs()[0] == str(env_dir)
    code = ("import sys; from evaluators.metrics.overlap import wordnet_missing;"
            "r = wordnet_missing(); print(r is None, 'nltk' in sys.modules)")
    (env_dir / "corpora" / "wordnet").mkdir(parents=True)
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert found == ["True", "False"]  # found, and nltk was never imported to find it


def test_wordnet_check_while_another_thread_is_still_importing_nltk(tmp_path, monkeypatch):
    """A page's earlier run importing nltk (its ``sys.modules`` entry has no ``data`` yet) must not break the
    availability check of the next run: seen in Chromium as "partially initialized module 'nltk' has no
    attribute 'data'". The default folders answer instead."""
    import importlib.machinery
    import os
    import sys
    import types

    from evaluators.metrics.overlap import nltk_data_dirs, wordnet_missing

    partial = types.ModuleType("nltk")
    partial.__spec__ = importlib.machinery.ModuleSpec("nltk", None)
    partial.__spec__._initializing = True
    monkeypatch.setitem(sys.modules, "nltk", partial)
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/nltk_data of the machine
    folders = [d for d in nltk_data_dirs() if os.path.exists(os.path.join(d, "corpora", "wordnet"))]
    expected = None if folders else "nltk WordNet data not found (METEOR needs it; nothing is downloaded at run time)"
    assert wordnet_missing() == expected  # the folders' answer, no AttributeError
    (tmp_path / "corpora" / "wordnet").mkdir(parents=True)
    assert wordnet_missing() is None  # found in $NLTK_DATA, nltk's half-made module left alone
