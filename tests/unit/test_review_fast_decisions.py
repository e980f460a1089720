"""Issue 30: decisions faster than a configurable threshold, counted per annotator on Team progress, on SQLite
and PostgreSQL; the threshold is the session's ``fast_seconds`` setting, else ``EVALBOARD_REVIEW_FAST_SECONDS``,
else 2 s; shown on the Review page (AppTest) and set from the page and ``review settings --fast-seconds``."""

from __future__ import annotations

import contextlib
import io

import pytest

from evaluators.cli import main
from evaluators.review import ReviewStore
from evaluators.review import service as rs

ITEMS = [{"kind": "qa", "id": f"q{i}", "question": f"问题 {i} / question {i}", "ground_truth": "巴黎 Paris",
          "prediction": "里昂 Lyon", "system": "sys-a", "exact_match": 0.0, "token_f1": 0.25} for i in range(6)]
#: (annotator, item, seconds, label; None: a skip) — times by hand.
SAVES = [("anna", 0, 0.5, "model_error"), ("anna", 1, 1.9, "correct"), ("anna", 2, 2.0, "correct"),
         ("anna", 3, 7.0, "gt_error"), ("anna", 4, 0.3, None),
         ("bob", 0, 1.0, "model_error"), ("bob", 1, None, "correct")]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv(rs.FAST_ENV, raising=False)


def _session(store: ReviewStore, **settings):
    s = store.create_session("fast", "qa", ITEMS, created_by="olga", k=2, settings=settings or None)
    items = store.items(s.id)
    for who, n, seconds, label in SAVES:
        store.save_decision(items[n].id, who, label=label, status="submitted" if label else "skipped",
                            seconds=seconds)
    return store.session(s.id)


def _fast(store, s) -> dict:
    return {r["annotator"]: r["fast decisions"] for r in rs.team_rows(store, s)}


def test_fast_decisions_by_hand_and_the_threshold_chain(review_url, monkeypatch):
    store = ReviewStore(review_url)
    s = _session(store)
    # 2 s (default): anna 0.5, 1.9 < 2 (2.0 is not below 2, 7.0 no, the 0.3 s skip is not a judgment) -> 2 of 4
    # timed; bob 1.0 -> 1 of 1 timed (his second decision recorded no time)
    assert rs.fast_threshold(s) == 2.0
    assert store.fast_decisions(s.id, 2.0) == {"anna": (2, 4), "bob": (1, 1)}
    assert _fast(store, s) == {"anna": 2, "bob": 1}
    row = {r["annotator"]: r for r in rs.team_rows(store, s)}["anna"]
    assert (row["decided"], row["skipped"]) == (4, 1)
    monkeypatch.setenv(rs.FAST_ENV, "10")    # the environment: 0.5, 1.9, 2.0, 7.0 -> 4; bob 1
    assert _fast(store, s) == {"anna": 4, "bob": 1}
    s = rs.update_settings(store, s, "olga", fast_seconds=1.0)   # the session's own beats the environment
    assert s.settings["fast_seconds"] == 1.0 and rs.fast_threshold(s) == 1.0
    assert _fast(store, s) == {"anna": 1, "bob": 0}              # 0.5 only; bob's 1.0 is not below 1.0
    assert store.audit_rows(s.id)[-1]["detail"] == "fast_seconds"
    for bad in (0, -1, 3601, float("nan"), True):
        with pytest.raises(ValueError, match="fast-decision threshold"):
            rs.update_settings(store, s, "olga", fast_seconds=bad)
    with pytest.raises(PermissionError):
        rs.update_settings(store, s, "anna", fast_seconds=5.0)


def test_a_bad_environment_value_falls_back_to_two_seconds(tmp_path, monkeypatch):
    store = ReviewStore(tmp_path / "r.sqlite")
    s = _session(store)
    for bad in ("fast", "0", "-3", "inf", ""):
        monkeypatch.setenv(rs.FAST_ENV, bad)
        assert rs.fast_threshold(s) == 2.0, bad
    with pytest.raises(ValueError, match="fast-decision threshold"):   # a session's own is checked when stored
        _session(ReviewStore(tmp_path / "b.sqlite"), fast_seconds="x")


def test_cli_settings_fast_seconds(review_url):
    store = ReviewStore(review_url)
    s = _session(store)
    base = ["review", "settings", "--db", review_url, "--session", "fast"]
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        assert main([*base, "--as", "anna", "--fast-seconds", "5"]) == 2     # not the owner
        assert main([*base, "--as", "olga", "--fast-seconds", "4.5"]) == 0
    assert "may not change" in err.getvalue() and "fast decisions: under 4.5 s" in out.getvalue()
    assert rs.fast_threshold(store.session(s.id)) == 4.5
    assert _fast(store, store.session(s.id)) == {"anna": 3, "bob": 1}         # 0.5, 1.9, 2.0 < 4.5 (7.0 not)


def test_team_progress_on_the_page_shows_fast_decisions(tmp_path, monkeypatch):
    from tests.pages.test_review_page import _open

    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    store = ReviewStore(tmp_path / "review.sqlite")
    s = _session(store)
    at = _open(s.id, me="olga", view="agreement")
    team = next(d.value for d in at.dataframe if "fast decisions" in d.value.columns).set_index("annotator")
    assert team["fast decisions"].to_dict() == {"anna": 2, "bob": 1}
    assert any("under 2 s" in c.value for c in at.caption)
    at.segmented_control(key="review_view").set_value("review").run()
    at.number_input(key=f"review_set_fast_{s.id}").set_value(10.0)
    at.button(key=f"review_set_save_{s.id}").click().run()
    assert not at.exception, at.exception
    assert store.session(s.id).settings["fast_seconds"] == 10.0
    at.segmented_control(key="review_view").set_value("agreement").run()
    team = next(d.value for d in at.dataframe if "fast decisions" in d.value.columns).set_index("annotator")
    assert team["fast decisions"].to_dict() == {"anna": 4, "bob": 1}
