"""Issue 33 on real long-memory data: mem0's 1,540 LoCoMo answers with the judge labels stored beside them
(``llm_score``) as one judge version, a rule-based judge (token F1 >= 0.3, the stored ``f1_score``) as another,
and a scripted human review of 100 answers (a review session: two scripted reviewers, disagreements
adjudicated) as the calibration set.  The lab's figures equal a hand computation written here.

(The LongMemEval predictions in ../shared/data hold 8 judged answers only, too few for a calibration set; the
mem0 LoCoMo file is the public file with stored LLM-judge labels at scale; those 8 are used as far as they go
in test_judgelab_longmemeval_real.py.)
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluators.judgelab import JudgeVersion, calibrate, corrected_scores
from evaluators.judgelab.from_review import labels_from_review
from evaluators.review.store import ReviewStore
from tests.conftest import require_shared

pytestmark = pytest.mark.realdata


def _contains(gt: str, prediction: str) -> bool:
    """Scripted reviewer ann: an answer that contains the reference (case-insensitive) is right."""
    return bool(gt.strip()) and gt.strip().lower() in prediction.lower()


def scripted_review(folder):
    """mem0's 1,540 LoCoMo records (ids ``conv<k>-<i>``) and a review session of 100 of them in ``folder``: two
    scripted reviewers, disagreements adjudicated.  Returns (records, session id, {id: human verdict}, labels)."""
    path = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    records = [dict(r, id=f"conv{conv}-{i:03d}") for conv in sorted(data, key=int) for i, r in enumerate(data[conv])]
    assert len(records) == 1540
    chosen = sorted(np.random.default_rng(33).choice(len(records), 100, replace=False))
    sample = [records[i] for i in chosen]
    items = [{"kind": "memory", "id": r["id"], "category": r["category"], "question": r["question"],
              "ground_truth": str(r["answer"]), "prediction": r["response"]} for r in sample]
    store = ReviewStore(folder / "review.sqlite")
    session = store.create_session("locomo calibration", "memory", items, created_by="lead", k=2)
    store.update_session(session.id, guidelines="Right: the answer gives the reference's fact.", by="lead")
    human = {}
    for item, r in zip(store.items(session.id), sample):
        ann = _contains(str(r["answer"]), r["response"])
        bob = r["f1_score"] >= 0.5  # scripted reviewer bob: token overlap
        store.save_decision(item.id, "ann", label="acceptable_variant" if ann else "model_error", guidelines_version=1)
        store.save_decision(item.id, "bob", label="acceptable_variant" if bob else "model_error", guidelines_version=1)
        if ann != bob:  # carol adjudicates: right when token F1 >= 0.34
            right = r["f1_score"] >= 0.34
            store.adjudicate(item.id, "carol", "acceptable_variant" if right else "model_error")
            human[r["id"]] = int(right)
        else:
            human[r["id"]] = int(ann)
    got = labels_from_review(store, [session.id])
    store.engine.dispose()
    return records, session.id, human, got


def test_stored_judge_and_rule_judge_against_a_scripted_review_of_100_answers(tmp_path):
    records, _, human, got = scripted_review(tmp_path)
    assert got.left_out == () and len(got.labels) == 100
    assert {lab.item_id: lab.label for lab in got.labels} == human
    stored = JudgeVersion("mem0 stored llm_score", "(not published with the file)", (), "llm_score", "stored judge")
    rule = JudgeVersion.make("rule", "token F1 >= 0.3", {"threshold": 0.3}, "f1_score", "rule judge")
    verdicts = {"stored judge": {r["id"]: int(r["llm_score"]) for r in records},
                "rule judge": {r["id"]: int(r["f1_score"] >= 0.3) for r in records}}
    report = calibrate(got.labels, [(stored, verdicts["stored judge"]), (rule, verdicts["rule judge"])], seed=5,
                       n_resamples=500)
    assert report.guidelines_versions == (got.labels[0].guidelines_version,) and not report.pooled_guidelines
    sides = dict(report.split.sides)
    # the split by hand: every category x label stratum halved (floor or ceil)
    for key in {(lab.label, lab.slice) for lab in got.labels}:
        members = [lab.item_id for lab in got.labels if (lab.label, lab.slice) == key]
        assert abs(sum(sides[i] == "dev" for i in members) - len(members) / 2) <= 0.5
    for cal in report.judges:
        v = verdicts[cal.version.name]
        for figs in (cal.dev, cal.test):
            ids = [i for i in human if sides[i] == figs.side]
            tn = sum(1 for i in ids if human[i] == 0 and v[i] == 0)
            fp = sum(1 for i in ids if human[i] == 0 and v[i] == 1)
            fn = sum(1 for i in ids if human[i] == 1 and v[i] == 0)
            tp = sum(1 for i in ids if human[i] == 1 and v[i] == 1)
            n = tn + fp + fn + tp
            po = (tn + tp) / n
            pe = ((tn + fp) * (tn + fn) + (fn + tp) * (fp + tp)) / n ** 2
            assert figs.confusion == [[tn, fp], [fn, tp]] and figs.n_items == len(ids)
            assert figs.accuracy.value == pytest.approx(po, abs=1e-12)
            assert figs.cohen_kappa.value == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
            assert figs.sensitivity.value == pytest.approx(tp / (tp + fn), abs=1e-12)
            assert figs.specificity.value == pytest.approx(tn / (tn + fp), abs=1e-12)
            assert figs.disagreeing_ids == tuple(sorted(i for i in ids if human[i] != v[i]))
            assert figs.cohen_kappa.ci_low < figs.cohen_kappa.value < figs.cohen_kappa.ci_high
    # corrected scores of mem0 on the 1,440 answers nobody reviewed, calibrated on the test side
    test_ids = report.split.ids("test")
    target = [verdicts["stored judge"][r["id"]] for r in records if r["id"] not in human]
    scores = corrected_scores(target, [human[i] for i in test_ids], [verdicts["stored judge"][i] for i in test_ids])
    raw = scores.get("raw_judge")
    assert len(target) == 1440 and raw.estimate == pytest.approx(np.mean(target))
    a = scores.adjusted
    cal = report.judges[0].test
    assert (a.q0, a.q1) == (pytest.approx(cal.specificity.value), pytest.approx(cal.sensitivity.value))
    assert a.estimate == pytest.approx(min(1, max(0, (a.p + a.q0 - 1) / (a.q0 + a.q1 - 1))))
