"""SQuAD v1.1 and CMRC 2018 EM / F1: hand-worked examples and parity with the official functions."""

from __future__ import annotations

import random

import pytest

from evaluators.metrics import cmrc, squad
from tests.helpers.official import official_qa_metrics

OFFICIAL = official_qa_metrics()

# ------------------------------------------------------------------ SQuAD v1.1 (English)

SQUAD_CASES = [
    # prediction, golds, EM, F1, arithmetic
    ("The Eiffel Tower", ["Eiffel Tower"], 1.0, 1.0),                  # article removed on both sides
    ("in Paris, France.", ["Paris"], 0.0, 0.5),                        # [in paris france] vs [paris]: P 1/3, R 1 -> 2*(1/3)/(4/3)
    ("an apple a day", ["apple"], 0.0, 2 / 3),                         # [apple day] vs [apple]: P 1/2, R 1
    ("new new york", ["new york"], 0.0, 0.8),                          # multiset: common 2, P 2/3, R 1 -> 0.8
    ("Sydney", ["Canberra", "Sydney, Australia"], 0.0, 2 / 3),         # max over golds: [sydney] vs [sydney australia]
    ("Paris’s", ["Paris"], 0.0, 0.0),                                  # ’ is not ASCII punctuation: token paris’s
    ("the the", ["a"], 1.0, 0.0),                                      # both normalize to "": EM 1, F1 0 (official quirk)
    ("北京", ["北京"], 1.0, 1.0),                                       # Chinese, whole string one token
    ("北京市", ["北京"], 0.0, 0.0),                                     # ... which is why Chinese needs CMRC tokens
]


@pytest.mark.parametrize("pred,golds,em,f1", SQUAD_CASES)
def test_squad_hand_worked(pred, golds, em, f1):
    assert squad.squad_scores(pred, golds) == (em, pytest.approx(f1))
    assert squad.exact_match_squad(pred, golds) == em and squad.token_f1_squad(pred, golds) == pytest.approx(f1)
    off_em, off_f1 = OFFICIAL.squad_pair(pred, golds)
    assert (float(off_em), off_f1) == (em, pytest.approx(f1))


def test_squad_normalize_matches_official():
    for text in ["The  Eiffel-Tower!", "A man, a plan, a canal: Panama", "  Théâtre   de l'Odéon ", "an_the a", "中文 English"]:
        assert squad.normalize_answer(text) == OFFICIAL.normalize_answer(text)


def test_squad_corpus_and_errors():
    em, f1 = squad.squad_corpus(["Mars", "Sydney"], ["Mars", ["Canberra"]])
    assert (em, f1) == (0.5, 0.5)
    with pytest.raises(ValueError):
        squad.squad_scores("x", [])
    with pytest.raises(ValueError):
        squad.squad_corpus(["a"], [])


def test_squad_random_parity():
    rng = random.Random(7)
    words = ["the", "a", "an", "Paris", "paris,", "New", "york", "York!", "1,000", "café", "don't", "—", "北京", "", " "]
    for _ in range(3000):
        pred = " ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
        golds = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(1, 3))]
        ours = squad.squad_scores(pred, golds)
        em, f1 = OFFICIAL.squad_pair(pred, golds)
        assert ours == (float(em), float(f1)), (pred, golds)


# ------------------------------------------------------------------ CMRC 2018 (Chinese)

