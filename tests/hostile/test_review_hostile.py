"""Review import and export on the hostile corpus (``corpus/review/``, written by make_corpus.py):
a session restored whole, older decisions never replacing newer ones, duplicates, type-checked
fields, deep values and undecodable lines located while the good lines import, a bad Label Studio
file located while its good tasks import, control characters escaped in ``review sessions``, and
any stored payload rendered by the page."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from evaluators.cli import main
from evaluators.review import ReviewStore
from evaluators.review.exchange import export_jsonl, import_jsonl
from evaluators.review.label_studio import import_label_studio
from tests.conftest import ROOT
from tests.hostile.conftest import CORPUS
from tests.pages.helpers import page_app

REVIEW = CORPUS / "review"
SESSION = "盲审 blind session"


def _import(store: ReviewStore, name: str):
    return import_jsonl(store, (REVIEW / name).read_bytes(), name)


def test_export_then_import_restores_the_same_session(review_url):
    """Today's import restored blind=False, k=1, seed=0 and only the decided items; the export
    left out each decision's time on the item (so export -> import -> export lost it)."""
    store = ReviewStore(review_url)
    report = _import(store, "full_session.jsonl")
    assert (report.sessions_created, report.items_added, report.written, report.adjudications) == (1, 6, 4, 1)
    assert report.issues == []
    s = store.session_by_name(SESSION)
    assert (s.blind, s.k, s.seed, s.created_by, s.n_items) == (True, 2, 7, "owner-olga", 6)
    assert s.adjudicators == ("adj-ada",) and s.guidelines == "Mark **GT errors** first."
    items = store.items(s.id)
    assert [i.payload["id"] for i in items] == [f"r{n}" for n in range(6)]  # undecided items too
    assert [i.gold for i in items] == [None] * 5 + ["gt_error"]              # the gold item
    seconds = {(d.annotator, d.item_id): d.seconds for d in store.decisions(s.id)}
    assert seconds == {("alice", items[0].id): None, ("bob", items[0].id): None, ("alice", items[1].id): 12.5,
                       ("bob", items[2].id): None}                          # time on the item
    assert export_jsonl(store, s.id) == (REVIEW / "full_session.jsonl").read_text(encoding="utf-8")
    again = _import(store, "full_session.jsonl")
    assert (again.written, again.unchanged, again.conflicts) == (0, 4, 0)


def test_an_older_export_never_replaces_newer_decisions(review_url):
    store = ReviewStore(review_url)
    _import(store, "full_session.jsonl")
    report = _import(store, "older_export.jsonl")
    # line 2: alice version 2 at 09:00 against the stored version 3 at 10:00; line 3: bob at an earlier time
    assert (report.written, report.unchanged, report.conflicts) == (1, 1, 2)
    assert [(i.line, i.kind) for i in report.issues] == [(2, "conflict"), (3, "conflict")]
    assert "version 3" in report.issues[0].message
    s = store.session_by_name(SESSION)
    got = {(d.annotator, d.item_digest[:6]): (d.label, d.comment, d.version) for d in store.decisions(s.id)}
    items = store.items(s.id)
    assert got[("alice", items[0].digest[:6])] == ("model_error", "third look", 3)
    assert got[("bob", items[2].digest[:6])] == ("model_error", "说明", 2)
    assert got[("carol", items[3].digest[:6])] == ("model_error", "new", 1)


def test_duplicate_lines_are_reported(review_url):
    report = _import(ReviewStore(review_url), "duplicates.jsonl")
    assert (report.written, report.duplicates) == (2, 1)
    (issue,) = report.issues
    assert issue.line == 9 and issue.kind == "duplicate" and "line 8" in issue.message


def test_every_field_is_type_checked_and_the_good_line_imports(review_url):
    store = ReviewStore(review_url)
    report = _import(store, "bad_types.jsonl")
    assert report.written == 1
    messages = {i.line: i.message for i in report.issues}
    assert sorted(messages) == [8, 9, 10, 11, 12]
    assert "annotator must be a string" in messages[8]
    assert "score must be an integer" in messages[9]
    assert "does not fit" in messages[10]                  # an A/B label on a QA item
    assert "item.exact_match must be a number" in messages[11]
    assert "item.sides must be" in messages[12]
    s = store.session_by_name(SESSION)
    (d,) = store.decisions(s.id)
    assert (d.annotator, d.comment) == ("erin", "good line")


def test_deep_values_are_located_and_later_lines_still_import(review_url):
    """Today a 1,000-deep value ended the import with 'unexpected RecursionError'."""
    store = ReviewStore(review_url)
    report = _import(store, "deep_value.jsonl")
    assert report.written == 1
    messages = {i.line: i.message for i in report.issues}
    assert sorted(messages) == [8, 9]
    assert "comment must be a string" in messages[8] and "nested deeper" in messages[9]
    (d,) = store.decisions(store.session_by_name(SESSION).id)
    assert d.comment == "after the deep lines"


