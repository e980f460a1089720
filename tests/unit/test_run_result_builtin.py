"""Issue 27: every built-in task's report as one RunResult (evaluators.tasks.builtin), checked against the
task's own aggregates on the shipped demo data: the run result's per-system mean of each metric equals the
mean the task's report prints, and for QA the interval too (both: percentile bootstrap, 10,000 resamples,
seed 0, over the same records)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.reports.run_result import summary_of
from evaluators.tasks import builtin
from tests.conftest import ROOT

DEMO = ROOT / "evaluators" / "demo"


def _overall(result) -> dict[tuple[str, str], object]:
    return {(r.system, r.metric): r for r in summary_of(result) if r.slice == ""}


def test_qa_systems_demo_equals_the_qa_report_by_group():
    from evaluators.qa.run import QAInput, run_qa

    run = run_qa(QAInput(str(DEMO / "qa" / "qa_systems_demo.jsonl")))
    result = builtin.qa_run_result(run)
    assert result.systems == ("baseline-7b", "rag-7b", "rag-70b") and len(result.items) == 48
    rows = _overall(result)
    for system, summary in run.report.by_group.items():
        em, f1 = rows[(system, "exact_match")], rows[(system, "token_f1")]
        assert (em.n, em.mean, em.ci_low, em.ci_high) == (summary.n, pytest.approx(summary.exact_match),
                                                           summary.exact_match_ci_low, summary.exact_match_ci_high)
        assert f1.mean == pytest.approx(summary.token_f1)
        assert (f1.ci_low, f1.ci_high) == pytest.approx((summary.token_f1_ci_low, summary.token_f1_ci_high))
    assert rows[("baseline-7b", "exact_match")].mean == 5 / 16                            # 0.3125, 5 of 16 exact


def test_memory_demo_equals_the_memory_report_overall():
    from evaluators.memory.inputs import resolve_inputs
    from evaluators.memory.run import run_memory

    path = DEMO / "memory" / "demo_results.jsonl"
    report = run_memory(resolve_inputs(results=(str(path), path.read_bytes())))
    result = builtin.memory_run_result(report)
    overall = report.metrics["overall"]
    assert len(result.items) == overall["count"] == 25
    rows = _overall(result)
    for metric in report.names:
        assert rows[(result.systems[0], metric)].mean == pytest.approx(overall[metric]) if overall[metric] is not None \
            else rows[(result.systems[0], metric)].mean is None
    assert rows[(result.systems[0], "exact_match_normalized")].mean == pytest.approx(2 / 25)   # 0.08


def test_dialogue_demo_equals_the_by_model_means():
    from evaluators.dialogue.inputs import load_cases, load_predictions
    from evaluators.dialogue.run import DialogueInputs, run_dialogue

    cases = load_cases((DEMO / "dialogue" / "persona_cases.json").read_bytes(), "persona_cases.json")
    preds = load_predictions((DEMO / "dialogue" / "panda-chat-large.jsonl").read_bytes(), "panda-chat-large.jsonl")
    report = run_dialogue(DialogueInputs.of(cases, [preds]))
    result = builtin.dialogue_run_result(report)
    rows = _overall(result)
    for summary in report.by_model:
        for metric, mean in summary.means.items():
            got = rows[(summary.model, metric)].mean
            assert got is None if mean is None else got == pytest.approx(mean)
        assert rows[(summary.model, "combined_score")].mean == pytest.approx(summary.combined_score)


@pytest.mark.parametrize("items, answers, metric, expected", [
    ("factual_demo.json", "factual_demo_answers.json", "keyword_score", "mean_score"),
    ("multi_turn_demo.json", "multi_turn_demo_answers.jsonl", "point_coverage", "coverage_macro")])
def test_testsets_demo_equals_the_overall(items, answers, metric, expected):
    from evaluators.testsets.run import TestSetsInputs, run_testsets

    report = run_testsets(TestSetsInputs.from_paths(DEMO / "testsets" / items, DEMO / "testsets" / answers))
    result = builtin.testsets_run_result(report)
    (row,) = [r for (s, m), r in _overall(result).items() if m == metric]
    assert row.mean == pytest.approx(getattr(report.scores.overall, expected))
    assert row.system == Path(answers).stem


def test_narrative_demo_equals_the_macro_scores():
    from evaluators.narrative.run import NarrativeInputs, run_narrative

    report = run_narrative(NarrativeInputs.from_paths(DEMO / "narrative", DEMO / "narrative"))
    result = builtin.narrative_run_result(report)
    assert len(result.items) == len(report.documents) == 2
    assert _overall(result)[("predictions", "overall_score")].mean == pytest.approx(report.macro["overall_score"])


def test_repeated_ids_within_a_system_are_kept_apart():
    from evaluators.qa.run import QAInput, run_qa

    data = b'{"id": "q", "answer": "a", "prediction": "a"}\n{"id": "q", "answer": "b", "prediction": "c"}\n'
    result = builtin.qa_run_result(run_qa(QAInput(data, name="dup.jsonl")))
    assert result.items.item_id == ("q", "q#2") and result.items.values["exact_match"] == (1.0, 0.0)


def _files(**paths: Path):
    from evaluators.io.sources import InputFile

    return {role: InputFile(p.name, p.read_bytes()) for role, p in paths.items()}


@pytest.mark.parametrize("name, files, adapter", [
    ("qa", {"input": DEMO / "qa" / "qa_systems_demo.jsonl"}, "qa"),
    ("testsets", {"items": DEMO / "testsets" / "factual_demo.json",
                  "answers": DEMO / "testsets" / "factual_demo_answers.json"}, "testsets"),
    ("dialogue", {"cases": DEMO / "dialogue" / "persona_cases.json",
                  "predictions": DEMO / "dialogue" / "panda-chat-large.jsonl"}, "dialogue"),
    ("memory", {"results": DEMO / "memory" / "demo_results.jsonl"}, "memory"),
    ("narrative", {"gt": DEMO / "narrative" / "EN_001_lantern_keeper_v3.json",
                   "pred": DEMO / "narrative" / "EN_001_lantern_keeper_prediction.json"}, "narrative"),
])
def test_builtin_tasks_run_through_the_protocol(name, files, adapter):
    """One door for every task: evaluators.tasks.run_task(get(name), files) gives the task's run result, the
    same table as the task's own run function seen through its adapter."""
    from evaluators.tasks import get, run_task

    task = get(name)
    result = run_task(task, _files(**files))
    assert result.task == name and len(result.items) > 0
    direct = task.run(task.read(_files(**files)), task.config_type())
    assert result.items.digest() == direct.items.digest()
    assert set(result.digests) == set(files)                                   # every input's SHA-256


