"""AppTest of "Apply review corrections" (components/corrections.py) on the QA, Test-set, Persona and
Long Memory pages: off it costs nothing; on, a review session or patch files re-score the page's run
and the scores before and after are shown with their intervals, paired test and rank flips."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evaluators.demo import demo_path
from evaluators.io.gt_patch import PatchEntry, file_sha256, write_gt_patch
from evaluators.review.store import ReviewStore
from tests.conftest import ROOT, require_shared
from tests.pages.helpers import DIALOGUE_PAGE, MEMORY_PAGE, QA_PAGE, TESTSETS_PAGE, problem_table, run_page, shown

UPLOAD = "GT patch files · 更正文件 (JSONL)"


def table(at, column: str) -> list[dict]:
    """The records of the (one) table with this column; the page's errors when there is none."""
    frames = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(frames) == 1, [e.value for e in at.error] + [w.value for w in at.warning]
    return frames[0].to_dict("records")


def effect_rows(at, key: str) -> list[dict]:
    """The before / after table of the control as records."""
    return table(at, "p_paired_bootstrap")


def applied_rows(at, key: str) -> list[dict]:
    """What each GT file's patch did."""
    return table(at, "already_in_place")


def with_patch(at, key: str, name: str, text: str):
    """Turn the control on, pick patch files and upload ``text`` as ``name``."""
    at.toggle(key=f"{key}_on").set_value(True).run()
    at.radio(key=f"{key}_source").set_value(UPLOAD).run()
    at.file_uploader(key=f"{key}_files").upload(name, text.encode("utf-8")).run()
    assert not at.exception, at.exception
    return at


