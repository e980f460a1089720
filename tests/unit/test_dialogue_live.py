"""Live mode against real HTTP servers started here on 127.0.0.1 (normal, slow, failing, flaky)."""

import json

import pytest

from evaluators.cli import main
from evaluators.dialogue import DialogueConfig, evaluate_dialogue, load_cases
from evaluators.dialogue.live import ChatClient, EndpointConfig, EndpointError, run_live
from tests.helpers.http_servers import ChatServer

CASES = {"test_cases_by_scene": {
    "s1": [{"context": "你好", "expected_response": "你好呀", "dialogue_index": 1},
           {"context": "再见", "expected_response": "再见啦", "dialogue_index": 2}],
    "s2": [{"context": "Hello", "expected_response": "Hello there", "dialogue_index": 1}],
}}


@pytest.fixture
def cases():
    return load_cases(json.dumps(CASES, ensure_ascii=False).encode(), "cases.json").cases


def _cfg(url, **kw):
    return EndpointConfig(url, "peppa-test", **{"timeout_s": 2.0, "max_retries": 1, "backoff_s": 0.01, **kw})


def test_live_run_asks_each_case_and_resets_per_scene(cases):
    with ChatServer("ok") as srv:
        seen = []
        run = run_live(cases, _cfg(srv.url), progress=lambda d, t, row: seen.append((d, t)))
    assert [r.prediction for r in run.rows] == ["你好呀 (peppa-test)", "再见呀 (peppa-test)", "Hello呀 (peppa-test)"]
    assert srv.paths() == ["/reset", "/chat", "/chat", "/reset", "/chat", "/reset"]
    assert srv.log[1][1] == {"message": "你好", "model_config_name": "peppa-test"}
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert (run.n_called, run.n_errors, run.n_resumed) == (3, 0, 0)


def test_slow_endpoint_times_out_and_errors_are_recorded_per_case(cases):
    with ChatServer("slow", delay=0.6) as srv:
        run = run_live(cases, _cfg(srv.url, timeout_s=0.2, max_retries=1))
    assert run.n_errors == 3 and all(r.prediction == "" for r in run.rows)
    assert all("timed out after 0.2 s" in r.error and "after 2 attempt(s)" in r.error for r in run.rows)
    assert srv.paths().count("/chat") == 6  # 1 try + 1 retry per case, the run went on


def test_failing_endpoint_and_missing_response_field(cases):
    with ChatServer("fail") as srv:
        run = run_live(cases[:1], _cfg(srv.url, max_retries=2))
    assert "HTTP 500" in run.rows[0].error and srv.paths().count("/chat") == 3
    with ChatServer("bad_json") as srv:
        with pytest.raises(EndpointError, match="no text 'response'"):
            ChatClient(_cfg(srv.url)).chat("hi")


def test_flaky_endpoint_succeeds_on_retry(cases):
    with ChatServer("flaky") as srv:
        run = run_live(cases, _cfg(srv.url, max_retries=1))
    assert run.n_errors == 0 and run.rows[0].prediction.startswith("你好呀")
    assert srv.paths().count("/chat") == 6


def test_unreachable_endpoint_records_errors():
    with ChatServer("ok") as srv:
        url = srv.url
    # the server is closed now: connection refused
    cases = load_cases(json.dumps(CASES, ensure_ascii=False).encode(), "c.json").cases
    run = run_live(cases[:1], _cfg(url, max_retries=0))
    assert run.n_errors == 1 and "Connection" in run.rows[0].error
    assert run.reset_errors  # resets failed too, and the run still finished


