"""AppTest of pages/4_Persona_Dialogue.py: demo data, the real run uploaded, bad uploads."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import require_shared
from tests.helpers.http_servers import ChatServer
from tests.pages.helpers import DIALOGUE_PAGE, page_app, problem_table, shown, static_rows

REPORT = "peppa_structured_evaluation_202510101638_report.json"


def _app(source: str) -> AppTest:
    return page_app(DIALOGUE_PAGE, timeout=180, source=source)


def _texts(at) -> str:
    parts = [m.value for m in at.markdown] + [shown(c.value) for c in at.caption] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


def _leaves(node, ancestors: tuple[str, ...] = ()) -> list:
    """The page's elements in the order they are drawn, each with the types of the blocks around it."""
    children = getattr(node, "children", None)
    if not children:
        return [(node, ancestors)]
    inner = (*ancestors, type(node).__name__)
    return [leaf for key in sorted(children) for leaf in _leaves(children[key], inner)]

def test_demo_shows_scores_heatmap_tables_and_downloads():
    at = _app("demo")
    at.run()
    assert not at.exception and not at.error
    metrics = {shown(m.label): m.value for m in at.metric}
    assert {k for k in metrics if k.endswith("· combined")} == {"panda-chat-large · combined",
                                                               "panda-chat-small · combined"}
    # the large model is much closer to the script than the small one
    assert float(metrics["panda-chat-large · combined"]) > float(metrics["panda-chat-small · combined"])
    view = at.segmented_control(key="dialogue_view")
    assert view.value == "overview" and view.options == [
        "Overview · 概览", "Scenes × models", "Models", "Cases", "Model comparison", "Tokenization · 分词敏感性"]
    # the first screen: static SVG charts and tables, no Plotly chart, no data grid; downloads are there too
    assert not at.get("plotly_chart") and not at.dataframe
    assert len(at.get("download_button")) == 3
    charts = [m.value for m in at.markdown if '<figure class="chart">' in m.value]
    assert len(charts) == 2  # combined score by model (95% CI), by scene and model
    # one colour per model in the scenes chart, as in the HTML reports
    assert charts[1].count('data-series="panda-chat-large"') and charts[1].count('data-series="panda-chat-small"')
    # the static models table shows the cards' numbers (4 decimals there, 3 on the cards)
    models = {r[0]: r for r in static_rows(at, "model")}
    for label, value in metrics.items():
        assert f"{float(models[label.split(' · ')[0]][6]):.3f}" == value
    # the demo's one input problem: a row of the small model that matches no case (not scored)
    problems = next(e.label for e in at.expander if e.label.startswith("Input problems"))
    assert problems == "Input problems: 0 errors, 1 warning — the rest of the data is still scored"
    assert [r["where"] for r in problem_table(at)] == ["panda-chat-small_report.json at results[8]"]
    # metric picker from the registry, with an unavailable metric and how to enable it (a static table)
    info = {r[0]: r for r in static_rows(at, "metric")}
    assert info["bert_f1"][2] == "no"
    # the interactive charts and the grids are one click away
    view.set_value("scenes").run()
    assert len(at.get("plotly_chart")) == 1  # scenes x models heatmap
    at.segmented_control(key="dialogue_view").set_value("models").run()
    assert len(at.get("plotly_chart")) == 1 and any("corpus BLEU" in d.value.columns for d in at.dataframe)
    at.segmented_control(key="dialogue_view").set_value("cases").run()
    # the per-case table holds both models' 13 cases
    case_frame = next(d.value for d in at.dataframe if "prediction" in d.value.columns)
    assert len(case_frame) == 26 and "我想带竹笋饼干和我的小风筝！" in set(case_frame["expected"])


def test_demo_difflib_mode_and_filters():
    at = _app("demo")
    at.run()
    at.radio(key="dialogue_mode").set_value("difflib").run()
    assert not at.exception
    at.segmented_control(key="dialogue_view").set_value("cases").run()
    at.selectbox(key="dialogue_case_model").set_value("panda-chat-small").run()
    case_frame = next(d.value for d in at.dataframe if "prediction" in d.value.columns)
    assert set(case_frame["model"]) == {"panda-chat-small"} and len(case_frame) == 13
    assert "missing" in set(case_frame["status"])


def test_upload_mode_starts_with_instructions():
    at = _app("upload")
    at.run()
    assert not at.exception
    assert "Upload a test-case file" in _texts(at)


