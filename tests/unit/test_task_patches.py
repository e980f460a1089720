"""What a GT correction means per task (memory, test sets, persona dialogue), the generic before / after
(evaluators.metrics.before_after) and a session's patch for a page (review.gt_patch.session_patch)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from evaluators.io.gt_patch import GTPatchMismatch, GTPatchSet, PatchEntry, apply_gt_patch, file_sha256, record_key
from evaluators.metrics.before_after import score_effect

D = "a" * 64


def entry(rid, op, old, new, who="ann"):
    return PatchEntry(rid, D, op, tuple(old), tuple(new), who)


def test_corrected_and_accepted_follow_the_order_of_the_entries():
    gold = {"q1": ("Paris",), "q2": ("北京",)}
    app = apply_gt_patch(gold, [entry("q1", "add_answer", ["Paris"], ["Paris, France"]),
                                entry("q1", "replace", ["Paris", "Paris, France"], ["Lyon"]),
                                entry("q1", "add_answer", ["Lyon"], ["Lyon, France"]),
                                entry("q2", "add_answer", ["北京"], ["北京市"])], D)
    # the replace drops the answer accepted before it, as it replaces the record's answers
    assert app.corrected_and_accepted("q1") == (("Lyon",), ("Lyon, France",))
    assert app.corrected_and_accepted("q2") == (None, ("北京市",))
    assert app.corrected_and_accepted("q3") == (None, ())


def test_one_reference_is_the_corrected_answer_and_the_others_without_it():
    gold = {"q1": ("Paris",), "q2": ("北京",), "q4": ("1843",)}
    app = apply_gt_patch(gold, [entry("q1", "replace", ["Paris"], ["Lyon", "Lyon, France", "Lyon"]),
                                entry("q1", "add_answer", ["Lyon", "Lyon, France", "Lyon"], ["里昂"]),
                                entry("q2", "add_answer", ["北京"], ["北京市"]),
                                entry("q4", "add_answer", ["1843"], ["1843"])], D)
    # q1: the replacement's first answer is the reference; its other answers (the repeated "Lyon" is the
    # reference, so left out) and the added "里昂" are further references
    assert app.one_reference("q1", "Paris") == ("Lyon", ("Lyon, France", "里昂"))
    assert app.one_reference("q2", "北京") == (None, ("北京市",))  # nothing replaced: the reference stands
    assert app.one_reference("q4", "1843") == (None, ())  # an added answer equal to the reference adds nothing
    assert app.one_reference("q3", "x") == (None, ())


def test_corrected_and_accepted_equal_a_scan_of_each_records_changes():
    """Read from one pass over the changes: the same as scanning every change for one record (random
    patches with replaces, additions, conflicts and unknown ids)."""
    import random

    def scan(app, rid):
        # the definition: the last applied replace, and the accepted answers it kept (a replace made for the
        # GT file's answers keeps the variants accepted before it; one whose 'old' held them replaces them)
        # with those added after it (the replacements here never equal an accepted answer)
        corrected, accepted = None, []
        for c in app.changes:
            if c.record_id == rid and c.status == "applied":
                if c.op == "replace":
                    accepted = [a for a in accepted if a in c.after]
                    corrected = tuple(a for a in c.after if a not in accepted)
                else:
                    accepted = accepted + [c.after[-1]]
        return corrected, tuple(accepted)

    rng = random.Random(7)
    for _ in range(50):
        gold = {f"q{i}": (f"a{i}",) for i in range(6)}
        current = {k: list(v) for k, v in gold.items()}
        entries = []
        for n in range(rng.randint(0, 25)):
            rid = f"q{rng.randint(0, 7)}"  # q6, q7: unknown ids
            old = current.get(rid, ["?"]) if rng.random() < 0.8 else ["stale"]  # a stale 'old': a conflict
            if rng.random() < 0.4:
                entries.append(entry(rid, "replace", old, [f"r{n}", "路"][: rng.randint(1, 2)]))
            else:
                entries.append(entry(rid, "add_answer", old, [f"v{n}"]))
            if rid in current and old != ["stale"]:
                current[rid] = list(entries[-1].new) if entries[-1].op == "replace" else [*old, f"v{n}"]
        app = apply_gt_patch(gold, entries, D)
        for rid in [*gold, "q6", "q7"]:
            assert app.corrected_and_accepted(rid) == scan(app, rid)


def test_score_effect_metric_by_metric_with_missing_values_and_a_flip():
    # run A: metric m on 4 records, the 4th unscored after; run B on 4
    before = {"A": {"m": [1, 0, 1, 1], "s": [0.5, 0.5, None, 0.5]}, "B": {"m": [0, 0, 1, 0], "s": [0, 0, 0, 0]}}
    after = {"A": {"m": [1, 0, 1, None], "s": [0.5, 0.5, 0.5, 0.5]}, "B": {"m": [1, 1, 1, 1], "s": [0, 0, 0, 0]}}
    effect = score_effect(before, after, ["m", "s"], binary=["m"], n_resamples=200)
    a, b = effect.changes
    # A: m paired on 3 records (1, 0, 1 -> same): 2/3 both; s paired on 3 (the None before left out)
    assert (a.n_paired, a.metric("m").n_paired, a.metric("s").n_paired) == (3, 3, 3)
    assert a.metric("m").before.estimate == pytest.approx(2 / 3) and a.metric("m").change.delta == 0
    assert a.n_changed == 2          # record 3 (s: None -> 0.5) and record 4 (m: 1 -> None)
    # B: m 1/4 -> 4/4, McNemar on 3 discordant records: p = 2 * 0.5 ** 3 = 0.25
    assert b.metric("m").mcnemar.p_value == pytest.approx(0.25) and b.metric("s").mcnemar is None
    # m: A 2/3 > B 1/4 before, A 2/3 < B 1 after: a flip; s: A 0.5 > B 0 both times
    assert [(f.metric, f.higher_before, f.higher_after) for f in effect.rank_flips] == [("m", "A", "B")]
    with pytest.raises(ValueError, match="no record scored"):
        score_effect({"A": {"m": [None]}}, {"A": {"m": [1]}}, ["m"], n_resamples=10)



def test_before_after_p_values_shown_as_bounds_not_rounded_to_zero():
    from evaluators.reports.corrections import add_html_section, effect_rows, p_texts
    from evaluators.reports.html import HtmlReport

    # 20 records wrong before, right after: every paired resample's change is +1, none reaches 0, so the
    # paired bootstrap gives the bound p < 1 / (999 + 1) = 0.001; McNemar on 20 discordant pairs, all one
    # way: p = 2 * 0.5 ** 20 = 1.907e-06
    effect = score_effect({"A": {"m": [0] * 20}}, {"A": {"m": [1] * 20}}, ["m"], binary=["m"], n_resamples=999)
    (row,) = effect_rows(effect)
    assert row["p_paired_bootstrap"] == pytest.approx(1 / 1000) and row["p_paired_bootstrap_is_bound"]
    assert p_texts(row) == ("p < 0.001", "p = 1.91e-06")
    page = HtmlReport("corrections")
    add_html_section(page, effect)
    html = page.render()
    # the old cells were floats to 3 places: "0.001" for a bound and "0.000" for McNemar's p
    assert "<td>p &lt; 0.001</td>" in html and "<td>p = 1.91e-06</td>" in html


# ------------------------------------------------------------------ test sets


def _testset(tmp_path, items, answers):
    from evaluators.testsets import TestSetsInputs

    data = json.dumps({"version": "1", "items": items}, ensure_ascii=False).encode("utf-8")
    return TestSetsInputs(data, "set.json", json.dumps(answers, ensure_ascii=False).encode("utf-8"), "a.json")


ITEMS = [{"id": "t1", "category": "character", "difficulty": "easy", "question": "谁?", "expected_answer": "林远",
          "source": {"file": "s.txt"}, "keywords": ["林远", "守护人"]},
         {"id": "t2", "category": "item", "difficulty": "easy", "question": "What?", "expected_answer": "a compass",
          "source": {"file": "s.txt"}, "keywords": []},
         {"id": "t3", "category": "item", "difficulty": "hard", "question": "Who?", "expected_answer": "Owen",
          "source": {"file": "s.txt"}, "keywords": ["Owen"]}]


def test_testsets_accepted_and_corrected_answers(tmp_path):
    from evaluators.testsets import TestSetsConfig, run_testsets

    inputs = _testset(tmp_path, ITEMS, {"t1": "是林远。", "t2": "An old COMPASS.", "t3": "It was Ｏｗｅｎ's friend Mia."})
    digest = file_sha256(inputs.items)
    plain = run_testsets(inputs).scores
    # before: t1 1 of 2 keywords, t2 no keywords (not scored), t3 "owen" found (NFKC folds the full width): 1
    assert [r.score for r in plain.items] == [0.5, None, 1.0]
    patches = GTPatchSet((PatchEntry("t1", digest, "add_answer", ("林远",), ("是林远",), "ann"),
                          PatchEntry("t2", digest, "add_answer", ("a compass",), ("an old compass",), "ann"),
                          PatchEntry("t3", digest, "replace", ("Owen",), ("Mia",), "lead"),
                          PatchEntry("t9", digest, "add_answer", ("x",), ("y",), "ann")))
    run = run_testsets(inputs, TestSetsConfig(gt_patch=patches))
    t1, t2, t3 = run.scores.items
    # t1: "是林远。" contains the accepted "是林远": passes, both keywords counted found
    assert (t1.score, t1.found, t1.missing) == (1.0, ("林远", "守护人"), ())
    # t2: no keywords, but its answer contains the accepted answer (casefold): scored 1 now
    assert (t2.status, t2.score) == ("scored", 1.0)
    # t3: the corrected answer "Mia" is the item's keyword now: found
    assert (t3.expected_answer, t3.keywords, t3.score) == ("Mia", ("Mia",), 1.0)
    assert run.scores.overall.mean_score == 1.0 and run.before.overall.mean_score == pytest.approx(0.75)
    (app_name, app), = run.corrections.applications
    assert app_name == "set.json" and [c.status for c in app.changes] == ["applied"] * 3 + ["unknown_record"]
    change = run.corrections.effect.changes[0]
    # paired on t1 and t3 (t2 has no score before): 0.5, 1 -> 1, 1
    assert change.metric("keyword_score").n_paired == 2 and change.metric("keyword_score").change.delta == 0.25
    assert "gt_patch" in run.to_dict() and "gt_patch" not in run_testsets(inputs).to_dict()
    with pytest.raises(GTPatchMismatch):
        run_testsets(inputs, TestSetsConfig(gt_patch=GTPatchSet((entry("t1", "add_answer", ["林远"], ["x"]),))))


def test_testsets_patch_on_a_multi_turn_set_is_refused():
    from evaluators.demo import demo_path
    from evaluators.testsets import TestSetsConfig, TestSetsInputs, run_testsets

    inputs = TestSetsInputs.from_paths(demo_path("testsets", "multi_turn_demo.json"),
                                       demo_path("testsets", "multi_turn_demo_answers.jsonl"))
    patch = GTPatchSet((PatchEntry("d1", file_sha256(inputs.items), "add_answer", (), ("x",), "ann"),))
    with pytest.raises(ValueError, match="single-turn"):
        run_testsets(inputs, TestSetsConfig(gt_patch=patch))


# ------------------------------------------------------------------ long memory


def _memory_inputs(rows, labels=None):
    from evaluators.memory.inputs import resolve_inputs

    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    lab = ("labels.jsonl", "".join(json.dumps(x) + "\n" for x in labels).encode()) if labels else None
    return resolve_inputs(results=("r.jsonl", data), labels=lab), data


ROWS = [{"question_id": "m1", "question_type": "single_hop", "question": "Dog?", "ground_truth": "a collie",
         "prediction": "a border collie"},
        {"question_id": "m2", "question_type": "temporal", "question": "When?", "ground_truth": "2023年3月",
         "prediction": "2023年4月"}]


def test_memory_references_and_stored_labels():
    from evaluators.memory.run import MemoryConfig, run_memory

    inputs, data = _memory_inputs(ROWS, [{"question_id": "m1", "label": 1}, {"question_id": "m2", "label": 0}])
    assert (inputs.gt_file, inputs.gt_digest) == ("r.jsonl", file_sha256(data))
    digest = inputs.gt_digest
    patches = GTPatchSet((PatchEntry("m1", digest, "add_answer", ("a collie",), ("a border collie",), "ann"),
                          PatchEntry("m2", digest, "replace", ("2023年3月",), ("2023年4月",), "lead")))
    config = MemoryConfig(metrics=("judge_score", "exact_match_normalized", "token_f1_char"), ci_resamples=100)
    report = run_memory(inputs, dataclasses.replace(config, gt_patch=patches))
    rows = {r.question_id: r.scores for r in report.rows}
    before = {r.question_id: r.scores for r in report.before.rows}
    # m1: the accepted answer is the prediction: EM and F1 are the best over the references -> 1;
    # before: [a border collie] vs [a collie]: F1 = 2 * 2 / (3 + 2) = 0.8
    assert before["m1"]["token_f1_char"] == pytest.approx(0.8) and rows["m1"]["token_f1_char"] == 1
    assert rows["m1"]["exact_match_normalized"] == 1 and rows["m1"]["judge_score"] == 1   # the label stands
    # m2: the GT is replaced: the stored label (judged against the old GT) is not used any more
    assert before["m2"]["judge_score"] == 0 and rows["m2"]["judge_score"] is None
    assert rows["m2"]["exact_match_normalized"] == 1
    assert report.metrics["overall"]["exact_match_normalized"] == 1.0
    judge = report.corrections.effect.changes[0].metric("judge_score")
    assert judge.n_paired == 1            # m2 has no judge score after
    assert json.loads(json.dumps(report.to_dict()))["gt_patch"]["files"] == []
    # a patch made for another file (digest "aaa..."): refused
    with pytest.raises(GTPatchMismatch):
        run_memory(inputs, dataclasses.replace(config, gt_patch=GTPatchSet(
            (entry("m1", "add_answer", ["a collie"], ["x"]),))))


# ------------------------------------------------------------------ persona dialogue


def test_dialogue_best_reference_keeps_one_reference_metrics_together():
    from evaluators.dialogue import DialogueInputs, load_cases, load_predictions, run_dialogue
    from evaluators.dialogue.scoring import DialogueConfig

    cases = json.dumps([{"scene": "s", "dialogue_index": 1, "context": "hi", "expected_response": "你好呀！"},
                        {"scene": "s", "dialogue_index": 2, "context": "bye", "expected_response": "再见"}],
                       ensure_ascii=False).encode("utf-8")
    preds = "\n".join(json.dumps({"model": m, "scene": "s", "dialogue_index": i, "prediction": p}, ensure_ascii=False)
                      for m, i, p in [("A", 1, "你好！"), ("A", 2, "再见"), ("B", 1, "嗨"), ("B", 2, "拜拜")])
    case_set = load_cases(cases, "cases.json")
    pred = load_predictions(preds.encode("utf-8"), "p.jsonl")
    config = DialogueConfig(metrics=("exact_match_normalized",), weights={"exact_match_normalized": 1.0})
    patch = GTPatchSet((PatchEntry("s#1#0", case_set.digest, "add_answer", ("你好呀！",), ("嗨",), "ann"),
                        PatchEntry("s#2#0", case_set.digest, "add_answer", ("再见",), ("拜拜",), "ann")))
    report = run_dialogue(DialogueInputs.of(case_set, [pred], patch), config)
    by = {(r.model, r.dialogue_index): r for r in report.results}
    # B's replies are the accepted references: exact 1 on both cases; A's "你好！" is still not exact
    assert by[("B", "1")].combined_score == 1 and by[("B", "1")].expected_response == "嗨"
    assert by[("A", "1")].combined_score == 0 and by[("A", "1")].expected_response == "你好呀！"
    assert by[("A", "2")].combined_score == 1 and by[("A", "2")].expected_response == "再见"
    # before: A 1/2, B 0/2; after: A 1/2, B 2/2: B goes ahead (a rank flip on the combined score)
    flips = report.corrections.effect.rank_flips
    assert [(f.metric, f.higher_before, f.higher_after, f.after) for f in flips][0] == (
        "combined_score", "A", "B", (0.5, 1.0))
    assert [s.combined_score for s in report.before.by_model] == [0.5, 0.0]


# ------------------------------------------------------------------ a session's patch for a page


def test_session_patch_is_for_the_file_the_session_kept(tmp_path):
    from evaluators.review.gt_patch import session_patch
    from evaluators.review.store import ReviewStore

    store = ReviewStore(tmp_path / "r.sqlite")
    rows = [{"question_id": "m1", "question_type": "single_hop", "question": "Dog?", "ground_truth": "a collie",
             "prediction": "a border collie"}]
    data = (json.dumps(rows[0]) + "\n").encode()
    item = {"kind": "memory", "id": "m1", "ground_truth": "a collie", "prediction": "a border collie"}
    kept = store.create_session("kept", "memory", [item], created_by="lead",
                                uploads=[store.put_upload("r.jsonl", data)])
    loose = store.create_session("loose", "memory", [item], created_by="lead")
    for s in (kept, loose):
        store.save_decision(store.items(s.id)[0].id, "ann", label="acceptable_variant")
    made = session_patch(store, kept.id, "r.jsonl", data)
    key = record_key("m1", ["a collie"])
    assert made.note == "" and [e.gt_key for e in made.patch.entries] == [key]
    # another file: the entries are keyed by record and GT (issue 29), so they correct its records with that id
    # and GT, and the note says the session was made from another file
    other = session_patch(store, kept.id, "other.jsonl", data + b"\n")
    assert "was made from r.jsonl, not from other.jsonl" in other.note
    assert [e.gt_key for e in other.patch.entries] == [key]
    # a session that kept no file: applied by id to the file given, and said so
    made = session_patch(store, loose.id, "r.jsonl", data)
    assert "does not record its GT file" in made.note and made.patch.entries[0].old == ("a collie",)