def test_an_undecodable_line_is_located_and_the_rest_imports(review_url):
    store = ReviewStore(review_url)
    report = _import(store, "undecodable.jsonl")
    assert report.written == 1 and report.items_added == 6
    messages = {i.line: i.message for i in report.issues}
    assert sorted(messages) == [8, 9]
    assert "NUL" in messages[8] and "not valid utf-8" in messages[9].lower()


def test_the_importers_own_keys_are_never_read_from_a_file(review_url):
    store = ReviewStore(review_url)
    report = _import(store, "private_keys.jsonl")
    assert (report.items_added, report.written) == (1, 1)
    assert [(i.line, i.path) for i in report.issues] == [(3, "item_digest"), (4, None)]
    assert "no item with this item_digest" in report.issues[0].message
    assert "score must be an integer" in report.issues[1].message
    (d,) = store.decisions(store.session_by_name(SESSION).id)
    assert (d.annotator, d.comment) == ("ida", "good line")


def test_a_bad_label_studio_file_is_located_and_its_good_tasks_import(review_url):
    """Label Studio tasks (a JSON array) between bad ones, cut off inside the last task."""
    store = ReviewStore(review_url)
    name = "label_studio_bad.json"
    report = import_label_studio(store, (REVIEW / name).read_bytes(), name)
    assert (report.items_added, report.written) == (3, 3)         # tasks 0, 3 and 6, one annotation each
    expected = [
        (3, "[1]", "a task must be a JSON object"),
        (4, "[2]", "data must be a JSON object"),
        (5, "[3].annotations[0]", "completed_by must be a user id"),
        (5, "[3].annotations[1]", "the choice 'Positive' is not one of model_error"),
        (5, "[3].annotations[2]", "result holds several choices"),
        (5, "[3].annotations[3]", "score must be an integer from 1 to 5"),
        (5, "[3].annotations[4]", "lead_time must be a non-negative number"),
        (5, "[3].annotations[5]", "updated_at must be an ISO 8601 time"),
        (6, "[4].data", "item.exact_match must be a number"),
        (6, "[4].annotations[0].item_digest", "no item with this item_digest"),
        (7, "[5].data", "item: item is nested deeper than 32 levels"),
        (9, None, "invalid JSON in element 7: Unterminated string")]
    assert [(i.line, i.path) for i in report.issues] == [(line, path) for line, path, _ in expected]
    assert all(i.message.startswith(text) for i, (_, _, text) in zip(report.issues, expected))
    assert report.issues[-1].column == 23                          # where the cut-off string starts
    s = store.session_by_name(SESSION)
    got = {(d.annotator, d.label, d.comment, d.updated_at) for d in store.decisions(s.id)}
    assert got == {("alice@example.com", "model_error", "", "2026-01-09T00:00:00.000000+00:00"),
                   ("erin@example.com", "model_error", "=cmd|' /C calc'!A0", "2026-01-09T00:00:00.000000+00:00"),
                   ("bob@example.com", "gt_error", "", "2026-01-09T00:00:00.000000+00:00")}
    assert main(["review", "import", "--db", review_url, "--input", str(REVIEW / name)]) == 0  # again, by the CLI


