"""AppTest of the Review page's Import block (Export view, owners): an EvalBoard export of another session, a
Label Studio file, a malformed file, and a reviewer who sees no block.  SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from evaluators.review import ReviewStore
from evaluators.review import service as rs
from evaluators.review.exchange import export_jsonl
from tests.conftest import ROOT
from tests.pages.helpers import page_app, problem_table, shown

PAGE = str(ROOT / "pages" / "6_Review.py")
ITEMS = [{"kind": "qa", "id": f"w{i}", "question": f"问题 {i}", "ground_truth": "Paris", "prediction": "Lyon",
          "exact_match": 0.0, "token_f1": 0.25} for i in range(4)]


@pytest.fixture
def store(review_url, tmp_path, monkeypatch):
    """The page's database (SQLite, then PostgreSQL) with olga's session ``roles`` of four items."""
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EVALBOARD_DATABASE_URL", review_url)
    monkeypatch.delenv("EVALBOARD_REVIEW_ADMINS", raising=False)
    s = ReviewStore(review_url)
    s.create_session("roles", "qa", ITEMS, created_by="olga", k=2)
    return s


def _export_view(store, who: str):
    at = page_app(PAGE)
    at.query_params["session"] = str(store.session_by_name("roles").id)
    at.run()
    at.text_input(key="review_me").set_value(who).run()
    at.segmented_control(key="review_view").set_value("export").run()
    assert not at.exception, at.exception
    return at


def _upload(at, name: str, data: bytes):
    at.file_uploader(key="review_import_file").upload(name, data).run()
    assert not at.exception, at.exception
    return at


def _text(at) -> str:
    return shown("\n".join([m.value for m in at.markdown] + [e.value for e in at.error]
                           + [s.value for s in at.success]))


def _imports(store) -> list:
    return [r for r in store.audit_rows() if r["action"] == "import"]


def _other_export(tmp_path) -> bytes:
    """Another database's session ``other``: 3 items, decisions alice x2 and bob x1, one adjudication."""
    src = ReviewStore(tmp_path / "source.sqlite")
    other = src.create_session("other", "qa", ITEMS[:3], created_by="zoe", k=2)
    first, second, _third = src.items(other.id)
    src.save_decision(first.id, "alice", label="model_error", comment="lyon ≠ paris")
    src.save_decision(second.id, "alice", label="gt_error")
    src.save_decision(first.id, "bob", label="acceptable_variant")
    return export_jsonl(src, other.id).encode("utf-8")


def test_owner_imports_another_sessions_export_after_a_dry_run(store, tmp_path):
    data = _other_export(tmp_path)
    at = _upload(_export_view(store, "olga"), "other.jsonl", data)
    # dry run: 3 decision lines, none stored -> 3 written; 1 session line, 3 item lines -> 1 session, 3 items
    assert ("3 decision(s) would be written (added, or replacing an older one) · 0 skipped (0 already stored, "
            "0 duplicate) · 0 refused; 1 session(s), 3 item(s) and 0 adjudication(s) would be added.") in _text(at)
    assert store.session_by_name("other") is None and _imports(store) == []   # a dry run stores nothing
    at.button(key="review_import_go").click().run()
    assert not at.exception, at.exception
    other = store.session_by_name("other")
    assert other is not None and other.created_by == "zoe" and len(store.items(other.id)) == 3
    got = sorted((d.annotator, d.label, d.comment) for d in store.decisions(other.id))
    assert got == [("alice", "gt_error", ""), ("alice", "model_error", "lyon ≠ paris"),
                   ("bob", "acceptable_variant", "")]
    (row,) = _imports(store)                                                  # one audit row, from the page
    assert (row["who"], row["via"], row["detail"]) == ("olga", "page", "other.jsonl")
    assert "Imported other.jsonl: 3 decision(s) written" in _text(at)
    # the same file again: every decision already stored (3 skipped), nothing to write, Import disabled
    at = _upload(_export_view(store, "olga"), "other.jsonl", data)
    assert "0 decision(s) would be written" in _text(at) and "3 skipped (3 already stored" in _text(at)
    assert at.button(key="review_import_go").disabled and len(_imports(store)) == 1


