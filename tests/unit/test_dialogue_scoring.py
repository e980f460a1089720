"""Persona dialogue scoring: statuses, combined score with redistribution, comparison, reports, CLI."""

import csv
import io
import json

import pytest

from evaluators.cli import main
from evaluators.dialogue import (
    DialogueConfig, combine, combined_weights, evaluate_dialogue, load_cases, load_predictions,
)
from evaluators.reports.dialogue import ANNOTATION_COLUMNS, annotation_csv, json_report, summary_text
from evaluators.reports.format import MISSING

CASES = {"test_cases_by_scene": {
    "s1": [{"context": "c1", "expected_response": "我喜欢猫", "dialogue_index": 1},
           {"context": "c2", "expected_response": "你好", "dialogue_index": 2}],
    "s2": [{"context": "c3", "expected_response": "Hello Lulu", "dialogue_index": 1},
           {"context": "c4", "expected_response": "", "dialogue_index": 2}],
}}
PREDS = [
    {"model": "A", "scene": "s1", "dialogue_index": 1, "prediction": "我喜欢狗"},
    {"model": "A", "scene": "s1", "dialogue_index": 2, "prediction": "你好"},
    {"model": "A", "scene": "s2", "dialogue_index": 1, "prediction": "Hello Lulu!"},
    {"model": "A", "scene": "s2", "dialogue_index": 2, "prediction": "anything"},
    {"model": "B", "scene": "s1", "dialogue_index": 1, "prediction": "我喜欢猫"},
    {"model": "B", "scene": "s2", "dialogue_index": 1, "prediction": "Hi"},
]
METRICS = ("exact_match_normalized", "fuzzy_ratio", "edit_similarity", "keyword_jaccard")


def _evaluate(mode="default"):
    cs = load_cases(json.dumps(CASES, ensure_ascii=False).encode(), "cases.json")
    ps = load_predictions("\n".join(json.dumps(r, ensure_ascii=False) for r in PREDS).encode(), "preds.jsonl")
    return evaluate_dialogue(cs.cases, ps.rows, DialogueConfig(metrics=METRICS, mode=mode), cases_file="cases.json")


def test_combined_weights_redistribute_unavailable():
    w = combined_weights({"exact_match_normalized": 0.5, "fuzzy_ratio": 0.2, "edit_similarity": 0.1,
                          "semantic_similarity": 0.1, "keyword_jaccard": 0.1}, ["semantic_similarity"])
    assert w.used == pytest.approx({"exact_match_normalized": 0.5 / 0.9, "fuzzy_ratio": 0.2 / 0.9, "edit_similarity": 0.1 / 0.9,
                                    "keyword_jaccard": 0.1 / 0.9})
    assert w.redistributed == ("semantic_similarity",) and "redistributed" in w.note
    # exact 1, fuzzy 0.5, others 0: (0.5*1 + 0.2*0.5) / 0.9 = 0.6 / 0.9
    assert combine({"exact_match_normalized": 1.0, "fuzzy_ratio": 0.5, "edit_similarity": 0.0, "keyword_jaccard": 0.0}, w) \
        == pytest.approx(0.6 / 0.9)
    # a cosine enters clipped to [0, 1]
    w2 = combined_weights({"semantic_similarity": 1.0})
    assert combine({"semantic_similarity": -0.4}, w2) == 0.0
    with pytest.raises(ValueError):
        combined_weights({"semantic_similarity": 1.0}, ["semantic_similarity"])
    with pytest.raises(ValueError):
        combined_weights({"exact_match_normalized": -1.0})


