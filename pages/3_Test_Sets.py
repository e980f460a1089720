"""Keyword-scored test sets (single turn) and multi-turn expected points."""

from components.layout import page_frame

source = page_frame("Test sets · 关键词测试集", "🧪",
                    caption="Fraction of keywords found per item (NFKC + case folding); expected points covered per turn.")


import streamlit as st  # noqa: E402

from components.layout import view_switch  # noqa: E402
from components.metrics import metric_row  # noqa: E402
from components.problems import show_problems  # noqa: E402
from components.qa_views import ratio_columns  # noqa: E402
from components.static import static_chart, static_records  # noqa: E402
from components.tables import show_table  # noqa: E402
from components.downloads import download  # noqa: E402
from components.uploads import cached, upload_digest  # noqa: E402
from components.testsets_views import (breakdown_chart, breakdown_svg, group_rows, groups_frame,  # noqa: E402
                                       item_table, rubric, shown_text, turn_view)
from evaluators.demo import demo_path  # noqa: E402
from evaluators.io import InputError  # noqa: E402
from evaluators.testsets import (TestSetsConfig, TestSetsInputs, TestSetsReport, load_test_set,  # noqa: E402
                                 run_testsets)
from evaluators.reports.escape import md, visible  # noqa: E402
from evaluators.reports.format import fixed, number  # noqa: E402
from evaluators.reports.testsets import answer_template, preview_rows, report_csv, report_json  # noqa: E402
from components.corrections import corrections_control  # noqa: E402
from components.review_link import review_button  # noqa: E402
from components.save_run import save_run  # noqa: E402
from evaluators.tasks.builtin import testsets_run_result  # noqa: E402
from evaluators.review.items import testset_items  # noqa: E402

DEMOS = {
    "single": ("Single-turn demo · 单轮示例 (9 items)", "factual_demo.json", "factual_demo_answers.json"),
    "multi": ("Multi-turn demo · 多轮示例 (2 dialogues)", "multi_turn_demo.json", "multi_turn_demo_answers.jsonl"),
}


def score(items: bytes, items_name: str, answers: bytes, answers_name: str, gt_patch=None) -> TestSetsReport:
    """:func:`run_testsets` of a test set and an answers file (the CLI's run function), with review
    corrections when ``gt_patch`` is given."""
    return run_testsets(TestSetsInputs(items, items_name, answers, answers_name), TestSetsConfig(gt_patch=gt_patch))


if source == "demo":
    choice = st.radio("Demo data · 示例数据", list(DEMOS), format_func=lambda k: DEMOS[k][0], horizontal=True,
                      key="ts_demo")
    _, items_name, answers_name = DEMOS[choice]
    key = ("testsets", "demo", choice)

    def files() -> tuple[bytes, bytes]:
        return demo_path("testsets", items_name).read_bytes(), demo_path("testsets", answers_name).read_bytes()
else:
    c1, c2 = st.columns(2)
    up_items = c1.file_uploader("Test set (factual_qa.json, multi_turn.json …) · 测试集", type=["json"], key="ts_items")
    up_answers = c2.file_uploader("Answers keyed by id (and turn) · 模型回答", type=["json", "jsonl", "csv"],
                                  key="ts_answers")
    if up_items is not None and up_answers is None:
        # A test set alone: what it holds, and the answers file a model run should fill in.
        try:
            alone = cached(("testsets-set", upload_digest(up_items)),
                           lambda: load_test_set(up_items.getvalue(), up_items.name))
        except InputError as exc:
            show_problems([exc.issue], key="ts_problems", error="Cannot read this test set:")
            st.stop()
        show_problems(alone.issues, key="ts_problems")
        st.subheader(f"Preview · 预览: {md(up_items.name)}")
        st.caption(f"{alone.kind}, {len(alone.items)} valid item(s), version {md(alone.version)}. Upload the answers "
                   "(second box) to score them; the template below has every id (and turn) with an empty answer.")
        show_table(preview_rows(alone), key="ts_preview")
        download("Download answer template · 下载回答模板", lambda: answer_template(alone).encode("utf-8"),
                 file_name=f"{up_items.name.rsplit('.', 1)[0]}_answers.json", mime="application/json",
                 key="ts_template", empty=None if alone.items else "the test set has no valid item, so the template "
                 "would hold no id")
        st.stop()
    if up_items is None or up_answers is None:
        st.info("Upload a test set and the answers to score. Answers: a JSON object {id: answer} (multi-turn: "
                "{id: {turn: answer}}), or records with id, turn and answer (JSON array, JSONL or CSV); an optional "
                "human_score (1-5) is kept for review.")
        with st.expander("Human rubric (1-5) · 人工评分标准"):
            rubric()
        st.stop()
    items_name, answers_name = up_items.name, up_answers.name
    # Keyed on name + content digests: a rerun neither copies nor re-reads the uploads.
    key = ("testsets", upload_digest(up_items), upload_digest(up_answers))

    def files() -> tuple[bytes, bytes]:
        return up_items.getvalue(), up_answers.getvalue()