def test_owner_imports_a_label_studio_file_with_a_refused_annotation_located(store):
    tasks = [{"data": {"question": "首都?", "ground_truth": "Paris", "prediction": "Paris"},
              "annotations": [{"completed_by": {"email": "ls@example.org"}, "updated_at": "2026-01-02T03:04:05Z",
                               "result": [{"from_name": "label", "to_name": "question", "type": "choices",
                                           "value": {"choices": ["acceptable_variant"]}}]}]},
             {"data": {"question": "Capital?", "ground_truth": "Rome", "prediction": "Milan"},
              "annotations": [{"completed_by": 7, "result": [{"type": "choices",
                                                              "value": {"choices": ["bogus"]}}]}]}]
    at = _export_view(store, "olga")
    at = _upload(at, "tasks.json", json.dumps(tasks, ensure_ascii=False).encode("utf-8"))
    assert "Label Studio (JSON)" in _text(at)                                 # found from the file: a JSON array
    # 1 annotation read, 1 refused (its choice is no label); both tasks' items are added to a new session
    assert ("1 decision(s) would be written (added, or replacing an older one) · 0 skipped (0 already stored, "
            "0 duplicate) · 1 refused; 1 session(s), 2 item(s) and 0 adjudication(s) would be added.") in _text(at)
    (problem,) = problem_table(at)
    assert problem["where"] == "tasks.json:1 at [1].annotations[0]" and "'bogus' is not one of" in problem["problem"]
    at.button(key="review_import_go").click().run()
    made = store.session_by_name("Label Studio: tasks.json")
    (decision,) = store.decisions(made.id)
    assert (decision.annotator, decision.label) == ("ls@example.org", "acceptable_variant")
    assert len(store.items(made.id)) == 2 and len(_imports(store)) == 1


def test_a_malformed_file_is_named_and_imports_nothing(store):
    bad = (b'{"type": "decision", "session": "x", "item_digest": "zz", "annotator": "a", "label": "gt_error"}\n'
           b'{"type": "decision", "session": \n')
    at = _upload(_export_view(store, "olga"), "bad.jsonl", bad)
    rows = {r["where"]: r["problem"] for r in problem_table(at)}
    assert "item_digest must be a SHA-256 hex digest" in rows["bad.jsonl:1"]
    # the broken JSON by line and column: '{"type": "decision", "session": ' is 32 characters, the value is
    # missing at 33
    assert rows["bad.jsonl:2:33"].startswith("invalid JSON on this line")
    assert "Nothing in this file can be imported" in _text(at)
    assert at.button(key="review_import_go").disabled
    assert [s.name for s in store.sessions()] == ["roles"] and _imports(store) == []


def _has_import(at) -> bool:
    try:
        at.file_uploader(key="review_import_file")
    except KeyError:
        return False
    return "Import · 导入" in _text(at)


def test_a_reviewer_sees_no_import_block_and_the_service_refuses(store, tmp_path):
    assert _has_import(_export_view(store, "olga"))                           # the owner's block ...
    assert not _has_import(_export_view(store, "mallory"))                    # ... is not shown to a reviewer
    with pytest.raises(PermissionError):
        rs.import_file(store, "mallory", _other_export(tmp_path), "other.jsonl",
                       context=store.session_by_name("roles"))
    assert store.session_by_name("other") is None and _imports(store) == []


def test_label_studio_tasks_go_into_this_session_onto_its_own_items(store):
    """A Label Studio task whose data is one of this session's items (the same payload: the same digest)
    adds its annotation to that item; a task with other data would add an item."""
    task = {"data": dict(ITEMS[2]), "annotations": [{"completed_by": None, "result": [
        {"type": "choices", "value": {"choices": ["gt_error"]}},
        {"type": "textarea", "value": {"text": ["巴黎?"]}}]}]}
    at = _upload(_export_view(store, "olga"), "one.json", json.dumps([task]).encode("utf-8"))
    at.radio(key="review_import_into").set_value("here").run()
    # into "roles": its item w2 is found by digest -> no session, no item added; 1 annotation -> 1 written
    assert ("1 decision(s) would be written (added, or replacing an older one) · 0 skipped (0 already stored, "
            "0 duplicate) · 0 refused; 0 session(s), 0 item(s) and 0 adjudication(s) would be added.") in _text(at)
    at.button(key="review_import_go").click().run()
    roles = store.session_by_name("roles")
    (decision,) = store.decisions(roles.id)
    w2 = next(i for i in store.items(roles.id) if i.payload["id"] == "w2")
    # completed_by null: the importing user is the annotator
    assert (decision.item_id, decision.annotator, decision.label, decision.comment) == (w2.id, "olga", "gt_error",
                                                                                        "巴黎?")
    assert [s.name for s in store.sessions()] == ["roles"] and len(store.items(roles.id)) == 4
