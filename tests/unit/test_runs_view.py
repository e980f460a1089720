"""evaluators.runs.view: the Runs page's reads of the registry (summary-row points, the page's trend, GT changes)."""

from __future__ import annotations

from evaluators.runs import RunStore
from evaluators.runs import view as rv
from evaluators.runs.trend import trend
from tests.helpers.runs_history import history


def test_summary_points_are_the_trend_points_and_only_the_latest_steps_are_tested(tmp_path):
    store = RunStore(f"sqlite:///{tmp_path / 'r.sqlite'}")
    records = history(store, [0.7, 0.7, 0.5, 0.5, 0.9], n_items=60, seed=4)
    results = rv.trend_results(store, records, ["token_f1"], ["lang"])
    full = trend(results, ["token_f1"], slices=["lang"], n_resamples=rv.SUMMARY_RESAMPLES)
    # the points logged with each run (1,000-resample bootstrap, seed 0) are those trend() computes from the items
    assert rv.summary_points(records, "token_f1", ["lang"]) == full.points
    assert len(full.points) == 5 * 3  # every item, en, zh for each run
    page = rv.page_trend(store, records, "token_f1", slices=["lang"], tested_steps=2)
    assert page.points == full.points
    # 4 steps; the first 2 untested (with the reason and the runs' sizes), the latest 2 those of the full trend
    assert [(s.run_a, s.run_b, s.joined, s.n_a) for s in page.steps[:2]] == [("v1", "v2", False, 60),
                                                                             ("v2", "v3", False, 60)]
    assert page.steps[0].reason == "not tested on the page (only the latest 2 steps are)"
    assert page.steps[2:] == full.steps[2:]
    assert rv.page_trend(store, records, "token_f1", slices=["lang"]).steps == full.steps
    store.dispose()


def test_gt_changes_and_the_columns_read(tmp_path):
    class R:  # the fields gt_changes and columns_of read
        def __init__(self, version, metrics=(), summary=()):
            self.dataset_version, self.metrics, self.summary = version, metrics, summary

    assert rv.gt_changes([R(0), R(0), R(1), R(1), R(3)]) == [(2, 0, 1), (4, 1, 3)]
    assert rv.gt_changes([R(2)]) == []
    r = R(0, ("exact_match", "token_f1"), ({"slice": ""}, {"slice": "lang"}))
    assert rv.columns_of(r, ["token_f1", "bleu"], ["lang", "scene"]) == ["token_f1", "lang"]
    assert rv.slices_of([r]) == ["lang"] and rv.metrics_of([r, R(0, ("bleu", "token_f1"))]) == [
        "exact_match", "token_f1", "bleu"]
