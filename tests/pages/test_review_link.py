"""The one review store and the one way a page creates a review session (components/review_link.py, issue 27):
every page, the corrections control and the Review page share one store per database URL."""

from __future__ import annotations

import pytest

from components.review_link import create_review_session, review_store
from evaluators.review import ReviewStore


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    return tmp_path


def test_one_store_per_database_url(data_dir, tmp_path_factory):
    default = review_store()
    assert default is review_store() is review_store(f"sqlite:///{data_dir / 'review.sqlite'}")
    assert default.url == f"sqlite:///{data_dir / 'review.sqlite'}"
    other = review_store(f"sqlite:///{tmp_path_factory.mktemp('other') / 'review.sqlite'}")
    assert other is not default and other is review_store(other.url)


def test_a_session_made_from_a_page_keeps_its_items_and_files(data_dir):
    items = [{"kind": "qa", "id": "zh-1", "question": "谁写了《红楼梦》?", "gt": "曹雪芹", "prediction": "曹雪芹"},
             {"kind": "qa", "id": "en-1", "question": "Who wrote Hamlet?", "gt": "Shakespeare", "prediction": "Marlowe"}]
    made = create_review_session("run · qa", "qa", items, created_by="qa page",
                                 files=[("答案.jsonl", b'{"id": "zh-1"}\n'), ("b.jsonl", b"{}\n")], blind=True)
    store = ReviewStore(data_dir / "review.sqlite")  # read back through another store of the same database
    (session,) = store.sessions()
    assert (session.id, session.name, session.kind, session.k, session.blind) == (made.id, "run · qa", "qa", 2, True)
    assert [i.payload["id"] for i in store.items(session.id)] == ["zh-1", "en-1"]
    assert [store.get_upload(d) for d in session.uploads] == [("答案.jsonl", b'{"id": "zh-1"}\n'), ("b.jsonl", b"{}\n")]
    with pytest.raises(ValueError):  # the name is taken
        create_review_session("run · qa", "qa", items, created_by="qa page")
