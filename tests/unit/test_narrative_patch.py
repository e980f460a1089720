"""GT patches of narrative stories (:mod:`evaluators.narrative.patch`): each op at each kind of place, on
hand-made Chinese and English documents, with the scores worked out by hand."""

from __future__ import annotations

import json

import pytest

from evaluators.io.gt_patch import (GTPatchMismatch, GTPatchSet, PatchEntry, apply_gt_patch, file_sha256,
                                    read_gt_patch, write_gt_patch)
from evaluators.io.sources import InputFile
from evaluators.narrative import evaluate
from evaluators.narrative.loader import load_document
from evaluators.narrative.locate import gold_values, locate
from evaluators.narrative.patch import apply_document_patch, patch_gt_files, patch_story
from evaluators.narrative.run import NarrativeInputs, run_narrative
from tests.unit.narrative_builders import action, doc, event, rel, span

ZH = "牛郎和老牛住在一起。织女来到人间。王母娘娘划出天河。"
EN = "The keeper lit the lamp. A storm came at night. The keeper saved the ship."


def zh_pair():
    gt = doc(ZH, [("牛郎", [], "Hero"), ("老牛", [], "Mentor"), ("织女", [], "Lover"), ("王母娘娘", [], "Villain")],
             [event("e1", span(ZH, "牛郎和老牛住在一起。"), [rel("老牛", "牛郎", "Social & Alliance", "ally", "positive")],
                    action("physical", "give", "home", "success", "setup")),
              event("e2", span(ZH, "织女来到人间。"), [], action("physical", "travel", "", "success", "trigger")),
              event("e3", span(ZH, "王母娘娘划出天河。"), [rel("王母娘娘", "织女", "Hierarchy", "ruler_subject", "negative")])],
             story_id="ZH_T")
    pred = doc(ZH, [("牛郎", [], "Hero"), ("牛", [], "Other"), ("织女", [], "Lover")],
               [event("p1", span(ZH, "牛郎和老牛住在一起。"), [rel("牛", "牛郎", "Hierarchy", "mentor_student", "neutral")],
                      action("physical", "give", "home", "success", "setup")),
                event("p2", span(ZH, "织女来到人间"), [], action("physical", "steal", "", "success", "trigger"))],
               story_id="ZH_T")
    return gt, pred


def entry(rid, op, old=(), new=(), digest="a" * 64):
    return PatchEntry(rid, digest, op, tuple(old), tuple(new), "lead", "review", "s")


def scored(gt, pred, entries, digest="a" * 64):
    loaded = load_document(json.dumps(gt, ensure_ascii=False).encode(), "gt.json")
    dp, app = patch_story(loaded, entries, digest)
    return evaluate(pred, apply_document_patch(loaded, dp)), app


def test_places_and_locate_agree():
    gt, pred = zh_pair()
    gold = gold_values(load_document(gt).doc)
    assert gold["characters[老牛]"] == ("老牛",) and gold["characters[老牛].archetype"] == ("Mentor",)
    assert gold["narrative_events[e1].relationships[老牛 -> 牛郎].sentiment"] == ("positive",)
    assert gold["narrative_events[e2].action_layer.context"] == ()  # empty GT value
    assert gold["narrative_events[e2].text_span"] == (f"[{ZH.index('织女')}, {ZH.index('织女') + 7})",)
    # every mismatch with a GT place names a place of the GT document
    r = evaluate(pred, gt)
    paths = [locate(m.component, m.field, m.gt_value, m.gt_event, m.note) for m in r.mismatches()]
    assert [p for p in paths if p is not None] and all(p in gold for p in paths if p is not None)
    assert {m.field for m, p in zip(r.mismatches(), paths) if p is None} <= {"extra_character",
                                                                             "spurious_relationship",
                                                                             "spurious_span"}


def test_character_alias_rename_remove():
    gt, pred = zh_pair()
    before = evaluate(pred, gt)
    # 2 matched (牛郎, 织女) of 3 predicted / 4 GT: F1 = 2*2/(3+4) = 4/7; 老牛 -> 牛郎 vs 牛 -> 牛郎: no match
    assert before.characters.n_matched == 2 and before.component_scores["characters"] == pytest.approx(4 / 7)
    assert before.relationships.total_relationships_correct == 0
    # "牛" accepted as an alias of 老牛: 3 matched: 2*3/(3+4) = 6/7; the relationship 牛 -> 牛郎 now resolves
    # to 老牛 -> 牛郎: 1 correct of 1 predicted / 2 GT: F1 = 2*1/(1+2) = 2/3
    r, _ = scored(gt, pred, [entry("characters[老牛]", "add_answer", ["老牛"], ["牛"])])
    assert r.characters.n_matched == 3 and r.component_scores["characters"] == pytest.approx(6 / 7)
    assert r.component_scores["relationships"] == pytest.approx(2 / 3)
    # renamed to "牛" instead (a GT error): the GT relationship written with 老牛 follows the new name
    r, _ = scored(gt, pred, [entry("characters[老牛]", "replace", ["老牛"], ["牛"])])
    assert r.characters.n_matched == 3 and r.component_scores["relationships"] == pytest.approx(2 / 3)
    # 王母娘娘 removed (not in the story): 2 matched of 3 / 3 GT: 4/6
    r, app = scored(gt, pred, [entry("characters[王母娘娘]", "remove", ["王母娘娘"])])
    assert r.characters.n_ground_truth == 3 and r.component_scores["characters"] == pytest.approx(4 / 6)
    assert [c.status for c in app.changes] == ["applied"]


