"""components.cache.cached: shared objects, a capacity per namespace, safe under concurrent sessions."""

from __future__ import annotations

import random
import threading

import pytest
from streamlit.testing.v1 import AppTest

from components.cache import cached, results

pytestmark = pytest.mark.usefixtures("empty_result_store")


class Counter:
    """A compute function that counts its calls and returns a new list each time."""

    def __init__(self, value="v"):
        self.calls = 0
        self.value = value

    def __call__(self):
        self.calls += 1
        return [self.value, self.calls]


def _run_threads(targets) -> list[BaseException]:
    errors: list[BaseException] = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    return errors


def test_the_computed_object_itself_is_returned_not_a_copy():
    compute = Counter()
    first = cached(("ns", "k"), compute)
    again = cached(("ns", "k"), compute)
    assert again is first and compute.calls == 1
    first.append("changed by the caller")  # shared, not pickled: the next caller sees the same object
    assert cached(("ns", "k"), compute)[-1] == "changed by the caller"


def test_each_namespace_keeps_its_own_entries():
    other = Counter("other page")
    kept = cached(("other", "digest"), other)
    busy = Counter()
    for i in range(20):  # twenty results of one page, more than any capacity
        cached(("busy", i), busy, max_entries=3)
    assert cached(("other", "digest"), other) is kept and other.calls == 1
    # "busy" keeps its 3 most recent results (17, 18, 19): 16 is computed again, 19 is not
    calls = busy.calls
    cached(("busy", 19), busy, max_entries=3)
    assert busy.calls == calls
    cached(("busy", 16), busy, max_entries=3)
    assert busy.calls == calls + 1


def test_least_recently_used_entry_leaves_first():
    compute = Counter()
    for k in ("a", "b", "c"):
        cached(("lru", k), compute, max_entries=3)
    cached(("lru", "a"), compute, max_entries=3)  # a used again: b is now the oldest
    cached(("lru", "d"), compute, max_entries=3)
    calls = compute.calls
    for k in ("a", "c", "d"):
        cached(("lru", k), compute, max_entries=3)
    assert compute.calls == calls
    cached(("lru", "b"), compute, max_entries=3)
    assert compute.calls == calls + 1


def test_explicit_namespace_and_keys_that_are_not_tuples():
    compute = Counter()
    cached("plain key", compute, namespace="x")
    cached("plain key", compute, namespace="y")  # same key, another namespace: another entry
    assert compute.calls == 2
    for i in range(5):
        cached(i, Counter(), namespace="x", max_entries=1)
    cached("plain key", compute, namespace="y")
    assert compute.calls == 2  # filling namespace x left y alone


def test_two_sessions_asking_for_the_same_key_compute_it_once():
    started, release = threading.Event(), threading.Event()
    calls = []

    def compute():
        calls.append(threading.current_thread().name)
        started.set()
        assert release.wait(10)
        return object()

    got = []

    def first():
        got.append(cached(("same", "k"), compute))

    def second():
        assert started.wait(10)  # the first session is computing the key
        threading.Timer(0.2, release.set).start()
        got.append(cached(("same", "k"), compute))

    assert _run_threads([first, second]) == []
    assert len(calls) == 1
    assert len(got) == 2 and got[0] is got[1]
    assert results().pending() == 0


def test_a_slow_computation_does_not_block_other_keys():
    slow_started, other_done = threading.Event(), threading.Event()
    seen = {}

    def slow():
        slow_started.set()
        # Waits for another key to be computed meanwhile: a lock held over compute would stall it.
        seen["other key computed meanwhile"] = other_done.wait(10)
        return "slow"

    def slow_session():
        assert cached(("slow-page", "b"), slow) == "slow"

    def fast_session():
        assert slow_started.wait(10)  # the slow key is being computed now
        assert cached(("slow-page", "a"), lambda: "fast") == "fast"
        other_done.set()

    assert _run_threads([slow_session, fast_session]) == []
    assert seen == {"other key computed meanwhile": True}


def test_a_failed_computation_keeps_nothing_and_the_next_call_computes():
    def boom():
        raise ValueError("bad file")

    with pytest.raises(ValueError, match="bad file"):
        cached(("fails", "k"), boom)
    assert results().pending() == 0
    compute = Counter()
    assert cached(("fails", "k"), compute) == ["v", 1]


def test_a_waiting_session_computes_itself_when_the_first_one_fails():
    started, release = threading.Event(), threading.Event()

    def failing():
        started.set()
        assert release.wait(10)
        raise RuntimeError("first session stopped")

    got = []

    def first():
        with pytest.raises(RuntimeError):
            cached(("retry", "k"), failing)

    def second():
        assert started.wait(10)
        threading.Timer(0.2, release.set).start()
        got.append(cached(("retry", "k"), lambda: "second"))

    assert _run_threads([first, second]) == []
    assert got == ["second"]
    assert cached(("retry", "k"), lambda: "third") == "second"


def test_many_sessions_at_once_keep_every_namespace_within_its_capacity():
    def session(seed: int):
        def run():
            rng = random.Random(seed)
            for _ in range(300):
                ns = rng.choice(["p1", "p2"])
                k = rng.randrange(12)
                value = cached((ns, k), lambda ns=ns, k=k: (ns, k), max_entries=4)
                assert value == (ns, k)
        return run

    assert _run_threads([session(s) for s in range(8)]) == []
    sizes = results().sizes()
    assert set(sizes) == {"p1", "p2"}
    assert all(0 < n <= 4 for n in sizes.values())
    assert results().pending() == 0
    # every kept value is the one of its key: asking again computes nothing
    recomputed = Counter()
    kept = [(ns, k) for ns in ("p1", "p2") for k in range(12)
            if results().get(ns, (ns, k))[0]]
    assert len(kept) == sum(sizes.values())
    for ns, k in kept:
        assert cached((ns, k), recomputed, max_entries=4) == (ns, k)
    assert recomputed.calls == 0


def _page():
    import streamlit as st

    from components.cache import cached

    def compute():
        bar = st.progress(0.0, text="computing")
        st.markdown("drawn while computing")
        bar.progress(1.0, text="done")
        st.session_state["computed"] = st.session_state.get("computed", 0) + 1
        return ["result"]

    value = cached(("uploads-cache-page", "k"), compute)
    st.markdown(f"value: {value[0]}")
    st.button("rerun")


def test_elements_drawn_by_compute_are_not_replayed_on_a_rerun():
    at = AppTest.from_function(_page)
    at.run()
    assert "drawn while computing" in [m.value for m in at.markdown]
    at.button[0].click().run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["value: result"]
    assert not at.get("progress")
    assert at.session_state["computed"] == 1


def test_an_unused_result_expires_after_the_ttl(monkeypatch):
    import time

    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setenv("EVALBOARD_CACHE_TTL", "60")
    compute = Counter()
    first = cached(("ttl", "k"), compute)
    now[0] += 59  # used within the minute: kept
    assert cached(("ttl", "k"), compute) is first and compute.calls == 1
    now[0] += 61  # unused for more than 60 s: dropped, computed again
    assert cached(("ttl", "k"), compute) is not first and compute.calls == 2
    assert results().sizes()["ttl"] == 1  # the new entry replaced the expired one