CMRC_CASES = [
    # prediction, golds, EM, F1, arithmetic
    ("北京中国", ["中国北京"], 0.0, 0.5),           # longest common contiguous run 中国 = 2 of 4 each: P = R = 1/2
    ("北京。", ["北京"], 1.0, 1.0),                 # 。 is in the symbol list
    ("在北京市", ["北京"], 0.0, 2 / 3),             # run 北京: P 2/4, R 2/2 -> 2/3
    ("1999年", ["1999"], 0.0, 2 / 3),              # [1999 年] vs [1999]: P 1/2, R 1
    ("北x京", ["北京"], 0.0, 0.4),                 # contiguous, not subsequence: run 1, P 1/3, R 1/2 -> 0.4
    ("Hello, World!", ["hello world"], 0.0, 1 / 3),  # ASCII , and ! stay as tokens: run 1, P 1/4, R 1/2
    ("北京…", ["北京"], 0.0, 0.8),                  # … is kept (the list holds "……", never one char): P 2/3, R 1
    ("《红楼梦》", ["红楼梦"], 1.0, 1.0),            # 《 》 removed
    ("光荣和ω-force", ["光荣和ω-force"], 1.0, 1.0),
    ("Paris", ["巴黎"], 0.0, 0.0),                   # English case: nothing shared
    ("the cannot", ["can not"], 0.0, 0.8),          # NLTK splits cannot: [the can not] vs [can not]: P 2/3, R 1
]


@pytest.mark.parametrize("pred,golds,em,f1", CMRC_CASES)
def test_cmrc_hand_worked(pred, golds, em, f1):
    assert cmrc.cmrc_scores(pred, golds) == (em, pytest.approx(f1))
    off_em, off_f1 = OFFICIAL.cmrc_pair(pred, golds)
    assert (float(off_em), off_f1) == (em, pytest.approx(f1))


def test_cmrc_segmentation_examples():
    assert cmrc.mixed_segmentation("光荣和ω-force") == ["光", "荣", "和", "ωforce"]
    assert cmrc.mixed_segmentation("Henry A. Walsh的书") == ["henry", "a.", "walsh", "的", "书"]
    assert cmrc.mixed_segmentation("约6300公里") == ["约", "6300", "公", "里"]
    assert cmrc.mixed_segmentation("a-b", rm_punc=False) == ["a", "-", "b"]
    assert cmrc.mixed_segmentation("") == [] and cmrc.mixed_segmentation(" 。 ") == []
    # Python 2 lowercasing: İ -> i, final Σ -> σ (Python 3 gives "i̇" and "ς")
    assert cmrc.mixed_segmentation("İSTANBUL") == ["istanbul"]
    assert cmrc.mixed_segmentation("ΟΔΟΣ") == ["οδοσ"]
    assert cmrc.remove_punctuation(" 北京，中国！ ") == "北京中国"


def test_cmrc_longest_common_run_and_private_use_fallback():
    assert cmrc.longest_common_run(list("abcde"), list("xbcdy")) == 3
    assert cmrc.longest_common_run(["new", "york", "city"], ["new", "york"]) == 2
    assert cmrc.longest_common_run([], ["a"]) == 0
    # A text holding a private-use-plane character takes the list-based path: same values.
    odd = "\U000F0000北京 abc"
    assert cmrc.cmrc_scores(odd, ["北京 abc def"]) == tuple(float(x) for x in OFFICIAL.cmrc_pair(odd, ["北京 abc def"]))


def test_cmrc_errors():
    with pytest.raises(ValueError):
        cmrc.cmrc_scores("北京", [])
    assert cmrc.signature().startswith(cmrc.SIGNATURE) and "nltk==" in cmrc.signature()


def test_cmrc_fuzz_parity_with_official():
    rng = random.Random(11)
    alphabet = list("abc xyz 0123 .,;:!?'\"()[]{}<>-–—…$%&#@*`«»“”‘’") + [
        "cannot", "gonna", "wanna", " 't", "İ", "Σ", "中", "国", "北京", "。", "，", "《", "》", "\t", "\n",
        "1,000", "...", "··", "——", "ω", "㭴", "Ｈ２Ｏ", "e.g.", "U.S.", "d'ye"]
    for _ in range(3000):
        pred = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        gold = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        assert cmrc.mixed_segmentation(pred) == OFFICIAL.mixed_segmentation(pred, rm_punc=True), repr(pred)
        ours = cmrc.cmrc_scores(pred, [gold, pred[:3]])
        em, f1 = OFFICIAL.cmrc_pair(pred, [gold, pred[:3]])
        assert ours == (float(em), float(f1)), (pred, gold)
