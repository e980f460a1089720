"""The compact record store: records re-derived from their lines equal the ones that were scored."""

import io
import json

import pytest

from evaluators.qa import evaluate_qa, evaluate_qa_file
from evaluators.qa.evaluate import QAConfig, evaluate_records
from evaluators.io import read_records

LINES = [
    {"id": "q1", "question": "长城有多长？", "answer": "两万一千公里", "final_answer": "两万公里", "system": "A"},
    {"id": "q2", "question": "Who wrote Hamlet?", "answer": "William Shakespeare", "final_answer": "Shakespeare",
     "system": "A"},
    {"id": "q3", "question": "No gold here", "final_answer": "x", "system": "B"},
    {"id": "q4", "question": "Empty prediction", "answer": "Paris", "final_answer": "", "system": "B"},
]
DATA = ("\n".join(json.dumps(r, ensure_ascii=False) for r in LINES) + "\nnot json\n").encode("utf-8")


def test_streamed_records_equal_the_in_memory_ones():
    streamed = evaluate_qa(DATA, "x.jsonl")  # JSONL: streamed, lines kept by offset
    in_memory = evaluate_records(read_records(DATA, "x.jsonl"), QAConfig())  # every record object kept
    assert len(streamed.records) == len(in_memory.records) == 4
    assert list(streamed.records) == list(in_memory.records)
    assert streamed.records[1].token_f1 == pytest.approx(2 / 3)  # "shakespeare" vs "william shakespeare"
    assert [r.status for r in streamed.records] == ["scored", "scored", "missing_gt", "missing_prediction"]
    assert streamed.overall == in_memory.overall and streamed.by_group == in_memory.by_group
    assert [i.line for i in streamed.issues] == [5]


def test_upload_and_file_paths_give_the_same_report(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(DATA)
    from_file = evaluate_qa_file(path)
    from_upload = evaluate_qa_file(io.BytesIO(DATA), name="x.jsonl")
    assert list(from_file.records) == list(from_upload.records) == list(evaluate_qa(DATA, "x.jsonl").records)


def test_columns_select_and_sums():
    store = evaluate_qa(DATA, "x.jsonl").records
    assert store.column("status") == ["scored", "scored", "missing_gt", "missing_prediction"]
    assert store.column("exact_match")[2] is None
    idx, n = store.select(statuses={"scored", "missing_prediction"}, errors_only=True)
    # q1 (zh, EM 0), q2 (EM 0), q4 (missing prediction, EM 0); q3 is not scored
    assert (idx, n) == ([0, 1, 3], 3)
    assert store.select(needle="hamlet") == ([1], 1)
    assert store.select(needle="长城", limit=0) == ([], 1)
    n_scored, em_sum, f1_sum = store.sums()[None]
    assert n_scored == 3 and em_sum == 0.0
    assert set(store.sums("group")) == {"A", "B"}


def test_report_json_serialises_the_store():
    report = evaluate_qa(DATA, "x.jsonl")
    data = report.to_dict()
    assert [r["id"] for r in data["records"]] == ["q1", "q2", "q3", "q4"]
