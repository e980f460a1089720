"""Streaming QA writers: the same text as the whole-report writers, rows rendered while scoring, any worker count."""

from __future__ import annotations

import json
import shutil

import pytest

import evaluators.qa.evaluate as qa
import evaluators.qa.records as qa_records
from evaluators.cli import main
from evaluators.qa import QAConfig, evaluate_qa
from evaluators.reports.csv_writer import write_dict_csv
from evaluators.reports.qa import RECORD_COLUMNS, record_rows, records_csv, report_json
from tests.conftest import require_shared

HOSTILE = [  # cells the CSV writer must quote or defuse, JSON escapes, CJK, a tiny F1 (an exponent in JSON)
    {"id": "c1", "question": 'a "quoted", comma', "answer": "=1+1", "final_answer": "-2\r\nline"},
    {"id": "c2", "question": "tab\tand \x00 nul", "answer": "@home", "final_answer": "\u2028 sep ,"},
    {"id": "c3", "question": "长城有多长？", "answer": ["两万公里", "21196 km"], "final_answer": "两万"},
    {"id": "c4", "answer": "w " * 1 + "x", "final_answer": "x " + "y " * 30000},  # F1 = 2/30002 ~ 6.7e-05
    {"id": "c5", "question": "no prediction", "answer": "a"},
    {"id": "c6", "question": "no gold", "final_answer": "b"},
]
DATA = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in HOSTILE).encode("utf-8")


