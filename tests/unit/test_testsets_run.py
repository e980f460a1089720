"""run_testsets: the one function the Test sets page and the ``testsets`` CLI call."""

import json
import subprocess
import sys

import pytest

from evaluators.demo import demo_path
from evaluators.io import InputError
from evaluators.testsets import TestSetsConfig, TestSetsInputs, run_testsets
from tests.conftest import ROOT


def _demo(items="factual_demo.json", answers="factual_demo_answers.json"):
    return TestSetsInputs.from_paths(demo_path("testsets", items), demo_path("testsets", answers))


def test_cli_output_file_is_the_run_functions_report(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "evaluators", "testsets", "--items",
                           str(demo_path("testsets", "multi_turn_demo.json")), "--pred",
                           str(demo_path("testsets", "multi_turn_demo_answers.jsonl")), "--output-file", str(out)],
                          check=False, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    run = run_testsets(_demo("multi_turn_demo.json", "multi_turn_demo_answers.jsonl"))
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(run.to_dict(), ensure_ascii=False))
    assert run.kind == "multi_turn" and run.scores.overall.coverage_micro == 0.75  # 6 of 8 points (demo README)


def test_single_turn_demo_and_the_kind_setting():
    run = run_testsets(_demo())
    assert run.kind == "single" and run.scores.overall.n_items == 9
    assert run.issues == list(run.test_set.issues) + list(run.answers.issues)
    with pytest.raises(ValueError, match="kind must be one of"):
        TestSetsConfig("both")


def test_no_valid_item_gives_no_scores_and_a_whole_file_error_raises():
    empty = TestSetsInputs(json.dumps({"items": [{"question": "no id"}]}).encode(), "set.json", b"{}", "a.json")
    run = run_testsets(empty)
    assert run.scores is None and run.issues
    with pytest.raises(ValueError, match="no valid item"):
        run.to_dict()
    with pytest.raises(InputError):
        run_testsets(TestSetsInputs(b"{not json", "set.json", b"{}", "a.json"))
