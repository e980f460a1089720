"""The shipped narrative demo exercises every kind of difference the dashboard shows."""

import pytest

from evaluators.demo import demo_path
from evaluators.io import collect_paths
from evaluators.narrative.batch import evaluate_batch


@pytest.fixture(scope="module")
def demo():
    files = collect_paths(demo_path("narrative"))
    gt = [f for f in files if f.name.endswith("_v3.json")]
    pred = [f for f in files if f.name.endswith("_prediction.json")]
    b = evaluate_batch(gt, pred)
    return {r.story_id: r for r in b.scored}


def test_both_languages_are_scored(demo):
    assert sorted(demo) == ["EN_001_lantern_keeper", "ZH_001_石匠与山神"]


@pytest.mark.parametrize("sid", ["EN_001_lantern_keeper", "ZH_001_石匠与山神"])
def test_every_kind_of_difference_is_present(demo, sid):
    r = demo[sid]
    c = r.characters
    assert c.missing_characters and c.extra_characters                      # missed and extra characters
    assert c.match_methods["gt_alias"] >= 1                                 # alias match
    assert c.archetype_correct < c.archetype_total                         # archetype mismatch
    rel = r.relationships
    assert rel.level1_correct < rel.level1_total or rel.level2_correct < rel.level2_total  # wrong labels
    assert rel.total_relationships_correct < rel.total_relationships_gt    # missed relationship
    s = r.sentiment
    assert s.total_sentiment_correct < s.total_sentiment_gt                # wrong sentiment
    a = r.action_layer
    assert sum(a.field_correct.values()) < sum(a.field_total.values())     # action field mismatches
    assert any(v for k, v in a.skipped.items() if k.startswith("gt_fields_empty_"))  # a GT-missing field
    assert "offset_repaired" in {sp.status for sp in r.alignment.pred_spans}  # a shifted span, repaired
    assert r.alignment.missed                                              # a missing span (missed event)
    assert r.text_span.span_categories["partial"] >= 1                     # a partial span
    assert 0 < r.overall_score < 1


def test_chinese_demo_specifics(demo):
    r = demo["ZH_001_石匠与山神"]
    assert r.alignment.spurious                                              # a spurious event
    assert r.sentiment.n_relationships_skipped == 1                          # GT sentiment empty: skipped
    assert r.relationships.n_invalid_pred == 0 and not r.issues             # a clean demo: no input problem
    assert any("outside the taxonomy" in w and "sabotage" in w for w in r.warnings)


def test_macro_intervals_resample_documents(demo):
    from evaluators.narrative.batch import macro_aggregate

    docs = list(demo.values())
    macro = macro_aggregate(docs)
    a, b = (r.overall_score for r in docs)
    # two documents: resample means are a, (a+b)/2, b with probabilities 1/4, 1/2, 1/4, so the 2.5th
    # and 97.5th percentiles of 10,000 resamples are min(a, b) and max(a, b)
    assert macro["overall_score"] == pytest.approx((a + b) / 2)
    assert (macro["overall_score_ci_low"], macro["overall_score_ci_high"]) == (min(a, b), max(a, b))
    for c, lo in macro["component_ci_low"].items():
        vals = [r.component_scores[c] for r in docs if r.component_scores[c] is not None]
        assert (lo, macro["component_ci_high"][c]) == ((min(vals), max(vals)) if vals else (None, None))
    assert "unit=document" in macro["ci"]
    assert "overall_score_ci_low" not in macro_aggregate(docs, ci_resamples=0)