def test_labels_accepted_replaced_removed():
    gt, pred = zh_pair()
    base = [entry("characters[老牛]", "add_answer", ["老牛"], ["牛"])]  # so that 牛 -> 牛郎 is matched
    key = "narrative_events[e1].relationships[老牛 -> 牛郎]"
    r, _ = scored(gt, pred, base)
    # matched pair: level1 Social & Alliance vs Hierarchy, level2 ally vs mentor_student, positive vs neutral
    assert (r.relationships.level1_correct, r.relationships.level2_correct, r.sentiment.total_sentiment_correct) \
        == (0, 0, 0)
    r, _ = scored(gt, pred, base + [entry(key + ".relationship_level1", "add_answer", ["Social & Alliance"],
                                          ["Hierarchy"]),
                                    entry(key + ".relationship_level2", "replace", ["ally"], ["mentor_student"]),
                                    entry(key + ".sentiment", "add_answer", ["positive"], ["neutral"])])
    assert (r.relationships.level1_correct, r.relationships.level2_correct) == (1, 1)
    # sentiment: 1 correct of 1 predicted / 1 GT: F1 1 (micro), counted under the GT label
    assert r.component_scores["sentiment"] == pytest.approx(1.0)
    assert r.sentiment.per_label["positive"]["tp"] == 1
    # action layer of the two aligned events: e1 5/5 right, e2 type travel vs steal: 4 right of 4 present
    # fields (context empty) + 5 = 8/9; accepted "steal" -> 9/9; removed (empty GT) -> 8/8
    r, _ = scored(gt, pred, [])
    assert r.component_scores["action_layer"] == pytest.approx(8 / 9)
    r, _ = scored(gt, pred, [entry("narrative_events[e2].action_layer.type", "add_answer", ["travel"], ["steal"])])
    assert r.component_scores["action_layer"] == pytest.approx(1.0)
    r, _ = scored(gt, pred, [entry("narrative_events[e2].action_layer.type", "remove", ["travel"])])
    assert (r.action_layer.field_total["type"], r.component_scores["action_layer"]) == (2 - 1, pytest.approx(1.0))


def test_relationship_and_span_places_english():
    gt = doc(EN, [("keeper", [], "Hero"), ("storm", [], "Villain")],
             [event("e1", span(EN, "The keeper lit the lamp."), [rel("keeper", "lamp", "Work", "owner")]),
              event("e2", span(EN, "A storm came at night. The keeper saved the ship."), [rel("storm", "keeper")])],
             story_id="EN_T")
    pred = doc(EN, [("keeper", [], "Hero"), ("storm", [], "Villain")],
               [event("p1", span(EN, "The keeper lit the lamp."), [rel("keeper", "light", "Work", "owner")]),
                event("p2", span(EN, "A storm came at night."), [rel("storm", "keeper")])], story_id="EN_T")
    before = evaluate(pred, gt)
    # e2 [25, 74) vs p2 [25, 47): IoU = 22/49 < 0.5: not aligned (ids differ; the spans are usable)
    assert before.summary.events_aligned == 1 and before.relationships.total_relationships_gt == 2
    # the GT span of e2 replaced by the predicted one: aligned, its relationship found
    s, e = EN.index("A storm"), EN.index("A storm") + len("A storm came at night.")
    whole = f"[{s}, {EN.index('ship.') + 5})"  # [25, 74)
    r, _ = scored(gt, pred, [entry("narrative_events[e2].text_span", "add_answer", [whole], [f"[{s}, {e})"])])
    assert r.summary.events_aligned == 2 and r.text_span.span_categories["correct"] == 2
    # keeper -> lamp replaced by keeper -> light: 2 correct of 2 / 2: F1 1
    r, _ = scored(gt, pred, [entry("narrative_events[e1].relationships[keeper -> lamp]", "replace",
                                   ["keeper -> lamp"], ["keeper -> light"]),
                             entry("narrative_events[e2].text_span", "replace", [whole], [f"[{s}, {e})"])])
    assert r.component_scores["relationships"] == pytest.approx(1.0)
    # removed: e1 has no GT relationship left (skipped: keeper -> light is extra, not counted); storm -> keeper
    # found: 1 correct of 1 counted prediction / 1 GT: F1 1
    r, _ = scored(gt, pred, [entry("narrative_events[e1].relationships[keeper -> lamp]", "remove",
                                   ["keeper -> lamp"]),
                             entry("narrative_events[e2].text_span", "replace", [whole], [f"[{s}, {e})"])])
    assert (r.relationships.total_relationships_gt, r.relationships.n_pred_extra) == (1, 1)
    assert r.component_scores["relationships"] == pytest.approx(1.0)


