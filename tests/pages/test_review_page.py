"""AppTest of pages/6_Review.py: the demo review in three clicks, stale saves, adjudication, agreement, export."""

from __future__ import annotations

import pytest

from evaluators.review import ReviewStore
from tests.conftest import ROOT
from tests.pages.helpers import page_app, shown

PAGE = str(ROOT / "pages" / "6_Review.py")


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    return tmp_path


def _demo_session(annotator: str):
    """The Review page with the QA demo session opened by ``annotator``."""
    at = page_app(PAGE)
    at.query_params["annotator"] = annotator
    at.run()
    assert not at.exception, at.exception
    at.button(key="review_confirm_link").click().run()  # a name from a link is confirmed, never taken silently
    at.button(key="review_demo").click().run()
    assert not at.exception, at.exception
    return at


def _click_label(at, label: str):
    button = next(b for b in at.button if str(b.key).startswith(f"review_{label}_"))
    button.click().run()
    assert not at.exception, at.exception
    return at


def test_demo_review_in_three_clicks_is_saved(data_dir):
    at = _demo_session("alice")  # click 2: Review the QA demo (click 1: Review in the navigation)
    _click_label(at, "model_error")                     # click 3: the decision, saved
    store = ReviewStore(data_dir / "review.sqlite")
    (session,) = store.sessions()
    (decision,) = store.decisions(session.id)
    assert (decision.annotator, decision.label, decision.status) == ("alice", "model_error", "submitted")
    assert store.get_upload(session.uploads[0])[0] == "qa_demo.jsonl"  # the session's file is kept
    # qa_demo.jsonl: 12 records, en-06 without GT -> 11 reviewable items
    assert len(store.items(session.id)) == 11
    assert at.query_params["session"] == str(session.id) and at.query_params["annotator"] == "alice"


def test_a_second_tab_saving_the_same_decision_is_told_not_overwritten(data_dir):
    at = _demo_session("bob")
    store = ReviewStore(data_dir / "review.sqlite")
    session = store.sessions()[0]
    item_id = int(at.query_params["item"])
    store.save_decision(item_id, "bob", label="gt_error")      # another tab of bob's saved first
    _click_label(at, "acceptable_variant")
    assert any("changed" in w.value or "already has a decision" in w.value for w in at.warning)
    assert store.decision(item_id, "bob").label == "gt_error" and session.k == 2


def test_adjudication_agreement_and_export_tabs(data_dir):
    at = _demo_session("carol")
    store = ReviewStore(data_dir / "review.sqlite")
    session = store.sessions()[0]
    first, second = store.items(session.id)[:2]
    for who, labels in (("x", ("model_error", "model_error")), ("y", ("acceptable_variant", "model_error"))):
        for item, label in zip((first, second), labels):
            store.save_decision(item.id, who, label=label)
    at.run()
    assert not at.exception, at.exception
    at.segmented_control(key="review_view").set_value("adjudicate").run()
    assert any("1 item(s) where reviewers disagree" in c.value for c in at.caption)
    at.radio(key="review_adj_label").set_value("acceptable_variant")
    at.button(key="review_adj_submit").click().run()
    assert store.adjudications(session.id)[0]["label"] == "acceptable_variant"
    assert any("1 of 1 adjudicated" in c.value for c in at.caption)            # marked, and counted
    assert at.selectbox(key="review_adj_item").format_func(first.id).startswith("✓ ")
    at.segmented_control(key="review_view").set_value("agreement").run()
    agreement = next(d.value for d in at.dataframe if "statistic" in d.value.columns)
    # one row per figure: labels (2 items rated by 2: x and y), then scores (none given)
    assert list(agreement["statistic"]) == ["Cohen's kappa (mean of pairs)", "Fleiss' kappa",
                                            "Krippendorff's alpha"] * 2
    assert list(agreement["n_items"]) == [2, 2, 2, 0, 0, 0]
    assert {"95% CI low", "95% CI high"} <= set(agreement.columns)
    assert set(agreement["meaningful"][:3]) == {"not yet meaningful: 2 items (fewer than 30)"}
    # exact match (the QA demo's automatic verdict) against each reviewer, beside reviewer vs reviewer
    machine = next(d.value for d in at.dataframe if "annotator" in d.value.columns and "accuracy" in d.value.columns)
    assert set(machine["annotator"]) == {"x", "y"} and list(machine["n_items"]) == [2, 2]
    at.segmented_control(key="review_view").set_value("export").run()
    assert {b.proto.label for b in at.get("download_button")} >= {"Decisions (JSONL)"}
    # adjudicated an acceptable variant: no GT correction, so no 0-byte file but the reason
    assert any("1 adjudicated, 0 waiting" in shown(c.value) for c in at.caption)



