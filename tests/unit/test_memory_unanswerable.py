"""is_unanswerable: exact empties, English and Chinese decline phrases, and real answers."""

import pytest

from evaluators.memory.locomo_parity import locomo_adversarial_correct
from evaluators.memory.unanswerable import is_unanswerable

DECLINES = [
    None, "", "   ", "N/A", "n/a.", "Unanswerable", "unknown", "None",
    "Not mentioned in the conversation.", "No information available", "There is no information about that.",
    "I cannot answer that based on our conversations.", "The conversation does not mention it.",
    "I don't know.", "I don’t have that information.", "It cannot be determined from the chat.",
    "There is not enough information to answer.", "The date is not specified.", "There is no mention of a dog.",
    "未提及", "对话中没有相关信息。", "无法回答", "无", "信息不足，无法确定。", "我不知道他去了哪里", "对话里没有提到这件事",
    "ＮＯＴ ＭＥＮＴＩＯＮＥＤ",  # full-width letters, NFKC
]
ANSWERS = [
    "Paris", "She moved to Boston on 7 May 2023.", "He mentioned his sister twice.", "No, she prefers tea.",
    "A shell necklace", "The information desk is on the second floor.", "Nothing", "咪咪", "他去了北京。", "提到了两次",
    "没错，是周三", "0",
]


@pytest.mark.parametrize("text", DECLINES)
def test_declines_are_unanswerable(text):
    assert is_unanswerable(text) is True


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_are_not_unanswerable(text):
    assert is_unanswerable(text) is False


@pytest.mark.parametrize("text", ["No information available.", "It was not mentioned", "NOT MENTIONED"])
def test_every_official_locomo_adversarial_hit_is_also_unanswerable(text):
    # LoCoMo's own check (substring "no information available" / "not mentioned") is a
    # subset of ours: anything the benchmark accepts, the adversarial judge accepts.
    assert locomo_adversarial_correct(text) and is_unanswerable(text)


def test_the_official_check_is_narrower_than_ours():
    assert not locomo_adversarial_correct("I don't know") and is_unanswerable("I don't know")
    assert not locomo_adversarial_correct("未提及") and is_unanswerable("未提及")