def test_streamed_writers_equal_the_whole_report_writers():
    report = evaluate_qa(DATA, "h.jsonl", QAConfig(ci_resamples=20))
    assert 0 < report.records[3].token_f1 < 1e-4  # json.dumps writes it with an exponent; so must the writer
    assert report_json(report) == json.dumps(report.to_dict(), ensure_ascii=False, indent=2)
    rows = record_rows(report)
    for row in rows:
        row["signature"] = report.signature
    assert records_csv(report) == write_dict_csv([*RECORD_COLUMNS, "signature"], rows)
    assert "'=1+1" in records_csv(report) and '"a ""quoted"", comma"' in records_csv(report)


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_cli_rows_rendered_while_scoring_equal_the_writers_and_any_worker_count(tmp_path, monkeypatch, suffix):
    monkeypatch.setattr(qa, "CHUNK_RECORDS", 37)  # several chunks per worker
    monkeypatch.setattr(qa, "ROWS_PER_WRITE", 7)  # several blocks in one process
    monkeypatch.setattr(qa, "DETECTION_SAMPLE", 40)  # past the sample, workers parse raw blocks of lines ...
    monkeypatch.setattr(qa_records, "BLOCK_BYTES", 5000)  # ... of a few lines each (some longer than a block)
    outputs = []
    for name, data in (("h.jsonl", DATA),
                       ("cfever.jsonl", require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")),
                       ("hotpot.jsonl", require_shared("qa_factcheck", "hotpotqa_vatsalp04",
                                                       "DERIVED_seed_format.jsonl"))):
        src = tmp_path / name
        if isinstance(data, bytes):
            src.write_bytes(data)
        else:
            shutil.copy(data, src)
        monkeypatch.chdir(tmp_path)
        got = []
        for workers in ("1", "2"):
            out = tmp_path / f"{name}.{workers}.{suffix}"
            assert main(["qa", "--input", name, "--output-file", str(out), "--workers", workers,
                         "--ci-resamples", "50"]) == 0
            got.append(out.read_bytes())
        assert got[0] == got[1]  # identical bytes with 2 workers
        report = evaluate_qa(src.read_bytes(), name, QAConfig(ci_resamples=50))
        expected = report_json(report) if suffix == "json" else records_csv(report)
        assert got[0].decode("utf-8") == expected  # the page's download of the same report
        outputs.append(got[0])
    assert len(json.loads(outputs[1])["records"]) == 600 if suffix == "json" else outputs[1].count(b"\r\n") > 600


def test_blocks_parsed_in_workers_give_the_same_report_and_located_issues(tmp_path, monkeypatch):
    monkeypatch.setattr(qa, "DETECTION_SAMPLE", 3)
    monkeypatch.setattr(qa_records, "BLOCK_BYTES", 64)
    lines = [line + b"\n" for line in DATA.split(b"\n")[:-1]]  # (not splitlines: U+2028 is inside a string)
    data = b"".join(lines[:4] + [b"{broken\r\n", b"[1, 2]\n", b"\n"] + lines[4:] + lines[:3])
    path = tmp_path / "x.jsonl"
    path.write_bytes(data[:-1])  # no newline at the end
    one = qa.evaluate_qa_file(path, QAConfig(ci_resamples=30))
    two = qa.evaluate_qa_file(path, QAConfig(ci_resamples=30), workers=2)
    assert one.to_dict() == two.to_dict()
    # located in the file; the last three lines repeat the first three records' ids
    assert [(i.line, i.kind) for i in two.issues] == [(5, "json"), (6, "schema"), (10, "duplicate"),
                                                      (11, "duplicate"), (12, "duplicate")]
    assert two.n_records == 9 and [r.line for r in two.records] == [1, 2, 3, 4, 8, 9, 10, 11, 12]


def test_a_spool_copied_to_a_text_stream_gives_the_same_text():
    import io

    from evaluators.qa.run import QAInput, run_qa
    from evaluators.reports.qa import json_rows, write_report_json

    sink, spool = json_rows()
    report = run_qa(QAInput(DATA * 300, name="h.jsonl"), QAConfig(ci_resamples=0), rows=sink).report
    buf = io.StringIO()  # no byte buffer: the spool is decoded incrementally (chunks end inside characters)
    write_report_json(report, buf, spool=spool)
    assert buf.getvalue() == report_json(report)


def _outputs_with_one_and_two_workers(src, suffix: str, resamples: str) -> list[bytes]:
    """``qa --output-file`` of ``src`` with 1 and with 2 workers (asserted byte-identical)."""
    got = []
    for workers in ("1", "2"):
        out = src.with_name(f"{src.stem}.{workers}.{suffix}")
        assert main(["qa", "--input", str(src), "--output-file", str(out), "--workers", workers,
                     "--ci-resamples", resamples]) == 0
        got.append(out.read_bytes())
    assert got[0] == got[1]
    return got


def test_rows_numbered_right_when_lines_that_are_not_records_are_in_blocks_scored_at_the_same_time(tmp_path,
                                                                                                 monkeypatch):
    """A worker numbers its block's records from a guess (lines before it, less the non-records known when it
    was sent); blank and broken lines in blocks still in flight make the guess miss, and such a block is
    rendered again with the right numbers: the JSON output is the same bytes as with one process."""
    monkeypatch.setattr(qa_records, "BLOCK_BYTES", 300)  # a few lines a block, several blocks in flight
    monkeypatch.setattr(qa, "DETECTION_SAMPLE", 5)
    lines = [line + b"\n" for line in DATA.split(b"\n")[:-1]]
    body = []
    for k in range(60):  # 360 records; every 7th block of lines has a blank or a broken line
        body.append(lines[k % len(lines)].replace(b'"id": "c', f'"id": "r{k}-c'.encode()))
        if k % 7 == 3:
            body.append(b"\n" if k % 2 else b"{broken\n")
    src = tmp_path / "gaps.jsonl"
    src.write_bytes(b"".join(body))
    got = _outputs_with_one_and_two_workers(src, "json", "20")
    report = evaluate_qa(src.read_bytes(), str(src), QAConfig(ci_resamples=20))
    assert got[0].decode("utf-8") == report_json(report)
    records = json.loads(got[0])["records"]
    # 60 records; after records k = 3, 10, ..., 59 (k % 7 == 3) a blank or broken line: 8 of them before the last
    assert [r["index"] for r in records] == list(range(60)) and records[-1]["line"] == 60 + 8


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_a_line_that_is_not_utf8_late_in_the_file_makes_it_read_again_as_gb18030(tmp_path, monkeypatch, suffix):
    """JSONL is read as UTF-8, line by line; a GB18030 line in a late block means the file is not UTF-8: the
    rows written so far are dropped and the whole file is read as GB18030, as a file that is GB18030 from its
    first line (the same rule: :func:`evaluators.io.readers.detect_encoding`)."""
    monkeypatch.setattr(qa_records, "BLOCK_BYTES", 200)  # the GB18030 line is in the last of many blocks
    rows = [{"id": f"q{i}", "answer": "Paris", "final_answer": "Paris" if i % 2 else "Lyon"} for i in range(30)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode("ascii")
    data += json.dumps({"id": "z", "answer": "长城", "final_answer": "长城"}, ensure_ascii=False).encode("gb18030")
    src = tmp_path / "mixed.jsonl"
    src.write_bytes(data + b"\n")
    got = _outputs_with_one_and_two_workers(src, suffix, "0")
    report = evaluate_qa(data, "mixed.jsonl", QAConfig(ci_resamples=0))
    assert report.n_records == 31 and report.records[30].gold_answers == ("长城",)
    assert report.overall.exact_match == 16 / 31  # q1, q3, ..., q29 (15) and z
    assert not [i for i in report.issues if i.kind == "decode"]
    text = got[0].decode("utf-8")
    if suffix == "csv":
        assert text.count("\r\n") == 1 + 31  # the header and each record once: the UTF-8 attempt's rows dropped
    else:
        assert [r["id"] for r in json.loads(text)["records"]] == [f"q{i}" for i in range(30)] + ["z"]


def test_the_json_row_of_a_record_has_the_fields_of_a_record_in_order():
    import dataclasses

    from evaluators.qa.evaluate import QARecordResult
    from evaluators.reports.qa import _record_dict

    names = [f.name for f in dataclasses.fields(QARecordResult)]
    assert list(_record_dict(*range(len(names)))) == names
    assert list(_record_dict(*range(len(names))).values()) == list(range(len(names)))