def test_qa_task_gt_patch_goes_through_the_qa_patch_path(tmp_path):
    """One record of system rag-7b (exact match 0) gets its prediction accepted: that system's EM rises by
    exactly 1/16 (16 records), the others are unchanged, and the corrections say so."""
    from evaluators.io.gt_patch import KEYED_VERSION, GTPatchSet, PatchEntry, record_key, write_gt_patch
    from evaluators.tasks import get, run_task

    files = _files(input=DEMO / "qa" / "qa_systems_demo.jsonl")
    task = get("qa")
    before = run_task(task, files)
    rows = [r for r in before.items.rows() if r["system"] == "rag-7b" and r["exact_match"] == 0.0
            and r["status"] == "scored"]
    target = rows[0]
    old = tuple(target["ground_truth"])
    entry = PatchEntry(target["item_id"], "", "add_answer", old, (target["prediction"],), "lead", "variant", "s",
                       KEYED_VERSION, gt_key=record_key(target["item_id"], old))
    patches = GTPatchSet.read([("p.jsonl", write_gt_patch([entry]).encode("utf-8"))])
    after = run_task(task, files, gt_patch=patches)
    b = {s: _overall(before)[(s, "exact_match")].mean for s in before.systems}
    a = {s: _overall(after)[(s, "exact_match")].mean for s in after.systems}
    assert a["rag-7b"] == pytest.approx(b["rag-7b"] + 1 / 16) and a["rag-70b"] == b["rag-70b"]
    assert after.corrections is not None and after.corrections.applications[0][1].n_applied >= 1
    assert after.digests["gt_patch"] == "p.jsonl"
