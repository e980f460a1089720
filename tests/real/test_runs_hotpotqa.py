"""The run registry on the public HotpotQA comparison file: its three systems logged as three runs (one file per
system, ``qa FILE --log --run-name ...``); ``runs list``, ``runs compare`` and ``runs trend`` against
``compare`` on the same files (the same numbers, exactly).  SQLite, and PostgreSQL when
EVALBOARD_TEST_DATABASE_URL is set."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from tests.conftest import require_shared

pytestmark = pytest.mark.realdata

#: In the file's order; logged in this order, so the trend's steps are Relaxed -> Full -> Search.
SYSTEMS = ("Decomp_RelaxedInitial", "Decomp_FullPipeline", "Decomp_SearchFallback")


def _json(capsys, argv):
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def logged(review_url, tmp_path, capsys):
    """The three systems' files, each logged as a run named after its system."""
    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    files = []
    for system in SYSTEMS:
        f = tmp_path / f"{system}.jsonl"
        f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows if r["system"] == system),
                     encoding="utf-8")
        files.append(str(f))
        assert main(["qa", str(f), "--log", "--run-name", f"hp-{system}", "--tag", "source=hotpotqa",
                     "--db", review_url, "--ci-resamples", "0"]) == 0
    assert "logged run hp-Decomp_SearchFallback (50 records" in capsys.readouterr().err
    return review_url, files


def test_three_systems_three_runs_and_compares_numbers(logged, capsys):
    db, files = logged
    listed = _json(capsys, ["runs", "list", "--db", db, "--format", "json"])
    assert [r["name"] for r in listed] == [f"hp-{s}" for s in SYSTEMS]
    assert [r["systems"] for r in listed] == [[s] for s in SYSTEMS]
    assert {r["dataset_digest"] for r in listed} == {listed[0]["dataset_digest"]}  # one GT: one dataset
    assert [r["n_items"] for r in listed] == [50, 50, 50] and all(r["tags"] == {"source": "hotpotqa"} for r in listed)
    # the repository's own summary: 27, 33 and 22 of 50 right
    assert [next(s["mean"] for s in r["summary"] if s["metric"] == "exact_match" and s["slice"] == "")
            for r in listed] == [0.54, 0.66, 0.44]

    ref = {}
    for a, b in zip(SYSTEMS, SYSTEMS[1:]):
        ref[(a, b)] = _json(capsys, ["compare", *files, "--a", a, "--b", b, "--format", "json"])
    ours = _json(capsys, ["runs", "compare", f"hp-{SYSTEMS[1]}", f"hp-{SYSTEMS[2]}", "--db", db, "--format", "json"])
    theirs = ref[(SYSTEMS[1], SYSTEMS[2])]["comparison"]
    em, f1 = ({m["metric"]: m for m in ours["metrics"]}[k] for k in ("exact_match", "token_f1"))
    assert (ours["n_common"], em["n_paired"], em["only_a"], em["only_b"]) == (
        theirs["n_paired"], theirs["n_paired"], theirs["only_a"], theirs["only_b"]) == (50, 50, 0, 0)
    assert em["bootstrap"] == theirs["exact_match_bootstrap"]
    assert f1["bootstrap"] == theirs["token_f1_bootstrap"]
    assert f1["randomization"] == theirs["token_f1_randomization"]
    assert em["mcnemar"] == theirs["exact_match_mcnemar"]
    assert (em["mcnemar"]["only_a"], em["mcnemar"]["only_b"]) == (13, 2)  # as tests/real/test_qa_compare_real.py

    # the stored runs in the QA comparison views (what the Runs page opens side by side): compare's scores
    from evaluators.qa.compare import side_by_side
    from evaluators.runs import RunStore
    from evaluators.runs.rescore import qa_records

    store = RunStore(db)
    view = side_by_side({s: qa_records(store.load(f"hp-{s}")) for s in SYSTEMS})
    assert json.loads(json.dumps([x.to_dict() for x in view.scores])) == ref[(SYSTEMS[0], SYSTEMS[1])]["scores"]
    assert dict(view.counts) == ref[(SYSTEMS[0], SYSTEMS[1])]["agreement"]

    for test in ("randomization", "bootstrap"):
        trend = _json(capsys, ["runs", "trend", "--metric", "exact_match", "--db", db, "--format", "json",
                               "--test", test])
        assert trend["runs"] == [f"hp-{s}" for s in SYSTEMS]
        scores = {s["system"]: s for s in ref[(SYSTEMS[0], SYSTEMS[1])]["scores"]}  # compare's EM with intervals
        for p in trend["points"]:
            s = scores[p["run"][3:]]
            assert (p["n"], p["mean"], p["ci_low"], p["ci_high"]) == (
                s["n"], s["exact_match"], s["exact_match_ci_low"], s["exact_match_ci_high"])
        for step, (a, b) in zip(trend["steps"], zip(SYSTEMS, SYSTEMS[1:])):
            (t,) = step["tests"]  # exact_match over every item
            boot = ref[(a, b)]["comparison"]["exact_match_bootstrap"]
            assert (step["n_common"], t["mean_a"], t["mean_b"], t["delta"], t["ci_low"], t["ci_high"]) == (
                50, boot["mean_a"], boot["mean_b"], boot["delta"], boot["ci_low"], boot["ci_high"])
            if test == "bootstrap":
                assert t["p_value"] == t["p_adjusted"] == boot["p_value"]  # a family of one test
        # Full -> Search: 13 right answers lost, 2 gained; flagged by either test
        assert [s["flagged"] for s in trend["steps"]][1] is True


def test_runs_of_the_file_survive_export_and_import(logged, capsys, tmp_path):
    db, _ = logged
    out = tmp_path / "runs.jsonl"
    assert _json(capsys, ["runs", "export", str(out), "--db", db, "--format", "json"])["exported"] == 3
    other = f"sqlite:///{tmp_path / 'other.sqlite'}"
    assert _json(capsys, ["runs", "import", str(out), "--db", other, "--format", "json"])["imported"] == 3
    again = tmp_path / "again.jsonl"
    _json(capsys, ["runs", "export", str(again), "--db", other, "--format", "json"])
    assert again.read_bytes() == out.read_bytes()
    assert main(["runs", "show", "hp-nope", "--db", db]) == 2
    assert "no run named 'hp-nope'" in capsys.readouterr().err
