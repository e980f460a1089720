"""AppTest for the home page and every narrative view: demo data, real uploads, broken files, escaping."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from components.metrics import fmt
from evaluators.narrative import evaluate
from evaluators.narrative.batch import evaluate_batch
from components.narrative_state import demo_files
from tests.conftest import require_shared
from tests.pages.helpers import HOME, NARRATIVE_PAGE as PAGE, metric_values as metrics, problem_table, run_page as run
from tests.unit.narrative_builders import doc, event, rel, span

VIEWS = ["Overview", "Characters", "Relationships", "Actions", "Spans", "Alignment", "Compare", "Downloads"]


def html_bodies(at) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


@pytest.fixture(scope="module")
def demo_batch():
    gt, pred = demo_files()
    return evaluate_batch(gt, pred)


def test_home_page_shows_the_demo_scores(demo_batch):
    at = run(HOME)
    m = metrics(at)
    assert m["Overall (micro)"] == fmt(demo_batch.micro["overall_score"])
    assert m["Overall (macro)"] == fmt(demo_batch.macro["overall_score"])
    assert m["Stories"] == "2"
    # six evaluation pages (the Judge lab included) and Review: the heading counts what it shows (it said "Five
    # kinds" over six cards)
    assert "6 kinds of evaluation, and a review workspace" in [s.value for s in at.subheader]


def test_every_view_on_the_demo(demo_batch):
    at = run(PAGE)
    en = next(r for r in demo_batch.scored if r.story_id == "EN_001_lantern_keeper")
    m = metrics(at)
    assert m["Overall (micro)"] == fmt(demo_batch.micro["overall_score"])
    assert m["Overall"] == fmt(en.overall_score)  # first document (sorted ids) is shown below the table
    for view in VIEWS[1:]:
        at.segmented_control(key="nar_view").set_value(view.lower()).run()
        assert not at.exception, (view, at.exception)
    at.selectbox(key="nar_doc").set_value("ZH_001_石匠与山神").run()
    zh = next(r for r in demo_batch.scored if r.story_id == "ZH_001_石匠与山神")
    at.segmented_control(key="nar_view").set_value("characters").run()
    m = metrics(at)
    assert m["F1"] == fmt(zh.characters.character_f1)
    assert m["Archetype accuracy"] == fmt(zh.characters.character_archetype_accuracy)
    chips = html_bodies(at)
    assert "data-status='missing'" in chips and "村长" in chips and "山神 ⇄ 老婆婆" in chips
    at.segmented_control(key="nar_view").set_value("actions").run()
    assert metrics(at)["Field accuracy (micro)"] == fmt(zh.action_layer.action_layer_field_accuracy)
    at.segmented_control(key="nar_view").set_value("spans").run()
    assert metrics(at)["Boundary similarity B"] == fmt(zh.text_span.boundary_score)
    assert "eb-overlay" in html_bodies(at) and "山神大怒" in html_bodies(at)
    assert at.query_params["doc"] == "ZH_001_石匠与山神" and at.query_params["view"] == "spans"


def test_query_params_open_the_same_document_and_view():
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["doc"] = "ZH_001_石匠与山神"
    at.query_params["view"] = "relationships"
    at.run()
    assert not at.exception
    assert at.selectbox(key="nar_doc").value == "ZH_001_石匠与山神"
    assert at.segmented_control(key="nar_view").value == "relationships"  # the view switch holds slugs


def _upload(at, gt_files, pred_files):
    at.file_uploader(key="nar_gt_upload").set_value([(n, b, "application/json") for n, b in gt_files])
    at.file_uploader(key="nar_pred_upload").set_value([(n, b, "application/json") for n, b in pred_files])
    at.run()
    assert not at.exception, at.exception
    return at


def test_upload_mode_starts_empty():
    at = run(PAGE, evalboard_data_source="upload")
    assert any("Upload ground truth and predictions to start" in m.value for m in at.markdown)


# CH_002 by hand (tests/real/test_narrative_real.py, test_ch002_*): characters P = 10/18, R = 1 -> F1 5/7;
# relationships P = 2/16, R = 2/11 -> F1 4/27, 5 of 8 GT pairs covered; sentiment 2/2; action-layer fields
# 16 of 47; text spans 1 (the same 14 spans, all 14 events aligned); overall = the mean of the five.
CH002_BY_HAND = {"Characters": 5 / 7, "Relationships": 4 / 27, "Sentiment": 1.0, "Action layer": 16 / 47,
                 "Text spans": 1.0, "Overall": (5 / 7 + 4 / 27 + 1 + 16 / 47 + 1) / 5}


@pytest.mark.realdata
def test_real_upload_shows_the_engines_values():
    gt = require_shared("fairytales", "gt_v3", "CH_002_牛郎织女_v3.json").read_bytes()
    pred = require_shared("fairytales", "predictions", "CH_002_牛郎织女_v3_prediction.json").read_bytes()
    expected = evaluate(pred, gt)
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [("CH_002_牛郎织女_v3.json", gt)], [("CH_002_牛郎织女_v3_prediction.json", pred)])
    m = metrics(at)
    assert m["Documents scored"] == "1"
    assert m["Overall"] == fmt(expected.overall_score)
    for title, comp in (("Characters", "characters"), ("Relationships", "relationships"),
                        ("Sentiment", "sentiment"), ("Action layer", "action_layer"), ("Text spans", "text_span")):
        assert m[title] == fmt(expected.component_scores[comp])
    # ... and the values worked out by hand, as the page writes them
    assert {title: m[title] for title in CH002_BY_HAND} == {title: fmt(v) for title, v in CH002_BY_HAND.items()}
    # 5/7 = 0.7143, 4/27 = 0.1481, 16/47 = 0.3404, (0.7143 + 0.1481 + 1 + 0.3404 + 1) / 5 = 0.6406
    assert (m["Characters"], m["Relationships"], m["Action layer"], m["Overall"]) == ("0.714", "0.148", "0.340",
                                                                                      "0.641")
    at.segmented_control(key="nar_view").set_value("relationships").run()
    m = metrics(at)
    assert m["F1"] == fmt(expected.relationships.relationship_f1)
    assert m["Pair coverage"] == fmt(expected.relationships.relationship_pair_coverage)
    assert (m["F1"], m["Pair coverage"]) == (fmt(4 / 27), fmt(5 / 8))
    at.segmented_control(key="nar_view").set_value("spans").run()
    assert "牛郎" in html_bodies(at)
    at.segmented_control(key="nar_view").set_value("alignment").run()
    assert metrics(at)["Aligned"] == str(expected.summary.events_aligned)
    assert metrics(at)["Aligned"] == "14"


def test_broken_file_is_reported_and_the_good_pair_still_scored():
    good = doc("甲见乙。", [("甲", "", "Hero")], [event("e", span("甲见乙。", "甲见乙。"), [rel("甲", "乙")])])
    data = json.dumps(good, ensure_ascii=False).encode()
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [("A_v3.json", data), ("B_v3.json", data)],
            [("A_pred.json", data), ("B_pred.json", b'{"characters": [ oops')])
    assert metrics(at)["Documents scored"] == "1"
    labels = [e.label for e in at.expander]
    problems = next(lab for lab in labels if lab.startswith("Input problems"))
    assert "1 error" in problems
    assert [r["where"][:len("B_pred.json:1:")] for r in problem_table(at)] == ["B_pred.json:1:"]  # line, column


def test_script_and_img_in_names_and_text_render_as_text():
    text = "<script>alert('x')</script> met <img src=x onerror=alert(1)>. 他们走了。"
    evil = doc(text, [("<script>alert(1)</script>", "", "Hero"), ("<img src=x onerror=alert(2)>", "", "")],
               [event("<b>e1</b>", span(text, "<script>alert('x')</script> met <img src=x onerror=alert(1)>."),
                      [rel("<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "Romance", "lover")])])
    other = json.loads(json.dumps(evil))
    other["characters"] = other["characters"][:1]  # one character missing -> a "missing" chip
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [("X_v3.json", json.dumps(evil).encode())], [("X_pred.json", json.dumps(other).encode())])
    for view in ("Characters", "Spans", "Relationships", "Alignment"):
        at.segmented_control(key="nar_view").set_value(view.lower()).run()
        assert not at.exception
        body = html_bodies(at)
        assert "<script" not in body and "<img" not in body, view
    at.segmented_control(key="nar_view").set_value("spans").run()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html_bodies(at)
    at.segmented_control(key="nar_view").set_value("characters").run()
    assert "&lt;img src=x onerror=alert(2)&gt;" in html_bodies(at)
    for m in at.markdown:
        assert "<script" not in m.value and "<img" not in m.value


def test_highlighted_event_follows_its_id_and_is_dropped_with_another_document(demo_batch):
    zh = next(r for r in demo_batch.scored if r.story_id == "ZH_001_石匠与山神")
    pair = zh.alignment.pairs[0]
    gt_id = zh.alignment.gt_ids[pair.gt_index]
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["doc"] = "ZH_001_石匠与山神"
    at.query_params["view"] = "spans"
    at.run()
    assert "outline:1px dashed" not in html_bodies(at)
    at.selectbox(key="nar_span_event").set_value(gt_id).run()
    assert not at.exception, at.exception
    assert at.query_params["event"] == gt_id
    # Exactly the GT span of that event is outlined: the outlined text is its span text.
    overlay = next(b for b in (h.proto.body for h in at.get("html")) if "eb-overlay" in b)
    outlined = [piece.split(">", 1)[1].split("</span>")[0]
                for piece in overlay.split("<span style=\"")[1:] if "outline:1px dashed" in piece.split(">", 1)[0]]
    row = next(s for s in zh.text_span.spans if s.gt_event == gt_id)
    assert outlined and zh.text[row.gt_start:row.gt_end].startswith(outlined[0].replace("<br>", "\n")[:5])
    at.selectbox(key="nar_doc").set_value("EN_001_lantern_keeper").run()
    assert not at.exception, at.exception
    assert "event" not in at.query_params


def test_tables_over_the_styler_cell_limit_are_shown_without_colours():
    import pandas as pd

    names = [(f"角色{i}", "", "") for i in range(12)]
    gt = doc("甲见乙。", names, [event("e", span("甲见乙。", "甲见乙。"), [rel("角色1", "角色2")])])
    pred = json.loads(json.dumps(gt, ensure_ascii=False))
    pred["characters"] = pred["characters"][:6]
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [("L_v3.json", json.dumps(gt).encode())], [("L_pred.json", json.dumps(pred).encode())])
    with pd.option_context("styler.render.max_elements", 40):  # 12 characters x 5+ columns > 40 cells
        at.segmented_control(key="nar_view").set_value("characters").run()
    assert not at.exception
    assert any("cells that can be coloured: shown without colours" in c.value for c in at.caption)
    at.segmented_control(key="nar_view").set_value("characters").run()  # under the default limit: coloured
    assert not any("shown without colours" in c.value for c in at.caption)


def test_compare_view_scores_other_systems_side_by_side(demo_batch):
    import io
    import zipfile

    gt, pred = demo_files()
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [(f.name, f.data) for f in gt], [(f.name, f.data) for f in pred])
    # a second "system" whose predictions are the ground truth itself: every score is 1.0 (GT against itself)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for f in gt:
            z.writestr(f.name.replace("_v3.json", "_prediction.json"), f.data)
    at.file_uploader(key="nar_more_pred").set_value([("oracle.zip", buf.getvalue(), "application/zip")]).run()
    at.segmented_control(key="nar_view").set_value("compare").run()
    assert not at.exception, at.exception
    matrix = next(d.value for d in at.dataframe if "story_id" in d.value.columns and "spread" in d.value.columns)
    by_story = {r.story_id: r for r in demo_batch.scored}
    for _, row in matrix.iterrows():
        assert row["oracle: overall_score"] == pytest.approx(1.0)
        # the main system is named after what its files share: two demo files, no common word, so the role and
        # the count (it was "EN_001_lantern_keeper_prediction + 1 more", one story's name)
        assert row["predictions (2 files): overall_score"] == pytest.approx(
            by_story[row["story_id"]].overall_score)
        assert row["spread"] == pytest.approx(1.0 - by_story[row["story_id"]].overall_score)
    m = metrics(at)
    # B (oracle) - A (demo predictions) = 1 - mean of the two demo overall scores
    mean_a = sum(r.overall_score for r in demo_batch.scored) / 2
    assert m["overall score delta"] == f"{1 - mean_a:+.3f}"
    assert at.radio(key="nar_pair_outcome").options[1] == "B better · B 更好 (2)"
    # the comparison has an HTML report beside its CSV (issue 20.5), with the same delta
    assert any(b.proto.label == "Download comparison HTML report · 下载对比报告" for b in at.get("download_button"))


def test_narrative_comparison_html_report(demo_batch):
    from evaluators.narrative.batch import compare_two_systems
    from evaluators.reports.html import narrative_comparison_report

    batches = {"qwen": demo_batch, "oracle": demo_batch}
    paired = compare_two_systems(batches, "qwen", "oracle", n_resamples=200)
    html = narrative_comparison_report(batches, paired)
    assert "oracle against qwen" in html and "+0.000" in html  # a system against itself: delta 0
    assert html.count('class="bar"') == 2 * 6  # two systems x (overall and five components)
    assert "Show the 2 stories" in html and "<script" not in html


def test_a_long_list_of_input_problems_is_summarised_with_a_csv_of_all():
    gt, pred = demo_files()
    broken = [(f"BROKEN_{i:02d}_v3.json", b"{not json") for i in range(25)]
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [(f.name, f.data) for f in gt] + broken, [(f.name, f.data) for f in pred])
    expander = next(e for e in at.expander if e.label.startswith("Input problems"))
    assert len(problem_table(at)) == 20  # the first 20 of 25 unpaired/unreadable files (problems.SHOWN)
    assert "first 20 of 25 rows" in html_bodies(at)
    assert any("the CSV has all 25, one a row" in c.value for c in at.caption)
    assert any(b.proto.label == "Download all problems (CSV)" for b in at.get("download_button"))
    # unpaired GT files are warnings (the paired stories are still scored)
    assert expander.label == "Input problems: 0 errors, 25 warnings — the rest of the data is still scored"


def test_all_zero_weights_warn_and_score_like_the_cli(demo_batch):
    """The page builds its config with the CLI's function: all weights 0 -> equal weights and a warning."""
    at = run(PAGE)
    for c in ("characters", "relationships", "sentiment", "action_layer", "text_span"):
        at.number_input(key=f"nar_w_{c}").set_value(0.0)
    at.run()
    assert not at.exception
    assert "all component weights are 0; using equal weights" in html_bodies(at)
    assert metrics(at)["Overall (micro)"] == fmt(demo_batch.micro["overall_score"])


