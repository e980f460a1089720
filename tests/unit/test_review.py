"""Review sessions: agreement equal to the reference libraries, durable and lock-safe storage, exchange."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evaluators.cli import main
from evaluators.review import ReviewStore, StaleDecision
from evaluators.review.agreement import session_agreement
from evaluators.reports.review import export_csv
from evaluators.review.exchange import export_jsonl, import_jsonl
from tests.conftest import ROOT

ITEMS = [{"kind": "qa", "id": f"q{i}", "question": f"question {i}", "ground_truth": "Paris",
          "prediction": "Paris" if i % 2 else "Lyon", "system": "sys-a"} for i in range(6)]


@pytest.fixture
def store(review_url):
    """An empty review database on SQLite, and on PostgreSQL when EVALBOARD_TEST_DATABASE_URL is set."""
    return ReviewStore(review_url)


# ---------------------------------------------------------------- agreement


def test_agreement_read_as_columns_equals_the_decisions_and_the_payload_scores(store):
    """The Agreement view's fast path (one column read, scores from the items' metric column) gives the figures
    the decision objects and the payloads give."""
    from evaluators.review import service as rs
    from evaluators.review.agreement import automatic_agreement, automatic_scores, rating_columns

    rng = np.random.default_rng(40)
    items = [{"kind": "qa", "id": f"q{i}", "question": f"问题 {i}", "ground_truth": "Paris", "prediction": "Paris",
              "system": "s", "exact_match": float(rng.random() < 0.6)} for i in range(90)]
    s = store.create_session("columns", "qa", items, created_by="x", k=3)
    for item in store.items(s.id):
        for who in ("alice", "bob", "chen")[:2 + int(rng.random() < 0.3)]:
            label = str(rng.choice(["model_error", "acceptable_variant", "gt_error"]))
            store.save_decision(item.id, who, label=label, score=int(rng.integers(1, 6)))
    store.save_decision(store.items(s.id)[0].id, "dana", label="model_error", status="skipped")  # not submitted
    columns = rating_columns(store, s.id)
    assert len(columns.item_id) == sum(d.status == "submitted" for d in store.decisions(s.id))
    assert session_agreement(columns) == session_agreement(store.decisions(s.id)) == store.agreement(s.id)
    assert rs.automatic(store, s) == automatic_agreement(store.items(s.id), store.decisions(s.id))
    judged = {d.item_id for d in store.decisions(s.id) if d.status == "submitted" and d.label != "gt_error"}
    assert rs.automatic(store, s)["source"] == "exact match" and rs.automatic(store, s)["n_items"] == len(judged) > 30
    # an item added later (scores are kept until the items change) and decided: counted with its score
    added = store.add_item(s.id, {**items[0], "id": "late", "question": "新问题", "exact_match": 0.0})
    store.save_decision(added.id, "alice", label="model_error")
    assert automatic_scores(store, s.id)[0][added.id] == 0.0
    assert rs.automatic(store, s) == automatic_agreement(store.items(s.id), store.decisions(s.id))
    assert rs.automatic(store, s)["n_items"] == len(judged) + 1







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
    assert result["human_kappa"] is None and result["human_kappa_items"] == 0   # one reviewer: no ceiling
    # bob: model_error, model_error, model_error, gt_error, acceptable.  The ceiling is on the metric's two labels:
    # m3 (gt_error for both) is left out, as for the metric; alice vs bob on m0, m1, m2, m4: [1, 0, 0, 1] vs [0, 0, 0, 1]
    for item, label in zip(rows, ["model_error", "model_error", "model_error", "gt_error", "acceptable_variant"]):
        store.save_decision(item.id, "bob", label=label)
    result = automatic_agreement(rows, store.decisions(s.id))
    assert result["human_kappa_items"] == 4 and "gt_error left out" in result["labels"]
    assert result["human_kappa"] == pytest.approx(cohen_kappa_score([1, 0, 0, 1], [0, 0, 0, 1]))

def test_session_agreement_gives_every_figure_an_interval_over_items_and_flags_few_items(store):
    items = [{"kind": "qa", "id": f"q{i}", "question": f"问题 {i}", "ground_truth": "Paris",
              "prediction": "Paris", "system": "s"} for i in range(40)]
    s = store.create_session("intervals", "qa", items, created_by="x", k=2)
    rng = np.random.default_rng(12)
    la = rng.choice(["model_error", "acceptable_variant"], 40)
    lb = np.where(rng.random(40) < 0.8, la, rng.choice(["model_error", "acceptable_variant"], 40))
    rows = store.items(s.id)
    for item, x, y in zip(rows, la, lb):
        store.save_decision(item.id, "alice", label=str(x))
        store.save_decision(item.id, "bob", label=str(y))
    block = session_agreement(store.decisions(s.id))["label"]
    # the bootstrap over the 40 items written out: the items fall in at most 4 patterns (alice's label,
    # bob's label), 4 x 8 <= 40, so resample r draws the pattern counts, rng.multinomial(40, counts / 40),
    # patterns in label order (acceptable_variant < model_error), and kappa is recomputed on those items
    order = sorted(r.id for r in rows)
    by_id = {r.id: (str(x), str(y)) for r, x, y in zip(rows, la, lb)}
    a = [by_id[i][0] for i in order]
    b = [by_id[i][1] for i in order]
    patterns = sorted(Counter(zip(a, b)).items())
    draw = np.random.default_rng(0)
    kappas = []
    for counts in draw.multinomial(40, np.array([c for _, c in patterns]) / 40, size=2000):
        pairs = [pair for (pair, _), m in zip(patterns, counts) for _ in range(m)]
        k = cohen_kappa_score([x for x, _ in pairs], [y for _, y in pairs])
        if not np.isnan(k):
            kappas.append(k)
    low, high = np.percentile(kappas, [2.5, 97.5])
    mean = block["figures"]["cohen_kappa_mean"]
    assert mean["value"] == pytest.approx(cohen_kappa_score(a, b)) and mean["n_items"] == 40
    assert (mean["ci_low"], mean["ci_high"]) == pytest.approx((low, high), abs=1e-9)
    assert block["meaningful"] and mean["meaningful"] and mean["note"] is None
    (pair,) = block["pairs"]
    assert (pair["ci_low"], pair["ci_high"]) == pytest.approx((low, high), abs=1e-9)  # one pair: the same items
    for name in ("fleiss_kappa", "krippendorff_alpha"):
        fig = block["figures"][name]
        assert fig["ci_low"] <= fig["value"] <= fig["ci_high"] and fig["n_items"] == 40

    # with two reviews on 4 items only (the issue's case), every figure is flagged
    few = store.create_session("few", "qa", items[:4], created_by="x", k=2)
    for item, x, y in zip(store.items(few.id), ["model_error", "acceptable_variant"] * 2, ["model_error"] * 4):
        store.save_decision(item.id, "alice", label=x)
        store.save_decision(item.id, "bob", label=y)
    small = session_agreement(store.decisions(few.id))["label"]
    assert not small["meaningful"] and small["n_items"] == 4
    assert small["figures"]["krippendorff_alpha"]["note"] == "not yet meaningful: 4 items (fewer than 30)"

def test_cli_agreement_prints_intervals_and_flags(tmp_path, capsys):
    db = tmp_path / "flags.sqlite"
    st = ReviewStore(db)
    s = st.create_session("flags", "qa", ITEMS, created_by="x", k=2)
    for n, item in enumerate(st.items(s.id)):
        st.save_decision(item.id, "a", label="model_error" if n % 2 else "acceptable_variant")
        st.save_decision(item.id, "b", label="model_error" if n % 3 else "acceptable_variant")
    assert main(["review", "agreement", "--db", str(db), "--session", "flags"]) == 0
    captured = capsys.readouterr()
    figure = json.loads(captured.out)["label"]["figures"]["krippendorff_alpha"]
    assert figure["n_items"] == 6 and not figure["meaningful"] and {"ci_low", "ci_high"} <= set(figure)
    assert "note: label krippendorff_alpha: not yet meaningful: 6 items (fewer than 30)" in captured.err
