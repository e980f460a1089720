"""Batch pairing and micro/macro totals, report writers and the `narrative` CLI."""

import csv
import io
import json
import subprocess
import sys

import pytest

from evaluators.io import InputFile
from evaluators.narrative.batch import evaluate_batch
from evaluators.reports.narrative import batch_markdown, document_markdown, mismatches_csv, to_json
from tests.conftest import ROOT
from tests.unit.narrative_builders import doc, event, rel, span

TEXT = "甲见乙。乙见丙。"


def _doc(chars, rels):
    return doc(TEXT, chars, [event("e", span(TEXT, "甲见乙。"), rels)])


A_GT = _doc([("甲", "", ""), ("乙", "", "")], [rel("甲", "乙", "Romance", "lover", "romantic")])
A_PRED = _doc([("甲", "", "")], [rel("甲", "乙", "Romance", "lover", "romantic")])          # chars 1/1 of 2
B_GT = _doc([("丙", "", ""), ("丁", "", ""), ("戊", "", "")], [])
B_PRED = _doc([("丙", "", ""), ("己", "", ""), ("庚", "", ""), ("辛", "", "")], [])             # chars 1 of 4 / 3


def f(name, d):
    return InputFile(name, json.dumps(d, ensure_ascii=False).encode("utf-8"))


@pytest.fixture(scope="module")
def batch():
    return evaluate_batch(
        [f("A_v3.json", A_GT), f("B_v3.json", B_GT), f("C_v3.json", A_GT), f("D_v3.json", A_GT)],
        [f("A_v3_prediction.json", A_PRED), f("B_pred.json", B_PRED), f("C_pred.json", A_PRED),
         InputFile("D_pred.json", b'{"characters": [}'), f("Z_pred.json", A_PRED)],
    )


def test_pairing_and_unusable_files(batch):
    assert [d.story_id for d in batch.documents] == ["A", "B", "C", "D"]
    assert batch.unpaired_pred == ["Z_pred.json"]
    d = batch.documents[3]
    assert d.result is None and d.error.file == "D_pred.json" and d.error.line == 1
    assert len(batch.scored) == 3  # the good pairs are still scored


def test_micro_pools_counts_and_macro_averages_documents(batch):
    # Character counts: A 1 matched / 1 predicted / 2 GT; B 1 / 4 / 3; C like A.
    # micro: P = 3/6, R = 3/7, F1 = 2 * (1/2)(3/7) / (1/2 + 3/7) = 6/13
    assert batch.micro["character_precision"] == pytest.approx(3 / 6)
    assert batch.micro["character_recall"] == pytest.approx(3 / 7)
    assert batch.micro["character_f1"] == pytest.approx(6 / 13)
    # macro: per-document F1 A = C = 2/3 (P 1, R 1/2), B = 2 * (1/4)(1/3) / (7/12) = 2/7
    assert batch.macro["character_f1"] == pytest.approx((2 / 3 + 2 / 7 + 2 / 3) / 3)
    # Relationships: B's GT has none (left out of the macro mean): macro over A and C only.
    assert batch.macro["n_documents"]["relationships"] == 2
    assert batch.macro["component_scores"]["relationships"] == 1.0


def test_reports(batch):
    md = batch_markdown(batch)
    assert "| **micro** (pooled counts) |" in md and "| **macro** (mean of documents) |" in md
    assert "Prediction without GT: Z_pred.json" in md  # a file name as it is: nothing in it means Markdown
    assert "narrative/v1" in md
    one = batch.scored[1]
    assert "# Evaluation report: B" in document_markdown(one)
    rows = list(csv.DictReader(io.StringIO(mismatches_csv(batch))))
    b_rows = [(r["field"], r["gt_value"], r["pred_value"]) for r in rows if r["document"] == "B"]
    assert ("missing_character", "丁", "") in b_rows and ("extra_character", "", "辛") in b_rows
    parsed = json.loads(to_json(batch))
    assert parsed["documents"][3]["error"]["file"] == "D_pred.json"


