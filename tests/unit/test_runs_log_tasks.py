"""``--log`` of ``testsets``, ``memory``, ``dialogue`` and ``narrative`` on the demo data: the logged run's means
equal the command's own JSON report, and a run logged on an older GT version re-scored on the current one
(``testsets``, ``memory``) equals the command run with ``--gt-patch``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evaluators.tasks
from evaluators.cli import main
from evaluators.io.gt_patch import PatchEntry, file_sha256, record_key, write_gt_patch
from evaluators.runs import RunStore
from evaluators.runs.rescore import on_current_gt

DEMO = Path(__file__).resolve().parents[2] / "evaluators" / "demo"
ITEMS, ANSWERS = DEMO / "testsets" / "factual_demo.json", DEMO / "testsets" / "factual_demo_answers.json"
RESULTS = DEMO / "memory" / "demo_results.jsonl"
CASES = DEMO / "dialogue" / "persona_cases.json"
LARGE, SMALL = DEMO / "dialogue" / "panda-chat-large.jsonl", DEMO / "dialogue" / "panda-chat-small_report.json"
NARRATIVE_GT = DEMO / "narrative" / "EN_001_lantern_keeper_v3.json"
NARRATIVE_PRED = DEMO / "narrative" / "EN_001_lantern_keeper_prediction.json"


def _json(capsys, argv):
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _means(capsys, db, name):
    """``runs show NAME --format json``: {(metric, slice value): mean}."""
    shown = _json(capsys, ["runs", "show", name, "--db", db, "--format", "json"])
    return {(r["metric"], r["slice_value"]): r["mean"] for r in shown["summary"]}, shown


def _patch(tmp_path, name, entries):
    path = tmp_path / name
    path.write_text(write_gt_patch(entries), encoding="utf-8")
    return str(path)


def _not_rescorable(db, name):
    store = RunStore(db)
    try:
        with pytest.raises(ValueError, match="logged without its input files"):
            on_current_gt(store, name, tasks=evaluators.tasks)
    finally:
        store.dispose()


def _values(result):
    return {m: list(v) for m, v in result.items.values.items()}


# ------------------------------------------------------------------ testsets


def test_testsets_log_equals_the_report_and_rescores_as_gt_patch(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    report = _json(capsys, ["testsets", str(ITEMS), str(ANSWERS), "--format", "json", "--log", "--run-name", "t0",
                            "--db", db])
    means, shown = _means(capsys, db, "t0")
    # 9 items: q_001 q_005 q_006 q_007 all keywords (1), q_002 q_004 one of two (0.5), q_003 none (0), q_008
    # unanswered (0), q_009 without keywords (not scored): (4 + 1) / 8 = 0.625
    assert report["overall"]["mean_score"] == means[("keyword_score", "all")] == 0.625
    assert {k: v["mean_score"] for k, v in report["by_category"].items()} == {
        k: means[("keyword_score", k)] for k in report["by_category"]}
    assert means[("keyword_score", "relation")] == 0.25  # q_004 0.5 and q_008 0
    assert shown["dataset"] == ITEMS.name and shown["dataset_digest"] == file_sha256(ITEMS.read_bytes())
    assert shown["systems"] == ["factual_demo_answers"] and shown["dataset_version"] == 0

    # the GT of q_003 corrected to what the answer says: 0 -> 1, the mean 6 / 8 = 0.75
    patch = _patch(tmp_path, "fix.jsonl", [PatchEntry("q_003", file_sha256(ITEMS.read_bytes()), "replace",
                                                      ("灯塔的铜灯罩",), ("灯塔的灯罩",), "ann")])
    patched = _json(capsys, ["testsets", str(ITEMS), str(ANSWERS), "--format", "json", "--gt-patch", patch,
                             "--log", "--run-name", "t1", "--db", db])
    assert patched["overall"]["mean_score"] == 0.75
    store = RunStore(db)
    try:
        assert store.get("t1").dataset_version == 1 and store.get("t1").dataset_digest == shown["dataset_digest"]
        rescored, version = on_current_gt(store, "t0", tasks=evaluators.tasks)
        assert version == 1
        assert _values(rescored) == _values(store.load("t1"))
        assert rescored.items.values["keyword_score"] == tuple(i["score"] for i in patched["items"])
        assert store.load("t0").items.values["keyword_score"][2] == 0.0  # as scored then: unchanged
        with pytest.raises(ValueError, match="needs the task"):
            on_current_gt(store, "t0")
    finally:
        store.dispose()
    argv = ["runs", "trend", "--metric", "keyword_score", "--db", db, "--format", "json", "--ci-resamples", "0"]
    assert [p["mean"] for p in _json(capsys, argv)["points"]] == [0.625, 0.75]  # as scored
    assert [p["mean"] for p in _json(capsys, [*argv, "--current-gt"])["points"]] == [0.75, 0.75]


def test_a_run_without_its_inputs_is_not_rescored(tmp_path, capsys, monkeypatch):
    import evaluators.cli.runlog as runlog

    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    monkeypatch.setattr(runlog, "KEEP_INPUTS_MAX_BYTES", 100)  # the demo files are larger: not kept
    capsys.readouterr()
    assert main(["testsets", str(ITEMS), str(ANSWERS), "--format", "json", "--log", "--run-name", "big",
                 "--db", db]) == 0
    assert "are not kept" in capsys.readouterr().err
    patch = _patch(tmp_path, "fix.jsonl", [PatchEntry("q_003", file_sha256(ITEMS.read_bytes()), "replace",
                                                      ("灯塔的铜灯罩",), ("灯塔的灯罩",), "ann")])
    assert main(["testsets", str(ITEMS), str(ANSWERS), "--gt-patch", patch, "--log", "--run-name", "big2",
                 "--db", db]) == 0
    _not_rescorable(db, "big")


# ------------------------------------------------------------------ memory


def test_memory_log_equals_the_report_and_rescores_as_gt_patch(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    argv = ["memory", str(RESULTS), "--format", "json", "--ci-resamples", "0", "--db", db, "--log"]
    report = _json(capsys, [*argv, "--run-name", "m0"])
    means, shown = _means(capsys, db, "m0")
    overall = report["metrics"]["overall"]
    assert overall["count"] == 25 and shown["n_items"] == 25
    for metric in shown["metrics"]:
        assert means[(metric, "all")] == overall[metric], metric
        for qtype, row in report["metrics"]["by_type"].items():
            assert means[(metric, qtype)] == row[metric], (metric, qtype)
    assert means[("exact_match_normalized", "all")] == 0.08  # 2 of 25 questions
    assert shown["dataset"] == RESULTS.name and shown["dataset_digest"] == file_sha256(RESULTS.read_bytes())

    # "the cello" corrected to "the violin", what Leo is learning in the prediction
    patch = _patch(tmp_path, "fix.jsonl", [PatchEntry("demo-en-1_q1", file_sha256(RESULTS.read_bytes()),
                                                      "replace", ("the cello",), ("the violin",), "ann")])
    patched = _json(capsys, [*argv, "--run-name", "m1", "--gt-patch", patch])
    assert patched["metrics"]["overall"]["token_f1_char"] > overall["token_f1_char"]
    store = RunStore(db)
    try:
        rescored, version = on_current_gt(store, "m0", tasks=evaluators.tasks)
        assert version == 1
        assert _values(rescored) == _values(store.load("m1"))
        n = rescored.items.item_id.index("demo-en-1_q1")
        assert list(rescored.items.fields["ground_truth"][n]) == ["the violin"]
        assert list(store.load("m0").items.fields["ground_truth"][n]) == ["the cello"]
        assert sum(rescored.items.values["token_f1_char"]) / 25 == pytest.approx(
            patched["metrics"]["overall"]["token_f1_char"], abs=1e-12)
    finally:
        store.dispose()


def test_a_memory_run_judged_from_a_cache_keeps_no_inputs(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    cache = DEMO / "memory" / "demo_judge_cache.json"
    argv = ["memory", str(RESULTS), "--format", "json", "--ci-resamples", "0", "--db", db, "--log"]
    capsys.readouterr()
    report = _json(capsys, [*argv, "--run-name", "judged", "--cache", str(cache)])
    assert report["metrics"]["overall"]["judged"] > 0  # judge scores from the cache: not re-scorable
    patch = _patch(tmp_path, "fix.jsonl", [PatchEntry("demo-en-1_q1", file_sha256(RESULTS.read_bytes()),
                                                      "replace", ("the cello",), ("the violin",), "ann")])
    _json(capsys, [*argv, "--run-name", "patched", "--gt-patch", patch])
    _not_rescorable(db, "judged")


# ------------------------------------------------------------------ dialogue and narrative


def test_dialogue_log_one_run_per_model_equals_the_report(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    report = _json(capsys, ["dialogue", str(CASES), str(LARGE), str(SMALL), "--format", "json", "--log",
                            "--run-name", "d", "--db", db])
    listed = _json(capsys, ["runs", "list", "--db", db, "--format", "json"])
    assert [r["name"] for r in listed] == ["d/panda-chat-large", "d/panda-chat-small"]
    for row in report["by_model"]:
        means, shown = _means(capsys, db, f"d/{row['model']}")
        assert shown["dataset"] == CASES.name and shown["systems"] == [row["model"]]
        assert means[("combined_score", "all")] == row["combined_score"]
        for metric, mean in row["means"].items():
            assert means[(metric, "all")] == mean, metric
    # 13 cases, the last without an expected reply: 12 scored; the small model misses one reply (scored 0)
    assert shown["n_items"] == 13 and report["by_model"][1]["n_scored"] == 12
    assert "--log keeps runs of prediction files" in _err(capsys, ["dialogue", str(CASES), "--endpoint",
                                                                   "http://127.0.0.1:9", "--model", "m", "--log",
                                                                   "--db", db])


def test_dialogue_runs_rescore_as_gt_patch(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    argv = ["dialogue", str(CASES), str(LARGE), str(SMALL), "--format", "json", "--db", db, "--log"]
    _json(capsys, [*argv, "--run-name", "d0"])
    # the first picnic line's reference corrected to the small model's reply: its case now an exact match
    fix = PatchEntry("01. 竹林野餐#1#0", file_sha256(CASES.read_bytes()), "replace", ("我想带竹笋饼干和我的小风筝！",),
                     ("我要带好多好吃的！",), "ann")
    patch = _patch(tmp_path, "fix.jsonl", [fix])
    patched = _json(capsys, [*argv, "--run-name", "d1", "--gt-patch", patch])
    store = RunStore(db)
    try:
        for row in patched["by_model"]:
            rescored, version = on_current_gt(store, f"d0/{row['model']}", tasks=evaluators.tasks)
            assert version == 1
            assert _values(rescored) == _values(store.load(f"d1/{row['model']}"))
            scored = [v for v in rescored.items.values["combined_score"] if v is not None]
            assert sum(scored) / len(scored) == pytest.approx(row["combined_score"], abs=1e-12)
        small = on_current_gt(store, "d0/panda-chat-small", tasks=evaluators.tasks)[0]
        n = small.items.item_id.index("01. 竹林野餐#1#0")
        assert small.items.values["exact_match_normalized"][n] == 1.0
        assert store.load("d0/panda-chat-small").items.values["exact_match_normalized"][n] == 0.0
    finally:
        store.dispose()


def _err(capsys, argv):
    capsys.readouterr()
    assert main(argv) == 2
    return capsys.readouterr().err


def test_narrative_log_equals_the_report(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    report = _json(capsys, ["narrative", str(NARRATIVE_GT), str(NARRATIVE_PRED), "--format", "json", "--whole-batch",
                            "--quiet", "--log", "--run-name", "n", "--db", db])
    means, shown = _means(capsys, db, "n")
    assert means[("overall_score", "all")] == report["macro"]["overall_score"]
    for component, value in report["macro"]["component_scores"].items():
        assert means[(component, "all")] == value, component
    assert shown["dataset"] == NARRATIVE_GT.name and shown["systems"] == ["EN_001_lantern_keeper_prediction"]
    assert shown["dataset_digest"] == file_sha256(NARRATIVE_GT.read_bytes())
    assert shown["predictions_digest"] == file_sha256(NARRATIVE_PRED.read_bytes())


# ------------------------------------------------------------------ compare

QA_SYSTEMS = DEMO / "qa" / "qa_systems_demo.jsonl"


def test_compare_log_one_run_per_system_equals_its_scores(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    report = _json(capsys, ["compare", str(QA_SYSTEMS), "--format", "json", "--ci-resamples", "0", "--log",
                            "--run-name", "c", "--db", db])
    names = [r["name"] for r in _json(capsys, ["runs", "list", "--db", db, "--format", "json"])]
    assert names == ["c/baseline-7b", "c/rag-7b", "c/rag-70b"]
    for row in report["scores"]:
        means, shown = _means(capsys, db, f"c/{row['system']}")
        assert (means[("exact_match", "all")], means[("token_f1", "all")]) == (row["exact_match"], row["token_f1"])
        assert shown["n_items"] == row["n"] == 16
    assert report["scores"][0]["exact_match"] == 0.3125  # baseline-7b: 5 of 16 exact
    # qa --log of the same file: the same datasets (the GT by content, system by system)
    assert main(["qa", str(QA_SYSTEMS), "--log", "--run-name", "q", "--db", db, "--ci-resamples", "0"]) == 0
    store = RunStore(db)
    try:
        assert store.get("q/rag-7b").dataset_digest == store.get("c/rag-7b").dataset_digest
        assert store.load("q/rag-7b").items.digest() == store.load("c/rag-7b").items.digest()
    finally:
        store.dispose()


def test_compare_log_of_two_files_and_a_name_taken(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    rows = [("q1", "问题一", "答案一"), ("q2", "question two", "answer two")]
    files = []
    for name, right in (("a.jsonl", (1, 1)), ("b.jsonl", (1, 0))):
        path = tmp_path / name
        path.write_text("".join(json.dumps({"id": i, "question": q, "answer": a, "prediction": a if r else "no"},
                                           ensure_ascii=False) + "\n" for (i, q, a), r in zip(rows, right)),
                        encoding="utf-8")
        files.append(str(path))
    assert main(["compare", *files, "--ci-resamples", "0", "--log", "--run-name", "x", "--db", db]) == 0
    store = RunStore(db)
    try:
        # each file one system, named by its path as compare names it; the run by the file's name
        assert [(r.name, r.summary[0]["mean"]) for r in store.runs()] == [("x/a.jsonl", 1.0), ("x/b.jsonl", 0.5)]
        assert store.get("x/b.jsonl").systems == (files[1],)
        assert "'x/a.jsonl' is already logged" in _err(capsys, ["compare", *files, "--ci-resamples", "0", "--log",
                                                         "--run-name", "x", "--db", db])
        assert len(store.runs()) == 2  # nothing logged the second time
        # q2's GT corrected to "no" (keyed by record and answers, so for both files): b right on both, a on q1
        patch = _patch(tmp_path, "fix.jsonl", [PatchEntry("q2", "", "replace", ("answer two",), ("no",), "lead",
                                                          gt_key=record_key("q2", ("answer two",)))])
        assert main(["compare", *files, "--ci-resamples", "0", "--log", "--run-name", "y", "--db", db,
                     "--gt-patch", patch]) == 0
        a, b = store.get("y/a.jsonl"), store.get("y/b.jsonl")
        assert (a.summary[0]["mean"], b.summary[0]["mean"]) == (0.5, 1.0)
        assert a.dataset_version == b.dataset_version == 1  # on the raw GT the unpatched runs were logged on
        assert a.dataset_digest == store.get("x/a.jsonl").dataset_digest
        # the unpatched runs re-scored on that GT (QA: from their stored predictions) equal the patched ones
        for name in ("a.jsonl", "b.jsonl"):
            again, version = on_current_gt(store, f"x/{name}")
            assert version == 1 and _values(again) == _values(store.load(f"y/{name}"))
    finally:
        store.dispose()


def test_narrative_runs_rescore_as_gt_patch(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    argv = ["narrative", str(NARRATIVE_GT), str(NARRATIVE_PRED), "--format", "json", "--whole-batch", "--quiet",
            "--log", "--db", db]
    before = _json(capsys, [*argv, "--run-name", "n0"])
    # the sentiment of Silas -> Mara in event en-g2 corrected to the prediction's (neutral -> negative)
    patch = _patch(tmp_path, "fix.jsonl", [PatchEntry("narrative_events[en-g2].relationships[Silas -> Mara].sentiment",
                                                      file_sha256(NARRATIVE_GT.read_bytes()), "replace",
                                                      ("neutral",), ("negative",), "lead")])
    after = _json(capsys, [*argv, "--run-name", "n1", "--gt-patch", patch])
    assert after["macro"]["component_scores"]["sentiment"] > before["macro"]["component_scores"]["sentiment"]
    store = RunStore(db)
    try:
        rescored, version = on_current_gt(store, "n0", tasks=evaluators.tasks)
        assert version == 1
        assert _values(rescored) == _values(store.load("n1"))
        assert rescored.items.values["overall_score"] == (after["macro"]["overall_score"],)
        assert store.load("n0").items.values["overall_score"] == (before["macro"]["overall_score"],)
    finally:
        store.dispose()


# ------------------------------------------------------------------ a task plugged in through the protocol


def test_a_plugged_in_task_rescores_as_gt_patch(tmp_path, capsys):
    from tests.helpers.toy_task import DEMO_GT, DEMO_PRED

    gt, pred = tmp_path / "gt.jsonl", tmp_path / "pred.jsonl"
    gt.write_bytes(DEMO_GT)
    pred.write_bytes(DEMO_PRED)
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    argv = ["toylabel", str(gt), str(pred), "--format", "json", "--log", "--db", db, "--case-sensitive"]
    _json(capsys, [*argv, "--run-name", "t0"])
    # r3's GT 红色 corrected to 绿色 (what B predicted); case-sensitive, as logged in the run's config
    patch = _patch(tmp_path, "fix.jsonl", [PatchEntry("r3", file_sha256(DEMO_GT), "replace", ("红色",), ("绿色",),
                                                      "lead")])
    _json(capsys, [*argv, "--run-name", "t1", "--gt-patch", patch])
    store = RunStore(db)
    try:
        assert store.get("t0/A").config["case_sensitive"] is True
        for system in ("A", "B"):
            rescored, version = on_current_gt(store, f"t0/{system}", tasks=evaluators.tasks)
            assert version == 1 and _values(rescored) == _values(store.load(f"t1/{system}"))
        # case-sensitive A: Cat != cat, wolf != dog, 红色 != 绿色 now, navy != blue: 0 of 4 (1 of 4 before)
        assert on_current_gt(store, "t0/A", tasks=evaluators.tasks)[0].items.values["exact_match"] == (0.0,) * 4
        assert store.load("t0/A").items.values["exact_match"] == (0.0, 0.0, 1.0, 0.0)
    finally:
        store.dispose()


def test_narrative_other_predictions_are_runs_too(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    other = tmp_path / "other" / "EN_001_lantern_keeper_v3.json"  # the GT as a prediction: every score 1
    other.parent.mkdir()
    other.write_bytes(NARRATIVE_GT.read_bytes())
    capsys.readouterr()
    assert main(["narrative", str(NARRATIVE_GT), str(NARRATIVE_PRED), "--other-pred", str(other), "--quiet",
                 "--systems-csv", str(tmp_path / "s.csv"), "--log", "--run-name", "n", "--db", db]) == 0
    names = [r["name"] for r in _json(capsys, ["runs", "list", "--db", db, "--format", "json"])]
    assert names == ["n/EN_001_lantern_keeper_prediction", "n/EN_001_lantern_keeper_v3"]
    means, shown = _means(capsys, db, "n/EN_001_lantern_keeper_v3")
    assert means[("overall_score", "all")] == 1.0 and shown["predictions_digest"] == shown["dataset_digest"]
    first, _ = _means(capsys, db, "n/EN_001_lantern_keeper_prediction")
    assert first[("overall_score", "all")] == pytest.approx(0.7326, abs=1e-4)
