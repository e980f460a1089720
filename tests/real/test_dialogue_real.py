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
import unicodedata
from collections import Counter, defaultdict

import pytest

from evaluators.dialogue import DialogueConfig, evaluate_dialogue, load_cases, load_predictions
from evaluators.reports.dialogue import annotation_csv, json_report
from evaluators.metrics.registry import PairScorer, get_metric
from tests.conftest import require_shared

REPORT = "peppa_structured_evaluation_202510101638_report.json"
CASES = "peppa_structured_test_cases.json"
ANNOTATION = "peppa_structured_evaluation_202510101638_human_annotation.csv"

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def report():
    return json.loads(require_shared("persona_chat", REPORT).read_text(encoding="utf-8"))


def _levenshtein(a: str, b: str) -> int:
    """Levenshtein distance (insert, delete, substitute; each costs 1), by the textbook recurrence."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _edit_similarity(prediction: str, expected: str) -> float:
    """1 - Levenshtein / max length on NFKC + lower-cased text; both empty 1.0 (independent of rapidfuzz)."""
    a, b = (unicodedata.normalize("NFKC", t).lower() for t in (prediction, expected))
    return 1.0 if not a and not b else 1 - _levenshtein(a, b) / max(len(a), len(b))


def test_difflib_mode_reproduces_stored_exact_fuzzy_keyword_exactly(report):
    scorer = PairScorer(["exact_match_normalized", "fuzzy_ratio", "keyword_jaccard"], modes="difflib")
    rows = report["results"]
    assert len(rows) == 186
    for row in rows:
        ours = scorer.score(row["prediction"], row["expected_response"])
        stored = row["metrics"]
        assert ours["exact_match_strip"] == stored["exact_match"]
        assert ours["fuzzy_ratio_difflib"] == stored["fuzzy_match"]          # exact float equality
        assert ours["keyword_jaccard_difflib"] == stored["keyword_similarity"]
    # the summary's average fuzzy match (0.1323) follows
    assert round(sum(r["metrics"]["fuzzy_match"] for r in rows) / len(rows), 4) == 0.1323


def test_stored_report_defects_are_explained_not_copied(report):
    rows = report["results"]
    # defect 1: edit_distance is the fuzzy ratio again, on every row
    assert all(r["metrics"]["edit_distance"] == r["metrics"]["fuzzy_match"] for r in rows)
    edit = get_metric("edit_similarity")
    differs = sum(edit.score(r["prediction"], r["expected_response"]) != r["metrics"]["edit_distance"] for r in rows)
    assert differs > 150  # a real Levenshtein similarity differs almost everywhere
    # ... on exactly the rows where a Levenshtein similarity computed here by hand differs: 157 of 186
    by_hand = sum(abs(_edit_similarity(r["prediction"], r["expected_response"]) - r["metrics"]["edit_distance"])
                  > 1e-12 for r in rows)
    assert differs == by_hand == 157
    # defect 2: semantic similarity stored as 0 everywhere (library missing, reported as a score)
    assert {r["metrics"]["sentence_bert"] for r in rows} == {0.0}
    # the stored combined score is exactly the weighted sum with those two defects inside
    for r in rows:
        m = r["metrics"]
        assert m["combined_score"] == pytest.approx(0.5 * m["exact_match"] + 0.2 * m["fuzzy_match"]
                                                    + 0.1 * m["edit_distance"] + 0.1 * m["sentence_bert"]
                                                    + 0.1 * m["keyword_similarity"], abs=1e-15)


def test_rescoring_the_stored_run_in_difflib_mode_without_semantic(no_embeddings):
    path = require_shared("persona_chat", REPORT)
    data = path.read_bytes()
    cases, preds = load_cases(data, REPORT), load_predictions(data, REPORT)
    ev = evaluate_dialogue(cases.cases, preds.rows, DialogueConfig(mode="difflib"), cases_file=REPORT)
    # the report's repeated (scene, index) rows are matched by occurrence: every row is scored
    assert ev.matching["n_matched"] == {"qwen3-32B": 186} and ev.matching["n_unmatched"] == 0
    s = ev.by_model[0]
    assert round(s.means["fuzzy_ratio_difflib"], 4) == 0.1323 and s.means["exact_match_strip"] == 0.0
    assert s.means["semantic_similarity"] is None  # unavailable: n/a, not 0
    stored = json.loads(data)["results"]
    # combined: same metrics except the real edit similarity, semantic's weight redistributed
    for r, row in zip(ev.results, stored):
        m = row["metrics"]
        expected = (0.5 * m["exact_match"] + 0.2 * m["fuzzy_match"] + 0.1 * r.metrics["edit_similarity"]
                    + 0.1 * m["keyword_similarity"]) / 0.9
        assert r.combined_score == pytest.approx(expected)


def _counted_from_the_raw_files(cases_raw: dict, rows: list[dict]) -> dict[str, int]:
    """The matching counts, read off the two JSON files here (not through evaluators.dialogue).

    A case is keyed by (scene, dialogue_index); a key given n times is n cases, matched to the
    key's rows in order (the k-th row to the k-th case).  A row whose key no case has is
    unmatched; a matched row whose stored context differs (stripped) answered another prompt.
    """
    cases = defaultdict(list)
    for scene, items in cases_raw["test_cases_by_scene"].items():
        for item in items:
            cases[(scene, item["dialogue_index"])].append(item)
    seen: Counter = Counter()
    counts = Counter()
    for row in rows:
        key = (row["scene"], row["dialogue_index"])
        k, seen[key] = seen[key], seen[key] + 1
        if key not in cases:
            counts["unmatched"] += 1
        elif k < len(cases[key]):
            case = cases[key][k]
            counts["matched"] += 1
            counts["expected_mismatch"] += row["expected_response"].strip() != case["expected_response"].strip()
            counts["context_mismatch"] += (row["expected_response"].strip() == case["expected_response"].strip()
                                           and row["context"].strip() != case["context"].strip())
    return {"cases": sum(len(v) for v in cases.values()), "duplicate_keys": sum(len(v) - 1 for v in cases.values()),
            "scenes": len(cases_raw["test_cases_by_scene"]), "matched": counts["matched"],
            "unmatched": counts["unmatched"], "context_mismatch": counts["context_mismatch"],
            "expected_mismatch": counts["expected_mismatch"]}


def test_matching_the_run_to_the_current_case_file(report):
    raw = json.loads(require_shared("persona_chat", CASES).read_text(encoding="utf-8"))
    expected = _counted_from_the_raw_files(raw, report["results"])
    assert expected == {"cases": 164, "duplicate_keys": 12, "scenes": 11, "matched": 164, "unmatched": 22,
                        "context_mismatch": 104, "expected_mismatch": 0}
    cases = load_cases(require_shared("persona_chat", CASES).read_bytes(), CASES)
    preds = load_predictions(require_shared("persona_chat", REPORT).read_bytes(), REPORT)
    assert len(cases.cases) == 164 and cases.n_duplicate_keys == 12 and len(cases.scenes) == 11
    assert (len(cases.cases), cases.n_duplicate_keys, len(cases.scenes)) == (
        expected["cases"], expected["duplicate_keys"], expected["scenes"])
    ev = evaluate_dialogue(cases.cases, preds.rows, DialogueConfig(metrics=("exact_match_normalized",),
                                                                   weights={"exact_match_normalized": 1.0}),
                           issues=cases.issues + preds.issues)
    assert ev.matching["n_matched"] == {"qwen3-32B": 164} == {"qwen3-32B": expected["matched"]}
    assert ev.matching["n_unmatched"] == 22 and ev.matching["n_context_mismatch"] == 104
    assert (ev.matching["n_unmatched"], ev.matching["n_context_mismatch"]) == (
        expected["unmatched"], expected["context_mismatch"])
    assert ev.matching["n_expected_mismatch"] == 0 == expected["expected_mismatch"]
    kinds = {i.kind for i in ev.issues}
    assert {"duplicate", "unmatched", "context_mismatch"} <= kinds
    assert len({s.scene for s in ev.by_scene}) == 11


def test_annotation_csv_matches_the_stored_one_in_difflib_mode():
    path = require_shared("persona_chat", REPORT)
    data = path.read_bytes()
    ev = evaluate_dialogue(load_cases(data, REPORT).cases, load_predictions(data, REPORT).rows,
                           DialogueConfig(metrics=("exact_match_normalized",), weights={"exact_match_normalized": 1.0},
                                         mode="difflib"))
    stored = require_shared("persona_chat", ANNOTATION).read_bytes().decode("utf-8")
    assert annotation_csv(ev) == stored  # byte for byte (same columns, quoting and \r\n)
    report = json_report(ev)
    assert report["evaluation_info"]["total_test_cases"] == 186
    assert report["results"][0]["dialogue_index"] == 1


def test_cli_says_when_a_stored_report_was_made_against_other_cases(capsys):
    """Issue 26: the README's pair (the real cases file and a report of another run) gave 126 unmatched rows
    behind a stderr list of per-row warnings; the counts now come first, with the way to its own cases.
    The counts are those of the page (evaluators.dialogue.matching.prediction_fit): 22 + 104 = 126 of 186."""
    from evaluators.cli import main

    cases = require_shared("persona_chat", "peppa_structured_test_cases.json")
    report = require_shared("persona_chat", "peppa_structured_evaluation_202510101638_report.json")
    assert main(["dialogue", str(cases), str(report)]) == 0
    err = capsys.readouterr().err
    assert (f"warning: 126 of 186 rows of {report.name} do not match the cases file {cases.name}: 22 have no case"
            in err)
    assert "104 answered another prompt" in err
    assert f"evalboard dialogue {report.name} {report.name}" in err
    assert main(["dialogue", str(report), str(report)]) == 0     # against its own cases: every row fits
    assert "do not match" not in capsys.readouterr().err
