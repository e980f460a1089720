"""The Long Memory page and ``python -m evaluators memory`` agree on the same inputs.

Each case runs the CLI in-process (``--format json`` and ``--format csv`` into files) and the
page (AppTest, demo or uploads), then compares every number the page shows: the metric cards
(values, bootstrap intervals and judged counts in their help), the by-type table, the
task-averaged judge score, the LoCoMo parity table, LongMemEval's accuracy table, the
agreement cards and 2x2 table, and the per-question table.  Real-data cases read
../shared/data/long_memory and skip without it (fail under CI=true).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from components.memory_views import label
from evaluators.cli import main
from evaluators.demo import demo_path
from evaluators.reports.format import number as fmt
from tests.conftest import require_shared
from tests.pages.helpers import open_view, run_memory_page, shown, static_rows

pytestmark = pytest.mark.usefixtures("isolated")  # no judge endpoint, the page's local cache in a tmp folder

#: Input role -> (page uploader key, CLI option).
ROLES = {"results": ("mem_results", "--results"), "questions": ("mem_questions", "--questions"),
         "predictions": ("mem_preds", "--predictions"), "labels": ("mem_labels", "--labels"),
         "judge_cache": ("mem_cache", "--cache")}

DEMO = {"results": demo_path("memory", "demo_results.jsonl"),
        "judge_cache": demo_path("memory", "demo_judge_cache.json"),
        "labels": demo_path("memory", "demo_judge_labels.jsonl")}


def _run_cli(files: dict[str, Path], locomo: bool, tmp_path: Path) -> tuple[dict, dict[str, dict[str, str]]]:
    """The CLI's JSON report and its per-question CSV rows by question id."""
    args = ["memory"]
    for role, path in files.items():
        args += [ROLES[role][1], str(path)]
    if locomo:
        args += ["--parity", "locomo"]
    out_json, out_csv = tmp_path / "report.json", tmp_path / "questions.csv"
    assert main([*args, "--format", "json", "--out", str(out_json)]) == 0
    assert main([*args, "--format", "csv", "--out", str(out_csv)]) == 0
    with out_csv.open(encoding="utf-8", newline="") as f:
        rows = {r["question_id"]: r for r in csv.DictReader(f)}
    return json.loads(out_json.read_text(encoding="utf-8")), rows


