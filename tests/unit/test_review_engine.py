"""The review engine at scale and under concurrency, on SQLite and on PostgreSQL (``review_url``):
concurrent first open, migrations from schema 1, a newer schema, input limits, the import
lost-update race, overlap-first queue with claims, and a load test of 20 annotators."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time

import pytest
import sqlalchemy as sa

from evaluators.cli import main
from evaluators.review import ReviewStore, StaleDecision
from evaluators.review.exchange import export_jsonl, import_jsonl
from evaluators.review.schema import SchemaTooNew
from evaluators.review.store import QueueFilter
from tests.conftest import ROOT
from tests.helpers.review_db import upgrade_to


def _items(n: int, kind: str = "qa") -> list[dict]:
    return [{"kind": kind, "id": f"q{i}", "question": f"问题 {i} / question {i}", "ground_truth": "Paris",
             "prediction": "Paris" if i % 2 else "Lyon", "system": "sys-a"} for i in range(n)]


def test_eight_processes_open_a_new_empty_database_at_once(review_url):
    """Schema creation under a lock: every one of 8 simultaneous first opens works (today's
    ``create_all`` + meta insert failed in about half of 4 opens)."""
    start = time.time() + 3
    script = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from evaluators.review import ReviewStore
while time.time() < {start!r}:
    time.sleep(0.001)
st = ReviewStore({review_url!r})
st.create_session("s" + sys.argv[1], "qa", [{{"id": sys.argv[1]}}], created_by="x")
print("ok")
"""
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for n in range(8)]
    results = [p.communicate(timeout=180) for p in procs]
    failures = [(p.returncode, err[-500:]) for p, (_, err) in zip(procs, results) if p.returncode != 0]
    assert failures == []
    assert sorted(s.name for s in ReviewStore(review_url).sessions()) == [f"s{n}" for n in range(8)]


