"""The leaderboard of the latest run of each system (evaluators.runs.leaderboard): ranks, intervals, tiers."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from evaluators.metrics.statistics import adjust_p_values, approximate_randomization, bootstrap_ci
from evaluators.run_result import ItemTable, RunResult
from evaluators.runs.leaderboard import latest_by_system, leaderboard


def _run(system, rights, n=200):
    ids = tuple(f"q{i}" for i in range(n))
    return RunResult("qa", ItemTable(ids, (system,) * n, {"exact_match": tuple(float(i < rights) for i in range(n))}))


def test_tiers_group_the_systems_the_data_cannot_tell_apart():
    a, b, c = _run("A", 160), _run("B", 158), _run("C", 100)  # 80%, 79%, 50%
    board = leaderboard([("c1", c), ("b1", b), ("a1", a)], "exact_match", n_resamples=2000)
    assert [(r.rank, r.tier, r.system) for r in board.rows] == [(1, 1, "A"), (2, 1, "B"), (3, 2, "C")]
    # A against B: 2 discordant items (q158, q159, both A's): exact sign flips p = 2 * (1/4) = 0.5; against C: 60
    raw_ab = approximate_randomization(a.items.values["exact_match"], b.items.values["exact_match"],
                                       n_resamples=2000).p_value
    assert raw_ab == 0.5
    tests = [raw_ab,
             approximate_randomization(a.items.values["exact_match"], c.items.values["exact_match"],
                                       n_resamples=2000).p_value,
             approximate_randomization(b.items.values["exact_match"], c.items.values["exact_match"],
                                       n_resamples=2000).p_value]
    assert board.rows[1].p_vs_leader == adjust_p_values(tests, "holm")[0]
    ci = bootstrap_ci(a.items.values["exact_match"], n_resamples=2000)
    assert (board.rows[0].mean, board.rows[0].ci_low, board.rows[0].ci_high) == (0.8, ci.ci_low, ci.ci_high)
    assert board.rows[0].p_vs_leader is None and board.rows[2].p_vs_leader is None  # leaders


def test_the_latest_run_of_each_system_on_the_cli(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    rows = [{"id": f"q{i}", "question": f"问题 {i}", "answer": f"答案{i}", "prediction": f"答案{i}"}
            for i in range(20)]
    for name, system, right in (("a-old", "A", 5), ("b", "B", 15), ("a-new", "A", 18)):
        data = [dict(r, system=system, prediction=r["prediction"] if int(r["id"][1:]) < right else "错")
                for r in rows]
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data), encoding="utf-8")
        assert main(["qa", str(f), "--log", "--run-name", name, "--db", db, "--ci-resamples", "0"]) == 0
    capsys.readouterr()
    assert main(["runs", "leaderboard", "--metric", "exact_match", "--db", db, "--format", "json",
                 "--ci-resamples", "500"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [(r["system"], r["run"], r["mean"]) for r in board["rows"]] == [("A", "a-new", 0.9), ("B", "b", 0.75)]
    # 3 discordant items, all A's: exact p = 2 / 8 = 0.25, one test: not told apart
    assert [r["tier"] for r in board["rows"]] == [1, 1] and board["rows"][1]["p_vs_leader"] == pytest.approx(0.25)


def test_latest_by_system_keeps_the_last_run_of_each():
    class R:
        def __init__(self, name, system):
            self.name, self.systems = name, (system,)

    runs = [R("1", "A"), R("2", "B"), R("3", "A")]
    assert [r.name for r in latest_by_system(runs)] == ["3", "2"]
