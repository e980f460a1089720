"""AppTest for the QA / fact-check page: demo data, switches, cell choice, real uploads, bad input."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT, require_shared

PAGE = str(ROOT / "pages" / "2_QA_Factcheck.py")


def run_page(path: str) -> AppTest:
    """Run a page file once with AppTest and check it raised nothing."""
    at = AppTest.from_file(path, default_timeout=120)
    at.run()
    assert not at.exception
    return at


def metric_values(at) -> dict[str, str]:
    """Metric values by the English part of their label ("EM · 精确匹配" -> "EM")."""
    return {m.label.split(" · ")[0]: m.value for m in at.metric}


def _app() -> AppTest:
    return run_page(PAGE)


_metrics = metric_values


def _upload(at, name: str, data: bytes, key: str = "qa_upload") -> AppTest:
    at.radio(key="_source_widget").set_value("upload").run()
    at.file_uploader(key=key).upload(name, data).run()
    assert not at.exception, at.exception
    return at


def test_demo_factcheck_metrics_matrix_and_cell():
    at = _app()
    m = _metrics(at)
    assert m["EM"] == "62.50%" and m["F1"] == "62.50%" and m["Scored"] == "16 / 17" and m["No GT"] == "1"
    assert any(s.value.startswith("Confusion matrix") for s in at.subheader)
    at.selectbox(key="qa_cm_true").select("T")
    at.selectbox(key="qa_cm_pred").select("unparsed")
    at.run()
    assert not at.exception
    assert any("**3 record(s)** with true = `T` and predicted = `unparsed`" in md.value for md in at.markdown)
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
    assert m["EM"] == "36.36%"  # 4 of 11 scored records
    assert not any(s.value.startswith("Confusion matrix") for s in at.subheader)
    at.checkbox[0].check().run()  # errors only
    assert any("7 of 12 records match the filters" in c.value for c in at.caption)
    at.text_input[-1].input("曹雪芹").run()
    assert any("1 of 12 records match the filters" in c.value for c in at.caption)


def test_upload_empty_state_and_bad_files():
    at = _app()
    at.radio(key="_source_widget").set_value("upload").run()
    assert at.info and "Upload a file" in at.info[0].value
    at.file_uploader(key="qa_upload").upload("broken.jsonl", b'{"answer": "a", "final_answer": "a"}\n{oops\n').run()
    assert not at.exception
    assert any("1 input problems" in w.value for w in at.warning)
    assert _metrics(at)["EM"] == "100.00%"
    at.file_uploader(key="qa_upload").set_value(("bad.jsonl", b"\xff\xfe\x81\x00\xfa", "text/plain")).run()
    assert not at.exception and at.error


@pytest.mark.realdata
def test_upload_cfever_baseline():
    path = require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")
    at = _upload(_app(), path.name, path.read_bytes())
    m = _metrics(at)
    assert m["EM"] == "35.17%" and m["Cohen's kappa"] == "0.000" and m["Scored"] == "600 / 600"


@pytest.mark.realdata
def test_upload_hotpotqa_three_systems():
    path = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    at = _upload(_app(), path.name, path.read_bytes())
    breakdown = next(df.value for df in at.dataframe if "subset" in df.value.columns)
    em = dict(zip(breakdown["subset"], breakdown["exact_match"]))
    assert em["system = Decomp_FullPipeline"] == pytest.approx(0.66)
    assert em["system = Decomp_SearchFallback"] == pytest.approx(0.44)


def test_upload_squad_style_with_predictions():
    dataset = {"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "Q1", "question": "首都？", "answers": [{"text": "北京"}]},
        {"id": "Q2", "question": "Who?", "answers": [{"text": "Jane Austen"}]}]}]}]}
    at = _upload(_app(), "dev.json", json.dumps(dataset, ensure_ascii=False).encode())
    assert _metrics(at)["EM"] == "0.00%"  # no predictions yet: both missing, scored 0
    at.file_uploader(key="qa_pred_upload").upload("pred.json", json.dumps({"Q1": "北京", "Q2": "Austen"}).encode()).run()
    m = _metrics(at)
    assert m["EM"] == "50.00%" and m["F1"] == "83.33%"  # (1 + 2/3) / 2