def test_per_case_statuses_and_hand_worked_combined(no_embeddings):
    ev = _evaluate()
    res = {(r.model, r.scene, r.dialogue_index): r for r in ev.results}
    assert ev.weights.redistributed == ("semantic_similarity",)
    a11 = res[("A", "s1", "1")]
    # fuzzy 2*3/8 (LCS 我喜欢), edit 1 - 1/4, keyword {喜欢,狗} vs {喜欢,猫} = 1/3 (我 is a stop word)
    assert a11.metrics == pytest.approx({"exact_match_normalized": 0.0, "fuzzy_ratio": 0.75, "edit_similarity": 0.75,
                                         "keyword_jaccard": 1 / 3, "semantic_similarity": None})
    assert a11.combined_score == pytest.approx((0.2 * 0.75 + 0.1 * 0.75 + 0.1 / 3) / 0.9)
    a21 = res[("A", "s2", "1")]
    # "hello lulu!" vs "hello lulu": exact after dropping punctuation; fuzzy 20/21; edit 1 - 1/11
    assert a21.combined_score == pytest.approx((0.5 + 0.2 * 20 / 21 + 0.1 * 10 / 11 + 0.1) / 0.9)
    assert res[("A", "s2", "2")].status == "no_gt" and res[("A", "s2", "2")].combined_score is None
    b12 = res[("B", "s1", "2")]
    assert b12.status == "missing" and b12.combined_score == 0.0 and b12.metrics["semantic_similarity"] is None
    b21 = res[("B", "s2", "1")]
    # "hi" vs "hello lulu": fuzzy 2*1/12, edit 1 - 9/10, keyword {hi} vs {hello, lulu} = 0
    assert b21.combined_score == pytest.approx((0.2 / 6 + 0.1 * 0.1) / 0.9)

    by_model = {s.model: s for s in ev.by_model}
    assert (by_model["B"].n_cases, by_model["B"].n_scored, by_model["B"].n_missing, by_model["B"].n_no_gt) == \
        (4, 3, 1, 1)  # s1#2 missing; s2#2 has no ground truth (not missing)
    assert by_model["A"].combined_score == pytest.approx(
        (a11.combined_score + 1.0 + a21.combined_score) / 3)
    assert by_model["B"].means["exact_match_normalized"] == pytest.approx(1 / 3)  # 1, 0 (missing), 0
    assert ev.matching["n_missing"] == {"A": 0, "B": 2}


def test_model_comparison(no_embeddings):
    c = _evaluate().comparison
    # s1#1: B (1.0) beats A; s1#2: A (1.0) beats missing B (0); s2#1: A beats B.
    assert c.n_shared == 3 and c.wins == {"A": 2, "B": 1} and c.ties == 0
    assert c.pairwise == {"A": {"B": 2}, "B": {"A": 1}}
    assert c.best_by_scene == {"s1": "A", "s2": "A"}  # s1: A (0.287 + 1)/2 > B (1 + 0)/2
    assert c.winners["s1#1#0"] == "B"


def test_reports_are_compatible_with_the_earlier_script(no_embeddings):
    ev = _evaluate()
    rows = list(csv.reader(io.StringIO(annotation_csv(ev))))
    # model column appended (two models); default mode: the exact-match column names its definition
    assert rows[0] == [c if c != "exact_match" else "exact_match_normalized" for c in ANNOTATION_COLUMNS] + ["model"]
    assert len(rows) == 1 + 8
    assert rows[1][:6] == ["s1", "1", "c1", "我喜欢猫", "我喜欢狗", "0.0"] and rows[1][6:9] == ["", "", ""]
    assert rows[4][5] == ""  # no ground truth: exact match not computed
    report = json_report(ev)
    assert set(report["evaluation_info"]) >= {"timestamp", "models_evaluated", "total_test_cases"}
    first = report["results"][0]
    assert first["dialogue_index"] == 1  # written as an int, as before
    # default mode: no definition equals the earlier script's, so its "metrics" block is empty and
    # every score is under its own name (edit_distance / sentence_bert / combined_score are not reused)
    assert first["metrics"] == {}
    assert first["metrics_all"]["semantic_similarity"] is None  # unavailable: null, never 0
    assert first["metrics_all"]["edit_similarity"] == pytest.approx(0.75)
    assert first["combined"] == pytest.approx((0.2 * 0.75 + 0.1 * 0.75 + 0.1 / 3) / 0.9)
    json.dumps(report, allow_nan=False)
    text = summary_text(ev)
    assert "A:" in text and "Average fuzzy_ratio: " in text and f"{MISSING} (unavailable" in text and "n/a" not in text
    assert "redistributed" in text and "A wins 2" in text


