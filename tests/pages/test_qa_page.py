"""AppTest for the QA / fact-check page: demo data, switches, cell choice, real uploads, bad input."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import require_shared
from evaluators.qa.fields import DEFAULT_PRED_FIELDS
from tests.pages.helpers import QA_PAGE, metric_values, run_page, shown, static_rows


def _app() -> AppTest:
    return run_page(QA_PAGE)


_metrics = metric_values


def _upload(at, name: str, data: bytes, key: str = "qa_upload") -> AppTest:
    at.radio(key="_source_widget").set_value("upload").run()
    at.file_uploader(key=key).upload(name, data).run()
    assert not at.exception, at.exception
    return at


def test_demo_factcheck_metrics_matrix_and_cell():
    at = _app()
    m = _metrics(at)
    # factcheck_demo.jsonl: 17 claims, fc-09 without a label (No GT); verdicts right on fc-01, 03, 10 (T),
    # 02, 06, 11, 14 (F), 05, 12, 16 (uncertain) -> 10 of 16 = 62.50% (a verdict's F1 is its EM)
    assert m["EM"] == "62.50%" and m["F1"] == "62.50%" and m["Scored"] == "16 / 17" and m["No GT"] == "1"
    assert any(s.value.startswith("Confusion matrix") for s in at.subheader)
    assert at.segmented_control(key="qa_view").options == ["Overview · 概览", "Records · 逐条结果",
                                                           "Confusion matrix · 混淆矩阵"]
    at.segmented_control(key="qa_view").set_value("matrix").run()
    at.selectbox(key="qa_cm_true").select("T")
    at.selectbox(key="qa_cm_pred").select("unparsed")
    at.run()
    assert not at.exception
    assert any("3 record(s) with true = T and predicted = unparsed" in shown(m.value).replace("**", "") for m in at.markdown)
    cell_rows = at.dataframe[0].value  # the chosen cell's records come first after the matrix
    assert sorted(cell_rows["id"]) == ["fc-08", "fc-15", "fc-17"]
    # layout and value switches rerun without error
    at.radio(key="qa_cm_rows").set_value("true")
    at.radio(key="qa_cm_values").set_value("normalized")
    at.run()
    assert not at.exception


def test_demo_qa_and_record_filters():
    at = _app()
    at.radio(key="qa_demo").set_value("qa").run()
    m = _metrics(at)
    assert m["EM"] == "36.36%"  # 4 of 11 scored records (en-01, en-04, en-05, zh-01 exact; en-06 has no GT)
    assert not any(s.value.startswith("Confusion matrix") for s in at.subheader)
    assert "matrix" not in at.segmented_control(key="qa_view").options  # no verdicts, no matrix view
    at.segmented_control(key="qa_view").set_value("records").run()
    at.checkbox[0].check().run()  # errors only
    assert any("7 of 12 records match the filters" in shown(c.value) for c in at.caption)
    at.text_input(key="qa_search").input("曹雪芹").run()
    assert any("1 of 12 records match the filters" in shown(c.value) for c in at.caption)


def test_upload_empty_state_and_bad_files():
    at = _app()
    at.radio(key="_source_widget").set_value("upload").run()
    assert at.info and "Upload a file" in at.info[0].value
    at.file_uploader(key="qa_upload").upload("broken.jsonl", b'{"answer": "a", "final_answer": "a"}\n{oops\n').run()
    assert not at.exception
    assert [e.label for e in at.expander if e.label.startswith("Input problems")] == [
        "Input problems: 1 error, 0 warnings — the rest of the data is still scored"]
    assert _metrics(at)["EM"] == "100.00%"
    at.file_uploader(key="qa_upload").set_value(("bad.jsonl", b"\xff\xfe\x81\x00\xfa", "text/plain")).run()
    assert not at.exception and at.error


def test_many_input_problems_are_folded_and_all_in_the_csv(deferred_downloads):
    good = b'{"answer": "a", "final_answer": "a"}\n'
    at = _upload(_app(), "broken.jsonl", good + b"{oops\n" * 25)
    assert any(e.label == "Input problems: 25 errors, 0 warnings — the rest of the data is still scored"
               for e in at.expander)
    # the same problem on 25 lines: one row with its lines and count, as the CLI prints it
    message = "invalid JSON on this line: Expecting property name enclosed in double quotes"
    assert static_rows(at, "severity") == [["error", "25", "broken.jsonl: line 2, 3, 4 … (25 lines)", message]]
    assert not at.dataframe
    rows = deferred_downloads["input_problems.csv"]().decode("utf-8-sig").splitlines()
    assert rows[0] == "severity,kind,file,line,path,message"
    assert [r.split(",")[3] for r in rows[1:]] == [str(n) for n in range(2, 27)]  # all 25 bad lines, after line 1


@pytest.mark.realdata
def test_upload_cfever_baseline():
    path = require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    # the baseline predicts "supports" on every row: EM = share of gold "supports" = 211/600 = 35.17%,
    # and constant predictions agree only by chance: Cohen's kappa 0
    assert {r["predicted_label"] for r in rows} == {"supports"}
    supports = sum(r["label"] == "supports" for r in rows)
    assert (supports, len(rows)) == (211, 600)
    at = _upload(_app(), path.name, path.read_bytes())
    m = _metrics(at)
    assert m["EM"] == f"{100 * supports / len(rows):.2f}%" == "35.17%"
    assert m["Cohen's kappa"] == "0.000" and m["Scored"] == "600 / 600"


@pytest.mark.realdata
def test_upload_hotpotqa_three_systems():
    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    summaries = json.loads(require_shared("qa_factcheck", "hotpotqa_vatsalp04", "comparison_20251210_140921",
                                          "all_summaries.json").read_text(encoding="utf-8"))
    at = _upload(_app(), path.name, path.read_bytes())
    # the first screen's static breakdown table: 33 of 50 = 66.00%, 22 of 50 = 44.00%
    overview = {r[0]: r for r in static_rows(at, "subset")}
    assert overview["system = Decomp_FullPipeline"][2] == "66.00%"
    assert overview["system = Decomp_SearchFallback"][2] == "44.00%"
    at.segmented_control(key="qa_view").set_value("records").run()
    breakdown = next(df.value for df in at.dataframe if "subset" in df.value.columns)
    em = dict(zip(breakdown["subset"], breakdown["exact_match"]))
    # the reference: the source repository's own all_summaries.json, answer_metrics.avg_em per system
    for system, summary in summaries.items():
        assert em[f"system = {system}"] == pytest.approx(summary["answer_metrics"]["avg_em"], abs=1e-12), system
    # ... which reads 0.66 (33 of 50) and 0.44 (22 of 50) for these two
    assert em["system = Decomp_FullPipeline"] == pytest.approx(0.66)
    assert em["system = Decomp_SearchFallback"] == pytest.approx(0.44)


def test_upload_squad_style_with_predictions():
    dataset = {"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "Q1", "question": "首都？", "answers": [{"text": "北京"}]},
        {"id": "Q2", "question": "Who?", "answers": [{"text": "Jane Austen"}]}]}]}]}
    at = _upload(_app(), "dev.json", json.dumps(dataset, ensure_ascii=False).encode())
    # no predictions yet: not a 0% result but a request for them
    assert not _metrics(at) and len(at.error) == 1
    assert shown(at.error[0].value) == (
        "dev.json: no prediction found in any of the 2 records (looked in: " + ", ".join(DEFAULT_PRED_FIELDS)
        + "); add predictions to the records, name their field, or give a predictions file {id: answer} "
        "(--predictions). Upload the predictions with the file (second uploader) or set the prediction field "
        "under Settings.")
    at.file_uploader(key="qa_pred_upload").upload("pred.json", json.dumps({"Q1": "北京", "Q2": "Austen"}).encode()).run()
    m = _metrics(at)
    assert m["EM"] == "50.00%" and m["F1"] == "83.33%"  # (1 + 2/3) / 2


def test_headline_shows_the_bootstrap_intervals_of_the_demo():
    from evaluators.demo import demo_path
    from evaluators.qa import QAConfig, evaluate_qa

    at = run_page(QA_PAGE, source="demo")
    shown_file = next(shown(c.value) for c in at.caption if shown(c.value).startswith("File: ")).split()[1]
    o = evaluate_qa(demo_path("qa", shown_file).read_bytes(), shown_file, QAConfig()).overall
    line = next(shown(c.value) for c in at.caption if shown(c.value).startswith("95% confidence intervals"))
    assert line.startswith(f"95% confidence intervals: EM {100 * o.exact_match_ci_low:.2f}% – "
                           f"{100 * o.exact_match_ci_high:.2f}%, F1 {100 * o.token_f1_ci_low:.2f}%")


def _chart_cells(at) -> list[int]:
    """The counts written in the cells of the static confusion matrix (SVG), row by row."""
    svg = next(m.value for m in at.markdown if "<figure class=\"chart\">" in m.value and 'class="cell"' in m.value)
    cells = re.findall(r'<rect class="cell"[^>]*>.*?</rect><text[^>]*>([\d,]+)</text>', svg)
    return [int(n.replace(",", "")) for n in cells]


@pytest.mark.parametrize("demo", ["factcheck", "qa", "systems"])
def test_the_first_screen_draws_no_grid_and_no_plotly_chart(demo):
    at = _app()
    at.radio(key="qa_demo").set_value(demo).run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="qa_view").value == "overview"
    assert not at.dataframe and not at.get("plotly_chart")
    assert len(at.download_button) == 4  # JSON, records CSV, HTML, summary CSV: on the first screen too


def test_the_overview_shows_the_confusion_matrix_and_per_class_scores_statically():
    at = _app()
    # factcheck_demo.jsonl, true labels on rows (T, F, uncertain, unparsed), predicted on columns:
    # T (7): 3 right (fc-01, 03, 10), 1 read as F, 3 unparsed (fc-08, 15, 17); F (5): 4 right, 1 read as T;
    # uncertain (4): 3 right, 1 read as T; no gold is "unparsed"
    assert _chart_cells(at) == [3, 1, 0, 3,
                                1, 4, 0, 0,
                                1, 0, 3, 0,
                                0, 0, 0, 0]
    rows = {r[0]: r for r in static_rows(at, "class")}
    # T: precision 3 / (3 + 1 + 1) = 60.00%, recall 3 / 7 = 42.86%, F1 2*3 / (2*3 + 2 + 4) = 50.00%, support 7
    assert rows["T"][1:4] == ["60.00%", "42.86%", "50.00%"] and rows["T"][5] == "7"
    # uncertain: precision 3 / 3, recall 3 / 4, F1 6 / 7 = 85.71%
    assert rows["uncertain"][1:4] == ["100.00%", "75.00%", "85.71%"]
    assert rows["unparsed"][2] == "—"  # no support: recall undefined, shown as a dash, never "None" or "nan"


def _frame(at, *columns: str):
    """The first table holding all ``columns`` (AppTest does not keep a dataframe's key)."""
    return next(d.value for d in at.dataframe if all(c in d.value.columns for c in columns))


def test_systems_demo_side_by_side_and_paired_comparison():
    at = _app()
    at.radio(key="qa_demo").set_value("systems").run()
    assert not at.exception, at.exception
    at.segmented_control(key="qa_view").set_value("systems").run()
    # qa_systems_demo.jsonl: EM 5 + 10 + 11 of 48 records = 26 / 48 = 54.17% (see tests/unit/test_qa_compare.py)
    assert _metrics(at)["EM"] == "54.17%"
    systems = _frame(at, "system", "EM 95% CI")
    assert list(systems["system"]) == ["baseline-7b", "rag-7b", "rag-70b"]
    assert list(systems["exact_match"]) == [5 / 16, 10 / 16, 11 / 16]
    agreement = at.radio(key="qa_sbs_agreement")
    assert agreement.options == ["All · 全部", "Systems disagree · 不一致 (14)", "All wrong · 全错 (1)",
                                 "All right · 全对 (1)"]
    agreement.set_value("all_wrong").run()
    assert list(_frame(at, "agreement", "rag-7b: prediction")["id"]) == ["en-06"]
    at.selectbox(key="qa_sbs_b").set_value("rag-70b").run()
    m = _metrics(at)
    # EM 11/16 - 5/16 = +37.50 points; McNemar 2 vs 8 discordant: p = 2 * (1 + 10 + 45) / 1024 = 0.1094
    assert m["EM delta"] == "+37.50 pts" and m["p (McNemar, EM)"] == "0.1094"
    at.radio(key="qa_sbs_outcome").set_value("lost").run()
    assert sorted(_frame(at, "outcome", "prediction B")["id"]) == ["zh-06", "zh-08"]


def test_uploaded_runs_are_compared_side_by_side():
    at = _app()
    a = b'{"id":"1","answer":"Paris","final_answer":"Paris"}\n{"id":"2","answer":"Rome","final_answer":"Milan"}\n'
    b = b'{"id":"1","answer":"Paris","final_answer":"Lyon"}\n{"id":"2","answer":"Rome","final_answer":"Rome"}\n'
    _upload(at, "run_a.jsonl", a)
    assert not at.get("subheader") or not any("side by side" in s.value for s in at.subheader)
    at.file_uploader(key="qa_more_runs").upload("run_b.jsonl", b).run()
    assert not at.exception, at.exception
    at.segmented_control(key="qa_view").set_value("systems").run()
    systems = _frame(at, "system", "EM 95% CI")
    assert list(systems["system"]) == ["run_a.jsonl", "run_b.jsonl"]
    assert list(systems["exact_match"]) == [0.5, 0.5]
    assert at.radio(key="qa_sbs_agreement").options[1] == "Systems disagree · 不一致 (2)"



def test_a_record_opens_from_the_link_and_steps_with_previous_and_next():
    from tests.pages.helpers import page_app

    at = page_app(QA_PAGE)  # a first visit with the link: it opens the Records view with the record
    at.query_params["record"] = "fc-02"
    at.run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="qa_view").value == "records"
    # factcheck demo (default): fc-02 is the second record of the unfiltered table
    head = next(shown(m.value) for m in at.markdown if m.value.startswith("**Record"))
    assert head.startswith("**Record fc-02** · 2 of 17 shown")
    at.button(key="qa_next").click().run()
    head = next(shown(m.value) for m in at.markdown if m.value.startswith("**Record"))
    assert head.startswith("**Record fc-03** · 3 of 17 shown") and at.query_params["record"] == "fc-03"
    at.button(key="qa_prev").click().run()
    at.button(key="qa_prev").click().run()
    assert at.query_params["record"] == "fc-01" and at.button(key="qa_prev").disabled


