"""AppTest of pages/6_Review.py: the open session stays put across decisions (issue 30).

The bug (2026-11-27): with two sessions, a browser that opened the older one by its link
(``/Review?session=<older>``) sometimes showed the newest session after its first decision.  The picker was
the widget holding the open session, folded in the session block; a browser that mounted it afresh without
the value the server had set showed the picker's default, index 0 (the newest session), and sent it with the
next click.  AppTest keeps widget values on the server side, so the test plays the browser's part: it sets the
picker to the option at its own default index, which is what such a browser shows and sends."""

from __future__ import annotations

import pytest

from evaluators.review import ReviewStore
from tests.conftest import ROOT
from tests.pages.helpers import page_app

PAGE = str(ROOT / "pages" / "6_Review.py")
PICKER = "Session · 审阅任务"


@pytest.fixture
def two_sessions(tmp_path, monkeypatch):
    """An older and a newer session of three QA items each (k = 2); the store and both ids."""
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    store = ReviewStore(tmp_path / "review.sqlite")
    made = [store.create_session(name, "qa", [{"kind": "qa", "id": f"{name}-{n}", "question": f"{name} {n}?",
                                               "ground_truth": "a", "prediction": "b"} for n in range(3)],
                                 created_by="olga", k=2).id
            for name in ("older", "newer")]
    return store, *made


def _picker(at):
    (picker,) = [s for s in at.selectbox if s.label == PICKER]
    return picker


def _open(session_id: int, who: str = "alice"):
    """The page opened from a link to ``session_id`` for ``who``, the name confirmed."""
    at = page_app(PAGE)
    at.query_params.update({"session": str(session_id), "annotator": who})
    at.run()
    at.button(key="review_confirm_link").click().run()
    assert not at.exception, at.exception
    return at


def _decide(at, label: str = "model_error"):
    button = next(b for b in at.button if str(b.key).startswith(f"review_{label}_"))
    button.click().run()
    assert not at.exception, at.exception


def _shown_session(at) -> str:
    return at.query_params["session"]


def test_a_decision_keeps_the_older_session_a_link_opened(two_sessions):
    store, older, newer = two_sessions
    at = _open(older)
    assert _shown_session(at) == str(older) and _picker(at).value == older
    first = int(at.query_params["item"])
    # the browser's picker, mounted afresh, shows its default option and sends it with the click (the old page
    # drew the picker with the default index 0: the newest session, which the click then opened)
    picker = _picker(at)
    picker.select_index(picker.proto.default)
    _decide(at)
    assert _shown_session(at) == str(older) and _picker(at).value == older
    assert at.expander[0].label.startswith("Session · 审阅任务: older")
    item = int(at.query_params["item"])
    assert store.item(item).session_id == older and item != first          # the older session's next item
    (saved,) = store.decisions(older)
    assert (saved.item_id, saved.annotator, saved.label) == (first, "alice", "model_error")
    assert store.decisions(newer) == []
    _decide(at, "gt_error")                                                  # and again, a plain second click
    assert _shown_session(at) == str(older) and len(store.decisions(older)) == 2


def test_a_picked_session_stays_open_after_decisions(two_sessions):
    store, older, newer = two_sessions
    at = _open(older)
    _picker(at).set_value(newer).run()                                       # the picker opens the other one
    assert not at.exception, at.exception
    assert _shown_session(at) == str(newer) and _picker(at).value == newer
    assert store.item(int(at.query_params["item"])).session_id == newer
    picker = _picker(at)
    picker.select_index(picker.proto.default)                                 # a fresh mount, as above
    _decide(at)
    assert _shown_session(at) == str(newer) and _picker(at).value == newer
    assert [d.annotator for d in store.decisions(newer)] == ["alice"] and store.decisions(older) == []
    _picker(at).set_value(older).run()                                       # and back
    assert _shown_session(at) == str(older)
    assert store.item(int(at.query_params["item"])).session_id == older
