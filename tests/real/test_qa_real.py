"""QA, fact-check and keyword test sets on the real data of ../shared/data (qa_factcheck, keyword_qa)."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from evaluators.metrics import cmrc
from evaluators.qa import QAConfig, evaluate_qa
from evaluators.testsets import evaluate_multi_turn, evaluate_single, load_answers, load_test_set
from tests.conftest import require_shared
from tests.helpers.official import official_qa_metrics

pytestmark = pytest.mark.realdata


def _jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _dump(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


# ------------------------------------------------------------------ HotpotQA: three systems' stored EM / F1


def test_hotpotqa_three_systems_stored_em_f1_reproduced():
    folder = require_shared("qa_factcheck", "hotpotqa_vatsalp04")
    summaries = json.loads((folder / "comparison_20251210_140921" / "all_summaries.json").read_text(encoding="utf-8"))
    path = folder / "DERIVED_seed_format.jsonl"
    report = evaluate_qa(path.read_bytes(), path.name)
    assert report.task == "qa" and report.group_field == "system" and report.overall.n == 150
    assert set(report.by_group) == set(summaries) and len(summaries) == 3
    for system, summary in summaries.items():
        ours = report.by_group[system]
        assert ours.n == summary["num_questions"] == 50
        assert ours.exact_match == pytest.approx(summary["answer_metrics"]["avg_em"], abs=1e-12)
        assert ours.token_f1 == pytest.approx(summary["answer_metrics"]["avg_f1"], abs=1e-12)
    # ... and every record's stored reference EM / F1
    stored = _jsonl(path)
    for rec, row in zip(report.records, stored):
        assert rec.lang == "en" and rec.tokenizer == "squad-v1.1"
        assert (rec.exact_match, rec.token_f1) == (row["reference_em"], pytest.approx(row["reference_f1"], abs=1e-12))


# ------------------------------------------------------------------ CFEVER slice: the all-"supports" baseline


def test_cfever_baseline_gives_the_degenerate_matrix():
    folder = require_shared("qa_factcheck", "cfever_slice")
    gold_rows = _jsonl(folder / "dev.jsonl")
    pred_path = folder / "dumb_dev_pred.jsonl"
    report = evaluate_qa(pred_path.read_bytes(), pred_path.name, QAConfig(dataset="cfever_slice"))
    assert report.task == "factcheck" and report.overall.n == 600
    assert report.gt_fields_used == {"label": 600} and report.pred_fields_used == {"predicted_label": 600}
    gold = Counter(r["label"] for r in gold_rows)          # supports / refutes / NOT ENOUGH INFO of the dev slice
    c = report.classification
    assert c.labels == ("T", "F", "uncertain")              # every prediction parsed: no unparsed column
    # Every prediction is "supports" (T): the whole matrix sits in the T row (rows = predicted).
    assert c.matrix("predicted") == [[gold["supports"], gold["refutes"], gold["NOT ENOUGH INFO"]], [0, 0, 0], [0, 0, 0]]
    assert c.accuracy == pytest.approx(gold["supports"] / 600)
    t, f, u = c.per_class
    assert (t.recall, t.precision) == (1.0, pytest.approx(gold["supports"] / 600))
    assert (f.precision, f.recall, f.f1) == (None, 0.0, 0.0) and (u.precision, u.recall, u.f1) == (None, 0.0, 0.0)
    assert c.cohen_kappa == pytest.approx(0.0)             # constant predictions agree only by chance
    assert report.overall.exact_match == pytest.approx(c.accuracy)


# ------------------------------------------------------------------ CMRC 2018 dev / trial


@pytest.mark.parametrize("name", ["cmrc2018_dev.json", "cmrc2018_trial.json"])
def test_cmrc_gold_against_itself_through_the_squad_style_reader(name):
    path = require_shared("qa_factcheck", "cmrc2018", name)
    doc = json.loads(path.read_text(encoding="utf-8"))
    preds = {qa["id"]: qa["answers"][0]["text"] for a in doc["data"] for p in a["paragraphs"] for qa in p["qas"]}
    report = evaluate_qa(path.read_bytes(), name, predictions=json.dumps(preds, ensure_ascii=False).encode(),
                         predictions_file="self.json")
    assert report.n_records == len(preds) and report.overall.n == len(preds)
    assert report.overall.exact_match == 1.0 and report.overall.token_f1 == 1.0   # GT vs itself
    assert report.by_lang["zh"].n > 0.95 * len(preds)


def test_cmrc_dev_parity_with_the_official_algorithm():
    path = require_shared("qa_factcheck", "cmrc2018", "cmrc2018_dev.json")
    official = official_qa_metrics()
    doc = json.loads(path.read_text(encoding="utf-8"))
    rng = random.Random(2018)
    n = 0
    for article in doc["data"]:
        for para in article["paragraphs"]:
            ctx = para["context"]
            for qa in para["qas"]:
                answers = [a["text"] for a in qa["answers"]]
                start, text = qa["answers"][0]["answer_start"], qa["answers"][0]["text"]
                window = ctx[max(0, start - rng.randint(0, 6)): start + len(text) + rng.randint(0, 6)]
                for pred in (answers[-1], window):
                    em, f1 = official.cmrc_pair(pred, answers)
                    assert cmrc.cmrc_scores(pred, answers) == (float(em), float(f1)), (qa["id"], pred)
                    n += 1
    # 3,219 questions: the published size of the CMRC 2018 dev set (Cui et al. 2019, "A Span-Extraction
    # Dataset for Chinese Machine Reading Comprehension", and ../shared/data/qa_factcheck/SOURCES.md),
    # two predictions each
    assert n == 2 * 3219


# ------------------------------------------------------------------ Bamboogle: answers_objects ground truth


def test_bamboogle_answers_objects():
    path = require_shared("qa_factcheck", "bamboogle", "test_subsampled.jsonl")
    rows = _jsonl(path)
    no_pred = evaluate_qa(path.read_bytes(), path.name)
    assert no_pred.n_records == 125 and no_pred.gt_fields_used == {"answers_objects": 125}
    assert len(no_pred.missing_prediction) == 125 and no_pred.overall.exact_match == 0.0  # missing = error, counted
    with_self = [dict(r, final_answer=r["answers_objects"][0]["spans"][0]) for r in rows]
    report = evaluate_qa(_dump(with_self), "bamboogle_self.jsonl")
    assert report.overall.exact_match == 1.0 and report.overall.token_f1 == 1.0
    assert report.records[0].question.startswith("Who was president of the United States")


# ------------------------------------------------------------------ keyword_qa


def test_keyword_factual_set_loads_and_expected_answers_hold_their_keywords():
    path = require_shared("keyword_qa", "factual_qa.json")
    ts = load_test_set(path.read_bytes(), path.name)
    assert ts.kind == "single" and len(ts.items) == 8 and ts.issues == () and ts.version == "1.0"
    # Each expected answer contains its own keywords (医生 in 医生, 伊法/助理 in 伊法的助理, 学舌 in
    # 会学舌/模仿说话, ..., 龙/行商 in 花羽会附近的龙和过往的行商): all 1.0.
    answers = json.dumps({i.id: i.expected_answer for i in ts.items}, ensure_ascii=False).encode()
    report = evaluate_single(ts, load_answers(answers, "expected.json"))
    assert [i.score for i in report.items] == [1.0] * 8
    assert {k: v.n_items for k, v in report.by_category.items()} == {"character": 4, "location": 2, "event": 2}
    # Half the keywords of fact_002 (伊法 but not 助理): 0.5
    partial = evaluate_single(ts, load_answers('{"fact_002": "是伊法的"}'.encode(), "p.json"))
    assert partial.items[1].score == 0.5 and partial.items[1].found == ("伊法",)


def test_keyword_multi_turn_set():
    path = require_shared("keyword_qa", "multi_turn.json")
    ts = load_test_set(path.read_bytes(), path.name)
    assert ts.kind == "multi_turn" and len(ts.items) == 3 and sum(len(d.turns) for d in ts.items) == 10
    full = {d.id: {str(t.turn): "；".join(t.expected_points) for t in d.turns} for d in ts.items}
    report = evaluate_multi_turn(ts, load_answers(json.dumps(full, ensure_ascii=False).encode(), "full.json"))
    assert report.overall.coverage_micro == 1.0 and report.missing_prediction == ()
    # mt_001 turn 1 expects 花羽会的医生 and 咔库库的主人; this answer has the first only.
    one = load_answers('{"mt_001": {"1": "伊法是花羽会的医生。"}}'.encode(), "one.json")
    r = evaluate_multi_turn(ts, one)
    first = r.dialogues[0].turns[0]
    assert (first.n_covered, first.n_points, first.coverage) == (1, 2, 0.5)
    assert [p.rule for p in first.points] == ["verbatim", "verbatim"]
    assert len(r.missing_prediction) == 9
