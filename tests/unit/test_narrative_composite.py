"""Composite score, weights, result keys, loader (schema errors located, v2 conversion, encodings)."""

import json

import pytest

from evaluators.io import InputError
from evaluators.narrative import NarrativeConfig, NarrativeEvaluator, evaluate, get_metrics_summary, load_document
from evaluators.narrative.composite import weighted_overall
from tests.unit.narrative_builders import action, doc, event, rel, span

TEXT = "The fox met the crow. The crow sang. The cheese fell. 狐狸叼走了奶酪。"
FULL = doc(TEXT, [("Fox", "Reynard", "Trickster"), ("Crow", "", "Everyman")], [
    event("e1", span(TEXT, "The fox met the crow."), [rel("Fox", "Crow", "Adversarial", "rival", "negative")],
          action("communicative", "deceive", "feign", "success", "trigger")),
    event("e2", span(TEXT, "The crow sang."), [rel("Crow", "Fox", "Social & Alliance", "friend", "positive")],
          action("communicative", "inform", "", "failure", "climax")),
    event("e3", span(TEXT, "狐狸叼走了奶酪。"), [rel("Reynard", "Crow", "Adversarial", "enemy", "hostile")],
          action("transaction", "acquire", "seize", "success", "resolution")),
])

ACCEPTANCE_KEYS = [
    "character_precision", "character_recall", "character_f1", "character_archetype_accuracy",
    "relationship_precision", "relationship_recall", "relationship_f1", "level1_accuracy", "level2_accuracy",
    "relationship_pair_coverage", "sentiment_precision", "sentiment_recall", "sentiment_f1",
    "sentiment_polarity_accuracy", "action_category_accuracy", "action_type_accuracy", "action_context_accuracy",
    "action_status_accuracy", "action_function_accuracy", "action_layer_complete_match",
    "action_layer_partial_match", "boundary_score", "overlap_ratio",
]


def test_identity_scores_one_everywhere():
    r = evaluate(FULL, FULL)
    assert r.overall_score == 1.0
    assert r.component_scores == dict.fromkeys(r.component_scores, 1.0)
    summary = get_metrics_summary(r)
    for k in ACCEPTANCE_KEYS:
        assert k in summary
    lower_is_better = ("pk", "window_diff", "action_layer_partial_match")  # partial = some but not all right
    assert all(v == 1.0 for k, v in summary.items() if k not in lower_is_better)
    assert summary["pk"] == summary["window_diff"] == summary["action_layer_partial_match"] == 0.0


def test_result_dict_has_the_seed_report_keys_and_no_nan():
    d = evaluate(FULL, FULL).to_dict()
    for k in ("overall_score", "component_scores", "detailed_results", "gt_incomplete", "summary", "signature"):
        assert k in d
    assert set(d["component_scores"]) == {"characters", "relationships", "sentiment", "action_layer", "text_span"}
    det = d["detailed_results"]
    for k in ("missing_characters", "extra_characters", "gt_incomplete"):
        assert k in det["characters"]
    for k in ("exact_matches", "near_misses", "insertions", "deletions", "overlap_ratio", "boundary_score"):
        assert k in det["text_span"]
    text = json.dumps(d, ensure_ascii=False, allow_nan=False)  # raises on NaN
    assert "narrative/v1" in text


def test_weighted_overall_leaves_out_none_and_renormalises():
    scores = {"characters": 0.5, "relationships": None, "sentiment": 1.0, "action_layer": 0.25, "text_span": 1.0}
    weights = {"characters": 2, "relationships": 1, "sentiment": 1, "action_layer": 1, "text_span": 0}
    overall, used, left = weighted_overall(scores, weights)
    # (2 * .5 + 1 * 1 + 1 * .25) / (2 + 1 + 1) = 2.25 / 4
    assert overall == pytest.approx(2.25 / 4)
    assert used == pytest.approx({"characters": 0.5, "sentiment": 0.25, "action_layer": 0.25})
    assert left == {"relationships": "score not available", "text_span": "weight 0"}


