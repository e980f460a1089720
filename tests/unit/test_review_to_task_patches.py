"""Review -> GT patch -> CLI, end to end, for the memory, test-set and persona-dialogue tasks (issue 19).

Each test makes a review session from the task's records as its page's "Review these ..." button
does (the items of :mod:`evaluators.review.items`, the GT file kept with the session), lets two
annotators decide every item by a written rule and the owner adjudicate their disagreements with
the service functions, writes the patch with ``review patch``, runs the task's CLI with
``--gt-patch`` and checks the patched numbers against a hand computation; on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import shutil

import pytest

from evaluators.cli import main
from evaluators.demo import demo_path
from evaluators.io.gt_patch import read_gt_patch_file
from evaluators.review import service as rs
from evaluators.review.store import ReviewStore


def review(url, kind, gt_path, items, rule, corrections):
    """A k = 2 session of ``items`` kept with ``gt_path``; "ann" and "bob" label every item by
    ``rule(item, annotator)`` (``None``: no decision); "lead" (the owner) adjudicates the items whose
    id is in ``corrections`` as GT errors with that corrected answer.  Returns the session's name."""
    store = ReviewStore(url)
    name = f"{kind} review"
    data = gt_path.read_bytes()
    session = store.create_session(name, kind, items, created_by="lead", k=2,
                                   uploads=[store.put_upload(gt_path.name, data)])
    for item in store.items(session.id):
        for who in ("ann", "bob"):
            label = rule(item.payload, who)
            if label:
                rs.decide(store, session, who, item.id, label)
        rid = item.payload["id"]
        if rid in corrections and item.payload.get("system", "") in ("", corrections[rid][0]):
            rs.adjudicate(store, session, "lead", item.id, "gt_error", "the reference is wrong",
                          corrected_answer=corrections[rid][1])
    store.engine.dispose()
    return name


def write_patch(url, name, gt_path, out):
    assert main(["review", "patch", "--db", url, "--session", name, "--gt", str(gt_path), "--out", str(out)]) == 0
    return read_gt_patch_file(out).entries


# ------------------------------------------------------------------ test sets


