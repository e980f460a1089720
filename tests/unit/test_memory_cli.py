"""`python -m evaluators memory`: scoring, judging against a local endpoint with a cache, errors."""

from __future__ import annotations

import csv
import io
import json

import pytest

from evaluators.cli import main
from evaluators.memory.records import EvalResult, results_to_jsonl
from tests.helpers.http_servers import FakeJudgeServer

RESULTS = [
    EvalResult("s", "a", "single_hop", "Where does Ann live?", "Oslo", "Ann lives in Oslo."),
    EvalResult("s", "b", "temporal", "When did she move?", "May 2023", "June 2023"),
    EvalResult("s", "c", "adversarial", "What is her cat called?", "Not mentioned in the conversation",
               "没有提到猫。", abstention=True),
    EvalResult("t", "d", "single_hop", "小王住在哪里？", "成都", "成都"),
]


@pytest.fixture
def files(tmp_path, monkeypatch):
    for var in ("EVALBOARD_JUDGE_BASE_URL", "EVALBOARD_JUDGE_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    path = tmp_path / "results.jsonl"
    path.write_text(results_to_jsonl(RESULTS), encoding="utf-8")
    return tmp_path, path


def test_judge_with_cache_then_offline_rerun(files, monkeypatch, capsys):
    tmp, path = files
    cache = tmp / "cache.json"
    out = tmp / "report.json"
    with FakeJudgeServer() as server:
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "cli-judge")
        args = ["memory", "--results", str(path), "--metrics", "judge_score,locomo_f1", "--judge",
                "--cache", str(cache), "--out", str(out)]
        assert main(args) == 0
        # a, b, d need the LLM (continuous mode); c is adversarial, decided by the rule
        assert len(server.requests) == 3
        report = json.loads(out.read_text(encoding="utf-8"))
        # judge: a 1 (Oslo in the answer), b 0, c 1 (declines), d 1 -> overall 3/4
        assert report["metrics"]["overall"]["judge_score"] == pytest.approx(0.75)
        assert report["metrics"]["by_type"]["single_hop"] == {
            "count": 2, "judge_score": 1.0, "judged": 2,
            # LoCoMo F1: a = [oslo] vs [ann, live, in, oslo] -> P=1/4, R=1 -> 0.4; d = 1.0 -> mean 0.7
            "locomo_f1": pytest.approx(0.7),
            # 95% bootstrap intervals over the two questions: resample means of (1, 1) are all 1; of
            # (0.4, 1.0) they are 0.4, 0.7, 1.0 with probabilities 1/4, 1/2, 1/4 -> 2.5th and 97.5th
            # percentiles 0.4 and 1.0
            "judge_score_ci_low": 1.0, "judge_score_ci_high": 1.0,
            "locomo_f1_ci_low": pytest.approx(0.4), "locomo_f1_ci_high": pytest.approx(1.0)}
        assert report["metrics"]["ci"].startswith("bootstrap(percentile, mean, n_resamples=10000")
        assert report["judge"]["n_judged"] == 4 and report["judge"]["n_cached"] == 0
        # rerun with the cache: nothing asked again
        assert main(args) == 0
        assert len(server.requests) == 3
        assert json.loads(out.read_text(encoding="utf-8"))["judge"]["n_cached"] == 4
    # offline: the cache alone is enough, no --judge, no endpoint
    assert main(["memory", "--results", str(path), "--metrics", "judge_score", "--cache", str(cache),
                 "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "| overall | 4 | 0.7500 |" in text
    # --write-cache: the verdicts of these four questions (the page's download), in the store's layout, in the
    # questions' order (the store saved them as they arrived: c, decided by the rule, first)
    export = tmp / "export.json"
    assert main(["memory", "--results", str(path), "--metrics", "judge_score", "--cache", str(cache),
                 "--write-cache", str(export), "--format", "md"]) == 0
    written, stored = (json.loads(f.read_text(encoding="utf-8")) for f in (export, cache))
    assert written == stored and list(written["entries"]) == ["a", "b", "c", "d"]
    # no judge cache at all: nothing to write, and said so
    export.unlink()
    capsys.readouterr()
    assert main(["memory", "--results", str(path), "--metrics", "locomo_f1", "--write-cache", str(export),
                 "--format", "md"]) == 0
    assert not export.exists() and "no judge verdict for these questions" in capsys.readouterr().err


def test_csv_and_markdown_outputs(files, capsys):
    _, path = files
    assert main(["memory", "--results", str(path), "--metrics", "locomo_f1", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["question_id"] for r in rows] == ["a", "b", "c", "d"]
    assert float(rows[3]["locomo_f1"]) == 1.0 and rows[3]["question"] == "小王住在哪里？"
    # c: LoCoMo's adversarial check wants "not mentioned" / "no information available": 没有提到 is 0 there
    assert float(rows[2]["locomo_f1"]) == 0.0
    assert main(["memory", "--results", str(path), "--metrics", "locomo_f1", "--parity", "locomo",
                 "--format", "md"]) == 0
    assert "## LoCoMo parity F1 (published scoring code)" in capsys.readouterr().out


def test_unusable_input_exits_2_with_the_reason(files, capsys):
    tmp, path = files
    assert main(["memory"]) == 2
    assert "give --results" in capsys.readouterr().err
    bad = tmp / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    assert main(["memory", "--results", str(bad), "--metrics", "judge_score"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1" in err and "no usable question" in err
    assert main(["memory", "--results", str(path), "--judge", "--metrics", "judge_score"]) == 2
    assert "EVALBOARD_JUDGE_BASE_URL" in capsys.readouterr().err
    assert main(["memory", "--results", str(path), "--metrics", "nope"]) == 2
    assert "unknown metric(s) ['nope']" in capsys.readouterr().err
    # not in the cache and no endpoint: the judge says what is missing; without --judge the cache is read
    # only (as the page reads one), so the adversarial c is not judged by the rule either: 4 of 4 missing
    assert main(["memory", "--results", str(path), "--metrics", "judge_score", "--cache", str(tmp / "c.json")]) == 2
    assert "4 question(s) are not in the judge cache" in capsys.readouterr().err


def test_judge_where_every_request_fails_exits_1_and_keeps_the_report(files, monkeypatch, capsys):
    tmp, path = files
    cache, out = tmp / "cache.json", tmp / "report.json"
    with FakeJudgeServer() as server:
        server.status_override = 401  # not retried: one request per question
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "cli-judge")
        args = ["memory", "--results", str(path), "--metrics", "judge_score,token_f1_char", "--judge",
                "--cache", str(cache), "--out", str(out)]
        assert main(args) == 1
        err = capsys.readouterr().err
        # a, b, d asked the endpoint and failed; c (adversarial) was decided by the rule without a request
        assert "judge: 3 of 3 judge request(s) of this run failed" in err
        assert "3 x request failed: HTTP 401 Unauthorized from 127.0.0.1:" in err and "every judge request failed" in err
        report = json.loads(out.read_text(encoding="utf-8"))
        assert report["metrics"]["overall"]["count"] == 4 and report["judge"]["n_errors"] == 3

        server.status_override = None  # the endpoint is back: only the three failed questions are asked
        assert main(args) == 0
        assert len(server.requests) == 6
        assert "judge:" not in capsys.readouterr().err


def test_judge_with_some_failed_requests_exits_0_with_a_summary(files, monkeypatch, capsys):
    tmp, path = files
    bad = EvalResult("t", "e", "single_hop", "FAIL?", "x", "FAIL")  # the fake server answers HTTP 500
    path.write_text(results_to_jsonl([*RESULTS, bad]), encoding="utf-8")
    with FakeJudgeServer() as server:
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "cli-judge")
        monkeypatch.setenv("EVALBOARD_JUDGE_MAX_RETRIES", "0")
        assert main(["memory", "--results", str(path), "--metrics", "judge_score", "--judge"]) == 0
    err = capsys.readouterr().err
    assert "judge: 1 of 4 judge request(s) of this run failed" in err and "every judge request" not in err


def test_file_problems_exit_2_naming_the_file_and_send_nothing(files, monkeypatch, capsys):
    tmp, path = files
    assert main(["memory", "--results", str(path), "--metrics", "token_f1_char",
                 "--labels", str(tmp / "no-labels.jsonl")]) == 2
    assert f"cannot read the labels file {tmp / 'no-labels.jsonl'}" in capsys.readouterr().err
    blocker = tmp / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    assert main(["memory", "--results", str(path), "--metrics", "token_f1_char", "--out", str(blocker / "r.json")]) == 2
    assert f"cannot write the report {blocker / 'r.json'}" in capsys.readouterr().err
    with FakeJudgeServer() as server:
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "cli-judge")
        code = main(["memory", "--results", str(path), "--metrics", "judge_score", "--judge",
                     "--cache", str(blocker / "cache.json")])
    assert code == 2 and server.requests == []  # the cache cannot be written: fails before any request
    assert f"cannot write the judge cache {blocker / 'cache.json'}" in capsys.readouterr().err


def test_judge_url_that_is_not_http_exits_2_before_any_request(files, capsys):
    _, path = files
    code = main(["memory", "--results", str(path), "--metrics", "judge_score", "--judge",
                 "--base-url", "file:///etc/passwd#", "--model", "m"])
    err = capsys.readouterr().err
    assert code == 2 and "only http:// and https:// URLs are accepted, not file://" in err and "root:" not in err


def test_earlier_metric_names_are_read_and_the_registry_names_written(files, capsys):
    _, path = files
    # f1 and exact_match were memory's own names for the registry's token_f1_char and exact_match_normalized
    assert main(["memory", "--results", str(path), "--metrics", "f1,exact_match", "--ci-resamples", "0",
                 "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["metrics"]["metrics"] == ["token_f1_char", "exact_match_normalized"]
    single_hop = report["metrics"]["by_type"]["single_hop"]
    assert "f1" not in single_hop and "exact_match" not in single_hop
    # a: "Oslo" vs "Ann lives in Oslo." -> tokens [oslo] / [ann, lives, in, oslo]: P 1/4, R 1, F1 0.4; not equal
    # d: 成都 vs 成都 -> F1 1, equal; single_hop means 0.7 and 0.5
    assert single_hop["token_f1_char"] == pytest.approx(0.7) and single_hop["exact_match_normalized"] == 0.5


def test_questions_with_a_judge_output_score_its_hypotheses_and_say_so(tmp_path, capsys):
    questions = [{"question_id": "t1", "question_type": "temporal-reasoning", "question": "When?", "answer": "May"},
                 {"question_id": "t2", "question_type": "temporal-reasoning", "question": "几月？", "answer": "五月"}]
    (tmp_path / "q.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "out.eval-results").write_text(json.dumps(
        {"question_id": "t2", "hypothesis": "五月", "autoeval_label": {"model": "m", "label": True}},
        ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["memory", "--questions", str(tmp_path / "q.json"), "--labels", str(tmp_path / "out.eval-results"),
                 "--metrics", "judge_score,token_f1_char", "--format", "md", "--ci-resamples", "0"]) == 0
    captured = capsys.readouterr()
    # only t2 was judged: its hypothesis is the prediction (五月 = 五月: F1 1), its label the judge score
    assert "| overall | 1 | 1.0000 | 1.0000 |" in captured.out
    note = f"Predictions: the 1 hypotheses in {tmp_path / 'out.eval-results'}; the other 1 question(s)"
    from tests.pages.helpers import shown  # Markdown output: file names are escaped (evaluators.reports.escape.md)

    assert f"note: {note}" in captured.err and f"Note: {note}" in shown(captured.out)


def test_judge_calls_file_is_shared_with_a_later_run_and_refuses_a_json_file(files, monkeypatch, capsys):
    tmp, path = files
    calls = tmp / "judge_calls.sqlite"
    with FakeJudgeServer() as server:
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "cli-judge")
        args = ["memory", "--results", str(path), "--metrics", "judge_score", "--judge", "--judge-calls", str(calls),
                "--format", "json"]
        assert main(args + ["--judge-rate", "-1"]) == 2 and "rate must be >= 0" in capsys.readouterr().err
        assert main(args + ["--judge-rate", "50"]) == 0 and len(server.requests) == 3  # a, b, d; c by the rule
        first = json.loads(capsys.readouterr().out)
        # no --cache (no judgement record): the second run's requests are all answered by the call cache file
        assert main(args) == 0 and len(server.requests) == 3
        assert json.loads(capsys.readouterr().out)["metrics"] == first["metrics"]
        bad = tmp / "old.json"
        bad.write_text("{}", encoding="utf-8")
        assert main(args[:-4] + ["--judge-calls", str(bad)]) == 2
        assert "not a judge call cache" in capsys.readouterr().err and len(server.requests) == 3
