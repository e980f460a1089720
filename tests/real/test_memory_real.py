"""Long-term-memory QA on the real data in ../shared/data/long_memory (see its SOURCES.md).

- LoCoMo10: 10 conversations, 1,986 QA (category 1: 282, 2: 321, 3: 96, 4: 841, 5: 446).
- mem0's real LoCoMo predictions: 1,540 QA (category 5 left out), categories as strings,
  with mem0's own ``f1_score`` / ``bleu_score`` / ``llm_score`` per question.
- LongMemEval oracle question table (500) and an 8-line sample of the official judge's output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from evaluators.memory.agreement import judge_agreement, load_judge_labels, longmemeval_accuracy, \
    stored_labels_from_results
from evaluators.memory.loaders import load_locomo, load_longmemeval, load_mem0_locomo
from evaluators.memory.locomo_parity import locomo_parity
from evaluators.memory.records import ADVERSARIAL_GROUND_TRUTH, LOCOMO_CATEGORIES
from tests.conftest import ROOT, require_shared
from tests.helpers.locomo_reference import locomo_reference_scores

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def locomo_raw():
    return json.loads(require_shared("long_memory", "locomo", "locomo10.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def locomo(locomo_raw):
    return load_locomo(locomo_raw, "locomo10.json")


@pytest.fixture(scope="module")
def mem0_raw():
    path = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def mem0(mem0_raw, locomo):
    return load_mem0_locomo(mem0_raw, "results.json", dataset=locomo)


@pytest.fixture(scope="module")
def reference_means(mem0_raw) -> dict[str, float]:
    """LoCoMo's published scoring (tests/helpers/locomo_reference.py) on the raw mem0 file: the mean per
    question type, and over all questions under "overall"."""
    scores = locomo_reference_scores(mem0_raw)
    by_type: dict[str, list[float]] = {}
    for category, score in scores:
        by_type.setdefault(LOCOMO_CATEGORIES[category], []).append(score)
    means = {t: sum(v) / len(v) for t, v in by_type.items()}
    means["overall"] = sum(score for _, score in scores) / len(scores)
    return means


def test_the_reference_means_are_the_pinned_values(reference_means):
    # LoCoMo's own F1 of mem0's predictions, rounded to 4 places: the values the tests below pin
    assert {t: round(v, 4) for t, v in reference_means.items()} == {
        "single_hop": 0.3921, "multi_hop": 0.2570, "temporal": 0.4546, "open_domain": 0.1878, "overall": 0.3677}


def test_locomo_dataset_counts_and_adversarial_items(locomo_raw, locomo):
    assert locomo.issues == []
    raw_counts = Counter(qa["category"] for conv in locomo_raw for qa in conv["qa"])
    assert raw_counts == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}  # as SOURCES.md says
    assert Counter(r.question_type for r in locomo.results) == {
        LOCOMO_CATEGORIES[c]: n for c, n in raw_counts.items()}
    adversarial = [r for r in locomo.results if r.question_type == "adversarial"]
    no_answer = sum(1 for conv in locomo_raw for qa in conv["qa"] if qa["category"] == 5 and "answer" not in qa)
    assert no_answer == 444  # 444 of the 446 adversarial items have only `adversarial_answer`
    assert all(r.ground_truth == ADVERSARIAL_GROUND_TRUTH and r.abstention and r.metadata["adversarial_answer"]
               for r in adversarial)
    assert len({r.question_id for r in locomo.results}) == 1986


def test_mem0_predictions_match_the_dataset_and_its_counts(mem0, locomo):
    assert mem0.issues == []  # every one of the 1,540 items found its dataset question, in order
    assert len(mem0.results) == 1540
    dataset = {r.question_id: r for r in locomo.results}
    assert all(dataset[r.question_id].question == r.question and dataset[r.question_id].ground_truth == r.ground_truth
               and dataset[r.question_id].question_type == r.question_type for r in mem0.results)
    # by-type counts equal the dataset's for the four categories mem0 answered
    dataset_counts = Counter(r.question_type for r in locomo.results if r.question_type != "adversarial")
    assert Counter(r.question_type for r in mem0.results) == dataset_counts == {
        "single_hop": 841, "multi_hop": 282, "temporal": 321, "open_domain": 96}


def test_mem0_in_locomo_parity_mode(mem0, mem0_raw, reference_means):
    """LoCoMo's own F1 on mem0's predictions, per category.

    How the values arise (snap-research/LoCoMo task_eval/evaluation.py; re-stated in
    tests/helpers/locomo_reference.py, which this test compares with question by question):
    each question gets the stemmed multiset token F1 of normalised answer and prediction
    (multi-hop: comma parts, mean of best matches; open-domain: the answer before ';'),
    and a category's value is the sum over its questions / its count; overall is the sum
    over all 1,540 / 1,540, i.e. the count-weighted mean of the category values.

    They differ from mem0's stored ``f1_score`` because mem0 scores sets of unstemmed,
    lower-cased tokens split on whitespace after removing . , ! ? (mem0
    evaluation/metrics/utils.py) — reproduced exactly below — while LoCoMo counts
    repeated tokens, stems them, drops all ASCII punctuation and a/an/the/and, and
    splits multi-hop answers.  Example: open-domain "National park; she likes the
    outdoors" vs "National park.": LoCoMo scores "National park" vs "national park" = 1.0;
    mem0 compares {national, park;, she, likes, the, outdoors} with {national, park}:
    1 common token, P = 1/2, R = 1/6, F1 = 0.25.
    """
    report = locomo_parity(mem0.results)
    assert report.skipped == {}
    # parity, question by question, with the reference written from the published code (same file order)
    raw_items = [q for items in mem0_raw.values() for q in items]
    reference = locomo_reference_scores(mem0_raw)
    assert len(raw_items) == len(reference) == len(mem0.results) == 1540
    for item, (category, expected), r in zip(raw_items, reference, mem0.results):
        assert (item["question"], category) == (r.question, r.metadata["category"])  # the same question
        assert report.per_question[r.question_id] == pytest.approx(expected, abs=1e-12), r.question_id
    got = {c.question_type: (c.count, c.mean) for c in report.by_category}
    assert [c.category for c in report.by_category] == [4, 1, 2, 3]  # the official print order, no category 5
    assert {t: n for t, (n, _) in got.items()} == {"single_hop": 841, "multi_hop": 282, "temporal": 321,
                                                   "open_domain": 96}
    expected = {"single_hop": 0.3921, "multi_hop": 0.2570, "temporal": 0.4546, "open_domain": 0.1878}
    for qtype, value in expected.items():
        assert got[qtype][1] == pytest.approx(reference_means[qtype], abs=1e-12), qtype
        assert got[qtype][1] == pytest.approx(value, abs=5e-5), qtype  # the reference's value, 4 places
    # overall = (0.39214*841 + 0.25700*282 + 0.45459*321 + 0.18781*96) / 1540 = 0.3677
    weighted = sum(n * m for n, m in got.values()) / 1540
    assert report.overall == pytest.approx(weighted, abs=1e-12)
    assert report.overall == pytest.approx(reference_means["overall"], abs=1e-12)
    assert report.overall == pytest.approx(0.3677, abs=5e-5)

    # Spot checks on real items, hand-derived in tests/unit/test_memory_parity.py:
    per_q = report.per_question
    assert per_q["conv-30_q0"] == pytest.approx(1 / 3)   # "19 January, 2023" vs "9 February 2023"
    assert per_q["conv-30_q5"] == pytest.approx(0.75)    # multi-hop, comma parts
    assert per_q["conv-26_q42"] == 1.0                   # open-domain, answer before ';'

    # mem0's stored f1_score, recomputed with mem0's own definition, for all 1,540 items
    def mem0_f1(pred, ref):
        def tok(t):
            return set(str(t).lower().replace(".", " ").replace(",", " ").replace("!", " ").replace("?", " ").split())
        p, r = tok(pred), tok(ref)
        if not p or not r:
            return 0.0
        common = len(p & r)
        if common == 0:
            return 0.0
        prec, rec = common / len(p), common / len(r)
        return 2 * prec * rec / (prec + rec)

    stored = [(q["f1_score"], mem0_f1(q["response"], q["answer"])) for items in mem0_raw.values() for q in items]
    assert all(s == pytest.approx(m, abs=1e-12) for s, m in stored)
    # ... and that is where the 0.25 of the example comes from
    item = next(r for r in mem0.results if r.question_id == "conv-26_q42")
    assert item.metadata["f1_score"] == pytest.approx(0.25)


def test_mem0_stored_judge_labels_by_category(mem0, mem0_raw):
    labels = stored_labels_from_results(mem0.results)
    assert len(labels) == 1540 and set(labels.values()) == {0.0, 1.0}
    raw = Counter()
    correct = Counter()
    for items in mem0_raw.values():
        for q in items:
            raw[q["category"]] += 1
            correct[q["category"]] += q["llm_score"]
    by_type = Counter()
    for r in mem0.results:
        by_type[r.question_type] += labels[r.question_id]
    for cat, n in raw.items():
        assert by_type[LOCOMO_CATEGORIES[int(cat)]] == correct[cat]
    # category 4 (single-hop): 445 of 841 judged correct by mem0's gpt-4o-mini judge
    assert (correct["4"], raw["4"]) == (445, 841)


def test_longmemeval_sample_joined_with_the_question_table():
    """print_qa_metrics.py joins the judge output with the question table by question_id.

    The sample has 8 temporal-reasoning questions; labels true on 6 (gpt4_2655b836,
    gpt4_76048e76, gpt4_2312f94c, 0bb5a684, 08f4fc43, 2c63a862), false on 2
    (gpt4_2487a7cb, gpt4_385a5000): accuracy 6/8 = 0.75.  The other five types have no
    labels (the official script prints NaN; we give None with count 0), none is an
    abstention question.
    """
    questions = load_longmemeval(require_shared("long_memory", "longmemeval", "longmemeval_oracle_questions_slim.json"))
    assert questions.issues == [] and len(questions.results) == 500
    assert Counter(r.question_type for r in questions.results) == {
        "temporal_reasoning": 133, "multi_session": 133, "knowledge_update": 78, "single_session_user": 70,
        "single_session_assistant": 56, "single_session_preference": 30}
    assert sum(r.abstention for r in questions.results) == 30
    path = require_shared("long_memory", "longmemeval_predictions_sample", "my_predictions.jsonl.eval-results-gpt-4o")
    stored = load_judge_labels(path.read_bytes(), path.name)
    assert stored.issues == [] and stored.format == "longmemeval"
    assert stored.models == {"gpt-4o-2024-08-06": 8}  # the model print_qa_metrics.py asserts
    report = longmemeval_accuracy(questions.results, stored.labels)
    by = {t.question_type: t for t in report.by_type}
    assert (by["temporal_reasoning"].count, by["temporal_reasoning"].correct) == (8, 6.0)
    assert by["temporal_reasoning"].accuracy == 0.75
    assert all(t.count == 0 and t.accuracy is None for name, t in by.items() if name != "temporal_reasoning")
    assert (report.overall, report.task_averaged, report.n_labels) == (0.75, 0.75, 8)
    assert report.abstention.count == 0 and report.unknown_ids == ()
    # our judge and the stored one compared on the same ids: identical labels agree fully
    agr = judge_agreement(stored.labels, stored.labels)
    assert agr.accuracy == 1.0 and agr.n_compared == 8


def test_himga_fixtures_load():
    loc = load_locomo(require_shared("long_memory", "himga_fixtures", "locomo", "sample.json"))
    assert [r.question_type for r in loc.results] == ["multi_hop", "temporal", "open_domain", "single_hop",
                                                      "adversarial"]
    lme = load_longmemeval(require_shared("long_memory", "himga_fixtures", "longmemeval", "sample.json"))
    # the fixture's 'unknown-future-type' question is kept, with a warning
    assert [(i.path, i.severity) for i in lme.issues] == [("[6].question_type", "warning")]
    assert "unknown_future_type" in {r.question_type for r in lme.results}


def test_cli_parity_and_longmemeval_table_on_real_files(tmp_path, reference_means):
    base = require_shared("long_memory")
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "evaluators", "memory", "--results", str(base / "locomo_predictions_mem0/results.json"),
         "--questions", str(base / "locomo/locomo10.json"), "--parity", "locomo", "--metrics", "judge_score,locomo_f1",
         "--labels", str(base / "locomo_predictions_mem0/results.json"), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    parity = {c["question_type"]: c["mean"] for c in report["locomo_parity"]["by_category"]}
    # LoCoMo's published scoring (reference_means) per type: single-hop 0.3921, multi-hop 0.2570
    assert parity == pytest.approx({t: reference_means[t] for t in parity}, abs=1e-12)
    assert parity["single_hop"] == pytest.approx(0.3921, abs=5e-5)
    assert report["metrics"]["by_type"]["single_hop"]["judge_score"] == pytest.approx(445 / 841)
    assert report["metrics"]["by_type"]["multi_hop"]["locomo_f1"] == pytest.approx(reference_means["multi_hop"],
                                                                                  abs=1e-12)
    assert report["metrics"]["by_type"]["multi_hop"]["locomo_f1"] == pytest.approx(0.2570, abs=5e-5)
    proc = subprocess.run(
        [sys.executable, "-m", "evaluators", "memory", "--questions",
         str(base / "longmemeval/longmemeval_oracle_questions_slim.json"), "--labels",
         str(base / "longmemeval_predictions_sample/my_predictions.jsonl.eval-results-gpt-4o"),
         "--metrics", "judge_score", "--format", "md"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    from tests.pages.helpers import shown  # the Markdown escapes user text (question types)

    assert "| temporal_reasoning | 8 | 0.7500 |" in shown(proc.stdout)


def test_compute_metrics_on_mem0_predictions_by_type(mem0, mem0_raw):
    """Registry metrics and the stored judge labels, by LoCoMo type, on the real predictions."""
    from evaluators.memory.metrics import compute_metrics

    report = compute_metrics(mem0.results, stored_labels_from_results(mem0.results))
    counts = {t: b["count"] for t, b in report["by_type"].items()}
    assert counts == {"single_hop": 841, "multi_hop": 282, "temporal": 321, "open_domain": 96}
    # judge_score by type = mem0's stored llm_score: correct / count per category
    correct = Counter()
    for items in mem0_raw.values():
        for q in items:
            correct[LOCOMO_CATEGORIES[int(q["category"])]] += q["llm_score"]
    for qtype, block in report["by_type"].items():
        assert block["judge_score"] == pytest.approx(correct[qtype] / counts[qtype])
    assert report["overall"]["judge_score"] == pytest.approx(sum(correct.values()) / 1540)
    # token F1 of one real item by hand (char tokens, no stemming, articles kept):
    # "9 February 2023" vs "19 January, 2023": [9, february, 2023] vs [19, january, 2023] -> 1/3
    from evaluators.memory.metrics import score_questions

    row = score_questions([r for r in mem0.results if r.question_id == "conv-30_q0"], metrics=["token_f1_char"])[0]
    assert row.scores["token_f1_char"] == pytest.approx(1 / 3)
    # every value is a mean over questions in [0, 1]
    for block in [report["overall"], *report["by_type"].values()]:
        for name in report["metrics"]:
            assert 0.0 <= block[name] <= 1.0


def _conv_keyed(mem0_raw) -> bytes:
    """The same real mem0 results keyed ``"conv_0"`` ... (the layout of other versions of mem0's scripts)."""
    return json.dumps({f"conv_{k}": v for k, v in mem0_raw.items()}, ensure_ascii=False).encode("utf-8")


def test_both_mem0_key_layouts_give_the_same_question_ids(mem0_raw, locomo):
    plain = json.dumps(mem0_raw, ensure_ascii=False).encode("utf-8")
    keyed = _conv_keyed(mem0_raw)
    # without the question file: one id per question whichever way the conversation is spelled
    a, b = load_mem0_locomo(plain, "results.json"), load_mem0_locomo(keyed, "results_conv.json")
    assert [r.question_id for r in a.results] == [r.question_id for r in b.results]
    assert len(a.results) == 1540 and a.results[0].question_id == f"conv{next(iter(mem0_raw))}_0" == "conv1_0"
    assert not any(r.question_id.startswith("convconv") for r in b.results)
    # with locomo10.json: both take the dataset's ids ("conv_3" is the 4th conversation, as "3")
    a, b = (load_mem0_locomo(x, "r.json", dataset=locomo) for x in (plain, keyed))
    assert [r.question_id for r in a.results] == [r.question_id for r in b.results]
    assert {r.question_id for r in a.results} <= {r.question_id for r in locomo.results}
    assert not [i for i in b.issues if "not found" in i.message]


def test_two_mem0_layouts_pair_by_id_and_other_ids_on_the_question_text(mem0_raw):
    from evaluators.memory.compare import compare_two, score_other_system

    plain = json.dumps(mem0_raw, ensure_ascii=False).encode("utf-8")
    base = load_mem0_locomo(plain, "results.json").results
    other = score_other_system("results_conv.json", _conv_keyed(mem0_raw), ["token_f1_char"], base)
    assert (other.pairing.n_by_id, other.pairing.n_by_text, other.pairing.n_unpaired) == (1540, 0, 0)
    assert other.pairing.rule == "question_id"
    # another file of the same answers under other ids (EvalResult records): paired on (conversation, question)
    renamed = "".join(json.dumps({"question_id": f"x{i}", "sample_id": r.sample_id, "question_type": r.question_type,
                                  "question": "  " + r.question.upper(), "ground_truth": r.ground_truth,
                                  "prediction": r.prediction}, ensure_ascii=False) + "\n"
                      for i, r in enumerate(base))
    by_text = score_other_system("renamed.jsonl", renamed.encode("utf-8"), ["token_f1_char"], base)
    p = by_text.pairing
    assert (p.n_by_id, p.n_by_text, p.n_unpaired) == (0, 1540, 0)
    assert p.rule == "conversation+question"
    assert "1540 paired on (conversation, question text)" in p.describe()
    # 11 questions are asked again in the same conversation: the k-th copy pairs with the k-th, so the ids are
    # the base's, each once, and every score equals the base system's own
    assert sorted(r.question_id for r in by_text.rows) == sorted(r.question_id for r in base)
    from evaluators.memory.compare import score_system
    base_rows = score_system(base, ["token_f1_char"])
    assert compare_two({"a": base_rows, "b": by_text.rows}, "a", "b", "token_f1_char",
                       n_resamples=10).n_paired == 1540
    assert {r.question_id: r.scores for r in by_text.rows} == {r.question_id: r.scores for r in base_rows}


def test_rouge1_is_token_f1_char_on_every_real_answer(mem0):
    """Issue 20.3: ROUGE-1 F = F1 (char) by definition (F1 of the clipped unigram overlap on the same tokens);
    ROUGE-2 is another number.  Checked on mem0's 1,540 LoCoMo answers, the demo and hand-made pairs."""
    from evaluators.demo import demo_path
    from evaluators.memory.metrics import METRIC_HELP, score_questions
    from evaluators.memory.records import EvalResult, read_results

    demo = read_results(demo_path("memory", "demo_results.jsonl").read_bytes()).results
    # English and Chinese by hand: "the cat sat" vs "the cat" -> P 2/3, R 1, F 0.8; "北京市" vs "北京" -> F 0.8;
    # one side empty -> 0 in both; both empty -> 1 in both
    pairs = [("the cat sat", "the cat"), ("北京市", "北京"), ("", "x"), ("，", "。")]
    hand = [EvalResult("s", f"h{i}", "single_hop", "q", gt, pred) for i, (pred, gt) in enumerate(pairs)]
    rows = score_questions([*mem0.results, *demo, *hand], None, metrics=["token_f1_char", "rouge1", "rouge2"])
    assert len(rows) == 1540 + 25 + 4
    assert all(r.scores["rouge1"] == r.scores["token_f1_char"] for r in rows)
    assert [round(r.scores["rouge1"], 12) for r in rows[-4:]] == [0.8, 0.8, 0.0, 1.0]
    assert sum(r.scores["rouge2"] != r.scores["token_f1_char"] for r in rows) > 500
    assert "by definition" in METRIC_HELP["rouge1"]
