"""``python -m evaluators qa`` and ``testsets``: printed tables, output files, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evaluators.cli import main
from evaluators.demo import demo_path
from tests.conftest import ROOT
from tests.unit.test_qa_evaluate import ten_sample_bytes


def test_qa_cli_prints_the_ten_sample_tables(tmp_path):
    path = tmp_path / "ten.jsonl"
    path.write_bytes(ten_sample_bytes())
    out = subprocess.run([sys.executable, "-m", "evaluators", "qa", "--input", str(path), "--dataset", "factcheck_demo",
                          "--rows", "predicted"],  # the earlier script's layout
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = [" ".join(line.split()) for line in out.stdout.splitlines()]
    assert "Exact Match (EM): 60.00%" in lines and "F1 Score: 60.00%" in lines
    assert "predicted \\ true T F uncertain total" in lines
    assert "T 2 1 1 4" in lines and "F 1 2 0 3" in lines and "uncertain 0 1 2 3" in lines and "total 3 4 3 10" in lines
    assert "T 50.00% 66.67% 57.14% 3" in lines
    assert "F 66.67% 50.00% 57.14% 4" in lines
    assert "uncertain 66.67% 66.67% 66.67% 3" in lines
    assert "Accuracy: 60.00% (6 of 10)" in lines
    assert any(line.startswith("task: factcheck (dataset name") for line in lines)


def test_qa_cli_rows_true_output_files_and_verbose(tmp_path, capsys):
    src = demo_path("qa", "factcheck_demo.jsonl")
    out_json = tmp_path / "report.json"
    assert main(["qa", "--input", str(src), "--rows", "true", "--verbose", "--output-file", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "Confusion matrix (rows = true, columns = predicted)" in text
    assert "fc-08: [scored]" in text and "unparsed predictions:  2  [fc-08, fc-15]" in text
    report = json.loads(out_json.read_text(encoding="utf-8"))
    # true T row (columns = predicted T, F, uncertain, unparsed): fc-01, 03, 10 predicted T; fc-13 F;
    # none uncertain; fc-08, 15, 17 unparsed (tests/unit/test_qa_evaluate.py::test_factcheck_demo_numbers)
    assert report["classification"]["confusion_matrix"]["counts"][0] == [3, 1, 0, 3]
    out_csv = tmp_path / "records.csv"
    assert main(["qa", "--input", str(src), "--output-file", str(out_csv)]) == 0
    assert out_csv.read_text(encoding="utf-8").count("\n") == 18  # header + 17 records


def test_qa_cli_field_options(tmp_path, capsys):
    path = tmp_path / "custom.jsonl"
    path.write_text(json.dumps({"gold": "Paris", "answer": "Lyon", "model_out": "Paris"}) + "\n", encoding="utf-8")
    assert main(["qa", "--input", str(path), "--gt-field", "gold", "--pred-field", "model_out", "--lang", "en"]) == 0
    text = capsys.readouterr().out
    assert "Exact Match (EM): 100.00%" in text and "ground truth: gold x1" in text


def test_qa_cli_exit_2_on_unusable_input(tmp_path, capsys):
    assert main(["qa", "--input", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["qa", "--input", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.json:1:2" in err and "no usable records" in err
    nogt = tmp_path / "nogt.jsonl"
    nogt.write_text('{"question": "q", "final_answer": "a"}\n', encoding="utf-8")
    assert main(["qa", "--input", str(nogt)]) == 2
    assert "none of the 1 records has a ground-truth answer" in capsys.readouterr().err
    undecodable = tmp_path / "x.jsonl"
    undecodable.write_bytes(b"\xff\xfe\xfa\x00\x81")
    assert main(["qa", "--input", str(undecodable)]) == 2


def test_testsets_cli(tmp_path, capsys):
    items = demo_path("testsets", "factual_demo.json")
    answers = demo_path("testsets", "factual_demo_answers.json")
    out = tmp_path / "r.json"
    assert main(["testsets", "--items", str(items), "--pred", str(answers), "--output-file", str(out)]) == 0
    text = capsys.readouterr().out
    assert "mean keyword score (macro over items): 0.625" in text      # (1+.5+0+.5+1+1+1+0)/8
    assert "keyword recall (micro): 0.647  (11 of 17)" in text
    # relation items: q_004 finds 徒弟, not 外甥女 -> 0.5; q_008 unanswered -> 0; (0.5 + 0) / 2 = 0.25
    assert json.loads(out.read_text(encoding="utf-8"))["by_category"]["relation"]["mean_score"] == 0.25
    mt = demo_path("testsets", "multi_turn_demo.json")
    mt_answers = demo_path("testsets", "multi_turn_demo_answers.jsonl")
    assert main(["testsets", "--items", str(mt), "--pred", str(mt_answers), "--verbose"]) == 0
    text = capsys.readouterr().out
    assert "points covered (micro): 0.750  (6 of 8)" in text and "+提醒林远点亮备用灯 (keywords)" in text


def test_testsets_cli_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text("{}", encoding="utf-8")
    assert main(["testsets", "--items", str(empty), "--pred", str(empty)]) == 2
    assert "items" in capsys.readouterr().err
    items = demo_path("testsets", "factual_demo.json")
    assert main(["testsets", "--items", str(items), "--pred", str(tmp_path / "missing.json")]) == 2
    assert main(["testsets", "--items", str(items), "--pred", str(empty)]) == 2
    assert "no answers read" in capsys.readouterr().err


def test_files_without_any_prediction_exit_2_and_ask_for_them(tmp_path, capsys):
    squad = tmp_path / "dev.json"
    squad.write_text(json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "Q1", "question": "首都？", "answers": [{"text": "北京"}]}]}]}]}, ensure_ascii=False), encoding="utf-8")
    assert main(["qa", "--input", str(squad)]) == 2
    err = capsys.readouterr().err
    assert f"{squad}: no prediction found in any of the 1 records (looked in: final_answer" in err
    assert "--predictions" in err
    claims = tmp_path / "claims.jsonl"
    claims.write_text("\n".join(json.dumps({"id": str(i), "claim": f"c{i}", "label": "T"}) for i in range(3)) + "\n",
                      encoding="utf-8")
    assert main(["qa", "--input", str(claims), "--dataset", "fever"]) == 2
    assert "no prediction found in any of the 3 records" in capsys.readouterr().err
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps({"other": "北京"}), encoding="utf-8")
    assert main(["qa", "--input", str(squad), "--predictions", str(preds)]) == 2
    assert f"no id in {preds} matches a record id" in capsys.readouterr().err
    preds.write_text(json.dumps({"Q1": "北京"}), encoding="utf-8")
    assert main(["qa", "--input", str(squad), "--predictions", str(preds)]) == 0


def test_an_unexpected_error_is_one_line_naming_the_input(tmp_path, capsys, monkeypatch):
    import evaluators.qa.run as qa_run

    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "1", "answer": "a", "prediction": "a"}\n', encoding="utf-8")

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(qa_run, "evaluate_source", broken)  # the engine, under the run function
    monkeypatch.delenv("EVALBOARD_DEBUG", raising=False)
    assert main(["qa", "--input", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (f"error: unexpected ZeroDivisionError while running qa on {path}: division by zero "
                           "(a bug: please report it; EVALBOARD_DEBUG=1 shows the traceback)")
    monkeypatch.setenv("EVALBOARD_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["qa", "--input", str(path)])


def test_qa_cli_writes_the_html_report_by_extension_or_format(tmp_path, capsys):
    """``qa --output-file X.html`` (or ``--format html``) writes the QA page's HTML report of the file, whatever
    its number of systems (``report`` compares several systems instead)."""
    from evaluators.cli import build_parser
    from evaluators.cli.qa import config_of
    from evaluators.qa.run import QAInput, run_qa
    from evaluators.reports.html import qa_report

    src = str(demo_path("qa", "qa_systems_demo.jsonl"))  # three systems in one file
    assert main(["qa", src, "--ci-resamples", "0", "--output-file", str(tmp_path / "r.html")]) == 0
    capsys.readouterr()
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "QA report: " in html
    args = build_parser().parse_args(["qa", src, "--ci-resamples", "0"])
    report = run_qa(QAInput(src), config_of(args)).inputs[0].report
    assert html == qa_report(report)
    assert main(["qa", src, "--ci-resamples", "0", "--format", "html"]) == 0
    assert capsys.readouterr().out == html


def test_qa_json_to_a_pipe_equals_the_output_file(tmp_path):
    """``qa --format json | jq``: stdout is a pipe, which cannot seek; the report it receives is the file's.
    (The per-record section is copied from a spool; the copy sought the end of stdout and failed with
    'Illegal seek' after ``"records": [``.)"""
    demo = str(demo_path("qa", "qa_demo.jsonl"))
    target = tmp_path / "report.json"
    args = [sys.executable, "-m", "evaluators", "qa", "--input", demo, "--format", "json"]
    assert subprocess.run([*args, "--output-file", str(target)], cwd=ROOT, capture_output=True).returncode == 0
    piped = subprocess.run(args, cwd=ROOT, capture_output=True)  # capture_output: stdout is a pipe
    assert piped.returncode == 0, piped.stderr.decode()
    assert json.loads(piped.stdout) == json.loads(target.read_bytes())
    assert len(json.loads(piped.stdout)["records"]) == 12


def test_qa_cli_writes_a_missing_value_as_the_one_missing_mark(tmp_path, capsys):
    from evaluators.reports.format import MISSING

    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"id": "a", "question": "q", "answer": "Paris", "prediction": "Paris", "lang": "en"},
        {"id": "b", "question": "q", "answer": "", "prediction": "Lyon", "lang": "en"},  # no GT: not scored
        {"id": "d", "question": "q", "answer": "北京", "prediction": "北京", "lang": "zh"}]) + "\n", encoding="utf-8")
    assert main(["qa", "--input", str(path), "--verbose", "--ci-resamples", "0"]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert f"dataset: {MISSING}" in lines                                   # no --dataset given
    # one scored record per language and no resampling: no interval, EM = F1 = 1
    assert f"lang=en 1 100.00% {MISSING} 100.00% {MISSING}" in lines
    assert f"b: [missing_gt] EM {MISSING} F1 {MISSING} pred='Lyon' gold=''" in lines
    assert not any(" - " in line.split("pred=")[0] for line in lines if line.startswith(("lang=", "b:")))
