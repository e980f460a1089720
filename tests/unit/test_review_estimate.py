"""``review estimate`` says which sample it used, refuses a non-random one, counts unadjudicated
disagreements, works for every session whose items carry a metric (memory, test sets), and exits 2
with the reason when it cannot estimate (issue 29)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluators.cli import main
from evaluators.review import ReviewStore
from evaluators.review.sampling import draw_sample, key_text, session_design


def _memory_payloads(n=60, judged=True):
    # the judge says right on 2 of 3; an answer is really right when the judge says so, except every 7th
    out = []
    for i in range(n):
        p = {"kind": "memory", "id": f"conv0_{i}", "question_type": "single_hop" if i % 2 else "temporal",
             "question": f"问题 {i}?", "ground_truth": "答案", "prediction": "答案" if i % 3 else "别的",
             "scores": {"token_f1_char": 1.0 if i % 3 else 0.0}}
        if judged:
            p["scores"]["judge_score"] = 1.0 if i % 3 else 0.0
        out.append(p)
    return out


def _testset_payloads(n=40):
    return [{"kind": "testsets", "id": f"q_{i:03d}", "question": f"Q{i}?", "ground_truth": "lamp",
             "prediction": "lamp" if i % 4 else "shade", "category": "factual", "keywords_missing": [],
             "score": 1.0 if i % 4 else 0.0} for i in range(n)]


def right(payload, i) -> str:
    metric_right = (payload.get("scores", {}).get("judge_score", payload.get("score", payload.get("combined")))
                    or 0) >= 0.5
    truly = metric_right != (i % 7 == 0)
    return "acceptable_variant" if truly else "model_error"


def make(db, name, kind, payloads, reviewed, *, settings=None, disagree=()):
    store = ReviewStore(db)
    s = store.create_session(name, kind, payloads, created_by="lead", settings=settings, k=2 if disagree else 1)
    items = store.items(s.id)
    for n, item in enumerate(items):
        if n not in reviewed:
            continue
        store.save_decision(item.id, "ann", label=right(item.payload, n))
        if n in disagree:
            other = "model_error" if right(item.payload, n) == "acceptable_variant" else "acceptable_variant"
            store.save_decision(item.id, "bob", label=other)
    return store


def _dialogue_payloads(n=40):
    # one persona model's replies; the combined score high on 3 of 4
    return [{"kind": "dialogue", "id": f"下雨天#{i}#0", "scene": "下雨天", "dialogue_index": i, "context": "",
             "ground_truth": "看，是彩虹！", "prediction": "彩虹！" if i % 4 else "不知道", "system": "panda",
             "combined": 0.8 if i % 4 else 0.1} for i in range(n)]


@pytest.mark.parametrize("kind,payloads", [("memory", _memory_payloads()), ("testsets", _testset_payloads()),
                                           ("dialogue", _dialogue_payloads())])
def test_memory_and_test_set_sessions_give_an_estimate(tmp_path, capsys, kind, payloads):
    db = tmp_path / "r.sqlite"
    make(db, "s", kind, payloads, reviewed=set(range(0, len(payloads), 2)))
    assert main(["review", "estimate", "--db", str(db), "--session", "s"]) == 0
    out = capsys.readouterr().out
    n = len(payloads)
    assert f"{n // 2} of {n} records reviewed" in out and "sample: uniformly random sample" in out
    assert "prediction-powered (PPI++)" in out and "unadjudicated disagreements: 0" in out
    assert "more reviews -> expected interval width: +0:" in out


def test_a_memory_session_without_the_metric_exits_2_with_the_reason(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    make(db, "s", "memory", _memory_payloads(judged=False), reviewed=set(range(10)))
    assert main(["review", "estimate", "--db", str(db), "--session", "s"]) == 2
    captured = capsys.readouterr()
    assert "no item carries the metric scores.judge_score" in captured.out
    assert "no reviewed estimate could be made" in captured.err


def test_a_narrative_session_has_no_metric(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    store = ReviewStore(db)
    store.create_session("n", "narrative", [{"kind": "narrative", "id": "s1:characters:0", "question": "q",
                                             "ground_truth": "a", "prediction": "b"}], created_by="lead")
    assert main(["review", "estimate", "--db", str(db), "--session", "n"]) == 2
    assert "carry no metric" in capsys.readouterr().err


@pytest.mark.parametrize("settings,reason", [({"order": "informative"}, "'informative' order"),
                                             ({"filter": {"metric_max": 0.5}}, "filtered (metric_max=0.5)")])
def test_a_non_random_session_is_refused_with_the_reason(tmp_path, capsys, settings, reason):
    db = tmp_path / "r.sqlite"
    make(db, "s", "memory", _memory_payloads(), reviewed=set(range(20)), settings=settings)
    assert main(["review", "estimate", "--db", str(db), "--session", "s"]) == 2
    err = capsys.readouterr().err
    assert reason in err and "not a random sample" in err


def test_unadjudicated_disagreements_are_counted_not_dropped(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    make(db, "s", "testsets", _testset_payloads(), reviewed=set(range(20)), disagree={1, 2, 3})
    assert main(["review", "estimate", "--db", str(db), "--session", "s"]) == 0
    out = capsys.readouterr().out
    assert "17 of 40 records reviewed" in out   # 20 reviewed, 3 without a final label
    assert "unadjudicated disagreements: 3 reviewed record(s) without a final label" in out
    assert "counted all wrong" in out and "all right" in out


@pytest.mark.parametrize("design", ["stratified", "active"])
def test_stratified_and_active_sessions(tmp_path, capsys, design):
    payloads = _memory_payloads(90)
    keys = [(None, p["id"]) for p in payloads]
    sampling = draw_sample(keys, [p["scores"]["judge_score"] for p in payloads], 40, design=design, seed=3)
    chosen = {n for n, k in enumerate(keys) if key_text(k) in sampling["selected"]}
    assert session_design({"sampling": sampling}).design == design
    db = tmp_path / "r.sqlite"
    make(db, "s", "memory", payloads, reviewed=chosen, settings={"sampling": sampling})
    assert main(["review", "estimate", "--db", str(db), "--session", "s"]) == 0
    out = capsys.readouterr().out
    assert f"sample: {design} sample of {len(chosen)} items" in out
    assert ("stratified PPI" if design == "stratified" else "active PPI (IPW)") in out


def test_stratified_allocation_follows_the_metric_spread():
    # 100 records judged 0.5 (unsure) and 900 judged 1 (sure): Neyman gives the unsure stratum far more than 10%
    keys = [(None, str(i)) for i in range(1000)]
    values = [0.5] * 100 + [1.0] * 900
    s = draw_sample(keys, values, 100, design="stratified", seed=1)
    strata = list(s["strata"].values())
    assert len(strata) == 100 and strata.count("[0.5, 1)") > 30
    assert np.isclose(sum(1 / p for p in s["selected"].values()), 1000)   # Horvitz-Thompson: the weights sum to N


def test_a_memory_session_with_its_results_file_as_gt(tmp_path, capsys):
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in _memory_payloads()), encoding="utf-8")
    db = tmp_path / "r.sqlite"
    store = ReviewStore(db)
    s = store.create_session("m", "memory", _memory_payloads(), created_by="lead",
                             uploads=[store.put_upload(results.name, results.read_bytes())])
    for n, item in enumerate(store.items(s.id)):
        if n % 3 == 0:
            store.save_decision(item.id, "ann", label=right(item.payload, n))
    assert main(["review", "estimate", "--db", str(db), "--session", "m", "--gt", str(results)]) == 0
    assert "20 of 60 records reviewed" in capsys.readouterr().out
    other = tmp_path / "other.jsonl"
    other.write_text("{}\n", encoding="utf-8")
    assert main(["review", "estimate", "--db", str(db), "--session", "m", "--gt", str(other)]) == 2
    assert "was not made from" in capsys.readouterr().err


@pytest.mark.parametrize("design", ["stratified", "active"])
def test_the_printed_design_estimate_is_the_estimator_on_the_sessions_labels(tmp_path, capsys, design):
    """The numbers ``review estimate`` prints for a stratified / active session are the library estimator on the
    reviewed records' labels (the metric's strata, every other record unlabelled), and the disagreement range is
    the same estimator with the 2 unadjudicated records counted wrong, then right."""
    from evaluators.metrics.ppi import active_ppi_mean, stratified_ppi_mean
    from evaluators.reports.format import percent

    payloads = _memory_payloads(90)
    keys = [(None, p["id"]) for p in payloads]
    judge = [p["scores"]["judge_score"] for p in payloads]
    sampling = draw_sample(keys, judge, 40, design=design, seed=3)
    chosen = sorted(n for n, k in enumerate(keys) if key_text(k) in sampling["selected"])
    split = set(chosen[:2])
    db = tmp_path / "r.sqlite"
    make(db, "s", "memory", payloads, reviewed=set(chosen), settings={"sampling": sampling}, disagree=split)
    assert main(["review", "estimate", "--db", str(db), "--session", "s"]) == 0
    out = capsys.readouterr().out
    strata = ["0" if v <= 0 else "1" for v in judge]            # the metric's strata: the judge says 0 or 1

    def estimate(extra):
        y = {n: 1.0 if right(payloads[n], n) == "acceptable_variant" else 0.0 for n in chosen if n not in split}
        y.update(extra)
        lab = sorted(y)
        if design == "stratified":
            rest = [n for n in range(90) if n not in y]
            return stratified_ppi_mean([y[n] for n in lab], [judge[n] for n in lab], [strata[n] for n in lab],
                                       [judge[n] for n in rest], [strata[n] for n in rest])
        # active: each selected record's inclusion probability, scaled by the share of the selection reviewed
        share = len(lab) / len(chosen)
        pi = [max(1e-12, sampling["selected"].get(key_text(k), 1.0) * share) for k in keys]
        return active_ppi_mean(judge, pi, [n in y for n in range(90)], [y.get(n, float("nan")) for n in range(90)],
                               strata=strata)

    e = estimate({})
    name = "stratified PPI:" if design == "stratified" else "active PPI (IPW):"
    line = next(line for line in out.splitlines() if line.strip().startswith(name))
    assert f"{percent(e.estimate)} [{percent(e.ci_low)}, {percent(e.ci_high)}]" in line, (line, e)
    low, high = estimate({n: 0.0 for n in split}), estimate({n: 1.0 for n in split})
    assert f"counted all wrong {percent(low.estimate)}, all right {percent(high.estimate)}" in out
    assert f"({len(chosen) - 2} of 90 records reviewed)" in out
