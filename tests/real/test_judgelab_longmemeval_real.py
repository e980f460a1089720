"""Issue 33 on the public LongMemEval files: the judge lab's figures equal a hand computation written here.

What is public data (read from ``../shared/data/long_memory``, never copied into the project):

- ``longmemeval/longmemeval_oracle_questions_slim.json``: the 500 LongMemEval (oracle) questions with their
  reference answers and question types;
- ``longmemeval_predictions_sample/my_predictions.jsonl.eval-results-gpt-4o``: 8 real model answers
  (``hypothesis``) with the official GPT-4o judge's stored labels (``autoeval_label``, gpt-4o-2024-08-06), read
  as is by the lab's verdict reader.  These 8 labels are **judge version A**; it judged only these 8 items.

What this test builds (deterministically; none of it is public data):

- **Answers for 92 more questions**: 92 of the 500 questions drawn with ``numpy.random.default_rng(33)`` from
  those that have a plain answer to give (not ``single-session-preference``, whose references are rubrics, not
  ``_abs`` abstention questions, not the 8 above).  In the drawn order, item ``j`` gets kind ``j % 4``:
  0 *verbatim* (the reference in a sentence: right), 1 *short form* (the reference's first answer when it says
  another "is also acceptable", a number 0-20 as a word, else the reference in another sentence: right),
  2 *negated* ("It wasn't <reference> ...": wrong), 3 *another question's answer* (the next drawn item's
  reference: wrong).  Right / wrong here is by construction.
- **Judge version B**, a rule judge: the project's keyword rule (:func:`evaluators.metrics.keywords.keyword_recall`,
  substring after NFKC + casefold) with the whole reference as the one keyword: right iff the answer contains
  the reference.  It judges all 100 items.
- **The calibration set**: a scripted human review of the 100 items (8 real answers + 92 built) through the real
  review path (a ``ReviewStore`` session, k=2, guidelines saved, then ``labels_from_review``): reviewer *ann*
  reads each answer (the 8 real ones by the hand reading in :data:`HAND_READING`, the built ones by their
  construction); reviewer *bob* is literal (right iff the answer contains the reference, like judge B);
  *carol* adjudicates every disagreement with ann's reading.  So the final labels are ann's.

The lab itself runs as the page runs it: ``read_lab_inputs`` (the public judge file's bytes, judge B's verdict
file, the review session) then ``run_lab``.  Checked against the hand computation here: the split's
stratification, every figure on dev and test for both versions (confusion = sklearn, kappa = sklearn to 1e-12,
accuracy / sensitivity / specificity / base rate / positive rate from the cells), every interval = a percentile
bootstrap loop written here, every under-30 flag (all of judge A's, since it judged 8 items), the overfit flag,
the missing / unlabelled counts, length bias (least squares by hand), and version A against version B.
Not checked here: corrected scores (the 8 judged items are all in the calibration set, so judge A has no
unlabelled target items).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from evaluators.judgelab.lab import read_lab_inputs, run_lab
from evaluators.metrics.keywords import KEYWORD_RULE, fold, keyword_recall
from evaluators.review.store import ReviewStore
from tests.conftest import require_shared

pytestmark = pytest.mark.realdata

QUESTIONS = ("long_memory", "longmemeval", "longmemeval_oracle_questions_slim.json")
STORED = ("long_memory", "longmemeval_predictions_sample", "my_predictions.jsonl.eval-results-gpt-4o")
SEED, RESAMPLES = 33, 500

#: ann's reading of the 8 real answers against the reference (1 right, 0 wrong), with why.
HAND_READING = {
    "gpt4_2655b836": (1, "first issue after the service: the GPS system (reference: GPS not functioning)"),
    "gpt4_2487a7cb": (0, "says the workshop came first; reference: the 'Data Analysis using Python' webinar"),
    "gpt4_76048e76": (1, "the bike first (reference: bike)"),
    "gpt4_2312f94c": (1, "the Samsung Galaxy S22 first (reference: Samsung Galaxy S22)"),
    "0bb5a684": (1, "7 days (reference: 7 days, 8 also acceptable)"),
    "08f4fc43": (1, "30 days (reference: 30 days, 31 also acceptable)"),
    "2c63a862": (1, "14 days (reference: 14 days, 15 also acceptable)"),
    "gpt4_385a5000": (0, "says the marigolds came first; reference: tomatoes"),
}
NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen twenty").split()
RULE_NAME = "rule: reference contained (keyword rule)"


def rule_judge(reference: str, answer: str) -> int:
    """Judge B: 1 when the answer contains the whole reference (the keyword rule, NFKC + casefold)."""
    return int(keyword_recall(answer, [reference]) == 1.0)


def short_form(answer) -> str | None:
    """The reference's first answer when it names another as also acceptable; a number 0-20 as a word."""
    text = str(answer)
    if "also acceptable" in text and ". " in text:
        return text.split(". ")[0]
    if isinstance(answer, int) and 0 <= answer <= 20:
        return NUMBER_WORDS[answer]
    return None


