"""Runs re-scored on the current GT version (evaluators.runs.rescore): five runs with the same predictions and a
GT patch between runs 3 and 4 that changes 2% of the answers."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.io.gt_patch import PatchEntry, record_key, write_gt_patch
from evaluators.runs import RunStore
from evaluators.runs.rescore import on_current_gt

N = 200


def _files(tmp_path):
    """200 questions (even ids English, odd Chinese); the prediction is right on the first 100; the patch replaces
    the GT of q100..q103 (2% of the answers) with the prediction given there ("wrong" ones become right)."""
    rows = []
    for i in range(N):
        answer = f"answer {i}" if i % 2 == 0 else f"答案{i}"
        rows.append({"id": f"q{i}", "question": f"question {i}" if i % 2 == 0 else f"问题{i}", "answer": answer,
                     "prediction": answer if i < 100 else ("guess" if i % 2 == 0 else "猜测")})
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    entries = [PatchEntry(r["id"], "", "replace", (r["answer"],), (r["prediction"],), "carol", "gt_error", "s",
                          gt_key=record_key(r["id"], (r["answer"],))) for r in rows[100:104]]
    patch = tmp_path / "fix.jsonl"
    patch.write_text(write_gt_patch(entries), encoding="utf-8")
    return str(data), str(patch)


def _json(capsys, argv):
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_as_scored_shows_the_step_the_current_gt_does_not(tmp_path, capsys):
    data, patch = _files(tmp_path)
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    for k in range(1, 6):
        extra = ["--gt-patch", patch] if k >= 4 else []
        assert main(["qa", data, "--log", "--run-name", f"r{k}", "--db", db, "--ci-resamples", "0", *extra]) == 0
    store = RunStore(db)
    assert [r.dataset_version for r in store.runs()] == [0, 0, 0, 1, 1]
    assert len({r.dataset_digest for r in store.runs()}) == 1  # the raw GT is the dataset, patched or not
    assert store.current_version("qa.jsonl")[0] == 1

    argv = ["runs", "trend", "--metric", "exact_match", "--db", db, "--format", "json", "--ci-resamples", "1000",
            "--test", "bootstrap"]
    scored = _json(capsys, argv)
    means = [p["mean"] for p in scored["points"]]
    assert means == [0.5, 0.5, 0.5, 0.52, 0.52]  # 100 of 200 right, then 104 of 200
    step = scored["steps"][2]
    assert step["tests"][0]["delta"] == pytest.approx(0.02)  # 4 of 200
    assert step["tests"][0]["ci_low"] > 0  # 4 items gained, none lost: every resample's mean difference > 0

    current = _json(capsys, argv + ["--current-gt"])
    assert [p["mean"] for p in current["points"]] == [0.52] * 5
    t = current["steps"][2]["tests"][0]
    assert t["delta"] == 0 and t["ci_low"] <= 0 <= t["ci_high"] and not current["steps"][2]["flagged"]

    # each re-scored run equals qa --gt-patch on the same file, value for value (r4 was logged that way)
    patched = store.load("r4").items
    for name in ("r1", "r2", "r3"):
        again, version = on_current_gt(store, name)
        assert version == 1 and again.items.digest() == patched.digest()
        assert again.items.values == patched.values and again.items.fields["ground_truth"][100] == ("guess",)
    assert on_current_gt(store, "r5")[0].items.digest() == patched.digest()  # already on v1: as logged
