"""Issue 30: ``evalboard review delete --session S --as NAME [--role R] --yes`` on SQLite and PostgreSQL: owner
(or admin) only, checked in the service layer, refused without ``--yes``, the session with its items,
decisions, history, adjudications and claims gone in one transaction with its one audit row; other sessions
and the audit trail stay; a deleted session's id is never given again."""

from __future__ import annotations

import contextlib
import io

import pytest
import sqlalchemy as sa

from evaluators.cli import main
from evaluators.review import ReviewStore
from evaluators.review import service as rs
from evaluators.review import store as store_module
from evaluators.review.roles import ROLES_ENV, Actor
from evaluators.review.schema import (adjudications_table, claims_table, decisions_table, history_table,
                                      items_table)
from tests.unit.test_review_roles import ITEMS  # three items, Chinese and English


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.delenv(ROLES_ENV, raising=False)
    monkeypatch.setenv(rs.ADMINS_ENV, "root")


def _filled(store: ReviewStore, name: str):
    """A session of 3 items: anna decides all 3, bob 2 (5 decisions, 5 history rows, 5 audit rows), olga
    adjudicates one (1 adjudication, 1 audit row), carl claims one (1 claim)."""
    s = store.create_session(name, "qa", ITEMS, created_by="olga", k=2)
    items = store.items(s.id)
    for item in items:
        rs.decide(store, s, "anna", item.id, "model_error")
    for item in items[:2]:
        rs.decide(store, s, "bob", item.id, "correct")
    rs.adjudicate(store, s, "olga", items[0].id, "model_error")
    store.next_item(s.id, "carl", claim=True)
    return s, [i.id for i in items]


def _left(store: ReviewStore, session_id: int, item_ids: list[int]) -> dict[str, int]:
    with store.engine.connect() as c:
        def count(table, where):
            return c.execute(sa.select(sa.func.count()).select_from(table).where(where)).scalar_one()
        return {"items": count(items_table, items_table.c.session_id == session_id),
                "decisions": count(decisions_table, decisions_table.c.item_id.in_(item_ids)),
                "history": count(history_table, history_table.c.session_id == session_id),
                "adjudications": count(adjudications_table, adjudications_table.c.item_id.in_(item_ids)),
                "claims": count(claims_table, claims_table.c.item_id.in_(item_ids))}


FULL = {"items": 3, "decisions": 5, "history": 5, "adjudications": 1, "claims": 1}
GONE = dict.fromkeys(FULL, 0)


def _cli(*args: str) -> tuple[int, str, str]:
    with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()) as out:
        code = main(["review", "delete", *args])
    return code, out.getvalue(), err.getvalue()


def test_cli_delete_owner_only_with_yes_audited(review_url):
    store = ReviewStore(review_url)
    s, ids = _filled(store, "doomed")
    other, other_ids = _filled(store, "kept")
    assert _left(store, s.id, ids) == FULL
    base = ["--db", review_url, "--session", "doomed"]
    for who in (["--as", "anna"], ["--as", "olga", "--role", "annotator"], ["--as", "adam", "--role", "adjudicator"]):
        code, _, err = _cli(*base, *who, "--yes")
        assert code == 2 and "may not delete" in err, (who, err)
    code, _, err = _cli(*base, "--as", "olga")                                  # the owner, without --yes
    assert code == 2 and "add --yes" in err and "3 item(s) and 5 decision(s)" in err
    assert _left(store, s.id, ids) == FULL and len(store.audit_rows(s.id)) == 6  # 5 decide + 1 adjudicate
    code, out, _ = _cli(*base, "--as", "olga", "--yes")
    assert code == 0 and "3 item(s), 5 decision(s), 1 adjudication(s), 5 history row(s)" in out
    assert store.session_by_name("doomed") is None and _left(store, s.id, ids) == GONE
    rows = store.audit_rows(s.id)
    assert [r["action"] for r in rows] == ["decide"] * 5 + ["adjudicate", "delete"]   # the trail stays
    assert (rows[-1]["who"], rows[-1]["via"], rows[-1]["detail"]) == (
        "olga", "cli", "doomed (3 items); 1 adjudications, 5 decisions, 5 history, 3 items")
    assert _left(store, other.id, other_ids) == FULL                            # another session untouched
    code, _, err = _cli("--db", review_url, "--session", "kept", "--as", "root", "--yes")   # an admin by name
    assert code == 0 and _left(store, other.id, other_ids) == GONE
    code, _, err = _cli(*base, "--as", "olga", "--yes")                         # gone already
    assert code == 2 and "no review session named 'doomed'" in err


def test_a_role_owner_may_delete_anyones_session(review_url):
    store = ReviewStore(review_url)
    s, ids = _filled(store, "s")
    assert rs.delete_session(store, s, Actor("lead", "owner", "cli")) == FULL
    (row,) = [r for r in store.audit_rows(s.id) if r["action"] == "delete"]
    assert (row["who"], row["role"]) == ("lead", "owner")
    with pytest.raises(LookupError):                                            # deleted meanwhile: no second row
        rs.delete_session(store, s, Actor("lead", "owner", "cli"))
    assert [r["action"] for r in store.audit_rows(s.id)].count("delete") == 1


def test_delete_and_its_row_are_one_transaction(review_url, monkeypatch):
    store = ReviewStore(review_url)
    s, ids = _filled(store, "s")

    def broken(c, audit):
        raise RuntimeError("audit table unavailable")

    monkeypatch.setattr(store_module, "_audit_insert", broken)
    with pytest.raises(RuntimeError):
        rs.delete_session(store, s, "olga")
    monkeypatch.undo()
    assert store.session(s.id).name == "s" and _left(store, s.id, ids) == FULL


def test_a_deleted_sessions_id_is_not_given_again(review_url):
    store = ReviewStore(review_url)
    first = store.create_session("a", "qa", ITEMS, created_by="olga")
    last, _ = _filled(store, "b")                  # the highest id: SQLite's rowid alone would give it again
    rs.delete_session(store, last, "olga")
    again = store.create_session("c", "qa", ITEMS, created_by="olga")
    assert again.id > last.id > first.id
    assert all(r["action"] != "delete" or r["session_id"] == last.id for r in store.audit_rows())
    assert store.audit_rows(again.id) == []        # the deleted session's rows are not the new one's