def test_config_weights_change_overall_and_signature():
    pred = json.loads(json.dumps(FULL))
    pred["characters"] = pred["characters"][:1]  # character F1 = 2 * 1 * .5 / 1.5 = 2/3
    cfg = NarrativeConfig(weights={"characters": 1, "relationships": 0, "sentiment": 0, "action_layer": 0,
                                   "text_span": 0})
    r = NarrativeEvaluator(cfg).evaluate(pred, FULL)
    assert r.overall_score == pytest.approx(2 / 3)
    assert "characters=1" in r.signature and "relationships=0" in r.signature
    with pytest.raises(ValueError, match="unknown components"):
        NarrativeConfig(weights={"plot": 1})


def test_schema_errors_are_located_and_the_rest_is_kept():
    bad = json.loads(json.dumps(FULL))
    bad["narrative_events"][0]["relationships"].append({"doer": "Fox", "receiver": "Crow", "type": "rival"})
    bad["narrative_events"][1]["text_span"] = "not a span"
    bad["characters"].append(["not", "an", "object"])
    loaded = load_document(bad, "bad.json")
    paths = {i.path: i.message for i in loaded.issues}
    assert "doer, receiver, type" in paths["narrative_events[0].relationships[1]"]
    assert any(p.startswith("narrative_events[1]") and "text_span" in m for p, m in paths.items())
    assert "characters[2]" in paths
    # Good parts kept: 3 events (event 1 without its span), 2 characters, 1 valid relationship in event 0.
    assert len(loaded.doc.narrative_events) == 3 and loaded.doc.narrative_events[1].text_span is None
    assert len(loaded.doc.characters) == 2 and len(loaded.doc.narrative_events[0].relationships) == 1
    assert loaded.invalid_relationships_by_event() == {0: 1}
    r = evaluate(loaded, FULL)
    assert r.relationships.n_invalid_pred == 1
    assert any("do not fit the schema" in w for w in r.warnings)


def test_unusable_inputs_raise_located_errors():
    with pytest.raises(InputError) as exc:
        load_document(b'{"version": "3.0",\n "characters": [}', "broken.json")
    assert (exc.value.issue.line, exc.value.issue.file) == (2, "broken.json")
    with pytest.raises(InputError, match="expected a JSON object"):
        load_document(b"[1, 2]", "list.json")


def test_encodings_are_reported():
    data = json.dumps(FULL, ensure_ascii=False)
    assert load_document(data.encode("gb18030"), "a.json").encoding == "gb18030"
    assert load_document(b"\xef\xbb\xbf" + data.encode("utf-8"), "b.json").encoding == "utf-8-sig"


def test_v2_flat_schema_is_converted_explicitly():
    v2 = {"version": "2.0", "metadata": {"id": "X"}, "source_info": {"text_content": TEXT}, "characters": [],
          "narrative_events": [{"id": "a", "text_span": span(TEXT, "The crow sang."), "agents": ["Crow", "Bird"],
                                "targets": ["Fox"], "relationship_level1": "Romance", "relationship_level2": "lover",
                                "sentiment": "romantic", "action_category": "communicative",
                                "action_type": "inform", "action_context": "", "action_status": "success",
                                "narrative_function": "climax"},
                               {"id": "b", "agents": [], "targets": [], "relationship_level1": "",
                                "relationship_level2": "", "sentiment": "", "action_category": ""}]}
    loaded = load_document(v2, "x_v2.json")
    assert loaded.converted_from == "v2"
    e = loaded.doc.narrative_events
    assert [(r.agent, r.target, r.relationship_level2, r.sentiment) for r in e[0].relationships] == [
        ("Crow", "Fox", "lover", "romantic")]
    assert e[0].action_layer.function == "climax" and e[0].action_layer.type == "inform"
    assert e[1].relationships == []
    assert any(i.kind == "conversion" for i in loaded.issues)


def test_results_built_without_setattr_equal_normal_construction():
    import dataclasses

    from evaluators.results import build_frozen

    r = evaluate(FULL, FULL)
    for res in (r, *r.detailed_results.values()):
        cls = type(res)
        values = {f.name: getattr(res, f.name) for f in dataclasses.fields(res)}
        assert cls(**values) == res
        assert build_frozen(cls, values) == res
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.reason = "changed"  # still frozen
    with pytest.raises(TypeError, match="missing fields"):
        build_frozen(type(r.characters), {"character_f1": 1.0})