def test_agreement_notes_get_a_wide_column_beside_the_counts(data_dir):
    """Issue 26 (walk, cut labels at 1440 px): the grid cut 'not yet meaningful: 2 items (fewer than 30)' to
    'not yet mea…' in the agreement table, and the automatic-verdict table's note as the last of its columns.
    A grid cell is drawn on a canvas the browser layout test cannot read: the column settings are checked."""
    import json

    at = _demo_session("carol")
    store = ReviewStore(data_dir / "review.sqlite")
    session = store.sessions()[0]
    first, second = store.items(session.id)[:2]
    for who in ("x", "y"):
        store.save_decision(first.id, who, label="model_error")
        store.save_decision(second.id, who, label="gt_error")
    at.run()
    at.segmented_control(key="review_view").set_value("agreement").run()
    assert not at.exception, at.exception
    agreement = next(d for d in at.dataframe if "statistic" in d.value.columns)
    assert set(agreement.value["meaningful"][:3]) == {"not yet meaningful: 2 items (fewer than 30)"}
    assert json.loads(agreement.proto.columns)["meaningful"]["width"] == "large"
    machine = next(d for d in at.dataframe if "note" in d.value.columns)
    # against the automatic verdict item 2, a GT error, is left out: 1 item each
    assert set(machine.value["note"]) == {"not yet meaningful: 1 item (fewer than 30)"}
    assert json.loads(machine.proto.columns)["note"]["width"] == "large"
    assert list(machine.proto.column_order)[:3] == ["annotator", "n_items", "note"]   # beside the counts, not last

def test_qa_page_opens_a_review_of_its_records(data_dir):
    from tests.pages.helpers import QA_PAGE

    at = page_app(QA_PAGE)
    at.run()
    at.radio(key="qa_demo").set_value("qa").run()
    at.button(key="qa_to_review").click().run()
    store = ReviewStore(data_dir / "review.sqlite")
    (session,) = store.sessions()
    assert session.name.startswith("qa_demo.jsonl · ") and len(store.items(session.id)) == 11


@pytest.mark.parametrize("page, setup, key, kind, expected", [
    # persona demo: 13 cases, one without a reference, answered by 2 models -> 12 x 2 = 24 replies
    ("4_Persona_Dialogue.py", None, "dialogue_to_review", "dialogue", 24),
    ("5_Long_Memory.py", None, "mem_to_review", "memory", 25),
    ("3_Test_Sets.py", None, "ts_to_review", "testsets", 9),
    ("1_Narrative.py", "downloads", "nar_to_review", "narrative", None),
], ids=["persona", "memory", "test_sets", "narrative"])
def test_every_page_opens_a_review_of_its_run(data_dir, no_embeddings, page, setup, key, kind, expected):
    at = page_app(str(ROOT / "pages" / page), timeout=180)
    if setup:
        at.query_params["view"] = setup
    at.run()
    assert not at.exception, at.exception
    at.button(key=key).click().run()
    store = ReviewStore(data_dir / "review.sqlite")
    (session,) = store.sessions()
    items = store.items(session.id)
    assert session.kind == kind and {i.payload["kind"] for i in items} == {kind}
    if expected is not None:  # the memory demo's 25 questions; the test-set demo's 9 items
        assert len(items) == expected
    if kind == "narrative":  # every mismatch of the demo batch, events named by their labels
        from components.narrative_state import demo_files
        from evaluators.narrative.batch import evaluate_batch

        assert len(items) == sum(len(r.mismatches()) for r in evaluate_batch(*demo_files()).scored)


