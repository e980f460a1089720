"""Issue 18, the review workflow annotators expect: history and undo, gold items, team progress,
queue filters, blind mode turned on later, guidelines versions and adjudication marks, on SQLite
and on PostgreSQL (``review_url``)."""

from __future__ import annotations

import json
import math

import pytest
import sqlalchemy as sa
from statsmodels.stats.proportion import proportion_confint

from evaluators.metrics.statistics import wilson_interval
from evaluators.review import ReviewStore, StaleDecision
from evaluators.review import service as rs
from evaluators.review.exchange import export_jsonl, import_jsonl
from evaluators.review.store import QueueFilter
from tests.helpers.review_db import upgrade_to


def _items(n: int) -> list[dict]:
    """QA items: systems alternate s0 / s1, exact match 0 for even, 1 for odd items; Chinese and English."""
    return [{"kind": "qa", "id": f"q{i}", "question": f"问题 {i} / question {i}", "ground_truth": "巴黎 Paris",
             "prediction": "Paris" if i % 2 else "Lyon", "system": f"s{i % 2}", "exact_match": float(i % 2),
             "token_f1": 0.5} for i in range(n)]


@pytest.fixture
def store(review_url):
    return ReviewStore(review_url)


# ---------------------------------------------------------------- history and undo
def test_history_records_every_change_and_undo_walks_back(store):
    s = store.create_session("hist", "qa", _items(4), created_by="olga", k=2)
    a, b = store.items(s.id)[:2]
    store.save_decision(a.id, "alice", label="model_error", comment="一 first")
    store.save_decision(a.id, "alice", label="gt_error", score=4, comment="second", expected_version=1)
    store.save_decision(b.id, "alice", label="acceptable_variant")
    store.save_decision(a.id, "bob", label="model_error")
    hist = store.history(a.id)
    assert [(h.annotator, h.action, h.old_label, h.new_label, h.old_version, h.new_version) for h in hist] == [
        ("alice", "save", None, "model_error", None, 1), ("alice", "save", "model_error", "gt_error", 1, 2),
        ("bob", "save", None, "model_error", None, 1)]
    assert (hist[1].old_comment, hist[1].new_comment, hist[1].new_score) == ("一 first", "second", 4)
    assert store.last_change(s.id, "alice").item_id == b.id
    # undo 1: alice's decision on b goes (it was her first there); the undo is itself history
    first = rs.undo(store, s, "alice")
    assert (first.item_id, first.action, first.old_label, first.new_status) == (b.id, "undo", "acceptable_variant",
                                                                               None)
    assert store.decision(b.id, "alice") is None
    # undo 2: back to her first decision on a (version 3: an undo is a new version, not a rewind)
    second = rs.undo(store, s, "alice")
    now = store.decision(a.id, "alice")
    assert (now.label, now.score, now.comment, now.version) == ("model_error", None, "一 first", 3)
    assert second.undoes == hist[1].id
    # undo 3 then 4: no decision of alice's on a; then nothing is left to undo
    rs.undo(store, s, "alice")
    assert store.decision(a.id, "alice") is None
    with pytest.raises(LookupError):
        rs.undo(store, s, "alice")
    assert [h.action for h in store.history(a.id, "alice")] == ["save", "save", "undo", "undo"]
    assert store.decision(a.id, "bob").label == "model_error"          # bob's own decision untouched
    with pytest.raises(PermissionError):
        rs.undo(store, s, None)
    # the queue counts follow: a has 1 submitted decision (bob's), b none
    with store.engine.connect() as c:
        assert dict(c.execute(sa.text("SELECT id, n_done FROM items WHERE id IN (:a, :b)"),
                              {"a": a.id, "b": b.id}).all()) == {a.id: 1, b.id: 0}


