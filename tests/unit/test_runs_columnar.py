"""``qa --log`` from columns (:func:`evaluators.runs.columns.encode_arrays`,
:func:`evaluators.tasks.builtin.qa_run_columns`) stores the same bytes and digests as the per-record path
(:func:`evaluators.tasks.builtin.qa_run_result` split by system), on Chinese and English records, and the run
re-scores and compares as before."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pyarrow as pa
import pytest
import sqlalchemy as sa

from evaluators.cli import main, runlog
from evaluators.qa.capture import RowCapture
from evaluators.qa.evaluate import QAConfig
from evaluators.qa.run import QAInput, run_qa
from evaluators.run_result import ItemTable, RunResult
from evaluators.runs import RunStore
from evaluators.runs.columns import coded, encode_arrays, table_columns
from evaluators.runs.rescore import on_current_gt
from evaluators.runs.store import ground_truth_digest


def test_encode_arrays_equals_the_item_table_of_the_same_values():
    n = 400
    ids = [f"q-{i}" if i % 7 else f'问题"{i}\\\n' for i in range(n)]  # quotes, backslashes, newlines: escaped
    lang = [None if i % 11 == 0 else ("zh" if i % 2 else "en") for i in range(n)]
    em = np.array([float(i % 2) for i in range(n)])
    em[::13] = np.nan  # undefined: None in the table
    f1 = np.round((np.arange(n) % 9) / 9, 3)
    f1[::13] = np.nan
    f1[5], f1[6] = 1 / 3, -0.0  # a value with 16 digits; -0.0, which repr writes apart from 0.0
    question = [None if i % 17 == 0 else f"what {i % 50}\t?" if i % 3 else f"谁 {i % 40}" for i in range(n)]
    gt = [() if i % 19 == 0 else (f"a{i % 30}", 'b"x') if i % 5 == 0 else (f"答{i % 30}",) for i in range(n)]
    pred = [f"p{i % 60}" for i in range(n)]
    table = ItemTable(ids, ["sys"] * n, {"exact_match": [None if x != x else x for x in em],
                                         "token_f1": [None if x != x else x for x in f1]},
                      {"lang": lang}, {"question": question, "ground_truth": gt, "prediction": pred})
    got = encode_arrays(pa.array(ids), "sys", {"lang": pa.array(lang, pa.string())},
                        {"exact_match": em, "token_f1": f1},
                        {"question": pa.array(question, pa.string()),
                         "ground_truth": pa.array(gt, pa.list_(pa.string())), "prediction": pa.array(pred)},
                        unit="record", ground_truth="ground_truth")
    assert got is not None
    encoded, gt_digest = got
    assert encoded.columns == tuple(table_columns(table))
    assert encoded.digest == table.digest()
    result = RunResult("qa", table, unit="record")
    assert list(encoded.summary) == [row.to_dict() for row in result.summary()]
    assert gt_digest == ground_truth_digest(result)
    # the same columns coded (each distinct value escaped and counted once), part of a larger table: the same
    rows = np.arange(n)
    more = {"question": pa.array(question + ["extra"], pa.string()),
            "ground_truth": pa.array(gt + [("x",)], pa.list_(pa.string())), "prediction": pa.array(pred + ["y"])}
    again = encode_arrays(pa.array(ids), "sys", {"lang": coded(pa.array(lang + ["fr"], pa.string())).take(rows)},
                          {"exact_match": em, "token_f1": f1},
                          {k: coded(v, as_json=True).take(rows) for k, v in more.items()}, unit="record",
                          ground_truth="ground_truth")
    assert again == got
    # an id twice: the per-record path (which numbers it #2) is needed
    assert encode_arrays(pa.array(["a", "a"]), "sys", {}, {"m": np.array([1.0, 0.0])}, {}) is None


def _records(rows):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _qa_rows(system=True):
    rows = []
    for i in range(40):
        zh = i % 2
        row = {"id": f"q{i}", "question": f"问题{i}" if zh else f'question "{i}"\\?',
               "answer": f"答案{i % 7}" if zh else [f"answer {i % 7}", "alt\tanswer"],
               "prediction": (f"答案{i % 7}" if zh else f"answer {i % 5}") if i % 9 else ""}
        if i == 3:
            row.pop("answer")  # no GT: missing_gt, no score
        if system:
            row["system"] = "sys-a" if i % 3 else "sys-b"
        if i == 10 and system:
            row.pop("system")  # a record of no system: the run "(no system)"
        rows.append(row)
    return rows


CASES = {
    "two systems": (_records(_qa_rows()), True),
    "one system": (_records(_qa_rows(system=False)), True),
    "fact-check": (_records([{"id": f"c{i}", "claim": f"声明{i}" if i % 2 else f"claim {i}",
                              "label": "SUPPORTS" if i % 3 else "REFUTES",
                              "prediction": "SUPPORTS" if i % 2 else "REFUTES"} for i in range(20)]), True),
    # a raw prediction that is a number (read as its text)
    "number prediction": (_records([{"id": f"n{i}", "question": f"how many {i}", "answer": str(i),
                                     "prediction": i if i % 2 else str(i)} for i in range(12)]), True),
    # a question with a lone surrogate (read as the reader reads it): either path, the same bytes
    "lone surrogate": ("".join('{"id": "s%d", "question": "bad \\ud83d %d", "answer": "a", "prediction": "a"}\n'
                               % (i, i) for i in range(6)), None),
    # answers extracted from the raw output (tags, surrounding spaces) beside raw predictions that are the answer: the
    # raw column kept apart from the prediction column where they differ, shared where they do not (a block each)
    "extracted answers": (_records([{"id": f"x{i}", "question": f"which {i}", "answer": f"答{i % 4}",
                                     "prediction": (f"<think>hmm {i}</think><answer>答{i % 3}</answer>" if i % 3 == 0
                                                    else f" 答{i % 3} " if i % 3 == 1 else f"答{i % 3}")
                                     if i < 1500 else f"答{i % 3}"} for i in range(2500)]), True),
    # an id twice within a system: numbered #2 by the per-record path
    "repeated id": (_records([{"id": "same" if i < 2 else f"r{i}", "question": f"问{i}", "answer": "是",
                               "prediction": "是" if i % 2 else "否"} for i in range(8)]), False),
}


def _logged(tmp_path, path, label, capture, predictions=None):
    db = f"sqlite:///{tmp_path / (label + '.sqlite')}"
    config = QAConfig(ci_resamples=0)
    preds = dict(predictions=predictions.read_bytes(), predictions_file=str(predictions)) if predictions else {}
    run = run_qa(QAInput(path, **preds), config, rows=capture.sink() if capture is not None else None)
    args = argparse.Namespace(run_name="r", who="t", tag=[], db=db, gt_patch=None, dataset=None,
                              predictions=str(predictions) if predictions else None)
    assert runlog.log_qa(args, path, run.inputs[0].report, config, capture=capture) is None
    engine = sa.create_engine(db)
    with engine.connect() as c:
        runs = [dict(r._mapping) for r in c.execute(sa.text("select * from runs order by name"))]
        blobs = dict(c.execute(sa.text("select digest, data from run_blobs")).all())
        datasets = c.execute(sa.text("select digest, name from run_datasets")).all()
    engine.dispose()
    for r in runs:
        r.pop("created_at")
    return runs, blobs, datasets, db


#: Inputs read otherwise: GB18030 (read again after the UTF-8 attempt fails), CSV (records kept whole).
_CSV = "id,question,answer,prediction,system\n" + "".join(
    f'c{i},"问题, {i}",答案{i % 3},答案{i % 2},{"s1" if i % 2 else "s2"}\n' for i in range(30))
FILES = {"gb18030": ("records.jsonl", _records(_qa_rows()).encode("gb18030"), True),
         "csv": ("records.csv", _CSV.encode("utf-8"), True)}


@pytest.mark.parametrize("case", list(CASES) + list(FILES))
def test_qa_log_from_columns_stores_what_the_record_path_stores(tmp_path, case, monkeypatch):
    if case in FILES:
        name, data, columnar = FILES[case]
        path = tmp_path / name
        path.write_bytes(data)
    else:
        text, columnar = CASES[case]
        path = tmp_path / "records.jsonl"
        path.write_text(text, encoding="utf-8")
    used = []
    from evaluators.tasks import builtin

    real = builtin.qa_run_columns
    monkeypatch.setattr(builtin, "qa_run_columns", lambda *a: used.append(real(*a)) or used[-1])
    old = _logged(tmp_path, path, "old", None)
    capture = RowCapture()
    new = _logged(tmp_path, path, "new", capture)
    if columnar is not None:
        assert (capture.complete and used[-1] is not None) == columnar  # which path the new one took
    assert old[0] and new[0] == old[0]  # every column of every run: digests, summary, manifest, counts
    assert new[1] == old[1]  # the blobs, byte for byte
    assert new[2] == old[2]  # the dataset's identity (GT by content)
    store = RunStore(new[3])
    try:
        for record in store.runs():  # the values read back and checked against the digest; re-scored as before
            assert store.load(record.name).items.digest() == record.items_digest
            rescored, version = on_current_gt(store, record.name)
            assert version == 0 and rescored.items.values == store.load(record.name).items.values
    finally:
        store.dispose()


def test_predictions_in_a_file_of_their_own(tmp_path):
    gt, pred = tmp_path / "gt.jsonl", tmp_path / "pred.jsonl"
    rows = _qa_rows(system=False)
    gt.write_text(_records([{k: v for k, v in r.items() if k != "prediction"} for r in rows]), encoding="utf-8")
    pred.write_text(_records([{"id": r["id"], "prediction": r["prediction"]} for r in rows[::-1]]), encoding="utf-8")
    old = _logged(tmp_path, gt, "old", None, pred)
    new = _logged(tmp_path, gt, "new", RowCapture(), pred)
    assert old[0] and new[:3] == old[:3]


def test_the_cli_logs_from_columns_and_compares_as_before(tmp_path, capsys):
    path = tmp_path / "two.jsonl"
    path.write_text(_records(_qa_rows()), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert main(["qa", str(path), "--log", "--run-name", "a", "--db", db, "--ci-resamples", "0"]) == 0
    assert main(["qa", str(path), "--log", "--run-name", "b", "--db", db, "--ci-resamples", "0",
                 "--output-file", str(tmp_path / "out.json")]) == 0  # with an output file: the per-record path
    store = RunStore(db)
    try:
        a, b = store.get("a/sys-a"), store.get("b/sys-a")
        assert (a.items_digest, a.summary, a.dataset_digest) == (b.items_digest, b.summary, b.dataset_digest)
        # one run per system in order of first appearance (record 0 is sys-b), the same both ways
        assert [r.name for r in store.runs()] == ["a/sys-b", "a/sys-a", "a/(no system)", "b/sys-b", "b/sys-a",
                                                  "b/(no system)"]
    finally:
        store.dispose()
    capsys.readouterr()
    assert main(["runs", "compare", "a/sys-a", "b/sys-a", "--db", db, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert json.dumps(out).count('"delta": 0.0') >= 2  # the same values: no change in either metric


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 8, 9, 400, 401])
def test_distinct_texts_decides_the_dictionary_as_an_exact_count(n):
    """:func:`_distinct_texts` counts at most a quarter of a column of distinct texts, and gives the exact count
    whenever the column is dictionary-encoded (distinct * 4 <= n), so both paths choose the same encoding."""
    from evaluators.runs.columns import DICTIONARY_RATIO, _distinct_texts

    rng = np.random.default_rng(n)
    columns = [[f"t{i}" for i in range(n)],  # every text distinct
               [f"t{i % 3}" for i in range(n)],  # 3 values
               [f"t{i % max(1, n // 4)}" for i in range(n)],  # at the limit: n // 4 values
               [f"t{i % (n // 4 + 1)}" for i in range(n)],  # one value over the limit
               ["same"] * (n // 2) + [f"t{i}" for i in range(n - n // 2)],  # repeats first, distinct after
               [f"t{x}" for x in rng.integers(0, max(1, n // 3), n)]]
    for values in columns:
        exact = len(set(values))
        got = _distinct_texts(pa.array(values, pa.string()))
        few = exact * DICTIONARY_RATIO <= max(1, n)
        assert (got * DICTIONARY_RATIO <= max(1, n)) == few
        assert got == exact if few else got > max(1, n) // DICTIONARY_RATIO
