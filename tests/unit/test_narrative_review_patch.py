"""Review -> GT patch -> CLI, end to end, for the narrative task (issue 19), on real fairytale files.

Two stories of ``../shared/data/fairytales`` (CH_002 牛郎织女, CH_003 孟姜女哭长城) are scored, their
mismatches become a k = 2 review session (the items of :func:`evaluators.review.items.narrative_items`,
both GT files kept with the session), "ann" and "bob" decide every item by the rule written below and
"lead" adjudicates their disagreements with the service functions; ``review patch`` writes the patch,
``python -m evaluators narrative --gt-patch`` applies it, and the numbers are checked against a hand
computation from the stories' counts.  On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import shutil

import pytest

from evaluators.cli import main
from evaluators.io.gt_patch import file_sha256, read_gt_patch_file
from evaluators.narrative.run import NarrativeInputs, run_narrative
from evaluators.review import service as rs
from evaluators.review.items import narrative_items
from evaluators.review.store import ReviewStore
from tests.conftest import require_shared

STORIES = ("CH_002_牛郎织女", "CH_003_孟姜女哭长城")
PREDICTIONS = ("CH_002_牛郎织女_v3_prediction.json", "CH_003_孟姜女哭长城_prediction.json")
#: The event of CH_003 whose relationship 万喜良 -> 孟姜女 the lead removes (it occurs in three events).
WAN_EVENT = "ea26428b-63bc-4f13-95a6-7fb8c40bdea2"
ACTION_EVENT = "9b86472e-3e87-4555-a0f1-58540deb9edf"


@pytest.fixture
def stories(tmp_path):
    """Copies of the two stories' GT files and predictions: ``(gt folder, prediction folder)``."""
    root = require_shared("fairytales")
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    for s in STORIES:
        shutil.copy(root / "gt_v3" / f"{s}_v3.json", gt)
    for p in PREDICTIONS:
        shutil.copy(root / "predictions" / p, pred)
    return gt, pred


def rule(item, who):
    """The reviewers' rule: ``(label of ann or bob, lead's adjudication or None)``.

    - the predicted archetype "Other" of 秦始皇 and 乌鸦 (CH_003), the predicted type "travel" of the wall
      event (CH_003) and the predicted relationship labels of 老牛 -> 牛郎 (CH_002): acceptable variants,
      both agree;
    - the missed characters 卢教 and 孟兴 (CH_003) are not in the story: ann says GT error, bob model error;
      the lead removes them (GT error, no corrected value);
    - the wall event's status "attempt" (CH_003): ann GT error, bob model error; the lead corrects it to
      "success";
    - the missed 万喜良 -> 孟姜女 of event ea26428b (CH_003): ann GT error, bob model error; the lead removes it;
    - the extra predicted character 银河 (CH_002): both call it acceptable, but it has no GT place (skipped);
    - every other mismatch: a model error, both agree.
    """
    component, field = item["question"].split(" · ")[:2]
    path = item.get("gt_path", "")
    if (field == "archetype" and item["note"] in ("character 秦始皇", "character 乌鸦")) \
            or (component == "action_layer" and field == "type" and ACTION_EVENT in path) \
            or field in ("relationship_level1", "relationship_level2") \
            or (field == "extra_character" and item["prediction"] == "银河"):
        return "acceptable_variant", None
    if field == "missing_character" and item["ground_truth"] in ("卢教", "孟兴"):
        return ("gt_error" if who == "ann" else "model_error"), ("gt_error", None)
    if component == "action_layer" and field == "status" and ACTION_EVENT in path:
        return ("gt_error" if who == "ann" else "model_error"), ("gt_error", "success")
    if field == "missing_relationship" and WAN_EVENT in path:
        return ("gt_error" if who == "ann" else "model_error"), ("gt_error", None)
    return "model_error", None