def test_blind_ab_review_of_two_models_stores_the_side_behind_the_screen(data_dir, no_embeddings):
    at = page_app(str(ROOT / "pages" / "4_Persona_Dialogue.py"), timeout=180, dialogue_view="compare")
    at.run()
    at.button(key="dialogue_ab_review").click().run()
    store = ReviewStore(data_dir / "review.sqlite")
    (session,) = store.sessions()
    assert session.blind and session.kind == "dialogue_pair"
    review = page_app(PAGE)
    review.query_params["annotator"] = "dana"
    review.query_params["session"] = str(session.id)
    review.run()
    review.button(key="review_confirm_link").click().run()
    assert not review.exception, review.exception
    item = next(i for i in store.items(session.id) if str(i.id) == review.query_params["item"])
    swapped = ReviewStore.blind_sides(session, "dana", item)
    # no model name on the page in blind mode
    shown_text = " ".join(m.value for m in review.markdown)
    assert "panda-chat-large" not in shown_text and "panda-chat-small" not in shown_text
    _click_label(review, "left")
    assert store.decision(item.id, "dana").label == ("b_better" if swapped else "a_better")


# ---------------------------------------------------------------- who may do what
ITEMS = [{"kind": "qa", "id": f"w{i}", "question": f"问题 {i}", "ground_truth": "Paris", "prediction": "Lyon",
          "system": "sys-secret", "exact_match": 0.0, "token_f1": 0.25} for i in range(4)]


def _session(data_dir, *, blind=False, adjudicators=()):
    store = ReviewStore(data_dir / "review.sqlite")
    s = store.create_session("roles", "qa", ITEMS, created_by="olga", k=2, blind=blind,
                             settings={"adjudicators": list(adjudicators)})
    return store, s


def _open(session_id, *, link_name=None, item=None, me=None, view=None):
    """The page as a browser opens it: a link (``?annotator=&item=``) and a name typed in this browser."""
    at = page_app(PAGE)
    at.query_params["session"] = str(session_id)
    if link_name:
        at.query_params["annotator"] = link_name
    if item:
        at.query_params["item"] = str(item)
    at.run()
    if me:
        at.text_input(key="review_me").set_value(me).run()
    if view:
        at.segmented_control(key="review_view").set_value(view).run()
    assert not at.exception, at.exception
    return at


def _shown_text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [t.value for t in at.text]
    parts += [str(t.value) for t in at.text_area] + [df.value.to_string() for df in at.dataframe]
    return "\n".join(parts)


def test_a_link_opened_under_another_name_shows_the_item_never_the_decision_or_controls(data_dir):
    """Today ``?annotator=alice&item=...`` opened by anyone showed Alice's comment and her buttons."""
    store, s = _session(data_dir)
    item = store.items(s.id)[1]
    store.save_decision(item.id, "alice", label="gt_error", comment="alice's private note")
    store.save_decision(item.id, "zed", label="gt_error")                    # k reached: no queue would show it
    assert store.next_item(s.id, "").id != item.id
    at = _open(s.id, link_name="alice", item=item.id)
    assert f"w{item.position} · 问题 {item.position}" in _shown_text(at)      # the link's item is shown
    assert "alice's private note" not in _shown_text(at)                     # not her comment
    assert not [b for b in at.button if str(b.key).startswith("review_")     # nor her controls
                and str(b.key).split("_")[-1].isdigit()]
    assert at.button(key="review_confirm_link").label.startswith("Continue as alice?")
    assert store.decision(item.id, "alice").version == 1


def test_a_link_opened_by_a_colleague_records_only_under_their_own_name(data_dir):
    store, s = _session(data_dir)
    item = store.items(s.id)[1]
    store.save_decision(item.id, "alice", label="gt_error", comment="alice's private note")
    at = _open(s.id, link_name="alice", item=item.id, me="bob")
    assert "alice's private note" not in _shown_text(at)
    assert any("made for alice" in i.value for i in at.info)                  # bob starts at his own item
    _click_label(at, "model_error")
    (bobs,) = [d for d in store.decisions(s.id) if d.annotator == "bob"]
    assert bobs.label == "model_error"
    assert store.decision(item.id, "alice").label == "gt_error" and store.decision(item.id, "alice").version == 1


