"""The real Peppa Pig run in ../shared/data/persona_chat (qwen3-32B, 186 stored results).

The earlier script (its usage document and source) defined, with expected = e and
prediction = p:

- exact_match  = 1.0 if e.strip() == p.strip() else 0.0
- fuzzy_match  = difflib.SequenceMatcher(None, e, p).ratio()
- keyword_similarity = Jaccard of set(jieba.cut(e)) and set(jieba.cut(p)) (raw text, punctuation
  and stop words kept; both empty 1.0, one empty 0.0)

EvalBoard's ``difflib`` mode reproduces these three exactly (float equality, all 186 rows).

Known defects of the stored report, which are NOT reproduced:

- ``edit_distance`` is not an edit distance: the script returned the same
  ``SequenceMatcher.ratio()`` again, so it equals ``fuzzy_match`` on every row.  EvalBoard's
  edit_similarity is 1 - Levenshtein / max length, which differs.
- ``sentence_bert`` is 0.0 on every row: sentence-transformers was not installed and the
  script returned 0.0 instead of saying the metric was unavailable; its "combined_score"
  (0.5 exact + 0.2 fuzzy + 0.1 edit + 0.1 semantic + 0.1 keyword) therefore counts a missing
  metric as 0 and counts fuzzy twice.  EvalBoard reports an unavailable semantic similarity as
  n/a and redistributes its weight.
- The report was produced from an older version of the test-case file: 22 of its rows have
  no case in the current file and 104 matched rows answered a different (shorter) context.
"""

import json

import pytest

from evaluators.dialogue import DialogueConfig, evaluate_dialogue, load_cases, load_predictions
from evaluators.dialogue.reports import annotation_csv, json_report
from evaluators.metrics import embeddings
from evaluators.metrics.registry import PairScorer, get_metric
from tests.conftest import require_shared

REPORT = "peppa_structured_evaluation_202510101638_report.json"
CASES = "peppa_structured_test_cases.json"
ANNOTATION = "peppa_structured_evaluation_202510101638_human_annotation.csv"

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def report():
    return json.loads(require_shared("persona_chat", REPORT).read_text(encoding="utf-8"))


def test_difflib_mode_reproduces_stored_exact_fuzzy_keyword_exactly(report):
    scorer = PairScorer(["exact_match", "fuzzy_ratio", "keyword_jaccard"], modes="difflib")
    rows = report["results"]
    assert len(rows) == 186
    for row in rows:
        ours = scorer.score(row["prediction"], row["expected_response"])
        stored = row["metrics"]
        assert ours["exact_match"] == stored["exact_match"]
        assert ours["fuzzy_ratio"] == stored["fuzzy_match"]          # exact float equality
        assert ours["keyword_jaccard"] == stored["keyword_similarity"]
    # the summary's average fuzzy match (0.1323) follows
    assert round(sum(r["metrics"]["fuzzy_match"] for r in rows) / len(rows), 4) == 0.1323


def test_stored_report_defects_are_explained_not_copied(report):
    rows = report["results"]
    # defect 1: edit_distance is the fuzzy ratio again, on every row
    assert all(r["metrics"]["edit_distance"] == r["metrics"]["fuzzy_match"] for r in rows)
    edit = get_metric("edit_similarity")
    differs = sum(edit.score(r["prediction"], r["expected_response"]) != r["metrics"]["edit_distance"] for r in rows)
    assert differs > 150  # a real Levenshtein similarity differs almost everywhere
    # defect 2: semantic similarity stored as 0 everywhere (library missing, reported as a score)
    assert {r["metrics"]["sentence_bert"] for r in rows} == {0.0}
    # the stored combined score is exactly the weighted sum with those two defects inside
    for r in rows:
        m = r["metrics"]
        assert m["combined_score"] == pytest.approx(0.5 * m["exact_match"] + 0.2 * m["fuzzy_match"]
                                                    + 0.1 * m["edit_distance"] + 0.1 * m["sentence_bert"]
                                                    + 0.1 * m["keyword_similarity"], abs=1e-15)


class _NoBackend:
    name, signature = "none", "emb=none"

    def unavailable_reason(self):
        return "not installed (test)"

    def embed(self, texts):  # pragma: no cover
        raise AssertionError


def test_rescoring_the_stored_run_in_difflib_mode_without_semantic():
    path = require_shared("persona_chat", REPORT)
    data = path.read_bytes()
    cases, preds = load_cases(data, REPORT), load_predictions(data, REPORT)
    embeddings.set_embedding_backend(_NoBackend())
    try:
        ev = evaluate_dialogue(cases.cases, preds.rows, DialogueConfig(mode="difflib"), cases_file=REPORT)
    finally:
        embeddings.set_embedding_backend(None)
    # the report's repeated (scene, index) rows are matched by occurrence: every row is scored
    assert ev.matching["n_matched"] == {"qwen3-32B": 186} and ev.matching["n_unmatched"] == 0
    s = ev.by_model[0]
    assert round(s.means["fuzzy_ratio"], 4) == 0.1323 and s.means["exact_match"] == 0.0
    assert s.means["semantic_similarity"] is None  # unavailable: n/a, not 0
    stored = json.loads(data)["results"]
    # combined: same metrics except the real edit similarity, semantic's weight redistributed
    for r, row in zip(ev.results, stored):
        m = row["metrics"]
        expected = (0.5 * m["exact_match"] + 0.2 * m["fuzzy_match"] + 0.1 * r.metrics["edit_similarity"]
                    + 0.1 * m["keyword_similarity"]) / 0.9
        assert r.combined_score == pytest.approx(expected)


def test_matching_the_run_to_the_current_case_file():
    cases = load_cases(require_shared("persona_chat", CASES).read_bytes(), CASES)
    preds = load_predictions(require_shared("persona_chat", REPORT).read_bytes(), REPORT)
    assert len(cases.cases) == 164 and cases.n_duplicate_keys == 12 and len(cases.scenes) == 11
    ev = evaluate_dialogue(cases.cases, preds.rows, DialogueConfig(metrics=("exact_match",),
                                                                   weights={"exact_match": 1.0}),
                           issues=cases.issues + preds.issues)
    assert ev.matching["n_matched"] == {"qwen3-32B": 164}
    assert ev.matching["n_unmatched"] == 22 and ev.matching["n_context_mismatch"] == 104
    assert ev.matching["n_expected_mismatch"] == 0
    kinds = {i.kind for i in ev.issues}
    assert {"duplicate", "unmatched", "context_mismatch"} <= kinds
    assert len({s.scene for s in ev.by_scene}) == 11


def test_annotation_csv_matches_the_stored_one_in_difflib_mode():
    path = require_shared("persona_chat", REPORT)
    data = path.read_bytes()
    ev = evaluate_dialogue(load_cases(data, REPORT).cases, load_predictions(data, REPORT).rows,
                           DialogueConfig(metrics=("exact_match",), weights={"exact_match": 1.0}, mode="difflib"))
    stored = require_shared("persona_chat", ANNOTATION).read_bytes().decode("utf-8")
    assert annotation_csv(ev) == stored  # byte for byte (same columns, quoting and \r\n)
    report = json_report(ev)
    assert report["evaluation_info"]["total_test_cases"] == 186
    assert report["results"][0]["dialogue_index"] == 1