def test_the_overview_is_static_and_the_sortable_table_one_click_away(demo_batch):
    from tests.pages.helpers import static_rows

    at = run(PAGE)
    # the first screen: the documents and totals as static tables and the HTML report's SVG chart
    assert not at.dataframe and not at.get("plotly_chart")
    docs = {r[0]: r for r in static_rows(at, "document")}
    assert sorted(docs) == sorted(d.story_id for d in demo_batch.documents)
    for r in demo_batch.scored:  # overall with 3 decimals, as the cards and the grid show it
        assert docs[r.story_id][1] == f"{r.overall_score:.3f}"
    totals = {r[0]: r for r in static_rows(at, "aggregate")}
    overall_col = len(totals["micro (pooled counts)"]) - 1  # "overall" is the last column
    assert totals["micro (pooled counts)"][overall_col] == fmt(demo_batch.micro["overall_score"])
    assert totals["macro (mean of documents)"][overall_col] == fmt(demo_batch.macro["overall_score"])
    chart = next(m.value for m in at.markdown if '<figure class="chart">' in m.value)
    assert chart.count('class="legend-swatch"') == 5  # one colour per component
    # the sortable table (a row opens its document) and the interactive chart behind one toggle
    at.toggle(key="nar_interactive").set_value(True).run()
    assert not at.exception
    grid = at.dataframe[0].value
    assert sorted(grid["document"]) == sorted(docs) and len(at.get("plotly_chart")) == 1


