"""evaluators.text: name/label keys, alias splitting, sentence splitting."""

import pytest

from evaluators.text import label_key, name_key, sentence_starts, split_aliases, split_sentences


@pytest.mark.parametrize(
    "a, b",
    [
        ("Family & Kinship", "family_kinship"),
        ("assign task", "assign_task"),
        ("ＰＨＹＳＩＣＡＬ", "physical"),  # full-width letters fold under NFKC
        ("家庭与亲缘", "家庭与亲缘 "),
    ],
)
def test_label_keys_equal(a, b):
    assert label_key(a) == label_key(b)


def test_label_key_keeps_distinct_labels_apart():
    assert label_key("master_servant") != label_key("master_and_servant")  # handled by taxonomy aliases
    assert label_key("!!") == ""


@pytest.mark.parametrize(
    "a, b", [("Chen Xiang", "chen  xiang"), ("王母", " 王母 "), ("爱丽丝·梦游", "爱丽丝梦游"), ("ＡＢＣ", "abc")]
)
def test_name_keys_equal(a, b):
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize(
    "raw, parts",
    [
        ("孩子; 一对儿女;儿女们", ["孩子", "一对儿女", "儿女们"]),
        ("梁; 山伯; ", ["梁", "山伯"]),
        ("小青；青蛇、青儿 , Xiao Qing", ["小青", "青蛇", "青儿", "Xiao Qing"]),
        ("", []),
        (None, []),
        (["a;b", "c"], ["a", "b", "c"]),
    ],
)
def test_split_aliases(raw, parts):
    assert split_aliases(raw) == parts


def test_chinese_sentences_with_closing_quotes_and_ellipsis():
    text = "老牛说：“明天去银河！”牛郎听了……他去了。\n第二天？是的；好。"
    got = [text[s:e] for s, e in split_sentences(text)]
    assert got == ["老牛说：“明天去银河！”", "牛郎听了……", "他去了。\n", "第二天？", "是的；", "好。"]


def test_short_words_and_single_letters_still_end_sentences():
    text = "He said no. She left. It was Plan A. Then J. R. R. Tolkien wrote."
    got = [text[s:e] for s, e in split_sentences(text)]
    assert got == ["He said no. ", "She left. ", "It was Plan A. ", "Then J. R. R. Tolkien wrote."]


def test_english_sentences_skip_abbreviations_and_decimals():
    text = 'The fox said, "Go!" Then Mr. Fox waited 2.5 hours. J. R. Smith left.'
    got = [text[s:e] for s, e in split_sentences(text)]
    assert got == ['The fox said, "Go!" ', "Then Mr. Fox waited 2.5 hours. ", "J. R. Smith left."]


def test_sentences_cover_text_contiguously():
    text = "一。二！三？\n\nFour. Five"
    spans = split_sentences(text)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert sentence_starts("") == ()
