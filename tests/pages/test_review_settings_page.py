"""Issue 30 on the Review page (AppTest): owners edit the session settings (guidelines versions with a
diff, label help, k, adjudicators), decisions carry their guidelines version, the Agreement view splits by
it, a non-owner is told why they cannot; the Adjudicate view shows the item with its context."""

from __future__ import annotations

from evaluators.review import ReviewStore
from evaluators.review import service as rs
from tests.pages.test_review_page import PAGE, _click_label, _open, _shown_text, data_dir  # noqa: F401

ITEMS = [{"kind": "qa", "id": f"rec-{i}", "question": f"法国的首都是哪里？ Which city is the capital of France? #{i}",
          "ground_truth": "巴黎 Paris", "prediction": "里昂 Lyon", "system": "sys-a", "exact_match": 0.0,
          "token_f1": 0.25} for i in range(12)]


def _store(data_dir, k=1):
    store = ReviewStore(data_dir / "review.sqlite")
    return store, store.create_session("team", "qa", ITEMS, created_by="olga", k=k)


def _save_guidelines(at, sid, text):
    at.text_area(key=f"review_set_guidelines_{sid}").set_value(text)
    at.button(key=f"review_set_save_{sid}").click().run()
    assert not at.exception, at.exception


def test_guidelines_versions_decisions_diff_and_agreement_split(data_dir):
    store, s = _store(data_dir, k=2)
    owner = _open(s.id, me="olga")
    _save_guidelines(owner, s.id, "# 审阅指南\n\nA variant in other words is acceptable.\n")
    assert store.session(s.id).guidelines_version == 1
    assert any("guidelines v1" in m.value for m in owner.success)
    alice = _open(s.id, me="alice")
    for _ in range(5):
        _click_label(alice, "model_error")
    for n, d in enumerate(store.decisions(s.id)):   # a second reviewer on the same items, for the agreement
        rs.decide(store, store.session(s.id), "bob", d.item_id, "model_error" if n % 2 else "correct")
    _save_guidelines(owner, s.id, "# 审阅指南\n\nA variant in other words is acceptable.\n\n漏字算模型错误。\n")
    assert store.session(s.id).guidelines_version == 2
    alice.run()
    for _ in range(5):
        _click_label(alice, "acceptable_variant")
    mine = [d for d in store.decisions(s.id) if d.annotator == "alice"]
    assert sorted(d.guidelines_version for d in mine) == [1] * 5 + [2] * 5
    for d in mine:
        if d.guidelines_version == 2:
            rs.decide(store, store.session(s.id), "bob", d.item_id, "model_error")
    owner.run()
    diff = "\n".join(c.value for c in owner.code)
    assert "+漏字算模型错误。" in diff and "--- guidelines v1" in diff
    versions = next(d.value for d in owner.dataframe if "characters" in d.value.columns)
    assert list(versions["version"]) == [1, 2] and list(versions["by"]) == ["olga", "olga"]
    owner.segmented_control(key="review_view").set_value("agreement").run()
    owner.toggle(key="review_agree_by_guidelines").set_value(True).run()
    assert not owner.exception, owner.exception
    table = next(d.value for d in owner.dataframe if "guidelines" in d.value.columns)
    assert set(table["guidelines"]) == {"v1", "v2"}
    labels = table[table["rating"] == "labels (nominal)"]
    assert list(labels["n_items"]) == [5] * 6                         # 5 items per version, 3 figures each
    assert all("30" in str(m) for m in labels["meaningful"])         # each version flagged under 30 items


def test_owner_saves_label_help_k_and_adjudicators(data_dir):
    store, s = _store(data_dir)
    at = _open(s.id, me="olga")
    at.text_input(key=f"review_set_help_correct_{s.id}").set_value("和标准答案说的一样")
    at.number_input(key=f"review_set_k_{s.id}").set_value(3)
    at.text_input(key=f"review_set_adjudicators_{s.id}").set_value("maria, ivan")
    at.button(key=f"review_set_save_{s.id}").click().run()
    got = store.session(s.id)
    assert got.k == 3 and got.adjudicators == ("ivan", "maria")
    assert got.settings["labels_help"] == {"correct": "和标准答案说的一样"}


def test_a_non_owner_is_told_why_and_cannot_save(data_dir):
    store, s = _store(data_dir)
    at = _open(s.id, me="mallory")
    assert not [t for t in at.text_area if str(t.key).startswith("review_set_")]
    assert any("owner (olga)" in i.value for i in at.info)
    # a stale page (or a crafted click) still reaches the rule: the service refuses it
    import pytest
    with pytest.raises(PermissionError):
        rs.update_settings(store, s, "mallory", guidelines="mine")


def test_adjudication_shows_the_item_in_context_gt_claims_first_labels_in_words(data_dir):
    store, s = _store(data_dir, k=2)
    items = store.items(s.id)
    store.save_decision(items[0].id, "x", label="model_error")
    store.save_decision(items[0].id, "y", label="correct")
    store.save_decision(items[5].id, "x", label="gt_error", comment="标准答案应该是里昂")
    store.save_decision(items[5].id, "y", label="gt_error", comment="The reference names the wrong city")
    at = _open(s.id, me="olga", view="adjudicate")
    assert at.selectbox(key="review_adj_item").value == items[5].id            # the GT-error claim first
    assert at.radio(key="review_adj_label").value is None                      # nothing pre-selected
    text = _shown_text(at)
    assert "法国的首都是哪里？ Which city is the capital of France? #5" in text
    assert "标准答案应该是里昂" in text and "The reference names the wrong city" in text
    assert "GT error · 标准答案错误" in text and "gt_error" not in text        # labels as words
    assert "evalboard-diff" in text                                            # the GT-vs-prediction diff
    picker = at.selectbox(key="review_adj_item")
    assert picker.format_func(items[5].id).startswith("○ 法国的首都") and "rec-5" in picker.format_func(items[5].id)
    assert "Model error · 模型错误" in at.radio(key="review_adj_label").options
    at.radio(key="review_adj_label").set_value("gt_error")
    at.button(key="review_adj_submit").click().run()
    assert [a["label"] for a in store.adjudications(s.id)] == ["gt_error"]
    assert at.selectbox(key="review_adj_item").value == items[0].id            # the next item, same screen
