"""One read per upload: a QA input is sniffed once and decoded once on its way from bytes to records."""

import io
import json

import pytest

import evaluators.io.readers as readers
from evaluators.qa import QAConfig, evaluate_qa, evaluate_qa_file
from evaluators.qa.records import open_qa_source

ROWS = [{"id": "q1", "question": "长城有多长？", "answer": "两万公里", "final_answer": "两万公里"},
        {"id": "q2", "question": "Who wrote Hamlet?", "answer": "Shakespeare", "final_answer": "Marlowe"}]
JSONL = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS)
JSON_ARRAY = json.dumps(ROWS, ensure_ascii=False)
CSV = "id,question,answer,final_answer\nq1,长城有多长？,两万公里,两万公里\nq2,Who wrote Hamlet?,Shakespeare,Marlowe\n"
SQUAD = json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [
    {"id": "q1", "question": "长城有多长？", "answers": [{"text": "两万公里", "answer_start": 0}]},
    {"id": "q2", "question": "Who wrote Hamlet?", "answers": [{"text": "Shakespeare", "answer_start": 0}]}]}]}]},
    ensure_ascii=False)
PREDICTIONS = json.dumps({"q1": "两万公里", "q2": "Marlowe"}, ensure_ascii=False)


@pytest.fixture
def counts(monkeypatch):
    """Calls of the sniffer and of every whole-input decode (text decode or encoding detection)."""
    seen = {"sniff": 0, "decode": 0}

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            seen[name] += 1
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(readers, "sniff_format", counted("sniff", readers.sniff_format))
    monkeypatch.setattr(readers, "decode_bytes", counted("decode", readers.decode_bytes))
    monkeypatch.setattr(readers, "_detect_encoding", counted("decode", readers._detect_encoding))
    return seen


CASES = [  # (file name, text): GB18030 so that the JSON path cannot parse the bytes without decoding them
    ("x.jsonl", JSONL), ("x.json", JSON_ARRAY), ("x.csv", CSV), ("x.txt", JSONL), ("x.txt", JSON_ARRAY),
]


@pytest.mark.parametrize(("name", "text"), CASES)
@pytest.mark.parametrize("how", ["bytes", "path", "upload"])
def test_each_input_is_sniffed_once_and_decoded_once(counts, tmp_path, name, text, how):
    data = text.encode("gb18030")
    if how == "bytes":
        report = evaluate_qa(data, name, QAConfig(ci_resamples=0))
    elif how == "path":
        (tmp_path / name).write_bytes(data)
        report = evaluate_qa_file(tmp_path / name, QAConfig(ci_resamples=0))
    else:
        report = evaluate_qa_file(io.BytesIO(data), QAConfig(ci_resamples=0), name=name)
    assert counts == {"sniff": 1, "decode": 1}
    assert report.n_records == 2 and report.overall.exact_match == 0.5  # q1 right, q2 wrong
    assert [r.question for r in report.records] == ["长城有多长？", "Who wrote Hamlet?"]


def test_a_dataset_and_its_predictions_are_each_read_once(counts):
    report = evaluate_qa(SQUAD.encode("gb18030"), "dev.json", QAConfig(ci_resamples=0),
                         predictions=PREDICTIONS.encode("gb18030"), predictions_file="pred.json")
    assert counts == {"sniff": 2, "decode": 2}  # one of each per file
    assert [r.prediction for r in report.records] == ["两万公里", "Marlowe"]
    assert report.overall.exact_match == 0.5


def test_a_broken_json_document_is_decoded_once_and_located(counts):
    data = (JSON_ARRAY[:-1] + ",}").encode("gb18030")
    report = evaluate_qa(data, "x.json", QAConfig(ci_resamples=0))
    assert counts == {"sniff": 1, "decode": 1}  # the error path reuses the decoded text's encoding
    assert report.n_records == 0 and report.issues[0].kind == "json" and report.issues[0].line == 1


def test_a_streamed_source_is_parsed_only_when_consumed(counts):
    source = open_qa_source(JSONL.encode("utf-8"), "x.jsonl")
    assert source.streamed and counts == {"sniff": 1, "decode": 0}
    records = list(source.records)
    assert counts == {"sniff": 1, "decode": 1}
    assert [r[0]["id"] for r in records] == ["q1", "q2"]  # (data, line, index, raw, offset)


def test_lines_and_documents_longer_than_the_orjson_bound_go_to_the_standard_library(monkeypatch):
    import orjson

    seen = []

    class Counting:
        JSONDecodeError = orjson.JSONDecodeError

        @staticmethod
        def loads(data):
            seen.append(len(data))
            return orjson.loads(data)

    monkeypatch.setattr(readers, "_orjson", Counting)
    monkeypatch.setattr(readers, "ORJSON_MAX_BYTES", 150)  # orjson's working memory is ~12x its input
    long_row = {"id": "q3", "answer": "x" * 200, "final_answer": "x" * 200}
    data = (JSONL + json.dumps(long_row) + "\n").encode("utf-8")
    report = evaluate_qa(data, "x.jsonl", QAConfig(ci_resamples=0))
    assert report.n_records == 3 and report.records[2].exact_match == 1.0
    # the two short lines by orjson (twice each: for the detection sample, then in their block); the long line
    # by the standard library
    assert sorted(seen) == sorted(2 * [len(line.encode()) for line in JSONL.splitlines()]) and max(seen) <= 150
    seen.clear()
    value, _ = readers.read_json_document(JSON_ARRAY.encode("utf-8"), "x.json")
    assert value == ROWS and seen == []  # a document over the bound: the standard library
