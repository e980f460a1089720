"""``--workers N``: chunks scored in worker processes give the very report of one process.

Each batch engine is run twice on real data (or the shipped demos), once in-process and once
with two workers and chunks small enough that every worker gets several, and the reports are
compared field by field (``to_dict``), not only their headline numbers.
"""

from __future__ import annotations

import pytest

from evaluators.parallel import chunked, imap_chunks, worker_count
from tests.conftest import ROOT, require_shared


def _square_all(chunk: list[int]) -> list[int]:
    return [x * x for x in chunk]


def _fail_on_three(chunk: list[int]) -> list[int]:
    if 3 in chunk:
        raise ValueError("three")
    return chunk


def test_chunked_and_worker_count():
    assert list(chunked(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(chunked([], 3)) == []
    assert worker_count(2) == 2 and worker_count(0) >= 1
    with pytest.raises(ValueError, match="workers"):
        worker_count(-1)


@pytest.mark.parametrize("workers", [1, 2])
def test_imap_chunks_keeps_input_order(workers):
    out = [r for _, res in imap_chunks(_square_all, chunked(range(50), 4), workers) for r in res]
    assert out == [x * x for x in range(50)]


def test_a_worker_error_reaches_the_caller():
    with pytest.raises(ValueError, match="three"):
        for _ in imap_chunks(_fail_on_three, chunked(range(10), 2), 2):
            pass


def test_qa_report_is_identical_with_workers(monkeypatch):
    import evaluators.qa.evaluate as qa
    from evaluators.qa import QAConfig, evaluate_qa_file

    monkeypatch.setattr(qa, "CHUNK_RECORDS", 37)  # 600 records -> 17 chunks over 2 workers
    path = require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")
    one = evaluate_qa_file(path, QAConfig(ci_resamples=500))
    two = evaluate_qa_file(path, QAConfig(ci_resamples=500), workers=2)
    assert one.to_dict() == two.to_dict()
    assert one.overall.n == 600
    grouped = ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl"
    monkeypatch.setattr(qa, "CHUNK_RECORDS", 5)
    assert evaluate_qa_file(grouped, workers=2).to_dict() == evaluate_qa_file(grouped).to_dict()


def test_narrative_batch_is_identical_with_workers(monkeypatch):
    import evaluators.narrative.batch as batch
    from evaluators.narrative.run import NarrativeInputs, run_narrative

    monkeypatch.setattr(batch, "CHUNK_PAIRS", 1)
    gt = require_shared("fairytales", "gt_v3")
    pred = require_shared("fairytales", "predictions")
    one = run_narrative(NarrativeInputs.from_paths(gt, pred))
    two = run_narrative(NarrativeInputs.from_paths(gt, pred), workers=2)
    assert len(one.scored) >= 2
    assert one.to_dict() == two.to_dict()


def test_dialogue_evaluation_is_identical_with_workers(monkeypatch):
    import evaluators.dialogue.scoring as scoring
    from evaluators.dialogue.inputs import load_cases, load_predictions

    monkeypatch.setattr(scoring, "CHUNK_CASES", 7)
    folder = require_shared("persona_chat")
    cases = load_cases((folder / "peppa_structured_test_cases.json").read_bytes(), "cases.json")
    preds = load_predictions((folder / "peppa_structured_evaluation_202510101638_report.json").read_bytes(),
                             "report.json")
    one = scoring.evaluate_dialogue(cases.cases, preds.rows)
    two = scoring.evaluate_dialogue(cases.cases, preds.rows, workers=2)
    assert len(one.results) > 7
    assert one.to_dict() == two.to_dict()


@pytest.mark.parametrize("items, answers", [("factual_demo.json", "factual_demo_answers.json"),
                                            ("multi_turn_demo.json", "multi_turn_demo_answers.jsonl")])
def test_test_set_report_is_identical_with_workers(monkeypatch, items, answers):
    import evaluators.testsets.evaluate as ts
    from evaluators.testsets import evaluate_test_set, load_answers, load_test_set

    monkeypatch.setattr(ts, "CHUNK_ITEMS", 2)
    demo = ROOT / "evaluators" / "demo" / "testsets"
    test_set = load_test_set((demo / items).read_bytes(), items)
    ans = load_answers((demo / answers).read_bytes(), answers)
    assert evaluate_test_set(test_set, ans, workers=2).to_dict() == evaluate_test_set(test_set, ans).to_dict()


def test_cli_workers_flag_gives_the_same_output(tmp_path, capsys):
    from evaluators.cli import main

    demo = ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["qa", "--input", str(demo), "--ci-resamples", "300", "--output-file", str(a)]) == 0
    assert main(["qa", "--input", str(demo), "--ci-resamples", "300", "--workers", "2", "--output-file", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert main(["qa", "--input", str(demo), "--workers", "-3"]) == 2
    assert "workers" in capsys.readouterr().err


def test_memory_rows_are_identical_with_workers(monkeypatch):
    import evaluators.memory.metrics as mm
    from evaluators.memory.inputs import resolve_inputs

    monkeypatch.setattr(mm, "CHUNK_QUESTIONS", 4)
    path = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    results = resolve_inputs(results=("results.json", path.read_bytes())).results[:60]
    judged = {r.question_id: 1.0 for r in results[::3]}
    metrics = ["judge_score", "token_f1_char", "rouge1"]
    one = mm.score_questions(results, judged, metrics=metrics)
    two = mm.score_questions(results, judged, metrics=metrics, workers=2)
    assert [r.to_dict() for r in one] == [r.to_dict() for r in two] and len(one) == 60


def _squares_streamed(chunk):
    for x in chunk:
        yield x * x


@pytest.mark.parametrize("workers", [1, 2])
def test_map_ordered_flattens_chunk_results_in_input_order(workers):
    from evaluators.parallel import map_ordered

    assert list(map_ordered(_squares_streamed, range(23), workers, chunk_size=4)) == [x * x for x in range(23)]
    assert list(map_ordered(_squares_streamed, [], workers, chunk_size=4)) == []


def test_map_ordered_streams_item_by_item_in_one_process():
    from evaluators.parallel import map_ordered

    seen = []

    def chunk_fn(items):
        seen.append(len(items))  # one call with every item: state (a scorer) is built once
        for x in items:
            yield x

    it = map_ordered(chunk_fn, iter(range(5)), 1, chunk_size=2)
    assert next(it) == 0 and seen == [5]
    assert list(it) == [1, 2, 3, 4]


def test_narrative_cli_json_is_byte_identical_with_workers_and_streamed(monkeypatch, tmp_path):
    """``narrative --workers 2 --out r.json``: entries written by the workers, streamed while scoring, same bytes."""
    import evaluators.narrative.batch as batch
    from evaluators.cli import main
    from evaluators.narrative.run import NarrativeInputs, run_narrative
    from evaluators.reports.narrative import to_json

    monkeypatch.setattr(batch, "CHUNK_PAIRS", 1)  # two real pairs -> one per worker
    gt = require_shared("fairytales", "gt_v3")
    pred = require_shared("fairytales", "predictions")
    outs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}.json"
        assert main(["narrative", "--gt", str(gt), "--pred", str(pred), "--out", str(out), "--quiet",
                     "--workers", str(workers)]) == 0
        outs[workers] = out.read_bytes()
    assert outs[1] == outs[2]
    assert outs[1].decode("utf-8") == to_json(run_narrative(NarrativeInputs.from_paths(gt, pred)))
    assert not list(tmp_path.glob("*.partial"))


def test_rendered_documents_come_back_without_rows_and_still_give_the_whole_report():
    from evaluators.narrative.run import NarrativeInputs, run_narrative
    from evaluators.reports.narrative import batch_json, document_entry_json, document_json, to_json

    gt = require_shared("fairytales", "gt_v3")
    pred = require_shared("fairytales", "predictions")
    full = run_narrative(NarrativeInputs.from_paths(gt, pred))
    slim = run_narrative(NarrativeInputs.from_paths(gt, pred), render=document_entry_json)
    assert batch_json(slim) == to_json(full) and slim.to_dict() == full.to_dict()
    assert slim.micro == full.micro and slim.macro == full.macro
    d = slim.documents[0]
    assert d.result.mismatches() == [] and full.documents[0].result.mismatches()  # rows stayed in the worker
    assert d.result.component_scores == full.documents[0].result.component_scores
    assert document_json(d) == to_json(full.documents[0].result)


def _memo_size(state, chunk):
    """``(pid, size)`` of an inherited dict after adding the chunk's items (state kept between chunks)."""
    import os

    memo = state()
    memo.update((x, x) for x in chunk)
    return [(os.getpid(), len(memo))]


def test_an_inherited_value_is_each_processs_own_copy_kept_from_chunk_to_chunk():
    import os
    from functools import partial

    import evaluators.parallel as parallel
    from evaluators.parallel import Inherited

    if not parallel.forks_workers():
        pytest.skip("workers are not forked here: the value is pickled with each chunk")
    memo = {"seed": 0}
    shared = Inherited(memo)
    try:
        out = [r for _, res in imap_chunks(partial(_memo_size, shared), chunked(range(40), 4), 2) for r in res]
    finally:
        shared.close()
    assert len(out) == 10 and shared.key not in parallel._INHERITED
    by_process: dict[int, list[int]] = {}
    for pid, size in out:
        by_process.setdefault(pid, []).append(size)
    # each process (this one and the worker) grows its own copy by the 4 keys of each chunk it scores, in order:
    # 1 + 4, 1 + 8, ... (a copy unpickled afresh for every chunk would stay at 1 + 4)
    assert [pid for pid in by_process if pid != os.getpid()]  # the first chunk always goes to the worker
    for sizes in by_process.values():
        assert sizes == [1 + 4 * k for k in range(1, len(sizes) + 1)]
    assert len(memo) == 1 + 4 * len(by_process.get(os.getpid(), []))  # the worker's keys never came back here


def _mapped_regions() -> int | None:
    """glibc's count of memory regions it mapped for single allocations (``mallinfo2().hblks``), or None."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                         "fsmblks", "uordblks", "fordblks", "keepcost")]

    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    mallinfo2.restype = MallInfo2
    return mallinfo2().hblks


def _maps_a_buffer(chunk):
    """``(pid, whether a 24 MiB buffer got a mapping of its own)``: glibc maps one (and unmaps it when freed,
    so it is faulted in page by page the next time) unless the process keeps freed memory."""
    import os

    before = _mapped_regions()
    buf = bytearray(24 << 20)
    mapped = _mapped_regions() - before
    del buf
    return [(os.getpid(), mapped)]


def test_workers_keep_freed_memory_for_the_next_chunk():
    """Each worker calls ``keep_freed_memory`` when it starts: a buffer under 32 MiB comes from the heap, whose
    freed memory is kept for the next chunk (a QA worker took 1,900 page faults a block without it)."""
    import os

    if _mapped_regions() is None:
        pytest.skip("not glibc 2.33+: mallinfo2 is not there to look at the allocator")
    out = [r for _, res in imap_chunks(_maps_a_buffer, chunked(range(4), 1), 2) for r in res]
    worker = [mapped for pid, mapped in out if pid != os.getpid()]
    assert worker and worker == [0] * len(worker)
