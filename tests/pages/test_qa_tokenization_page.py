"""Issue 31 on the QA page: the Tokenization view, script conversion and the user dictionary in the settings,
the extraction audit and its *Review the unparsed* button."""

from __future__ import annotations

import json

import pytest

from evaluators.review import ReviewStore
from tests.pages.helpers import QA_PAGE, page_app, run_page
from tests.unit.test_zh_text import swap_rows


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALBOARD_DATABASE_URL", raising=False)
    return tmp_path


def _upload(at, name: str, data: bytes, key: str = "qa_upload"):
    at.radio(key="_source_widget").set_value("upload").run()
    at.file_uploader(key=key).upload(name, data).run()
    assert not at.exception, at.exception
    return at


def test_tokenization_view_on_the_demo():
    at = run_page(QA_PAGE)
    at.radio(key="qa_demo").set_value("systems").run()
    at.segmented_control(key="qa_view").set_value("tokenization").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table.columns) == ["system", "char", "jieba", "jieba_hmm"]
    assert list(table["system"]) == ["baseline-7b", "rag-7b", "rag-70b"]
    assert all("#" in v and "[" in v for v in table["char"])  # score, rank and interval
    # a fact-check run has no Tokenization view (verdicts are not tokenized)
    at.radio(key="qa_demo").set_value("factcheck").run()
    assert "tokenization" not in at.segmented_control(key="qa_view").options


def test_tokenization_view_flags_the_swap_and_the_user_dictionary_is_recorded():
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in swap_rows()).encode()
    at = _upload(run_page(QA_PAGE), "swap.jsonl", data)
    at.file_uploader(key="qa_user_dict").upload("user.txt", "北京大学校 10 n\n".encode()).run()
    at.segmented_control(key="qa_view").set_value("tokenization").run()
    assert not at.exception, at.exception
    assert any("change order" in w.value for w in at.warning)
    flips = at.dataframe[1].value
    assert set(flips["tokenization"]) >= {"jieba", "jieba_hmm"} and set(flips["A"]) == {"alpha"}
    assert "jieba_user" in at.dataframe[0].value.columns


def test_script_conversion_setting_changes_the_scores_and_the_signature():
    rows = [{"id": "1", "answer": "國家", "prediction": "国家"}, {"id": "2", "answer": "看著", "prediction": "看着"}]
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    at = _upload(run_page(QA_PAGE), "zh.jsonl", data)
    em = {m.label.split(" · ")[0]: m.value for m in at.metric}["EM"]
    at.selectbox(key="qa_script").select("tw2s").run()
    assert not at.exception, at.exception
    assert em == "0.00%" and {m.label.split(" · ")[0]: m.value for m in at.metric}["EM"] == "100.00%"


def test_review_the_unparsed_opens_a_session_of_the_unparsed_verdicts(data_dir):
    at = run_page(QA_PAGE)
    at.segmented_control(key="qa_view").set_value("records").run()
    audit = next(d.value for d in at.dataframe if "ambiguous" in d.value.columns)
    assert list(audit["unparsed"]) == [3]  # fc-08, fc-15 (unparsed text), fc-17 (empty)
    at.button(key="qa_unparsed_to_review").click().run()
    store = ReviewStore(data_dir / "review.sqlite")
    (session,) = store.sessions()
    items = store.items(session.id)
    assert {i.payload["extraction"]["status"] for i in items} <= {"unparsed", "ambiguous"}
    assert {i.payload["id"] for i in items} >= {"fc-08", "fc-15"}


def test_tokenization_view_on_the_persona_demo():
    from tests.conftest import ROOT

    at = run_page(str(ROOT / "pages" / "4_Persona_Dialogue.py"), timeout=180)
    at.segmented_control(key="dialogue_view").set_value("tokenization").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["system"]) == ["panda-chat-large", "panda-chat-small"]
    assert list(table.columns) == ["system", "char", "jieba", "jieba_hmm"]
