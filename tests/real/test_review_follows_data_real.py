"""Issue 29 acceptance on the shared HotpotQA file: corrections belong to the dataset, not to the file a
session was made from.  The baseline run (one system's 50 answers) is reviewed, ten GT answers are
corrected; the patch then corrects both sides of ``review gate`` and ``compare``:

- a candidate equal to the baseline but for one trailing space passes the gate with delta 0 (before: the
  candidate kept the uncorrected GT and failed);
- the delta between two different systems equals the hand computation (official SQuAD v1.1 functions)
  with the corrected GT for both;
- a session made from the file that holds every system's run gives a patch that applies to a file of one run.
"""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.io.gt_patch import read_gt_patch_file
from evaluators.qa import QAConfig, evaluate_qa_file
from evaluators.review import ReviewStore
from evaluators.review.items import qa_items
from tests.conftest import require_shared
from tests.helpers.official import official_qa_metrics

pytestmark = pytest.mark.realdata

FILE = ("qa_factcheck", "hotpotqa_vatsalp04", "comparison_20251210_140921", "all_per_question.json")
BASE, OTHER = "Decomp_FullPipeline", "Decomp_RelaxedInitial"
N_CORRECTED = 10


def write_run(path, rows):
    path.write_text("".join(json.dumps({k: r[k] for k in ("question_id", "question", "gold_answer",
                                                          "predicted_answer")}, ensure_ascii=False) + "\n"
                            for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    data = json.loads(require_shared(*FILE).read_text(encoding="utf-8"))
    tmp = tmp_path_factory.mktemp("follows")
    base = write_run(tmp / "base.jsonl", data[BASE])
    cand_rows = [dict(r) for r in data[BASE]]
    cand_rows[3]["predicted_answer"] += " "              # the candidate: one trailing space
    cand = write_run(tmp / "cand.jsonl", cand_rows)
    other = write_run(tmp / "other.jsonl", data[OTHER])
    # the review of the baseline: its first 10 wrong-by-EM answers are right and the GT is wrong (a scripted
    # adjudicator types the baseline's answer as the corrected GT); the rest are model errors
    store = ReviewStore(tmp / "review.sqlite")
    session = store.create_session("base review", "qa", qa_items(evaluate_qa_file(base, QAConfig(ci_resamples=0))),
                                   created_by="lead")
    corrected = {}
    for item in store.items(session.id):
        p = item.payload
        if p["exact_match"] == 0 and len(corrected) < N_CORRECTED:
            store.adjudicate(item.id, "lead", "gt_error", corrected_answer=p["prediction"])
            corrected[p["id"]] = p["prediction"]
        else:
            store.save_decision(item.id, "ann", label="model_error")
    patch = tmp / "base.patch.jsonl"
    assert main(["review", "patch", "--db", str(tmp / "review.sqlite"), "--session", "base review", "--gt", str(base),
                 "--out", str(patch)]) == 0
    return data, base, cand, other, patch, corrected, tmp


def hand(rows, corrected):
    """EM and F1 means with the official SQuAD v1.1 functions; a corrected record's GT is its corrected answer."""
    official = official_qa_metrics()
    em = f1 = 0.0
    for r in rows:
        golds = [corrected.get(r["question_id"], r["gold_answer"])]
        em += official.metric_max_over_ground_truths(official.exact_match_score, r["predicted_answer"], golds)
        f1 += official.metric_max_over_ground_truths(official.f1_score, r["predicted_answer"], golds)
    return em / len(rows), f1 / len(rows)


def test_the_patch_is_keyed_by_record_and_gt(runs):
    _, base, _, _, patch, corrected, _ = runs
    entries = read_gt_patch_file(patch).entries
    assert len(entries) == N_CORRECTED and {e.record_id for e in entries} == set(corrected)
    assert all(e.version == 3 and e.keyed and e.op == "replace" and not e.gt_digest for e in entries)


def test_gate_with_the_baselines_patch_corrects_both_sides(runs, capsys):
    data, base, cand, other, patch, corrected, _ = runs
    capsys.readouterr()
    # one trailing space: every record ties, delta 0, pass (before: the candidate kept the uncorrected GT of the
    # 10 questions: -20 points, p < 0.0001, exit 1)
    assert main(["review", "gate", "--baseline", str(base), "--candidate", str(cand), "--gt-patch", str(patch)]) == 0
    out = capsys.readouterr().out
    assert f"after {N_CORRECTED} review correction(s)" in out and "delta +0.00 points" in out
    assert "candidate higher 0, lower 0, tied 50" in out and "PASS" in out
    # two different systems: the delta is the hand computation with the corrected GT for both
    (em_a, _), (em_b, _) = hand(data[BASE], corrected), hand(data[OTHER], corrected)
    code = main(["review", "gate", "--baseline", str(base), "--candidate", str(other), "--gt-patch", str(patch)])
    out = capsys.readouterr().out
    assert f"delta {100 * (em_b - em_a):+.2f} points" in out, out
    assert code == (1 if "FAIL" in out else 0)
    # F1 too
    (_, f1_a), (_, f1_b) = hand(data[BASE], corrected), hand(data[OTHER], corrected)
    main(["review", "gate", "--baseline", str(base), "--candidate", str(other), "--gt-patch", str(patch),
          "--metric", "token_f1"])
    assert f"delta {100 * (f1_b - f1_a):+.2f} points" in capsys.readouterr().out


def test_compare_with_the_baselines_patch_corrects_both_runs(runs, capsys):
    data, base, _, other, patch, corrected, tmp = runs
    out = tmp / "cmp.json"
    capsys.readouterr()
    assert main(["compare", "--input", str(base), "--input", str(other), "--gt-patch", str(patch),
                 "--ci-resamples", "200", "--output-file", str(out)]) == 0
    printed = capsys.readouterr().out
    # each run's 10 corrections are applied (before: "other.jsonl: 0 correction(s)")
    assert f"base.jsonl: {N_CORRECTED} correction(s): {N_CORRECTED} applied" in printed
    assert f"other.jsonl: {N_CORRECTED} correction(s): {N_CORRECTED} applied" in printed
    scores = [(s["exact_match"], s["token_f1"]) for s in json.loads(out.read_text(encoding="utf-8"))["scores"]]
    assert len(scores) == 2
    assert scores[0] == pytest.approx(hand(data[BASE], corrected))
    assert scores[1] == pytest.approx(hand(data[OTHER], corrected))


def test_a_session_made_from_the_file_of_every_run_corrects_one_run(runs, tmp_path, capsys):
    data, base, _, other, _, _, _ = runs
    path = require_shared(*FILE)
    store = ReviewStore(tmp_path / "review.sqlite")
    session = store.create_session("all runs", "qa", qa_items(evaluate_qa_file(path, QAConfig(ci_resamples=0))),
                                   created_by="lead")
    first = store.items(session.id)[0]
    store.adjudicate(first.id, "lead", "gt_error", corrected_answer="a corrected answer")
    patch = tmp_path / "all.patch.jsonl"
    assert main(["review", "patch", "--db", str(tmp_path / "review.sqlite"), "--session", "all runs", "--gt",
                 str(path), "--out", str(patch)]) == 0
    capsys.readouterr()
    for run in (base, other):   # before: refused for each (made for the other file's SHA-256), exit 2
        assert main(["qa", "--input", str(run), "--gt-patch", str(patch)]) == 0
        assert "1 correction(s): 1 applied" in capsys.readouterr().out


def test_the_next_run_reviews_only_its_changed_answers(runs, tmp_path, capsys):
    """Run 2 of the baseline's questions answers 15 of 50 (30%) differently (the first 15 questions where
    another system's answer differs): *review what's new* holds those 15, the other 35 carry run 1's
    verdicts, review debt is 15, and run 1's patch corrects run 2."""
    data, base, _, _, patch, corrected, _ = runs
    run2_rows = [dict(r) for r in data[BASE]]
    changed = []
    for row, other in zip(run2_rows, data[OTHER]):
        if len(changed) < 15 and other["predicted_answer"].strip() != row["predicted_answer"].strip():
            row["predicted_answer"] = other["predicted_answer"]
            changed.append(row["question_id"])
    assert len(changed) == 15
    run2 = write_run(tmp_path / "run2.jsonl", run2_rows)
    db = str(tmp_path / "review.sqlite")
    assert main(["review", "create", "--db", db, "--input", str(base), "--session", "run 1", "--by", "lead"]) == 0
    store = ReviewStore(db)
    verdicts = {}
    for item in store.items(store.session_by_name("run 1").id):
        label = "correct" if item.payload["exact_match"] else "model_error"
        store.save_decision(item.id, "ann", label=label)
        verdicts[item.payload["id"]] = label
    capsys.readouterr()
    assert main(["review", "debt", "--db", db, "--input", str(run2)]) == 0
    assert capsys.readouterr().out.splitlines() == ["system\trecords\treviewed\tdebt", "(one run)\t50\t35\t15"]
    assert main(["review", "create", "--db", db, "--input", str(run2), "--session", "run 2", "--new-only",
                 "--by", "lead", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "session run 2: 15 item(s) to review of 50" in out and "carried forward: 35 record(s)" in out
    assert sorted(i.payload["id"] for i in store.items(store.session_by_name("run 2").id)) == sorted(changed)
    carried = [line.split("\t") for line in out.splitlines() if line.startswith("  carried")]
    assert len(carried) == 35 and all(label == verdicts[rid] for _, rid, _, label, _ in carried)
    # the baseline review's patch (10 GT corrections) applies to run 2: every correction is for one of its records
    assert main(["qa", "--input", str(run2), "--gt-patch", str(patch)]) == 0
    assert f"run2.jsonl: {N_CORRECTED} correction(s): {N_CORRECTED} applied" in capsys.readouterr().out