def _schema_1_database(url: str) -> None:
    """A database as the code before Alembic left it: schema 1, ``meta.schema_version = 1``."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        upgrade_to(conn, "0001")
        conn.execute(sa.text("DROP TABLE alembic_version"))
        conn.execute(sa.text("INSERT INTO sessions (name, kind, created_by, blind, k, seed, uploads, created_at) "
                             "VALUES ('old', 'qa', 'ann', :b, 2, 3, '[]', '2025-01-01T00:00:00+00:00')"), {"b": True})
        for n, payload in enumerate(_items(4)):
            from evaluators.review.store import item_digest

            conn.execute(sa.text("INSERT INTO items (session_id, position, digest, payload) VALUES (1, :p, :d, :j)"),
                         {"p": n, "d": item_digest(payload), "j": json.dumps(payload, ensure_ascii=False)})
        for item_id, who, label, status in ((1, "alice", "model_error", "submitted"),
                                            (1, "bob", "gt_error", "submitted"), (2, "alice", None, "skipped")):
            conn.execute(sa.text("INSERT INTO decisions (item_id, annotator, label, score, comment, status, version, "
                                 "updated_at) VALUES (:i, :a, :l, NULL, '', :s, 1, '2025-01-02T00:00:00+00:00')"),
                         {"i": item_id, "a": who, "l": label, "s": status})
    engine.dispose()


def test_a_schema_1_database_is_upgraded_with_its_data(review_url):
    from evaluators.review import schema

    _schema_1_database(review_url)
    store = ReviewStore(review_url)
    (s,) = store.sessions()
    assert (s.name, s.blind, s.k, s.seed, s.n_items) == ("old", True, 2, 3, 4)
    assert store.progress(s.id, "alice").decided == 2 and store.progress(s.id, "alice").complete == 1
    # item 1 has its two reviews; alice decided items 1 and 2: her next item is 3 or 4
    assert store.next_item(s.id, "alice").id in (3, 4)
    assert [i.id for i, _ in store.adjudication_queue(s.id)] == [1]
    with store.engine.connect() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == schema.HEAD == "0006"
        assert c.execute(sa.text("SELECT value FROM meta WHERE key = 'schema_version'")).scalar() == "6"
        # schema 3: the adjudications' corrected answer (a GT error's right answer) is there, empty
        assert c.execute(sa.text("SELECT count(corrected_answer) FROM adjudications")).scalar() == 0
    # schema 4: the history starts with each decision's state; the items' filter columns are filled
    assert [(h.action, h.annotator, h.new_label, h.blind) for h in store.history(1)] == [
        ("migrated", "alice", "model_error", True), ("migrated", "bob", "gt_error", True)]
    assert store.next_item(s.id, "carol", filters=QueueFilter(system="sys-a")).id in (2, 3, 4)
    assert store.next_item(s.id, "carol", filters=QueueFilter(system="sys-b")) is None
    assert store.next_item(s.id, "carol", filters=QueueFilter(metric_min=0.0)) is None  # no exact_match in these
    ReviewStore(review_url)  # opening again is a no-op


def test_a_newer_schema_is_refused_and_the_cli_exits_2(tmp_path, capsys):
    db = tmp_path / "newer.sqlite"
    ReviewStore(db).create_session("s", "qa", _items(1), created_by="x")
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as c:
        c.execute(sa.text("UPDATE meta SET value = '7' WHERE key = 'schema_version'"))
        c.execute(sa.text("UPDATE alembic_version SET version_num = '0007'"))
    with pytest.raises(SchemaTooNew, match="newer"):
        ReviewStore(db)
    assert main(["review", "sessions", "--db", str(db)]) == 2
    assert "newer than this EvalBoard" in capsys.readouterr().err


@pytest.mark.parametrize("field, kwargs, message", [
    ("comment", {"comment": "before\x00after"}, "NUL"),
    ("comment", {"comment": "x" * 10_001}, "over the limit"),
    ("comment", {"comment": "lone \ud800 surrogate"}, "surrogate"),
    ("annotator", {"annotator": "a" * 257}, "over the limit"),
    ("annotator", {"annotator": "alice\x1b[31m"}, "control character"),
    ("annotator", {"annotator": "   "}, "required"),
    ("score", {"score": True}, "score"),
])
def test_input_limits_are_located_value_errors_on_every_backend(review_url, field, kwargs, message):
    """Checked before the database: PostgreSQL raised DataError / a 256-character overflow, SQLite stored them."""
    store = ReviewStore(review_url)
    s = store.create_session("limits", "qa", _items(1), created_by="x")
    item = store.items(s.id)[0]
    args = {"annotator": "alice", "label": "model_error"} | kwargs
    who = args.pop("annotator")
    with pytest.raises(ValueError, match=message) as err:
        store.save_decision(item.id, who, **args)
    assert field in str(err.value)
    assert store.decisions(s.id) == []


def test_session_and_item_limits(review_url):
    store = ReviewStore(review_url)
    with pytest.raises(ValueError, match="session name.*control character"):
        store.create_session("two\nlines", "qa", _items(1), created_by="x")
    deep: dict = {"id": "deep"}
    node = deep
    for _ in range(1000):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(ValueError, match="item 2: item is nested deeper"):
        store.create_session("deep", "qa", [_items(1)[0], deep], created_by="x")
    with pytest.raises(ValueError, match="item 1: .*surrogate"):
        store.create_session("sur", "qa", [{"id": "\udc80"}], created_by="x")
    assert store.sessions() == []


def _import_while(store: ReviewStore, data: bytes, save):
    """Import ``data``, calling ``save`` (a reviewer's save, on another connection) right after the
    import has read the stored decisions and before it writes; returns the import report."""
    fired = []

    def meanwhile(conn, cursor, statement, parameters, context, executemany):
        if not fired and statement.lstrip().upper().startswith("SELECT") and "FROM decisions" in statement:
            fired.append(True)
            save()

    sa.event.listen(store.engine, "after_cursor_execute", meanwhile)
    try:
        report = import_jsonl(store, data, "race.jsonl")
    finally:
        sa.event.remove(store.engine, "after_cursor_execute", meanwhile)
    assert fired
    return report


def test_import_never_overwrites_a_save_made_between_its_read_and_its_write(review_url, tmp_path):
    """The lost update: the import read alice's version 1, alice saved version 2, the import wrote
    over it by id (and alice's next save at version 2 was accepted).  Now the write is
    version-checked: alice's save is kept and the line is reported as a conflict."""
    store = ReviewStore(review_url)
    s = store.create_session("race", "qa", _items(2), created_by="x")
    item = store.items(s.id)[0]
    store.save_decision(item.id, "alice", label="model_error", comment="first look")
    exported = export_jsonl(store, s.id)
    # the file says alice later chose acceptable_variant (a newer time, same version)
    line = next(json.loads(x) for x in exported.splitlines() if '"annotator": "alice"' in x)
    newer = dict(line, label="acceptable_variant", comment="from the file", updated_at="2999-01-01T00:00:00+00:00")
    data = (exported.replace(json.dumps(line, ensure_ascii=False, sort_keys=True),
                             json.dumps(newer, ensure_ascii=False, sort_keys=True))).encode()
    reviewer = ReviewStore(review_url)  # alice's server: another engine, another connection
    report = _import_while(store, data, lambda: reviewer.save_decision(
        item.id, "alice", label="gt_error", comment="my second look", expected_version=1))
    kept = store.decision(item.id, "alice")
    assert (kept.label, kept.comment, kept.version) == ("gt_error", "my second look", 2)
    assert report.conflicts == 1 and report.written == 0
    (issue,) = report.issues
    assert issue.kind == "conflict" and issue.line == 4  # session, 2 items, then alice's decision
    with pytest.raises(StaleDecision):  # nobody else's version 2 exists to be overwritten
        store.save_decision(item.id, "alice", label="model_error", expected_version=1)


def test_import_never_overwrites_a_first_save_made_between_its_read_and_its_write(review_url, tmp_path):
    """The same race for a decision the database did not hold when the import read it: alice's
    first save lands between the read and the batch's insert.  Her decision is kept, the line is
    a conflict, and the other lines of the batch are still written."""
    store = ReviewStore(review_url)
    s = store.create_session("race-new", "qa", _items(3), created_by="x")
    first, second, _ = store.items(s.id)
    source = ReviewStore(tmp_path / "source.sqlite")  # the file: alice and bob on the first item, bob on the second
    t = source.create_session("race-new", "qa", _items(3), created_by="x")
    a, b, _ = source.items(t.id)
    source.save_decision(a.id, "alice", label="acceptable_variant", comment="from the file")
    source.save_decision(a.id, "bob", label="model_error")
    source.save_decision(b.id, "bob", label="gt_error")
    data = export_jsonl(source, t.id).encode("utf-8")
    reviewer = ReviewStore(review_url)
    report = _import_while(store, data, lambda: reviewer.save_decision(
        first.id, "alice", label="gt_error", comment="my own first look"))
    kept = store.decision(first.id, "alice")
    assert (kept.label, kept.comment, kept.version) == ("gt_error", "my own first look", 1)
    assert (report.written, report.conflicts) == (2, 1)      # bob's two lines written, alice's line a conflict
    (issue,) = report.issues
    assert issue.kind == "conflict" and issue.line == 5 and "while importing" in issue.message  # 1 session, 3 items
    assert {(d.annotator, d.item_id) for d in store.decisions(s.id)} == {
        ("alice", first.id), ("bob", first.id), ("bob", second.id)}
    with store.engine.connect() as c:                        # submitted counts: alice + bob, bob
        assert [r[0] for r in c.execute(sa.text("SELECT n_done FROM items ORDER BY position"))] == [2, 1, 0]


def test_overlap_first_builds_agreement_from_the_first_minutes(review_url):
    """Issue 18: two annotators, k = 2, 20 decisions each in turns: at least 15 items have both reviews."""
    store = ReviewStore(review_url)
    s = store.create_session("overlap", "qa", _items(150), created_by="x", k=2, seed=5)
    for _ in range(20):
        for who in ("alice", "bob"):
            item = store.next_item(s.id, who, claim=True)
            store.save_decision(item.id, who, label="model_error")
    both = store.progress(s.id, "alice").complete
    assert both >= 15
    assert store.agreement(s.id)["label"]["n_items"] == both


def test_claims_never_hand_an_item_to_more_than_k(review_url):
    store = ReviewStore(review_url)
    s = store.create_session("claims", "qa", _items(3), created_by="x", k=2)
    got = [store.next_item(s.id, who, claim=True) for who in ("a", "b", "c")]
    assert got[0].id == got[1].id != got[2].id  # two reviewers on one item, the third elsewhere
    assert sorted(store.claims(s.id)[got[0].id]) == ["a", "b"]
    store.save_decision(got[0].id, "a", label="model_error")
    assert store.claims(s.id)[got[0].id] == ["b"]  # a's save released a's claim


def test_progress_and_next_item_read_only_what_they_show(review_url):
    """Per-run work does not grow with the session: the statements a page run issues select a
    bounded number of rows (no statement reads every item or decision)."""
    store = ReviewStore(review_url)
    s = store.create_session("big", "qa", _items(3000), created_by="x", k=2)
    for item in store.items(s.id)[:50]:
        store.save_decision(item.id, "bob", label="model_error")
    rows = []

    def count(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT"):
            rows.append(cursor.rowcount if cursor.rowcount and cursor.rowcount > 0 else 0)

    from evaluators.review import service

    sa.event.listen(store.engine, "after_cursor_execute", count)
    try:
        view = service.review_view(store, s, "alice")
        service.decide(store, s, "alice", view.item.id, "model_error")
        store.next_item(s.id, "alice", claim=True)
    finally:
        sa.event.remove(store.engine, "after_cursor_execute", count)
    assert view.progress.n_items == 3000 and view.progress.n_decisions == 50
    assert max(rows, default=0) <= 10


def test_twenty_annotators_on_one_store_lose_and_duplicate_nothing(review_url):
    """A load test: 20 annotators, 200 decisions each, on one store (as one server process)."""
    store = ReviewStore(review_url)
    s = store.create_session("load", "qa", _items(2500), created_by="x", k=2)
    latencies: list[float] = []
    saved: dict[tuple[int, str], str] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def annotator(n: int) -> None:
        who = f"annotator-{n:02d}"
        try:
            for j in range(200):
                item = store.next_item(s.id, who, claim=True)
                label = ("model_error", "gt_error", "acceptable_variant")[(n + j) % 3]
                t0 = time.perf_counter()
                d = store.save_decision(item.id, who, label=label, comment=f"{who} #{j}")
                with lock:
                    latencies.append(time.perf_counter() - t0)
                    saved[(d.item_id, who)] = label
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=annotator, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not errors, errors[:3]
    stored = store.decisions(s.id)
    assert len(saved) == 4000                                        # no save answered twice for one item
    assert len(stored) == 4000                                       # 0 lost, 0 duplicated
    assert {(d.item_id, d.annotator): d.label for d in stored} == saved
    per_item: dict[int, int] = {}
    for d in stored:
        per_item[d.item_id] = per_item.get(d.item_id, 0) + 1
    assert max(per_item.values()) <= 2                               # claims: never over k
    assert sum(i.gold is None for i in store.items(s.id)) == 2500
    with store.engine.connect() as c:                                # the queue's counts equal the rows
        assert c.execute(sa.text("SELECT sum(n_done) FROM items")).scalar() == 4000
    p95 = statistics.quantiles(latencies, n=20)[-1]
    print(f"\n[{store.engine.dialect.name}] 20 annotators x 200 decisions: 0 lost, 0 duplicated; save latency "
          f"p50 {statistics.median(latencies) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms")


def test_item_names_follow_the_items_asked_for_and_the_session_changes(review_url):
    """The picker's names are cached per session for the items asked for last: another set of items gets its
    own names (not the cached ones), the same set again is not read again, a change of the session reads again."""
    store = ReviewStore(review_url)
    sid = store.create_session("names", "qa", [*_items(5), {"kind": "qa", "question": "no id"}], created_by="ann").id
    items = store.items(sid)
    ids = [it.id for it in items]
    expected = {it.id: it.payload.get("id") or str(it.id) for it in items}
    assert expected[ids[5]] == str(ids[5])  # an item without an id is named by its item id
    reads = []
    real_connect = store.engine.connect

    def counting_connect(*a, **k):
        reads.append(1)
        return real_connect(*a, **k)

    store.engine.connect = counting_connect
    first = store.item_names(sid, ids[:3])
    assert first == {i: expected[i] for i in ids[:3]}
    other = store.item_names(sid, ids[3:])
    assert other == {i: expected[i] for i in ids[3:]}
    n = len(reads)
    assert store.item_names(sid, ids[3:]) == other  # the same items: only the change counter is read
    assert len(reads) == n + 1
    store.engine.connect = real_connect
    store.save_decision(ids[0], "ann", label="model_error")
    assert store.item_names(sid, ids[3:]) == other and store.item_names(sid, ids[:2]) == {i: expected[i]
                                                                                          for i in ids[:2]}