def test_review_sessions_escapes_control_characters(tmp_path, capsys):
    db = tmp_path / "names.sqlite"
    store = ReviewStore(db)
    report = _import(store, "control_names.jsonl")
    # names with control characters are refused at import, located
    assert [(i.line, "control character" in i.message) for i in report.issues] == [(1, True), (2, True)]
    # a database from before the limits may hold them: they never reach the terminal raw
    with store.engine.begin() as c:
        c.execute(sa.text("INSERT INTO sessions (name, kind, created_by, blind, k, seed, uploads, created_at) VALUES "
                          "(:n, 'qa', 'o', :b, 1, 0, '[]', '2026-01-01')"), {"n": "evil\x1b[2J\x1b]0;x\x07\nname",
                                                                             "b": False})
    assert main(["review", "sessions", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert len(out.splitlines()) == 2 and "⟨U+001B⟩" in out and "⟨U+202E⟩" in out and "⟨U+000A⟩" in out


def test_review_import_warnings_escape_control_characters(tmp_path, capsys):
    """Every warning line of ``review import`` names the file and quotes values: neither reaches the
    terminal raw (an escape sequence in a file name, a name refused for its control characters)."""
    evil = tmp_path / "evil\x1b]0;title\x07\u202e.jsonl"
    evil.write_bytes((REVIEW / "control_names.jsonl").read_bytes())
    assert main(["review", "import", "--db", str(tmp_path / "r.sqlite"), "--input", str(evil)]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    assert err.count("warning: ") == 2 and err.count("⟨U+001B⟩") >= 2 and "⟨U+202E⟩" in err


def test_the_page_renders_any_stored_payload(tmp_path, monkeypatch):
    """Items that today's page crashed on (a text exact_match, A/B sides that are not objects)."""
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    store = ReviewStore(tmp_path / "review.sqlite")
    hostile = [{"kind": "qa", "id": "em", "question": "q", "exact_match": "yes", "token_f1": "high"},
               {"kind": "dialogue_pair", "id": "sides", "sides": {"A": "left", "B": ["x"]}},
               {"kind": "qa", "id": {"nested": [1, 2]}, "question": ["a", {"b": None}], "sides": "AB",
                "ground_truth": 3.5, "prediction": None, "system": {"x": 1}}]
    s = store.create_session("hostile", "qa", hostile, created_by="olga", k=1)
    at = page_app(str(ROOT / "pages" / "6_Review.py"))
    at.query_params["annotator"] = "olga"
    at.query_params["session"] = str(s.id)
    at.run()
    at.button(key="review_confirm_link").click().run()
    seen = set()
    for _ in hostile:
        assert not at.exception, at.exception
        assert {"review_prev", "review_next"} <= {b.key for b in at.button}
        seen.add(at.query_params["item"])
        next(b for b in at.button if str(b.key).startswith("review_skip_")).click().run()
    assert not at.exception, at.exception
    assert len(seen) == 3 and len(store.decisions(s.id)) == 3


def test_navigation_is_drawn_before_the_item(tmp_path, monkeypatch):
    """Should an item ever fail to render, the reviewer can still move on: the page draws Previous /
    Next before the item card (here the card is made to fail)."""
    import components.review

    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    s = ReviewStore(tmp_path / "review.sqlite").create_session("nav", "qa", [{"kind": "qa", "id": "x"}],
                                                               created_by="olga")

    def broken(view):
        raise RuntimeError("an item that cannot be drawn")

    monkeypatch.setattr(components.review, "item_card", broken)
    at = page_app(str(ROOT / "pages" / "6_Review.py"))
    at.query_params["annotator"] = "olga"
    at.query_params["session"] = str(s.id)
    at.run()
    at.button(key="review_confirm_link").click().run()
    assert at.exception and "an item that cannot be drawn" in at.exception[0].value
    assert {"review_prev", "review_next"} <= {b.key for b in at.button}


def _dump(path) -> list[str]:
    """Every table's rows of an SQLite database, as SQL."""
    import sqlite3

    with sqlite3.connect(path) as c:
        return list(c.iterdump())


@pytest.mark.parametrize("params", [
    {"item": "\u00b2"},                                  # "²".isdigit() is True; int("²") raised ValueError
    {"item": "9" * 40},                                  # past the 64-bit id: OverflowError in the database
    {"session": "-1"},
    {"session": "\uff11"},                               # a full-width digit one
    {"annotator": "x" * 10_000},                         # a 10 kB name
    {"annotator": "ali\x00ce", "item": "1 OR 1=1"},
])
def test_a_crafted_link_shows_a_notice_never_a_traceback_and_changes_nothing(tmp_path, monkeypatch, params):
    """Issue 30: ``/Review?session=1&item=%C2%B2`` and a 40-digit item showed a traceback with server paths."""
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    store = ReviewStore(tmp_path / "review.sqlite")
    s = store.create_session("links", "qa", [{"kind": "qa", "id": f"q{n}", "question": "q", "ground_truth": "a",
                                             "prediction": "b"} for n in range(3)], created_by="olga", k=1)
    before = _dump(tmp_path / "review.sqlite")
    at = page_app(str(ROOT / "pages" / "6_Review.py"))
    at.query_params.update({"session": str(s.id), **params})
    at.run()
    assert not at.exception, at.exception
    assert _dump(tmp_path / "review.sqlite") == before                  # not a row written, claimed or changed
    notices = [w.value.replace("\\", "") for w in at.warning]        # Markdown escapes taken off
    notices = [n for n in notices if "The link's" in n]
    assert len(notices) == len(params)
    for key in params:
        assert any(f"link's {key}" in n for n in notices)
    assert all(len(n) < 300 for n in notices)                          # a one-line notice, the value shortened
    assert store.decisions(s.id) == [] and len(store.sessions()) == 1
    assert at.selectbox(key=f"review_session_pick_{s.id}").value == s.id           # a refused item keeps the session


def test_link_ids_are_ascii_digits_in_the_database_range():
    from evaluators.review.links import parse_id, parse_link
    assert [parse_id(v) for v in ("1", "0042", str(2 ** 63 - 1))] == [1, 42, 2 ** 63 - 1]
    assert [parse_id(v) for v in ("0", "²", "١", "１", str(2 ** 63), "9" * 40, "", " 1", "1e3", None, 7)] == [None] * 11
    link = parse_link({"session": "3", "item": "²", "annotator": "  alice  "})
    assert (link.session, link.item, link.annotator) == (3, None, "alice") and len(link.notices) == 1
