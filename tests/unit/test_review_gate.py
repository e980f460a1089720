"""``review gate`` exit codes, ``review patch`` and ``review estimate`` (evaluators/cli/review_numbers.py)."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.io.gt_patch import PatchEntry, file_sha256, read_gt_patch_file, write_gt_patch
from evaluators.review import ReviewStore
from evaluators.review.items import qa_items
from evaluators.qa import QAConfig, evaluate_qa_file

# 40 questions, half English half Chinese.  The baseline answers all of them exactly; the candidate
# answers 10 exactly and gives acceptable variants ("... city" / "...市") for the other 30.
GOLD = [(f"e{i}", f"Town{i}") for i in range(20)] + [(f"z{i}", f"城{i}") for i in range(20)]


def variant(answer: str) -> str:
    return answer + "市" if answer.startswith("城") else answer + " city"


@pytest.fixture
def files(tmp_path):
    gt = tmp_path / "gt.jsonl"
    gt.write_text("".join(json.dumps({"id": i, "question": f"where {i}?", "answer": a}, ensure_ascii=False) + "\n"
                          for i, a in GOLD), encoding="utf-8")
    base = tmp_path / "baseline.json"
    base.write_text(json.dumps({i: a for i, a in GOLD}, ensure_ascii=False), encoding="utf-8")
    cand = tmp_path / "candidate.json"
    cand.write_text(json.dumps({i: a if n % 4 == 0 else variant(a) for n, (i, a) in enumerate(GOLD)},
                               ensure_ascii=False), encoding="utf-8")
    return gt, base, cand


def gate(gt, base, cand, *extra):
    return main(["review", "gate", "--gt", str(gt), "--baseline", str(base), "--candidate", str(cand),
                 "--resamples", "2000", *extra])


def test_gate_fails_a_significantly_worse_candidate_and_passes_after_review(files, tmp_path, capsys):
    gt, base, cand = files
    # EM 40/40 vs 10/40: McNemar 30 discordant pairs, all for the baseline: p = 2 / 2**30
    assert gate(gt, base, cand, "--test", "mcnemar") == 1
    out = capsys.readouterr().out
    assert "baseline" in out and "100.00%" in out and "25.00%" in out and "delta -75.00 points" in out
    assert f"p = {2 / 2**30:.4g}" in out and out.rstrip().endswith("FAIL: the candidate is significantly below "
                                                                   "the baseline")
    assert gate(gt, base, cand) == 1  # paired bootstrap: no resample reaches 0
    capsys.readouterr()
    # the same candidate against itself: no difference, exit 0
    assert gate(gt, cand, cand) == 0
    assert "PASS" in capsys.readouterr().out
    # review: the 30 variants are acceptable -> patch -> the candidate equals the baseline: exit 0
    digest = file_sha256(gt)
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch(PatchEntry(i, digest, "add_answer", (a,), (variant(a),), "ann")
                                    for n, (i, a) in enumerate(GOLD) if n % 4), encoding="utf-8")
    assert gate(gt, base, cand, "--gt-patch", str(patch)) == 0
    out = capsys.readouterr().out
    assert "after 30 review correction(s)" in out and "delta +0.00 points" in out
    # a patch for another GT file: unusable input, exit 2
    other = tmp_path / "other.jsonl"
    other.write_text(gt.read_text(encoding="utf-8").replace("Town1", "Town 1"), encoding="utf-8")
    assert gate(other, base, cand, "--gt-patch", str(patch)) == 2
    assert "made for the GT file" in capsys.readouterr().err


def test_gate_on_two_record_files_and_bad_arguments(files, tmp_path, capsys):
    gt, base, cand = files
    preds = {"b": json.loads(base.read_text(encoding="utf-8")), "c": json.loads(cand.read_text(encoding="utf-8"))}
    paths = {}
    for name, p in preds.items():   # each file holds the GT and one system's predictions
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps({"id": i, "answer": a, "prediction": p[i]}, ensure_ascii=False)
                                       + "\n" for i, a in GOLD), encoding="utf-8")
    argv = ["review", "gate", "--baseline", str(paths["b"]), "--candidate", str(paths["c"]), "--resamples", "500"]
    assert main(argv) == 1
    # a candidate only a little worse (39/40 vs 40/40) is not significant: exit 0
    worse_by_one = tmp_path / "one.jsonl"
    worse_by_one.write_text(paths["b"].read_text(encoding="utf-8").replace('"prediction": "Town3"',
                                                                           '"prediction": "Town 3x"'),
                            encoding="utf-8")
    capsys.readouterr()
    assert main(["review", "gate", "--baseline", str(paths["b"]), "--candidate", str(worse_by_one),
                 "--test", "mcnemar"]) == 0
    assert "delta -2.50 points" in capsys.readouterr().out  # McNemar p = 1 with one discordant pair
    assert main(["review", "gate", "--baseline", str(paths["b"])]) == 2
    assert main(["review", "gate", "--baseline", "nope.jsonl", "--candidate", str(paths["c"])]) == 2
    assert main(argv + ["--test", "mcnemar", "--metric", "token_f1"]) == 2
    assert "binary outcomes" in capsys.readouterr().err


def test_review_patch_and_estimate_commands(files, tmp_path, capsys):
    gt, base, cand = files
    # a session over the candidate's answers (a single file: GT + the candidate's prediction)
    run = tmp_path / "run.jsonl"
    cand_preds = json.loads(cand.read_text(encoding="utf-8"))
    run.write_text("".join(json.dumps({"id": i, "answer": a, "prediction": cand_preds[i]}, ensure_ascii=False) + "\n"
                           for i, a in GOLD), encoding="utf-8")
    report = evaluate_qa_file(run, QAConfig(ci_resamples=0))
    db = tmp_path / "review.sqlite"
    store = ReviewStore(db)
    items = qa_items(report)
    session = store.create_session("cand", "qa", items[:20], created_by="lead")  # 20 of 40 reviewed
    for item in store.items(session.id):
        store.save_decision(item.id, "ann", label="acceptable_variant")   # every reviewed answer is right
    out = tmp_path / "p.jsonl"
    assert main(["review", "patch", "--db", str(db), "--session", "cand", "--gt", str(run), "--out", str(out)]) == 0
    entries = read_gt_patch_file(out).entries
    # 20 reviewed, 15 of them variants (positions 1, 2, 3, 5, ... not multiples of 4); the 5 exact ones already match
    # but are added too (the reviewer accepted them; applying them changes nothing)
    # keyed by record and GT (version 3), not by the file's digest: they apply to every run of these questions
    assert len(entries) == 20 and all(e.keyed and not e.gt_digest for e in entries)
    capsys.readouterr()
    assert main(["review", "estimate", "--db", str(db), "--session", "cand", "--gt", str(run)]) == 0
    text = capsys.readouterr().out
    # human labels: 20 x 1 -> human-only 100% [100%, 100%]; metric alone: EM 10/40 = 25%
    assert "20 of 40 records reviewed" in text and "metric alone (no review):     25.00%" in text
    assert "human labels only:            100.00% [100.00%, 100.00%]" in text
    # metric against people: EM right on 5 of the 20 reviewed (positions 0, 4, 8, 12, 16), people say all 20 right
    assert "accuracy 25.00%" in text and "metric: wrong             0            15" in text
    assert main(["review", "estimate", "--db", str(db), "--session", "nope", "--gt", str(run)]) == 2
    assert main(["review", "patch", "--db", str(db), "--session", "cand"]) == 2