@pytest.mark.realdata
def test_real_run_uploaded_as_cases_and_predictions(no_embeddings):
    # no assertion reads semantic similarity: without embeddings the page skips ~9 s of model time
    data = require_shared("persona_chat", REPORT).read_bytes()
    at = _app("upload")
    at.run()
    at.file_uploader(key="dialogue_cases").set_value((REPORT, data, "application/json"))
    at.file_uploader(key="dialogue_preds").set_value([(REPORT, data, "application/json")])
    at.run()
    assert not at.exception and not at.error
    at.radio(key="dialogue_mode").set_value("difflib").run()
    assert not at.exception and not at.error
    assert [shown(m.label) for m in at.metric] == ["qwen3-32B · combined"]
    at.segmented_control(key="dialogue_view").set_value("models").run()
    model_frame = next(d.value for d in at.dataframe if "corpus BLEU" in d.value.columns)
    row = model_frame.iloc[0]
    assert row["cases"] == 186 and row["missing"] == 0
    assert round(row["fuzzy_ratio_difflib"], 4) == 0.1323  # the stored summary's average fuzzy match
    assert row["exact_match_strip"] == 0.0


def test_bad_uploads_are_reported_not_crashing():
    at = _app("upload")
    at.run()
    at.file_uploader(key="dialogue_cases").set_value(("cases.json", b'{"test_cases_by_scene": [', "application/json"))
    at.run()
    assert not at.exception
    assert any("No usable test case" in shown(e.value) for e in at.error)
    good = '{"test_cases_by_scene": {"s": [{"context": "c", "expected_response": "你好", "dialogue_index": 1}]}}'
    at.file_uploader(key="dialogue_cases").set_value(("cases.json", good.encode(), "application/json"))
    at.file_uploader(key="dialogue_preds").set_value([("p.jsonl", b"{broken\n", "application/octet-stream")])
    at.run()
    assert not at.exception
    (error,) = [shown(e.value) for e in at.error]  # not "upload one"
    assert error.startswith("No usable prediction row in p.jsonl. error: p.jsonl:1:2: invalid JSON on this line")


def _demo_with_data_dir(monkeypatch, tmp_path) -> AppTest:
    """The demo page run once, its live-mode checkpoints under ``tmp_path/live``."""
    monkeypatch.setenv("EVALBOARD_DATA_DIR", str(tmp_path))
    at = _app("demo")
    at.run()
    return at


def _ask_live(at, url: str, model: str = "live-panda"):
    at.text_input(key="dialogue_live_url").set_value(url)
    at.text_input(key="dialogue_live_model").set_value(model)
    at.number_input(key="dialogue_live_timeout").set_value(2.0)
    at.number_input(key="dialogue_live_retries").set_value(0)
    at.run()
    at.button(key="dialogue_live_go").click().run()


def test_live_endpoint_from_the_page_adds_a_model_and_resumes_from_its_checkpoint(monkeypatch, tmp_path):
    at = _demo_with_data_dir(monkeypatch, tmp_path)
    with ChatServer("fail_one") as srv:
        _ask_live(at, srv.url)
        assert not at.exception
        assert any("live-panda: 13 replies asked, 0 kept from earlier runs, 0 errors" in shown(s.value) for s in at.success)
        assert "live-panda · combined" in [shown(m.label) for m in at.metric]
        assert srv.paths().count("/chat") == 13 and srv.paths().count("/reset") == 4  # before + after 3 scenes
        saved = list((tmp_path / "live").glob("*.jsonl"))
        assert len(saved) == 1 and len(saved[0].read_text(encoding="utf-8").splitlines()) == 13

        # a new session (a reload) asks again: every reply comes from the checkpoint, none is asked
        again = _app("demo")
        again.run()
        _ask_live(again, srv.url)
        assert any("live-panda: 0 replies asked, 13 kept from earlier runs" in shown(s.value) for s in again.success)
        assert srv.paths().count("/chat") == 13


