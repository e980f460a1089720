"""Issue 31 for narrative: optional Traditional/Simplified conversion before comparison, spans in original offsets."""

from __future__ import annotations

import json

import opencc
import pytest

from evaluators.cli import main
from evaluators.demo import demo_path
from evaluators.narrative.base import NarrativeConfig
from evaluators.narrative.composite import evaluate
from evaluators.narrative.settings import build_config

GT_NAME, PRED_NAME = "ZH_001_石匠与山神_v3.json", "ZH_001_石匠与山神_prediction.json"


def demo(name: str) -> dict:
    return json.loads(demo_path("narrative", name).read_text(encoding="utf-8"))


def traditional(doc: dict) -> dict:
    """The whole document written in Traditional characters (names, text, span texts): OpenCC s2t."""
    return json.loads(opencc.OpenCC("s2t.json").convert(json.dumps(doc, ensure_ascii=False)))


def spans(result) -> list[tuple]:
    return [(r.category, r.gt_start, r.gt_end, r.pred_start, r.pred_end) for r in result.text_span.spans]


@pytest.mark.parametrize("script", ["tw2s", "t2s"])
def test_a_traditional_prediction_scores_like_the_simplified_one_under_conversion(script):
    gt, pred = demo(GT_NAME), demo(PRED_NAME)
    pred_t = traditional(pred)
    assert pred_t["characters"] != pred["characters"] or pred_t["narrative_events"] != pred["narrative_events"]
    simplified = evaluate(pred, gt)
    unconverted = evaluate(pred_t, gt)
    converted = evaluate(pred_t, gt, config=NarrativeConfig(script=script))
    # without conversion 織女-like spellings are different names: characters and relationships drop
    assert unconverted.overall_score < simplified.overall_score
    assert unconverted.component_scores["characters"] < simplified.component_scores["characters"]
    assert converted.overall_score == simplified.overall_score
    assert converted.component_scores == simplified.component_scores
    # spans in the original text's offsets: the overlay reads the GT text as written, at the same places
    assert converted.text == gt["source_info"]["text_content"] == simplified.text
    assert spans(converted) == spans(simplified)
    gt_offsets = {(e["text_span"]["start"], e["text_span"]["end"]) for e in gt["narrative_events"]}
    assert {(s, e) for _, s, e, _, _ in spans(converted) if s is not None} <= gt_offsets
    assert f"script={script} (opencc " in converted.signature
    assert "script=" not in simplified.signature  # off by default, and the default signature is unchanged


def _doc(text: str, sentences: list[str], names: list[str]) -> dict:
    events, pos = [], 0
    for i, s in enumerate(sentences):
        start = text.index(s, pos)
        pos = start + len(s)
        events.append({"id": f"e{i}", "text_span": {"start": start, "end": pos, "text": s}, "agents": names[:1],
                       "targets": names[1:], "time_order": i + 1})
    return {"version": "3.0", "source_info": {"language": "zh", "text_content": text},
            "characters": [{"name": n, "archetype": "Hero"} for n in names], "narrative_events": events}


def test_a_phrase_conversion_that_changes_the_length_maps_spans_back_exactly():
    # s2twp turns U盘 (2 characters) into 隨身碟 (3): the converted text is longer than the original
    sentences = ["小明买了一个U盘。", "他把U盘送给了小红。", "小红很高兴。"]
    text = "".join(sentences)
    gt = _doc(text, sentences, ["小明", "小红"])
    conv = opencc.OpenCC("s2twp.json")
    t_sentences = [conv.convert(s) for s in sentences]
    assert "隨身碟" in t_sentences[1] and len(t_sentences[1]) == len(sentences[1]) + 1
    pred = _doc("".join(t_sentences), t_sentences, [conv.convert("小明"), conv.convert("小红")])
    plain = evaluate(pred, gt)
    converted = evaluate(pred, gt, config=NarrativeConfig(script="s2twp"))
    # each predicted span is found in the converted GT text and mapped back onto the GT sentence, exactly
    expected = [(text.index(s), text.index(s) + len(s)) for s in sentences]
    assert [(r.pred_start, r.pred_end) for r in converted.text_span.spans] == expected
    assert [(r.gt_start, r.gt_end) for r in converted.text_span.spans] == expected
    assert [text[s:e] for s, e in expected] == sentences
    assert converted.text == text and converted.text_span.overlap_ratio == 1.0
    assert converted.component_scores["characters"] == 1.0
    assert plain.component_scores["characters"] == 0.5 and plain.text_span.overlap_ratio < 1.0  # 小明 only


def test_script_setting_in_build_config_and_on_the_command_line(tmp_path, capsys):
    assert build_config(script="tw2s").config.script == "tw2s"
    assert build_config().config.script is None
    with pytest.raises(ValueError, match="unknown script conversion"):
        build_config(script="x2y")
    gt = tmp_path / "ZH_001_v3.json"
    pred = tmp_path / "ZH_001_prediction.json"
    gt.write_text(json.dumps(demo(GT_NAME), ensure_ascii=False), encoding="utf-8")
    pred.write_text(json.dumps(traditional(demo(PRED_NAME)), ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "report.json"
    assert main(["narrative", str(gt), str(pred), "--script", "tw2s", "--out", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))  # one pair: that document's report
    assert "script=tw2s (opencc " in data["signature"]
    assert data["component_scores"]["characters"] == evaluate(demo(PRED_NAME), demo(GT_NAME)).component_scores[
        "characters"]
    with pytest.raises(SystemExit):
        main(["narrative", str(gt), str(pred), "--script", "x2y"])
