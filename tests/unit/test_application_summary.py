"""The one summary of what a GT patch did to each file (reports.corrections.application_summaries) and its three
renderings: the terminal line, the JSON/page rows and the HTML paragraph."""

from __future__ import annotations

from evaluators.io.gt_patch import PatchEntry, apply_gt_patch, record_key
from evaluators.reports.corrections import application_summaries, applications_rows, applications_text

D = "d" * 64
GOLD = {"en-1": ("Paris",), "en-2": ("Mars",), "zh-1": ("北京",), "zh-2": ("木星",)}


def bound(rid, op, old, new):
    return PatchEntry(rid, D, op, tuple(old), tuple(new), "ann")


def keyed(rid, old, new):
    return PatchEntry(rid, "", "add_answer", tuple(old), tuple(new), "ann", version=3, gt_key=record_key(rid, old))


ENTRIES = [
    bound("en-1", "add_answer", ["Paris"], ["Paris, France"]),   # applied
    bound("zh-1", "replace", ["北京"], ["北京市"]),                 # applied
    bound("zh-1", "replace", ["北京"], ["南京"]),                   # conflict: 北京市 stands
    bound("en-2", "add_answer", ["Mars"], ["Mars"]),               # already in place
    bound("xx-9", "add_answer", ["?"], ["!"]),                     # unknown id
    keyed("zh-2", ["土星"], ["土星"]),                               # made for another GT of zh-2 (木星)
]


def test_one_summary_three_renderings():
    app = apply_gt_patch(GOLD, ENTRIES, D, refuse_unmatched=False)
    (s,) = application_summaries([("gold.jsonl", app)])
    # 6 entries: 2 applied, 1 already in place, 1 conflict, 1 unknown id, 1 for another GT; en-1 and zh-1 changed
    assert (s.gt_file, s.corrections, s.applied, s.already_in_place, s.conflicts, s.unknown_ids, s.other_gt,
            s.records_changed) == ("gold.jsonl", 6, 2, 1, 1, 1, 1, 2)
    assert applications_text([("gold.jsonl", app)]) == (
        "  gold.jsonl: 6 correction(s): 2 applied, 1 already in place, 1 conflict(s), 1 unknown id(s), "
        "1 for another GT of the record; 2 record id(s) with new answers")
    # the rows (JSON "applied" section, page table) keep their keys: no other_gt column
    assert applications_rows([("gold.jsonl", app)]) == [
        {"gt_file": "gold.jsonl", "corrections": 6, "applied": 2, "already_in_place": 1, "conflicts": 1,
         "unknown_ids": 1, "records_changed": 2}]


def test_the_html_paragraph_reads_the_same_summary():
    from evaluators.metrics.before_after import score_effect
    from evaluators.reports.corrections import add_html_section
    from evaluators.reports.html import HtmlReport

    app = apply_gt_patch(GOLD, ENTRIES[:2], D)  # 2 applied, nothing else: no "another GT" clause
    effect = score_effect({"A": {"em": [0, 0, 1, 1]}}, {"A": {"em": [1, 0, 1, 1]}}, ["em"], n_resamples=20)
    page = HtmlReport("t")
    add_html_section(page, effect, [("gold.jsonl", app)])
    html = page.render()
    assert "gold.jsonl: 2 correction(s) — 2 applied, 0 already in place, 0 conflict(s), 0 unknown id(s)</p>" in html