def _run_page(files: dict[str, Path] | None):
    """The page on the demo (``None``) or with the files in its uploaders."""
    if files is None:
        return run_memory_page("demo")
    at = run_memory_page("upload")
    for role, path in files.items():
        at.file_uploader(key=ROLES[role][0]).set_value((path.name, path.read_bytes(), "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    return at


def _same(shown_value, cli_value, tol: float = 1e-12) -> bool:
    """A table cell (None / NaN / pandas' NA in an integer count column when empty) equals the CLI's number
    (None when empty)."""
    empty = shown_value is None or shown_value is pd.NA or (isinstance(shown_value, float) and math.isnan(shown_value))
    if cli_value is None:
        return empty
    return not empty and abs(float(shown_value) - cli_value) <= tol


def _frame(at, column: str):
    frames = [df.value for df in at.dataframe if column in df.value.columns]
    assert len(frames) <= 1, f"several tables with a {column!r} column"
    return frames[0] if frames else None


def assert_page_matches_cli(at, report: dict, per_question: dict[str, dict[str, str]]) -> None:
    """Every number of the page against the CLI's report (see the module docstring)."""
    m = report["metrics"]
    names, overall = m["metrics"], m["overall"]
    cards = {c.label: c for c in at.metric}
    # cards: the question count, then every metric, each with its interval and judged count in the help
    assert cards["Questions"].value == str(overall["count"]) == str(report["input"]["n_questions"])
    assert list(cards) == ["Questions", *[label(n) for n in names], *[k for k in cards if k not in
                                                                      {"Questions", *map(label, names)}]]
    for name in names:
        card = cards[label(name)]
        assert card.value == fmt(overall[name], 3), name
        if overall.get(f"{name}_ci_low") is not None:
            assert f"95% CI {fmt(overall[f'{name}_ci_low'])} – {fmt(overall[f'{name}_ci_high'])} (bootstrap)" \
                in card.proto.help
        if name == "judge_score":
            assert f"{overall['judged']} of {overall['count']} questions have a judge score" in card.proto.help
    # the first screen (overview) shows the agreement table statically: read it before opening the grids
    agreement_rows = static_rows(at, "") if "agreement" in report else None
    # the by-type table: the same metrics, types and values (the sortable grid of the By question type view)
    open_view(at, "mem_view", "types")
    by_type = at.dataframe[0].value
    assert list(by_type.columns) == ["question_type", "count", *[label(n) for n in names]]
    assert list(by_type["question_type"]) == [*sorted(m["by_type"]), "overall"]
    for _, row in by_type.iterrows():
        block = overall if row["question_type"] == "overall" else m["by_type"][row["question_type"]]
        assert row["count"] == block["count"]
        for name in names:
            assert _same(row[label(name)], block.get(name)), (row["question_type"], name)
    captions = [shown(c.value) for c in at.caption]
    task_avg = overall.get("task_averaged_judge_score")
    assert (f"Task-averaged judge score (mean over types): {task_avg:.3f}" in captions) if task_avg is not None \
        else not any(c.startswith("Task-averaged judge score") for c in captions)
    n_cached = report.get("judge", {}).get("n_cached")
    if n_cached:  # judgements read from a judge cache
        assert any(c.startswith(f"{n_cached} of {overall['count']} questions judged") for c in captions)
    # LoCoMo parity
    parity = _frame(at, "LoCoMo F1")
    assert (parity is None) == ("locomo_parity" not in report)
    if parity is not None:
        lp = report["locomo_parity"]
        expected = [(str(c["category"]), c["question_type"], c["count"], c["mean"]) for c in lp["by_category"]]
        expected.append(("all", "overall", lp["count"], lp["overall"]))
        assert len(parity) == len(expected)
        for (_, row), (category, qtype, count, mean) in zip(parity.iterrows(), expected):
            assert (row["category"], row["question_type"], row["count"]) == (category, qtype, count)
            assert _same(row["LoCoMo F1"], mean)
    # LongMemEval's accuracy table
    lme = _frame(at, "accuracy")
    assert (lme is None) == ("longmemeval" not in report)
    if lme is not None:
        r = report["longmemeval"]
        expected = [(t["count"], t["accuracy"]) for t in r["by_type"]]
        expected += [(None, r["task_averaged"]), (r["n_labels"], r["overall"]),
                     (r["abstention"]["count"], r["abstention"]["accuracy"])]
        assert list(lme["question_type"])[:len(r["by_type"])] == [t["question_type"] for t in r["by_type"]]
        for (_, row), (count, accuracy) in zip(lme.iterrows(), expected, strict=True):
            assert _same(row["count"], count, 0) and _same(row["accuracy"], accuracy)
        models = report.get("labels", {}).get("models")
        if models:
            assert "Judge model(s): " + ", ".join(f"{k} ({v})" for k, v in models.items()) in captions
    # our judge against the stored labels
    assert ("Compared" in cards) == ("agreement" in report)
    if "agreement" in report:
        a = report["agreement"]
        assert cards["Compared"].value == str(a["n_compared"])
        assert cards["Agreement (accuracy)"].value == fmt(a["accuracy"], 3)
        assert cards["Cohen's kappa"].value == fmt(a["cohen_kappa"], 3)
        assert cards["Only one side"].value == str(a["n_only_ours"] + a["n_only_stored"])
        cm = a["confusion_matrix"]
        assert agreement_rows == [["ours: correct", f"{cm['both_correct']:,}", f"{cm['ours_only_correct']:,}"],
                                  ["ours: wrong", f"{cm['stored_only_correct']:,}", f"{cm['both_wrong']:,}"]]
    # the per-question table against the CLI's CSV (6 decimals), in the Questions view
    open_view(at, "mem_view", "questions")
    questions = _frame(at, "judge_mode")
    assert sorted(questions["question_id"]) == sorted(per_question)
    for _, row in questions.iterrows():
        cli_row = per_question[row["question_id"]]
        for name in names:
            cell = cli_row[name]
            assert _same(row[label(name)], None if cell == "" else float(cell), 5e-7), (row["question_id"], name)


def test_demo_page_and_cli_agree(tmp_path):
    report, per_question = _run_cli(DEMO, True, tmp_path)
    at = _run_page(None)
    assert_page_matches_cli(at, report, per_question)
    # the demo cache judges 24 of the 25 questions, and the second judge's labels are compared with them
    assert report["metrics"]["overall"]["judged"] == 24 and report["agreement"]["n_compared"] == 24


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.realdata
def test_longmemeval_questions_with_the_judge_output_agree(tmp_path):
    files = {"questions": require_shared("long_memory", "longmemeval", "longmemeval_oracle_questions_slim.json"),
             "labels": require_shared("long_memory", "longmemeval_predictions_sample",
                                      "my_predictions.jsonl.eval-results-gpt-4o")}
    report, per_question = _run_cli(files, False, tmp_path)
    assert_page_matches_cli(_run_page(files), report, per_question)
    # both score the judged hypotheses only (not 500 empty predictions), judge_score = the stored labels
    labels = _jsonl(files["labels"])
    assert report["input"]["n_questions"] == len(labels) == 8
    assert sorted(per_question) == sorted(x["question_id"] for x in labels)
    assert all(per_question[x["question_id"]]["prediction"] == x["hypothesis"] for x in labels)
    assert report["metrics"]["overall"]["judge_score"] == sum(x["autoeval_label"]["label"] for x in labels) / 8


@pytest.mark.realdata
@pytest.mark.parametrize("with_questions", [False, True], ids=["results-only", "with-locomo10"])
def test_mem0_results_agree_and_use_llm_score(tmp_path, with_questions):
    files = {"results": require_shared("long_memory", "locomo_predictions_mem0", "results.json")}
    if with_questions:
        files["questions"] = require_shared("long_memory", "locomo", "locomo10.json")
    report, per_question = _run_cli(files, True, tmp_path)
    at = _run_page(files)
    assert_page_matches_cli(at, report, per_question)
    # judge_score is mem0's stored llm_score in both (0.451 overall), not "—" in the CLI
    raw = json.loads(files["results"].read_text(encoding="utf-8"))
    scores = [item["llm_score"] for items in raw.values() for item in items]
    assert report["metrics"]["overall"]["judge_score"] == pytest.approx(sum(scores) / len(scores), abs=1e-12)
    assert round(sum(scores) / len(scores), 3) == 0.451
    assert report["judge"]["source"].startswith("stored labels from llm_score in the results file")
