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


def test_a_line_with_nan_is_re_derived_by_the_same_parser():
    data = b'{"id": "q1", "answer": "Paris", "final_answer": "Paris", "score": NaN}\n'
    report = evaluate_qa(data, "x.jsonl")
    assert report.overall.n == 1 and report.records[0].exact_match == 1.0  # orjson rejects NaN: json reads it


def test_gb18030_jsonl_records_are_re_derived_from_utf8_copies():
    data = ("\n".join(json.dumps(r, ensure_ascii=False) for r in LINES) + "\n").encode("gb18030")
    report = evaluate_qa(data, "x.jsonl")
    assert report.records[0].question == "长城有多长？"
    assert list(report.records) == list(evaluate_qa(DATA, "x.jsonl").records)
    assert report.records.select(needle="长城") == ([0], 1)


def test_search_looks_at_the_fields_not_the_json_text():
    store = evaluate_qa(DATA, "x.jsonl").records
    assert store.select(needle="final_answer") == ([], 0)  # a key of every line, in no field
    assert store.select(needle="shakespeare") == ([1], 1)  # gold and prediction
    escaped = ("\n".join(json.dumps(r) for r in LINES) + "\n").encode()  # \uXXXX escapes for Chinese
    assert evaluate_qa(escaped, "x.jsonl").records.select(needle="长城") == ([0], 1)
    in_memory = evaluate_records(read_records(DATA, "x.json", fmt="jsonl"), QAConfig()).records
    assert in_memory.select(needle="final_answer") == ([], 0)
    assert in_memory.select(needle="shakespeare") == ([1], 1)
    # a made-up id (no id field) is searchable: "#2" is the record of line 2
    no_ids = b'{"answer": "a", "final_answer": "a"}\n{"answer": "b", "final_answer": "c"}\n'
    assert evaluate_qa(no_ids, "x.jsonl").records.select(needle="#2") == ([1], 1)


def test_bytes_like_inputs():
    from_view = evaluate_qa(memoryview(DATA), "x.jsonl")
    assert list(from_view.records) == list(evaluate_qa(DATA, "x.jsonl").records)
    store = evaluate_qa(DATA, "x.jsonl").records
    again = type(store)(store._rescore)
    again.append(store[1], bytearray(DATA.split(b"\n")[1]))
    import dataclasses

    assert dataclasses.replace(again[0], index=1) == store[1]  # the store numbers its own records


def test_file_reader_keeps_one_handle_and_survives_pickling(tmp_path):
    import pickle

    path = tmp_path / "x.jsonl"
    path.write_bytes(DATA)
    report = evaluate_qa_file(path)
    reader = report.records._reader
    assert reader(0, 10) == DATA[:10]
    handle = reader._file
    assert reader(5, 5) == DATA[5:10] and reader._file is handle  # opened once
    copy = pickle.loads(pickle.dumps(reader))
    assert copy(0, 10) == DATA[:10]


def test_detection_looks_at_every_record_of_an_in_memory_set():
    from evaluators.qa import evaluate as ev

    rows = [{"id": f"q{i}", "answer": "a", "final_answer": "a"} for i in range(ev.DETECTION_SAMPLE)]
    rows.append({"id": "last", "answer": "a", "final_answer": "a", "system": "B"})
    data = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
    in_memory = evaluate_records(read_records(data, "x.jsonl"), QAConfig())
    assert in_memory.group_field == "system" and set(in_memory.by_group) == {"B"}
    streamed = evaluate_qa(data, "x.jsonl")  # a stream decides on the first DETECTION_SAMPLE records
    assert streamed.group_field is None