def test_live_run_cut_by_a_rerun_goes_on_and_stop_keeps_every_reply(monkeypatch, tmp_path):
    at = _demo_with_data_dir(monkeypatch, tmp_path)
    with ChatServer("ok") as srv:
        _ask_live(at, srv.url)
        checkpoint = next((tmp_path / "live").glob("*.jsonl"))
        lines = checkpoint.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 13 and srv.paths().count("/chat") == 13
        # A run cut by a rerun (any click while it runs) after 5 replies, the 6th line half written; the
        # job is still in the session, so the next run of the page goes on with it by itself.
        job = {"cases": "demo:persona_cases.json", "url": srv.url, "model": "live-panda", "timeout": 2.0,
               "retries": 0}
        checkpoint.write_text("\n".join(lines[:5]) + "\n" + lines[5][:20], encoding="utf-8")
        at.session_state["dialogue_live_job"] = job
        at.run()
        assert not at.exception
        assert any("live-panda: 8 replies asked, 5 kept from earlier runs, 0 errors" in shown(s.value)
                   for s in at.success)
        assert srv.paths().count("/chat") == 13 + 8
        kept = [line for line in checkpoint.read_text(encoding="utf-8").splitlines() if line.endswith("}")]
        assert len(kept) == 13  # the 8 new replies each on a line of their own after the half-written one
        asked = [b["message"] for p, b in srv.log if p == "/chat"]
        assert asked[13:] == asked[5:13]  # exactly the cases after the 5 kept replies, in case order

        # Stop while a job runs: the Stop button ends it; nothing more is asked, every reply so far is kept.
        checkpoint.write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
        assert at.button(key="dialogue_live_stop").label == "Stop"  # drawn while the job ran
        at.session_state["dialogue_live_job"] = job
        n_before = len(srv.log)
        at.button(key="dialogue_live_stop").click().run()
        assert not at.exception and len(srv.log) == n_before
        assert any("live-panda: stopped; 5 of 13 replies kept (0 asked in this run)" in shown(w.value)
                   for w in at.warning)
        assert "live-panda · combined" in [shown(m.label) for m in at.metric]  # the 5 replies are scored
        assert "dialogue_live_job" not in at.session_state


def test_live_mode_refuses_a_file_url_and_shows_no_file(monkeypatch, tmp_path):
    at = _demo_with_data_dir(monkeypatch, tmp_path)
    _ask_live(at, "file:///etc/passwd#")
    assert not at.exception
    assert [shown(e.value) for e in at.error] == ["This URL is not contacted: only http:// and https:// URLs are accepted, "
                                           "not file://"]
    page_text = " ".join(str(getattr(el, "value", "")) for el in at.main)
    assert "root:" not in page_text


def test_diff_html_escapes_user_text():
    from components.textdiff import diff_html
    from evaluators.text.diff import char_diff

    import html
    import re

    expected, predicted = "<b>你好</b>", "<script>alert(1)</script>你好"
    left, right = diff_html(char_diff(expected, predicted))
    untagged = [re.sub(r'<span style="[^"]*">|</span>', "", side) for side in (left, right)]
    # only our own span tags are HTML; every character of the texts is escaped
    assert untagged == [html.escape(expected), html.escape(predicted)]
    assert "<script" not in right and "<b>" not in left


def test_demo_model_comparison_equals_the_engine():
    from evaluators.demo import demo_path
    from evaluators.dialogue import evaluate_dialogue, load_cases, load_predictions
    from evaluators.dialogue.inputs import PredictionSet
    from evaluators.dialogue.scoring import case_matrix, compare_two_models

    at = _app("demo")
    at.run()
    assert not at.exception
    at.segmented_control(key="dialogue_view").set_value("compare").run()
    folder = demo_path("dialogue")
    cases = load_cases((folder / "persona_cases.json").read_bytes(), "persona_cases.json")
    preds = PredictionSet.combine([load_predictions((folder / n).read_bytes(), n)
                                   for n in ("panda-chat-large.jsonl", "panda-chat-small_report.json")])
    evaluation = evaluate_dialogue(cases.cases, preds.rows)
    paired = compare_two_models(evaluation, "panda-chat-large", "panda-chat-small")
    metrics = {shown(m.label): m.value for m in at.metric}
    assert metrics["combined score delta · 差值"] == f"{paired.bootstrap.delta:+.3f}"
    assert metrics["p (randomization)"] == f"{paired.randomization.p_value:.4f}"
    won, lost = paired.bootstrap.won, paired.bootstrap.lost
    assert at.radio(key="dialogue_pair_outcome").options[:3] == [
        f"Changed · 有变化 ({won + lost})", f"B better · B 更好 ({won})", f"B worse · B 更差 ({lost})"]
    # the spread filter keeps the cases whose two combined scores differ by at least 0.3
    at.slider(key="dialogue_spread").set_value(0.3).run()
    expected = sum(1 for r in case_matrix(evaluation) if r["spread"] is not None and r["spread"] >= 0.3 - 1e-12)
    assert any(c.value == f"{expected} of {len(case_matrix(evaluation))} cases." for c in at.caption)