def test_other_reviewers_decisions_only_after_ones_own_or_for_adjudicators(data_dir):
    store, s = _session(data_dir)
    first = store.next_item(s.id, "carl")
    store.save_decision(first.id, "alice", label="gt_error", comment="alice thinks the key is wrong")
    at = _open(s.id, me="carl")
    assert at.query_params["item"] == str(first.id)                           # overlap first: alice's item
    assert "alice thinks" not in _shown_text(at)
    assert any("shown after your own decision" in c.value for c in at.caption)
    _click_label(at, "model_error")
    at.button(key="review_prev").click().run()                                # back to the item carl decided
    assert at.query_params["item"] == str(first.id) and "alice thinks" in _shown_text(at)
    owner = _open(s.id, link_name="olga", item=first.id)                      # the owner sees them at once
    owner.button(key="review_confirm_link").click().run()
    assert owner.query_params["item"] == str(first.id) and store.decision(first.id, "olga") is None
    assert "alice thinks" in _shown_text(owner)


@pytest.mark.parametrize("who, may", [("olga", True), ("ada", True), ("root", True), ("mallory", False)],
                         ids=["owner", "session_adjudicator", "admin", "reviewer"])
def test_only_owners_and_adjudicators_adjudicate(data_dir, monkeypatch, who, may):
    monkeypatch.setenv("EVALBOARD_REVIEW_ADMINS", "root, someone")
    store, s = _session(data_dir, adjudicators=["ada"])
    item = store.items(s.id)[0]
    store.save_decision(item.id, "x", label="model_error", comment="x's reason")
    store.save_decision(item.id, "y", label="acceptable_variant", comment="y's reason")
    at = _open(s.id, me=who, view="adjudicate")
    assert ("y's reason" in _shown_text(at)) is may
    assert bool([b for b in at.button if b.key == "review_adj_submit"]) is may
    if may:
        at.radio(key="review_adj_label").set_value("gt_error")
        at.button(key="review_adj_submit").click().run()
        assert store.adjudications(s.id)[0]["adjudicator"] == who
    else:
        assert any("owner and adjudicators" in i.value for i in at.info)


@pytest.mark.parametrize("who, may", [("olga", True), ("ada", True), ("mallory", False)])
def test_blind_session_exports_only_for_owners_and_adjudicators(data_dir, who, may):
    """Today any reviewer downloaded a blind session with every system name and EM/F1."""
    store, s = _session(data_dir, blind=True, adjudicators=["ada"])
    at = _open(s.id, me=who, view="export")
    assert bool(at.get("download_button")) is may
    assert "sys-secret" not in _shown_text(_open(s.id, me=who))               # the Review view hides it from all
    if not may:
        assert any("blind" in i.value for i in at.info)


def test_review_sidebar_does_not_offer_a_data_source_it_does_not_read(data_dir):
    # issue 20.9: the sidebar said "Demo data" while the page showed a session built from an upload
    at = _demo_session("x")
    assert [r.label for r in at.sidebar.radio] == []
    assert any("not used on this page" in c.value for c in at.sidebar.caption)


# ---------------------------------------------------------------- issue 18: workflow on the page
def test_sessions_from_other_pages_offer_blind_mode(data_dir):
    from tests.pages.helpers import QA_PAGE

    at = page_app(QA_PAGE)
    at.run()
    at.radio(key="qa_demo").set_value("qa").run()
    assert at.checkbox(key="qa_to_review_blind").value is False      # offered, open by default for QA
    at.checkbox(key="qa_to_review_blind").check().run()
    at.button(key="qa_to_review").click().run()
    (session,) = ReviewStore(data_dir / "review.sqlite").sessions()
    assert session.blind


def test_undo_button_restores_and_the_history_counts_the_changes(data_dir):
    at = _demo_session("alice")
    store = ReviewStore(data_dir / "review.sqlite")
    (session,) = store.sessions()
    first = int(at.query_params["item"])
    _click_label(at, "model_error")
    assert int(at.query_params["item"]) != first
    at.button(key="review_undo").click().run()
    assert not at.exception, at.exception
    assert int(at.query_params["item"]) == first and store.decision(first, "alice") is None
    assert any("the item is back to no decision" in s.value for s in at.success)
    assert [h.action for h in store.history(first)] == ["save", "undo"]
    assert any("History of this item · 历史 (2 change(s))" in e.label for e in at.expander)
    assert at.button(key="review_undo").disabled                              # nothing left to undo


