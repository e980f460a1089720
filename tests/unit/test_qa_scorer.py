"""The per-file Scorer's fast field lookups give what the generic field functions give, and its memo changes nothing."""

import math

import pytest

from evaluators.qa import evaluate as qa
from evaluators.qa.evaluate import QAConfig, Scorer
from evaluators.qa.fields import ID_FIELDS, QUESTION_FIELDS, resolve, text_field

RECORDS = [
    {"id": " q1 ", "question": "Who?", "answer": "Paris", "final_answer": "Paris"},
    {"question_id": 7, "claim": "长城很长", "original_row": {"label": "T", "id": "inner"}, "pred": "T"},
    {"original_row.id": "literal", "original_row.答案": "两万", "prediction": ["", "两万公里"]},
    {"id": True, "qid": "", "uid": "u1", "answers": [{"text": "a"}, {"text": "b"}], "final_answer": " "},
    {"answer": "  ", "answers": "[\"x\", \"y\"]", "gold_answer": math.nan, "predicted_answer": 3.0},
    {"answer": float("nan"), "label": 1, "prediction": None, "pred": 0},
    {"original_row": "not a mapping", "answer": ["", None, 2], "final_answer": {"text": "2"}},
    {"original_row": {"人工评测结果": "F", "question": "inner question"}, "input": "outer input", "final_answer": "F"},
    {"答案": ["北京", "Beijing"], "问题": "首都？", "row_id": 0, "final_answer": "<think>x</think><answer>北京</answer>"},
    {},
]


@pytest.mark.parametrize("record", RECORDS)
def test_fast_lookups_equal_the_generic_ones(record):
    config = QAConfig()
    scorer = Scorer("qa", config, None)
    gold = resolve(record, config.gt_fields)
    assert scorer._gold(record) == (None if gold is None else (gold.field, gold.raw, gold.texts)) or \
        (gold is not None and math.isnan(gold.raw))  # NaN never equals itself; NaN is skipped anyway
    assert scorer._text(record, scorer._ids, True) == text_field(record, ID_FIELDS, allow_numbers=True)
    assert scorer._text(record, scorer._questions, False) == text_field(record, QUESTION_FIELDS)
    assert scorer._prediction(record) == qa._prediction(record, config.pred_fields)
    # the names narrowed to the record's shape find the same values
    gt, pred, ids, questions = scorer._plan(record)
    assert repr(scorer._gold(record, gt)) == repr(scorer._gold(record))
    assert scorer._prediction(record, pred) == scorer._prediction(record)
    assert scorer._text(record, ids, True) == scorer._text(record, scorer._ids, True)
    assert scorer._text(record, questions, False) == scorer._text(record, scorer._questions, False)


def test_remembered_pairs_score_the_same(monkeypatch):
    rows = [{"id": f"q{i}", "answer": ["The Eiffel Tower", "长城"][i % 2], "final_answer": ["eiffel tower", "长城！"][i % 3 % 2]}
            for i in range(12)]
    fresh = [Scorer("qa", QAConfig(), None).record(r, i, i + 1) for i, r in enumerate(rows)]
    monkeypatch.setattr(qa, "MEMO_PAIRS", 1)  # the memo is cleared before every new pair
    scorer = Scorer("qa", QAConfig(), None)
    again = [scorer.record(r, i, i + 1) for i, r in enumerate(rows)]
    assert again == fresh
    # "eiffel tower" vs "The Eiffel Tower": articles removed -> EM 1; "长城！" vs "长城": CMRC removes the full-width "！" -> EM 1
    assert [(r.lang, r.exact_match) for r in fresh[:2]] == [("en", 1.0), ("zh", 1.0)]


def test_store_sums_are_the_running_sums_of_a_plain_loop():
    import random

    from evaluators.qa.store import RecordStore

    rng = random.Random(3)
    store = RecordStore(lambda *a: None, lambda off, n: b"")
    rows = []
    for i in range(5000):
        scored = rng.random() > 0.1
        em = float(rng.random() > 0.5) if scored else None
        f1 = rng.random() / 3 if scored else None  # thirds: sums that depend on the order of addition
        lang, group = rng.choice(["en", "zh"]), rng.choice([None, "A", "B", *(f"g{k}" for k in range(40))])
        store.append_values(b"{}", i, i + 1, em, f1, "scored" if scored else "missing_gt", lang, None, None, group)
        rows.append((em, f1, lang, group))
    for by, key in ((None, lambda r: None), ("lang", lambda r: r[2]), ("group", lambda r: r[3])):
        expected: dict = {}
        for r in rows:
            if r[0] is None:
                continue
            acc = expected.setdefault(key(r), [0, 0.0, 0.0])
            acc[0] += 1
            acc[1] += r[0]
            acc[2] += r[1]
        assert store.sums(by) == {k: tuple(v) for k, v in expected.items()}  # exact, not approximately