def make_session(url, gt, pred):
    report = run_narrative(NarrativeInputs.from_paths(gt, pred))
    files = sorted(gt.iterdir())
    digests = {f.name: file_sha256(f) for f in files}
    store = ReviewStore(url)
    session = store.create_session("narrative review", "narrative", narrative_items(report.scored, digests),
                                   created_by="lead", k=2,
                                   uploads=[store.put_upload(f.name, f.read_bytes()) for f in files])
    for item in store.items(session.id):
        for who in ("ann", "bob"):
            rs.decide(store, session, who, item.id, rule(item.payload, who)[0])
        adjudication = rule(item.payload, "lead")[1]
        if adjudication is not None:
            rs.adjudicate(store, session, "lead", item.id, adjudication[0], "the GT is wrong here",
                          corrected_answer=adjudication[1])
    store.engine.dispose()
    return report, digests


def test_narrative_review_patch_cli(review_url, stories, tmp_path, capsys):
    gt, pred = stories
    before, digests = make_session(review_url, gt, pred)
    d2, d3 = (digests[f"{s}_v3.json"] for s in STORIES)
    patch = tmp_path / "nar.patch.jsonl"
    capsys.readouterr()
    assert main(["review", "patch", "--db", review_url, "--session", "narrative review", "--gt", str(gt),
                 "--out", str(patch)]) == 0
    err = capsys.readouterr().err
    assert "no place in the GT" in err  # 银河: only in the prediction
    entries = read_gt_patch_file(patch).entries
    rel = f"narrative_events[{'51923dc8-acf0-477d-b540-36baccc032fd'}].relationships[老牛 -> 牛郎]"
    assert sorted((e.gt_digest, e.record_id, e.op, e.old, e.new) for e in entries) == sorted([
        (d2, rel + ".relationship_level1", "add_answer", ("Social & Alliance",), ("Hierarchy",)),
        (d2, rel + ".relationship_level2", "add_answer", ("ally",), ("mentor_student",)),
        (d3, "characters[秦始皇].archetype", "add_answer", ("Ruler",), ("Other",)),
        (d3, "characters[乌鸦].archetype", "add_answer", ("Sidekick/Helper",), ("Other",)),
        (d3, "characters[卢教]", "remove", ("卢教",), ()),
        (d3, "characters[孟兴]", "remove", ("孟兴",), ()),
        (d3, f"narrative_events[{ACTION_EVENT}].action_layer.type", "add_answer", ("attack",), ("travel",)),
        (d3, f"narrative_events[{ACTION_EVENT}].action_layer.status", "replace", ("attempt",), ("success",)),
        (d3, f"narrative_events[{WAN_EVENT}].relationships[万喜良 -> 孟姜女]", "remove", ("万喜良 -> 孟姜女",), ()),
    ])
    assert all(e.session == "narrative review" for e in entries)

    out = tmp_path / "after.json"
    assert main(["narrative", "--gt", str(gt), "--pred", str(pred), "--gt-patch", str(patch), "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text(encoding="utf-8"))
    docs = {d["story_id"]: d["result"] for d in data["documents"]}
    ch2, ch3 = docs[STORIES[0]], docs[STORIES[1]]
    # CH_002: characters 10 matched of 18 predicted / 10 GT: F1 = 2*10/(18+10) = 5/7, unchanged;
    # relationships: the accepted level-1 and level-2 labels of 老牛 -> 牛郎 make its matched pair right:
    # level1 1/2 -> 2/2, level2 1/2 -> 2/2, strict 1 -> 2 of 16 predicted / 11 GT: strict F1 2/27 -> 4/27;
    # relationship F1 (agent and target only) stays 2*2/(16+11) = 4/27
    r2 = ch2["detailed_results"]["relationships"]
    assert (r2["level1_correct"], r2["level1_total"], r2["level2_correct"], r2["strict_correct"]) == (2, 2, 2, 2)
    assert r2["relationship_strict_f1"] == pytest.approx(4 / 27)
    assert ch2["component_scores"]["relationships"] == pytest.approx(4 / 27)
    assert ch2["component_scores"]["characters"] == pytest.approx(5 / 7)
    # CH_003: 6 matched of 8 predicted / 11 GT, 卢教 and 孟兴 removed: 2*6/(8+11) = 12/19 -> 2*6/(8+9) = 12/17;
    # archetypes: 秦始皇 and 乌鸦 accepted as "Other": 0/6 -> 2/6
    c3 = ch3["detailed_results"]["characters"]
    assert (c3["n_matched"], c3["n_ground_truth"], c3["archetype_correct"], c3["archetype_total"]) == (6, 9, 2, 6)
    assert ch3["component_scores"]["characters"] == pytest.approx(12 / 17)
    # action layer: 2 of 4 GT fields right (category, function) -> type accepted, status corrected to the
    # predicted "success": 4/4
    assert ch3["component_scores"]["action_layer"] == pytest.approx(1.0)
    # relationships: 17 GT, none found -> 16 GT (one removed), still none found: F1 0
    r3 = ch3["detailed_results"]["relationships"]
    assert (r3["total_relationships_gt"], r3["total_relationships_correct"]) == (16, 0)
    # overall = mean of the available components (sentiment has nothing to compare in CH_003):
    # before (12/19 + 0 + 1/2 + 1) / 4, after (12/17 + 0 + 1 + 1) / 4
    o3_before, o3_after = (12 / 19 + 0.5 + 1) / 4, (12 / 17 + 2) / 4
    assert ch3["overall_score"] == pytest.approx(o3_after)
    o2 = ch2["overall_score"]  # (5/7 + 4/27 + 1 + 16/47 + 1) / 5, unchanged by the corrections
    assert o2 == pytest.approx((5 / 7 + 4 / 27 + 1 + 16 / 47 + 1) / 5)
    # micro (pooled counts): characters 16 of 26 predicted / 21 GT -> / 19 GT: 32/47 -> 32/45;
    # action fields 16 + 2 of 47 + 4 -> 16 + 4: 18/51 -> 20/51; strict relationships 1 -> 2 of 16 / 28 -> 27
    micro = data["micro"]
    assert micro["character_f1"] == pytest.approx(32 / 45)
    assert micro["action_layer_field_accuracy"] == pytest.approx(20 / 51)
    assert micro["relationship_strict_f1"] == pytest.approx(4 / 43)
    assert micro["level1_accuracy"] == pytest.approx(1.0)
    # before / after, documents paired: the mean over the two stories
    effect = data["gt_patch"]["effect"]
    assert effect["unit"] == "document" and effect["metrics"][0] == "overall_score"
    metrics = {m["metric"]: m for m in effect["changes"][0]["metrics"]}
    overall = metrics["overall_score"]
    assert overall["n_paired"] == 2
    assert overall["before"]["estimate"] == pytest.approx((o2 + o3_before) / 2)
    assert overall["after"]["estimate"] == pytest.approx((o2 + o3_after) / 2)
    assert overall["change"]["delta"] == pytest.approx((o3_after - o3_before) / 2)
    # two documents: the percentile bootstrap interval of a mean lies between the two documents' values
    assert overall["after"]["ci_low"] == pytest.approx(min(o2, o3_after))
    assert overall["after"]["ci_high"] == pytest.approx(max(o2, o3_after))
    assert metrics["characters"]["after"]["estimate"] == pytest.approx((5 / 7 + 12 / 17) / 2)
    assert metrics["action_layer"]["change"]["delta"] == pytest.approx((1 - 0.5) / 2)
    assert metrics["sentiment"]["n_paired"] == 1  # CH_003 has no sentiment to compare
    apps = {name: app for name, app in data["gt_patch"]["applications"]}
    assert [c["status"] for c in apps[f"{STORIES[0]}_v3.json"]["changes"]] == ["applied"] * 2
    assert [c["status"] for c in apps[f"{STORIES[1]}_v3.json"]["changes"]] == ["applied"] * 7
    assert "7 applied" in printed and "overall before" in printed and "paired bootstrap" in printed
    assert f"{100 * (o2 + o3_before) / 2:.2f}% [" in printed and f"{100 * (o2 + o3_after) / 2:.2f}% [" in printed
    # the Markdown report has the same before / after rows (numbers to 3 decimals)
    report_md = tmp_path / "after.md"
    assert main(["narrative", "--gt", str(gt), "--pred", str(pred), "--gt-patch", str(patch), "--out",
                 str(report_md), "--quiet"]) == 0
    capsys.readouterr()
    text = report_md.read_text(encoding="utf-8")
    assert f"| overall | 2 | {(o2 + o3_before) / 2:.3f} [" in text and f"| {(o2 + o3_after) / 2:.3f} [" in text
    # the GT files are untouched
    assert {f.name: file_sha256(f) for f in gt.iterdir()} == digests

    # twice: the same numbers, every line already in place the second time
    assert main(["narrative", "--gt", str(gt), "--pred", str(pred), "--gt-patch", str(patch), "--gt-patch",
                 str(patch), "--out", str(out), "--quiet"]) == 0
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["micro"] == data["micro"]
    assert "7 already in place" in capsys.readouterr().out

    # bad lines are located and skipped, the good ones still apply
    bad = tmp_path / "bad.patch.jsonl"
    lines = patch.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[0]) | {"op": "rename"}
    bad.write_text("\n".join(lines + ["{not json", json.dumps(broken, ensure_ascii=False)]) + "\n", encoding="utf-8")
    assert main(["narrative", "--gt", str(gt), "--pred", str(pred), "--gt-patch", str(bad), "--out", str(out),
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"bad.patch.jsonl:{len(lines) + 1}" in err and f"bad.patch.jsonl:{len(lines) + 2}" in err
    assert json.loads(out.read_text(encoding="utf-8"))["micro"] == data["micro"]

    # another GT file (CH_003 with one byte changed): its lines are skipped with their patch line, CH_002's apply
    other = tmp_path / "other_gt"
    other.mkdir()
    shutil.copy(gt / f"{STORIES[0]}_v3.json", other)
    raw = (gt / f"{STORIES[1]}_v3.json").read_bytes()
    (other / f"{STORIES[1]}_v3.json").write_bytes(raw.replace(b"{", b"{ ", 1))
    assert main(["narrative", "--gt", str(other), "--pred", str(pred), "--gt-patch", str(patch), "--out", str(out),
                 "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("made for a GT file that is not in this run") == 7
    mixed = json.loads(out.read_text(encoding="utf-8"))
    mixed_docs = {d["story_id"]: d["result"] for d in mixed["documents"]}
    assert mixed_docs[STORIES[1]]["component_scores"]["characters"] == pytest.approx(12 / 19)  # not patched
    assert mixed_docs[STORIES[0]]["detailed_results"]["relationships"]["strict_correct"] == 2  # patched
    # ... and a run whose GT files the patch has no line for: refused as a whole
    only = tmp_path / "only_gt"
    only.mkdir()
    shutil.copy(other / f"{STORIES[1]}_v3.json", only)
    assert main(["narrative", "--gt", str(only), "--pred", str(pred), "--gt-patch", str(patch), "--quiet"]) == 2
    assert "no correction of this patch was made for a GT file of this run" in capsys.readouterr().err
    # review patch refuses files the session was not made from
    assert main(["review", "patch", "--db", review_url, "--session", "narrative review", "--gt", str(only)]) == 2
    assert "was made from" in capsys.readouterr().err


def test_items_of_older_sessions_stay_readable(review_url):
    """A narrative item made before items carried their GT place is listed as skipped, not an error."""
    from evaluators.review.gt_patch import build_narrative_patch

    store = ReviewStore(review_url)
    old = {"kind": "narrative", "id": "CH_003:characters:6", "story": "CH_003", "question": "characters · "
           "missing_character", "ground_truth": "卢教", "prediction": "", "note": ""}
    session = store.create_session("old narrative", "narrative", [old], created_by="lead", k=1)
    item = store.items(session.id)[0]
    rs.adjudicate(store, session, "lead", item.id, "gt_error", "not in the story")
    built = build_narrative_patch(store, session.id, {})
    assert built.entries == () and built.skipped == (("CH_003:characters:6", "this mismatch has no place in the GT "
                                                      "(only in the prediction, or an item made before items "
                                                      "carried their GT place)"),)
    store.engine.dispose()
