"""Review sessions: agreement equal to the reference libraries, durable and lock-safe storage, exchange."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evaluators.cli import main
from evaluators.review import ReviewStore, StaleDecision, cohen_kappa, fleiss_kappa, krippendorff_alpha
from evaluators.review.agreement import session_agreement
from evaluators.reports.review import export_csv
from evaluators.review.exchange import export_jsonl, import_jsonl
from tests.conftest import ROOT, require_shared

ITEMS = [{"kind": "qa", "id": f"q{i}", "question": f"question {i}", "ground_truth": "Paris",
          "prediction": "Paris" if i % 2 else "Lyon", "system": "sys-a"} for i in range(6)]


@pytest.fixture
def store(review_url):
    """An empty review database on SQLite, and on PostgreSQL when EVALBOARD_TEST_DATABASE_URL is set."""
    return ReviewStore(review_url)


# ---------------------------------------------------------------- agreement


def test_cohen_kappa_by_hand_and_against_sklearn():
    a = ["model_error", "model_error", "acceptable_variant", "acceptable_variant"]
    b = ["model_error", "acceptable_variant", "acceptable_variant", "acceptable_variant"]
    # observed agreement 3/4; chance: A says model_error 2/4, B 1/4 -> 2/4*1/4 + 2/4*3/4 = 1/2
    # kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2
    assert cohen_kappa(a, b) == pytest.approx(0.5) == cohen_kappa_score(a, b)
    rng = np.random.default_rng(0)
    x = rng.integers(1, 6, 80)
    y = np.clip(x + rng.integers(-1, 2, 80), 1, 5)
    for weights in (None, "linear", "quadratic"):
        assert cohen_kappa(list(x), list(y), weights=weights) == pytest.approx(cohen_kappa_score(x, y, weights=weights))
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # one label only: chance agreement 1


def test_fleiss_kappa_by_hand_and_against_statsmodels():
    # 3 items x 2 categories, 2 raters each: [2,0], [0,2], [1,1]
    # p_j = (3/6, 3/6); P_i = 1, 1, 0 -> P = 2/3; Pe = 1/2 -> kappa = (2/3 - 1/2) / (1/2) = 1/3
    table = [[2, 0], [0, 2], [1, 1]]
    assert fleiss_kappa(table) == pytest.approx(1 / 3) == pytest.approx(statsmodels_fleiss(np.array(table)))
    rng = np.random.default_rng(1)
    t = rng.multinomial(5, [0.5, 0.3, 0.2], size=40)
    assert fleiss_kappa(t) == pytest.approx(statsmodels_fleiss(t))
    with pytest.raises(ValueError):
        fleiss_kappa([[2, 0], [1, 2]])


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_against_the_krippendorff_package(level):
    rng = np.random.default_rng(2)
    data = rng.integers(1, 6, (4, 40)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan  # missing ratings
    ours = krippendorff_alpha(data.tolist(), level)
    assert ours == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_krippendorff_alpha_by_hand():
    # two raters, three units: (1,1), (2,2), (1,2); nominal coincidences o11=2, o22=2, o12=o21=1; n=6
    # D_o term: o12 + o21 = 2; expected: n1=3, n2=3 -> 2 * 3 * 3 = 18; alpha = 1 - 5 * 2 / 18 = 4/9
    assert krippendorff_alpha([[1, 2, 1], [1, 2, 2]], "nominal") == pytest.approx(4 / 9)


def test_agreement_on_real_data_mem0_judge_against_its_own_f1():
    """The LLM judge's verdicts (llm_score) against mem0's token F1 >= 0.5, on the real LoCoMo run."""
    path = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    rows = [r for block in json.loads(path.read_text(encoding="utf-8")).values() for r in block]
    judge = [int(r["llm_score"]) for r in rows]
    f1_rule = [int(float(r["f1_score"]) >= 0.5) for r in rows]
    assert len(rows) > 100
    assert cohen_kappa(judge, f1_rule) == pytest.approx(cohen_kappa_score(judge, f1_rule))
    data = np.array([judge, f1_rule], dtype=float)
    assert krippendorff_alpha(data.tolist(), "nominal") == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


# ---------------------------------------------------------------- storage


def test_sessions_items_orders_and_blind_sides(store):
    s = store.create_session("demo", "qa", ITEMS + ITEMS[:1], created_by="ann", blind=True, k=2, seed=7)
    items = store.items(s.id)
    assert len(items) == 6 and s.n_items == 6  # the repeated payload is one item
    first = [i.id for i in store.order_for(s.id, "alice")]
    assert first == [i.id for i in store.order_for(s.id, "alice")]  # seeded: reproducible
    assert sorted(first) == sorted(i.id for i in items)
    # one seeded order per session (overlap first: everyone works towards k reviews on the same items)
    assert first == [i.id for i in store.order_for(s.id, "bob")]
    assert store.next_item(s.id, "alice").id == first[0]
    sides = [ReviewStore.blind_sides(s, "alice", i) for i in items]
    assert sides == [ReviewStore.blind_sides(s, "alice", i) for i in items] and any(sides) and not all(sides)
    with pytest.raises(ValueError, match="exists already"):
        store.create_session("demo", "qa", ITEMS, created_by="ann")


def test_k_reviewers_per_item(store):
    s = store.create_session("k1", "qa", ITEMS[:2], created_by="x", k=1)
    item = store.items(s.id)[0]
    store.save_decision(item.id, "alice", label="model_error")
    assert item.id not in [i.id for i in store.order_for(s.id, "bob")]  # already reviewed by k = 1 person
    assert item.id in [i.id for i in store.order_for(s.id, "alice")]   # but still in alice's own list


def test_optimistic_locking_and_validation(store):
    s = store.create_session("lock", "qa", ITEMS[:1], created_by="x")
    item = store.items(s.id)[0]
    d1 = store.save_decision(item.id, "alice", label="model_error", score=2, comment="wrong city")
    assert (d1.version, d1.label, d1.score) == (1, "model_error", 2)
    d2 = store.save_decision(item.id, "alice", label="acceptable_variant", expected_version=1)
    assert d2.version == 2
    with pytest.raises(StaleDecision):  # a second tab still holding version 1
        store.save_decision(item.id, "alice", label="gt_error", expected_version=1)
    with pytest.raises(StaleDecision):  # "new" decision where one exists
        store.save_decision(item.id, "alice", label="gt_error")
    for bad in ({"label": "nonsense"}, {"label": "model_error", "score": 6}, {"label": None}):
        with pytest.raises(ValueError):
            store.save_decision(item.id, "carol", **bad)
    assert store.decision(item.id, "alice").label == "acceptable_variant"


def test_two_reviewers_at_once_lose_no_decision(tmp_path):
    path = tmp_path / "review.sqlite"
    s = ReviewStore(path).create_session("race", "qa", ITEMS, created_by="x", k=3)
    errors: list[BaseException] = []

    def reviewer(name):
        try:
            st = ReviewStore(path)  # its own engine and connections, as another server thread
            for item in st.items(s.id):
                st.save_decision(item.id, name, label="model_error" if name == "a" else "acceptable_variant")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reviewer, args=(n,)) for n in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert len(ReviewStore(path).decisions(s.id)) == 3 * len(ITEMS)

    # the same decision saved twice from version 1 at once: exactly one wins, the other is told
    item = ReviewStore(path).items(s.id)[0]
    outcomes = []

    def save(label):
        try:
            ReviewStore(path).save_decision(item.id, "a", label=label, expected_version=1)
            outcomes.append("saved")
        except StaleDecision:
            outcomes.append("stale")

    racers = [threading.Thread(target=save, args=(lab,)) for lab in ("gt_error", "acceptable_variant")]
    for t in racers:
        t.start()
    for t in racers:
        t.join(60)
    assert sorted(outcomes) == ["saved", "stale"]


def test_a_killed_process_loses_no_committed_decision(tmp_path):
    path = tmp_path / "review.sqlite"
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(ROOT)!r})
from evaluators.review import ReviewStore
st = ReviewStore({str(path)!r})
s = st.create_session("durable", "qa", {ITEMS!r}, created_by="x")
for i, item in enumerate(st.items(s.id)):
    st.save_decision(item.id, "alice", label="model_error", comment=f"decision {{i}}")
print("saved", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL and "saved" in done.stdout
    st = ReviewStore(path)
    s = st.session_by_name("durable")
    assert [d.comment for d in st.decisions(s.id)] == [f"decision {i}" for i in range(len(ITEMS))]


def test_adjudication_queue_and_gt_corrections(store):
    s = store.create_session("adj", "qa", ITEMS[:3], created_by="x", k=2)
    i0, i1, i2 = store.items(s.id)
    store.save_decision(i0.id, "a", label="model_error")
    store.save_decision(i0.id, "b", label="acceptable_variant")   # disagreement
    store.save_decision(i1.id, "a", label="gt_error")             # someone says the GT is wrong
    store.save_decision(i2.id, "a", label="model_error")
    store.save_decision(i2.id, "b", label="model_error")          # agreement: not queued
    assert [item.id for item, _ in store.adjudication_queue(s.id)] == [i0.id, i1.id]
    store.adjudicate(i1.id, "lead", "gt_error", "the answer key says Paris but the text says Lyon")
    assert [item.id for item, _ in store.adjudication_queue(s.id)] == [i0.id]
    (fix,) = store.gt_corrections(s.id)
    assert fix["record_id"] == "q1" and fix["current_ground_truth"] == "Paris" and fix["adjudicator"] == "lead"


def test_session_agreement_uses_the_library_definitions(store):
    s = store.create_session("agree", "dialogue", ITEMS, created_by="x", k=3)
    labels_a = ["model_error", "model_error", "acceptable_variant", "acceptable_variant", "gt_error", "model_error"]
    labels_b = ["model_error", "acceptable_variant", "acceptable_variant", "acceptable_variant", "gt_error",
                "model_error"]
    scores_a, scores_b = [1, 2, 4, 5, 3, 2], [1, 3, 4, 4, 3, 1]
    for item, la, lb, sa, sb in zip(store.items(s.id), labels_a, labels_b, scores_a, scores_b):
        store.save_decision(item.id, "a", label=la, score=sa)
        store.save_decision(item.id, "b", label=lb, score=sb)
    agr = session_agreement(store.decisions(s.id))
    assert agr["label"]["n_items"] == 6 and agr["label"]["n_annotators"] == 2
    assert agr["label"]["cohen_kappa_mean"] == pytest.approx(cohen_kappa_score(labels_a, labels_b))
    assert agr["score"]["cohen_kappa_mean"] == pytest.approx(cohen_kappa_score(scores_a, scores_b, weights="quadratic"))
    data = np.array([scores_a, scores_b], dtype=float)
    assert agr["score"]["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))
    cats = sorted(set(labels_a) | set(labels_b))
    table = np.array([[[la, lb].count(c) for c in cats] for la, lb in zip(labels_a, labels_b)])
    assert agr["label"]["fleiss_kappa"] == pytest.approx(statsmodels_fleiss(table))


# ---------------------------------------------------------------- exchange


def test_export_import_export_is_byte_identical_and_import_is_idempotent(tmp_path, store):
    s = store.create_session("exchange", "qa", ITEMS, created_by="x", k=2)
    for n, item in enumerate(store.items(s.id)):
        store.save_decision(item.id, "alice", label="model_error", score=1 + n % 5, comment=f"说明 {n}")
        if n % 2:
            store.save_decision(item.id, "bob", label="acceptable_variant", status="submitted")
    first = export_jsonl(store, s.id)
    fresh = ReviewStore(tmp_path / "fresh.sqlite")
    report = import_jsonl(fresh, first.encode("utf-8"), "decisions.jsonl")
    assert (report.written, report.unchanged, report.issues) == (9, 0, [])
    again = export_jsonl(fresh, fresh.session_by_name("exchange").id)
    assert again == first  # byte for byte
    report = import_jsonl(fresh, first.encode("utf-8"))
    assert (report.written, report.unchanged) == (0, 9)  # the same file again: nothing changes
    # lines: 1 session, 6 items, then decisions; line 8 is the first decision
    broken = first.replace('"label": "model_error"', '"label": "nonsense"', 1) + "{not json\n"
    report = import_jsonl(ReviewStore(tmp_path / "third.sqlite"), broken.encode(), "b.jsonl")
    assert report.written == 8 and len(report.issues) == 2 and {i.line for i in report.issues} == {8, 17}


def test_csv_export_uses_the_persona_annotation_layout(store):
    s = store.create_session("csv", "qa", ITEMS[:2], created_by="x")
    i0, i1 = store.items(s.id)
    store.save_decision(i0.id, "alice", label="acceptable_variant", score=5, comment="=cmd")
    store.save_decision(i1.id, "alice", label="gt_error")
    lines = export_csv(store, s.id).splitlines()
    assert lines[0].startswith("scene,dialogue_index,context,expected_response,prediction,exact_match,"
                               "content_correct,style_consistent,notes")
    assert ",1,5,'=cmd,alice,acceptable_variant,submitted" in lines[1]  # formula made inert
    assert ",,,,alice,gt_error,submitted" in lines[2]


def test_cli_export_import_agreement(tmp_path, capsys):
    db = tmp_path / "cli.sqlite"
    st = ReviewStore(db)
    s = st.create_session("cli", "qa", ITEMS[:2], created_by="x", k=2)
    for item in st.items(s.id):
        st.save_decision(item.id, "a", label="model_error")
        st.save_decision(item.id, "b", label="model_error")
    out = tmp_path / "d.jsonl"
    assert main(["review", "export", "--db", str(db), "--session", "cli", "--out", str(out)]) == 0
    assert main(["review", "import", "--db", str(tmp_path / "other.sqlite"), "--input", str(out)]) == 0
    assert "4 decision(s) written" in capsys.readouterr().out
    assert main(["review", "agreement", "--db", str(db), "--session", "cli"]) == 0
    agr = json.loads(capsys.readouterr().out)
    assert agr["label"]["n_items"] == 2 and agr["label"]["cohen_kappa_mean"] is None  # one label only
    assert main(["review", "export", "--db", str(db), "--session", "nope"]) == 2
    assert os.path.exists(db)
    typo = tmp_path / "typo.sqlite"
    assert main(["review", "agreement", "--db", str(typo), "--session", "cli"]) == 2
    assert "no review database" in capsys.readouterr().err and not typo.exists()  # nothing created by a typo


def test_automatic_verdict_against_humans(store):
    from evaluators.review.agreement import automatic_agreement

    items = [{"kind": "memory", "id": f"m{i}", "question": "?", "ground_truth": "x", "prediction": "y",
              "scores": {"judge_score": score}} for i, score in enumerate([1.0, 0.0, 1.0, 0.0, 0.6])]
    s = store.create_session("auto", "memory", items, created_by="x", k=2)
    rows = store.items(s.id)
    # judge (>= 0.5): 1, 0, 1, 0, 1; alice: acceptable, model_error, model_error, gt_error (left out), acceptable
    for item, label in zip(rows, ["acceptable_variant", "model_error", "model_error", "gt_error", "acceptable_variant"]):
        store.save_decision(item.id, "alice", label=label)
    result = automatic_agreement(rows, store.decisions(s.id))
    (alice,) = result["per_annotator"]
    judge, human = [1, 0, 1, 1], [1, 0, 0, 1]  # items m0, m1, m2, m4
    assert result["source"] == "LLM judge" and alice["n_items"] == 4
    assert alice["accuracy"] == pytest.approx(3 / 4)
    assert alice["cohen_kappa"] == pytest.approx(cohen_kappa_score(judge, human))
    assert result["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=np.array([judge, human], dtype=float), level_of_measurement="nominal"))