def test_compare_view_says_when_systems_scored_different_stories(demo_batch):
    """Issue 26.1: a system scored on 1 story was drawn beside one scored on 2 without saying so."""
    import io
    import zipfile

    from tests.pages.helpers import shown

    gt, pred = demo_files()
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [(f.name, f.data) for f in gt], [(f.name, f.data) for f in pred])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # the oracle predicted one story only: the GT itself
        z.writestr(gt[0].name.replace("_v3.json", "_prediction.json"), gt[0].data)
    at.file_uploader(key="nar_more_pred").set_value([("oracle.zip", buf.getvalue(), "application/zip")]).run()
    at.segmented_control(key="nar_view").set_value("compare").run()
    assert not at.exception, at.exception
    assert any("n common = 1 story; own n:" in shown(w.value) and "oracle 1" in shown(w.value) for w in at.warning)
    table = next(d.value for d in at.dataframe if "n common" in d.value.columns)
    assert list(table["n"]) == [2, 1] and list(table["n common"]) == [1, 1]
    only = next(r for r in demo_batch.scored if r.story_id == gt[0].name.replace("_v3.json", ""))
    assert list(table["overall (macro)"]) == pytest.approx([only.overall_score, 1.0])   # on the common story
    title = "\n".join(str(json.loads(c.proto.spec)["layout"]["title"]["text"]) for c in at.get("plotly_chart"))
    assert "n common = 1" in title