def test_the_item_history_shows_others_changes_only_to_those_who_may_see_them(store):
    s = store.create_session("seen", "qa", _items(2), created_by="olga", k=3)
    a = store.items(s.id)[0]
    store.save_decision(a.id, "bob", label="gt_error", comment="bob's reason")
    assert rs.history_rows(store, s, "alice", a.id) == []                # not before her own decision
    assert rs.history_rows(store, s, None, a.id) == []
    assert [r["annotator"] for r in rs.history_rows(store, s, "olga", a.id)] == ["bob"]   # the owner
    rs.decide(store, s, "alice", a.id, "model_error")
    rows = rs.history_rows(store, s, "alice", a.id)
    assert [(r["annotator"], r["before"], r["after"]) for r in rows] == [("bob", "(none)", rs.label_words("gt_error")),
                                                                       ("alice", "(none)", rs.label_words("model_error"))]


def test_undo_is_refused_when_the_decision_changed_since(store, tmp_path):
    s = store.create_session("lock", "qa", _items(2), created_by="olga", k=2)
    a = store.items(s.id)[0]
    saved = store.save_decision(a.id, "alice", label="model_error")
    mine = store.last_change(s.id, "alice")
    # another tab of alice's saves meanwhile: the Undo shown for the first save is stale
    store.save_decision(a.id, "alice", label="gt_error", expected_version=saved.version)
    with pytest.raises(StaleDecision):
        rs.undo(store, s, "alice", expected_change=mine.id)
    assert store.decision(a.id, "alice").label == "gt_error"
    # an import changes her decision (not her own save): undoing her last save would overwrite it
    line = {"type": "decision", "session": "lock", "item_digest": a.digest, "annotator": "alice",
            "label": "acceptable_variant", "score": None, "comment": "", "status": "submitted", "version": 3,
            "updated_at": "2999-01-01T00:00:00+00:00"}
    report = import_jsonl(store, (json.dumps(line) + "\n").encode(), "fix.jsonl")
    assert report.written == 1
    assert store.history(a.id)[-1].action == "import" and store.history(a.id)[-1].actor == "import"
    with pytest.raises(StaleDecision):
        rs.undo(store, s, "alice")
    assert store.decision(a.id, "alice").label == "acceptable_variant"


# ---------------------------------------------------------------- gold items
def test_gold_accuracy_per_annotator_with_wilson_intervals(store, tmp_path):
    s = store.create_session("gold", "qa", _items(8), created_by="olga", k=2)
    items = store.items(s.id)
    gold = ["model_error", "model_error", "acceptable_variant", "gt_error", "model_error"]
    for item, label in zip(items, gold):
        rs.mark_gold(store, s, "olga", item.id, label)
    with pytest.raises(PermissionError):
        rs.mark_gold(store, s, "mallory", items[5].id, "model_error")
    # alice: 4 of 5 gold items right (the 4th wrong); bob: 1 of 2 (a skip does not count); both
    # decide a non-gold item too, which does not count either
    for item, label in zip(items, ["model_error", "model_error", "acceptable_variant", "model_error", "model_error"]):
        store.save_decision(item.id, "alice", label=label)
    store.save_decision(items[0].id, "bob", label="acceptable_variant")
    store.save_decision(items[1].id, "bob", label="model_error")
    store.save_decision(items[2].id, "bob", label=None, status="skipped")
    for who in ("alice", "bob"):
        store.save_decision(items[6].id, who, label="gt_error")
    alice, bob = store.gold_accuracy(s.id)
    assert (alice.annotator, alice.n, alice.correct, alice.accuracy) == ("alice", 5, 4, 4 / 5)
    assert (bob.annotator, bob.n, bob.correct, bob.accuracy) == ("bob", 2, 1, 1 / 2)
    # Wilson (1927) by hand for 4 of 5: centre (p + z²/2n) / (1 + z²/n),
    # half-width z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)
    z, p, n = 1.959963984540054, 0.8, 5
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (alice.ci_low, alice.ci_high) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert (bob.ci_low, bob.ci_high) == pytest.approx(proportion_confint(1, 2, method="wilson"), abs=1e-12)
    assert rs.gold_rows(store, s, "alice") is None                       # owners only
    assert not rs.can_export(s, "alice", has_gold=True) and rs.can_export(s, "olga", has_gold=True)
    assert [r["n"] for r in rs.gold_rows(store, s, "olga")] == [5, 2]
    # gold marks travel in the export: a fresh database gets them back
    fresh = ReviewStore(tmp_path / "fresh.sqlite")
    import_jsonl(fresh, export_jsonl(store, s.id).encode("utf-8"))
    moved = fresh.session_by_name("gold")
    assert sorted(fresh.gold_items(moved.id).values()) == sorted(gold)
    assert [(g.annotator, g.n, g.correct) for g in fresh.gold_accuracy(moved.id)] == [("alice", 5, 4), ("bob", 2, 1)]
    # unmarking an item drops it from the figures
    store.set_gold(items[3].id, None)
    assert [(g.n, g.correct) for g in store.gold_accuracy(s.id)] == [(4, 4), (2, 1)]


