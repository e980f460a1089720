"""Before / after sections in the JSON outputs of qa and compare (and the HTML of compare) when a GT patch
is given; an empty patch file is refused by name (issue 29)."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.io.gt_patch import write_gt_patch
from tests.unit.test_qa_patch import DATA, ENTRIES


@pytest.fixture
def files(tmp_path):
    gt = tmp_path / "runs.jsonl"
    gt.write_bytes(DATA)
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch(ENTRIES[:3]), encoding="utf-8")
    return gt, patch, tmp_path


def _check_section(section, runs):
    assert section["files"] and section["applied"][0]["applied"] == 3
    rows = {(r["run"], r["metric"]): r for r in section["before_after"]}
    assert set(rows) == {(run, m) for run in runs for m in ("EM", "F1")}
    em_b = rows[("B", "EM")]
    # B: EM 1/4 before, 4/4 after (three accepted variants), with intervals and the tests
    assert (em_b["before"], em_b["after"]) == (0.25, 1.0)
    assert em_b["before_ci_low"] <= em_b["before"] <= em_b["before_ci_high"]
    assert em_b["after_ci_low"] <= em_b["after"] <= em_b["after_ci_high"]
    assert em_b["delta_ci_low"] is not None and em_b["p_mcnemar"] == 0.25   # 3 discordant, all one way: 2 / 8
    assert em_b["p_randomization"] == 0.25 and em_b["p_randomization_exact"]
    assert "4 items < 30" in em_b["small_sample"]
    assert section["effect"]["rank_flips"][0]["higher_after"] == "B"


def test_qa_json_output_holds_before_and_after(files, capsys):
    gt, patch, tmp = files
    out = tmp / "r.json"
    assert main(["qa", "--input", str(gt), "--gt-patch", str(patch), "--ci-resamples", "200",
                 "--output-file", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["overall"]["exact_match"] == pytest.approx(7 / 8)   # the patched numbers
    _check_section(data["gt_patch"], ("A", "B"))
    printed = capsys.readouterr().out
    assert printed.count("Review corrections (GT patch)") == 1 and "[!]" in printed
    # without a patch: no section
    assert main(["qa", "--input", str(gt), "--ci-resamples", "0", "--output-file", str(out)]) == 0
    assert "gt_patch" not in json.loads(out.read_text(encoding="utf-8"))


def test_compare_json_and_html_outputs_hold_before_and_after(files):
    gt, patch, tmp = files
    out = tmp / "cmp.json"
    assert main(["compare", "--input", str(gt), "--gt-patch", str(patch), "--ci-resamples", "200",
                 "--output-file", str(out)]) == 0
    _check_section(json.loads(out.read_text(encoding="utf-8"))["gt_patch"], ("A", "B"))
    html = tmp / "cmp.html"
    assert main(["compare", "--input", str(gt), "--gt-patch", str(patch), "--ci-resamples", "200",
                 "--output-file", str(html)]) == 0
    text = html.read_text(encoding="utf-8")
    assert "Review corrections: before and after" in text and "sign-flip" in text


@pytest.mark.parametrize("command", ["qa", "compare", "report"])
def test_an_empty_patch_is_refused_by_name(files, capsys, command):
    gt, _, tmp = files
    empty = tmp / "empty.patch.jsonl"
    empty.write_text("", encoding="utf-8")
    extra = ["--out", str(tmp / "r.html")] if command == "report" else []
    assert main([command, "--input", str(gt), "--gt-patch", str(empty), *extra]) == 2
    err = capsys.readouterr().err
    assert str(empty) in err and "empty GT patch" in err


def test_compare_and_gate_text_flag_the_small_sample(files, capsys):
    gt, _, tmp = files
    assert main(["compare", "--input", str(gt), "--ci-resamples", "500"]) == 0
    out = capsys.readouterr().out
    # 4 records: the bootstrap p-value is flagged, the randomization test is exact (all 2^m sign flips)
    assert "[!] not trustworthy: 4 items < 30" in out and "exact sign-flip test, every flip counted" in out
    assert main(["review", "gate", "--gt", str(gt), "--baseline", "A", "--candidate", "B", "--resamples", "500"]) in (0, 1)
    assert "[!] the paired bootstrap p-value is not trustworthy (4 items < 30" in capsys.readouterr().out


def test_json_on_stdout_holds_before_and_after_as_the_file_does(files, capsys):
    """``--format json`` (the report alone on stdout, for scripts) carries the same section as the file."""
    gt, patch, tmp = files
    capsys.readouterr()
    assert main(["qa", str(gt), "--gt-patch", str(patch), "--ci-resamples", "200", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["exact_match"] == pytest.approx(7 / 8)
    _check_section(data["gt_patch"], ("A", "B"))
    assert main(["compare", str(gt), "--gt-patch", str(patch), "--ci-resamples", "200", "--format", "json"]) == 0
    _check_section(json.loads(capsys.readouterr().out)["gt_patch"], ("A", "B"))


def _other_commands():
    from evaluators.demo import demo_path

    d = demo_path
    return {
        "memory": ["memory", "--results", str(d("memory", "demo_results.jsonl"))],
        "testsets": ["testsets", "--items", str(d("testsets", "factual_demo.json")), "--pred",
                     str(d("testsets", "factual_demo_answers.json"))],
        "dialogue": ["dialogue", "--cases", str(d("dialogue", "persona_cases.json")), "--pred",
                     str(d("dialogue", "panda-chat-large.jsonl"))],
        "narrative": ["narrative", "--gt", str(d("narrative", "EN_001_lantern_keeper_v3.json")), "--pred",
                      str(d("narrative", "EN_001_lantern_keeper_prediction.json"))],
    }


@pytest.mark.parametrize("command", ["memory", "testsets", "dialogue", "narrative", "gate"])
def test_an_empty_patch_is_refused_by_name_by_every_task_and_the_gate(files, capsys, command):
    gt, _, tmp = files
    empty = tmp / "empty.patch.jsonl"
    empty.write_text("\n", encoding="utf-8")          # a blank line holds no correction either
    args = (["review", "gate", "--gt", str(gt), "--baseline", "A", "--candidate", "B"] if command == "gate"
            else _other_commands()[command])
    capsys.readouterr()
    assert main([*args, "--gt-patch", str(empty)]) == 2
    err = capsys.readouterr().err
    assert f"{empty}: empty GT patch" in err
