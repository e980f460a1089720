"""One narrative config from options or widgets (:func:`build_config`) and the run function both callers use."""

import json
import subprocess
import sys

import pytest

from evaluators.io import InputFile
from evaluators.narrative.base import COMPONENTS, DEFAULT_CONFIG, NarrativeConfig
from evaluators.narrative.run import NarrativeInputs, run_narrative
from evaluators.narrative.settings import ALL_ZERO_WEIGHTS, TaxonomyFile, build_config, parse_weights
from tests.conftest import ROOT
from tests.unit.narrative_builders import doc, event, rel, span

TEXT = "甲见乙。乙见丙。"
GT = doc(TEXT, [("甲", "", ""), ("乙", "", "")], [event("e", span(TEXT, "甲见乙。"), [rel("甲", "乙", "Romance", "lover", "romantic")])])
PRED = doc(TEXT, [("甲", "", "")], [event("e", span(TEXT, "甲见乙。"), [rel("甲", "乙", "Romance", "lover", "romantic")])])


def _files():
    def f(name, d):
        return InputFile(name, json.dumps(d, ensure_ascii=False).encode("utf-8"))
    return NarrativeInputs.from_files([f("A_v3.json", GT)], [f("A_pred.json", PRED)])


def test_defaults_equal_the_default_config():
    s = build_config()
    assert s.issues == () and not s.has_errors
    assert s.config.signature == DEFAULT_CONFIG.signature
    assert s.config.weights == dict.fromkeys(COMPONENTS, 1.0)


def test_all_zero_weights_use_equal_weights_with_a_warning():
    s = build_config(weights=dict.fromkeys(COMPONENTS, 0.0))
    assert [(i.severity, i.kind, i.message) for i in s.issues] == [("warning", "settings", ALL_ZERO_WEIGHTS)]
    assert not s.has_errors
    assert s.config.weights == dict.fromkeys(COMPONENTS, 1.0)
    assert s.config.signature == DEFAULT_CONFIG.signature
    # the report carries the warning and the overall score of equal weights (not None)
    report = run_narrative(_files(), s)
    default = run_narrative(_files(), build_config())
    assert report.micro["overall_score"] == default.micro["overall_score"] is not None
    assert report.issues[0].message == ALL_ZERO_WEIGHTS
    assert report.to_dict()["issues"][0]["kind"] == "settings"


def test_some_zero_weights_are_kept():
    s = build_config(weights={"text_span": 0, "characters": 2})
    assert s.issues == ()
    assert s.config.weights == {"characters": 2.0, "relationships": 1.0, "sentiment": 1.0, "action_layer": 1.0,
                                "text_span": 0.0}


def test_parse_weights_and_invalid_settings():
    assert parse_weights("characters=2, text_span=0") == {"characters": 2.0, "text_span": 0.0}
    assert parse_weights("") == {} and parse_weights(None) == {}
    with pytest.raises(ValueError, match="unknown component 'plot'"):
        parse_weights("plot=1")
    with pytest.raises(ValueError, match="is not component=number"):
        parse_weights("characters=x")
    with pytest.raises(ValueError, match=">= 0"):
        build_config(weights={"characters": -1})
    with pytest.raises(ValueError, match="min_iou"):
        build_config(min_iou=0)


def test_an_unreadable_taxonomy_file_is_a_located_error_and_the_shipped_one_stays():
    s = build_config(sentiment_taxonomy=TaxonomyFile("mine.csv", b"no,such,columns\n1,2,3\n"))
    assert s.has_errors
    assert [(i.file, i.kind) for i in s.issues] == [("mine.csv", "taxonomy")]
    assert s.config.signature == DEFAULT_CONFIG.signature


def test_a_user_taxonomy_is_named_in_the_signature():
    csv = "标签 (Tag),情感极性\nromantic,positive\n".encode()
    s = build_config(sentiment_taxonomy=TaxonomyFile("mine.csv", csv))
    assert s.issues == ()
    assert "user:mine.csv#" in s.config.signature
    assert build_config(sentiment_taxonomy=TaxonomyFile("mine.csv", csv)).config.signature == s.config.signature


def test_run_accepts_a_plain_config():
    r = run_narrative(_files(), NarrativeConfig(weights={"characters": 1.0}))
    # characters F1: P 1/1, R 1/2 -> 2/3; only characters weighted (others default to weight 0 when not named)
    assert r.scored[0].component_scores["characters"] == pytest.approx(2 / 3)


def test_cli_all_zero_weights_warns_and_scores_with_equal_weights(tmp_path):
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt" / "A_v3.json").write_text(json.dumps(GT, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "pred" / "A_pred.json").write_text(json.dumps(PRED, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "gt" / "B_v3.json").write_text(json.dumps(GT, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "pred" / "B_pred.json").write_text(json.dumps(GT, ensure_ascii=False), encoding="utf-8")
    zero = ",".join(f"{c}=0" for c in COMPONENTS)
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "evaluators", "narrative", "--gt", str(tmp_path / "gt"), "--pred",
                           str(tmp_path / "pred"), "--weights", zero, "--out", str(out), "--quiet"],
                          check=False, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert f"warning: settings: {ALL_ZERO_WEIGHTS}" in proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    equal = run_narrative(NarrativeInputs.from_paths(tmp_path / "gt", tmp_path / "pred"), build_config())
    assert report["micro"]["overall_score"] == pytest.approx(equal.micro["overall_score"])
    assert report["documents"][1]["result"]["overall_score"] == 1.0  # B scored against itself
    assert report["issues"][0]["message"] == ALL_ZERO_WEIGHTS


def test_component_results_share_one_base_and_keep_their_report_layout():
    from evaluators.narrative.base import ComponentResult

    r = run_narrative(_files(), build_config()).scored[0]
    for c in COMPONENTS:
        res = r.detailed_results[c]
        assert isinstance(res, ComponentResult)
        assert res.score == r.component_scores[c]
        keys = list(res.to_dict())
        # own metrics first, then the shared status fields, the component's rows, the mismatches last
        i = keys.index("gt_incomplete")
        assert keys[i:i + 4] == ["gt_incomplete", "reason", "skipped", "validity"] and keys[-1] == "mismatches"
        assert keys.index(res.score_field) < i
    assert r.characters.score == pytest.approx(2 / 3)  # P 1/1, R 1/2
    assert r.text_span.validity == {}


def test_cli_leaves_no_partial_report_when_a_path_is_missing(tmp_path):
    from evaluators.cli import main

    out = tmp_path / "r.json"
    assert main(["narrative", "--gt", str(tmp_path / "nope"), "--pred", str(tmp_path), "--out", str(out)]) == 2
    assert list(tmp_path.iterdir()) == []