@pytest.mark.parametrize("k, n", [(0, 0), (4, 5), (1, 2), (10, 10), (0, 30)])
def test_wilson_interval_equals_statsmodels(k, n):
    got = wilson_interval(k, n)
    if n == 0:
        assert got == (None, None)
    else:
        assert got == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-12)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


# ---------------------------------------------------------------- team progress
def test_team_progress_counts_and_medians_by_hand(store):
    s = store.create_session("team", "qa", _items(5), created_by="olga", k=2)
    i = store.items(s.id)
    # alice: 3 decided (4 s, 10 s, 1 s) and 1 skipped (7 s): median of 1, 4, 7, 10 = (4 + 7) / 2 = 5.5
    for item, sec in zip(i[:3], (4, 10, 1)):
        store.save_decision(item.id, "alice", label="model_error", seconds=sec)
    store.save_decision(i[3].id, "alice", label=None, status="skipped", seconds=7)
    # bob: 2 decided (2 s, 3 s) and one without a time: median of 2, 3 = 2.5
    store.save_decision(i[0].id, "bob", label="gt_error", seconds=2)
    store.save_decision(i[1].id, "bob", label="model_error", seconds=3)
    store.save_decision(i[4].id, "bob", label="model_error")
    # carol: one skip without a time: no median
    store.save_decision(i[2].id, "carol", label=None, status="skipped")
    rows = []

    def count(conn, cursor, statement, parameters, context, executemany):
        rows.append(cursor.rowcount if cursor.rowcount and cursor.rowcount > 0 else 0)

    sa.event.listen(store.engine, "after_cursor_execute", count)
    try:
        team = store.team_progress(s.id)
        again = store.team_progress(s.id)                                # cached: one counter read
    finally:
        sa.event.remove(store.engine, "after_cursor_execute", count)
    # items 0 and 1 have 2 submitted reviews, 2 and 4 one, 3 none (a skip is not a review)
    assert (team.n_items, team.k, team.complete, team.by_reviews) == (5, 2, 2, {0: 1, 1: 2, 2: 2})
    assert [(p.annotator, p.decided, p.skipped, p.median_seconds) for p in team.annotators] == [
        ("alice", 3, 1, 5.5), ("bob", 3, 0, 2.5), ("carol", 0, 1, None)]
    assert again == team and len(rows) <= 6 and max(rows) <= 3          # aggregates only, then one cached read