def compute(gt_patch=None):
    items, answers = files()
    return score(items, items_name, answers, answers_name, gt_patch)


try:
    with st.spinner("Scoring …"):
        run = cached(key, compute)
except InputError as exc:
    show_problems([exc.issue], key="ts_problems", error="The test set cannot be scored:")
    st.stop()
test_set, answers, report = run.test_set, run.answers, run.scores

st.caption(f"Test set: {md(items_name)} ({test_set.kind}, {len(test_set.items)} valid items, "
           f"version {md(test_set.version)}) · answers: {md(answers_name)} ({len(answers.answers)})")
show_problems(run.issues, key="ts_problems")
if report is None:
    st.error("No valid item in this test set; see the problems above.")
    st.stop()
if not answers.answers:
    st.warning("No answers were read from the answers file: every item counts as unanswered.")

if report.kind == "single":
    o = report.overall
    metric_row([
        ("Mean score · 平均得分", number(o.mean_score),
         "Mean keyword score over scored items (macro over items)." + (
             f" 95% CI {fixed(o.mean_score_ci_low)} – {fixed(o.mean_score_ci_high)} (bootstrap over items)."
             if o.mean_score_ci_low is not None else "")),
        ("Recall · 召回率", number(o.keyword_recall),
         "Keyword recall · 关键词召回: keywords found / all keywords (micro)."),
        ("Scored items · 评分条目", f"{o.n_scored:,} / {o.n_items:,}", None),
        ("No answer · 无回答", f"{len(report.missing_prediction):,}", "Scored 0."),
        ("Human score · 人工评分", fixed(o.mean_human_score, 2),
         f"Mean of {o.n_human} 1-5 rubric scores given with the answers."),
    ])
    st.caption(f"{report.aggregation}. Signature: {md(report.signature)}")

    # The first screen is light (static charts and tables, the highlighted answers); the sortable
    # grids and the interactive charts are one click away.
    view = view_switch({"overview": "Overview · 概览", "items": "Items table · 逐条表格",
                        "charts": "Interactive charts · 交互图表"}, key="ts_view")
    if view == "overview":
        st.subheader("By category and difficulty · 按类别与难度")
        # charts side by side, their tables under them at the page's width: eight columns in half of a
        # 1440 px page hid the last ones behind a sideways scroll
        g1, g2 = st.columns(2)
        static_chart(breakdown_svg(report.by_category, "By category · 按类别 (mean_score: 95% CI)"), where=g1)
        static_chart(breakdown_svg(report.by_difficulty, "By difficulty · 按难度 (mean_score: 95% CI)"), where=g2)
        for groups, name in ((report.by_category, "category"), (report.by_difficulty, "difficulty")):
            static_records(group_rows(groups, name), ratios=("mean_score", "keyword_recall"))
        st.subheader("Items · 逐条")
        st.markdown("**Answers with matched keywords highlighted · 回答中高亮的关键词**")
        item_table(report)
        if report.no_keywords:
            st.caption(f"Without keywords (no automatic score, review by hand): {md(', '.join(report.no_keywords))}")
        if report.extra_answers:
            st.caption(f"Answers that match no item: {md(', '.join(report.extra_answers))}")
    elif view == "charts":
        st.subheader("By category and difficulty · 按类别与难度")
        g1, g2 = st.columns(2)
        g1.plotly_chart(breakdown_chart(report.by_category, "Category · 类别"), key="ts_cat_chart")
        g2.plotly_chart(breakdown_chart(report.by_difficulty, "Difficulty · 难度"), key="ts_diff_chart")
        show_table(groups_frame(report.by_category, "category"),
                   column_config=ratio_columns("mean_score", "keyword_recall"))
        show_table(groups_frame(report.by_difficulty, "difficulty"),
                   column_config=ratio_columns("mean_score", "keyword_recall"))
    else:
        import pandas as pd

        st.subheader("Items · 逐条")
        frame = pd.DataFrame([{"id": r.id, "category": r.category, "difficulty": r.difficulty, "status": r.status,
                               "score": r.score, "found": len(r.found), "keywords": len(r.keywords),
                               "human_score": r.human_score, "question": shown_text(r.question),
                               "answer": shown_text(r.answer),
                               "missing": ", ".join(r.missing)} for r in report.items])
        show_table(frame, column_config=ratio_columns("score"), key="ts_items_table")
