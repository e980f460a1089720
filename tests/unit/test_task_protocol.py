"""Issue 27: a task plugged in through the Task protocol alone gets the CLI command, the JSON/CSV/Markdown
writers, review items whose decisions export to a GT patch, and scores before and after the patch.

The task is tests/helpers/toy_task.py (exact-match label classification); its page is tests/helpers/toy_page.py
(tests/pages/test_task_page.py).  Those two files are all it needed: no engine module names it.

Demo (hand-derived, labels compared after strip + casefold):
    system A: r1 Cat=cat 1, r2 wolf≠dog 0, r3 红色=红色 1, r4 navy≠blue 0 -> 2/4 = 0.5
    system B: r1 cat 1, r2 dog 1, r3 绿色≠红色 0, r4 blue 1         -> 3/4 = 0.75
    by category: A animal (1+0)/2 = 0.5, A colour (1+0)/2 = 0.5, B animal (1+1)/2 = 1.0, B colour (0+1)/2 = 0.5
    case-sensitive: A r1 Cat≠cat -> 1/4 = 0.25.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from evaluators.cli import main
from evaluators.io.sources import InputFile
from evaluators.metrics.statistics import bootstrap_ci
from evaluators.run_result import ItemTable, RunResult
from evaluators.tasks import config_from, register, review_items, run_task
from tests.conftest import ROOT
from tests.helpers.toy_task import DEMO_GT, DEMO_PRED, TASK, ToyConfig, demo_files

#: Every file the toy task needed (the acceptance: a task touching no engine module).
FILES_NEEDED = ("tests/helpers/toy_task.py", "tests/helpers/toy_page.py")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def demo_paths(tmp_path) -> tuple[str, str]:
    (tmp_path / "toy_gt.jsonl").write_bytes(DEMO_GT)
    (tmp_path / "toy_pred.jsonl").write_bytes(DEMO_PRED)
    return str(tmp_path / "toy_gt.jsonl"), str(tmp_path / "toy_pred.jsonl")


def _means(summary: list[dict]) -> dict[tuple[str, str], float]:
    return {(r["system"], r["slice_value"]): r["mean"] for r in summary if r["metric"] == "exact_match"}


def test_the_toy_task_needs_no_engine_module():
    for rel in FILES_NEEDED:
        assert (ROOT / rel).is_file()
    for folder in ("evaluators", "components", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "toylabel" not in text and "toy_task" not in text, path


def test_cli_json_scores_the_demo_by_system_and_slice(demo_paths):
    code, out, err = _cli("toylabel", *demo_paths, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert _means(data["summary"]) == {("A", "all"): 0.5, ("A", "animal"): 0.5, ("A", "colour"): 0.5,
                                       ("B", "all"): 0.75, ("B", "animal"): 1.0, ("B", "colour"): 0.5}
    b_all = next(r for r in data["summary"] if r["system"] == "B" and r["slice_value"] == "all")
    ci = bootstrap_ci([1.0, 1.0, 0.0, 1.0], n_resamples=10_000, seed=0, unit="record")
    assert (b_all["n"], b_all["ci_low"], b_all["ci_high"]) == (4, ci.ci_low, ci.ci_high)
    assert len(data["items"]) == 8 and data["items"][1] == {
        "item_id": "r2", "system": "A", "category": "animal", "exact_match": 0.0, "question": "r2",
        "ground_truth": ["dog"], "prediction": "wolf"}
    # the bad GT line is located, the rest scored
    assert [(i["file"], i["line"]) for i in data["issues"]] == [("toy_gt.jsonl", 5)]
    assert data["digests"]["gt"] == __import__("hashlib").sha256(DEMO_GT).hexdigest()


def test_cli_config_option_and_csv_and_markdown(demo_paths):
    code, out, _ = _cli("toylabel", *demo_paths, "--case-sensitive", "--format", "json")
    assert code == 0 and _means(json.loads(out)["summary"])[("A", "all")] == 0.25
    code, csv_text, _ = _cli("toylabel", *demo_paths, "--format", "csv")
    assert code == 0
    lines = csv_text.splitlines()
    assert lines[0] == "item_id,system,category,exact_match,question,ground_truth,prediction"
    assert lines[1:3] == ["r1,A,animal,1,r1,cat,Cat", "r2,A,animal,0,r2,dog,wolf"]
    code, md_text, _ = _cli("toylabel", *demo_paths, "--format", "md")
    assert code == 0 and "| B | all | 4 | 0.750 \\[" in md_text                      # md() escapes the brackets
    assert "- error: toy_gt.jsonl:5:1: invalid JSON on this line" in md_text      # "_" inside a word is kept


def test_cli_refuses_a_missing_file_with_exit_2(demo_paths, tmp_path):
    code, _, err = _cli("toylabel", demo_paths[0], str(tmp_path / "absent.jsonl"))
    assert code == 2 and "absent.jsonl" in err


def test_review_decisions_become_a_gt_patch_and_before_after(tmp_path, demo_paths):
    from evaluators.io.gt_patch import write_gt_patch
    from evaluators.review.gt_patch import build_gt_patch
    from evaluators.review.store import ReviewStore

    result = run_task(TASK, demo_files())
    items = review_items(result)
    assert [(p["system"], p["id"]) for p in items][:2] == [("A", "r1"), ("A", "r2")] and len(items) == 8
    store = ReviewStore(tmp_path / "review.sqlite")
    session = store.create_session("toy", "toylabel", items, created_by="lead", k=1)
    by_key = {(i.payload["system"], i.payload["id"]): i for i in store.items(session.id)}
    store.save_decision(by_key[("A", "r2")].id, "ann", label="acceptable_variant")   # "wolf" accepted for r2
    store.save_decision(by_key[("B", "r3")].id, "ann", label="gt_error")
    store.adjudicate(by_key[("B", "r3")].id, "lead", "gt_error", corrected_answer="绿色")  # r3's GT becomes 绿色
    build = build_gt_patch(store, session.id, "")
    assert [(e.record_id, e.op, e.new) for e in build.entries] == [("r2", "add_answer", ("wolf",)),
                                                                    ("r3", "replace", ("绿色",))]
    patch = tmp_path / "toy.patch.jsonl"
    patch.write_text(write_gt_patch(build.entries), encoding="utf-8")
    code, out, err = _cli("toylabel", *demo_paths, "--gt-patch", str(patch), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    # after: A r1 1, r2 1 (wolf accepted), r3 0 (红色 ≠ 绿色), r4 0 -> 0.5; B r1 1, r2 1, r3 1, r4 1 -> 1.0
    assert _means(data["summary"])[("A", "all")] == 0.5 and _means(data["summary"])[("B", "all")] == 1.0
    effect = data["gt_patch"]["effect"]
    rows = {(c["run"], m["metric"]): m for c in effect["changes"] for m in c["metrics"]}
    assert rows[("B", "exact_match")]["before"]["estimate"] == 0.75 and rows[("B", "exact_match")]["after"]["estimate"] == 1.0
    assert rows[("A", "exact_match")]["before"]["estimate"] == 0.5 and rows[("A", "exact_match")]["after"]["estimate"] == 0.5


def test_registry_refuses_what_is_not_a_task():
    with pytest.raises(TypeError, match="lacks"):
        register(object())

    class Other(type(TASK)):
        pass

    with pytest.raises(ValueError, match="registered already"):
        register(Other())
    with pytest.raises(ValueError, match="no option"):
        config_from(TASK, {"colour": True})
    assert config_from(TASK, {"case_sensitive": True}) == ToyConfig(True)


def test_item_table_checks_its_shape():
    with pytest.raises(ValueError, match="has 1 values for 2 items"):
        ItemTable(("a", "b"), ("s", "s"), {"m": [1.0]})
    with pytest.raises(ValueError, match="item 'a' of system 's' appears more than once"):
        ItemTable(("a", "a"), ("s", "s"), {"m": [1.0, 0.0]})
    table = ItemTable(("a", "b", "a"), ("s", "s", "t"), {"m": [1.0, float("nan"), None]}, {"k": ["x", "y", None]})
    assert table.values["m"] == (1.0, None, None)                     # NaN read as undefined
    run = RunResult("t", table)
    assert run.by_system() == {"s": {"m": [1.0, None]}, "t": {"m": [None]}}
    rows = {(r.system, r.slice_value): (r.n, r.n_items, r.mean) for r in run.summary(n_resamples=0)}
    assert rows == {("s", "all"): (1, 2, 1.0), ("s", "x"): (1, 1, 1.0), ("s", "y"): (0, 1, None),
                    ("t", "all"): (0, 1, None)}
    assert table.digest() == ItemTable(("a", "b", "a"), ("s", "s", "t"), {"m": [1.0, None, None]},
                                       {"k": ["x", "y", None]}).digest()


def test_plugged_task_is_loaded_from_the_environment(demo_paths):
    import os
    import subprocess
    import sys

    env = {**os.environ, "EVALBOARD_TASKS": "tests.helpers.toy_task", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "evaluators", "toylabel", *demo_paths, "--format", "csv"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "r1,A,animal,1,r1,cat,Cat"
    env["EVALBOARD_TASKS"] = "tests.helpers.no_such_module"
    done = subprocess.run([sys.executable, "-m", "evaluators", "toylabel", "--help"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert done.returncode != 0 and "no_such_module" in done.stderr
