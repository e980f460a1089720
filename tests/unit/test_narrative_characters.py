"""Character matching: exact names, aliases, archetypes, empty GT (Chinese and English)."""

import pytest

from evaluators.narrative.characters import CharacterEvaluator
from tests.unit.narrative_builders import doc


def score(pred_chars, gt_chars):
    return CharacterEvaluator().evaluate(doc(characters=pred_chars), doc(characters=gt_chars))


def test_chinese_names_aliases_and_archetypes():
    gt = [("牛郎", "", "Hero"), ("王母娘娘", "王母", "Villain"), ("一儿一女", "孩子; 一对儿女;儿女们", "Everyman"),
          ("老牛", "", "Mentor")]
    pred = [("牛郎", "", "Hero"), ("王母", "", "Villain"), ("儿女们", "孩子们", "Other"), ("银河", "", "Other"),
            ("织女", "", "Lover")]
    r = score(pred, gt)
    # 牛郎 exact; 王母 is a GT alias of 王母娘娘; 儿女们 is a GT alias of 一儿一女; 老牛 missing;
    # 银河 and 织女 extra.  P = 3/5, R = 3/4, F1 = 2 * .6 * .75 / 1.35 = 2/3.
    assert (r.n_matched, r.n_predicted, r.n_ground_truth) == (3, 5, 4)
    assert r.character_precision == pytest.approx(3 / 5)
    assert r.character_recall == pytest.approx(3 / 4)
    assert r.character_f1 == pytest.approx(2 / 3)
    assert {(m.gt_name, m.pred_name, m.method, m.via) for m in r.matched_characters} == {
        ("牛郎", "牛郎", "exact", "牛郎"), ("王母娘娘", "王母", "gt_alias", "王母"),
        ("一儿一女", "儿女们", "gt_alias", "儿女们")}
    # Archetypes over the 3 matched: Hero = Hero, Villain = Villain, Everyman != Other -> 2/3.
    assert r.character_archetype_accuracy == pytest.approx(2 / 3)
    assert r.missing_characters == ["老牛"]
    assert r.extra_characters == ["银河", "织女"]
    assert r.gt_incomplete is False


def test_english_case_spacing_pred_alias_and_alias_overlap():
    gt = [("Little Red Riding Hood", "Red; the girl", "Hero"), ("The Wolf", "wolf; big bad wolf", "Villain"),
          ("Grandmother", "granny", "Mother")]
    pred = [("little  red riding hood", "", "hero"), ("Big Bad Wolf", "", "Villain"),
            ("Old Woman", "Granny; grandma", "Mentor")]
    r = score(pred, gt)
    # exact after case/space folding; "Big Bad Wolf" is a GT alias; "Granny" is shared by the alias lists.
    assert {(m.gt_name, m.method) for m in r.matched_characters} == {
        ("Little Red Riding Hood", "exact"), ("The Wolf", "gt_alias"), ("Grandmother", "alias_overlap")}
    assert r.character_f1 == 1.0
    # hero == Hero (canonical), Villain == Villain, Mother != Mentor -> 2/3
    assert r.archetype_correct == 2 and r.archetype_total == 3


def test_pred_alias_matches_gt_name():
    r = score([("Zhinü", "织女; Weaver Girl", "Lover")], [("织女", "", "Lover")])
    assert [(m.method, m.via) for m in r.matched_characters] == [("pred_alias", "织女")]


def test_empty_gt_is_incomplete_and_extras_not_counted():
    r = score([("牛郎", "", "Hero"), ("Fox", "", "Trickster")], [])
    assert r.gt_incomplete is True
    assert r.character_precision is None and r.character_recall is None and r.character_f1 is None
    assert r.extra_characters == ["牛郎", "Fox"]
    assert "not counted" in r.reason
    assert not any(m.field == "extra_character" for m in r.mismatches)


def test_gt_archetype_empty_is_skipped_for_accuracy():
    r = score([("A", "", "Hero"), ("B", "", "")], [("A", "", ""), ("B", "", "Villain")])
    # A: GT archetype empty -> not in the denominator; B: predicted empty -> wrong.  0/1.
    assert (r.archetype_correct, r.archetype_total, r.character_archetype_accuracy) == (0, 1, 0.0)


def test_one_to_one_matching_with_duplicate_names():
    r = score([("孙悟空", "", ""), ("孙悟空", "", "")], [("孙悟空", "", "")])
    assert (r.n_matched, r.n_extra) == (1, 1)


def test_summary_keys():
    r = score([("A", "", "")], [("A", "", "")])
    assert CharacterEvaluator.get_metrics_summary(r) == {
        "character_precision": 1.0, "character_recall": 1.0, "character_f1": 1.0,
        "character_archetype_accuracy": None}
