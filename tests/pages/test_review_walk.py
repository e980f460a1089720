"""AppTest of pages/6_Review.py: defects found walking the Review page as an owner and a reviewer (issue 30's
features): a blind session's system names on the Agreement view's *Agreement by*, the time windows' stamps,
the New session uploader's limit."""

from __future__ import annotations

import re

import pytest

from evaluators.review import ReviewStore
from evaluators.review import service as rs
from evaluators.review.store import MAX_UPLOAD_BYTES
from tests.conftest import ROOT
from tests.pages.helpers import page_app

PAGE = str(ROOT / "pages" / "6_Review.py")
ITEMS = [{"kind": "qa", "id": f"b{i}", "question": f"问题 {i}", "ground_truth": "Paris", "prediction": "Lyon",
          "system": "sys-secret" if i % 2 else "sys-hidden", "exact_match": 0.0, "token_f1": 0.0} for i in range(6)]


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    monkeypatch.delenv("EVALBOARD_REVIEW_ADMINS", raising=False)
    return tmp_path


def _agreement(session_id: int, me: str, by: str | None = None):
    at = page_app(PAGE)
    at.query_params["session"] = str(session_id)
    at.run()
    at.text_input(key="review_me").set_value(me).run()
    at.segmented_control(key="review_view").set_value("agreement").run()
    if by is not None:
        at.selectbox(key="review_agree_slice").set_value(by).run()
    assert not at.exception, at.exception
    return at


def _blind_session(data_dir):
    store = ReviewStore(data_dir / "review.sqlite")
    s = store.create_session("blind slices", "qa", ITEMS, created_by="olga", k=2, blind=True)
    for item in store.items(s.id):
        store.save_decision(item.id, "ravi", label="model_error")
        store.save_decision(item.id, "mei", label="model_error" if item.position < 3 else "correct")
    return store, s


def test_agreement_by_system_never_names_a_blind_sessions_systems_to_a_reviewer(data_dir):
    """Walked: in a blind session any reviewer chose *Agreement by: system* and read every system's name."""
    store, s = _blind_session(data_dir)
    at = _agreement(s.id, "ravi")
    assert list(at.selectbox(key="review_agree_slice").options) == ["—", "question type", "time"]
    shown = "\n".join(df.value.to_string() for df in at.dataframe)
    assert "sys-secret" not in shown and "sys-hidden" not in shown
    with pytest.raises(PermissionError):  # the rule is the service's, not the page's
        rs.agreement_slice_rows(store, s, "system", "ravi")
    # the owner sees both systems, one row block each (3 items each: flagged under 30)
    owner = _agreement(s.id, "olga", by="system")
    sliced = next(df.value for df in owner.dataframe if "system" in df.value.columns)
    assert set(sliced["system"]) == {"sys-secret", "sys-hidden"}
    assert all(sliced["n_items"][sliced["rating"] == "labels (nominal)"] == 3)


def test_time_windows_show_their_stamps_to_the_second(data_dir):
    """Walked: each window's *from* and *to* were the stored ISO times with microseconds and an offset
    ("2026-11-27T20:56:23.166756+00:00"), two columns that pushed the figures off the screen."""
    store, s = _blind_session(data_dir)
    at = _agreement(s.id, "olga", by="time")
    windows = next(df.value for df in at.dataframe if "window" in df.value.columns)
    stamps = list(windows["from"]) + list(windows["to"])
    assert stamps and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", t) for t in stamps), stamps[:2]
    # the same instants as the service's rows, to the second
    raw = rs.agreement_slice_rows(store, s, "time", "olga")
    assert [r["from"][:19].replace("T", " ") + " UTC" for r in raw] == list(windows["from"])


def test_new_session_uploader_states_the_review_upload_limit(data_dir):
    """Walked: the New session uploader said "1GB per file" (the server's cap) while the review store refuses
    anything over 50 MB, after the whole file has been sent."""
    at = page_app(PAGE)
    at.run()
    assert not at.exception, at.exception
    (uploader,) = [u for u in at.get("file_uploader") if u.proto.id.endswith("review_upload")]
    assert uploader.proto.max_upload_size_mb == MAX_UPLOAD_BYTES // 2**20 == 50


def test_guidelines_render_their_markdown_and_no_html(data_dir):
    """Walked: the guidelines, "Guidelines (Markdown)" in the settings, showed the owner's "# Rules" and
    "**完整**" as typed under the item; rendered as Markdown now, while <script>, a link and $..$ stay text."""
    store = ReviewStore(data_dir / "review.sqlite")
    s = store.create_session("guided", "qa", ITEMS, created_by="olga", k=2)
    text = "# Rules\n<script>alert('g')</script>\n\n- 答案必须**完整**\n- [docs](javascript:alert(1)) $x$"
    rs.update_settings(store, s, "olga", guidelines=text)
    at = page_app(PAGE)
    at.query_params["session"] = str(s.id)
    at.run()
    at.text_input(key="review_me").set_value("ravi").run()
    assert not at.exception, at.exception
    (shown,) = [m.value for m in at.markdown if "Rules" in m.value]
    assert shown.startswith("# Rules\n") and "- 答案必须**完整**" in shown        # Markdown kept
    assert "&lt;script&gt;" in shown and "<script>" not in shown               # HTML shown as typed
    assert "\\[docs\\](javascript\\:alert(1))" in shown and "\\$x\\$" in shown  # no link, no formula


