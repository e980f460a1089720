"""QA scores after a GT patch (evaluators.qa.patch): re-scoring, rebuilt aggregates, before/after, rank flips."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.io.gt_patch import PatchEntry, file_sha256, write_gt_patch
from evaluators.qa import QAConfig, evaluate_qa
from evaluators.qa.patch import gold_answers, patch_report, qa_corrections

# Two systems, four questions (two English, two Chinese).  Before: A right on q1, q2, q3 (EM 3/4);
# B right on q1 only, but B's answers to q2..q4 are variants a reviewer accepts.
ROWS = [
    {"id": "q1", "question": "Capital of France?", "answer": "Paris", "system": "A", "prediction": "Paris"},
    {"id": "q2", "question": "Largest planet?", "answer": "Jupiter", "system": "A", "prediction": "Jupiter"},
    {"id": "q3", "question": "中国的首都?", "answer": "北京", "system": "A", "prediction": "北京"},
    {"id": "q4", "question": "长江流经几个省?", "answer": "十一个", "system": "A", "prediction": "十个"},
    {"id": "q1", "question": "Capital of France?", "answer": "Paris", "system": "B", "prediction": "Paris"},
    {"id": "q2", "question": "Largest planet?", "answer": "Jupiter", "system": "B", "prediction": "planet Jupiter"},
    {"id": "q3", "question": "中国的首都?", "answer": "北京", "system": "B", "prediction": "北京市"},
    {"id": "q4", "question": "长江流经几个省?", "answer": "十一个", "system": "B", "prediction": "11个"},
]
DATA = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS).encode("utf-8")
DIGEST = file_sha256(DATA)
CONFIG = QAConfig(ci_resamples=200)


def add(rid, answer, old):
    return PatchEntry(rid, DIGEST, "add_answer", (old,), (answer,), "ann", "acceptable_variant", "s")


ENTRIES = [add("q2", "planet Jupiter", "Jupiter"), add("q3", "北京市", "北京"), add("q4", "11个", "十一个"),
           PatchEntry("q4", DIGEST, "replace", ("十一个", "11个"), ("十个", "11个"), "carol", "gt_error: 10", "s")]


def test_no_patch_rebuilds_the_same_aggregates():
    report = evaluate_qa(DATA, "runs.jsonl", CONFIG)
    same, app = patch_report(report, [], DIGEST)
    assert app.changes == () and same.overall == report.overall
    assert same.by_group == report.by_group and same.by_lang == report.by_lang
    assert list(same.records) == list(report.records)


def test_no_patch_rebuilds_a_factcheck_report_too():
    rows = [{"id": f"c{i}", "claim": f"claim {i}", "label": g, "prediction": p}
            for i, (g, p) in enumerate([("SUPPORTS", "T"), ("REFUTES", "T"), ("SUPPORTS", "F"), ("REFUTES", "maybe")])]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    report = evaluate_qa(data, "fc.jsonl", QAConfig(task="factcheck", ci_resamples=100))
    same, _ = patch_report(report, [], file_sha256(data))
    assert same.classification == report.classification and same.classification_ci == report.classification_ci
    assert same.unparsed_predictions == report.unparsed_predictions and same.overall == report.overall
    # a GT error corrected: c1 is really T (SUPPORTS) -> the prediction T is now right: accuracy 1/4 -> 2/4
    fixed, app = patch_report(report, [PatchEntry("c1", file_sha256(data), "replace", ("REFUTES",), ("SUPPORTS",),
                                                  "carol")], file_sha256(data))
    assert app.n_applied == 1 and fixed.overall.exact_match == 0.5 and report.overall.exact_match == 0.25
    assert fixed.classification.accuracy == 0.5


def test_patch_rescores_every_system_of_a_question_and_flags_the_rank_flip():
    report = evaluate_qa(DATA, "runs.jsonl", CONFIG)
    assert gold_answers(report.records)["q3"] == ("北京",)
    assert (report.by_group["A"].exact_match, report.by_group["B"].exact_match) == (0.75, 0.25)
    patched, app = patch_report(report, ENTRIES, DIGEST)
    assert app.answers == {"q2": ("Jupiter", "planet Jupiter"), "q3": ("北京", "北京市"), "q4": ("十个", "11个")}
    # after: A right on q1, q2, q3 and now q4 ("十个" is the corrected GT) -> 4/4;
    # B right on q1, q2, q3, q4 -> 4/4. Ties are not flips; F1 tells them apart below.
    assert patched.by_group["A"].exact_match == 1.0 and patched.by_group["B"].exact_match == 1.0
    assert patched.overall.exact_match == 1.0 and patched.overall.exact_match_ci_low == 1.0
    r = {(x.group, x.id): x for x in patched.records}
    assert r[("B", "q3")].lang == "zh" and r[("B", "q3")].gold_answers == ("北京", "北京市")
    assert r[("A", "q1")] == next(x for x in report.records if (x.group, x.id) == ("A", "q1"))  # untouched
    effect = qa_corrections([report], [patched], [("runs.jsonl", app)], n_resamples=200).effect
    a, b = effect.changes
    assert (a.run, a.n_paired, a.n_changed, b.n_changed) == ("A", 4, 1, 3)
    em_a, em_b = a.metric("exact_match"), b.metric("exact_match")
    assert (em_a.before.estimate, em_a.after.estimate) == (0.75, 1.0)
    assert em_b.change.delta == pytest.approx(0.75) and em_b.mcnemar.only_b == 3
    assert b.metric("token_f1").mcnemar is None  # McNemar only for the binary metric
    assert effect.rank_flips == ()  # 0.75 vs 0.25 -> 1.0 vs 1.0: a tie, not a reversal
    # with only the variants accepted (no GT correction of q4): A 3/4, B 4/4 -> B ahead: a flip
    flipped, app = patch_report(report, ENTRIES[:3], DIGEST)
    effect = qa_corrections([report], [flipped], [("runs.jsonl", app)], n_resamples=200).effect
    em_flip = [f for f in effect.rank_flips if f.metric == "exact_match"]
    assert [(f.higher_before, f.higher_after, f.before, f.after) for f in em_flip] == [("A", "B", (0.75, 0.25),
                                                                                         (0.75, 1.0))]


def test_qa_cli_prints_before_after_and_refuses_another_file(tmp_path, capsys):
    gt = tmp_path / "runs.jsonl"
    gt.write_bytes(DATA)
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch(ENTRIES[:3]) + "{broken\n", encoding="utf-8")
    out = tmp_path / "r.json"
    assert main(["qa", "--input", str(gt), "--gt-patch", str(patch), "--ci-resamples", "100",
                 "--output-file", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"{patch}:4:2: invalid JSON" in captured.err  # the bad line is located; the good ones apply
    assert "RANK FLIP (EM): A was ahead of B (75.00% vs 25.00%); after the corrections B is ahead" in captured.out
    assert json.loads(out.read_text())["overall"]["exact_match"] == pytest.approx(7 / 8)
    other = tmp_path / "other.jsonl"
    other.write_bytes(DATA.replace(b"Paris", b"Lyon"))
    assert main(["qa", "--input", str(other), "--gt-patch", str(patch)]) == 2
    assert "made for the GT file with sha256 " + DIGEST[:12] in capsys.readouterr().err
    assert main(["qa", "--input", str(gt), "--gt-patch", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read GT patch" in capsys.readouterr().err


def test_html_report_shows_before_and_after(tmp_path, capsys):
    gt = tmp_path / "runs.jsonl"
    gt.write_bytes(DATA)
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch(ENTRIES[:3]), encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", "--input", str(gt), "--gt-patch", str(patch), "--ci-resamples", "100",
                 "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "Review corrections: before and after" in html and "3 applied" in html
    # B: EM 1/4 before, 4/4 after; the flip is stated
    assert "Rank flip (EM): A was ahead of B (0.750 vs 0.250); after the corrections B is ahead (1.000 vs 0.750)" in html
    # without a patch, no such section
    assert main(["report", "--input", str(gt), "--ci-resamples", "0", "--out", str(out)]) == 0
    assert "Review corrections" not in out.read_text(encoding="utf-8")