def test_testsets_review_patch_cli(review_url, tmp_path, capsys):
    from evaluators.review.items import testset_items
    from evaluators.testsets import TestSetsInputs, run_testsets

    items_path = tmp_path / "factual_demo.json"
    shutil.copy(demo_path("testsets", "factual_demo.json"), items_path)
    answers = demo_path("testsets", "factual_demo_answers.json")
    report = run_testsets(TestSetsInputs.from_paths(items_path, answers)).scores

    def rule(item, who):
        # the cat's name is enough for q_002 (its colour is asked but not needed): an acceptable variant;
        # q_003's expected "铜灯罩" (copper lamp cover): ann calls it a GT error, bob a model error
        if item["score"] is None or item["score"] == 1:
            return None
        if "橘色" in item["keywords_missing"]:
            return "acceptable_variant"
        if item["id"] == "q_003":
            return "gt_error" if who == "ann" else "model_error"
        return "model_error"

    name = review(review_url, "testsets", items_path, testset_items(report), rule, {"q_003": ("", "灯罩")})
    entries = write_patch(review_url, name, items_path, tmp_path / "p.jsonl")
    assert [(e.record_id, e.op, e.old, e.new) for e in entries] == [
        ("q_002", "add_answer", ("一只橘色的猫，叫阿橘",), ("他养了一只猫，叫阿橘。",)),
        ("q_003", "replace", ("灯塔的铜灯罩",), ("灯罩",))]
    capsys.readouterr()
    out = tmp_path / "r.json"
    assert main(["testsets", "--items", str(items_path), "--pred", str(answers), "--gt-patch",
                 str(tmp_path / "p.jsonl"), "--output-file", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text(encoding="utf-8"))
    # before: q_001..q_008 scored 1, 1/2, 0, 1/2, 1, 1, 1, 0 (q_008 unanswered), q_009 has no keywords: 5/8
    # after: q_002 passes (its answer contains the accepted answer) -> 1; q_003's keyword is now "灯罩",
    # found in "暴风雨打坏了灯塔的灯罩。" -> 1: (5 + 1/2 + 1) / 8 = 6.5 / 8
    assert data["overall"]["mean_score"] == pytest.approx(6.5 / 8)
    # keywords (micro): 11 of 17 before; q_002's missing "橘色" counted found, q_003's 1 keyword found: 13 / 17
    assert (data["overall"]["keywords_found"], data["overall"]["keywords_total"]) == (13, 17)
    change = data["gt_patch"]["effect"]["changes"][0]["metrics"][0]
    assert change["metric"] == "keyword_score" and change["n_paired"] == 8
    assert change["before"]["estimate"] == pytest.approx(5 / 8) and change["change"]["delta"] == pytest.approx(1.5 / 8)
    assert "2 applied" in printed and "keyword score before" in printed and "62.50% [" in printed
    assert "81.25% [" in printed
    # the same patch twice: the same numbers, nothing applied twice
    assert main(["testsets", "--items", str(items_path), "--pred", str(answers), "--gt-patch",
                 str(tmp_path / "p.jsonl"), "--gt-patch", str(tmp_path / "p.jsonl"), "--output-file", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["overall"]["mean_score"] == pytest.approx(6.5 / 8)
    assert "2 already in place" in capsys.readouterr().out
    # another file of the same test set (its version field changed): the corrections belong to the items and
    # their GT, not to the file's bytes (issue 29): the same numbers
    other = tmp_path / "other.json"
    other.write_bytes(items_path.read_bytes().replace(b"1.0", b"1.1", 1))
    assert main(["testsets", "--items", str(other), "--pred", str(answers), "--gt-patch",
                 str(tmp_path / "p.jsonl"), "--output-file", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["overall"]["mean_score"] == pytest.approx(6.5 / 8)
    capsys.readouterr()
    # a test set whose two corrected items have another expected answer: no correction is for it, refused
    changed = tmp_path / "changed.json"
    changed.write_bytes(items_path.read_bytes().replace("一只橘色的猫，叫阿橘".encode(), "橘猫".encode())
                        .replace("灯塔的铜灯罩".encode(), "铜灯罩".encode()))
    assert main(["testsets", "--items", str(changed), "--pred", str(answers), "--gt-patch",
                 str(tmp_path / "p.jsonl")]) == 2
    assert "none of the 2 correction(s) is for a record of the GT given" in capsys.readouterr().err
    # and review patch refuses the other file for this session (it kept factual_demo.json)
    assert main(["review", "patch", "--db", review_url, "--session", name, "--gt", str(other)]) == 2
    assert "was made from factual_demo.json" in capsys.readouterr().err


# ------------------------------------------------------------------ long memory


def test_memory_review_patch_cli(review_url, tmp_path, capsys):
    from evaluators.memory.inputs import resolve_inputs
    from evaluators.memory.run import MemoryConfig, run_memory
    from evaluators.review.items import memory_items

    results = tmp_path / "demo_results.jsonl"
    shutil.copy(demo_path("memory", "demo_results.jsonl"), results)
    run = run_memory(resolve_inputs(results=(str(results), results.read_bytes())), MemoryConfig(ci_resamples=0))
    before = {r.question_id: r.scores for r in run.rows}

    def rule(item, who):
        # a wrong-by-EM answer that contains the reference (case-insensitive) is an acceptable variant;
        # demo-en-1_q1 (Leo's instrument): ann says the reference is wrong, bob the model
        if item["scores"].get("exact_match_normalized") == 1:
            return None
        if item["ground_truth"].lower() in item["prediction"].lower():
            return "acceptable_variant"
        if item["id"] == "demo-en-1_q1":
            return "gt_error" if who == "ann" else "model_error"
        return "model_error"

    name = review(review_url, "memory", results, memory_items(run.results, run.rows), rule,
                  {"demo-en-1_q1": ("", "the violin")})
    entries = write_patch(review_url, name, results, tmp_path / "p.jsonl")
    # 4 answers contain their reference: "a border collie", "March 2023", "朵朵", "荔枝"
    assert [(e.record_id, e.op) for e in entries] == [
        ("demo-en-1_q0", "add_answer"), ("demo-en-1_q1", "replace"), ("demo-en-1_q7", "add_answer"),
        ("demo-zh-1_q0", "add_answer"), ("demo-zh-1_q2", "add_answer")]
    capsys.readouterr()
    out = tmp_path / "m.json"
    assert main(["memory", "--results", str(results), "--gt-patch", str(tmp_path / "p.jsonl"),
                 "--ci-resamples", "200", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    overall = json.loads(out.read_text(encoding="utf-8"))["metrics"]["overall"]
    # EM: 2 of 25 before (en q12, zh q5); each accepted answer is its own reference: +4 -> 6 / 25;
    # "Leo is learning the violin." is still not "the violin" exactly
    assert before["demo-en-1_q1"]["exact_match_normalized"] == 0
    assert overall["exact_match_normalized"] == pytest.approx(6 / 25)
    # token F1 (SQuAD formula, words; CJK by character) = 2 * overlap / (|pred| + |ref|):
    #   en q0 7 + 3 tokens, overlap 3: 0.6 -> 1;  en q7 6 + 2, overlap 2: 0.5 -> 1
    #   zh q0 "她叫朵朵" 4 + 2, overlap 2: 2/3 -> 1;  zh q2 "荔枝和芒果" 5 + 2, overlap 2: 4/7 -> 1
    #   en q1 [leo is learning the violin] vs [the cello]: 2*1/7 -> vs [the violin]: 2*2/7
    expected = {"demo-en-1_q0": (0.6, 1), "demo-en-1_q7": (0.5, 1), "demo-zh-1_q0": (2 / 3, 1),
                "demo-zh-1_q2": (4 / 7, 1), "demo-en-1_q1": (2 / 7, 4 / 7)}
    for qid, (b, _) in expected.items():
        assert before[qid]["token_f1_char"] == pytest.approx(b)
    f1_before = sum(s["token_f1_char"] for s in before.values()) / 25
    gain = sum(a - b for b, a in expected.values())          # 0.4 + 0.5 + 1/3 + 3/7 + 2/7
    assert overall["token_f1_char"] == pytest.approx(f1_before + gain / 25)
    assert "5 applied" in printed and "EM (normalized) before" in printed and "8.00% [" in printed
    assert "24.00% [" in printed
    # the HTML report carries the before / after section
    html = tmp_path / "m.html"
    assert main(["memory", "--results", str(results), "--gt-patch", str(tmp_path / "p.jsonl"), "--ci-resamples", "200",
                 "--format", "html", "--out", str(html)]) == 0
    text = html.read_text(encoding="utf-8")
    assert "Review corrections: before and after" in text and "5 applied" in text and "EM (normalized)" in text


# ------------------------------------------------------------------ persona dialogue


def test_dialogue_review_patch_cli(review_url, tmp_path, capsys):
    from evaluators.dialogue.inputs import load_cases, load_predictions
    from evaluators.dialogue.run import DialogueInputs, run_dialogue
    from evaluators.dialogue.scoring import DialogueConfig, build_scorer, case_key, combine
    from evaluators.review.items import dialogue_items
    from evaluators.text.tokenize import TextView

    cases = tmp_path / "persona_cases.json"
    shutil.copy(demo_path("dialogue", "persona_cases.json"), cases)
    preds = [demo_path("dialogue", f) for f in ("panda-chat-large.jsonl", "panda-chat-small_report.json")]
    case_set = load_cases(cases.read_bytes(), cases.name)
    report = run_dialogue(DialogueInputs.of(case_set, [load_predictions(p.read_bytes(), p.name) for p in preds]))
    before = {(r.model, case_key(r)): r for r in report.results}

    def rule(item, who):
        # the large model's paraphrases (combined score 0.3 to 0.5) are acceptable variants; on the rainbow
        # case (02#4) ann finds the reference wrong, bob the model
        if item["id"] == "02. 下雨天#4#0" and item["system"] == "panda-chat-large":
            return "gt_error" if who == "ann" else "model_error"
        if item["system"] == "panda-chat-large" and 0.3 <= item["combined"] < 0.5:
            return "acceptable_variant"
        return "model_error"

    name = review(review_url, "dialogue", cases, dialogue_items(report), rule,
                  {"02. 下雨天#4#0": ("panda-chat-large", "看，是彩虹！")})
    entries = write_patch(review_url, name, cases, tmp_path / "p.jsonl")
    accepted = {e.record_id: e.new[0] for e in entries if e.op == "add_answer"}
    # 0.375 (01#1), 0.359 (01#3), 0.348 (01#4), 0.307 (01#5), 0.354 (02#1), 0.433 (03#1), 0.369 (03#3)
    assert len(accepted) == 7 and [e.op for e in entries].count("replace") == 1
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(["dialogue", "--cases", str(cases), "--pred", str(preds[0]), "--pred", str(preds[1]),
                 "--gt-patch", str(tmp_path / "p.jsonl"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(next(out.glob("*_report.json")).read_text(encoding="utf-8"))
    means = {s["model"]: s["combined_score"] for s in data["by_model"]}
    # the large model: its accepted reply is now a reference of the case (identical text: every metric 1,
    # combined 1), and the corrected rainbow reply is its own reply: 8 cases at 1, the other 4 as before
    changed = set(accepted) | {"02. 下雨天#4#0"}
    large = [before[("panda-chat-large", k)].combined_score for k in map(case_key, report.results[:12])]
    kept = sum(v for k, v in zip(map(case_key, report.results[:12]), large) if k not in changed)
    assert means["panda-chat-large"] == pytest.approx((kept + 8) / 12)
    # the small model on those cases: the best over the references (accepted) or the corrected reference
    scorer, _, weights = build_scorer(DialogueConfig())
    total = 0.0
    for key in map(case_key, report.results[:12]):
        r = before[("panda-chat-small", key)]
        if key == "02. 下雨天#4#0":
            total += combine(scorer.score_views(TextView(r.prediction), TextView("看，是彩虹！")), weights)
        elif key in accepted and r.prediction.strip():
            total += max(r.combined_score,
                         combine(scorer.score_views(TextView(r.prediction), TextView(accepted[key])), weights))
        else:
            total += r.combined_score
    assert means["panda-chat-small"] == pytest.approx(total / 12)
    assert data["gt_patch"]["effect"]["metrics"] == ["combined_score", "exact_match_normalized"]
    assert "8 applied" in printed and "combined before" in printed
    assert "order of the systems: unchanged by the corrections" in printed