def build_items():
    """The 100 review items (8 real answers, then 92 built), ann's reading of each and what each is."""
    questions = json.loads(require_shared(*QUESTIONS).read_text(encoding="utf-8"))
    stored = [json.loads(line) for line in require_shared(*STORED).read_text(encoding="utf-8").splitlines()
              if line.strip()]
    assert len(questions) == 500 and len(stored) == 8 and set(HAND_READING) == {r["question_id"] for r in stored}
    by_id = {q["question_id"]: q for q in questions}
    items, reading, kinds = [], {}, {}
    for r in stored:
        q = by_id[r["question_id"]]
        items.append({"kind": "memory", "id": q["question_id"], "question_type": q["question_type"],
                      "question": q["question"], "ground_truth": str(q["answer"]), "prediction": r["hypothesis"]})
        reading[q["question_id"]], kinds[q["question_id"]] = HAND_READING[q["question_id"]][0], "real"
    pool = [q for q in questions if q["question_type"] != "single-session-preference"
            and not q["question_id"].endswith("_abs") and q["question_id"] not in HAND_READING]
    drawn = [pool[i] for i in np.random.default_rng(SEED).choice(len(pool), 92, replace=False)]
    for j, q in enumerate(drawn):
        ref = str(q["answer"])
        kind = ("verbatim", "short form", "negated", "other answer")[j % 4]
        if kind == "verbatim":
            answer, right = f"From what you told me, the answer is {ref}.", 1
        elif kind == "short form":
            short = short_form(q["answer"])
            answer = f"I think it's {short}." if short else f"Looking back at our chats: {ref} Hope that helps!"
            right = 1
        elif kind == "negated":
            answer, right = f"It wasn't {ref}, as far as I can tell from our conversations.", 0
        else:
            k = (j + 1) % 92
            while fold(str(drawn[k]["answer"])) == fold(ref):
                k = (k + 1) % 92
            answer, right = f"From what you told me, the answer is {drawn[k]['answer']}.", 0
        items.append({"kind": "memory", "id": q["question_id"], "question_type": q["question_type"],
                      "question": q["question"], "ground_truth": ref, "prediction": answer})
        reading[q["question_id"]], kinds[q["question_id"]] = right, kind
    assert len({it["id"] for it in items}) == 100
    return items, reading, kinds


def scripted_review(folder, items, reading):
    """A review session of the 100 items: ann reads, bob is literal, carol adjudicates with ann's reading."""
    store = ReviewStore(folder / "review.sqlite")
    session = store.create_session("longmemeval calibration", "memory", items, created_by="lead", k=2)
    store.update_session(session.id, guidelines="Right: the answer gives the reference's fact (LongMemEval's "
                         "rubric: equivalent, or all intermediate steps; a subset is wrong).", by="lead")
    adjudicated = 0
    for item in store.items(session.id):
        p = item.payload
        ann = reading[p["id"]]
        bob = rule_judge(p["ground_truth"], p["prediction"])
        for who, verdict in (("ann", ann), ("bob", bob)):
            store.save_decision(item.id, who, label="acceptable_variant" if verdict else "model_error",
                                guidelines_version=1)
        if ann != bob:
            store.adjudicate(item.id, "carol", "acceptable_variant" if ann else "model_error")
            adjudicated += 1
    return store, session.id, adjudicated


def hand_kappa(y, v) -> float:
    """Cohen's kappa from the 2x2 cells: (po - pe) / (1 - pe); NaN when pe = 1."""
    y, v = np.asarray(y), np.asarray(v)
    n = y.size
    po = np.mean(y == v)
    pe = (np.sum(y == 0) * np.sum(v == 0) + np.sum(y == 1) * np.sum(v == 1)) / n ** 2
    return (po - pe) / (1 - pe) if pe < 1 else np.nan


HAND = {
    "cohen_kappa": hand_kappa,
    "accuracy": lambda y, v: np.mean(y == v),
    "sensitivity": lambda y, v: np.mean(v[y == 1]) if (y == 1).any() else np.nan,
    "specificity": lambda y, v: np.mean(v[y == 0] == 0) if (y == 0).any() else np.nan,
    "base_rate": lambda y, v: np.mean(y),
    "judge_positive_rate": lambda y, v: np.mean(v),
}


