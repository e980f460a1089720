"""Every metric a report names is a registered metric: one name, one definition, in every task.

Walks the JSON reports the CLI writes for the demo inputs (QA, fact-check, test sets, Long
Memory, Persona dialogue) and the tasks' metric lists, and looks each metric name up in the
registry (:func:`evaluators.metrics.registry.get_metric`).  The only names that are not
registry metrics are listed here with why: Long Memory's judge score and LoCoMo-parity F1
(memory's own scores, not text-pair metrics), and a fact-check record's verdict match (a
classification outcome: the mean of EM = F1 = verdict match is the classification accuracy).
"""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.demo import demo_path
from evaluators.metrics.registry import get_metric

#: Long Memory's scores that are not registry metrics: the LLM judge and the LoCoMo parity F1.
MEMORY_OWN = {"judge_score", "locomo_f1"}


def _registered(name: str) -> bool:
    try:
        get_metric(name)
    except KeyError:
        return False
    return True


def _cli_json(tmp_path, argv: list[str], flag: str = "--output-file") -> dict:
    out = tmp_path / "report.json"
    assert main([*argv, "--format", "json", flag, str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_the_lookup_can_fail():
    assert not _registered("exact_match") and not _registered("token_f1") and not _registered("accuracy")


@pytest.mark.parametrize("name", ["qa_demo.jsonl", "qa_systems_demo.jsonl"])
def test_qa_record_columns_are_registered_metrics(tmp_path, name):
    from evaluators.qa.evaluate import record_metric_names

    report = _cli_json(tmp_path, ["qa", str(demo_path("qa", name))])
    seen = set()
    for r in report["records"]:
        if r["exact_match"] is None:
            continue
        names = record_metric_names(r["tokenizer"])
        assert names is not None, (r["id"], r["tokenizer"])
        seen.update(names)
        em, f1 = (get_metric(n) for n in names)
        golds = r["gold_answers"]
        assert r["exact_match"] == pytest.approx(max(em.score(r["prediction"], g) for g in golds)), r["id"]
        assert r["token_f1"] == pytest.approx(max(f1.score(r["prediction"], g) for g in golds)), r["id"]
    assert seen == {"exact_match_squad", "token_f1_squad", "exact_match_cmrc", "token_f1_cmrc"}  # both languages
    for metric in map(get_metric, seen):  # the report is signed with the registered metrics' signatures
        assert metric.signature in report["signature"]


def test_factcheck_columns_are_the_verdict_match_whose_mean_is_the_accuracy(tmp_path):
    from evaluators.qa.evaluate import record_metric_names

    report = _cli_json(tmp_path, ["qa", str(demo_path("qa", "factcheck_demo.jsonl"))])
    assert report["task"] == "factcheck"
    scored = [r for r in report["records"] if r["exact_match"] is not None]
    assert scored and all(r["tokenizer"] == "verdict" and record_metric_names("verdict") is None for r in scored)
    for r in scored:
        assert r["exact_match"] == r["token_f1"] == float(r["gold_verdict"] == r["predicted_verdict"])
    assert report["overall"]["exact_match"] == pytest.approx(report["classification"]["accuracy"])


def test_test_set_scores_are_the_registered_keyword_recall(tmp_path):
    folder = demo_path("testsets")
    report = _cli_json(tmp_path, ["testsets", str(folder / "factual_demo.json"),
                                  str(folder / "factual_demo_answers.json")])
    metric = get_metric("keyword_recall")
    assert report["rule"] == metric.signature and metric.signature in report["signature"]
    assert "keyword_recall" in report["overall"]  # the micro aggregate carries the metric's name
    scored = [item for item in report["items"] if item["score"] is not None]
    assert scored
    for item in report["items"]:
        expected = metric.score(item["answer"] or "", item["keywords"])
        assert item["score"] == (None if expected is None else pytest.approx(expected)), item["id"]


def test_memory_report_metric_names_are_registered(tmp_path):
    from evaluators.memory.metrics import ALL_METRICS

    report = _cli_json(tmp_path, ["memory", "--results", str(demo_path("memory", "demo_results.jsonl"))], "--out")
    block = report["metrics"]
    names = block["metrics"]
    assert len(names) >= 8
    assert [n for n in names if n not in MEMORY_OWN and not _registered(n)] == []
    for name in names:  # the overall block and the signatures are keyed by the same names
        assert name in block["overall"]
        if name not in MEMORY_OWN:
            assert block["signature"][name] == get_metric(name).signature
    assert [n for n in ALL_METRICS if n not in MEMORY_OWN and not _registered(n)] == []


def test_dialogue_report_metric_names_are_registered(tmp_path, capsys, no_embeddings):
    from evaluators.dialogue.scoring import DEFAULT_METRICS, DEFAULT_WEIGHTS

    folder = demo_path("dialogue")
    assert main(["dialogue", "--cases", str(folder / "persona_cases.json"),
                 "--pred", str(folder / "panda-chat-large.jsonl"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    info = report["evaluation_info"]
    names = set(info["signatures"]) | set(info["combined_weights"]["requested"])
    for row in report["results"]:
        names |= set(row["metrics_all"])
    for group in report["by_model"]:
        names |= set(group["means"])
    assert len(names) >= 8
    assert sorted(n for n in names if not _registered(n)) == []
    for name in info["signatures"]:
        assert info["signatures"][name] == get_metric(name).signature
    assert [n for n in (*DEFAULT_METRICS, *DEFAULT_WEIGHTS) if not _registered(n)] == []