def test_narrative_comparison_html_report_on_different_stories(demo_batch):
    from evaluators.narrative.batch import systems_common
    from evaluators.reports.html import narrative_comparison_report

    gt, _ = demo_files()
    one = evaluate_batch(gt[:1], [type(gt[0])(gt[0].name.replace("_v3.json", "_prediction.json"), gt[0].data)])
    batches = {"qwen": demo_batch, "oracle": one}
    assert systems_common(batches).n_by_system == {"qwen": 2, "oracle": 1}
    html = narrative_comparison_report(batches, None)
    assert "n common = 1 story; own n: qwen 2, oracle 1" in html
    assert "on the 1 story every system scored, n common = 1" in html and "overall (own stories)" in html


def test_script_conversion_setting_scores_a_traditional_prediction_like_the_simplified_one():
    from evaluators.demo import demo_path
    from evaluators.narrative.base import NarrativeConfig
    from tests.unit.test_narrative_script import GT_NAME, PRED_NAME, demo, spans, traditional

    gt = demo_path("narrative", GT_NAME).read_bytes()
    pred_t = json.dumps(traditional(demo(PRED_NAME)), ensure_ascii=False).encode()
    simplified = evaluate(demo_path("narrative", PRED_NAME).read_bytes(), gt)
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [(GT_NAME, gt)], [(PRED_NAME, pred_t)])
    assert metrics(at)["Characters"] != fmt(simplified.component_scores["characters"])  # 阿木 vs 阿木-like names
    at.selectbox(key="nar_script").set_value("tw2s").run()
    assert not at.exception, at.exception
    m = metrics(at)
    assert m["Overall"] == fmt(simplified.overall_score)
    assert m["Characters"] == fmt(simplified.component_scores["characters"])
    assert any("script=tw2s (opencc" in c.value for c in at.caption)
    at.segmented_control(key="nar_view").set_value("spans").run()
    assert not at.exception, at.exception
    # the overlay shows the GT text as written (Simplified), spans at the same offsets as the Simplified prediction's
    body = html_bodies(at)
    first = demo(GT_NAME)["narrative_events"][0]["text_span"]["text"]
    assert first[:8] in body and traditional({"t": first})["t"][:8] not in body
    assert spans(evaluate(pred_t, gt, config=NarrativeConfig(script="tw2s"))) == spans(simplified)