def test_owner_marks_gold_turns_blind_on_and_sees_gold_accuracy(data_dir):
    store, s = _session(data_dir)
    at = _open(s.id, me="olga")
    item = int(at.query_params["item"])
    at.selectbox(key=f"review_gold_{item}").set_value("model_error")
    at.button(key=f"review_gold_save_{item}").click().run()
    assert store.item(item).gold == "model_error"
    store.save_decision(item, "alice", label="model_error")
    store.save_decision(item, "bob", label="gt_error")
    at.toggle(key=f"review_blind_{s.id}").set_value(True).run()
    assert not at.exception, at.exception
    assert store.session(s.id).blind
    store.save_decision(store.items(s.id)[2].id, "carl", label="gt_error")     # decided blind: it stays on
    at.toggle(key=f"review_blind_{s.id}").set_value(False).run()
    assert store.session(s.id).blind and at.toggle(key=f"review_blind_{s.id}").value is True
    assert any("blind mode stays on" in w.value and "were made blind" in w.value for w in at.warning)
    at.segmented_control(key="review_view").set_value("agreement").run()
    gold = next(d.value for d in at.dataframe if "correct" in d.value.columns)
    assert list(gold["annotator"]) == ["alice", "bob"] and list(gold["correct"]) == [1, 0]
    # a reviewer gets none of it: no gold panel, no settings, no gold accuracy
    other = _open(s.id, me="carl")
    assert not [w for w in other.selectbox if str(w.key).startswith("review_gold_")]
    assert not [t for t in other.toggle if str(t.key).startswith("review_blind_")]
    other.segmented_control(key="review_view").set_value("agreement").run()
    assert not [d for d in other.dataframe if "correct" in d.value.columns]
    other.segmented_control(key="review_view").set_value("export").run()
    assert not other.get("download_button")                                   # the export carries gold labels


def test_filters_restrict_the_queue_and_label_filters_are_for_adjudicators(data_dir):
    store = ReviewStore(data_dir / "review.sqlite")
    items = [{**ITEMS[0], "id": f"f{i}", "system": f"sys-{i % 2}", "exact_match": float(i % 2)} for i in range(6)]
    s = store.create_session("filters", "qa", items, created_by="olga", k=2)
    at = _open(s.id, me="carl")
    assert not [w for w in at.selectbox if str(w.key).startswith("review_f_label_")]   # adjudicators only
    at.selectbox(key=f"review_f_system_{s.id}").set_value("sys-1").run()
    assert not at.exception, at.exception
    shown = store.item(int(at.query_params["item"]))
    assert shown.payload["system"] == "sys-1"
    _click_label(at, "model_error")
    assert store.item(int(at.query_params["item"])).payload["system"] == "sys-1"      # the next one too
    owner = _open(s.id, me="olga")
    assert owner.selectbox(key=f"review_f_label_{s.id}") is not None
    owner.segmented_control(key="review_view").set_value("agreement").run()
    team = next(e for e in owner.expander if e.label.startswith("Team progress"))
    assert "0 of 6 item(s) have all 2 reviews" in team.label


# ---------------------------------------------------------------- issue 26: a newcomer's walk
def test_adjudication_preselects_nothing_and_decide_is_refused_until_a_choice(data_dir):
    """Both reviewers said GT error and the form stood on *Model error*: one Decide click recorded it."""
    store, s = _session(data_dir)
    item = store.items(s.id)[0]
    store.save_decision(item.id, "x", label="gt_error")
    store.save_decision(item.id, "y", label="gt_error")
    at = _open(s.id, me="olga", view="adjudicate")
    assert at.radio(key="review_adj_label").value is None                      # nothing chosen for them
    at.button(key="review_adj_submit").click().run()
    assert not at.exception, at.exception
    assert store.adjudications(s.id) == []                                   # refused: nothing recorded
    assert any("Choose a final decision" in w.value for w in at.warning)      # and said so, here
    at.radio(key="review_adj_label").set_value("gt_error")
    at.button(key="review_adj_submit").click().run()
    assert [a["label"] for a in store.adjudications(s.id)] == ["gt_error"]


