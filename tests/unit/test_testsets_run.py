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


@pytest.mark.parametrize("name, data", [
    ("a.jsonl", '{"id": "q1", "answer": "北京"}\n{"id": "q2", "answer": "x"}\n'.encode()
     + b'{"id": "q3", "answer": "\xff\xfe"}\n' + '{"id": "q4", "answer": "Jupiter"}\n'.encode()),
    ("a.csv", "id,answer\nq1,北京\nq2,x\n".encode() + b"q3,\xff\xfe\n" + b"q4,Jupiter\n"),
    ("bom.jsonl", b"\xef\xbb\xbf" + '{"id": "q1", "answer": "北京"}\n{"id": "q2", "answer": "x"}\n'.encode()
     + b'{"id": "q3", "answer": "\xff"}\n{"id": "q4", "answer": "Jupiter"}\n'),
])
def test_one_undecodable_answer_line_is_located_and_the_others_kept(name, data):
    """Issue 20 point 10: answers are decoded line by line when the file as a whole is neither UTF-8 nor GB18030."""
    from evaluators.testsets import load_answers

    answers = load_answers(data, name)
    assert sorted(k for k, _ in answers.answers) == ["q1", "q2", "q4"]
    assert answers.answers[("q1", None)].text == "北京"
    [issue] = answers.issues
    assert (issue.file, issue.line, issue.kind) == (name, 4 if name == "a.csv" else 3, "decode")


def test_an_undecodable_json_document_of_answers_is_still_one_file_error():
    from evaluators.testsets import load_answers

    with pytest.raises(InputError, match="cannot be decoded"):
        load_answers(b'{"q1": "\xff"}', "a.json")


def test_cli_answer_template_needs_no_answers(tmp_path, capsys):
    """``--answer-template`` writes the page's template (every dialogue's turns, answers empty); ANSWERS is
    then optional, and without either the command says what it needs."""
    from evaluators.cli import main

    out = tmp_path / "answers.json"
    assert main(["testsets", str(demo_path("testsets", "multi_turn_demo.json")), "--answer-template", str(out)]) == 0
    # the demo: mt_001 with turns 1-3, mt_002 with turns 1-2 (demo README)
    assert json.loads(out.read_text(encoding="utf-8")) == {"mt_001": {"1": "", "2": "", "3": ""},
                                                           "mt_002": {"1": "", "2": ""}}
    assert main(["testsets", str(demo_path("testsets", "multi_turn_demo.json"))]) == 2
    assert "testsets needs ANSWERS" in capsys.readouterr().err


def test_cli_output_file_format_follows_format_then_extension(tmp_path):
    from evaluators.cli import main
    from evaluators.reports.testsets import report_csv, report_json

    run = run_testsets(_demo())
    args = ["testsets", str(demo_path("testsets", "factual_demo.json")),
            str(demo_path("testsets", "factual_demo_answers.json"))]
    assert main([*args, "--output-file", str(tmp_path / "r.csv")]) == 0
    assert (tmp_path / "r.csv").read_bytes() == report_csv(run.scores).encode("utf-8")
    assert (tmp_path / "r.csv").read_bytes().startswith(b"id,category,difficulty,status,score,")
    assert main([*args, "--format", "csv", "--output-file", str(tmp_path / "r.txt")]) == 0
    assert (tmp_path / "r.txt").read_bytes() == (tmp_path / "r.csv").read_bytes()
    assert main([*args, "--output-file", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["overall"]["n_items"] == 9
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == report_json(run)


def test_a_gt_patch_on_a_multi_turn_set_is_refused_with_one_message_everywhere():
    from evaluators.io.gt_patch import GTPatchSet, PatchEntry
    from evaluators.testsets.patch import gold_answers, require_single_turn
    from evaluators.testsets.shards import score_shard

    inputs = _demo("multi_turn_demo.json", "multi_turn_demo_answers.jsonl")
    config = TestSetsConfig(gt_patch=GTPatchSet((PatchEntry("d1", "0" * 64, "add_answer", ("a",), ("b",), "ann"),)))
    said = []
    for refuse in (lambda: run_testsets(inputs, config), lambda: score_shard(inputs, config, 0, 2),
                   lambda: gold_answers(run_testsets(inputs).test_set)):
        with pytest.raises(ValueError) as exc:
            refuse()
        said.append(str(exc.value))
    assert said == [f"{inputs.items_name}: GT patches apply to single-turn test sets (an expected answer per item "
                    "id); this is a multi-turn set"] * 3
    require_single_turn(run_testsets(_demo()).test_set)  # a single-turn set passes
