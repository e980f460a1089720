"""Issue 29: reviews that follow the data to the next run (SQLite, and PostgreSQL with a server).

- a GT correction and an accepted variant of one question both take effect (on the code before, the
  correction was skipped as a "conflict" and the corrected answer scored 0);
- ``review create --new-only`` (*review what's new*) on run 2 holds exactly the records whose prediction
  changed; the others are carried with run 1's verdicts; run 1's patch applies to run 2; ``review debt``
  counts what is left per system;
- ``review create`` options: k, blind, order (most informative first), guidelines.
"""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.io.gt_patch import file_sha256, read_gt_patch_file
from evaluators.qa import QAConfig, evaluate_qa_file
from evaluators.qa.patch import gold_answers, patch_report
from evaluators.review import ReviewStore
from evaluators.review.create import create_qa_session
from evaluators.review.gt_patch import build_gt_patch
from evaluators.review.items import qa_items

# ------------------------------------------------------------------ a correction and a variant of one question


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_gt_correction_and_an_accepted_variant_of_one_question_both_count(review_url, tmp_path, capsys):
    # q1's GT "1843" is wrong (1842); q2's GT "北京" is wrong (上海).  System A's answers are right in other words
    # (accepted variants), system B's are exactly right (GT errors, corrected to B's answer); C gives the old GT.
    rows = [{"id": "q1", "question": "When?", "answer": "1843", "system": "A", "prediction": "in 1842"},
            {"id": "q1", "question": "When?", "answer": "1843", "system": "B", "prediction": "1842"},
            {"id": "q1", "question": "When?", "answer": "1843", "system": "C", "prediction": "1843"},
            {"id": "q2", "question": "首都？", "answer": "北京", "system": "A", "prediction": "上海市"},
            {"id": "q2", "question": "首都？", "answer": "北京", "system": "B", "prediction": "上海"},
            {"id": "q2", "question": "首都？", "answer": "北京", "system": "C", "prediction": "北京"}]
    run = write_jsonl(tmp_path / "run.jsonl", rows)
    report = evaluate_qa_file(run, QAConfig(ci_resamples=0))
    store = ReviewStore(review_url)
    session = store.create_session("mixed", "qa", qa_items(report), created_by="lead")
    for item in store.items(session.id):   # items in file order: A's variant comes before B's correction
        p = item.payload
        if p["system"] == "A":
            store.save_decision(item.id, "ann", label="acceptable_variant")
        elif p["system"] == "B":
            store.adjudicate(item.id, "lead", "gt_error", corrected_answer=p["prediction"])
    built = build_gt_patch(store, session.id, file_sha256(run), gold_answers(report.records))
    patched, app = patch_report(report, built.entries, file_sha256(run))
    assert not [i for i in app.issues if i.severity == "error"]          # no "conflict"
    assert app.answers == {"q1": ("1842", "in 1842"), "q2": ("上海", "上海市")}
    em = {(r.group, r.id): r.exact_match for r in patched.records}
    # the corrected answer and the accepted variant both score 1; the old GT now scores 0
    assert em == {("A", "q1"): 1, ("B", "q1"): 1, ("C", "q1"): 0, ("A", "q2"): 1, ("B", "q2"): 1, ("C", "q2"): 0}
    # the same through the command line
    patch = tmp_path / "p.jsonl"
    assert main(["review", "patch", "--db", review_url, "--session", "mixed", "--gt", str(run), "--out",
                 str(patch)]) == 0
    out = tmp_path / "after.json"
    assert main(["qa", "--input", str(run), "--gt-patch", str(patch), "--output-file", str(out)]) == 0
    assert "conflict" not in capsys.readouterr().err
    data = json.loads(out.read_text(encoding="utf-8"))
    # EM per system after: A 2/2, B 2/2, C 0/2
    by_group = {g: s["exact_match"] for g, s in data["by_group"].items()}
    assert by_group == {"A": 1.0, "B": 1.0, "C": 0.0}