else:
    o = report.overall
    metric_row([
        ("Points covered · 覆盖要点", fixed(o.coverage_micro),
         "Covered expected points / all points (micro)."),
        ("Mean turn coverage · 轮均覆盖", fixed(o.coverage_macro),
         "Mean over turns (macro)."),
        ("Mean dialogue coverage · 对话均覆盖",
         fixed(report.dialogue_macro),
         "Mean of each dialogue's point coverage (macro over dialogues)."),
        ("Turns without answer · 无回答轮次", f"{len(report.missing_prediction):,}", None),
    ])
    st.caption(f"Signature: {md(report.signature)}")
    dialogue_rows = [{"dialogue": d.id, "scenario": d.scenario, "turns": len(d.turns), "covered": d.n_covered,
                      "points": d.n_points, "coverage": d.coverage_micro, "mean_turn_coverage": d.coverage_macro}
                     for d in report.dialogues]
    context_rows = [{"turns": k, "n": v.n_turns, "coverage": v.coverage_micro, "mean_turn_coverage": v.coverage_macro}
                    for k, v in report.by_requires_context.items()]
    view = view_switch({"overview": "Overview · 概览", "tables": "Sortable tables · 可排序表格"}, key="ts_view")
    if view == "overview":  # static tables (a light first screen), then the turns
        static_records(dialogue_rows, ratios=("coverage", "mean_turn_coverage"))
        if context_rows:
            static_records(context_rows, ratios=("coverage", "mean_turn_coverage"))
        st.subheader("Turn by turn · 逐轮查看")
        ids = [d.id for d in report.dialogues]
        scenario = {d.id: d.scenario for d in reversed(report.dialogues)}  # the first of an id, as before
        pick = st.selectbox("Dialogue · 对话", ids, key="ts_dialogue", persist_state="page",
                            format_func=lambda i: visible(f"{i} — {scenario[i]}"))
        turn_view(report, pick)
    else:
        show_table(dialogue_rows, column_config=ratio_columns("coverage", "mean_turn_coverage"), key="ts_dialogues")
        if context_rows:
            show_table(context_rows, column_config=ratio_columns("coverage", "mean_turn_coverage"))

with st.expander("Human rubric (1-5) · 人工评分标准"):
    rubric()
# The reports are written when a button is clicked (callables), not on every rerun, by the CLI's writers
# (testsets --output-file: report_json; --format csv: report_csv).
d1, d2 = st.columns(2)
d1.download_button("Download JSON report · 下载报告",
                   lambda: report_json(run).encode("utf-8"),
                   file_name=f"{items_name.rsplit('.', 1)[0]}_report.json", mime="application/json", key="ts_json",
                   on_click="ignore")
d2.download_button("Download CSV · 下载逐条结果", lambda: report_csv(report).encode("utf-8-sig"),
                   file_name=f"{items_name.rsplit('.', 1)[0]}_{'turns' if report.kind == 'multi_turn' else 'items'}.csv",
                   mime="text/csv", key="ts_csv", on_click="ignore")
if report.kind == "single":
    review_button("Review these answers · 人工审阅这些回答", "testsets", items_name, lambda: testset_items(report),
                  key="ts_to_review", data=lambda: files()[0])
    save_run(lambda: testsets_run_result(run), gt_name=items_name, source=items_name, key="ts_save",
             gt_files=lambda: [(items_name, files()[0])])
    st.subheader("Review corrections · 审阅更正")
    corrections_control("testsets", items_name, lambda: files()[0],
                        lambda patches: cached(key + ("gt-patch", patches), lambda: compute(patches)).corrections,
                        key="ts_fix")