def test_refused_ops_conflicts_and_idempotence():
    gt, pred = zh_pair()
    loaded = load_document(gt)
    entries = [entry("narrative_events[e1].relationships[老牛 -> 牛郎]", "add_answer", ["老牛 -> 牛郎"], ["x"]),
               entry("narrative_events[e2].text_span", "replace", [], ["not a span"]),
               entry("characters[老牛].archetype", "replace", ["Hero"], ["Sage"]),  # old is not the GT's
               entry("characters[没有]", "remove", ["没有"])]
    dp, app = patch_story(loaded, entries, "a" * 64)
    assert [c.status for c in app.changes] == ["conflict", "unknown_record", "unsupported", "unsupported"]
    assert not dp and len(app.issues) == 4
    good = [entry("characters[老牛]", "remove", ["老牛"]), entry("characters[老牛].archetype", "add_answer",
                                                                ["Mentor"], ["Other"])]
    dp, app = patch_story(loaded, good + good, "a" * 64)
    assert [c.status for c in app.changes] == ["applied", "applied", "unchanged", "unchanged"]
    twice = apply_document_patch(apply_document_patch(loaded, dp), dp)
    assert [c.name for c in twice.doc.characters] == ["牛郎", "织女", "王母娘娘"]
    assert [c.name for c in loaded.doc.characters] == ["牛郎", "老牛", "织女", "王母娘娘"]  # the GT as read


def test_remove_is_version_2_and_refused_by_other_tasks():
    e = entry("characters[老牛]", "remove", ["老牛"])
    text = write_gt_patch([e])
    assert json.loads(text)["version"] == 2 and "new" not in json.loads(text)
    assert read_gt_patch(text.encode()).entries == (e,)
    old = text.replace('"version": 2', '"version": 1')
    assert "needs" in read_gt_patch(old.encode()).issues[0].message
    app = apply_gt_patch({"characters[老牛]": ("老牛",)}, [e], "a" * 64)  # a task without remove
    assert [c.status for c in app.changes] == ["unsupported"] and app.answers == {}


def test_run_matches_lines_to_story_files_by_digest():
    gt, pred = zh_pair()
    gt_en = doc(EN, [("keeper", [], "Hero")], [], story_id="EN_T")
    files = [InputFile("ZH_T_v3.json", json.dumps(gt, ensure_ascii=False).encode()),
             InputFile("EN_T_v3.json", json.dumps(gt_en).encode())]
    preds = [InputFile("ZH_T_prediction.json", json.dumps(pred, ensure_ascii=False).encode()),
             InputFile("EN_T_prediction.json", json.dumps(doc(EN, [("keeper", [], "Hero")], [],
                                                              story_id="EN_T")).encode())]
    zh = file_sha256(files[0].data)
    lines = [entry("characters[王母娘娘]", "remove", ["王母娘娘"], digest=zh),
             entry("characters[keeper]", "remove", ["keeper"], digest="b" * 64)]
    patched = patch_gt_files(files, GTPatchSet(tuple(lines), ("p",)))
    assert [name for name, _ in patched.applications] == ["ZH_T_v3.json"]
    assert len(patched.issues) == 1 and "not in this run" in patched.issues[0].message
    report = run_narrative(NarrativeInputs(tuple(files), tuple(preds), gt_patch=GTPatchSet(tuple(lines), ("p",))))
    zh_after = next(r for r in report.scored if r.story_id == "ZH_T")
    assert zh_after.component_scores["characters"] == pytest.approx(4 / 6)  # as in test_character_alias_...
    change = report.corrections.effect.changes[0]
    # characters: ZH 4/7 -> 4/6, EN 1 -> 1 (1 matched of 1 / 1): mean before (4/7 + 1)/2, after (4/6 + 1)/2
    assert change.metric("characters").before.estimate == pytest.approx((4 / 7 + 1) / 2)
    assert change.metric("characters").change.delta == pytest.approx((4 / 6 - 4 / 7) / 2)
    with pytest.raises(GTPatchMismatch, match="no correction of this patch"):
        patch_gt_files(files, GTPatchSet((lines[1],), ("p",)))