def test_two_different_corrections_of_one_record_conflict_the_first_stands(review_url, tmp_path):
    rows = [{"id": "q1", "question": "When?", "answer": "1843", "system": s, "prediction": p}
            for s, p in (("A", "1842"), ("B", "1841"))]
    run = write_jsonl(tmp_path / "run.jsonl", rows)
    report = evaluate_qa_file(run, QAConfig(ci_resamples=0))
    store = ReviewStore(review_url)
    session = store.create_session("two", "qa", qa_items(report), created_by="lead")
    for item in store.items(session.id):
        store.adjudicate(item.id, "lead", "gt_error", corrected_answer=item.payload["prediction"])
    built = build_gt_patch(store, session.id, file_sha256(run), gold_answers(report.records))
    _, app = patch_report(report, built.entries, file_sha256(run))
    assert app.answers == {"q1": ("1842",)}
    assert [c.status for c in app.changes] == ["applied", "conflict"]
    assert "two different corrections" in app.issues[0].message and app.issues[0].severity == "error"


# ------------------------------------------------------------------ carry forward to the next run

QUESTIONS = [(f"q{i:02d}", f"Question {i}?" if i % 2 else f"问题{i}？", f"answer {i}" if i % 2 else f"答案{i}")
             for i in range(20)]


def run_rows(changed: set[tuple[str, str]] = frozenset()):
    """Two systems x 20 questions; a system's answer is right on even-numbered positions of its own pattern;
    ``changed`` (system, id) get a new prediction, each system its own (the same prediction of two systems is
    one triple: reviewed once for both)."""
    rows = []
    for system, shift in (("sysA", 0), ("sysB", 1)):
        for n, (qid, question, gt) in enumerate(QUESTIONS):
            pred = gt if (n + shift) % 3 else f"wrong {n}"
            if (system, qid) in changed:
                pred = f"{gt} ({system}, run 2)" if n % 2 else f"另一个答案 {system}"
            rows.append({"id": qid, "question": question, "answer": gt, "system": system, "prediction": pred})
    return rows


def review_rule(payload) -> str:
    return "acceptable_variant" if payload["exact_match"] == 1 else "model_error"


