"""Issue 30: session settings in the product (guidelines with versions and diffs, label help, k,
adjudicators, blind) and adjudication with context, on SQLite and PostgreSQL (``review_url``)."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.review import ReviewStore
from evaluators.review import service as rs


def _items(n: int) -> list[dict]:
    """QA items, Chinese and English: even ones wrong (Lyon), odd ones right."""
    return [{"kind": "qa", "id": f"q{i}", "question": f"法国的首都是哪里？ What is the capital of France? ({i})",
             "ground_truth": "巴黎 Paris", "prediction": "Paris" if i % 2 else "里昂 Lyon", "system": f"s{i % 2}",
             "exact_match": float(i % 2), "token_f1": 0.5} for i in range(n)]


@pytest.fixture
def store(review_url):
    return ReviewStore(review_url)


def _decide_five(store, session, who, items, label="model_error"):
    for item in items:
        rs.decide(store, session, who, item.id, label)


def test_guidelines_versions_follow_each_decision_and_split_agreement(store):
    s = store.create_session("settings", "qa", _items(10), created_by="olga", k=2)
    s = rs.update_settings(store, s, "olga", guidelines="# Rules\n\nA variant is fine.\n")
    assert s.guidelines_version == 1
    items = store.items(s.id)
    _decide_five(store, s, "alice", items[:5])
    _decide_five(store, s, "bob", items[:5], "acceptable_variant")
    s = rs.update_settings(store, s, "olga", guidelines="# Rules\n\nA variant is fine.\n\n漏字算模型错误。\n")
    assert s.guidelines_version == 2
    _decide_five(store, s, "alice", items[5:])
    _decide_five(store, s, "bob", items[5:])
    versions = {d.item_id: d.guidelines_version for d in store.decisions(s.id) if d.annotator == "alice"}
    assert [versions[i.id] for i in items] == [1] * 5 + [2] * 5
    listed = rs.guidelines_versions(store, s)
    assert [v["version"] for v in listed] == [1, 2] and listed[0]["by"] == "olga"
    diff = rs.guidelines_diff(store, s, 1, 2)
    assert "+漏字算模型错误。" in diff and "--- guidelines v1" in diff and "+++ guidelines v2" in diff
    rows = rs.agreement_rows(store, s, by_guidelines=True)
    by_version = {(r["guidelines"], r["rating"], r["statistic"]): r for r in rows}
    v1 = by_version[("v1", "labels (nominal)", "Cohen's kappa (mean of pairs)")]
    v2 = by_version[("v2", "labels (nominal)", "Cohen's kappa (mean of pairs)")]
    assert v1["n_items"] == 5 and v2["n_items"] == 5
    assert v1["meaningful"] != "yes" and "30" in v1["meaningful"]  # under-30 flag, per version


def test_label_help_k_adjudicators_and_blind_are_saved(store):
    s = store.create_session("more", "qa", _items(3), created_by="olga", k=1)
    s = rs.update_settings(store, s, "olga", labels_help={"correct": "说的和标准答案一样 Same as the GT."}, k=3,
                           adjudicators=["maria", " ivan "], blind=True)
    assert s.k == 3 and s.adjudicators == ("ivan", "maria") and s.blind
    assert s.settings["labels_help"]["correct"].startswith("说的")
    view = rs.review_view(store, s, "alice")
    assert dict((c[0], c[3]) for c in view.choices)["correct"].startswith("说的")
    assert rs.can_adjudicate(s, "maria")
    with pytest.raises(ValueError):
        rs.update_settings(store, s, "olga", k=0)
    with pytest.raises(ValueError):
        rs.update_settings(store, s, "olga", labels_help={"nonsense": "x"})


def test_a_non_owner_cannot_save_settings(store):
    s = store.create_session("owned", "qa", _items(2), created_by="olga")
    with pytest.raises(PermissionError, match="owner"):
        rs.update_settings(store, s, "mallory", guidelines="mine now")
    with pytest.raises(PermissionError):
        rs.update_settings(store, s, None, k=2)
    assert store.session(s.id).guidelines == "" and store.session(s.id).k == 1


def test_adjudication_shows_context_words_and_orders_gt_claims_first(store):
    s = store.create_session("adj", "qa", _items(4), created_by="olga", k=2)
    i = store.items(s.id)
    rs.decide(store, s, "alice", i[0].id, "model_error")
    rs.decide(store, s, "bob", i[0].id, "acceptable_variant")
    rs.decide(store, s, "alice", i[2].id, "gt_error", comment="标准答案写错了 the GT is wrong")
    rs.decide(store, s, "bob", i[2].id, "gt_error", comment="GT should say Lyon")
    order = [e.item_id for e in rs.adjudication_entries(store, s)]
    assert order == [i[2].id, i[0].id]                      # the GT-error claim first
    assert rs.next_to_adjudicate(store, s) == i[2].id
    v = rs.adjudication_view(store, s, "olga", i[2].id)
    assert v.question.startswith("法国的首都") and v.ground_truth == "巴黎 Paris" and v.prediction == "里昂 Lyon"
    assert v.system == "s0" and v.metrics
    comments = [r["comment"] for r in v.reviewers]
    assert "标准答案写错了 the GT is wrong" in comments and "GT should say Lyon" in comments
    assert {r["label"] for r in v.reviewers} == {rs.label_words("gt_error")} and "gt_error" not in rs.label_words(
        "gt_error")
    assert ("equal", "巴", "巴") not in v.diff and any(t == "replace" for t, _, _ in v.diff)  # CJK by character
    assert "".join(a for _, a, _ in v.diff) == v.ground_truth and "".join(b for _, _, b in v.diff) == v.prediction
    names = rs.adjudication_names(store, s)
    assert names[i[2].id].startswith("法国的首都") and "q2" in names[i[2].id]
    with pytest.raises(PermissionError):
        rs.adjudication_view(store, s, "alice", i[2].id)
    blind = rs.update_settings(store, s, "olga", blind=True)
    bv = rs.adjudication_view(store, blind, "olga", i[2].id)
    assert bv.system is None and bv.metrics is None


def test_cjk_aware_diff_words_for_latin_characters_for_cjk():
    ops = rs.text_diff("the capital is Paris", "the capital was Paris")
    assert ("replace", "is", "was") in ops
    ops = rs.text_diff("北京大学", "北京大字")
    assert ("replace", "学", "字") in ops


def _cli(*argv) -> int:
    return main(["review", *argv])


def test_cli_settings_saves_for_the_owner_and_refuses_others(store, tmp_path, capsys, review_url):
    s = store.create_session("cli", "qa", _items(2), created_by="olga")
    guide = tmp_path / "g.md"
    guide.write_text("# 审阅指南\nv1\n", encoding="utf-8")
    helpf = tmp_path / "help.json"
    helpf.write_text(json.dumps({"gt_error": "参考答案错了"}, ensure_ascii=False), encoding="utf-8")
    assert _cli("settings", "--db", review_url, "--session", "cli", "--guidelines", str(guide), "--label-help",
                str(helpf), "--k", "2", "--adjudicators", "maria,ivan", "--as", "mallory") == 2
    assert "owner" in capsys.readouterr().err
    assert _cli("settings", "--db", review_url, "--session", "cli", "--guidelines", str(guide), "--label-help",
                str(helpf), "--k", "2", "--adjudicators", "maria,ivan", "--blind", "--as", "olga") == 0
    got = store.session(s.id)
    assert got.k == 2 and got.adjudicators == ("ivan", "maria") and got.blind and got.guidelines_version == 1
    assert got.settings["labels_help"] == {"gt_error": "参考答案错了"}
    capsys.readouterr()
    assert _cli("settings", "--db", review_url, "--session", "cli") == 0
    out = capsys.readouterr().out
    assert "k: 2" in out and "ivan, maria" in out and "guidelines v1" in out and "blind: yes" in out


def test_guidelines_versions_travel_in_the_export_and_a_bad_history_is_refused(store, tmp_path):
    from evaluators.review.exchange import export_jsonl, import_jsonl

    s = store.create_session("travel", "qa", _items(2), created_by="olga")
    s = rs.update_settings(store, s, "olga", guidelines="v1 规则")
    s = rs.update_settings(store, s, "olga", guidelines="v2 规则")
    text = export_jsonl(store, s.id)
    fresh = ReviewStore(tmp_path / "fresh.sqlite")
    import_jsonl(fresh, text.encode("utf-8"))
    copy = fresh.session_by_name("travel")
    assert [(v["version"], v["text"]) for v in rs.guidelines_versions(fresh, copy)] == [(1, "v1 规则"), (2, "v2 规则")]
    assert export_jsonl(fresh, copy.id) == text
    bad = text.replace('"guidelines_versions": [', '"guidelines_versions": ["not a version", ', 1)
    other = ReviewStore(tmp_path / "other.sqlite")
    report = import_jsonl(other, bad.encode("utf-8"))
    assert any("guidelines_versions" in i.message for i in report.issues)          # reported by line
    kept = other.session_by_name("travel")                                          # the items still come in,
    assert kept is None or rs.guidelines_versions(other, kept) == []                # never the bad history
