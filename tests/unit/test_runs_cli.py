"""``qa ... --log`` and ``python -m evaluators runs ...`` on small Chinese and English files."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.runs import RunStore

#: 10 questions, half Chinese; the answers.
QUESTIONS = [(f"q{i}", f"问题{i}" if i % 2 else f"question {i}", f"答案{i}" if i % 2 else f"answer {i}")
             for i in range(10)]


def _write(path, rights, system=None, ids=None):
    """A records file: question i answered right when ``rights[i]``."""
    rows = []
    for (qid, q, a), right in zip(QUESTIONS, rights):
        if ids is not None and qid not in ids:
            continue
        row = {"id": qid, "question": q, "answer": a, "prediction": a if right else "wrong"}
        if system:
            row["system"] = system
        rows.append(row)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _out(capsys, argv, code=0):
    capsys.readouterr()
    assert main(argv) == code
    return capsys.readouterr()


def test_qa_log_one_run_per_system_and_the_runs_actions(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    a = _write(tmp_path / "a.jsonl", [1] * 10)
    both = tmp_path / "both.jsonl"  # two systems in one file: two runs, NAME/system
    both.write_text(open(_write(tmp_path / "x.jsonl", [1] * 8 + [0] * 2, "sys-x"), encoding="utf-8").read()
                    + open(_write(tmp_path / "y.jsonl", [1] * 5 + [0] * 5, "sys-y"), encoding="utf-8").read(),
                    encoding="utf-8")
    err = _out(capsys, ["qa", a, "--log", "--run-name", "base", "--db", db, "--tag", "seed=1", "--ci-resamples",
                        "0"]).err
    assert "logged run base (10 records" in err
    _out(capsys, ["qa", str(both), "--log", "--run-name", "cand", "--db", db, "--ci-resamples", "0",
                  "--format", "json"])
    store = RunStore(db)
    assert [r.name for r in store.runs()] == ["base", "cand/sys-x", "cand/sys-y"]
    assert len({r.dataset_digest for r in store.runs()}) == 1  # the same questions and answers: one dataset
    assert store.get("cand/sys-x").summary[0]["mean"] == 0.8  # 8 of 10 right
    # the same name again: refused, exit 2; a file of two systems whose one name is taken: nothing logged
    assert "already logged" in _out(capsys, ["qa", a, "--log", "--run-name", "base", "--db", db], 2).err
    assert "'cand/sys-x' is already logged" in _out(capsys, ["qa", str(both), "--log", "--run-name", "cand",
                                                             "--db", db], 2).err
    assert len(store.runs()) == 3
    assert "--run-name goes with one input file" in _out(
        capsys, ["qa", a, a, "--log", "--run-name", "two", "--db", db], 2).err

    listed = json.loads(_out(capsys, ["runs", "list", "--db", db, "--tag", "seed=1", "--format", "json"]).out)
    assert [r["name"] for r in listed] == ["base"]
    out = _out(capsys, ["runs", "compare", "base", "cand/sys-y", "--db", db, "--ci-resamples", "0"]).out
    # EM 100% -> 50%: 5 of 10 lost; McNemar exact two-sided p = 2 * 0.5**5 = 0.0625
    assert "n common = 10 of 10 and 10" in out and "-50.00 pts" in out and "p = 0.0625" in out
    _out(capsys, ["runs", "accept", "cand/sys-x", "--db", db])
    assert [r.name for r in store.runs(accepted=True)] == ["cand/sys-x"]
    trend = json.loads(_out(capsys, ["runs", "trend", "--metric", "exact_match", "--slice", "lang", "--db", db,
                                     "--system", "sys-y", "--format", "json", "--ci-resamples", "200"]).out)
    assert trend["runs"] == ["cand/sys-y"] and trend["steps"] == []
    assert [(p["slice_value"], p["mean"]) for p in trend["points"]] == [("all", 0.5), ("en", 0.6), ("zh", 0.4)]
    # en: q0 q2 q4 right, q6 q8 wrong -> 3/5; zh: q1 q3 right, q5 q7 q9 wrong -> 2/5
    assert "needs --metric" in _out(capsys, ["runs", "trend", "--db", db], 2).err
    _out(capsys, ["runs", "delete", "base", "--db", db])
    assert "no run named 'base'" in _out(capsys, ["runs", "show", "base", "--db", db], 2).err


def test_runs_sharing_40_percent_of_items_are_not_compared(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    first = _write(tmp_path / "first.jsonl", [1] * 10, ids={f"q{i}" for i in range(5)})
    second = _write(tmp_path / "second.jsonl", [1] * 10, ids={f"q{i}" for i in range(3, 8)})
    for name, f in (("first", first), ("second", second)):
        _out(capsys, ["qa", f, "--log", "--run-name", name, "--db", db, "--ci-resamples", "0"])
    err = _out(capsys, ["runs", "compare", "first", "second", "--db", db], 2).err
    assert "n common = 2 of 5 and 5 items; at least 4 needed" in err  # q3, q4 of q0-q4 and q3-q7: 40%
    ok = json.loads(_out(capsys, ["runs", "compare", "first", "second", "--db", db, "--min-overlap", "0.4",
                                  "--format", "json", "--ci-resamples", "0"]).out)
    assert ok["n_common"] == 2


@pytest.mark.parametrize("argv, message", [(["runs", "show"], "takes 1 name(s), 0 given"),
                                           (["runs", "compare", "a"], "takes 2 name(s), 1 given")])
def test_wrong_number_of_names(tmp_path, capsys, argv, message):
    assert message in _out(capsys, argv + ["--db", f"sqlite:///{tmp_path / 'r.sqlite'}"], 2).err


def test_runs_noise_of_three_repeats_and_a_candidate(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    # 10 questions; repeats differ on q8 (right in rep1 only) and q9 (right in rep2 and rep3)
    for name, rights in (("rep1", [1] * 6 + [0, 0, 1, 0]), ("rep2", [1] * 6 + [0, 0, 0, 1]),
                         ("rep3", [1] * 6 + [0, 0, 0, 1]), ("cand", [1] * 6 + [1, 0, 0, 1])):
        _out(capsys, ["qa", _write(tmp_path / f"{name}.jsonl", rights), "--log", "--run-name", name, "--db", db,
                      "--ci-resamples", "0"])
    data = json.loads(_out(capsys, ["runs", "noise", "rep1", "rep2", "rep3", "--metric", "exact_match",
                                    "--candidate", "cand", "--db", db, "--format", "json",
                                    "--ci-resamples", "500"]).out)
    floor, verdict = data["noise_floor"], data["candidate"]
    assert floor["flaky"] == ["q8", "q9"] and floor["n_items"] == 10
    assert floor["pass_at_k"]["1"] == pytest.approx((6 + 1 / 3 + 2 / 3) / 10)  # q0-q5 always, q8 1/3, q9 2/3
    # the candidate against each item's mean over the repeats: q6 +1, q8 0 - 1/3, q9 1 - 2/3:
    # delta = (1 - 1/3 + 1/3) / 10 = 0.1, inside the band of so few items: not flagged
    assert verdict["delta"] == pytest.approx(0.1) and verdict["flagged"] is False
    assert verdict["delta"] < floor["band"]
    assert verdict["flaky_changed"] == ["q8", "q9"]  # the flaky items whose candidate value is not rep1's
    assert "takes 2 or more" in _out(capsys, ["runs", "noise", "rep1", "--metric", "exact_match", "--db", db], 2).err


def test_compare_and_trend_with_the_noise_of_repeats(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    for name, rights in (("rep1", [1] * 6 + [0, 0, 1, 0]), ("rep2", [1] * 6 + [0, 0, 0, 1]),
                         ("new", [1] * 6 + [1, 1, 0, 1])):
        _out(capsys, ["qa", _write(tmp_path / f"{name}.jsonl", rights), "--log", "--run-name", name, "--db", db,
                      "--ci-resamples", "0"])
    noise = ["--noise", "rep1", "--noise", "rep2"]
    data = json.loads(_out(capsys, ["runs", "compare", "rep1", "new", "--db", db, "--format", "json",
                                    "--ci-resamples", "0", *noise]).out)
    em = next(x for x in data["noise"] if x["metric"] == "exact_match")
    assert em["flaky_changed"] == ["q8", "q9"]  # q6 and q7 changed too, but they are not flaky
    # band: q8 and q9 each s^2 = 1/2 over 2 repeats: 1.959964 * sqrt(2 * (1/2 + 1/2)) / 10
    assert em["band"] == pytest.approx(1.959963984540054 * 2 ** 0.5 / 10)
    assert data["n_common"] == 10 and data["metrics"][0]["metric"] == "exact_match"
    trend = json.loads(_out(capsys, ["runs", "trend", "--metric", "exact_match", "--db", db, "--format", "json",
                                     "--ci-resamples", "200", *noise]).out)
    assert not any(s["flagged"] for s in trend["steps"])
    assert "2 or more repeats" in _out(capsys, ["runs", "trend", "--metric", "exact_match", "--db", db,
                                                "--noise", "rep1"], 2).err


def test_a_task_plugged_in_through_the_protocol_logs_too(tmp_path, capsys):
    import hashlib

    from tests.helpers.toy_task import DEMO_GT, DEMO_PRED

    (tmp_path / "gt.jsonl").write_bytes(DEMO_GT)
    (tmp_path / "pred.jsonl").write_bytes(DEMO_PRED)
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    err = _out(capsys, ["toylabel", str(tmp_path / "gt.jsonl"), str(tmp_path / "pred.jsonl"), "--log",
                        "--run-name", "toy", "--db", db, "--format", "json"]).err
    assert "logged run toy/A" in err and "logged run toy/B" in err
    store = RunStore(db)
    a, b = store.get("toy/A"), store.get("toy/B")
    assert (a.task, a.dataset, a.dataset_digest) == ("toylabel", "gt.jsonl", hashlib.sha256(DEMO_GT).hexdigest())
    assert a.predictions_digest == hashlib.sha256(DEMO_PRED).hexdigest() and b.dataset_digest == a.dataset_digest
    # B right on 3 of 4, A on 2 of 4 (tests/unit/test_task_protocol.py)
    assert [next(s["mean"] for s in r.summary if s["slice"] == "") for r in (a, b)] == [0.5, 0.75]


def test_the_review_gate_takes_registry_runs(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    for name, rights in (("base", [1] * 10), ("worse", [1] * 2 + [0] * 8), ("same", [1] * 10)):
        _out(capsys, ["qa", _write(tmp_path / f"{name}.jsonl", rights), "--log", "--run-name", name, "--db", db,
                      "--ci-resamples", "0"])
    _out(capsys, ["runs", "accept", "base", "--db", db])
    gate = ["review", "gate", "--db", db, "--test", "mcnemar"]
    # 8 of 10 lost: McNemar exact two-sided p = 2 * 0.5**8 = 0.0078 < 0.05: FAIL, exit 1
    out = _out(capsys, gate + ["--baseline-run", "accepted", "--candidate-run", "worse"], 1).out
    assert "n common = 10 of 10 and 10" in out and "p = 0.007812" in out and "FAIL" in out
    assert "PASS" in _out(capsys, gate + ["--baseline-run", "base", "--candidate-run", "same"]).out
    assert "no run named 'nope'" in _out(capsys, gate + ["--baseline-run", "base", "--candidate-run", "nope"], 2).err
