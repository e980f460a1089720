"""``python -m evaluators judge calibrate``: the same report as the engine, the stored split kept, bad input
refused with exit code 2, LongMemEval's judge output read as is."""

import json

import numpy as np
import pytest

from evaluators.cli import main
from evaluators.judgelab import HumanLabel, JudgeVersion, Split, calibrate
from evaluators.judgelab.inputs import read_labels, read_verdicts, verdict_value
from evaluators.reports.judgelab import calibration_json
from tests.conftest import require_shared
from tests.unit.test_judgelab_calibration import _labels, _versions


def _write(tmp_path, labels, judges):
    lab = tmp_path / "labels.jsonl"
    lab.write_text("".join(json.dumps({"item_id": x.item_id, "label": ["model_error", "correct"][x.label],
                                       "slice": x.slice, "guidelines_version": x.guidelines_version},
                                      ensure_ascii=False) + "\n" for x in labels), encoding="utf-8")
    ver = tmp_path / "verdicts.jsonl"
    with ver.open("w", encoding="utf-8") as f:
        for version, verdicts in judges:
            for item, v in verdicts.items():
                f.write(json.dumps({"item_id": item, "verdict": bool(v), "judge": version.name, "model": version.model,
                                    "prompt_hash": version.prompt_hash, "parameters": dict(version.parameters),
                                    "parser": version.parser}, ensure_ascii=False) + "\n")
    return lab, ver


def test_cli_report_equals_the_engine_and_warns_about_the_tuned_prompt(tmp_path, capsys):
    labels = _labels()
    split = calibrate(labels, [], seed=2, n_resamples=1).split
    judges = _versions(labels, split)
    lab, ver = _write(tmp_path, labels, judges)
    split_file = tmp_path / "split.json"
    assert main(["judge", "calibrate", "--labels", str(lab), "--verdicts", str(ver), "--split", str(split_file),
                 "--seed", "2", "--resamples", "200", "--format", "json"]) == 0
    out = capsys.readouterr().out
    expected = calibrate(labels, judges, seed=2, n_resamples=200)
    assert json.loads(out) == json.loads(calibration_json(expected))
    assert Split.from_dict(json.loads(split_file.read_text())) == split
    assert main(["judge", "calibrate", "--labels", str(lab), "--verdicts", str(ver), "--seed", "2",
                 "--resamples", "200"]) == 0
    text = capsys.readouterr().out
    assert "warning: v3 tuned on dev: overfit: dev kappa 1.000" in text
    assert "warning: v1 plain" not in text and "warning: v2 zh" not in text
    assert "Judge calibration: 200 labelled items, split dev/test" in text


def test_a_stored_split_is_extended_not_redrawn(tmp_path, capsys):
    labels = _labels(100)
    lab, ver = _write(tmp_path, labels, [(JudgeVersion.make("m", "p", name="j"), {x.item_id: x.label for x in labels})])
    split_file = tmp_path / "split.json"
    assert main(["judge", "calibrate", "--labels", str(lab), "--verdicts", str(ver), "--split", str(split_file),
                 "--resamples", "20"]) == 0
    first = Split.from_dict(json.loads(split_file.read_text()))
    more = labels + [HumanLabel(f"z{i}", i % 2, "new slice", "g1") for i in range(30)]
    lab2, _ = _write(tmp_path, more, [])
    # a different seed on the command line: the stored split keeps its own
    assert main(["judge", "calibrate", "--labels", str(lab2), "--verdicts", str(ver), "--split", str(split_file),
                 "--seed", "9", "--resamples", "20"]) == 0
    second = Split.from_dict(json.loads(split_file.read_text()))
    assert len(second.sides) == 130 and all(second.side(i) == s for i, s in first.sides)
    capsys.readouterr()


