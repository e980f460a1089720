"""Systems side by side, the paired comparison CLI and the HTML report, on hand-checked data.

The demo ``qa_systems_demo.jsonl`` has three systems on 16 questions.  Exact match per system
(SQuAD v1.1 normalisation for English, CMRC 2018 for Chinese), derived by hand:

- baseline-7b right on en-01 (Mars), en-08 (7), zh-02 (曹雪芹), zh-06 (H2O), zh-08 (12个月): 5 / 16
- rag-7b right on en-01, en-02, en-04, en-05 ("Pacific Ocean" = "the Pacific Ocean" after removing
  articles), en-07, zh-01, zh-05, zh-06, zh-07, zh-08: 10 / 16 ("seven continents", 作者是曹雪芹,
  约6300公里, the empty zh-04 and en-03/en-06 are wrong)
- rag-70b right on en-01..05, en-08, zh-01..04, zh-07: 11 / 16
- every system right on en-01 only, every system wrong on en-06 only: 14 rows disagree.
"""

from __future__ import annotations

import json
import re

import pytest
from scipy.stats import binomtest

from evaluators.cli import main
from evaluators.qa import QAConfig, evaluate_qa, evaluate_qa_file
from evaluators.qa.compare import compare_records, runs_of, side_by_side
from evaluators.reports.qa import matrix_csv, matrix_rows
from evaluators.reports.html import HtmlReport, comparison_report, qa_report
from tests.conftest import ROOT, require_shared

DEMO = ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl"


@pytest.fixture(scope="module")
def demo_runs():
    return runs_of([evaluate_qa_file(DEMO, QAConfig(ci_resamples=0))])


def test_runs_of_splits_a_file_by_its_system_field(demo_runs):
    assert list(demo_runs) == ["baseline-7b", "rag-7b", "rag-70b"]
    assert [len(v) for v in demo_runs.values()] == [16, 16, 16]


def test_side_by_side_scores_and_agreement_equal_the_hand_count(demo_runs):
    view = side_by_side(demo_runs, n_resamples=2000)
    assert [s.exact_match for s in view.scores] == [5 / 16, 10 / 16, 11 / 16]
    assert view.counts == {"disagree": 14, "all_wrong": 1, "all_correct": 1, "incomplete": 0}
    row = {r.id: r for r in view.rows}
    assert row["en-01"].agreement == "all_correct" and row["en-06"].agreement == "all_wrong"
    assert row["zh-04"].predictions == ("土星", "", "木星") and row["zh-04"].exact_match == (0.0, 0.0, 1.0)
    for s in view.scores:  # the interval holds the mean and lies in [0, 1]
        assert 0 <= s.exact_match_ci_low <= s.exact_match <= s.exact_match_ci_high <= 1


def test_a_record_missing_in_one_run_is_incomplete_and_left_out_of_its_mean():
    a = evaluate_qa(b'{"id":"1","answer":"x","final_answer":"x"}\n{"id":"2","answer":"y","final_answer":"n"}\n',
                    "a.jsonl", QAConfig(ci_resamples=0))
    b = evaluate_qa(b'{"id":"1","answer":"x","final_answer":"x"}\n', "b.jsonl", QAConfig(ci_resamples=0))
    view = side_by_side(runs_of([a, b]), n_resamples=0)
    assert view.systems == ("a.jsonl", "b.jsonl")
    assert [s.exact_match for s in view.scores] == [0.5, 1.0]  # a: (1 + 0) / 2, b: 1 / 1
    assert view.counts["incomplete"] == 1 and view.rows[1].exact_match == (0.0, None)
    assert view.scores[0].exact_match_ci_low is None  # no resamples asked for


def test_paired_comparison_mcnemar_equals_the_binomial_test(demo_runs):
    c = compare_records(demo_runs["baseline-7b"], demo_runs["rag-70b"], "baseline-7b", "rag-70b", n_resamples=2000)
    mc = c.exact_match_mcnemar
    # right in baseline only: zh-06 (H2O vs 水的化学式是H2O), zh-08 (12个月 vs 十二)
    # right in rag-70b only: en-02, en-03, en-04, en-05, zh-01, zh-03, zh-04, zh-07
    assert (mc.only_a, mc.only_b, mc.both, mc.neither) == (2, 8, 3, 3)
    assert mc.p_value == pytest.approx(2 * (1 + 10 + 45) / 2 ** 10)  # two-sided exact binomial, n = 10, k = 2
    assert mc.p_value == pytest.approx(binomtest(2, 10, 0.5).pvalue)
    assert c.exact_match_bootstrap.delta == pytest.approx(11 / 16 - 5 / 16)