def test_headline_names_the_weights_used(no_embeddings):
    at = _app("demo")
    at.run()
    caption = next(shown(c.value) for c in at.caption if c.value.startswith("Combined score ="))
    # default weights 0.5 / 0.2 / 0.1 / 0.1 / 0.1 with semantic similarity unavailable: each over 0.9
    assert caption.startswith("Combined score = 0.56 × exact_match_normalized + 0.22 × fuzzy_ratio + "
                              "0.11 × edit_similarity + 0.11 × keyword_jaccard (semantic_similarity unavailable")


@pytest.mark.parametrize("data, what", [(b"", "0 bytes"), (b"\xef\xbb\xbf", "only a byte-order mark")])
def test_an_empty_or_bom_only_upload_is_said_to_be_empty(data, what):
    """Issue 20 point 10: an empty upload is not taken for "no upload"."""
    from evaluators.demo import demo_path

    at = _app("upload")
    at.run()
    at.file_uploader(key="dialogue_cases").set_value(("cases.json", data, "application/json"))
    at.run()
    assert not at.exception
    (error,) = [shown(e.value) for e in at.error]
    assert error.startswith(f"No usable test case in cases.json. error: cases.json:1: the file is empty ({what}")
    at.file_uploader(key="dialogue_cases").set_value(
        ("persona_cases.json", demo_path("dialogue", "persona_cases.json").read_bytes(), "application/json"))
    at.file_uploader(key="dialogue_preds").set_value([("p.jsonl", data, "application/jsonl")])
    at.run()
    (error,) = [shown(e.value) for e in at.error]
    assert error.startswith(f"No usable prediction row in p.jsonl. error: p.jsonl:1: the file is empty ({what}")


@pytest.mark.realdata
def test_a_stored_report_that_does_not_fit_the_uploaded_cases_says_so_and_offers_its_own(no_embeddings):
    """Issue 26.2: the README's pair (cases file + a stored report of another run): 127 rows matched no case
    of the uploaded file, said only behind a collapsed "253 input issue(s)"."""
    cases = require_shared("persona_chat", "peppa_structured_test_cases.json").read_bytes()
    data = require_shared("persona_chat", REPORT).read_bytes()
    at = _app("upload")
    at.run()
    at.file_uploader(key="dialogue_cases").set_value(("peppa_structured_test_cases.json", cases, "application/json"))
    at.file_uploader(key="dialogue_preds").set_value([(REPORT, data, "application/json")])
    at.run()
    assert not at.exception and not at.error
    # 22 rows with no case of their scene and index and 104 that answered another prompt: 126 rows (the 127th
    # issue the newcomer counted is the cases file's own repeated key, not a row)
    (warning,) = [shown(w.value) for w in at.warning if "do not match the uploaded cases" in shown(w.value)]
    assert f"126 of 186 rows of {REPORT} do not match the uploaded cases" in warning
    assert "22 have no case" in warning and "104 answered another prompt" in warning
    assert "carries its own 186 cases" in warning
    # in the headline: above the first score, in no collapsed expander (it was behind "253 input issue(s)")
    leaves = _leaves(at.main)
    fit = next(i for i, (node, _) in enumerate(leaves) if type(node).__name__ == "Warning"
               and "do not match the uploaded cases" in shown(node.value))
    first_score = next(i for i, (node, _) in enumerate(leaves) if type(node).__name__ == "Metric")
    assert fit < first_score and "Expander" not in leaves[fit][1]
    at.radio(key="dialogue_cases_from").set_value(REPORT).run()              # use them
    assert not at.exception and not at.error
    assert not [w for w in at.warning if "do not match the uploaded cases" in shown(w.value)]
    assert f"the 186 cases stored in {REPORT}" in _texts(at)
    at.segmented_control(key="dialogue_view").set_value("models").run()
    row = next(d.value for d in at.dataframe if "corpus BLEU" in d.value.columns).iloc[0]
    assert row["cases"] == 186 and row["missing"] == 0