def test_a_confusion_cell_in_the_link_is_chosen_and_outlined():
    from tests.pages.helpers import page_app

    at = page_app(QA_PAGE)  # a first visit with the link: nothing chosen in the session yet
    at.query_params["cell_true"] = "T"
    at.query_params["cell_pred"] = "unparsed"
    at.run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="qa_view").value == "matrix"  # the link opens the matrix view
    # fc-08, fc-15, fc-17: true T, predicted unparsed (see test_demo_factcheck_metrics_matrix_and_cell)
    assert any("3 record(s) with true = T and predicted = unparsed" in shown(m.value).replace("**", "")
               for m in at.markdown)
    import json as _json
    fig = _json.loads(at.get("plotly_chart")[0].proto.spec)
    shapes = fig["layout"].get("shapes", [])
    # rows = true (default, as scikit-learn, the overview's chart and the CLI): the unparsed column (x index 3)
    # of the T row (y index 0)
    assert [(s["x0"], s["y0"]) for s in shapes] == [(2.5, -0.5)]
    assert fig["layout"]["yaxis"]["title"]["text"].startswith("True")


def test_the_records_filters_survive_a_visit_to_another_view():
    at = _app()
    at.radio(key="qa_demo").set_value("qa").run()
    at.segmented_control(key="qa_view").set_value("records").run()
    at.checkbox(key="qa_errors_only").check().run()
    at.text_input(key="qa_search").input("曹雪芹").run()
    assert any("1 of 12 records match the filters" in shown(c.value) for c in at.caption)
    at.segmented_control(key="qa_view").set_value("overview").run()  # the filters are not drawn here
    at.segmented_control(key="qa_view").set_value("records").run()
    assert at.checkbox(key="qa_errors_only").value and at.text_input(key="qa_search").value == "曹雪芹"
    assert any("1 of 12 records match the filters" in shown(c.value) for c in at.caption)