def hand_bootstrap(y, v, statistic):
    """Percentile bootstrap by hand: ``n`` indices drawn with replacement per resample (``default_rng(SEED)``),
    undefined resamples dropped, no interval when fewer than half are defined; 2.5 / 97.5 percentiles."""
    y, v = np.asarray(y), np.asarray(v)
    rng = np.random.default_rng(SEED)
    values = []
    for _ in range(RESAMPLES):
        idx = rng.integers(0, y.size, y.size)
        values.append(statistic(y[idx], v[idx]))
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size * 2 < RESAMPLES:
        return None, None
    return tuple(np.percentile(values, [2.5, 97.5]))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lme_judge")
    items, reading, kinds = build_items()
    store, session_id, adjudicated = scripted_review(folder, items, reading)
    rule_lines = "\n".join(json.dumps({"item_id": it["id"], "verdict": rule_judge(it["ground_truth"], it["prediction"]),
                                       "judge": RULE_NAME, "model": "rule", "prompt_hash": KEYWORD_RULE,
                                       "parser": "keyword_recall == 1"}) for it in items)
    inputs = read_lab_inputs(verdicts=[(STORED[-1], require_shared(*STORED).read_bytes()),
                                       ("rule_judge.jsonl", rule_lines.encode("utf-8"))],
                             review=(store, [session_id]))
    result = run_lab(inputs.labels, inputs.judges, lengths=inputs.lengths, refs=inputs.refs, seed=SEED,
                     n_resamples=RESAMPLES)
    store.engine.dispose()
    return items, reading, kinds, adjudicated, inputs, result


def test_inputs_are_the_public_judge_file_the_rule_judge_and_the_review(lab):
    items, reading, kinds, adjudicated, inputs, _ = lab
    assert inputs.issues == () and inputs.left_out == ()
    assert {lab_.item_id: lab_.label for lab_ in inputs.labels} == reading  # final labels = ann's reading
    assert len(inputs.labels) == 100 and len({lab_.guidelines_version for lab_ in inputs.labels}) == 1
    # 8 real (6 right, 2 wrong) + 23 of each built kind: 6 + 46 = 52 right, 2 + 46 = 48 wrong
    counts = {k: list(kinds.values()).count(k) for k in ("real", "verbatim", "short form", "negated", "other answer")}
    assert counts == {"real": 8, "verbatim": 23, "short form": 23, "negated": 23, "other answer": 23}
    assert sum(reading.values()) == 52
    (gpt4o, stored), (rule, rule_verdicts) = inputs.judges
    assert gpt4o.model == "gpt-4o-2024-08-06" and gpt4o.label == "gpt-4o-2024-08-06"
    # the stored labels, as in the public file: 6 true, 2 false, on the 8 items ann read the same way
    assert stored == {i: r for i, (r, _) in HAND_READING.items()}
    assert rule.label == RULE_NAME and len(rule_verdicts) == 100
    # reviewers disagree exactly where the literal reading (= judge B) differs from ann's
    assert adjudicated == sum(rule_verdicts[i] != reading[i] for i in reading)
    assert inputs.lengths == {it["id"]: len(it["prediction"]) for it in items}