def test_grouped_json_comparison_file_reads_as_systems(tmp_path):
    data = {"sysA": [{"question_id": "q1", "gold_answer": "Paris", "predicted_answer": "Paris"},
                     {"question_id": "q2", "gold_answer": "Rome", "predicted_answer": "Milan"}],
            "sysB": [{"question_id": "q1", "gold_answer": "Paris", "predicted_answer": "paris"},
                     {"question_id": "q2", "gold_answer": "Rome", "predicted_answer": "Rome"}]}
    report = evaluate_qa(json.dumps(data).encode(), "cmp.json", QAConfig(ci_resamples=0))
    assert report.group_field == "system"
    assert {k: v.exact_match for k, v in report.by_group.items()} == {"sysA": 0.5, "sysB": 1.0}


def test_hotpotqa_comparison_file_matches_the_repositorys_own_summaries():
    folder = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "comparison_20251210_140921")
    report = evaluate_qa_file(folder / "all_per_question.json", QAConfig(ci_resamples=0))
    summaries = json.loads((folder / "all_summaries.json").read_text(encoding="utf-8"))
    assert set(report.by_group) == set(summaries)
    for name, s in summaries.items():
        assert report.by_group[name].n == s["num_questions"]
        assert report.by_group[name].exact_match == pytest.approx(s["answer_metrics"]["avg_em"])
        assert report.by_group[name].token_f1 == pytest.approx(s["answer_metrics"]["avg_f1"])


def test_compare_cli_prints_the_same_figures_and_writes_json_csv_html(tmp_path, capsys):
    out = tmp_path / "cmp.json"
    assert main(["compare", "--input", str(DEMO), "--b", "rag-70b", "--ci-resamples", "2000",
                 "--output-file", str(out)]) == 0
    text = capsys.readouterr().out
    assert "baseline-7b  16  31.25%" in text and "right in A only 2, in B only 8, exact p = 0.1094" in text
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["comparison"]["exact_match_mcnemar"]["only_b"] == 8
    assert [s["exact_match"] for s in data["scores"]] == [5 / 16, 10 / 16, 11 / 16]
    csv_out = tmp_path / "cmp.csv"
    assert main(["compare", "--input", str(DEMO), "--ci-resamples", "0", "--output-file", str(csv_out)]) == 0
    header = csv_out.read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("id,agreement,question,gold_answers,baseline-7b: prediction")
    html_out = tmp_path / "cmp.html"
    assert main(["compare", "--input", str(DEMO), "--ci-resamples", "200", "--output-file", str(html_out)]) == 0
    assert "<h2>rag-7b against baseline-7b</h2>" in html_out.read_text(encoding="utf-8")


def test_compare_cli_refuses_one_run_and_unknown_systems(tmp_path, capsys):
    single = ROOT / "evaluators" / "demo" / "qa" / "qa_demo.jsonl"
    assert main(["compare", "--input", str(single)]) == 2
    assert "one run only" in capsys.readouterr().err
    assert main(["compare", "--input", str(DEMO), "--a", "nope"]) == 2
    assert "no system named 'nope'" in capsys.readouterr().err


def test_matrix_csv_goes_through_the_one_writer(demo_runs):
    view = side_by_side(demo_runs, n_resamples=0)
    rows = matrix_rows(view)
    assert rows[0]["rag-70b: exact_match"] == 1.0
    view_rows = list(view.rows)
    hostile = type(view)(("=cmd",), view.scores[:1], (type(view_rows[0])("=1+1", "@q", ("+g",), ("-p",), (1.0,),
                                                                          (1.0,), "all_correct"),), {})
    text = matrix_csv(hostile, "sig")
    assert "'=1+1" in text and "'@q" in text and "'-p" in text and "'=cmd: prediction" in text


def test_html_report_escapes_text_and_loads_nothing():
    page = HtmlReport("<script>alert(1)</script>", "sub <b>x</b>")
    page.table(["<i>col</i>"], [["<img src=x onerror=alert(1)>"], [None], [0.5]])
    html = page.render()
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'http-equiv="Content-Security-Policy"' in html and "default-src 'none'" in html
    assert not re.search(r'(src|href)="https?:', html)  # no external resource
    assert "plotly" not in html.lower()  # no chart, no plotly.js


def test_qa_report_and_comparison_report_draw_static_charts_without_script(demo_runs):
    report = evaluate_qa_file(DEMO, QAConfig(ci_resamples=200))
    html = qa_report(report)
    assert "<script" not in html and "plotly" not in html.lower()  # inline SVG, no 4.8 MB plotly.js
    assert html.count('<figure class="chart">') == 1 and html.count('class="bar"') == 6  # 3 systems x EM, F1
    assert "EM and F1 by system (95% CI)" in html
    view = side_by_side(demo_runs, n_resamples=200)
    html = comparison_report(view, None, "sig")
    assert "Records x systems" in html and "signature: sig" in html


