"""Issue 19 on real long-memory data: mem0's LoCoMo predictions reviewed by a scripted rule, the session's
patch (``review patch``) applied by ``memory --gt-patch`` with the LoCoMo question file, and the patched
exact match equal to a count made from the raw files."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.io.gt_patch import read_gt_patch_file
from evaluators.memory.inputs import resolve_inputs
from evaluators.memory.run import MemoryConfig, run_memory
from evaluators.review.items import memory_items
from evaluators.review.store import ReviewStore
from tests.conftest import require_shared

pytestmark = pytest.mark.realdata


def rule(gt: str, prediction: str) -> bool:
    """The scripted reviewer: an answer that contains the reference (case-insensitive) is acceptable."""
    return bool(gt.strip()) and gt.strip().lower() in prediction.lower()


def test_mem0_locomo_review_patch_and_memory_cli(tmp_path, capsys):
    results = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    questions = require_shared("long_memory", "locomo", "locomo10.json")
    files = {"results": (str(results), results.read_bytes()), "questions": (str(questions), questions.read_bytes())}
    inputs = resolve_inputs(**files)
    metrics = ("judge_score", "exact_match_normalized", "token_f1_char")
    run = run_memory(inputs, MemoryConfig(metrics=metrics, ci_resamples=0))
    em_before = {r.question_id: r.scores["exact_match_normalized"] for r in run.rows}
    n = len(run.rows)
    store = ReviewStore(tmp_path / "review.sqlite")
    session = store.create_session("mem0 locomo", "memory", memory_items(run.results, run.rows), created_by="lead",
                                   uploads=[store.put_upload(results.name, files["results"][1])])
    for item in store.items(session.id):
        p = item.payload
        if p["scores"].get("exact_match_normalized") == 0:
            store.save_decision(item.id, "rule", label="acceptable_variant" if rule(p["ground_truth"], p["prediction"])
                                else "model_error")
    store.engine.dispose()
    out = tmp_path / "p.jsonl"
    assert main(["review", "patch", "--db", str(tmp_path / "review.sqlite"), "--session", "mem0 locomo",
                 "--gt", str(results), "--out", str(out)]) == 0
    entries = read_gt_patch_file(out).entries
    # the count from the raw file: mem0's answer/response pairs where the response contains the answer
    raw = json.loads(results.read_text(encoding="utf-8"))
    contained = [(str(q["answer"]), str(q["response"])) for rows in raw.values() for q in rows
                 if "answer" in q and rule(str(q["answer"]), str(q["response"]))]
    accepted = {e.record_id for e in entries}
    assert all(e.op == "add_answer" for e in entries) and 0 < len(accepted) <= len(contained)
    assert all(em_before[q] == 0 for q in accepted)
    capsys.readouterr()
    report = tmp_path / "m.json"
    assert main(["memory", "--results", str(results), "--questions", str(questions), "--metrics", ",".join(metrics),
                 "--gt-patch", str(out), "--ci-resamples", "200", "--out", str(report)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(report.read_text(encoding="utf-8"))
    # every accepted answer is that question's prediction: its EM becomes 1, nothing else changes:
    # 201 of 1,540 right before, 94 responses contain their reference without being it: (201 + 94) / 1540
    assert (n, sum(em_before.values()), len(accepted)) == (1540, 201, 94)
    expected = (sum(em_before.values()) + len(accepted)) / n
    assert data["metrics"]["overall"]["exact_match_normalized"] == pytest.approx(expected)
    # the stored judge labels (mem0's llm_score) stand: the GT was not replaced
    assert data["metrics"]["overall"]["judge_score"] == pytest.approx(run.metrics["overall"]["judge_score"])
    effect = data["gt_patch"]["effect"]["changes"][0]
    em = next(m for m in effect["metrics"] if m["metric"] == "exact_match_normalized")
    assert em["mcnemar"]["only_b"] == len(accepted) and em["mcnemar"]["only_a"] == 0
    assert f"{len(accepted)} applied" in printed