def test_bad_input_exits_2(tmp_path, capsys):
    labels = _labels(40) + [HumanLabel("other", 1, "", "g2")]
    lab, ver = _write(tmp_path, labels, [])
    assert main(["judge", "calibrate", "--labels", str(lab), "--verdicts", str(ver)]) == 2
    assert "2 guidelines versions" in capsys.readouterr().err
    assert main(["judge", "calibrate", "--labels", str(lab), "--verdicts", str(ver), "--pool-guidelines",
                 "--resamples", "10"]) == 0
    capsys.readouterr()
    assert main(["judge", "calibrate", "--labels", str(tmp_path / "nope.jsonl"), "--verdicts", str(ver)]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_readers_accept_the_usual_spellings_and_say_what_they_left_out():
    assert [verdict_value(v) for v in (True, 0, "yes", "Correct", "acceptable_variant", "model_error", "gt_error",
                                       "", 0.5)] == [1, 0, 1, 1, 1, 0, None, None, None]
    got = read_labels(b'{"id": "a", "label": "right", "question_type": "temporal"}\n'
                      b'{"id": "b", "label": "gt_error"}\n{"label": 1}\n', "l.jsonl")
    assert got.labels == (HumanLabel("a", 1, "temporal", ""),)
    assert [i.line for i in got.issues] == [2, 3] and "gt_error" in got.issues[0].message
    csv = "item_id,verdict,judge\nq1,1,v1\nq2,no,v1\nq1,0,v2\nq1,1,v1\n".encode("utf-8")
    v = read_verdicts(csv, "v.csv")
    assert [(ver.name, d) for ver, d in v.judges] == [("v1", {"q1": 1, "q2": 0}), ("v2", {"q1": 0})]
    assert "second verdict" in v.issues[0].message


def test_longmemeval_judge_output_is_read_as_is():
    path = require_shared("long_memory", "longmemeval_predictions_sample",
                          "my_predictions.jsonl.eval-results-gpt-4o")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    got = read_verdicts(path.read_bytes(), path.name)
    assert got.issues == ()
    [(version, verdicts)] = got.judges
    assert version.model == version.name == "gpt-4o-2024-08-06"
    assert verdicts == {r["question_id"]: int(r["autoeval_label"]["label"]) for r in rows}
    assert len(verdicts) == 8


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_help_and_formats_are_listed(fmt, capsys):
    with pytest.raises(SystemExit):
        main(["judge", "--help"])
    assert fmt in capsys.readouterr().out


def test_target_verdicts_give_each_versions_corrected_scores(tmp_path, capsys):
    from evaluators.judgelab import corrected_for_version
    from tests.helpers.judge_stub import StubJudge

    labels = _labels()
    judges = _versions(labels, calibrate(labels, [], n_resamples=1).split)[:2]
    lab, ver = _write(tmp_path, labels, judges)
    # the model's 300 unlabelled outputs (true accuracy 0.45), judged by the two honest stubs
    outputs = [(f"t{i:03d}", int(i % 20 < 9)) for i in range(300)]
    stubs = {"v1 plain": StubJudge(sensitivity=0.85, specificity=0.8, seed=1),
             "v2 zh": StubJudge(sensitivity=0.92, specificity=0.6, seed=2)}
    target = tmp_path / "target.jsonl"
    target.write_text("".join(json.dumps({"item_id": i, "verdict": stubs[name].verdict(i, y), "judge": name}) + "\n"
                              for name in stubs for i, y in outputs), encoding="utf-8")
    assert main(["judge", "calibrate", "--labels", str(lab), "--verdicts", str(ver), "--target", str(target),
                 "--resamples", "50", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    report = calibrate(labels, judges, n_resamples=50)
    for version, verdicts in judges:
        tv = {i: stubs[version.name].verdict(i, y) for i, y in outputs}
        expected = corrected_for_version(labels, report.split, verdicts, tv)
        assert data["corrected"][version.name] == json.loads(json.dumps(expected.to_dict()))
        test_ids = report.split.ids("test")
        a = expected.adjusted
        # hand: m0 / m1 = test items people call wrong / right, q0 / q1 the judge's specificity / sensitivity there
        assert a.m0 == sum(1 for x in labels if x.item_id in test_ids and x.label == 0)
        assert a.q1 == pytest.approx(np.mean([verdicts[x.item_id] for x in labels
                                              if x.item_id in test_ids and x.label == 1]))
        assert a.n == 300 and a.p == pytest.approx(np.mean(list(tv.values())))
    assert main(["judge", "calibrate", "--labels", str(lab), "--verdicts", str(ver), "--target", str(target),
                 "--resamples", "20"]) == 0
    text = capsys.readouterr().out
    assert "Corrected scores" in text and "v2 zh" in text and "Lee et al. 2025" in text