def test_csv_cells_cannot_start_formulas():
    gt = _doc([("=HYPERLINK(\"x\")", "", "")], [])
    pred = _doc([("+1", "", "")], [])
    b = evaluate_batch([f("X_v3.json", gt)], [f("X_pred.json", pred)])
    text = mismatches_csv(b)
    assert "'=HYPERLINK" in text and "'+1" in text


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "evaluators", "narrative", *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_cli_on_folders_writes_reports(tmp_path):
    gt_dir, pred_dir = tmp_path / "gt", tmp_path / "pred"
    gt_dir.mkdir()
    pred_dir.mkdir()
    (gt_dir / "A_v3.json").write_text(json.dumps(A_GT, ensure_ascii=False), encoding="utf-8")
    (pred_dir / "A_v3_prediction.json").write_text(json.dumps(A_PRED, ensure_ascii=False), encoding="gb18030")
    out = tmp_path / "report.json"
    p = _cli("--gt", str(gt_dir), "--pred", str(pred_dir), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert "A" in p.stdout and "[micro]" in p.stdout
    assert "decoded as gb18030" in p.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    # a single pair writes the document report: character F1 = 2 * 1 * .5 / 1.5
    assert report["component_scores"]["characters"] == pytest.approx(2 / 3)
    p = _cli("--gt", str(gt_dir), "--pred", str(pred_dir), "--format", "csv")
    assert p.stdout.splitlines()[-1].startswith("A,characters,")
    # --whole-batch: the batch's report for the one pair too (the page's "Whole batch" downloads)
    p = _cli("--gt", str(gt_dir), "--pred", str(pred_dir), "--out", str(out), "--whole-batch")
    assert p.returncode == 0, p.stderr
    whole = json.loads(out.read_text(encoding="utf-8"))
    assert [d["story_id"] for d in whole["documents"]] == ["A"]
    assert whole["documents"][0]["result"]["component_scores"] == report["component_scores"]


def test_cli_unusable_input_exits_2(tmp_path):
    p = _cli("--gt", str(tmp_path / "missing"), "--pred", str(tmp_path))
    assert p.returncode == 2 and "no such file or folder" in p.stderr
    (tmp_path / "g").mkdir()
    (tmp_path / "p").mkdir()
    (tmp_path / "g" / "A_v3.json").write_text("{}")
    (tmp_path / "p" / "B_pred.json").write_text("{}")
    p = _cli("--gt", str(tmp_path / "g"), "--pred", str(tmp_path / "p"))
    assert p.returncode == 2 and "no ground-truth/prediction pair" in p.stderr
    p = _cli("--gt", str(tmp_path / "g"), "--pred", str(tmp_path / "p"), "--weights", "plot=1")
    assert p.returncode == 2 and "unknown component" in p.stderr


def test_an_unexpected_failure_in_one_pair_keeps_the_others():
    from evaluators.narrative.batch import score_pairs

    bad = json.loads(json.dumps(A_PRED))
    bad["narrative_events"][0]["text_span"] = {"start": 2**63, "end": 2**63 + 10, "text": ""}
    b = score_pairs([("A", f("A_v3.json", A_GT), f("A_pred.json", A_PRED)),
                     ("B", f("B_v3.json", A_GT), f("B_pred.json", bad))])
    assert len(b.scored) == 2  # absurd offsets are a missing span, not a crash
    assert b.scored[1].alignment.pred_spans[0].status == "missing"


def test_markdown_report_makes_user_text_inert():
    gt = _doc([("<img src=x onerror=alert(1)>", "", ""), ("甲", "", "")], [])
    b = evaluate_batch([f("X_v3.json", gt)], [f("X_pred.json", _doc([("甲", "", "")], []))])
    md = document_markdown(b.scored[0])
    # HTML-escaped, then what Markdown would read backslash-escaped (evaluators.reports.escape.md)
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md


def test_system_labels_name_each_other_set_after_its_file_and_never_twice():
    from evaluators.narrative.batch import system_labels

    # the first keeps its name; "gpt4o.zip" -> "gpt4o"; a second "gpt4o.json" and one named as the first get "'"
    assert system_labels("gpt4o", ["qwen.zip", "gpt4o.json", "qwen.json", ".zip"]) == [
        "gpt4o", "qwen", "gpt4o'", "qwen'", "system 5"]
    assert system_labels("预测", []) == ["预测"]


def test_cli_comparison_needs_other_systems(tmp_path, capsys):
    from evaluators.cli import main
    from evaluators.demo import demo_path

    gt, pred = demo_path("narrative", "EN_001_lantern_keeper_v3.json"), demo_path(
        "narrative", "EN_001_lantern_keeper_prediction.json")
    assert main(["narrative", str(gt), str(pred), "--comparison-html", str(tmp_path / "c.html"), "--quiet"]) == 2
    assert "give the others with --other-pred" in capsys.readouterr().err
    # one system alone: its documents x systems CSV has its own columns and no spread
    assert main(["narrative", str(gt), str(pred), "--systems-csv", str(tmp_path / "s.csv"), "--quiet"]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "s.csv").read_text(encoding="utf-8"))))
    assert [r["story_id"] for r in rows] == ["EN_001_lantern_keeper"]
    assert "EN_001_lantern_keeper_prediction: overall_score" in rows[0] and rows[0]["spread"] == ""