def test_the_control_costs_nothing_when_off():
    # importing the component opens no database and imports no review store (the pages import it at the top)
    code = ("import sys; import components.corrections; "
            "bad = [m for m in ('evaluators.review.store', 'sqlalchemy', 'evaluators.review.gt_patch') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    at = run_page(TESTSETS_PAGE, source="demo")
    assert at.toggle(key="ts_fix_on").value is False
    assert not [r for r in at.radio if r.key == "ts_fix_source"]   # nothing of the control but its toggle


def test_testsets_page_with_an_uploaded_patch():
    items = demo_path("testsets", "factual_demo.json")
    digest = file_sha256(items)
    patch = write_gt_patch([
        PatchEntry("q_002", digest, "add_answer", ("一只橘色的猫，叫阿橘",), ("他养了一只猫，叫阿橘。",), "ann", "ok"),
        PatchEntry("q_003", digest, "replace", ("灯塔的铜灯罩",), ("灯罩",), "lead", "gt_error")])
    at = with_patch(run_page(TESTSETS_PAGE, source="demo"), "ts_fix", "fix.jsonl", patch)
    assert applied_rows(at, "ts_fix")[0]["applied"] == 2
    (row,) = effect_rows(at, "ts_fix")
    # 5/8 before; q_002 passes by its accepted answer, q_003's keyword "灯罩" is found: 6.5/8 after
    assert row["metric"] == "keyword score" and row["n"] == 8 and row["changed"] == 2
    assert row["before"] == pytest.approx(5 / 8) and row["after"] == pytest.approx(6.5 / 8)
    assert row["delta"] == pytest.approx(1.5 / 8)
    # the paired test and the intervals are the run function's (the CLI's), not the page's own
    from evaluators.io.gt_patch import GTPatchSet
    from evaluators.reports.corrections import effect_rows as engine_rows
    from evaluators.testsets.run import TestSetsConfig, TestSetsInputs, run_testsets

    run = run_testsets(TestSetsInputs.from_paths(items, demo_path("testsets", "factual_demo_answers.json")),
                       TestSetsConfig(gt_patch=GTPatchSet.read([("fix.jsonl", patch.encode("utf-8"))])))
    (expected,) = engine_rows(run.corrections.effect)
    for key in ("p_paired_bootstrap", "before_ci_low", "before_ci_high", "after_ci_low", "after_ci_high",
                "delta_ci_low", "delta_ci_high"):
        assert row[key] == pytest.approx(expected[key]), key
    assert 0 < row["p_paired_bootstrap"] <= 1
    assert row["before_ci_low"] <= 5 / 8 <= row["before_ci_high"]
    # a patch made for another file is refused with the digests named
    other = write_gt_patch([PatchEntry("q_002", "0" * 64, "add_answer", ("x",), ("y",), "ann")])
    at.file_uploader(key="ts_fix_files").upload("other.jsonl", other.encode("utf-8")).run()
    assert not at.exception
    assert any("made for the GT file with sha256 000000000000" in e.value for e in at.error)


def test_memory_page_from_a_review_session(tmp_path, monkeypatch, deferred_downloads):
    monkeypatch.setenv("EVALBOARD_DATABASE_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    results = demo_path("memory", "demo_results.jsonl").read_bytes()
    store = ReviewStore(f"sqlite:///{tmp_path / 'review.sqlite'}")
    rows = [json.loads(line) for line in results.decode("utf-8").splitlines()]
    items = [{"kind": "memory", "id": r["question_id"], "question": r["question"], "ground_truth": r["ground_truth"],
              "prediction": r["prediction"]} for r in rows[:2]]
    session = store.create_session("memory demo", "memory", items, created_by="lead",
                                   uploads=[store.put_upload("demo_results.jsonl", results)])
    first, second = store.items(session.id)
    store.save_decision(first.id, "ann", label="acceptable_variant")   # "Maya has a border collie named Pixel."
    store.save_decision(second.id, "ann", label="model_error")
    store.engine.dispose()
    at = run_page(MEMORY_PAGE, source="demo")
    at.toggle(key="mem_fix_on").set_value(True).run()
    assert not at.exception, at.exception
    rows = {r["metric"]: r for r in effect_rows(at, "mem_fix")}
    # EM (normalized): 2 of 25 before; the accepted answer is the prediction itself: 3 of 25 after, McNemar on 1
    # discordant question: p = 1
    em = rows["EM (normalized)"]
    assert (em["before"], em["after"], em["n"]) == (pytest.approx(2 / 25), pytest.approx(3 / 25), 25)
    assert em["p_mcnemar"] == 1
    # F1 (char): that question 0.6 -> 1 (7 + 3 tokens, overlap 3): +0.4 / 25
    assert rows["F1 (char)"]["delta"] == pytest.approx(0.4 / 25)
    assert rows["judge"]["delta"] == 0   # the judge's scores stand (the GT was not replaced)
    html = deferred_downloads["report_with_corrections.html"]().decode("utf-8")
    assert "Review corrections: before and after" in html and "1 applied" in html


def test_dialogue_page_two_models_and_their_order():
    cases = demo_path("dialogue", "persona_cases.json")
    patch = write_gt_patch([PatchEntry("02. 下雨天#4#0", file_sha256(cases), "replace", ("快看，彩虹！有七种颜色呢。",),
                                       ("看，是彩虹！",), "lead", "gt_error")])
    at = with_patch(run_page(DIALOGUE_PAGE, source="demo"), "dialogue_fix", "fix.jsonl", patch)
    rows = {(r["run"], r["metric"]): r for r in effect_rows(at, "dialogue_fix")}
    large = rows[("panda-chat-large", "combined")]
    # the large model's reply "看，是彩虹！" is the corrected reference: its case goes from its score before
    # (0.196) to 1 (identical texts: every metric 1), one of 12 cases
    from evaluators.dialogue import DialogueInputs, load_cases, load_predictions, run_dialogue

    name = "panda-chat-large.jsonl"
    before = run_dialogue(DialogueInputs.of(load_cases(cases.read_bytes(), cases.name), [
        load_predictions(demo_path("dialogue", name).read_bytes(), name)]))
    case = next(r for r in before.results if (r.scene, r.dialogue_index) == ("02. 下雨天", "4"))
    assert case.prediction == "看，是彩虹！" and case.combined_score == pytest.approx(0.196, abs=1e-3)
    assert large["n"] == 12 and large["delta"] == pytest.approx((1 - case.combined_score) / 12)
    assert ("panda-chat-small", "combined") in rows
    assert any("order of the systems is unchanged" in c.value for c in at.caption)


@pytest.mark.realdata
def test_qa_page_hotpotqa_before_after_and_html(tmp_path, deferred_downloads):
    from evaluators.qa import QAConfig, evaluate_qa_file
    from evaluators.qa.patch import gold_answers
    from evaluators.review.gt_patch import build_gt_patch
    from evaluators.review.items import qa_items
    from tests.real.test_review_numbers_real import FILE, rule

    path = require_shared(*FILE)
    report = evaluate_qa_file(path, QAConfig(ci_resamples=0))
    store = ReviewStore(tmp_path / "review.sqlite")
    session = store.create_session("hotpot", "qa", qa_items(report), created_by="test")
    for item in store.items(session.id):
        store.save_decision(item.id, "rule", label=rule(item.payload))
    patch = write_gt_patch(build_gt_patch(store, session.id, file_sha256(path), gold_answers(report.records)).entries)
    store.engine.dispose()
    at = run_page(QA_PAGE, source="upload")
    at.file_uploader(key="qa_upload").upload(path.name, path.read_bytes()).run()
    assert not at.exception, at.exception
    with_patch(at, "qa_fix", "hotpot.patch.jsonl", patch)
    rows = {(r["run"], r["metric"]): r for r in effect_rows(at, "qa_fix")}
    # EM of 50 questions: FullPipeline 33 -> 37, RelaxedInitial 27 -> 29, SearchFallback 22 -> 23
    for system, (b, a) in {"Decomp_FullPipeline": (33, 37), "Decomp_RelaxedInitial": (27, 29),
                           "Decomp_SearchFallback": (22, 23)}.items():
        em = rows[(system, "EM")]
        assert (em["before"], em["after"], em["n"]) == (pytest.approx(b / 50), pytest.approx(a / 50), 50)
        # McNemar: the a - b records right only after, none right only before: p = 2 * 0.5 ** (a - b)
        assert em["p_mcnemar"] == pytest.approx(min(1.0, 2 * 0.5 ** (a - b)))
        assert em["delta_ci_low"] <= em["delta"] <= em["delta_ci_high"]
    assert any("order of the systems is unchanged" in c.value for c in at.caption)
    html = deferred_downloads["report_with_corrections.html"]().decode("utf-8")
    assert "Review corrections: before and after" in html and "4 applied" in html
    assert "Decomp_FullPipeline" in html and "p (McNemar)" in html


def test_qa_page_flags_a_rank_flip():
    from tests.unit.test_qa_patch import DATA, ENTRIES

    at = run_page(QA_PAGE, source="upload")
    at.file_uploader(key="qa_upload").upload("runs.jsonl", DATA).run()
    assert not at.exception, at.exception
    with_patch(at, "qa_fix", "fix.jsonl", write_gt_patch(ENTRIES[:3]))
    rows = {(r["run"], r["metric"]): r for r in effect_rows(at, "qa_fix")}
    # A 3/4 stays 3/4; B 1/4 -> 4/4 (its three variants accepted): B is ahead after, a flip on EM and on F1
    assert (rows[("B", "EM")]["before"], rows[("B", "EM")]["after"]) == (0.25, 1.0)
    flips = [shown(w.value) for w in at.warning if "Rank flip" in w.value]
    assert [f.split(":")[0] for f in flips] == ["Rank flip (EM)", "Rank flip (F1)"]
    assert flips[0] == ("Rank flip (EM): A was ahead of B (75.00% vs 25.00%); after the corrections B is ahead "
                        "(100.00% vs 75.00%)")


def test_patch_file_problems_are_shown_as_every_input_problem():
    """An unreadable patch file: its located problem in a red box; a bad line among good ones: the line skipped,
    listed with the other input problems (components/problems.py), a warning since the rest is applied."""
    at = with_patch(run_page(TESTSETS_PAGE, source="demo"), "ts_fix", "empty.jsonl", "")
    (error,) = [shown(e.value) for e in at.error]
    assert error.startswith("error: empty.jsonl: empty GT patch"), error
    digest = file_sha256(demo_path("testsets", "factual_demo.json"))
    good = write_gt_patch([PatchEntry("q_002", digest, "add_answer", ("阿橘",), ("叫阿橘。",), "ann", "ok")])
    at.file_uploader(key="ts_fix_files").upload("fix.jsonl", (good + "{oops\n").encode("utf-8")).run()
    assert not at.exception and not at.error
    assert [e.label for e in at.expander if e.label.startswith("Lines skipped")] == [
        "Lines skipped in the patch files: 0 errors, 1 warning — the rest of the data is still scored"]
    (row,) = problem_table(at)
    assert good.count("\n") == 1  # one correction on line 1; "{oops" on line 2, invalid from its column 2
    assert (row["severity"], row["count"], row["where"]) == ("warning", "1", "fix.jsonl:2:2")
    assert applied_rows(at, "ts_fix")[0]["applied"] == 1
