"""The command line as a newcomer types it (issue 26): positional inputs, one default output (a table),
the confusion matrix with true labels on rows, Markdown that escapes only what Markdown needs, and input
problems that say what to do (a file for another input named in one line, repeated problems folded)."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.demo import demo_path
from evaluators.memory.records import EvalResult, results_to_jsonl
from tests.conftest import ROOT, require_shared

RESULTS = [
    EvalResult("s", "a", "single_hop", "Where does Ann live?", "Oslo", "Ann lives in Oslo."),
    EvalResult("t", "d", "single_hop", "小王住在哪里？", "成都", "成都"),
]


@pytest.fixture
def results_file(tmp_path, monkeypatch):
    for var in ("EVALBOARD_JUDGE_BASE_URL", "EVALBOARD_JUDGE_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    path = tmp_path / "results.jsonl"
    path.write_text(results_to_jsonl(RESULTS), encoding="utf-8")
    return path


# ------------------------------------------------------------------ 1. positional inputs

def test_qa_takes_its_file_as_typed(capsys):
    src = demo_path("qa", "factcheck_demo.jsonl")
    assert main(["qa", str(src), "--ci-resamples", "0"]) == 0
    positional = capsys.readouterr().out
    assert main(["qa", "--input", str(src), "--ci-resamples", "0"]) == 0
    assert capsys.readouterr().out == positional  # the flag still works, with the same output
    assert "Accuracy:" in positional


def test_qa_takes_several_files_one_after_the_other(capsys):
    a, b = demo_path("qa", "factcheck_demo.jsonl"), demo_path("qa", "qa_demo.jsonl")
    assert main(["qa", str(a), str(b), "--ci-resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert f"input:        {a}" in out and f"input:        {b}" in out


def test_the_same_input_twice_is_fine_two_different_ones_are_an_error(capsys):
    src = str(demo_path("qa", "qa_demo.jsonl"))
    assert main(["qa", src, "--input", src, "--ci-resamples", "0"]) == 0
    capsys.readouterr()
    other = str(demo_path("qa", "factcheck_demo.jsonl"))
    assert main(["qa", src, "--input", other]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--input" in err and "not both" in err


def test_narrative_takes_gt_and_pred_as_typed(tmp_path, capsys):
    gt = demo_path("narrative", "EN_001_lantern_keeper_v3.json")
    pred = demo_path("narrative", "EN_001_lantern_keeper_prediction.json")
    assert main(["narrative", str(gt), str(pred), "--quiet"]) == 0
    positional = capsys.readouterr().out
    assert main(["narrative", "--gt", str(gt), "--pred", str(pred), "--quiet"]) == 0
    assert capsys.readouterr().out == positional and "EN_001_lantern_keeper" in positional
    assert main(["narrative", str(gt)]) == 2
    assert "PRED" in capsys.readouterr().err


def test_positional_inputs_fill_the_inputs_no_flag_gave(capsys):
    gt = str(demo_path("narrative", "EN_001_lantern_keeper_v3.json"))
    pred = str(demo_path("narrative", "EN_001_lantern_keeper_prediction.json"))
    assert main(["narrative", "--gt", gt, pred, "--quiet"]) == 0  # PRED typed after --gt GT
    assert "EN_001_lantern_keeper" in capsys.readouterr().out
    assert main(["narrative", gt, "--quiet", pred]) == 0  # an option between GT and PRED
    assert "EN_001_lantern_keeper" in capsys.readouterr().out
    assert main(["narrative", gt, pred, "--gt", gt, "--quiet"]) == 0  # GT both ways, the same
    capsys.readouterr()
    assert main(["narrative", pred, pred, "--gt", gt]) == 2  # GT both ways, two different files
    err = capsys.readouterr().err
    assert f"GT given twice: {pred} (as GT) and {gt} (--gt)" in err


def test_memory_takes_its_results_as_typed(results_file, capsys):
    assert main(["memory", str(results_file), "--ci-resamples", "0"]) == 0
    assert "single_hop" in capsys.readouterr().out


def test_the_other_batch_commands_take_positional_inputs(tmp_path, capsys):
    items, answers = demo_path("testsets", "factual_demo.json"), demo_path("testsets", "factual_demo_answers.json")
    assert main(["testsets", str(items), str(answers)]) == 0
    assert "mean keyword score (macro over items): 0.625" in capsys.readouterr().out
    systems = demo_path("qa", "qa_systems_demo.jsonl")
    assert main(["compare", str(systems), "--ci-resamples", "0"]) == 0
    assert "Systems side by side" in capsys.readouterr().out
    out = tmp_path / "r.html"
    assert main(["report", str(demo_path("qa", "qa_demo.jsonl")), "--out", str(out), "--ci-resamples", "0"]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    cases = demo_path("dialogue", "persona_cases.json")
    preds = demo_path("dialogue", "panda-chat-small_report.json")
    assert main(["dialogue", str(cases), str(preds), "--metrics", "exact_match_normalized"]) == 0


# ------------------------------------------------------------------ 2. one default output

def test_memory_prints_a_table_by_default_and_json_when_asked(results_file, capsys):
    assert main(["memory", "--results", str(results_file), "--ci-resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert not out.lstrip().startswith("{")
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert any(line.startswith("type count") for line in lines)
    assert any(line.startswith("single_hop 2") for line in lines)
    assert main(["memory", "--results", str(results_file), "--ci-resamples", "0", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["overall"]["count"] == 2


def test_memory_out_file_keeps_json_unless_the_extension_says_otherwise(results_file, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["memory", str(results_file), "--ci-resamples", "0", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["metrics"]["overall"]["count"] == 2
    md_out = tmp_path / "r.md"
    assert main(["memory", str(results_file), "--ci-resamples", "0", "--out", str(md_out)]) == 0
    text = md_out.read_text(encoding="utf-8")
    assert "## Metrics by question type" in text and not text.startswith("{")


def test_qa_and_testsets_write_json_or_csv_to_stdout_with_format(capsys):
    src = demo_path("qa", "factcheck_demo.jsonl")
    assert main(["qa", str(src), "--ci-resamples", "0", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["n"] == 16  # 17 records, fc-09 without a label
    assert main(["qa", str(src), "--ci-resamples", "0", "--format", "csv"]) == 0
    assert capsys.readouterr().out.count("\n") == 18  # header + 17 records
    items, answers = demo_path("testsets", "factual_demo.json"), demo_path("testsets", "factual_demo_answers.json")
    assert main(["testsets", str(items), str(answers), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_category"]["relation"]["mean_score"] == 0.25


def test_every_scoring_command_prints_its_report_alone_with_format(capsys):
    gt = str(demo_path("narrative", "EN_001_lantern_keeper_v3.json"))
    pred = str(demo_path("narrative", "EN_001_lantern_keeper_prediction.json"))
    assert main(["narrative", gt, pred, "--quiet", "--format", "json"]) == 0
    assert "overall_score" in json.loads(capsys.readouterr().out)  # the JSON alone: no table before it
    systems = str(demo_path("qa", "qa_systems_demo.jsonl"))
    assert main(["compare", systems, "--ci-resamples", "0", "--format", "json"]) == 0
    assert "systems" in json.loads(capsys.readouterr().out)
    assert main(["compare", systems, "--ci-resamples", "0", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("id,")
    cases = str(demo_path("dialogue", "persona_cases.json"))
    preds = str(demo_path("dialogue", "panda-chat-small_report.json"))
    for fmt in ("table", "text"):
        assert main(["dialogue", cases, preds, "--metrics", "exact_match_normalized", "--format", fmt]) == 0
        assert "PERSONA DIALOGUE EVALUATION SUMMARY" in capsys.readouterr().out
    assert main(["dialogue", cases, preds, "--metrics", "exact_match_normalized", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("\ufeff") is False


# ------------------------------------------------------------------ 3. confusion matrix rows = true

def test_the_confusion_matrix_has_true_labels_on_rows_by_default(capsys):
    src = demo_path("qa", "factcheck_demo.jsonl")
    assert main(["qa", str(src), "--ci-resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert "Confusion matrix (rows = true, columns = predicted)" in out
    lines = [" ".join(line.split()) for line in out.splitlines()]
    # true T row: fc-01, 03, 10 predicted T; fc-13 F; none uncertain; fc-08, 15, 17 unparsed
    assert "true \\ predicted T F uncertain unparsed total" in lines and "T 3 1 0 3 7" in lines
    assert main(["qa", str(src), "--ci-resamples", "0", "--rows", "predicted"]) == 0
    assert "Confusion matrix (rows = predicted, columns = true)" in capsys.readouterr().out


# ------------------------------------------------------------------ 4. Markdown escapes what it needs

def test_markdown_leaves_paths_and_names_as_they_are():
    from evaluators.reports.escape import md

    for text in ("long_memory/locomo_predictions_mem0/results.json", "single-session-user", "temporal_reasoning",
                 "CH_002_牛郎织女_v3.json", "don't say \"hi\"", "a = b", "x^2 {y}", "1.5 - 2.5"):
        assert md(text) == text, text


def test_markdown_still_escapes_what_has_a_meaning():
    from evaluators.reports.escape import md

    assert md("**bold**") == "\\*\\*bold\\*\\*"
    assert md("_em_") == "\\_em\\_"
    assert md("[a](b)") == "\\[a\\](b)"
    assert md("a | b") == "a \\| b"
    assert md("$x$") == "\\$x\\$"
    assert md("# title") == "\\# title"
    assert md("- item") == "\\- item"
    assert md("1. item") == "1\\. item"
    assert md("`code`") == "\\`code\\`"
    assert md(":red[x]").startswith("\\:red\\[x\\]")
    assert md("<b>") == "&lt;b&gt;"


def test_memory_markdown_does_not_escape_file_names(results_file, capsys):
    assert main(["memory", str(results_file), "--ci-resamples", "0", "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert str(results_file) in out  # the note naming the file, as it is
    assert "\\_" not in out and "\\." not in out and "\\/" not in out


# ------------------------------------------------------------------ 6. input problems that say what to do

def test_longmemeval_predictions_given_as_results_say_where_they_go(capsys):
    preds = require_shared("long_memory", "longmemeval_predictions_sample", "my_predictions.jsonl.eval-results-gpt-4o")
    assert main(["memory", "--results", str(preds)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    problems = [line for line in err if "question_type" in line or "Predictions by question_id" in line]
    assert len(problems) == 1, err
    assert "Predictions by question_id" in problems[0] and "--predictions" in problems[0]
    assert "--questions" in problems[0]


def test_a_narrative_file_given_to_qa_is_named_in_one_line(capsys):
    gt = require_shared("fairytales", "gt_v3", "CH_002_牛郎织女_v3.json")
    assert main(["qa", str(gt)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "narrative" in err[0] and "looked in" not in err[0]


def test_a_narrative_file_given_as_memory_results_is_named(capsys, tmp_path):
    gt = require_shared("fairytales", "gt_v3", "CH_002_牛郎织女_v3.json")
    assert main(["memory", str(gt)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ") and "narrative" in line]
    assert err and "evalboard narrative" in err[0]


def test_repeated_problems_are_folded_into_one_line_with_a_count(tmp_path, capsys):
    path = tmp_path / "no_type.jsonl"
    rows = [{"question_id": f"q{i}", "question": "?", "ground_truth": "a", "prediction": "a"} for i in range(500)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert main(["memory", "--results", str(path)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "missing 'question_type'" in line]
    assert len(err) == 1, err[:3]
    assert f"{path}: line 1, 2, 3 … (500 lines): missing 'question_type'" in err[0]


def test_fold_problems_keeps_single_problems_and_order():
    from evaluators.io import InputIssue
    from evaluators.reports.format import problem_lines

    issues = [InputIssue("a.jsonl", "missing 'x'", line=3), InputIssue("a.jsonl", "bad JSON", line=4),
              InputIssue("a.jsonl", "missing 'x'", line=5), InputIssue("b.jsonl", "missing 'x'", line=1),
              InputIssue("a.jsonl", "missing 'x'", line=9, severity="warning")]
    assert problem_lines(issues) == [
        "error: a.jsonl: line 3, 5 (2 lines): missing 'x'",
        "error: a.jsonl:4: bad JSON",
        "error: b.jsonl:1: missing 'x'",
        "warning: a.jsonl:9: missing 'x'",
    ]
    assert problem_lines(issues[:1], "warning") == ["warning: a.jsonl:3: missing 'x'"]


@pytest.mark.parametrize("argv,goes", [
    # a LongMemEval question file given as narrative GT
    (["narrative", ("long_memory", "longmemeval", "longmemeval_oracle_questions_slim.json"),
      ("fairytales", "predictions", "CH_002_牛郎织女_v3_prediction.json"), "--quiet"], "--questions"),
    # a narrative file given as a keyword test set
    (["testsets", ("fairytales", "gt_v3", "CH_002_牛郎织女_v3.json"), ("keyword_qa", "factual_qa.json")],
     "evalboard narrative GT PRED"),
    # a keyword test set given as persona test cases
    (["dialogue", ("keyword_qa", "factual_qa.json"),
      ("persona_chat", "peppa_structured_evaluation_202510101638_report.json")], "evalboard testsets ITEMS ANSWERS"),
    # LongMemEval judged predictions given as the question file
    (["memory", "--questions", ("long_memory", "longmemeval_predictions_sample",
                                "my_predictions.jsonl.eval-results-gpt-4o")], "Predictions by question_id"),
])
def test_a_file_for_another_input_says_where_it_goes(argv, goes, capsys):
    args = [str(require_shared(*a)) if isinstance(a, tuple) else a for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if goes in line]
    assert len(lines) == 1, err
    assert "this is " in lines[0]


def test_a_set_of_prediction_files_is_named_after_what_they_share_never_after_one_story():
    from components.narrative_state import system_name as page_name
    from evaluators.io.sources import system_name

    stories = [f"jp_00{i}_v3_prediction.json" for i in range(1, 6)]
    assert system_name(stories) == "predictions (5 files)"  # was "jp_001_v3_prediction + 4 more"
    assert system_name(["gpt4o_preds.zip"]) == "gpt4o_preds"
    assert system_name(["qwen_CH_002.json", "qwen_EN_001.json"]) == "qwen"
    assert system_name(["runs/qwen3/CH_002_prediction.json", "runs/qwen3/CH_003_prediction.json"]) == "qwen3"
    assert system_name([]) == "predictions"
    assert page_name(stories) == system_name(stories)  # the page's Compare view names it the same way


def test_sensitivity_and_audit_take_their_runs_typed(capsys):
    """The same shape as qa: ``evalboard sensitivity FILE`` and ``evalboard audit FILE`` (was --input only)."""
    demo = ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl"
    assert main(["audit", str(demo)]) == 0
    typed = capsys.readouterr().out
    assert main(["audit", "--input", str(demo)]) == 0
    assert capsys.readouterr().out == typed and "Extraction audit (verdict): 48 answers, 3 system(s)" in typed
    assert main(["sensitivity", str(demo), "--ci-resamples", "0"]) == 0
    assert "Rank sensitivity (token_f1): 3 systems" in capsys.readouterr().out
