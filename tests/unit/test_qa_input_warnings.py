"""Issue 20: repeated record ids are warned about, located; a task decided on a sample says so."""

from __future__ import annotations

import json

import evaluators.qa.evaluate as qa
from evaluators.qa import QAConfig, evaluate_qa
from tests.conftest import require_shared


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def test_repeated_ids_are_warned_and_located_and_every_record_is_scored():
    rows = [{"id": "q1", "answer": "a", "final_answer": "a"}, {"id": "q2", "answer": "b", "final_answer": "x"},
            {"id": "q1", "answer": "a", "final_answer": "y"}, {"id": "长城", "answer": "c", "final_answer": "c"},
            {"id": "长城", "answer": "c", "final_answer": "c"}, {"id": "q1", "answer": "a", "final_answer": "a"}]
    for data, name in ((_jsonl(rows), "d.jsonl"), (json.dumps(rows, ensure_ascii=False).encode(), "d.json")):
        report = evaluate_qa(data, name, QAConfig(ci_resamples=0))
        assert report.n_records == 6 and report.overall.n == 6  # all scored: EM 1, 0, 0, 1, 1, 1
        assert report.overall.exact_match == 4 / 6
        dup = [i for i in report.issues if i.kind == "duplicate"]
        assert [i.severity for i in dup] == ["warning", "warning"]
        if name.endswith(".jsonl"):
            assert [i.line for i in dup] == [3, 5]  # where each id comes back first
            assert "'q1' stands 3 times (line 1, line 3, line 6)" in dup[0].message
        else:
            assert "'q1' stands 3 times (record 1, record 3, record 6)" in dup[0].message
        assert "'长城' stands 2 times" in dup[1].message


def test_the_same_id_in_two_systems_is_not_a_repeat():
    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    report = evaluate_qa(path.read_bytes(), path.name, QAConfig(ci_resamples=0))
    assert len(report.by_group) == 3 and report.n_records == 150  # 50 questions x 3 systems
    assert not [i for i in report.issues if i.kind == "duplicate"]
    rows = [{"id": "q1", "system": "A", "answer": "a", "final_answer": "a"},
            {"id": "q1", "system": "B", "answer": "a", "final_answer": "b"},
            {"id": "q1", "system": "B", "answer": "a", "final_answer": "a"}]
    dup = [i for i in evaluate_qa(_jsonl(rows), "s.jsonl", QAConfig(ci_resamples=0)).issues if i.kind == "duplicate"]
    assert len(dup) == 1 and "in system 'B'" in dup[0].message and dup[0].line == 3


def test_a_task_decided_on_a_sample_says_so(monkeypatch):
    monkeypatch.setattr(qa, "DETECTION_SAMPLE", 2000)
    path = require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")
    report = evaluate_qa(path.read_bytes(), path.name, QAConfig(ci_resamples=0))
    # 600 records: the sample is the whole file, so the counts are the file's
    assert report.task == "factcheck" and "of 600 records" in report.task_reason and "sample" not in report.task_reason
    monkeypatch.setattr(qa, "DETECTION_SAMPLE", 250)
    report = evaluate_qa(path.read_bytes(), path.name, QAConfig(ci_resamples=0))
    assert report.task_reason.startswith("'claim' field in 250 of 250 records")
    assert report.task_reason.endswith("(in a sample: the first 250 of 600 records)")
    named = evaluate_qa(path.read_bytes(), path.name, QAConfig(ci_resamples=0, dataset="cfever"))
    assert "sample" not in named.task_reason  # decided by the dataset name, not by counting
