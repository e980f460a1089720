"""Shards with a checked merge for ``memory``, ``testsets``, ``dialogue`` and ``compare`` (issue 32): N shard files
merged equal the single-process report; mixed manifests, a missing shard and a duplicated id exit 2."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from evaluators.cli import main
from tests.conftest import require_shared

DEMO = Path(__file__).resolve().parents[2] / "evaluators" / "demo"
CI = ["--ci-resamples", "200"]  # intervals computed (same seed) on a few resamples: the test stays quick


def _run(capsys, argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _shards(argv, n, tmp_path, tag="s", out_flag="--out") -> list[str]:
    files = []
    for i in range(1, n + 1):
        out = tmp_path / f"{tag}{i}.json"
        assert main([str(a) for a in argv] + ["--shard", f"{i}/{n}", out_flag, str(out)]) == 0
        files.append(str(out))
    return files


def _merged_equals_single(argv, n, tmp_path, capsys, *, out_flag="--out", single=("--format", "json")) -> dict:
    """Shard ``argv`` in ``n``, merge the files in a shuffled order and check the report equals the single run's:
    field by field and as text.  Returns the report."""
    code, expected, err = _run(capsys, [*argv, *single])
    assert code == 0, err
    files = _shards(argv, n, tmp_path, out_flag=out_flag)
    sizes = [len(json.loads(Path(f).read_text(encoding="utf-8"))["manifest"]["items"]) for f in files]
    assert max(sizes) - min(sizes) <= 1  # dealt evenly (an empty shard where there are fewer items than shards)
    random.Random(n).shuffle(files)
    code, merged, err = _run(capsys, ["merge", *files])
    assert code == 0, err
    assert json.loads(merged) == json.loads(expected)  # field by field
    assert merged == expected  # and the same text
    return json.loads(merged)


def _refusals(argv, tmp_path, capsys, other_argv, *, out_flag="--out") -> None:
    """The three refusal fixtures: shards of another run mixed in, a missing shard, an id in two shards."""
    files = _shards(argv, 3, tmp_path, tag="r", out_flag=out_flag)
    foreign = _shards(other_argv, 3, tmp_path, tag="o", out_flag=out_flag)
    code, out, err = _run(capsys, ["merge", files[0], foreign[1], files[2]])
    assert code == 2 and out == "" and f"mixed manifests: {files[0]} and {foreign[1]} differ in" in err
    code, out, err = _run(capsys, ["merge", files[2], files[0]])
    assert code == 2 and out == "" and "missing shard(s) 2 of 3" in err
    one, two = (json.loads(Path(f).read_text(encoding="utf-8")) for f in files[:2])
    one["items"].append(two["items"][0])  # an item of shard 2 written into shard 1 too
    one["manifest"]["items"].append(two["manifest"]["items"][0])
    Path(files[0]).write_text(json.dumps(one, ensure_ascii=False), encoding="utf-8")
    code, out, err = _run(capsys, ["merge", *files])
    rid = two["manifest"]["items"][0][1]
    assert code == 2 and out == "" and f"duplicated id(s) across shards: {rid!r}" in err
    assert files[0] in err and files[1] in err


# ------------------------------------------------------------------------------------------ memory

MEMORY_DEMO = ["memory", DEMO / "memory" / "demo_results.jsonl",
               "--labels", DEMO / "memory" / "demo_judge_labels.jsonl", *CI]


def test_memory_demo_merged_equals_single_with_judge_cache_and_agreement(tmp_path, capsys):
    # the demo's 25 questions, judge scores from its cache, agreement with the stored labels (a bootstrap interval)
    argv = [*MEMORY_DEMO, "--cache", DEMO / "memory" / "demo_judge_cache.json"]
    report = _merged_equals_single(argv, 3, tmp_path, capsys)
    assert report["judge"]["n_cached"] == 24 and report["agreement"]["cohen_kappa_ci_low"] is not None
    assert report["metrics"]["overall"]["judge_score_ci_low"] is not None and len(report["metrics"]["by_type"]) > 1


def test_memory_demo_without_judge_scores_on_two_workers_merged_equals_single(tmp_path, capsys):
    # no labels, no cache: judge_score has no value; each shard scores its questions on 2 worker processes
    report = _merged_equals_single(["memory", DEMO / "memory" / "demo_results.jsonl", *CI, "--workers", "2"], 3,
                                   tmp_path, capsys)
    assert report["metrics"]["overall"]["judge_score"] is None and "judge" not in report


@pytest.mark.realdata
def test_memory_mem0_locomo_merged_equals_single_with_parity(tmp_path, capsys):
    # mem0's LoCoMo results (the benchmark's own F1 with --parity locomo: its table by category on pooled questions)
    path = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    report = _merged_equals_single(["memory", path, "--parity", "locomo", *CI], 3, tmp_path, capsys)
    assert report["locomo_parity"]["count"] == report["input"]["n_questions"] > 1000


@pytest.mark.realdata
def test_memory_longmemeval_labels_merged_equals_single(tmp_path, capsys):
    # LongMemEval questions scored with the hypotheses of gpt-4o's judge output: LongMemEval's table too
    questions = require_shared("long_memory", "longmemeval", "longmemeval_oracle_questions_slim.json")
    labels = require_shared("long_memory", "longmemeval_predictions_sample", "my_predictions.jsonl.eval-results-gpt-4o")
    report = _merged_equals_single(["memory", "--questions", questions, "--labels", labels, *CI], 3, tmp_path, capsys)
    assert report["longmemeval"]["n_labels"] > 0


@pytest.mark.parametrize("cache", [False, True])
def test_memory_gt_patch_before_and_after_pooled_at_the_merge(cache, tmp_path, capsys):
    # two demo questions corrected: one answer accepted (a further reference, scored at the merge as in one
    # process), one ground truth replaced (its stored label, and its cached judgement, no longer used); the
    # before / after paired tests computed once on the pooled questions
    from evaluators.io.gt_patch import PatchEntry, file_sha256, write_gt_patch

    path = DEMO / "memory" / "demo_results.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    digest = file_sha256(path.read_bytes())
    accepted, replaced = rows[0], rows[1]
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch([
        PatchEntry(accepted["question_id"], digest, "add_answer", (accepted["ground_truth"],),
                   (accepted["prediction"],), "ann"),
        PatchEntry(replaced["question_id"], digest, "replace", (replaced["ground_truth"],), ("另一个答案",), "lead"),
    ]), encoding="utf-8")
    argv = [*MEMORY_DEMO, "--gt-patch", patch]
    if cache:
        argv += ["--cache", DEMO / "memory" / "demo_judge_cache.json"]
    report = _merged_equals_single(argv, 3, tmp_path, capsys)
    changes = report["gt_patch"]["applications"][0][1]["changes"]
    assert [c["status"] for c in changes] == ["applied", "applied"] and report["gt_patch"]["effect"] is not None
    unpatched = _shards([a for a in argv if a not in ("--gt-patch", patch)], 3, tmp_path, tag="u")
    files = _shards(argv, 3, tmp_path, tag="p")
    code, _, err = _run(capsys, ["merge", files[0], *unpatched[1:]])
    assert code == 2 and "differ in input.patches" in err


def test_memory_shard_refusals(tmp_path, capsys):
    other = tmp_path / "other.jsonl"  # the same questions, one prediction changed: another run
    lines = (DEMO / "memory" / "demo_results.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["prediction"] = "something else"
    other.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    _refusals(MEMORY_DEMO, tmp_path, capsys, ["memory", other, *MEMORY_DEMO[2:]])
    code, _, err = _run(capsys, [*MEMORY_DEMO, "--shard", "1/3"])
    assert code == 2 and "--shard needs --out" in err
    code, _, err = _run(capsys, [*MEMORY_DEMO, "--shard", "1/3", "--out", tmp_path / "x.json", "--judge"])
    assert code == 2 and "--shard does not go with --judge" in err


# ------------------------------------------------------------------------------------------ testsets

TS = DEMO / "testsets"


@pytest.mark.parametrize("kind", ["single", "multi_turn"])
def test_testsets_demo_merged_equals_single(kind, tmp_path, capsys):
    items, answers = ((TS / "factual_demo.json", TS / "factual_demo_answers.json") if kind == "single"
                      else (TS / "multi_turn_demo.json", TS / "multi_turn_demo_answers.jsonl"))
    report = _merged_equals_single(["testsets", items, answers, "--workers", "2"], 3, tmp_path, capsys,
                                   out_flag="--output-file")
    assert report["kind"] == kind


def _keyword_qa_answers(tmp_path, name):
    """Answers to the shared keyword_qa set ``name``: the expected answer (all points of a turn) for every third
    item, its first keyword (first point) for the next, none for the third (a missing answer)."""
    data = json.loads(require_shared("keyword_qa", name).read_text(encoding="utf-8"))
    out = []
    for k, item in enumerate(data["items"]):
        if "turns" in item:
            for t in item["turns"]:
                points = t["expected_points"]
                if k % 3 < 2:
                    out.append({"id": item["id"], "turn": t["turn"],
                                "answer": "；".join(points if k % 3 == 0 else points[:1])})
        elif k % 3 < 2:
            out.append({"id": item["id"], "answer": item["expected_answer"] if k % 3 == 0 else item["keywords"][0]})
    out.append({"id": "not_an_item", "answer": "x"})  # an extra answer
    path = tmp_path / f"{name}.answers.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out), encoding="utf-8")
    return require_shared("keyword_qa", name), path


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["factual_qa.json", "multi_turn.json"])
def test_testsets_keyword_qa_merged_equals_single(name, tmp_path, capsys):
    items, answers = _keyword_qa_answers(tmp_path, name)
    report = _merged_equals_single(["testsets", items, answers], 3, tmp_path, capsys, out_flag="--output-file")
    assert report["extra_answers"] == ["not_an_item"] and report["missing_prediction"]


def test_testsets_gt_patch_applied_once_at_the_merge(tmp_path, capsys):
    # the accepted and corrected answers of tests/unit/test_task_patches.py: the changed items scored again and the
    # mean keyword score before / after with its paired test computed once, on the pooled items
    from evaluators.io.gt_patch import PatchEntry, file_sha256, write_gt_patch
    from tests.unit.test_task_patches import ITEMS

    items = tmp_path / "set.json"
    items.write_text(json.dumps({"version": "1", "items": ITEMS}, ensure_ascii=False), encoding="utf-8")
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"t1": "是林远。", "t2": "An old COMPASS.", "t3": "It was Ｏｗｅｎ's friend Mia."},
                                  ensure_ascii=False), encoding="utf-8")
    digest = file_sha256(items.read_bytes())
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch([PatchEntry("t1", digest, "add_answer", ("林远",), ("是林远",), "ann"),
                                     PatchEntry("t3", digest, "replace", ("Owen",), ("Mia",), "lead")]),
                     encoding="utf-8")
    argv = ["testsets", items, answers, "--gt-patch", patch]
    report = _merged_equals_single(argv, 3, tmp_path, capsys, out_flag="--output-file")
    assert report["overall"]["mean_score"] == 1.0 and report["gt_patch"]["effect"] is not None
    unpatched = _shards(argv[:3], 3, tmp_path, tag="u", out_flag="--output-file")
    files = _shards(argv, 3, tmp_path, tag="p", out_flag="--output-file")
    code, _, err = _run(capsys, ["merge", files[0], *unpatched[1:]])
    assert code == 2 and "differ in input.patches" in err


def test_testsets_shard_refusals(tmp_path, capsys):
    argv = ["testsets", TS / "factual_demo.json", TS / "factual_demo_answers.json"]
    other = tmp_path / "answers.json"  # one answer changed: another run
    answers = json.loads((TS / "factual_demo_answers.json").read_text(encoding="utf-8"))
    key = next(iter(answers)) if isinstance(answers, dict) else None
    if key is not None:
        answers[key] = "something else"
    else:
        answers[0]["answer"] = "something else"
    other.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
    _refusals(argv, tmp_path, capsys, [*argv[:2], other], out_flag="--output-file")
    code, _, err = _run(capsys, [*argv, "--shard", "2/3"])
    assert code == 2 and "--shard needs --output-file" in err


# ------------------------------------------------------------------------------------------ dialogue

DLG = DEMO / "dialogue"


def _without_timestamp(text: str) -> dict:
    report = json.loads(text)
    assert report["evaluation_info"].pop("timestamp")  # the time the report was written: the one field apart
    return report


def _dialogue_merged_equals_single(argv, n, tmp_path, capsys) -> dict:
    code, expected, err = _run(capsys, [*argv, "--format", "json"])
    assert code == 0, err
    files = _shards(argv, n, tmp_path)
    sizes = [len(json.loads(Path(f).read_text(encoding="utf-8"))["manifest"]["items"]) for f in files]
    assert max(sizes) - min(sizes) <= 1
    code, merged, err = _run(capsys, ["merge", *files[::-1]])
    assert code == 0, err
    assert _without_timestamp(merged) == _without_timestamp(expected)  # field by field, apart from timing
    return json.loads(merged)


def test_dialogue_demo_merged_equals_single(tmp_path, capsys):
    # two models (one with a missing reply and an unmatched row), a case without GT, Chinese and English scenes;
    # each shard scores its replies on 2 worker processes
    report = _dialogue_merged_equals_single(["dialogue", DLG / "persona_cases.json", DLG / "panda-chat-large.jsonl",
                                             DLG / "panda-chat-small_report.json", "--workers", "2"], 3, tmp_path,
                                            capsys)
    assert len(report["by_model"]) == 2 and report["comparison"] is not None and report["issues"]


@pytest.mark.realdata
def test_dialogue_persona_chat_merged_equals_single(tmp_path, capsys):
    cases = require_shared("persona_chat", "peppa_structured_test_cases.json")
    stored = require_shared("persona_chat", "peppa_structured_evaluation_202510101638_report.json")
    report = _dialogue_merged_equals_single(["dialogue", cases, stored], 3, tmp_path, capsys)
    assert report["evaluation_info"]["total_test_cases"] > 100


def test_dialogue_gt_patch_before_and_after_pooled_at_the_merge(tmp_path, capsys):
    # the demo cases corrected: one reply replaced, the large model's reply to another accepted (a further
    # reference, scored at the merge as in one process); before / after paired tests and rank flips computed once
    from evaluators.dialogue import load_cases
    from evaluators.dialogue.scoring import case_key
    from evaluators.io.gt_patch import PatchEntry, write_gt_patch

    case_set = load_cases((DLG / "persona_cases.json").read_bytes(), "persona_cases.json")
    large = {(r["scene"], str(r["dialogue_index"])): r["prediction"] for r in
             map(json.loads, (DLG / "panda-chat-large.jsonl").read_text(encoding="utf-8").splitlines())}
    first = case_set.cases[0]
    second, reply = next((c, large[(c.scene, str(c.dialogue_index))]) for c in case_set.cases[1:]
                         if c.expected_response and large.get((c.scene, str(c.dialogue_index)), c.expected_response)
                         != c.expected_response)
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch([
        PatchEntry(case_key(first), case_set.digest, "replace", (first.expected_response,), ("我们去野餐吧！",), "lead"),
        PatchEntry(case_key(second), case_set.digest, "add_answer", (second.expected_response,), (reply,), "ann"),
    ]), encoding="utf-8")
    argv = ["dialogue", DLG / "persona_cases.json", DLG / "panda-chat-large.jsonl",
            DLG / "panda-chat-small_report.json", "--gt-patch", patch]
    report = _dialogue_merged_equals_single(argv, 3, tmp_path, capsys)
    assert report["gt_patch"]["effect"] is not None
    assert [c["status"] for c in report["gt_patch"]["applications"][0][1]["changes"]] == ["applied", "applied"]
    unpatched = _shards(argv[:-2], 3, tmp_path, tag="u")
    files = _shards(argv, 3, tmp_path, tag="p")
    code, _, err = _run(capsys, ["merge", files[0], *unpatched[1:]])
    assert code == 2 and "differ in input.patches" in err


def test_dialogue_shard_refusals(tmp_path, capsys):
    argv = ["dialogue", DLG / "persona_cases.json", DLG / "panda-chat-large.jsonl"]
    _refusals(argv, tmp_path, capsys, [*argv[:2], DLG / "panda-chat-small_report.json"])
    code, _, err = _run(capsys, [*argv, "--shard", "1/3", "--out", tmp_path / "x.json", "--format", "csv"])
    assert code == 2 and "--shard does not go with --format csv" in err
    # live replies: refused before any request (the endpoint does not exist)
    code, _, err = _run(capsys, ["dialogue", DLG / "persona_cases.json", "--endpoint", "http://127.0.0.1:9",
                                 "--model", "m", "--shard", "1/3", "--out", tmp_path / "x.json"])
    assert code == 2 and "--shard does not go with --endpoint" in err


# ------------------------------------------------------------------------------------------ compare

QA = DEMO / "qa"


def _compare_merged_equals_single(argv, n, tmp_path, capsys) -> dict:
    return _merged_equals_single(argv, n, tmp_path, capsys, out_flag="--output-file")


def test_compare_demo_systems_merged_equals_single(tmp_path, capsys):
    # one file of three systems (grouped by system): side by side with intervals, paired tests of B against A
    report = _compare_merged_equals_single(["compare", QA / "qa_systems_demo.jsonl", *CI], 3, tmp_path, capsys)
    assert len(report["systems"]) >= 2 and report["comparison"]["token_f1_bootstrap"]["p_value"] is not None
    # another pair and another seed: the tests computed once on the pooled records with that seed
    (tmp_path / "x").mkdir()
    other = _compare_merged_equals_single(["compare", QA / "qa_systems_demo.jsonl", *CI, "--a", report["systems"][1],
                                           "--b", report["systems"][-1], "--seed", "7"], 3, tmp_path / "x", capsys)
    assert other["comparison"] != report["comparison"]


def test_compare_two_files_of_the_same_questions_merged_equals_single(tmp_path, capsys):
    # two runs as two files with the same ids: the same id of two runs are two items, each dealt in its own run
    lines = (QA / "qa_demo.jsonl").read_text(encoding="utf-8").splitlines()
    worse = tmp_path / "worse.jsonl"
    rows = [json.loads(line) for line in lines]
    for k, r in enumerate(rows):
        if k % 3 == 0:
            r["final_answer"] = "不知道"
    worse.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    report = _compare_merged_equals_single(["compare", QA / "qa_demo.jsonl", worse, *CI], 3, tmp_path, capsys)
    assert report["comparison"]["token_f1_bootstrap"]["lost"] > 0


@pytest.mark.realdata
@pytest.mark.parametrize("n", [3, 8])
def test_compare_hotpotqa_systems_merged_equals_single(n, tmp_path, capsys):
    # 3 systems x 50 HotpotQA questions in one file (qa_factcheck), 300 resamples
    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    report = _compare_merged_equals_single(["compare", path, *CI], n, tmp_path, capsys)
    assert len(report["systems"]) == 3 and report["comparison"]["exact_match_mcnemar"] is not None


@pytest.mark.realdata
def test_compare_squad_predictions_merged_equals_single(tmp_path, capsys):
    # CMRC 2018 trial (SQuAD-style, Chinese) with two predictions files: the runs named after them
    from tests.unit.test_shards import _cmrc_squad_with_predictions

    trial, (_, pred) = _cmrc_squad_with_predictions(tmp_path)
    preds = json.loads(Path(pred).read_text(encoding="utf-8"))
    other = tmp_path / "cmrc_pred_b.json"
    other.write_text(json.dumps({k: (v if i % 4 else "") for i, (k, v) in enumerate(preds.items())},
                                ensure_ascii=False), encoding="utf-8")
    _compare_merged_equals_single(["compare", "--input", trial, "--predictions", pred, "--predictions", other, *CI],
                                  3, tmp_path, capsys)


def test_compare_gt_patch_rank_flips_once_on_the_pooled_records(tmp_path, capsys):
    # two systems x four questions; the patch accepts B's variants: B overtakes A (a rank flip), the before / after
    # paired tests and the flip computed once at the merge, with the run's seed
    from evaluators.io.gt_patch import write_gt_patch
    from tests.unit.test_qa_patch import DATA, ENTRIES

    gt = tmp_path / "runs.jsonl"
    gt.write_bytes(DATA)
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch(ENTRIES[:3]), encoding="utf-8")
    argv = ["compare", "--input", gt, "--gt-patch", patch, *CI, "--seed", "5"]
    report = _compare_merged_equals_single(argv, 3, tmp_path, capsys)
    assert report["gt_patch"]["effect"]["rank_flips"]
    unpatched = _shards(["compare", "--input", gt, *CI, "--seed", "5"], 3, tmp_path, tag="u", out_flag="--output-file")
    files = _shards(argv, 3, tmp_path, tag="p", out_flag="--output-file")
    code, _, err = _run(capsys, ["merge", files[0], *unpatched[1:]])
    assert code == 2 and "differ in input.patches" in err


def test_compare_shard_refusals(tmp_path, capsys):
    argv = ["compare", QA / "qa_systems_demo.jsonl", *CI]
    _refusals(argv, tmp_path, capsys, [*argv, "--seed", "3"], out_flag="--output-file")
    code, _, err = _run(capsys, [*argv, "--shard", "1/2", "--output-file", tmp_path / "y.json", "--log",
                                 tmp_path / "runs.db"])
    assert code == 2 and "--shard does not go with --log" in err


# ------------------------------------------------------------------------------------------ merge --format csv

@pytest.mark.parametrize("argv,out_flag", [
    (MEMORY_DEMO, "--out"),
    (["testsets", TS / "multi_turn_demo.json", TS / "multi_turn_demo_answers.jsonl"], "--output-file"),
    (["dialogue", DLG / "persona_cases.json", DLG / "panda-chat-large.jsonl", DLG / "panda-chat-small_report.json"],
     "--out"),
    (["compare", QA / "qa_systems_demo.jsonl", *CI], "--output-file"),
], ids=["memory", "testsets", "dialogue", "compare"])
def test_merged_csv_equals_the_single_process_csv(argv, out_flag, tmp_path, capsys):
    code, expected, err = _run(capsys, [*argv, "--format", "csv"])
    assert code == 0, err
    files = _shards(argv, 3, tmp_path, out_flag=out_flag)
    code, merged, err = _run(capsys, ["merge", *files, "--format", "csv"])
    assert code == 0, err
    assert merged == expected and merged.count("\n") > 5


# ------------------------------------------------------------------------------------------ narrative --gt-patch

@pytest.mark.realdata
def test_narrative_gt_patch_before_and_after_pooled_at_the_merge(tmp_path, capsys):
    # the shared fairy tales: two stories corrected (a GT character removed, an archetype variant accepted), a line
    # for a GT file not in the run; the shards score every pair on the GT as read and as corrected, the merge
    # compares the pooled runs once (before / after paired test by document)
    from evaluators.io.gt_patch import PatchEntry, file_sha256, write_gt_patch
    from tests.unit.test_shards import _fairytale_predictions

    gt, pred = _fairytale_predictions(tmp_path)
    stories = sorted(gt.glob("*.json"))[:2]
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in stories]
    one, two = (d["characters"][0] for d in docs)
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch([
        PatchEntry(f"characters[{one['name']}]", file_sha256(stories[0].read_bytes()), "remove", (one["name"],), (),
                   "lead"),
        PatchEntry(f"characters[{two['name']}].archetype", file_sha256(stories[1].read_bytes()), "add_answer",
                   (two["archetype"],), ("Other",), "ann"),
        PatchEntry("characters[某人]", "0" * 64, "remove", ("某人",), (), "lead"),
    ]), encoding="utf-8")
    argv = ["narrative", gt, pred, "--gt-patch", patch, "--quiet"]
    code, expected, err = _run(capsys, [*argv, "--format", "json", "--whole-batch"])
    assert code == 0, err
    files = _shards(argv, 3, tmp_path)
    code, merged, err = _run(capsys, ["merge", *files[::-1]])
    assert code == 0, err
    assert json.loads(merged) == json.loads(expected) and merged == expected
    report = json.loads(merged)
    assert report["gt_patch"]["effect"] is not None and any(i["kind"] == "gt_patch" for i in report["issues"])
    unpatched = _shards(argv[:3] + ["--quiet"], 3, tmp_path, tag="u")
    code, _, err = _run(capsys, ["merge", files[0], *unpatched[1:]])
    assert code == 2 and "differ in input.patches" in err
