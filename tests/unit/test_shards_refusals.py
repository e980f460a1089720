"""A run scored in shards is refused where the single process refuses it: the same exit code, the same ``error:``
line and the same stdout, the refusal decided on the pooled whole at the merge (one shard may lack what the whole
has) or, for what every shard reads whole, by the shard itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.cli import main

DEMO = Path(__file__).resolve().parents[2] / "evaluators" / "demo"


def _run(capsys, argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


def _sharded(capsys, argv, tmp_path, out_flag: str, n: int = 2, tag: str = "s") -> tuple[int, str, str, list[str]]:
    """``argv --shard i/n`` for every i, then ``merge`` of the files: ``(code, stdout, stderr)`` of the first shard
    that exits non-zero (a shard that refuses on the whole input), else of the merge; and the shard files."""
    files = []
    for i in range(1, n + 1):
        out = tmp_path / f"{tag}{i}.json"
        code, stdout, err = _run(capsys, [*argv, "--shard", f"{i}/{n}", out_flag, out])
        if code:
            return code, stdout, err, files
        files.append(str(out))
    code, stdout, err = _run(capsys, ["merge", *files])
    return code, stdout, err, files


def _same_outcome(capsys, argv, tmp_path, out_flag, single=("--format", "json"), n=2) -> tuple[int, str, str]:
    """The single process and the sharded run + merge end alike: exit code, ``error:`` lines, stdout."""
    code, out, err = _run(capsys, [*argv, *single])
    s_code, s_out, s_err, _ = _sharded(capsys, argv, tmp_path, out_flag, n)
    assert (s_code, _errors(s_err), s_out) == (code, _errors(err), out), (err, s_err)
    return code, out, err


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


QUESTIONS = [("q1", "Paris"), ("q2", "Rome"), ("q3", "Oslo"), ("q4", "Bern")]


# ------------------------------------------------------------------------------------------ qa

def test_qa_no_prediction_anywhere_is_refused_by_the_merge_as_by_qa(tmp_path, capsys):
    # every record has its ground truth and none a prediction: 'qa' exits 2; both shards are written (each holds
    # two of the four records, none with a prediction) and the merge refuses the pooled whole with qa's line
    path = _jsonl(tmp_path / "nopred.jsonl", [{"id": i, "question": "?", "answer": a} for i, a in QUESTIONS])
    code, out, err = _same_outcome(capsys, ["qa", path], tmp_path, "--output-file")
    assert code == 2 and out == ""
    assert _errors(err) == [f"error: {path}: no prediction found in any of the 4 records (looked in: final_answer, "
                            "prediction, predicted_answer, predicted_label, pred); add predictions to the records, "
                            "name their field, or give a predictions file {id: answer} (--predictions)"]


def test_qa_predictions_file_matching_no_id_and_records_without_ground_truth(tmp_path, capsys):
    path = _jsonl(tmp_path / "gt.jsonl", [{"id": i, "question": "?", "answer": a} for i, a in QUESTIONS])
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({"x1": "Paris", "x2": "Rome"}), encoding="utf-8")
    code, _, err = _same_outcome(capsys, ["qa", path, "--predictions", preds], tmp_path, "--output-file")
    assert code == 2 and _errors(err) == [f"error: {path}: no prediction found for any of the 4 records: no id in "
                                          f"{preds} matches a record id"]
    nogt = _jsonl(tmp_path / "nogt.jsonl", [{"id": i, "question": "?", "prediction": a} for i, a in QUESTIONS])
    code, _, err = _same_outcome(capsys, ["qa", nogt], tmp_path, "--output-file")
    assert code == 2 and len(_errors(err)) == 1
    assert _errors(err)[0].startswith(f"error: {nogt}: none of the 4 records has a ground-truth answer (looked in: ")


def test_qa_another_tasks_file_is_named_where_it_goes_by_the_merge_too(tmp_path, capsys):
    path = DEMO / "memory" / "demo_results.jsonl"  # long-term-memory results given to qa
    code, _, err = _same_outcome(capsys, ["qa", path], tmp_path, "--output-file")
    assert code == 2 and "this is long-term-memory results" in _errors(err)[0]
    assert "it goes in Results on the Long Memory page" in _errors(err)[0]


def test_qa_a_shard_without_predictions_is_no_refusal_when_the_whole_has_them(tmp_path, capsys):
    # one prediction among four records: on 2 shards of 2 records, one shard holds no prediction at all; the
    # whole is scored (EM 1/4 = 0.25: q's one right answer over four records, three missing predictions score 0)
    rows = [{"id": i, "question": "?", "answer": a} for i, a in QUESTIONS]
    rows[2]["prediction"] = "Oslo"
    path = _jsonl(tmp_path / "one.jsonl", rows)
    code, out, _ = _same_outcome(capsys, ["qa", path, "--ci-resamples", "0"], tmp_path, "--output-file")
    assert code == 0 and json.loads(out)["overall"]["exact_match"] == pytest.approx(0.25)
    _, _, _, files = _sharded(capsys, ["qa", path, "--ci-resamples", "0"], tmp_path, "--output-file", tag="t")
    held = [json.loads(Path(f).read_text(encoding="utf-8"))["items"] for f in files]
    at = list(json.loads(Path(files[0]).read_text(encoding="utf-8"))["columns"]).index("prediction_raw")
    assert sorted(sum(r[at] is not None for r in rows_) for rows_ in held) == [0, 1]  # one shard has none


def test_qa_gt_patch_for_another_file_is_refused_by_the_merge_as_by_qa(tmp_path, capsys):
    from evaluators.io.gt_patch import PatchEntry, write_gt_patch

    rows = [{"id": i, "question": "?", "answer": a, "prediction": a} for i, a in QUESTIONS]
    path = _jsonl(tmp_path / "gt.jsonl", rows)
    patch = tmp_path / "p.jsonl"  # made for another GT file (its SHA-256 is not this file's)
    patch.write_text(write_gt_patch([PatchEntry("q1", "0" * 64, "add_answer", ("Paris",), ("Lutetia",), "ann")]),
                     encoding="utf-8")
    code, _, err = _same_outcome(capsys, ["qa", path, "--gt-patch", patch], tmp_path, "--output-file")
    assert code == 2 and len(_errors(err)) == 1
    assert _errors(err)[0].startswith(f"error: {patch}:1: this correction was made for the GT file with sha256 "
                                      f"000000000000..., not for {path}")


# ------------------------------------------------------------------------------------------ compare

def test_compare_refusals_are_the_single_processes(tmp_path, capsys):
    a = _jsonl(tmp_path / "a.jsonl", [{"id": i, "question": "?", "answer": x, "prediction": x} for i, x in QUESTIONS])
    b = _jsonl(tmp_path / "b.jsonl", [{"id": i, "question": "?", "answer": x} for i, x in QUESTIONS])
    code, out, err = _same_outcome(capsys, ["compare", a, b, "--ci-resamples", "0"], tmp_path, "--output-file")
    assert code == 2 and out == "" and _errors(err)[0].startswith(f"error: {b}: no prediction found in any of the 4")
    b = _jsonl(tmp_path / "b.jsonl", [{"id": i, "question": "?", "answer": x, "prediction": "Lima"}
                                      for i, x in QUESTIONS])
    code, _, err = _same_outcome(capsys, ["compare", a, b, "--ci-resamples", "0", "--a", "nobody"], tmp_path,
                                 "--output-file")
    assert code == 2 and "nobody" in _errors(err)[0] and "do not make a report" not in err


# ------------------------------------------------------------------------------------------ memory

def test_memory_cache_refusals_are_the_single_processes(tmp_path, capsys):
    results = DEMO / "memory" / "demo_results.jsonl"
    broken = tmp_path / "broken_cache.json"
    broken.write_text("{not json", encoding="utf-8")  # a judge cache that cannot be read
    code, out, err = _same_outcome(capsys, ["memory", results, "--ci-resamples", "0", "--cache", broken], tmp_path,
                                   "--out")
    assert code == 2 and out == "" and "the judge cache cannot be read" in _errors(err)[0]
    empty = tmp_path / "empty_cache.json"  # a cache of no question of these results
    empty.write_text(json.dumps({"format": "evalboard-memory-judge-cache", "version": 1, "entries": {}}),
                     encoding="utf-8")
    code, out, err = _same_outcome(capsys, ["memory", results, "--ci-resamples", "0", "--cache", empty], tmp_path,
                                   "--out")
    assert code == 2 and out == "" and _errors(err) == [
        f"error: 25 question(s) are not in the judge cache {empty} (none of the questions is); run with --judge and "
        "an endpoint to judge them"]


# ------------------------------------------------------------------------------------------ testsets

def test_testsets_answers_file_without_answers_is_refused_by_the_shard_as_by_testsets(tmp_path, capsys):
    items = DEMO / "testsets" / "factual_demo.json"
    answers = tmp_path / "answers.json"
    answers.write_text("{}", encoding="utf-8")
    code, out, err = _same_outcome(capsys, ["testsets", items, answers], tmp_path, "--output-file")
    assert code == 2 and out == "" and _errors(err) == [
        f"error: {answers}: no answers read (expected {{id: answer}} or records with id and answer)"]


# ------------------------------------------------------------------------------------------ narrative

def test_narrative_no_pair_scored_writes_the_report_then_exits_2_as_narrative(tmp_path, capsys):
    gt = tmp_path / "gt"
    pred = tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    for name in ("EN_001_lantern_keeper", "ZH_001_石匠与山神"):
        (gt / f"{name}_v3.json").write_bytes((DEMO / "narrative" / f"{name}_v3.json").read_bytes())
        (pred / f"{name}_prediction.json").write_text("{not json", encoding="utf-8")  # paired, unreadable
    code, out, err = _same_outcome(capsys, ["narrative", gt, pred, "--quiet"], tmp_path, "--out",
                                   single=("--format", "json", "--whole-batch"))
    assert code == 2 and _errors(err) == ["error: no pair could be scored"]
    report = json.loads(out)  # the report is written first, as one process writes it
    assert len(report["documents"]) == 2 and report["micro"] in (None, {})


def test_narrative_no_pair_found_names_the_unpaired_files_in_a_shard_too(tmp_path, capsys):
    gt = tmp_path / "gt"
    pred = tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    (gt / "EN_001_lantern_keeper_v3.json").write_bytes((DEMO / "narrative" / "EN_001_lantern_keeper_v3.json")
                                                       .read_bytes())
    (pred / "EN_002_other_prediction.json").write_bytes(
        (DEMO / "narrative" / "EN_001_lantern_keeper_prediction.json").read_bytes())
    code, out, err = _same_outcome(capsys, ["narrative", gt, pred, "--quiet"], tmp_path, "--out",
                                   single=("--format", "json", "--whole-batch"))
    assert code == 2 and out == "" and len(_errors(err)) == 1
    assert "EN_001_lantern_keeper_v3.json" in err and "EN_002_other_prediction.json" in err
