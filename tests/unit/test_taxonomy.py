"""evaluators.taxonomy: shipped vocabularies, canonical labels, user files."""

import pytest

from evaluators.taxonomy import FIELDS, default_taxonomy, load_relationship_csv, load_sentiment_csv

T = default_taxonomy()


@pytest.mark.parametrize(
    "field, raw, canonical",
    [
        ("relationship_level1", "Family & Kinship", "Family & Kinship"),
        ("relationship_level1", "家庭与亲缘(Family & Kinship)", "Family & Kinship"),
        ("relationship_level1", "权威与阶级（Hierarchy）", "Hierarchy"),
        ("relationship_level1", "对抗与敌对", "Adversarial"),
        ("relationship_level2", "master_and_servant", "master_servant"),
        ("relationship_level2", "Master-Servant", "master_servant"),
        ("sentiment", "Neutral", "neutral"),
        ("sentiment", "敌对", "hostile"),
        ("action_category", "Physical & Conflict", "physical"),
        ("action_category", "social & communicative", "communicative"),
        ("action_category", "交易与交换", "transaction"),
        ("action_context", "assign task", "assign_task"),
        ("action_context", "marriage proposal", "marriage_proposal"),
        ("action_type", "Express Emotion", "express_emotion"),
        ("action_status", "SUCCESS", "success"),
        ("action_function", "Character Arc", "character_arc"),
        ("archetype", "Helper", "Sidekick/Helper"),
        ("archetype", "英雄", "Hero"),
    ],
)
def test_spellings_resolve_to_one_canonical_label(field, raw, canonical):
    lab = T.canonical(field, raw)
    assert lab.valid and lab.value == canonical


def test_out_of_taxonomy_labels_are_invalid_but_comparable():
    a = T.canonical("action_context", "passing love")
    b = T.canonical("action_context", "Passing_Love")
    assert not a.valid and not b.valid
    assert a.value == b.value == "passinglove"
    assert T.canonical("relationship_level1", "stranger").valid is False  # a level-2 tag in the level-1 field


def test_empty_labels():
    assert T.canonical("sentiment", "").empty
    assert T.canonical("sentiment", None).empty


def test_polarity_and_level1_lookup():
    assert [T.polarity(s) for s in ("romantic", "Neutral", "fearful", "bogus")] == [
        "positive", "neutral", "negative", None]
    assert T.level1_of("master_and_servant") == "Hierarchy"


def test_every_field_has_a_vocabulary():
    assert all(len(T[f]) > 0 for f in FIELDS)
    assert len(T["relationship_level2"]) == 15 and len(T["sentiment"]) == 6 and len(T["action_category"]) == 5


REL_CSV = """一级分类 (Level 1),二级标签 (Level 2 Tag),核心定义与区别 (Definition)
家庭与亲缘(Family & Kinship),parent_child,父母子女
,sibling,兄弟姐妹
权威与阶级(Hierarchy),master_servant,主仆
,ruler_subject,君臣
"""


def test_user_relationship_file_forward_fills_level1():
    # The earlier evaluator read only the first level-2 tag of each group; every row counts.
    l1, l2 = load_relationship_csv(REL_CSV.encode("utf-8"), "rel.csv")
    assert sorted(l1.entries) == ["Family & Kinship", "Hierarchy"]
    assert l1.canonical("家庭与亲缘").value == "Family & Kinship"
    assert {c: e.attrs["level1"] for c, e in l2.entries.items()} == {
        "parent_child": "Family & Kinship", "sibling": "Family & Kinship",
        "master_servant": "Hierarchy", "ruler_subject": "Hierarchy"}
    tax = T.with_vocabularies(relationship_level1=l1, relationship_level2=l2)
    assert not tax.canonical("relationship_level2", "lover").valid
    assert "user:rel.csv#" in tax.signature


def test_user_sentiment_file_polarity():
    text = "标签 (Tag),中文名称,情感极性\nwarm,温暖,High Positive\ncold,冷淡,Negative (Passive)\nflat,平淡,Neutral\n"
    v = load_sentiment_csv(text.encode("utf-8"), "s.csv")
    tax = T.with_vocabularies(sentiment=v)
    assert [tax.polarity(x) for x in ("warm", "冷淡", "flat")] == ["positive", "negative", "neutral"]


def test_user_file_without_level_columns_is_rejected_with_header():
    with pytest.raises(ValueError, match="expected columns"):
        load_relationship_csv(b"a,b\n1,2\n", "bad.csv")
