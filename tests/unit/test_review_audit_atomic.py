"""Issue 30: the audit rows of create, export and import go with their action, on SQLite and PostgreSQL.

- create: the session, its items and its ``create`` row are one transaction (a failure inside it leaves
  neither); the task pages' *Review these* buttons go through the same service function (checked, audited);
- export: a read; its row is written once the export is complete (refused or failed: none);
- import: batches, one transaction each; the row commits with the first write (nothing written: none);
- patch: a read released as a file; its row after the patch is complete, before the file is renamed into place.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from evaluators.cli import main
from evaluators.review import ReviewStore
from evaluators.review import exchange
from evaluators.review import service as rs
from evaluators.review import store as store_module
from evaluators.review.exchange import export_jsonl, import_jsonl
from evaluators.review.roles import ROLES_ENV, Actor
from tests.unit.test_review_roles import ITEMS  # three items, Chinese and English


@pytest.fixture(autouse=True)
def _no_roles(monkeypatch):
    monkeypatch.delenv(ROLES_ENV, raising=False)  # the default policy for roles; names as before
    monkeypatch.delenv(rs.ADMINS_ENV, raising=False)


def _actions(store: ReviewStore, session_id: int | None = None) -> list[tuple[str, str, int | None]]:
    return [(r["who"], r["action"], r["session_id"]) for r in store.audit_rows(session_id)]


# ---------------------------------------------------------------- create
def test_create_writes_the_session_and_one_row_together(review_url, monkeypatch):
    store = ReviewStore(review_url)
    with pytest.raises(PermissionError):  # a viewer may not create: nothing stored
        rs.create_session(store, Actor("vic", "viewer"), "s", "qa", ITEMS)
    assert store.sessions() == [] and _actions(store) == []
    made = rs.create_session(store, Actor("olga", "owner", "cli"), "s", "qa", ITEMS, files=[("run.jsonl", b"{}\n")])
    (row,) = store.audit_rows()
    assert (row["who"], row["role"], row["action"], row["session_id"], row["via"], row["detail"]) == (
        "olga", "owner", "create", made.id, "cli", "run.jsonl")
    with pytest.raises(ValueError, match="exists already"):  # the insert fails inside the transaction
        rs.create_session(store, "olga", "s", "qa", ITEMS)
    assert len(store.audit_rows()) == 1

    def broken(c, audit):  # the audit insert fails after the session and its items were inserted
        raise RuntimeError("audit table unavailable")

    monkeypatch.setattr(store_module, "_audit_insert", broken)
    with pytest.raises(RuntimeError):
        rs.create_session(store, "olga", "t", "qa", ITEMS)
    monkeypatch.undo()
    # one transaction: the session and its 3 items were rolled back with the failed row
    assert [s.name for s in store.sessions()] == ["s"] and store.session_by_name("t") is None
    assert len(store.audit_rows()) == 1


def test_cli_create_is_checked_and_audited_once(review_url, tmp_path, monkeypatch):
    run = tmp_path / "run.jsonl"
    rows = [("首都是哪里", "北京", "上海"), ("2+2?", "4", "4")]
    run.write_text("".join(json.dumps({"id": f"q{i}", "question": q, "answer": gt, "prediction": p},
                                      ensure_ascii=False) + "\n" for i, (q, gt, p) in enumerate(rows)),
                   encoding="utf-8")
    create = ["review", "create", "--db", review_url, "--input", str(run), "--session", "cli"]
    with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
        assert main([*create, "--as", "vic", "--role", "viewer"]) == 2           # refused: nothing
        assert main([*create, "--as", "olga", "--role", "owner"]) == 0
        assert main([*create, "--as", "olga", "--role", "owner"]) == 2            # the name is taken
    assert "may not create" in err.getvalue()
    store = ReviewStore(review_url)
    (s,) = store.sessions()
    assert [(r["who"], r["role"], r["action"], r["session_id"], r["via"]) for r in store.audit_rows()] == [
        ("olga", "owner", "create", s.id, "cli")]


# ---------------------------------------------------------------- export
def test_export_row_only_after_a_complete_export(review_url):
    store = ReviewStore(review_url)
    s = store.create_session("blind", "qa", ITEMS, created_by="olga", blind=True)
    with pytest.raises(PermissionError):  # a blind session, a reviewer without rights: no row, nothing made
        rs.export(store, s, "mallory", "jsonl", lambda: pytest.fail("made although refused"))

    def fails():
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        rs.export(store, s, "olga", "jsonl", fails)
    assert _actions(store) == []
    text = rs.export(store, s, "olga", "jsonl", lambda: export_jsonl(store, s.id))
    assert text.count("\n") == 1 + 3                                              # the session line, 3 items
    (row,) = store.audit_rows()
    assert (row["who"], row["action"], row["session_id"], row["detail"]) == ("olga", "export", s.id, "jsonl (blind)")


def test_cli_export_to_an_unwritable_file_leaves_no_row(review_url, tmp_path):
    store = ReviewStore(review_url)
    s = store.create_session("open", "qa", ITEMS, created_by="olga")
    export = ["review", "export", "--db", review_url, "--session", "open", "--as", "olga"]
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert main([*export, "--out", str(tmp_path / "no such folder" / "x.jsonl")]) == 2
    assert "cannot write" in err.getvalue() and _actions(store) == []
    assert main([*export, "--out", str(tmp_path / "x.jsonl")]) == 0
    assert (tmp_path / "x.jsonl").read_text(encoding="utf-8").count("\n") == 4
    assert _actions(store) == [("olga", "export", s.id)]


# ---------------------------------------------------------------- import
def _export_with_decisions(tmp_path) -> bytes:
    src = ReviewStore(tmp_path / "src.sqlite")
    s = src.create_session("imported", "qa", ITEMS, created_by="olga", k=2)
    for n, item in enumerate(src.items(s.id)):
        src.save_decision(item.id, "anna", label="model_error")
        if n < 2:
            src.save_decision(item.id, "bob", label="correct")
    return export_jsonl(src, s.id).encode("utf-8")


def test_import_row_commits_with_the_first_write(review_url, tmp_path, monkeypatch):
    data = _export_with_decisions(tmp_path)        # 1 session line, 3 items, 3 + 2 = 5 decisions
    store = ReviewStore(review_url)
    row = rs.audit_row(Actor("olga", "owner", "cli"), "import", detail="x.jsonl")
    bad = b'{"type": "decision", "session": "imported", "item_digest": "nope"}\n'
    report = import_jsonl(store, bad, "bad.jsonl", audit=row)                     # every line refused
    assert report.imported == 0 and report.issues and _actions(store) == []
    monkeypatch.setattr(exchange, "BATCH_LINES", 2)  # 9 lines: several batches, several transactions
    report = import_jsonl(store, data, "x.jsonl", audit=row)
    assert report.written == 5 and report.sessions_created == 1
    assert [(r["who"], r["role"], r["action"], r["via"], r["detail"]) for r in store.audit_rows()] == [
        ("olga", "owner", "import", "cli", "x.jsonl")]                            # one row for all batches
    again = import_jsonl(store, data, "x.jsonl", audit=row)                       # nothing new: no write, no row
    assert again.unchanged == 5 and again.written == 0 and len(store.audit_rows()) == 1


def test_a_dry_run_reports_what_the_import_does_and_stores_nothing(review_url, tmp_path, monkeypatch):
    """The page's dry run is the import itself inside one rolled-back transaction: over several batches its
    report equals the real import's, field by field, and the database (sessions, decisions, audit) is as before."""
    data = _export_with_decisions(tmp_path)        # 1 session line, 3 items, 3 + 2 = 5 decisions
    store = ReviewStore(review_url)
    store.create_session("kept", "qa", ITEMS, created_by="olga")
    monkeypatch.setattr(exchange, "BATCH_LINES", 2)  # 9 lines: 5 batches, each a savepoint of the dry run
    owner = Actor("olga", "owner", "page")
    dry = rs.import_file(store, owner, data + b'{"type": "decision"}\n', "x.jsonl", dry_run=True)
    assert [s.name for s in store.sessions()] == ["kept"] and _actions(store) == []
    assert (dry.written, dry.sessions_created, dry.items_added, len(dry.issues)) == (5, 1, 3, 1)
    real = rs.import_file(store, owner, data + b'{"type": "decision"}\n', "x.jsonl")
    assert real.to_dict() == dry.to_dict()
    assert len(store.decisions(store.session_by_name("imported").id)) == 5 and len(store.audit_rows()) == 1
    again = rs.import_file(store, owner, data, "x.jsonl", dry_run=True)         # after it: all 5 already stored
    assert (again.written, again.unchanged, again.sessions_created, again.items_added) == (0, 5, 0, 0)