def test_summary_and_systems_csv_carry_the_intervals(tmp_path, capsys):
    import csv
    import io

    out = tmp_path / "summary.csv"
    assert main(["qa", "--input", str(DEMO), "--ci-resamples", "500", "--summary-csv", str(out)]) == 0
    rows = {r["subset"]: r for r in csv.DictReader(io.StringIO(out.read_text(encoding="utf-8")))}
    assert float(rows["overall"]["exact_match"]) == pytest.approx(26 / 48)
    assert float(rows["system=rag-70b"]["exact_match"]) == pytest.approx(11 / 16)
    for r in rows.values():
        assert float(r["exact_match_ci_low"]) <= float(r["exact_match"]) <= float(r["exact_match_ci_high"])
    systems = tmp_path / "systems.csv"
    assert main(["compare", "--input", str(DEMO), "--ci-resamples", "500", "--systems-csv", str(systems)]) == 0
    lines = systems.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("system,n,exact_match,exact_match_ci_low,exact_match_ci_high,token_f1")
    assert lines[1].startswith("baseline-7b,16,0.3125,")


def test_zero_resamples_say_no_interval_or_p_value_was_computed(tmp_path, capsys):
    # the old CLI ran the paired tests with one resample: "95% CI +14.90 to +14.90, p = 0"
    out = tmp_path / "cmp.json"
    assert main(["compare", "--input", str(DEMO), "--ci-resamples", "0", "--output-file", str(out)]) == 0
    text = capsys.readouterr().out
    # rag-7b against baseline-7b: EM 10/16 - 5/16 = +31.25 points, shown without an interval
    assert "EM: 31.25% -> 62.50%, delta +31.25 points, no interval or p-value computed" in text
    assert "95% CI" not in text.split("Paired comparison")[1] and "p = 0 " not in text
    assert "exact p = 0.1797" in text  # McNemar needs no resample: 2 vs 7 discordant, 2*(1+9+36)/512
    c = json.loads(out.read_text(encoding="utf-8"))["comparison"]
    for key in ("token_f1_bootstrap", "exact_match_bootstrap", "token_f1_randomization"):
        assert (c[key]["ci_low"], c[key]["ci_high"], c[key]["p_value"], c[key]["n_resamples"]) == (None, None, None, 0)
        assert "no interval or p-value computed" in c[key]["method"]
    html_out = tmp_path / "cmp.html"
    assert main(["report", "--input", str(DEMO), "--ci-resamples", "0", "--out", str(html_out)]) == 0
    html = html_out.read_text(encoding="utf-8")
    assert "No interval or p-value was computed" in html and "no interval computed" in html


def test_a_p_value_below_the_resolution_prints_as_a_bound(tmp_path, capsys):
    # 40 questions, A always wrong and B always right: every paired difference is +1, so no
    # resampled difference is <= 0 and p is below 1 / (R + 1) = 1 / 10,001 (the old CLI printed p = 0)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(f'{{"id":"{i}","answer":"yes {i}","final_answer":"no"}}\n' for i in range(40)))
    b.write_text("".join(f'{{"id":"{i}","answer":"yes {i}","final_answer":"yes {i}"}}\n' for i in range(40)))
    out = tmp_path / "cmp.json"
    assert main(["compare", "--input", str(a), "--input", str(b), "--output-file", str(out)]) == 0
    text = capsys.readouterr().out
    assert "p < 0.0001 (paired bootstrap), p < 0.0001 (approximate randomization)" in text
    assert "p = 0 " not in text and "p = 0," not in text
    c = json.loads(out.read_text(encoding="utf-8"))["comparison"]["token_f1_bootstrap"]
    assert c["p_value"] == 1 / 10_001 and c["p_value_is_bound"] is True


def test_compare_cli_scores_systems_on_their_common_records(tmp_path, capsys):
    """Issue 26: systems scored on different record sets were printed side by side without a word.
    a: 4 records, 3 right (ids 1-4); b: 2 records (ids 1, 2), both right.  Common = {1, 2}:
    a's EM there is 1/2 (id 1 right, id 2 wrong), b's 2/2; a's own EM 3/4."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps({"id": str(i), "answer": "x", "final_answer": p}) + "\n"
                         for i, p in ((1, "x"), (2, "y"), (3, "x"), (4, "x"))), encoding="utf-8")
    b.write_text("".join(json.dumps({"id": str(i), "answer": "x", "final_answer": "x"}) + "\n" for i in (1, 2)),
                 encoding="utf-8")
    assert main(["compare", str(a), str(b), "--ci-resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert f"n common = 2 records; own n: {a} 4, {b} 2" in out
    line_a = next(line for line in out.splitlines() if line.startswith(str(a)))
    assert line_a.split()[:4] == [str(a), "4", "2", "50.00%"] and line_a.split()[-2] == "75.00%"
    line_b = next(line for line in out.splitlines() if line.startswith(str(b)))
    assert line_b.split()[:4] == [str(b), "2", "2", "100.00%"]
    assert main(["compare", str(a), str(b), "--ci-resamples", "0", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["common"]["n_common"] == 2 and data["common"]["n_by_system"] == {str(a): 4, str(b): 2}
    assert [s["exact_match"] for s in data["common"]["scores"]] == [0.5, 1.0]