# ---------------------------------------------------------------- filters
def test_queue_filters_restrict_the_next_item(store):
    s = store.create_session("filters", "qa", _items(10), created_by="olga", k=3, seed=4)
    items = {it.payload["id"]: it for it in store.items(s.id)}

    def walk(who, f):
        seen = []
        while (item := store.next_item(s.id, who, exclude=[x.id for x in seen], filters=f)) is not None:
            seen.append(item)
        return sorted(x.payload["id"] for x in seen)

    assert walk("carl", QueueFilter(system="s1")) == ["q1", "q3", "q5", "q7", "q9"]
    assert walk("carl", QueueFilter(metric_max=0.5)) == ["q0", "q2", "q4", "q6", "q8"]   # exact match 0
    assert walk("carl", QueueFilter(system="s0", metric_min=0.5)) == []
    store.save_decision(items["q2"].id, "alice", label="gt_error")
    store.save_decision(items["q4"].id, "alice", label="model_error")
    store.save_decision(items["q4"].id, "bob", label="acceptable_variant")
    store.save_decision(items["q6"].id, "alice", label="model_error")
    store.save_decision(items["q6"].id, "bob", label="model_error")
    assert walk("carl", QueueFilter(label="gt_error")) == ["q2"]
    assert walk("carl", QueueFilter(label="model_error")) == ["q4", "q6"]
    assert walk("carl", QueueFilter(disagreement=True)) == ["q4"]
    assert walk("alice", QueueFilter(disagreement=True)) == []           # her own decided items are not hers to do
    with pytest.raises(ValueError):
        QueueFilter(metric_min=0.8, metric_max=0.2)
    # who may use which: system / metric where shown; label / disagreement for adjudicators only
    assert rs.allowed_filters(s, "carl") == {"system", "metric"}
    assert rs.allowed_filters(s, "olga") == {"system", "metric", "label", "disagreement"}
    with pytest.raises(PermissionError):
        rs.queue_filter(s, "carl", label="gt_error")
    assert rs.queue_filter(s, "carl", system="s1") == QueueFilter(system="s1")
    assert rs.queue_filter(s, "carl") is None
    blind = store.update_session(s.id, blind=True)
    assert rs.allowed_filters(blind, "carl") == set()                    # blind: no system, no metric
    view = rs.review_view(store, s, "carl", filters=QueueFilter(system="s0", metric_max=0.0))
    assert view.item.payload["system"] == "s0" and view.item.payload["exact_match"] == 0.0
    assert rs.step(store, s, "carl", view.item.id, 1, QueueFilter(system="s0")) != view.item.id


# ---------------------------------------------------------------- blind mode
def test_blind_mode_can_be_turned_on_later_and_off_only_before_blind_decisions(store):
    s = store.create_session("blind", "qa", _items(3), created_by="olga", k=2)
    a, b = store.items(s.id)[:2]
    store.save_decision(a.id, "alice", label="model_error")              # decided in the open
    with pytest.raises(PermissionError):
        rs.set_blind(store, s, "mallory", True)
    s = rs.set_blind(store, s, "olga", True)
    assert s.blind and rs.review_view(store, s, "bob", item_id=a.id).system is None
    s = rs.set_blind(store, s, "olga", False)                            # nothing decided blind yet
    assert not s.blind
    s = rs.set_blind(store, s, "olga", True)
    store.save_decision(b.id, "bob", label="gt_error")                   # a blind decision
    assert store.history(b.id)[-1].blind and not store.history(a.id)[-1].blind
    with pytest.raises(ValueError, match="1 decision"):
        rs.set_blind(store, s, "olga", False)
    assert store.session(s.id).blind


# ---------------------------------------------------------------- guidelines and adjudication
def test_the_guidelines_version_is_stored_with_each_decision(store, tmp_path):
    s = store.create_session("guide", "qa", _items(3), created_by="olga", k=1,
                             settings={"guidelines": "比较答案 / compare the answers"})
    a, b, c = store.items(s.id)
    assert rs.decide(store, s, "alice", a.id, "model_error").guidelines_version == 1
    s = store.update_session(s.id, guidelines="v2: a paraphrase is acceptable")
    assert rs.decide(store, s, "alice", b.id, "acceptable_variant").guidelines_version == 2
    assert [h.guidelines_version for h in store.history(b.id)] == [2]
    no_guide = store.create_session("plain", "qa", _items(1), created_by="olga")
    assert rs.decide(store, no_guide, "alice", store.items(no_guide.id)[0].id, "gt_error").guidelines_version is None
    text = export_jsonl(store, s.id)
    assert '"guidelines_version": 2' in text
    fresh = ReviewStore(tmp_path / "fresh.sqlite")
    import_jsonl(fresh, text.encode("utf-8"))
    assert export_jsonl(fresh, fresh.session_by_name("guide").id) == text