def test_figures_equal_a_hand_computation(lab):
    items, reading, _, _, inputs, result = lab
    report = result.report
    sides = dict(report.split.sides)
    assert report.n_labels == 100 and not report.pooled_guidelines
    # the split by hand: every label x question type stratum halved (floor or ceil)
    slices = {it["id"]: it["question_type"] for it in items}
    for key in {(reading[i], slices[i]) for i in reading}:
        members = [i for i in reading if (reading[i], slices[i]) == key]
        assert abs(sum(sides[i] == "dev" for i in members) - len(members) / 2) <= 0.5
    verdicts = dict((v.label, d) for v, d in inputs.judges)
    assert [c.version.label for c in report.judges] == ["gpt-4o-2024-08-06", RULE_NAME]
    gpt4o, rule = report.judges
    assert gpt4o.missing_ids == tuple(sorted(i for i in reading if i not in HAND_READING))  # the 92 built items
    assert rule.missing_ids == () and gpt4o.unlabelled_verdicts == rule.unlabelled_verdicts == 0
    for cal in report.judges:
        v_all = verdicts[cal.version.label]
        for figs in (cal.dev, cal.test):
            ids = sorted(i for i in reading if sides[i] == figs.side and i in v_all)
            y = np.array([reading[i] for i in ids])
            v = np.array([v_all[i] for i in ids])
            (tn, fp), (fn, tp) = confusion_matrix(y, v, labels=[0, 1]).tolist()
            n = len(ids)
            assert figs.n_items == n and figs.confusion == [[tn, fp], [fn, tp]]
            assert figs.accuracy.value == pytest.approx((tn + tp) / n, abs=1e-12)
            assert figs.sensitivity.value == pytest.approx(tp / (tp + fn), abs=1e-12)
            assert figs.specificity.value == pytest.approx(tn / (tn + fp), abs=1e-12)
            assert figs.base_rate.value == pytest.approx((fn + tp) / n, abs=1e-12)
            assert figs.judge_positive_rate.value == pytest.approx((fp + tp) / n, abs=1e-12)
            assert figs.cohen_kappa.value == pytest.approx(cohen_kappa_score(y, v, labels=[0, 1]), abs=1e-12)
            assert figs.cohen_kappa.value == pytest.approx(hand_kappa(y, v), abs=1e-12)
            assert figs.false_positive_ids == tuple(i for i in ids if reading[i] == 0 and v_all[i] == 1)
            assert figs.false_negative_ids == tuple(i for i in ids if reading[i] == 1 and v_all[i] == 0)
            # under-30 flags: by each figure's denominator
            dens = {"accuracy": n, "cohen_kappa": n, "base_rate": n, "judge_positive_rate": n,
                    "sensitivity": tp + fn, "specificity": tn + fp}
            for name, fn_ in HAND.items():
                fig = getattr(figs, name)
                assert fig.n == dens[name] and fig.small_sample == (dens[name] < 30), (cal.version.label, name)
                low, high = hand_bootstrap(y, v, fn_)
                if low is None:
                    assert fig.ci_low is None and fig.ci_high is None, (cal.version.label, figs.side, name)
                else:
                    assert (fig.ci_low, fig.ci_high) == (pytest.approx(low, abs=1e-12),
                                                         pytest.approx(high, abs=1e-12)), (cal.version.label, name)
        # overfit flag by hand: dev kappa above the upper end of the test kappa's interval
        test_high = hand_bootstrap(np.array([reading[i] for i in sorted(reading) if sides[i] == "test" and i in v_all]),
                                   np.array([v_all[i] for i in sorted(reading) if sides[i] == "test" and i in v_all]),
                                   hand_kappa)[1]
        dev_kappa = cal.dev.cohen_kappa.value
        assert cal.overfit == (dev_kappa is not None and test_high is not None and dev_kappa > test_high)
    # judge A judged 8 items: every figure of it on both sides carries the under-30 flag
    assert gpt4o.dev.n_items + gpt4o.test.n_items == 8
    assert all(getattr(f, name).small_sample for f in (gpt4o.dev, gpt4o.test) for name in HAND)


def test_length_bias_and_version_comparison_by_hand(lab):
    items, reading, _, _, inputs, result = lab
    lengths = {it["id"]: len(it["prediction"]) for it in items}
    verdicts = dict((v.label, d) for v, d in inputs.judges)
    got = dict(result.length_bias)
    assert set(got) == set(verdicts)
    for name, d in verdicts.items():
        ids = [lab_.item_id for lab_ in inputs.labels if lab_.item_id in d]
        y = np.array([d[i] for i in ids], float)
        x = np.array([lengths[i] / 100 for i in ids])
        h = np.array([reading[i] for i in ids], float)
        coef = np.linalg.lstsq(np.column_stack([np.ones_like(x), x, h]), y, rcond=None)[0]
        assert got[name].slope == pytest.approx(coef[1], abs=1e-9) and got[name].n == len(ids)
    # version A (stored GPT-4o) against version B (rule) on the items both judged: the 8 real answers
    (cmp,) = result.comparisons
    a, b = verdicts["gpt-4o-2024-08-06"], verdicts[RULE_NAME]
    both = sorted(HAND_READING)
    assert (cmp.before, cmp.after, cmp.n_items) == ("gpt-4o-2024-08-06", RULE_NAME, 8)
    assert cmp.agreement == pytest.approx(np.mean([a[i] == b[i] for i in both]), abs=1e-12)
    assert cmp.cohen_kappa.value == pytest.approx(cohen_kappa_score([a[i] for i in both], [b[i] for i in both]),
                                                  abs=1e-12)
    assert cmp.cohen_kappa.small_sample
    assert set(cmp.drift.missing_ids) == set(reading) - set(both)
    assert set(cmp.drift.up_ids) == {i for i in both if a[i] == 0 and b[i] == 1}
    assert set(cmp.drift.down_ids) == {i for i in both if a[i] == 1 and b[i] == 0}
