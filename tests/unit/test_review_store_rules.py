"""The review store's session rules: one ``k`` rule for create and update, item names read within
their session, and ``order_for`` in the order the queue hands items out."""

import pytest

from evaluators.review.limits import MAX_K, check_k
from evaluators.review.store import ReviewStore, seeded_rank

ITEMS = [{"kind": "qa", "id": f"q{i}", "question": f"question {i}", "ground_truth": "Paris",
          "prediction": "Lyon", "system": "sys-a"} for i in range(6)]


@pytest.fixture
def store(review_url):
    return ReviewStore(review_url)


@pytest.mark.parametrize("k", [0, -1, MAX_K + 1, 1000, True, 2.0, "2", None])
def test_create_and_update_refuse_the_same_k_with_one_message(store, k):
    s = store.create_session("ok", "qa", ITEMS[:1], created_by="x")
    with pytest.raises(ValueError) as created:
        store.create_session("bad", "qa", ITEMS[:1], created_by="x", k=k)
    if k is None:  # update_session's None means "leave k": only create refuses it
        assert store.update_session(s.id, k=None).k == 1
    else:
        with pytest.raises(ValueError) as updated:
            store.update_session(s.id, k=k)
        assert str(created.value) == str(updated.value)
    assert str(created.value).startswith(f"k (reviewers per item) must be an integer from 1 to {MAX_K}")


def test_k_at_the_limit_is_kept(store):
    s = store.create_session("top", "qa", ITEMS[:1], created_by="x", k=MAX_K)
    assert s.k == MAX_K and store.update_session(s.id, k=1).k == 1 and check_k(MAX_K) == MAX_K


def test_item_names_leave_out_another_sessions_items(store):
    a = store.create_session("a", "qa", ITEMS[:2], created_by="x")
    b = store.create_session("b", "qa", ITEMS[2:4], created_by="x")
    a_ids = [i.id for i in store.items(a.id)]
    b_ids = [i.id for i in store.items(b.id)]
    # asked under session a for a's items and b's: only a's are named
    assert store.item_names(a.id, a_ids + b_ids) == {a_ids[0]: "q0", a_ids[1]: "q1"}


def _queue(store, sid, annotator):
    """What next_item hands out one after the other (each one passed over once seen), no claims."""
    seen: list[int] = []
    while (item := store.next_item(sid, annotator, exclude=seen)) is not None:
        seen.append(item.id)
    return seen


def test_order_for_follows_a_creators_position_order(store):
    s = store.create_session("inf", "qa", ITEMS, created_by="x", seed=7, settings={"order": "informative"})
    ids = [i.id for i in store.items(s.id)]  # creation (position) order
    # the seeded shuffle of seed 7 is not the position order, so the old seeded-rank sort differed
    assert sorted(range(6), key=lambda p: seeded_rank(7, p)) != list(range(6))
    assert [i.id for i in store.order_for(s.id, "alice")] == ids == _queue(store, s.id, "alice")


def test_order_for_puts_overlap_first_as_the_queue_does(store):
    s = store.create_session("ov", "qa", ITEMS, created_by="x", k=2, seed=7)
    by_rank = [i.id for i in store.order_for(s.id, "alice")]
    last = by_rank[-1]
    store.save_decision(last, "bob", label="model_error")
    # bob's submitted item has 1 of k = 2 decisions: the queue hands it to alice before the untouched ones
    expected = [last, *by_rank[:-1]]
    assert [i.id for i in store.order_for(s.id, "alice")] == expected == _queue(store, s.id, "alice")
    # bob's own item first, then his queue (the rest by rank)
    assert [i.id for i in store.order_for(s.id, "bob")] == [last, *by_rank[:-1]]