def test_adjudication_items_are_marked_and_the_next_one_follows(store):
    s = store.create_session("adj", "qa", _items(5), created_by="olga", k=2)
    i = store.items(s.id)
    for item, (x, y) in zip(i, [("model_error", "gt_error"), ("model_error", "model_error"),
                                ("model_error", "acceptable_variant"), ("gt_error", "gt_error"),
                                ("model_error", "acceptable_variant")]):
        store.save_decision(item.id, "x", label=x)
        store.save_decision(item.id, "y", label=y)
    # disagreements: 0, 2, 4; a GT error marked: 0, 3
    assert store.adjudication_items(s.id) == [(i[0].id, False), (i[2].id, False), (i[3].id, False),
                                              (i[4].id, False)]
    rs.adjudicate(store, s, "olga", i[2].id, "model_error")
    assert store.adjudication_items(s.id)[1] == (i[2].id, True) and store.queue_size(s.id) == 3
    # worked on GT-error claims first (0, 3), then the most split (2, 4): issue 30
    assert [e.item_id for e in rs.adjudication_entries(store, s)] == [i[0].id, i[3].id, i[2].id, i[4].id]
    assert rs.next_to_adjudicate(store, s, i[2].id) == i[4].id
    assert rs.next_to_adjudicate(store, s, i[4].id) == i[0].id           # wraps round
    for item in (i[0], i[3], i[4]):
        rs.adjudicate(store, s, "olga", item.id, "gt_error")
    assert rs.next_to_adjudicate(store, s, i[4].id) is None


# ---------------------------------------------------------------- migration
def test_a_schema_3_database_is_upgraded_with_history_and_filter_columns(review_url):
    """Schema 4 (revision 0004) on a database made at schema 3: each decision's state starts the
    history, items get their system and automatic score, decisions keep working."""
    engine = sa.create_engine(review_url)
    with engine.begin() as conn:
        upgrade_to(conn, "0003")
        conn.execute(sa.text("INSERT INTO sessions (name, kind, created_by, blind, k, seed, uploads, created_at, "
                             "settings, n_items, changes) VALUES ('old', 'qa', 'olga', :b, 2, 0, '[]', "
                             "'2025-01-01T00:00:00+00:00', '{}', 2, 0)"), {"b": True})
        for n, payload in enumerate(_items(2)):
            conn.execute(sa.text("INSERT INTO items (session_id, position, digest, payload, rank, n_done) "
                                 "VALUES (1, :p, :d, :j, :p, :n)"),
                         {"p": n, "d": f"{n:064x}", "j": json.dumps(payload, ensure_ascii=False), "n": 1 - n})
        conn.execute(sa.text("INSERT INTO decisions (item_id, annotator, label, score, comment, status, version, "
                             "updated_at, session_id) VALUES (1, 'alice', 'gt_error', 2, '旧', 'submitted', 3, "
                             "'2025-01-02T00:00:00+00:00', 1)"))
    assert "decision_history" not in sa.inspect(engine).get_table_names()
    engine.dispose()
    store = ReviewStore(review_url)
    (h,) = store.history(1)
    assert (h.action, h.annotator, h.new_label, h.new_score, h.new_comment, h.new_version, h.blind) == (
        "migrated", "alice", "gt_error", 2, "旧", 3, True)
    assert store.decision(1, "alice").guidelines_version is None
    with store.engine.connect() as c:
        assert c.execute(sa.text("SELECT system, metric FROM items ORDER BY id")).all() == [("s0", 0.0), ("s1", 1.0)]
    assert store.last_change(1, "alice") is None                         # a migrated state is not an undo target
    store.save_decision(1, "alice", label="model_error", expected_version=3)
    assert rs.undo(store, store.session(1), "alice").new_label == "gt_error"
    assert store.decided_blind(1) == 2                                   # the migrated row and the blind save
