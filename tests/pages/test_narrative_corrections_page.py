"""AppTest of "Apply review corrections" on the Narrative page (components/corrections.py, kind "narrative"):
off it is a toggle and nothing else; on, patch files or a narrative review session re-score the demo's two
stories and the overall and component scores are shown before and after with intervals and a paired test."""

from __future__ import annotations

import pytest

from evaluators.demo import demo_path
from evaluators.io.gt_patch import PatchEntry, file_sha256, write_gt_patch
from evaluators.review.store import ReviewStore
from tests.pages.helpers import NARRATIVE_PAGE, run_page
from tests.pages.test_corrections_pages import applied_rows, effect_rows, with_patch

EN, ZH = "EN_001_lantern_keeper_v3.json", "ZH_001_石匠与山神_v3.json"
# characters before: EN 3 matched of 4 predicted / 4 GT: 2*3/8 = 3/4; ZH 4 of 5 / 5: 2*4/10 = 4/5
CHARS_BEFORE = {EN: 3 / 4, ZH: 4 / 5}
# with "the villagers" (EN) and 村长 (ZH) removed from the GT: 2*3/(4+3) = 6/7 and 2*4/(5+4) = 8/9
CHARS_AFTER = {EN: 6 / 7, ZH: 8 / 9}


def removals() -> list[PatchEntry]:
    return [PatchEntry("characters[the villagers]", file_sha256(demo_path("narrative", EN)), "remove",
                       ("the villagers",), (), "lead", "not a character"),
            PatchEntry("characters[村长]", file_sha256(demo_path("narrative", ZH)), "remove", ("村长",), (), "lead",
                       "不是人物")]


def test_off_it_is_only_a_toggle():
    at = run_page(NARRATIVE_PAGE, source="demo")
    assert at.toggle(key="nar_fix_on").value is False
    assert not [r for r in at.radio if r.key == "nar_fix_source"]


def test_uploaded_patch_before_and_after():
    at = with_patch(run_page(NARRATIVE_PAGE, source="demo"), "nar_fix", "fix.jsonl", write_gt_patch(removals()))
    assert {r["gt_file"]: r["applied"] for r in applied_rows(at, "nar_fix")} == {EN: 1, ZH: 1}
    rows = {r["metric"]: r for r in effect_rows(at, "nar_fix")}
    chars = rows["characters"]
    assert chars["n"] == 2 and chars["changed"] == 2
    assert chars["before"] == pytest.approx(sum(CHARS_BEFORE.values()) / 2)
    assert chars["after"] == pytest.approx(sum(CHARS_AFTER.values()) / 2)
    # overall = mean of the five components of each story: only characters change, by (after - before) / 5
    gain = sum(CHARS_AFTER[f] - CHARS_BEFORE[f] for f in (EN, ZH)) / 5
    assert rows["overall"]["delta"] == pytest.approx(gain / 2)
    assert rows["overall"]["before_ci_low"] <= rows["overall"]["before"] <= rows["overall"]["before_ci_high"]
    assert rows["relationships"]["delta"] == 0 and 0 < rows["overall"]["p_paired_bootstrap"] <= 1
    # a patch made for other files is refused as a whole
    other = write_gt_patch([PatchEntry("characters[村长]", "0" * 64, "remove", ("村长",), (), "lead")])
    at.file_uploader(key="nar_fix_files").upload("other.jsonl", other.encode("utf-8")).run()
    assert not at.exception
    assert any("no correction of this patch was made for a GT file of this run" in e.value for e in at.error)


def test_from_a_narrative_review_session(tmp_path, monkeypatch, deferred_downloads):
    from evaluators.io.sources import InputFile
    from evaluators.narrative.run import NarrativeInputs, run_narrative
    from evaluators.review.items import narrative_items

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    monkeypatch.setenv("EVALBOARD_DATABASE_URL", url)
    gt = [demo_path("narrative", f) for f in (EN, ZH)]
    pred = [demo_path("narrative", f.replace("_v3.json", "_prediction.json")) for f in (EN, ZH)]
    report = run_narrative(NarrativeInputs.from_files([InputFile(p.name, p.read_bytes()) for p in gt],
                                                      [InputFile(p.name, p.read_bytes()) for p in pred]))
    items = narrative_items(report.scored, {p.name: file_sha256(p) for p in gt})
    store = ReviewStore(url)
    session = store.create_session("demo stories", "narrative", items, created_by="lead", k=1,
                                   uploads=[store.put_upload(p.name, p.read_bytes()) for p in gt])
    for item in store.items(session.id):
        p = item.payload
        # the missed characters are not in the stories (GT errors: removed); 王二 -> 阿木's action type
        # "steal" is acceptable; everything else a model error
        if p["question"].startswith("characters · missing_character"):
            label = "gt_error"
        elif p.get("gt_path") == "narrative_events[zh-g4].action_layer.type":
            label = "acceptable_variant"
        else:
            label = "model_error"
        store.save_decision(item.id, "ann", label=label)
    store.engine.dispose()
    at = run_page(NARRATIVE_PAGE, source="demo")
    at.toggle(key="nar_fix_on").set_value(True).run()
    assert not at.exception, at.exception
    rows = {r["metric"]: r for r in effect_rows(at, "nar_fix")}
    assert rows["characters"]["after"] == pytest.approx(sum(CHARS_AFTER.values()) / 2)
    # action layer: ZH 17 of 25 GT fields right -> 18/25; EN 21/29 unchanged: +1/25 / 2
    assert rows["action_layer"]["delta"] == pytest.approx((18 / 25 - 17 / 25) / 2)
    html = deferred_downloads["report_with_corrections.html"]().decode("utf-8")
    assert "Review corrections: before and after" in html and "2 applied" in html