def test_a_10_kb_typed_name_is_told_and_offers_no_decision_buttons(data_dir):
    """Walked: a 10 kB name typed in the sidebar showed the decision buttons; a click was refused ("annotator has
    10,249 characters ...") and moved to another item. Now the sidebar says why and nothing can be decided."""
    store = ReviewStore(data_dir / "review.sqlite")
    s = store.create_session("names", "qa", ITEMS, created_by="olga", k=2)
    at = page_app(PAGE)
    at.query_params["session"] = str(s.id)
    at.run()
    at.text_input(key="review_me").set_value("x" * 10_240).run()
    assert not at.exception, at.exception
    assert any("10,240 characters, over the limit of 256" in e.value for e in at.sidebar.error)
    assert not [b for b in at.button if str(b.key).startswith("review_model_error_")]
    assert any("Confirm your name" in i.value for i in at.info)
    assert store.decisions(s.id) == []
    at.text_input(key="review_me").set_value("ravi").run()   # a real name: the buttons come back
    assert [b for b in at.button if str(b.key).startswith("review_model_error_")] and not at.sidebar.error


def test_a_question_with_a_trailing_blank_is_bold_not_asterisks(data_dir):
    """Walked (HotpotQA): "...Tony McCarroll's last concert ? " (a trailing blank in the data) made the card's
    title "**5ab3bacc… · Who sang … concert ? **", asterisks and all: the closing ** followed a blank."""
    store = ReviewStore(data_dir / "review.sqlite")
    item = {**ITEMS[0], "id": "5ab3bacc", "question": "Who sang lead vocals at his last concert ? "}
    s = store.create_session("blank", "qa", [item], created_by="olga", k=2)
    at = page_app(PAGE)
    at.query_params["session"] = str(s.id)
    at.run()
    at.text_input(key="review_me").set_value("ravi").run()
    assert not at.exception, at.exception
    assert "**5ab3bacc · Who sang lead vocals at his last concert ?**" in [m.value for m in at.markdown]


def test_a_decision_in_a_session_deleted_meanwhile_says_so(data_dir):
    """Walked: `review delete` while a reviewer had the session open; their next click said "item 554 is not in
    session '…'. The page now shows the saved decision." and showed another session's item without a word."""
    store = ReviewStore(data_dir / "review.sqlite")
    gone = store.create_session("gone <b>soon</b>", "qa", ITEMS, created_by="olga", k=2)
    store.create_session("stays", "qa", ITEMS, created_by="olga", k=2)
    at = page_app(PAGE)
    at.query_params["session"] = str(gone.id)
    at.run()
    at.text_input(key="review_me").set_value("ravi").run()
    rs.delete_session(store, gone, "olga")
    next(b for b in at.button if str(b.key).startswith("review_model_error_")).click().run()
    assert not at.exception, at.exception
    assert [w.value for w in at.warning] == [
        "Session 'gone &lt;b&gt;soon&lt;/b&gt;' was deleted meanwhile: nothing was saved. The page now shows another "
        "session."]
    assert [d.annotator for s in store.sessions() for d in store.decisions(s.id)] == []


def test_an_import_with_a_bad_line_says_the_other_lines_import(data_dir):
    """Walked: a bad line in an import file was listed under "Lines not imported: 1 error, 0 warnings — the rest
    of the data is still scored" (the task pages' words: nothing is scored on the Export view)."""
    from evaluators.review.exchange import export_jsonl

    store = ReviewStore(data_dir / "review.sqlite")
    s = store.create_session("imp", "qa", ITEMS, created_by="olga", k=2)
    src = ReviewStore(data_dir / "src.sqlite")
    other = src.create_session("other", "qa", ITEMS[:2], created_by="zoe", k=2)
    src.save_decision(src.items(other.id)[0].id, "alice", label="model_error")
    lines = export_jsonl(src, other.id).splitlines()
    data = "\n".join([*lines[:2], '{"bad json', *lines[2:]]).encode("utf-8")
    at = page_app(PAGE)
    at.query_params["session"] = str(s.id)
    at.run()
    at.text_input(key="review_me").set_value("olga").run()
    at.segmented_control(key="review_view").set_value("export").run()
    at.file_uploader(key="review_import_file").upload("bad.jsonl", data).run()
    assert not at.exception, at.exception
    labels = [e.label for e in at.expander if e.label.startswith("Lines not imported")]
    assert labels == ["Lines not imported: 1 error, 0 warnings — the other lines are imported"]


def test_a_comment_over_the_limit_is_refused_and_kept(data_dir):
    """Walked: a comment over 10,000 characters was refused with "... The page now shows the saved decision."
    (there was none); the refusal now says nothing was saved, and the comment stays in the box to shorten."""
    from evaluators.review.limits import MAX_COMMENT

    store = ReviewStore(data_dir / "review.sqlite")
    s = store.create_session("long", "qa", ITEMS, created_by="olga", k=2)
    at = page_app(PAGE)
    at.query_params["session"] = str(s.id)
    at.run()
    at.text_input(key="review_me").set_value("ravi").run()
    box = next(t for t in at.text_area if str(t.key).startswith("review_comment_"))
    box.set_value("长" * (MAX_COMMENT + 1))
    next(b for b in at.button if str(b.key).startswith("review_model_error_")).click().run()
    assert not at.exception, at.exception
    (warning,) = [w.value for w in at.warning]
    assert warning.endswith("over the limit of 10,000: nothing was saved.") and "saved decision" not in warning
    assert store.decisions(s.id) == []
    assert next(t for t in at.text_area if str(t.key) == box.key).value == "长" * (MAX_COMMENT + 1)
