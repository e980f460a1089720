"""Issue 29 on real long-memory data: a review that accepts 4 of mem0's 1,540 LoCoMo answers changes 4
records; the paired bootstrap's p-value of that change is flagged (4 discordant pairs < 25), and the
randomization test is exact (all 2^4 sign flips) and equals McNemar's exact test, 2 / 16 = 0.125.
Then ``review estimate`` on the same session: a result from the judge scores the items carry.

And the issue's 5-story case on the public fairy tales (a narrative comparison of two systems): the
bootstrap p-value flagged, the sign-flip p exact and equal to a brute-force enumeration."""

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


FIVE_STORIES = ("CH_002_牛郎织女", "CH_003_孟姜女哭长城", "CH_004_梁山伯与祝英台", "CH_005_白蛇传", "CH_006_花木兰从军")


def test_five_fairytale_stories_the_sign_flip_p_is_exact_and_the_bootstrap_flagged(tmp_path):
    """The issue's 5-story case on the public fairy tales: the older (v2) annotation of five stories as system A,
    the v3 GT itself as system B, scored against v3.  B is higher on 4 stories and ties on one (v2 scores 1.0 on
    白蛇传), as in the issue (bootstrap p 0.0004 where the randomization test gave 0.1244).  The comparison HTML of
    ``narrative --comparison-html`` flags the bootstrap p-value and reports the exact sign-flip p, which equals a
    brute-force enumeration of the 2^5 sign assignments written here: 2 / 16 = 0.125."""
    import itertools
    import shutil

    from evaluators.narrative.batch import compare_two_systems
    from evaluators.narrative.run import NarrativeInputs, run_narrative

    gt, v2, oracle = (tmp_path / d for d in ("gt", "v2", "oracle"))
    for d in (gt, v2, oracle):
        d.mkdir()
    for s in FIVE_STORIES:
        src = require_shared("fairytales", "gt_v3", f"{s}_v3.json")
        shutil.copy(src, gt / src.name)
        shutil.copy(src, oracle / f"{s}_prediction.json")
        shutil.copy(require_shared("fairytales", "gt_v2", f"{s}_v2.json"), v2 / f"{s}_prediction.json")
    report, html = tmp_path / "v2.json", tmp_path / "cmp.html"
    assert main(["narrative", "--gt", str(gt), "--pred", str(v2), "--other-pred", str(oracle), "--out", str(report),
                 "--comparison-html", str(html), "--quiet"]) == 0
    scores = {d["story_id"]: d["result"]["overall_score"] for d in json.loads(report.read_text("utf-8"))["documents"]}
    assert len(scores) == 5
    # B (the GT itself) scores 1 on every story: the differences are 1 - v2's score
    diffs = [1.0 - v for v in scores.values()]
    assert sum(d > 1e-12 for d in diffs) == 4 and sum(abs(d) <= 1e-12 for d in diffs) == 1
    observed = abs(sum(diffs))
    brute = sum(abs(sum(s * d for s, d in zip(signs, diffs))) >= observed - 1e-9
                for signs in itertools.product((1, -1), repeat=5)) / 2 ** 5
    assert brute == 0.125
    text = html.read_text(encoding="utf-8")
    assert "p, exact sign-flip" in text and "0.1250" in text
    assert ("[!] bootstrap p-value not trustworthy on a small sample (5 items &lt; 30; 4 discordant pairs (items "
            "whose scores differ) &lt; 25)") in text
    # the same comparison from the library the page's Compare view and the CLI call: the bootstrap p-value (small,
    # as in the issue) flagged, the randomization test exact and equal to the enumeration
    batches = {name: run_narrative(NarrativeInputs.from_paths(str(gt), str(pred)))
               for name, pred in (("v2", v2), ("oracle", oracle))}
    paired = compare_two_systems(batches, "v2", "oracle", n_resamples=2000)
    assert paired.n_paired == 5 and (paired.bootstrap.won, paired.bootstrap.lost, paired.bootstrap.tied) == (4, 0, 1)
    assert paired.bootstrap.p_value < 0.125 and paired.bootstrap.small_sample.startswith("5 items < 30")
    assert paired.randomization.exact and paired.randomization.p_value == brute
    assert paired.bootstrap.delta == pytest.approx(sum(diffs) / 5)
