"""Issue 29 on real long-memory data: a review that accepts 4 of mem0's 1,540 LoCoMo answers changes 4
records; the paired bootstrap's p-value of that change is flagged (4 discordant pairs < 25), and the
randomization test is exact (all 2^4 sign flips) and equals McNemar's exact test, 2 / 16 = 0.125.
Then ``review estimate`` on the same session: a result from the judge scores the items carry."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.memory.inputs import resolve_inputs
from evaluators.memory.run import MemoryConfig, run_memory
from evaluators.review.items import memory_items
from evaluators.review.store import ReviewStore
from tests.conftest import require_shared
from tests.real.test_task_patches_real import rule

pytestmark = pytest.mark.realdata


def test_four_changed_answers_of_mem0_locomo(tmp_path, capsys):
    results = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    questions = require_shared("long_memory", "locomo", "locomo10.json")
    files = {"results": (str(results), results.read_bytes()), "questions": (str(questions), questions.read_bytes())}
    metrics = ("judge_score", "exact_match_normalized", "token_f1_char")
    run = run_memory(resolve_inputs(**files), MemoryConfig(metrics=metrics, ci_resamples=0))
    db = tmp_path / "review.sqlite"
    store = ReviewStore(db)
    session = store.create_session("mem0 four", "memory", memory_items(run.results, run.rows), created_by="lead",
                                   uploads=[store.put_upload(results.name, files["results"][1])])
    accepted = 0
    for item in store.items(session.id):
        p = item.payload
        if accepted < 4 and p["scores"].get("exact_match_normalized") == 0 and rule(p["ground_truth"], p["prediction"]):
            store.save_decision(item.id, "rule", label="acceptable_variant")
            accepted += 1
    store.engine.dispose()
    patch = tmp_path / "p.jsonl"
    assert main(["review", "patch", "--db", str(db), "--session", "mem0 four", "--gt", str(results),
                 "--out", str(patch)]) == 0
    report = tmp_path / "m.json"
    assert main(["memory", "--results", str(results), "--questions", str(questions), "--metrics", ",".join(metrics),
                 "--gt-patch", str(patch), "--ci-resamples", "2000", "--out", str(report)]) == 0
    printed = capsys.readouterr().out
    change = json.loads(report.read_text(encoding="utf-8"))["gt_patch"]["effect"]["changes"][0]
    em = next(m for m in change["metrics"] if m["metric"] == "exact_match_normalized")
    assert (em["mcnemar"]["only_b"], em["mcnemar"]["only_a"]) == (4, 0)
    assert em["change"]["small_sample"] == "4 discordant pairs (items whose scores differ) < 25"
    # the bootstrap: 2 x P(no changed record drawn), about 2 e^-4 = 0.037 (Monte Carlo): below what 4 changes can show
    assert em["change"]["p_value"] < 0.125
    assert em["randomization"]["exact"] and em["randomization"]["p_value"] == 0.125 == em["mcnemar"]["p_value"]
    assert "[!]" in printed and "McNemar exact p = 0.125" in printed
    # the reviewed estimate from the same session: 4 labels only -> a result (exit 0), from the judge scores
    capsys.readouterr()
    assert main(["review", "estimate", "--db", str(db), "--session", "mem0 four"]) == 0
    out = capsys.readouterr().out
    assert "4 of 1540 records reviewed" in out and "sample: uniformly random sample" in out