def test_compare_view_flags_the_bootstrap_p_on_few_stories_and_shows_the_exact_sign_flip_p(demo_batch):
    """Issue 29 on the page: two stories, the second system (the GT itself) higher on both.  The bootstrap p-value
    carries the small-sample warning; the randomization card is the exact sign-flip p, 2 of the 2^2 sign
    assignments as extreme as the observed one: 0.5."""
    import html
    import io
    import zipfile

    gt, pred = demo_files()
    at = run(PAGE, evalboard_data_source="upload")
    _upload(at, [(f.name, f.data) for f in gt], [(f.name, f.data) for f in pred])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for f in gt:
            z.writestr(f.name.replace("_v3.json", "_prediction.json"), f.data)
    at.file_uploader(key="nar_more_pred").set_value([("oracle.zip", buf.getvalue(), "application/zip")]).run()
    at.segmented_control(key="nar_view").set_value("compare").run()
    assert not at.exception, at.exception
    assert all(r.overall_score < 1 for r in demo_batch.scored) and len(demo_batch.scored) == 2
    m = metrics(at)
    assert m["p (randomization)"] == "0.5000"
    card = next(x for x in at.metric if x.label == "p (randomization)")
    assert "exact sign-flip" in card.proto.help
    # the warning is Markdown (brackets escaped, "<" as an entity): compared as shown
    shown = [html.unescape(w.value.replace("\\", "")) for w in at.warning]
    flag = "[!] bootstrap p-value not trustworthy on a small sample (2 items < 30"
    assert any(s.startswith(flag) for s in shown), shown
