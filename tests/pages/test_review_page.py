"""AppTest of pages/6_Review.py: the demo review in three clicks, stale saves, adjudication, agreement, export."""

from __future__ import annotations

import pytest

from evaluators.review import ReviewStore
from tests.conftest import ROOT
from tests.pages.helpers import page_app

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
    assert any("1 item(s) where reviewers disagree" in c.value for c in at.caption)
    at.radio(key="review_adj_label").set_value("acceptable_variant")
    at.button(key="review_adj_submit").click().run()
    assert store.adjudications(session.id)[0]["label"] == "acceptable_variant"
    agreement = next(d.value for d in at.dataframe if "Fleiss' kappa" in d.value.columns)
    assert list(agreement["items rated by 2+"]) == [2, 0]
    # exact match (the QA demo's automatic verdict) against each reviewer, beside reviewer vs reviewer
    machine = next(d.value for d in at.dataframe if "annotator" in d.value.columns and "accuracy" in d.value.columns)
    assert set(machine["annotator"]) == {"x", "y"} and list(machine["n_items"]) == [2, 2]
    assert {b.proto.label for b in at.get("download_button")} >= {"Decisions (JSONL)", "GT corrections (JSONL)"}
    # a click only downloads (a rerun renewed every file id and the next click fetched nothing: issue 20.8)
    assert all(b.proto.ignore_rerun for b in at.get("download_button"))


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
    at = page_app(str(ROOT / "pages" / "4_Persona_Dialogue.py"), timeout=180)
    at.run()
    at.button(key="dialogue_ab_review").click().run()
    store = ReviewStore(data_dir / "review.sqlite")
    (session,) = store.sessions()
    assert session.blind and session.kind == "dialogue_pair"
    review = page_app(PAGE)
    review.query_params["annotator"] = "dana"
    review.query_params["session"] = str(session.id)
    review.run()
    assert not review.exception, review.exception
    item = next(i for i in store.items(session.id) if str(i.id) == review.query_params["item"])
    swapped = ReviewStore.blind_sides(session, "dana", item)
    # no model name on the page in blind mode
    shown_text = " ".join(m.value for m in review.markdown)
    assert "panda-chat-large" not in shown_text and "panda-chat-small" not in shown_text
    _click_label(review, "left")
    assert store.decision(item.id, "dana").label == ("b_better" if swapped else "a_better")


def test_review_sidebar_does_not_offer_a_data_source_it_does_not_read(data_dir):
    # issue 20.9: the sidebar said "Demo data" while the page showed a session built from an upload
    at = _demo_session("x")
    assert [r.label for r in at.sidebar.radio] == []
    assert any("not used on this page" in c.value for c in at.sidebar.caption)
