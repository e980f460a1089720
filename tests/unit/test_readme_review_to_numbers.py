"""README 'From review to numbers' (issue 29 acceptance): from "I reviewed the items of run 1" to corrected
numbers with intervals for every run in at most three commands.  The README's first code block of that
section is read here and its commands run as written (the database from ``EVALBOARD_DATABASE_URL``, the
files in the working folder), on two single-system runs of 20 questions (English and Chinese), run 2 with
6 changed answers.  The numbers after are derived by hand below."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from evaluators.cli import main
from evaluators.review import ReviewStore

README = Path(__file__).resolve().parents[2] / "README.md"
QUESTIONS = [(f"q{i:02d}", f"Question {i}?" if i % 2 else f"问题{i}？", f"answer {i}" if i % 2 else f"答案{i}")
             for i in range(20)]
CHANGED = ("q01", "q04", "q07", "q10", "q13", "q16")


def readme_commands() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## From review to numbers", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    lines = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert all(line.startswith("python -m evaluators ") for line in lines), lines
    return [shlex.split(line)[3:] for line in lines]


def write_run(path: Path, changed=()) -> None:
    # the answer is the GT except on every third question (n % 3 == 0: "wrong n"); run 2 changes six right answers
    rows = []
    for n, (qid, question, gt) in enumerate(QUESTIONS):
        pred = gt if n % 3 else f"wrong {n}"
        if qid in changed:
            pred = f"{gt} (run 2)" if n % 2 else "另一个答案"
        rows.append({"id": qid, "question": question, "answer": gt, "prediction": pred})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_the_readmes_three_commands_give_corrected_numbers_with_intervals_for_every_run(
        review_url, tmp_path, monkeypatch, capsys):
    commands = readme_commands()
    assert len(commands) <= 3 and [c[:2] for c in commands] == [["review", "create"], ["review", "patch"],
                                                                 ["compare", "--input"]]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EVALBOARD_DATABASE_URL", review_url)
    write_run(tmp_path / "run1.jsonl")
    write_run(tmp_path / "run2.jsonl", CHANGED)
    # before the README: run 1 was reviewed; q03's GT is wrong (its answer "wrong 3" is right), the rest by EM
    assert main(["review", "create", "--input", "run1.jsonl", "--session", "run 1", "--by", "lead"]) == 0
    store = ReviewStore(review_url)
    for item in store.items(store.session_by_name("run 1").id):
        p = item.payload
        if p["id"] == "q03":
            store.adjudicate(item.id, "lead", "gt_error", corrected_answer="wrong 3")
        else:
            store.save_decision(item.id, "ann", label="correct" if p["exact_match"] else "model_error")
    capsys.readouterr()
    # 1. review what's new: the 6 changed records, k = 2
    assert main(commands[0]) == 0
    assert "session run 2: 6 item(s) to review of 20 in run2.jsonl" in capsys.readouterr().out
    run2 = store.session_by_name("run 2")
    items = {i.payload["id"]: i for i in store.items(run2.id)}
    assert sorted(items) == sorted(CHANGED)
    # both reviewers accept q01's "answer 1 (run 2)"; they split on q04 (no final label: no correction)
    for who in ("ann", "bob"):
        store.save_decision(items["q01"].id, who, label="acceptable_variant")
    store.save_decision(items["q04"].id, "ann", label="acceptable_variant")
    store.save_decision(items["q04"].id, "bob", label="model_error")
    # 2. the dataset's patch
    assert main(commands[1]) == 0
    assert Path("dataset.patch.jsonl").is_file()
    capsys.readouterr()
    # 3. every run before -> after with intervals.  By hand (EM): run 1 is right on the 13 questions with
    # n % 3 != 0, + q03 after its correction: 13/20 -> 14/20; run 2 loses the 6 changed answers (all had
    # n % 3 == 1): 7/20, after + q03 and + q01 (accepted): 9/20; q04's split gives nothing
    assert main(commands[2]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if re.match(r"run[12]\.jsonl +20 ", line)}
    assert set(rows) == {"run1.jsonl", "run2.jsonl"}
    ems = {run: re.findall(r"(\d+\.\d\d)% \[(\d+\.\d\d)%, (\d+\.\d\d)%\]", line)[:2] for run, line in rows.items()}
    for run, (before, after) in (("run1.jsonl", ("65.00", "70.00")), ("run2.jsonl", ("35.00", "45.00"))):
        (b, b_lo, b_hi), (a, a_lo, a_hi) = ems[run]
        assert (b, a) == (before, after), rows[run]
        assert float(b_lo) <= float(b) <= float(b_hi) and float(a_lo) <= float(a) <= float(a_hi) < 100
    assert "run2.jsonl: " in out and "2 applied" in out.split("run2.jsonl: ", 1)[1].splitlines()[0]
