"""Reviews carried forward by (question, GT, prediction) and the review debt (evaluators.review.carry)."""

from __future__ import annotations

from evaluators.review import ReviewStore
from evaluators.review.carry import carried_decisions, review_debt, triple_digest


def run(changed: set[int]) -> list[dict]:
    """20 QA items (half Chinese); the predictions of ``changed`` positions differ from the first run."""
    out = []
    for i in range(20):
        question, gt = (f"问题{i}?", f"答案{i}") if i % 2 else (f"question {i}?", f"answer {i}")
        pred = gt if i % 3 else f"wrong {i}"
        if i in changed:
            pred = f"new answer {i}"
        out.append({"kind": "qa", "id": f"q{i}", "question": question, "ground_truth": gt, "prediction": pred,
                    "system": "v2" if changed else "v1", "exact_match": 1.0 if pred == gt else 0.0})
    return out


def test_second_session_asks_only_for_changed_records(tmp_path):
    store = ReviewStore(tmp_path / "r.sqlite")
    first = store.create_session("v1", "qa", run(set()), created_by="lead")
    for item in store.items(first.id):
        label = "acceptable_variant" if item.payload["exact_match"] else "model_error"
        store.save_decision(item.id, "ann", label=label)
    # a new run: 30% of the predictions changed (6 of 20), the system name and scores may differ
    changed = {1, 4, 7, 10, 13, 16}
    second = run(changed)
    assert review_debt(store, second) == sorted(changed)
    carried = carried_decisions(store, second)
    assert set(carried) == set(range(20)) - changed
    assert all(c.carried and c.session == "v1" and c.who == "ann" and c.source == "agreed" for c in carried.values())
    assert carried[3].label == "model_error" and carried[2].label == "acceptable_variant"  # 3 % 3 == 0: "wrong 3"
    # overriding: the second session decides item 2 again; its own label is newer and wins for a third run
    s2 = store.create_session("v2", "qa", second, created_by="lead")
    item2 = next(i for i in store.items(s2.id) if i.payload["id"] == "q2")
    store.save_decision(item2.id, "bob", label="model_error", comment="on second thought")
    assert carried_decisions(store, second)[2].label == "model_error"
    assert carried_decisions(store, second, exclude_session=s2.id)[2].label == "acceptable_variant"
    # the same texts with other blanks / Unicode composition are the same triple
    a = {"question": " Café? ", "ground_truth": "x", "prediction": "y"}
    b = {"question": "Cafe\u0301?", "ground_truth": "x ", "prediction": "y"}
    assert triple_digest(a) == triple_digest(b) != triple_digest({**b, "prediction": "z"})