def test_an_import_failing_after_its_first_batch_keeps_that_batch_and_its_row(review_url, tmp_path, monkeypatch):
    data = _export_with_decisions(tmp_path)
    store = ReviewStore(review_url)
    monkeypatch.setattr(exchange, "BATCH_LINES", 4)  # session line; items 1-3 and decision 1; then decisions 2-5
    calls = {"n": 0}
    apply = exchange._Importer._apply

    def second_fails(self, inserts, updates):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("connection lost")
        return apply(self, inserts, updates)

    monkeypatch.setattr(exchange._Importer, "_apply", second_fails)
    with pytest.raises(RuntimeError):
        import_jsonl(store, data, "x.jsonl", audit=rs.audit_row("olga", "import", detail="x.jsonl"))
    (s,) = store.sessions()
    assert len(store.decisions(s.id)) == 1                # the first batch's one decision stays (committed)
    assert _actions(store) == [("olga", "import", None)]  # and the row that came with the first write


def test_cli_import_refused_or_empty_leaves_no_row(review_url, tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(_export_with_decisions(tmp_path))
    (tmp_path / "empty.jsonl").write_bytes(b"\n")
    store = ReviewStore(review_url)
    imp = ["review", "import", "--db", review_url, "--input"]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main([*imp, str(path), "--as", "anna", "--role", "annotator"]) == 2   # annotators do not import
        assert main([*imp, str(tmp_path / "empty.jsonl"), "--as", "olga"]) == 2     # nothing imported
        assert _actions(store) == []
        assert main([*imp, str(path), "--as", "olga", "--role", "owner"]) == 0
    assert [(r["who"], r["action"], r["via"]) for r in store.audit_rows()] == [("olga", "import", "cli")]


# ---------------------------------------------------------------- the task pages' button
def _toy_button(monkeypatch, tmp_path, who):
    from streamlit.testing.v1 import AppTest

    import components.review_link as review_link
    from components.layout import SOURCE_KEY
    from tests.conftest import ROOT

    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    if who is not None:
        monkeypatch.setattr(review_link, "page_actor", lambda kind: who)
    at = AppTest.from_file(str(ROOT / "tests" / "helpers" / "toy_page.py"), default_timeout=120)
    at.session_state[SOURCE_KEY] = "demo"
    at.run()
    (button,) = [b for b in at.button if "Review these" in b.label]
    button.click().run()
    return at, ReviewStore(tmp_path / "review.sqlite")


def test_review_these_button_creates_through_the_service(monkeypatch, tmp_path):
    at, store = _toy_button(monkeypatch, tmp_path, None)   # nobody named in this browser: "<kind> page"
    (s,) = store.sessions()
    assert s.created_by == "toylabel page" and s.n_items == 8
    assert _actions(store) == [("toylabel page", "create", s.id)]


def test_review_these_button_refuses_a_viewer_without_a_row(monkeypatch, tmp_path):
    at, store = _toy_button(monkeypatch, tmp_path, Actor("vic", "viewer"))
    assert store.sessions() == [] and _actions(store) == []
    assert any("may not create" in e.value for e in at.error)


# ---------------------------------------------------------------- patch
def test_cli_patch_releases_no_file_without_its_row_and_no_row_for_a_failed_write(review_url, tmp_path, monkeypatch):
    """``review patch`` reads the database and writes a file: its row is written after the patch is complete and
    before it is released (a temporary file renamed into place), so a row that cannot be written leaves no
    patch, an unwritable ``--out`` leaves no row, and a patch made leaves exactly one."""
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"id": f"q{i}", "question": q, "answer": gt, "prediction": p},
                                      ensure_ascii=False) + "\n"
                           for i, (q, gt, p) in enumerate([("首都是哪里", "北京", "上海"),
                                                           ("2+2?", "5", "4")])),
                   encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["review", "create", "--db", review_url, "--input", str(run), "--session", "p",
                     "--as", "olga"]) == 0
    store = ReviewStore(review_url)
    s = store.session_by_name("p")
    item = next(i for i in store.items(s.id) if i.payload["id"] == "q1")
    rs.adjudicate(store, s, "olga", item.id, "gt_error", "2+2 is 4", corrected_answer="4")
    patch = ["review", "patch", "--db", review_url, "--session", "p", "--gt", str(run), "--as", "olga"]
    folder = tmp_path / "patches"
    folder.mkdir()
    out = folder / "fix.jsonl"

    def unavailable(self, *args, **kwargs):
        raise RuntimeError("audit table unavailable")

    monkeypatch.setattr(ReviewStore, "audit", unavailable)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        assert main([*patch, "--out", str(out)]) != 0
    assert "audit table unavailable" in err.getvalue()
    with contextlib.redirect_stdout(io.StringIO()) as printed, contextlib.redirect_stderr(io.StringIO()):
        assert main(patch) != 0                                               # on stdout: nothing printed either
    monkeypatch.undo()
    assert printed.getvalue() == "" and list(folder.iterdir()) == []          # no patch, no temporary file
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert main([*patch, "--out", str(tmp_path / "no such folder" / "fix.jsonl")]) == 2
    assert "cannot write" in err.getvalue() and [r for r in _actions(store) if r[1] == "patch"] == []
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*patch, "--out", str(out)]) == 0
    (line,) = out.read_text(encoding="utf-8").splitlines()                  # one correction: q1's GT "5" -> "4"
    fix = json.loads(line)
    assert (fix["record_id"], fix["old"], fix["who"], fix["session"]) == ("q1", ["5"], "olga", "p")
    assert [r for r in _actions(store) if r[1] == "patch"] == [("olga", "patch", s.id)]
    assert [p.name for p in folder.iterdir()] == ["fix.jsonl"]               # no temporary file left