def test_difflib_mode_uses_the_earlier_definitions(no_embeddings):
    ev = _evaluate(mode="difflib")
    a21 = next(r for r in ev.results if (r.model, r.scene, r.dialogue_index) == ("A", "s2", "1"))
    assert a21.metrics["exact_match_strip"] == 0.0  # "Hello Lulu!" != "Hello Lulu" after strip()
    assert a21.metrics["fuzzy_ratio_difflib"] == pytest.approx(20 / 21)
    assert "exact_match_normalized" not in a21.metrics and "fuzzy_ratio" not in a21.metrics
    assert ev.config.mode == "difflib" and "mode=difflib" in ev.signatures["fuzzy_ratio_difflib"]
    # the earlier report's keys come back where the definitions are the same
    first = json_report(ev)["results"][0]
    assert set(first["metrics"]) == {"exact_match", "fuzzy_match", "keyword_similarity"}


def test_cli_writes_three_outputs(tmp_path, capsys, no_embeddings):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in PREDS), encoding="utf-8")
    out = tmp_path / "out"
    code = main(["dialogue", "--cases", str(cases), "--pred", str(preds), "--out", str(out),
                 "--metrics", ",".join(METRICS)])
    assert code == 0
    files = sorted(p.name.split("_", 3)[-1] for p in out.iterdir())
    assert files == ["human_annotation.csv", "report.json", "summary.txt"]
    assert "PERSONA DIALOGUE EVALUATION SUMMARY" in capsys.readouterr().out
    assert main(["dialogue", "--cases", str(cases), "--pred", str(preds), "--format", "json",
                 "--weights", "exact_match_normalized=1"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["evaluation_info"]["combined_weights"]["used"] == {"exact_match_normalized": 1.0}


@pytest.mark.parametrize("argv, message", [
    (["--cases", "missing.json", "--pred", "x.jsonl"], "cannot read cases file"),
    (["--cases", "CASES"], "give --pred"),
    (["--cases", "CASES", "--endpoint", "http://127.0.0.1:9"], "needs --model"),
    (["--cases", "CASES", "--pred", "EMPTY"], "no usable prediction"),
    (["--cases", "CASES", "--pred", "PREDS", "--metrics", "bleurt"], "unknown metric"),
])
def test_cli_unusable_input_exits_2(tmp_path, capsys, argv, message):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "preds.jsonl").write_text(json.dumps(PREDS[0]), encoding="utf-8")
    subs = {"CASES": str(cases), "EMPTY": str(tmp_path / "empty.jsonl"), "PREDS": str(tmp_path / "preds.jsonl")}
    assert main(["dialogue"] + [subs.get(a, a) for a in argv]) == 2
    assert message in capsys.readouterr().err


def test_cli_list_metrics(capsys):
    assert main(["dialogue", "--cases", "x", "--list-metrics"]) == 0
    out = capsys.readouterr().out
    assert "rougeL" in out and "bert_f1" in out and "unavailable" in out


def test_per_model_interval_of_the_combined_score(no_embeddings):
    from evaluators.metrics.statistics import bootstrap_ci

    ev = _evaluate()
    by_model = {s.model: s for s in ev.by_model}
    b = by_model["B"]  # s1#1 exact (1.0), s1#2 missing (0.0), s2#1 "Hi" vs "Hello Lulu"; s2#2 has no GT
    scores = [r.combined_score for r in ev.results if r.model == "B" and r.combined_score is not None]
    assert len(scores) == 3 and b.combined_score == pytest.approx(sum(scores) / 3)
    ref = bootstrap_ci(scores, n_resamples=10_000, seed=0)
    assert (b.combined_score_ci_low, b.combined_score_ci_high) == (ref.ci_low, ref.ci_high)
    # all three draws alike has probability 1/27 = 3.7% > 2.5%: the interval ends are the lowest and highest score
    assert min(scores) == b.combined_score_ci_low < b.combined_score < b.combined_score_ci_high == max(scores)
    assert all(s.combined_score_ci_low is None for s in ev.by_scene)  # per-scene: too few cases, none given