def test_review_whats_new_carries_verdicts_and_run_1_patch_applies_to_run_2(review_url, tmp_path, capsys):
    run1 = write_jsonl(tmp_path / "run1.jsonl", run_rows())
    # run 2: 12 of 40 records (30%) answer differently, 6 per system
    changed = {(s, f"q{i:02d}") for s in ("sysA", "sysB") for i in (1, 4, 7, 10, 13, 16)}
    run2 = write_jsonl(tmp_path / "run2.jsonl", run_rows(changed))
    db = review_url
    assert main(["review", "create", "--db", db, "--input", str(run1), "--session", "run 1", "--by", "lead"]) == 0
    assert "session run 1: 40 item(s) to review of 40 in run1.jsonl" in capsys.readouterr().out
    store = ReviewStore(db)
    s1 = store.session_by_name("run 1")
    verdicts = {}
    for item in store.items(s1.id):
        p = item.payload
        if p["id"] == "q03" and p["system"] == "sysA":   # one GT error, corrected at adjudication
            store.adjudicate(item.id, "lead", "gt_error", corrected_answer="answer three")
            verdicts[(p["system"], p["id"])] = "gt_error"
        else:
            store.save_decision(item.id, "ann", label=review_rule(p))
            verdicts[(p["system"], p["id"])] = review_rule(p)
    # review debt of run 2 before its review: per system 20 records, 14 unchanged and reviewed, 6 new
    assert main(["review", "debt", "--db", db, "--input", str(run2)]) == 0
    assert capsys.readouterr().out.splitlines() == ["system\trecords\treviewed\tdebt", "sysA\t20\t14\t6",
                                                    "sysB\t20\t14\t6", "all\t40\t28\t12"]
    # review what's new: exactly the 12 changed records; the 28 others carried with run 1's verdicts
    assert main(["review", "create", "--db", db, "--input", str(run2), "--session", "run 2", "--new-only",
                 "--by", "lead", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "session run 2: 12 item(s) to review of 40 in run2.jsonl" in out
    assert "carried forward: 28 record(s) with an earlier verdict" in out and "from run 1" in out
    s2 = store.session_by_name("run 2")
    assert {(i.payload["system"], i.payload["id"]) for i in store.items(s2.id)} == changed
    carried_lines = [line.split("\t") for line in out.splitlines() if line.startswith("  carried")]
    assert len(carried_lines) == 28
    for _, rid, system, label, session in carried_lines:
        assert (system, rid) not in changed and label == verdicts[(system, rid)] and session == "run 1"
    summary = s2.settings["carried"]
    assert summary["n"] == 28 and summary["sessions"] == ["run 1"]
    assert sum(summary["labels"].values()) == 28 and summary["labels"]["gt_error"] == 1
    # the same split from the library, and nothing new once run 2 is a session too
    with pytest.raises(ValueError, match="nothing new to review"):
        create_qa_session(store, "run 1 again", run1.read_bytes(), "run1.jsonl", created_by="lead", new_only=True)
    # run 1's patch applies to run 2 (its digest covered the predictions before: refused)
    p1 = tmp_path / "run1.patch.jsonl"
    assert main(["review", "patch", "--db", db, "--session", "run 1", "--gt", str(run1), "--out", str(p1)]) == 0
    entries = read_gt_patch_file(p1).entries
    # 1 correction (q03) + the accepted answers: every question answered right by EM by one system or both
    # (the same answer accepted for two systems is added once)
    exact = {r["id"] for r in run_rows() if r["prediction"] == r["answer"]}
    assert len(entries) == 1 + len(exact) and all(e.keyed for e in entries)
    capsys.readouterr()
    assert main(["qa", "--input", str(run2), "--gt-patch", str(p1)]) == 0
    printed = capsys.readouterr().out
    # q03 corrected: applied, and sysB's answer of q03 (its old GT, accepted as right) added beside the correction;
    # the other accepted answers are each record's GT already: unchanged
    assert f"run2.jsonl: {len(entries)} correction(s): 2 applied, {len(entries) - 2} already in place" in printed
    # a review of run 2's new records, then review debt 0 for sysA
    for item in store.items(s2.id):
        if item.payload["system"] == "sysA":
            store.save_decision(item.id, "ann", label="model_error")
    assert main(["review", "debt", "--db", db, "--input", str(run2)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["sysA\t20\t20\t0", "sysB\t20\t14\t6", "all\t40\t34\t6"]
    # the dataset's patch: every session's corrections of run 2's records, for any run of the dataset
    pd = tmp_path / "dataset.patch.jsonl"
    assert main(["review", "patch", "--db", db, "--gt", str(run2), "--out", str(pd)]) == 0
    assert {(e.record_id, e.op) for e in read_gt_patch_file(pd).entries} >= {("q03", "replace")}
    for run in (run1, run2):
        assert main(["qa", "--input", str(run), "--gt-patch", str(pd)]) == 0


def test_a_keyed_patch_for_another_dataset_is_refused(review_url, tmp_path, capsys):
    run1 = write_jsonl(tmp_path / "run1.jsonl", run_rows())
    store = ReviewStore(review_url)
    made = create_qa_session(store, "r", run1.read_bytes(), "run1.jsonl", created_by="lead")
    first = store.items(made.session.id)[0]
    store.adjudicate(first.id, "lead", "gt_error", corrected_answer="x")
    patch = tmp_path / "p.jsonl"
    assert main(["review", "patch", "--db", review_url, "--session", "r", "--gt", str(run1), "--out", str(patch)]) == 0
    # the same ids with other GT answers: no correction is for these records
    other = write_jsonl(tmp_path / "other.jsonl", [{**r, "answer": r["answer"] + "!"} for r in run_rows()])
    capsys.readouterr()
    assert main(["qa", "--input", str(other), "--gt-patch", str(patch)]) == 2
    assert "none of the 1 correction(s) is for a record of the GT given" in capsys.readouterr().err
    # a second correction (q01), and a file where only q00's GT differs: q01 applies, q00's line is skipped and said
    q01 = next(i for i in store.items(made.session.id) if i.payload["id"] == "q01")
    store.adjudicate(q01.id, "lead", "gt_error", corrected_answer="y")
    assert main(["review", "patch", "--db", review_url, "--session", "r", "--gt", str(run1), "--out", str(patch)]) == 0
    part = write_jsonl(tmp_path / "part.jsonl", [{**r, "answer": "changed"} if r["id"] == "q00" else r
                                                 for r in run_rows()])
    capsys.readouterr()
    assert main(["qa", "--input", str(part), "--gt-patch", str(patch)]) == 0
    captured = capsys.readouterr()
    assert "2 correction(s): 1 applied" in captured.out and "1 for another GT of the record" in captured.out
    assert "record 'q00': this correction was made for another GT of the record" in captured.err


def test_review_create_options(review_url, tmp_path, capsys):
    run1 = write_jsonl(tmp_path / "run1.jsonl", run_rows())
    guide = tmp_path / "guide.md"
    guide.write_text("# Rules\nA year with a word around it is a variant. 年份加字也算对。", encoding="utf-8")
    assert main(["review", "create", "--db", review_url, "--input", str(run1), "--session", "informative", "--k", "2",
                 "--blind", "--order", "informative", "--guidelines", str(guide), "--by", "lead", "--seed", "3"]) == 0
    assert "40 item(s) to review of 40 in run1.jsonl (k = 2, order informative, blind)" in capsys.readouterr().out
    store = ReviewStore(review_url)
    s = store.session_by_name("informative")
    assert s.k == 2 and s.blind and s.created_by == "lead" and s.guidelines_version == 1
    assert "年份加字也算对" in s.guidelines and s.settings["order"] == "informative"
    # most informative first: the questions the two systems split on (one right, one wrong by EM) open first
    em = {(r["system"], r["id"]): r["prediction"] == r["answer"] for r in run_rows()}
    split = {qid for qid, _, _ in QUESTIONS if em[("sysA", qid)] != em[("sysB", qid)]}
    order = []
    item = store.next_item(s.id, "ann")
    seen = []
    while item is not None and len(seen) < 40:
        order.append(item.payload["id"])
        seen.append(item.id)
        item = store.next_item(s.id, "ann", exclude=seen)
    assert len(order) == 40 and set(order[:2 * len(split)]) == split
    # errors: a taken name, an unknown file
    assert main(["review", "create", "--db", review_url, "--input", str(run1), "--session", "informative"]) == 2
    assert main(["review", "create", "--db", review_url, "--input", str(tmp_path / "nope.jsonl"), "--session",
                 "x"]) == 2
    assert main(["review", "debt", "--db", review_url]) == 2


def test_the_pages_session_patch_of_run_1_corrects_run_2(review_url, tmp_path):
    """The pages' "Apply review corrections" (a session picked from the database) on another run of the dataset."""
    from evaluators.review.gt_patch import session_patch

    run1 = write_jsonl(tmp_path / "run1.jsonl", run_rows())
    run2 = write_jsonl(tmp_path / "run2.jsonl", run_rows({("sysA", "q03"), ("sysB", "q05")}))
    store = ReviewStore(review_url)
    made = create_qa_session(store, "run 1", run1.read_bytes(), "run1.jsonl", created_by="lead")
    for item in store.items(made.session.id):
        if item.payload["id"] == "q03":
            store.adjudicate(item.id, "lead", "gt_error", corrected_answer="answer three")
    sp = session_patch(store, made.session.id, "run2.jsonl", run2.read_bytes())
    assert "was made from run1.jsonl" in sp.note and "same id and GT" in sp.note
    report = evaluate_qa_file(run2, QAConfig(ci_resamples=0))
    _, app = patch_report(report, sp.patch.entries, file_sha256(run2))
    assert app.answers == {"q03": ("answer three",)} and app.n_applied == 1


def test_an_ordered_session_keeps_its_order_through_export_and_import(review_url, tmp_path):
    from evaluators.review.exchange import export_jsonl, import_jsonl

    run1 = write_jsonl(tmp_path / "run1.jsonl", run_rows())
    store = ReviewStore(review_url)
    made = create_qa_session(store, "ordered", run1.read_bytes(), "run1.jsonl", created_by="lead",
                             order="informative", seed=5)

    def queue(st, sid):
        out, seen = [], []
        while (item := st.next_item(sid, "ann", exclude=seen)) is not None:
            out.append((item.payload["system"], item.payload["id"]))
            seen.append(item.id)
        return out

    expected = [(i.payload["system"], i.payload["id"]) for i in store.items(made.session.id)]  # creation order
    assert queue(store, made.session.id) == expected
    text = export_jsonl(store, made.session.id)
    fresh = ReviewStore(f"sqlite:///{tmp_path / 'fresh.sqlite'}")
    import_jsonl(fresh, text.encode("utf-8"), "ordered.jsonl")
    copy = fresh.session_by_name("ordered")
    assert copy.settings["order"] == "informative" and queue(fresh, copy.id) == expected
