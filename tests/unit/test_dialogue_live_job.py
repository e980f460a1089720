"""The live-mode job state machine of a session (evaluators.dialogue.live_job), driven with a dict: no Streamlit."""

import json

import pytest

from evaluators.dialogue import load_cases
from evaluators.dialogue.live_job import JOB_KEY, ROWS_KEY, STOP_KEY, LiveJobs, checkpoint_path
from tests.helpers.http_servers import ChatServer

CASES = {"test_cases_by_scene": {
    "s1": [{"context": "你好", "expected_response": "你好呀", "dialogue_index": 1},
           {"context": "再见", "expected_response": "再见啦", "dialogue_index": 2}],
    "s2": [{"context": "Hello", "expected_response": "Hello there", "dialogue_index": 1}],
}}


class Rerun(BaseException):
    """What a page rerun looks like to the code it interrupts (Streamlit's is a BaseException too)."""


@pytest.fixture
def cases():
    return load_cases(json.dumps(CASES, ensure_ascii=False).encode(), "cases.json").cases


@pytest.fixture
def jobs(tmp_path):
    return LiveJobs({}, tmp_path / "live")


def test_a_job_runs_to_the_end_keeps_its_replies_and_ends(jobs, cases, tmp_path):
    with ChatServer("ok") as srv:
        jobs.start("cases-a", f" {srv.url} ", "m1", 2, 0)
        assert jobs.state[JOB_KEY] == {"cases": "cases-a", "url": srv.url, "model": "m1", "timeout": 2.0,
                                       "retries": 0}
        seen = []
        outcome = jobs.run(cases, progress=lambda d, t: seen.append((d, t)))
    assert (outcome.level, outcome.n_rows) == ("success", 3)
    assert outcome.message == "m1: 3 replies asked, 0 kept from earlier runs, 0 errors (recorded per case)."
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert JOB_KEY not in jobs.state
    assert [r.prediction for r in jobs.rows()] == ["你好呀 (m1)", "再见呀 (m1)", "Hello呀 (m1)"]
    ckpt = checkpoint_path(tmp_path / "live", "cases-a", srv.url, "m1")
    assert jobs.has_replies("cases-a", srv.url, "m1") and len(ckpt.read_text(encoding="utf-8").splitlines()) == 3
    [live] = jobs.prediction_sets()
    assert live.files == ["live endpoint"] and len(live.rows) == 3


def test_an_interrupted_run_stays_recorded_and_the_next_run_goes_on(jobs, cases):
    with ChatServer("ok") as srv:
        jobs.start("cases-a", srv.url, "m1", 2, 0)

        def cut_after_two(done, total):
            if done == 2:
                raise Rerun

        with pytest.raises(Rerun):
            jobs.run(cases, progress=cut_after_two)
        assert jobs.state[JOB_KEY]["model"] == "m1"  # still recorded: the next run goes on with it
        outcome = jobs.run(cases)
    assert outcome.message.startswith("m1: 1 replies asked, 2 kept from earlier runs")
    assert srv.paths().count("/chat") == 3  # no case asked twice
    assert JOB_KEY not in jobs.state


def test_stop_ends_the_job_and_keeps_every_reply_so_far(jobs, cases):
    with ChatServer("ok") as srv:
        jobs.start("cases-a", srv.url, "m1", 2, 0)

        def stop_after_one(done, total):
            if done == 1:
                jobs.request_stop()

        outcome = jobs.run(cases, progress=stop_after_one)
    assert outcome.level == "warning"
    assert outcome.message.startswith("m1: stopped; 1 of 3 replies kept (1 asked in this run)")
    assert srv.paths().count("/chat") == 1
    assert [r.prediction for r in jobs.rows()] == ["你好呀 (m1)"]
    assert JOB_KEY not in jobs.state and jobs.state[STOP_KEY] is True
    jobs.start("cases-a", srv.url, "m1", 2, 0)
    assert jobs.stop_requested() is False  # a new job starts without the old stop request


def test_a_refused_url_is_an_error_outcome_and_nothing_is_written(jobs, cases, tmp_path):
    jobs.start("cases-a", "file:///etc/passwd#", "m1", 2, 0)
    outcome = jobs.run(cases)
    assert outcome.level == "error"
    assert outcome.message == "This URL is not contacted: only http:// and https:// URLs are accepted, not file://"
    assert JOB_KEY not in jobs.state and jobs.rows() == []
    assert not list((tmp_path / "live").glob("*.jsonl"))


def test_an_unexpected_error_ends_the_job_and_is_raised(jobs, cases):
    with ChatServer("ok") as srv:
        jobs.start("cases-a", srv.url, "m1", 2, 0)
        with pytest.raises(ZeroDivisionError):
            jobs.run(cases, progress=lambda d, t: 1 / 0)
    assert JOB_KEY not in jobs.state


def test_a_job_for_other_cases_is_dropped_and_running_without_a_job_is_refused(jobs, cases):
    jobs.start("cases-a", "http://127.0.0.1:9", "m1", 2, 0)
    assert jobs.current("cases-a")["model"] == "m1"
    assert jobs.current("cases-b") is None and JOB_KEY not in jobs.state
    with pytest.raises(RuntimeError, match="no live job"):
        jobs.run(cases)


def test_a_model_asked_again_replaces_its_earlier_replies_and_keeps_the_others(jobs, cases):
    with ChatServer("ok") as srv:
        for model in ("m1", "m2", "m1"):
            jobs.start("cases-a", srv.url, model, 2, 0)
            jobs.run(cases)
    assert [r.model for r in jobs.state[ROWS_KEY]] == ["m2"] * 3 + ["m1"] * 3
    assert srv.paths().count("/chat") == 6  # m1's second run came from its checkpoint


def test_the_cli_report_is_the_run_functions_report(tmp_path):
    """``python -m evaluators dialogue`` writes json_report_text(run_dialogue(...)): the page's download for the demo."""
    import subprocess
    import sys

    from evaluators.demo import demo_path
    from evaluators.dialogue import DialogueInputs, load_predictions, run_dialogue
    from evaluators.reports.dialogue import json_report
    from tests.conftest import ROOT

    names = ("panda-chat-large.jsonl", "panda-chat-small_report.json")
    case_file = demo_path("dialogue", "persona_cases.json")
    case_set = load_cases(case_file.read_bytes(), case_file.name)
    preds = [load_predictions(demo_path("dialogue", n).read_bytes(), n) for n in names]
    report = run_dialogue(DialogueInputs.of(case_set, preds))
    proc = subprocess.run([sys.executable, "-m", "evaluators", "dialogue", "--cases", str(case_file),
                           *[a for n in names for a in ("--pred", str(demo_path("dialogue", n)))], "--format", "json"],
                          check=False, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    page = json.loads(json.dumps(json_report(report), ensure_ascii=False))
    cli["evaluation_info"].pop("timestamp"), page["evaluation_info"].pop("timestamp")
    assert cli == page
    assert [m["model"] for m in cli["by_model"]] == report.models and len(report.models) == 2