def test_resume_from_checkpoint_skips_answered_cases(cases, tmp_path):
    ckpt = tmp_path / "run.jsonl"
    with ChatServer("fail_one") as srv:
        first = run_live(cases, _cfg(srv.url, max_retries=0), checkpoint=ckpt)
    assert first.n_errors == 1 and len(ckpt.read_text(encoding="utf-8").splitlines()) == 3
    with ChatServer("ok") as srv:
        # stopped before the one case still to ask: nothing is sent, both replies of the checkpoint are listed
        partial = run_live(cases, _cfg(srv.url), checkpoint=ckpt, should_stop=lambda: True)
        assert partial.stopped and (partial.n_called, partial.n_resumed) == (0, 2) and srv.log == []
        assert [(r.scene, r.dialogue_index) for r in partial.rows] == [("s1", "1"), ("s2", "1")]
        second = run_live(cases, _cfg(srv.url), checkpoint=ckpt)
    # only the failed case is asked again; the others come from the checkpoint
    assert (second.n_called, second.n_resumed, second.n_errors) == (1, 2, 0)
    assert [b["message"] for p, b in srv.log if p == "/chat"] == ["再见"]
    # resumed run: a reset before the first scene still to ask and after it; scene s2 was complete
    assert srv.paths() == ["/reset", "/chat", "/reset"]
    assert [r.prediction for r in second.rows][1] == "再见呀 (peppa-test)"


def test_live_rows_are_scored_with_errors_as_missing(cases):
    with ChatServer("fail_one") as srv:
        run = run_live(cases, _cfg(srv.url, max_retries=0))
    ev = evaluate_dialogue(cases, run.rows, DialogueConfig(metrics=("exact_match_normalized",), weights={"exact_match_normalized": 1.0}))
    statuses = [(r.status, r.error is not None) for r in ev.results]
    assert statuses == [("compared", False), ("missing", True), ("compared", False)]
    assert ev.by_model[0].n_errors == 1


def test_cli_live_mode(tmp_path, capsys):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    with ChatServer("ok") as srv:
        code = main(["dialogue", "--cases", str(cases), "--endpoint", srv.url, "--model", "m1", "--timeout", "2",
                     "--metrics", "exact_match_normalized,fuzzy_ratio", "--weights", "exact_match_normalized=0.5,fuzzy_ratio=0.5"])
    assert code == 0
    captured = capsys.readouterr()
    assert "m1: 3 called, 0 resumed, 0 errors" in captured.err
    assert "m1:" in captured.out and "Average fuzzy_ratio" in captured.out


def test_a_checkpoint_cut_mid_line_loses_no_later_reply(cases, tmp_path):
    ckpt = tmp_path / "run.jsonl"
    with ChatServer("ok") as srv:
        run_live(cases, _cfg(srv.url), checkpoint=ckpt)
        lines = ckpt.read_text(encoding="utf-8").splitlines()
        ckpt.write_text(lines[0] + "\n" + lines[1][:15], encoding="utf-8")  # interrupted while writing line 2
        resumed = run_live(cases, _cfg(srv.url), checkpoint=ckpt)
        assert (resumed.n_called, resumed.n_resumed) == (2, 1)
        # every reply of the resumed run is readable from the checkpoint: a third run asks nothing
        n_chat = srv.paths().count("/chat")
        third = run_live(cases, _cfg(srv.url), checkpoint=ckpt)
    assert (third.n_called, third.n_resumed) == (0, 3) and srv.paths().count("/chat") == n_chat
    assert [r.prediction for r in third.rows] == [r.prediction for r in resumed.rows]


@pytest.mark.parametrize("extra, message", [
    (["--endpoint", "file:///etc/passwd#"], "only http:// and https:// URLs are accepted, not file://"),
    (["--endpoint", "gopher://127.0.0.1:70/"], "not gopher://"),
    (["--endpoint", "http://127.0.0.1:9", "--timeout", "0"], "timeout must be > 0 seconds"),
    (["--endpoint", "http://127.0.0.1:9", "--retries", "-1"], "retries must be >= 0"),
])
def test_cli_live_mode_unusable_settings_exit_2_before_any_request(tmp_path, capsys, extra, message):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    assert main(["dialogue", "--cases", str(cases), "--model", "m1", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "root:" not in err and "unexpected" not in err


def test_cli_live_mode_checkpoint_that_cannot_be_written_exits_2(tmp_path, capsys):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with ChatServer("ok") as srv:
        code = main(["dialogue", "--cases", str(cases), "--endpoint", srv.url, "--model", "m1",
                     "--checkpoint", str(blocker / "c.jsonl")])
    assert code == 2 and srv.log == []
    assert f"cannot write the checkpoint {blocker / 'c.jsonl'}" in capsys.readouterr().err