def _chart_title(at, key_part: str = "") -> str:
    import json as _json

    specs = [_json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return "\n".join(str(s.get("layout", {}).get("title", {}).get("text", "")) for s in specs)


def test_runs_on_different_records_are_compared_on_the_common_ones():
    """Issue 26.1: a run of 3 records and one of 1 were drawn side by side as if comparable."""
    from tests.pages.helpers import shown

    at = _app()
    a = (b'{"id":"1","answer":"Paris","final_answer":"Paris"}\n{"id":"2","answer":"Rome","final_answer":"Milan"}\n'
         b'{"id":"3","answer":"Oslo","final_answer":"Bergen"}\n')
    b = b'{"id":"1","answer":"Paris","final_answer":"Paris"}\n'
    _upload(at, "run_a.jsonl", a)
    at.file_uploader(key="qa_more_runs").upload("run_b.jsonl", b).run()
    at.segmented_control(key="qa_view").set_value("systems").run()
    assert not at.exception, at.exception
    assert any("n common = 1 record; own n: run_a.jsonl 3, run_b.jsonl 1" in shown(w.value) for w in at.warning)
    systems = _frame(at, "system", "n common")
    assert list(systems["n"]) == [3, 1] and list(systems["n common"]) == [1, 1]
    assert list(systems["exact_match"]) == [1.0, 1.0]                          # on record 1, the common one
    assert list(systems["exact_match (own records)"]) == [1 / 3, 1.0]
    assert "n common = 1" in _chart_title(at)
