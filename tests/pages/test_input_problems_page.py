"""Input problems on the pages say what the CLI says (issue 26): a file put in the wrong uploader is named in
one line with the uploader it goes in, and identical problems are folded into one line with a count."""

from __future__ import annotations

import json

import pytest

from evaluators.memory.inputs import resolve_inputs
from evaluators.reports.format import problem_lines
from tests.conftest import require_shared
from tests.pages.helpers import QA_PAGE, problem_line, problem_table, run_memory_page, run_page, shown

pytestmark = pytest.mark.usefixtures("isolated")  # no judge endpoint from the environment (tests/pages/conftest.py)


def _memory_upload(name: str, data: bytes):
    at = run_memory_page("upload")
    at.file_uploader(key="mem_results").set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    return at


def test_longmemeval_predictions_in_results_name_the_uploader_they_go_in():
    path = require_shared("long_memory", "longmemeval_predictions_sample", "my_predictions.jsonl.eval-results-gpt-4o")
    name = "my_predictions.jsonl"  # the uploader takes .jsonl / .json / .csv
    at = _memory_upload(name, path.read_bytes())
    # one problem, and it stops the page: the red box holds the line the CLI prints (the engine's issue)
    cli = problem_lines(resolve_inputs(results=(name, path.read_bytes())).issues)
    assert len(cli) == 1 and "Predictions by question_id" in cli[0] and "--predictions" in cli[0]
    assert [shown(e.value) for e in at.error] == [f"No usable question in the upload: {cli[0]}"]
    assert not any(e.label.startswith("Input problems") for e in at.expander)  # nothing more to list


def test_five_hundred_identical_problems_are_one_line_with_a_count():
    rows = [{"question_id": f"q{i}", "question": "?", "ground_truth": "a", "prediction": "a"} for i in range(500)]
    data = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
    at = _memory_upload("no_type.jsonl", data)
    line = ("error: no_type.jsonl: line 1, 2, 3 … (500 lines): missing 'question_type' "
            "(also read as 'type' or 'category')")
    rows = problem_table(at)
    assert [problem_line(r) for r in rows] == [line] and rows[0]["count"] == "500"
    assert next(e for e in at.expander if e.label.startswith("Input problems")).label == (
        "Input problems: 500 errors, 0 warnings")
    assert [shown(e.value) for e in at.error] == [f"No usable question in the upload: {line}"]


def test_a_narrative_file_in_the_qa_uploader_names_the_narrative_page():
    path = require_shared("fairytales", "gt_v3", "CH_002_牛郎织女_v3.json")
    at = run_page(QA_PAGE)
    at.radio(key="_source_widget").set_value("upload").run()
    at.file_uploader(key="qa_upload").upload(path.name, path.read_bytes()).run()
    assert not at.exception, at.exception
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and "Narrative page" in errors[0] and "looked in" not in errors[0], errors


def test_the_main_memory_system_is_named_after_its_file_not_this_run():
    from evaluators.demo import demo_path
    from tests.pages.helpers import open_view

    at = run_memory_page("upload")
    at.file_uploader(key="mem_results").set_value(
        ("gpt4o_memory.jsonl", demo_path("memory", "demo_results.jsonl").read_bytes(), "application/octet-stream"))
    at.file_uploader(key="mem_more_results").set_value(
        [("baseline.jsonl", demo_path("memory", "demo_results_baseline.jsonl").read_bytes(),
          "application/octet-stream")])
    at.run()
    open_view(at, "mem_view", "systems")
    assert list(at.selectbox(key="mem_sbs_a").options) == ["gpt4o_memory", "baseline"]


def test_memory_system_names_come_from_the_system_field_or_the_predictions_file():
    from evaluators.memory.records import EvalResult, results_to_jsonl

    rows = [EvalResult("s", "a", "single_hop", "Q?", "A", "A", metadata={"system": "mem0-v2"})]
    assert resolve_inputs(results=("run.jsonl", results_to_jsonl(rows).encode())).system == "mem0-v2"
    rows = [EvalResult("s", "a", "single_hop", "Q?", "A", "A")]
    assert resolve_inputs(results=("runs/run_07.jsonl", results_to_jsonl(rows).encode())).system == "run_07"


def test_a_test_set_in_the_persona_cases_uploader_names_the_test_sets_page():
    from tests.pages.helpers import DIALOGUE_PAGE

    path = require_shared("keyword_qa", "factual_qa.json")
    at = run_page(DIALOGUE_PAGE, source="upload")
    at.file_uploader(key="dialogue_cases").set_value((path.name, path.read_bytes(), "application/json"))
    at.run()
    assert not at.exception, at.exception
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(f"No usable test case in {path.name}. error: "), errors
    assert "Test Sets page" in errors[0] and "evalboard testsets ITEMS ANSWERS" in errors[0], errors
