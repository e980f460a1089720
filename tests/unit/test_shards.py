"""Shards with a checked merge (issue 32): ``qa --shard i/N`` + ``merge`` equal the single-process report; the
assignment covers every record once, deterministically, balanced within groups; bad shard sets exit 2."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from evaluators.cli import main
from evaluators.shards import ShardError, assign, parse_shard
from tests.conftest import require_shared

CI = ["--ci-resamples", "300"]  # intervals computed (same seed) on a few resamples: the test stays quick


# ------------------------------------------------------------------------------------------ assignment

def test_parse_shard():
    assert parse_shard("1/1") == (1, 1) and parse_shard(" 3/8 ") == (3, 8)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        with pytest.raises(ShardError, match="i/N"):
            parse_shard(bad)


def test_assignment_is_deterministic_covers_every_record_once_and_is_balanced_within_groups():
    # 10 keys of group "A", 7 of "B", 1 of no group; key ("A", "a3") stands twice (a repeated id)
    keys = [("A", f"a{k}") for k in range(10)] + [("B", f"题{k}") for k in range(7)] + [(None, "x"), ("A", "a3")]
    shards = assign(keys, 3, seed=0)
    assert len(shards) == len(keys) and set(shards) <= {1, 2, 3}  # every record exactly one shard
    assert shards == assign(keys, 3, seed=0)  # deterministic
    assert shards[3] == shards[-1]  # one key, one shard
    distinct = {k: s for k, s in zip(keys, shards)}
    # 18 distinct keys dealt in turn, group by group (None, then A, then B): 6 + 6 + 6 in all;
    # A's 10 keys after None's 1: 4 / 3 / 3 in some order; B's 7: 3 / 2 / 2
    assert sorted(Counter(distinct.values()).values()) == [6, 6, 6]
    assert sorted(Counter(s for k, s in distinct.items() if k[0] == "A").values()) == [3, 3, 4]
    assert sorted(Counter(s for k, s in distinct.items() if k[0] == "B").values()) == [2, 2, 3]
    # the assignment depends on the keys, not on their order in the file
    shuffled = keys[:]
    random.Random(5).shuffle(shuffled)
    assert dict(zip(shuffled, assign(shuffled, 3, seed=0))) == distinct
    # another seed deals the keys otherwise (same balance)
    other = assign(keys, 3, seed=1)
    assert other != shards and sorted(Counter(dict(zip(keys, other)).values()).values()) == [6, 6, 6]
    assert assign(keys, 1) == [1] * len(keys)


# ------------------------------------------------------------------------------------------ merge == single

def _single(path, capsys, *extra) -> str:
    capsys.readouterr()
    assert main(["qa", "--input", str(path), "--format", "json", *CI, *extra]) == 0
    return capsys.readouterr().out


def _shards(path, n, tmp_path, *extra, tag="s") -> list[str]:
    files = []
    for i in range(1, n + 1):
        out = tmp_path / f"{tag}{i}.json"
        assert main(["qa", "--input", str(path), "--shard", f"{i}/{n}", "--output-file", str(out), *CI, *extra]) == 0
        files.append(str(out))
    return files


def _merge(files, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["merge", *files])
    out = capsys.readouterr()
    return code, out.out, out.err


def _cmrc_squad_with_predictions(tmp_path):
    """CMRC 2018 trial (SQuAD-style, read whole) and predictions: the first gold answer, its first half every
    third question (partial credit), none every seventh (missing prediction)."""
    data = json.loads(require_shared("qa_factcheck", "cmrc2018", "cmrc2018_trial.json").read_bytes())
    preds = {}
    k = 0
    for article in data["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"][:1]:  # one question a paragraph: a few hundred records
                text = qa["answers"][0]["text"]
                if k % 7:
                    preds[qa["id"]] = text[: max(1, len(text) // 2)] if k % 3 == 0 else text
                k += 1
    trial = tmp_path / "cmrc_trial.json"
    trial.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    pred = tmp_path / "cmrc_pred.json"
    pred.write_text(json.dumps(preds, ensure_ascii=False), encoding="utf-8")
    return trial, ["--predictions", str(pred)]


@pytest.mark.parametrize("n", [3, 8])
@pytest.mark.parametrize("data", ["hotpotqa", "cfever_zh", "cmrc_zh", "hotpotqa_2600"])
def test_merged_report_equals_the_single_process_report(data, n, tmp_path, capsys):
    extra: list[str] = []
    if data == "hotpotqa":  # 3 systems x 50 HotpotQA questions (grouped by system), EM / F1
        path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    elif data == "cfever_zh":  # 600 Chinese fact-check claims (CFEVER), verdicts and confusion matrix
        path = require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")
    elif data == "cmrc_zh":  # Chinese QA, CMRC 2018 rules, a SQuAD-style file with separate predictions
        path, extra = _cmrc_squad_with_predictions(tmp_path)
    else:  # more records than the detection sample: the task is decided on the first 2,000, as in one process
        lines = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl").read_text(
            encoding="utf-8").splitlines()
        path = tmp_path / "hotpot_2600.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for k in range(2600):
                record = json.loads(lines[k % len(lines)])
                record["question_id"] += f"-{k // len(lines)}"
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
    single = _single(path, capsys, *extra)
    files = _shards(path, n, tmp_path, *extra)
    shard_items = [json.loads(open(f, encoding="utf-8").read())["manifest"]["items"] for f in files]
    sizes = [len(items) for items in shard_items]
    assert max(sizes) - min(sizes) <= 1  # balanced
    random.Random(n).shuffle(files)  # any order
    code, merged, err = _merge(files, capsys)
    assert code == 0, err
    a, b = json.loads(single), json.loads(merged)
    assert a == b  # field by field (the QA report has no timing field)
    assert merged == single  # and the same text
    assert sum(sizes) == a["n_records"] and a["overall"]["exact_match_ci_low"] is not None
    if data == "hotpotqa_2600":
        assert "(in a sample: the first 2,000 of 2,600 records)" in b["task_reason"]
    if data == "cfever_zh" and n == 3:  # the per-record CSV too
        single_csv = _single(path, capsys, "--format", "csv")
        capsys.readouterr()
        assert main(["merge", *files, "--format", "csv"]) == 0
        assert capsys.readouterr().out == single_csv


# ------------------------------------------------------------------------------------------ refusals

@pytest.fixture
def hotpot_shards(tmp_path):
    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    return path, _shards(path, 3, tmp_path)


def test_merge_refuses_mixed_manifests(hotpot_shards, tmp_path, capsys):
    path, files = hotpot_shards
    other = tmp_path / "other.jsonl"  # the same records but one prediction: another run
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["final_answer"] = "something else"
    other.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    foreign = _shards(other, 3, tmp_path, tag="o")
    code, out, err = _merge([files[0], foreign[1], files[2]], capsys)
    assert code == 2 and out == ""
    assert f"mixed manifests: {files[0]} and {foreign[1]} differ in input.gt_digest" in err
    # the same file scored with other settings
    code, _, err = _merge([files[0], *_shards(path, 3, tmp_path, "--lang", "en", tag="l")[1:]], capsys)
    assert code == 2 and "mixed manifests" in err and "differ in config" in err


def test_merge_refuses_a_missing_or_repeated_shard(hotpot_shards, capsys):
    _, files = hotpot_shards
    code, out, err = _merge([files[2], files[0]], capsys)
    assert code == 2 and out == ""
    assert "missing shard(s) 2 of 3" in err and files[0] in err and files[2] in err
    code, _, err = _merge([files[0], files[1], files[2], files[1]], capsys)
    assert code == 2 and f"shard 2 of 3 given 2 times: {files[1]}, {files[1]}" in err


def test_merge_refuses_duplicated_ids(hotpot_shards, capsys):
    _, files = hotpot_shards
    one, two = (json.loads(open(f, encoding="utf-8").read()) for f in files[:2])
    one["items"].append(two["items"][0])  # a record of shard 2 written into shard 1 too
    one["manifest"]["items"].append(two["manifest"]["items"][0])
    with open(files[0], "w", encoding="utf-8") as f:
        json.dump(one, f, ensure_ascii=False)
    group, rid = two["manifest"]["items"][0]
    code, out, err = _merge(files, capsys)
    assert code == 2 and out == ""
    assert f"duplicated id(s) across shards: {rid!r} ({group}) in {files[0]} and {files[1]}" in err


def test_merge_refuses_what_is_not_a_shard_file(hotpot_shards, tmp_path, capsys):
    path, files = hotpot_shards
    code, _, err = _merge([files[0], str(path)], capsys)
    assert code == 2 and f"{path} is not a shard file" in err
    code, _, err = _merge([files[0], str(tmp_path / "absent.json")], capsys)
    assert code == 2 and "cannot read" in err and "absent.json" in err


def test_qa_shard_option_errors(tmp_path, capsys):
    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    assert main(["qa", "--input", str(path), "--shard", "4/3", "--output-file", str(tmp_path / "x.json")]) == 2
    assert "--shard takes i/N" in capsys.readouterr().err
    assert main(["qa", "--input", str(path), "--shard", "1/3"]) == 2
    assert "--shard needs --output-file" in capsys.readouterr().err


def test_merge_refuses_rows_that_are_not_the_manifests_items(hotpot_shards, capsys):
    _, files = hotpot_shards
    one = json.loads(open(files[0], encoding="utf-8").read())
    one["items"][1], one["items"][2] = one["items"][2], one["items"][1]  # rows swapped, manifest not
    with open(files[0], "w", encoding="utf-8") as f:
        json.dump(one, f, ensure_ascii=False)
    code, _, err = _merge(files, capsys)
    assert code == 2 and f"{files[0]}: item row 2 is" in err


# ------------------------------------------------------------------------------------------ narrative

def _fairytale_predictions(tmp_path):
    """Predictions of the shared Chinese fairy tales (JSON v3 GT), derived from each GT: some events dropped (every
    2nd, 3rd or 4th), every 4th kept event's type set to OTHER, the last character dropped in every other story;
    every 9th story has no prediction (an unpaired GT file)."""
    gt = require_shared("fairytales", "gt_v3")
    pred = tmp_path / "pred"
    pred.mkdir()
    for k, path in enumerate(sorted(gt.glob("*.json"))):
        if k % 9 == 8:
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["narrative_events"] = [e for i, e in enumerate(doc["narrative_events"]) if i % (k % 3 + 2)]
        for i, e in enumerate(doc["narrative_events"]):
            if i % 4 == 0:
                e["event_type"] = "OTHER"
        if k % 2:
            doc["characters"] = doc["characters"][:-1]
        (pred / path.name.replace("_v3.json", "_prediction.json")).write_text(json.dumps(doc, ensure_ascii=False),
                                                                              encoding="utf-8")
    return gt, pred


@pytest.mark.parametrize("n", [3, 8])
def test_narrative_merged_report_equals_the_single_process_batch_report(n, tmp_path, capsys):
    gt, pred = _fairytale_predictions(tmp_path)
    capsys.readouterr()
    assert main(["narrative", str(gt), str(pred), "--format", "json", "--whole-batch", "--quiet"]) == 0
    single = capsys.readouterr().out
    files = []
    for i in range(1, n + 1):
        out = tmp_path / f"n{i}.json"
        assert main(["narrative", str(gt), str(pred), "--shard", f"{i}/{n}", "--out", str(out), "--quiet"]) == 0
        files.append(str(out))
    sizes = [len(json.loads(open(f, encoding="utf-8").read())["manifest"]["items"]) for f in files]
    assert sum(sizes) == 25 and max(sizes) - min(sizes) <= 1  # 28 stories, 3 without a prediction
    code, merged, err = _merge(files[::-1], capsys)
    assert code == 0, err
    a, b = json.loads(single), json.loads(merged)
    assert a == b and merged == single
    assert len(a["unpaired_gt"]) == 3 and a["micro"]["overall_score"] is not None
    # to a file, the merge writes the bytes of 'narrative --out' (which ends without the newline its print adds)
    single_file, merged_file = tmp_path / "single.json", tmp_path / "merged.json"
    assert main(["narrative", str(gt), str(pred), "--whole-batch", "--format", "json", "--out", str(single_file),
                 "--quiet"]) == 0
    assert main(["merge", *files, "--output-file", str(merged_file)]) == 0
    assert merged_file.read_bytes() == single_file.read_bytes()
    code, _, err = _merge([files[0], *files[1:-1]], capsys)
    assert code == 2 and f"missing shard(s) {n} of {n}" in err


def test_merge_refuses_shards_of_two_commands(hotpot_shards, tmp_path, capsys):
    gt, pred = _fairytale_predictions(tmp_path)
    out = tmp_path / "n2.json"
    assert main(["narrative", str(gt), str(pred), "--shard", "2/3", "--out", str(out), "--quiet"]) == 0
    _, files = hotpot_shards
    code, _, err = _merge([files[0], str(out), files[2]], capsys)
    assert code == 2 and f"mixed manifests: {files[0]} and {out} differ in command (\"qa\" vs \"narrative\")" in err


def test_a_records_shard_key_is_the_group_and_id_its_score_has():
    from evaluators.qa.evaluate import QAConfig, Scorer

    records = [{"id": " q1 ", "answer": "a", "prediction": "a", "system": "A"},  # id stripped
               {"question_id": 7, "answer": "北京", "prediction": "北京", "system": 3},  # numbers as text
               {"answer": "x", "prediction": "y", "system": "  "},  # no id: #line; a blank group is none
               {"original_row": {"id": "r9"}, "answer": "x", "system": None}]
    scorer = Scorer("qa", QAConfig(group_field="system"), "system")
    keys = [scorer.key(r, k, k + 1) for k, r in enumerate(records)]
    assert keys == [("A", "q1"), ("3", "7"), (None, "#3"), (None, "r9")]
    assert keys == [(v[3], v[2]) for v in (scorer.values(r, k, k + 1) for k, r in enumerate(records))]


def test_a_shard_file_reads_the_same_line_by_line_and_whole(tmp_path):
    from evaluators.shards import _read_lines, manifest, read_shard, write_shard

    head = manifest("qa", 1, 2, seed=0, input={"name": "f", "gt_digest": "d", "predictions_digest": "d",
                                               "patches": []}, n_items=3, assignment="a", config={"x": (1, 2)},
                    signature="s", provenance={}, decision={}, items=[(None, "a"), ("系统", "b")])
    path = tmp_path / "s.json"
    write_shard(path, head, ["id", "v"], [["a", 0.1], ["b", "北京,\n]"]], extra={"issues": []})
    with open(path, "rb") as f:
        assert _read_lines(f) is not None  # the writer's layout: rows kept as their lines' text
    lines = read_shard(path)
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")  # one line
    other = read_shard(whole)
    assert lines.manifest == other.manifest == json.loads(json.dumps(head))
    assert list(lines.values()) == list(other.values()) == [["a", 0.1], ["b", "北京,\n]"]]
    assert lines.config() == {"x": (1, 2)}


def test_a_gt_patch_travels_with_the_shards_and_is_applied_once_at_the_merge(tmp_path, capsys):
    from tests.unit.test_qa_patch import DATA, ENTRIES
    from evaluators.io.gt_patch import write_gt_patch

    gt = tmp_path / "runs.jsonl"  # two systems x four questions; the patch accepts B's variants (a rank flip)
    gt.write_bytes(DATA)
    patch = tmp_path / "p.jsonl"
    patch.write_text(write_gt_patch(ENTRIES[:3]), encoding="utf-8")
    single = _single(gt, capsys, "--gt-patch", str(patch))
    files = _shards(gt, 3, tmp_path, "--gt-patch", str(patch))
    code, merged, err = _merge(files, capsys)
    assert code == 0, err
    assert json.loads(merged) == json.loads(single) and merged == single
    report = json.loads(merged)
    assert report["overall"]["exact_match"] == pytest.approx(7 / 8)  # after: A 3/4 (q4 still wrong), B 4/4
    assert report["gt_patch"]["effect"] is not None
    unpatched = _shards(gt, 3, tmp_path, tag="u")  # a shard without the patch is another run
    code, _, err = _merge([files[0], *unpatched[1:]], capsys)
    assert code == 2 and "differ in input.patches" in err


# ------------------------------------------------------------------------------------------ --workers in a shard

DEMO = __import__("pathlib").Path(__file__).resolve().parents[2] / "evaluators" / "demo"


@pytest.mark.parametrize("argv, out_flag, module", [
    (["qa", DEMO / "qa" / "qa_systems_demo.jsonl", *CI], "--output-file", "evaluators.qa.shards"),
    (["compare", DEMO / "qa" / "qa_systems_demo.jsonl", "--ci-resamples", "0"], "--output-file",
     "evaluators.qa.shards"),
    (["narrative", DEMO / "narrative", DEMO / "narrative", "--quiet"], "--out", "evaluators.narrative.shards"),
])
def test_workers_apply_within_a_shard_and_give_the_same_shard_file(argv, out_flag, module, tmp_path, capsys,
                                                                   monkeypatch):
    # --workers 2 is no longer ignored by qa, compare and narrative shards: the shard's items go to the pool
    # (map_ordered is called with 2 workers) and the shard file is the one of --workers 1 (scored in this process,
    # streamed), byte for byte
    import importlib

    import evaluators.parallel as parallel

    target = importlib.import_module(module)
    seen = []

    def spy(fn, items, workers=1, *, chunk_size):
        seen.append(workers)
        return parallel.map_ordered(fn, items, workers, chunk_size=1)  # one item a chunk: every worker gets some

    monkeypatch.setattr(target, "map_ordered", spy)
    texts = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.json"
        capsys.readouterr()
        assert main([str(a) for a in argv] + ["--shard", "1/2", out_flag, str(out), "--workers", workers]) == 0, \
            capsys.readouterr().err
        texts.append(out.read_bytes())
    assert 2 in seen and set(seen) <= {1, 2}  # the --workers 2 shard went to the pool
    assert texts[0] == texts[1] and len(json.loads(texts[0])["items"]) >= 1


def test_shard_help_says_what_workers_do_within_a_shard(capsys):
    for command in ("qa", "narrative", "compare", "memory", "testsets", "dialogue"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--workers N / --scheduler score the shard's own" in text, command