def test_empty_gt_corrections_say_why_instead_of_a_zero_byte_file(data_dir):
    store, s = _session(data_dir)
    at = _open(s.id, me="olga", view="export")
    labels = {b.proto.label for b in at.get("download_button")}
    assert "GT corrections (JSONL)" not in labels and "Decisions (JSONL)" in labels
    assert any("GT corrections (JSONL)" in shown(c.value) and "no item is adjudicated as a GT error" in shown(c.value)
               for c in at.caption)
    item = store.items(s.id)[0]
    store.adjudicate(item.id, "olga", "gt_error", "the key is wrong", corrected_answer="Lyon")
    at.run()
    assert "GT corrections (JSONL)" in {b.proto.label for b in at.get("download_button")}


def test_score_slider_is_disabled_while_give_a_score_is_unticked(data_dir):
    store, s = _session(data_dir)
    at = _open(s.id, me="carl")
    item = int(at.query_params["item"])
    assert at.checkbox(key=f"review_give_score_{item}").value is False
    assert at.slider(key=f"review_score_{item}").disabled                    # not a live-looking "3"
    at.checkbox(key=f"review_give_score_{item}").check().run()
    assert not at.slider(key=f"review_score_{item}").disabled
    at.slider(key=f"review_score_{item}").set_value(4)
    _click_label(at, "model_error")
    assert store.decision(item, "carl").score == 4


def test_review_whats_new_from_an_upload_carries_the_earlier_verdicts(data_dir):
    """Issue 29: a new run uploaded with *Review what's new* holds only the records whose prediction changed."""
    import json

    from evaluators.demo import demo_path

    at = _demo_session("alice")
    store = ReviewStore(data_dir / "review.sqlite")
    (session,) = store.sessions()
    for item in store.items(session.id):           # run 1 reviewed: every item has a final label
        store.save_decision(item.id, "alice", label="correct" if item.payload["exact_match"] else "model_error")
    rows = [json.loads(line) for line in demo_path("qa", "qa_demo.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    rows[0]["final_answer"] = "a new answer · 新答案"  # run 2: one prediction changed
    run2 = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    at.file_uploader(key="review_upload").upload("run2.jsonl", run2)
    at.text_input(key="review_name").input("run 2")
    at.checkbox(key="review_new_only").check()
    at.button(key="review_create").click().run()
    assert not at.exception, at.exception
    made = store.session_by_name("run 2")
    (item,) = store.items(made.id)
    assert item.payload["id"] == rows[0]["id"] and item.payload["prediction"] == "a new answer · 新答案"
    assert made.settings["carried"]["n"] == 10 and made.settings["carried"]["sessions"] == [session.name]
    assert any("1 new record(s) to review of 11; 10 carried forward" in s.value.replace("\\", "") for s in at.success)
    assert any("10 record(s) carried forward from Demo review" in c.value.replace("\\", "") for c in at.caption)
    # once run 2's new record is reviewed, nothing is new: said, no session made
    store.save_decision(item.id, "alice", label="model_error")
    at.text_input(key="review_name").input("run 2 again")
    at.button(key="review_create").click().run()
    assert any("nothing new to review" in e.value for e in at.error) and len(store.sessions()) == 2


def test_an_unreadable_upload_for_a_new_session_names_the_file_and_why(data_dir):
    """The new-session form shows an unreadable file as every page shows input problems (components/problems.py)."""
    at = _demo_session("alice")
    at.file_uploader(key="review_upload").upload("bad.jsonl", b"\xff\xfe\x81\x00\xfa")  # neither UTF-8 nor GB18030
    at.text_input(key="review_name").input("bad run")
    at.button(key="review_create").click().run()
    assert not at.exception, at.exception
    (error,) = [shown(e.value) for e in at.error]
    assert error.startswith("Cannot read this file: error: bad.jsonl: cannot be decoded as UTF-8"), error
    assert ReviewStore(data_dir / "review.sqlite").session_by_name("bad run") is None
