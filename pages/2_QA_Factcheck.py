"""QA and fact-check: EM / F1 (SQuAD for English, CMRC 2018 for Chinese), verdicts, confusion matrix."""

from components.layout import page_frame

source = page_frame("QA & Fact-check · 问答与事实核查", "✅",
                    caption="Exact match and F1 per record; fact-check verdicts (T / F / uncertain) with a confusion matrix.")

import streamlit as st  # noqa: E402

from components.corrections import corrections_control  # noqa: E402
from components.layout import view_switch  # noqa: E402
from components.problems import show_problems  # noqa: E402
from components.review_link import review_button  # noqa: E402
from components.save_run import save_run  # noqa: E402
from evaluators.cli.runlog import qa_bytes_to_log  # noqa: E402
from components.tables import show_table  # noqa: E402
from evaluators.reports.format import fixed  # noqa: E402
from components.qa_views import (breakdown_frame, downloads, headline, per_class_frame,  # noqa: E402
                                 ratio_columns, render_overview)
from evaluators.reports.escape import md, visible  # noqa: E402
from evaluators.demo import demo_path  # noqa: E402
from components.uploads import cached, upload_bytes, upload_digest  # noqa: E402
from evaluators.qa import QAConfig  # noqa: E402
from evaluators.qa.run import RECORD_COLUMNS, QAInput, record_view, run_qa  # noqa: E402
from evaluators.review.items import qa_items  # noqa: E402
from evaluators.qa.fields import DEFAULT_GT_FIELDS, DEFAULT_PRED_FIELDS  # noqa: E402
from evaluators.text.provenance import stored_dictionary  # noqa: E402
from evaluators.text.script import SCRIPT_CONFIGS  # noqa: E402

MAX_ROWS = 5000  # a browser table of hundreds of thousands of rows helps nobody; filter or download instead

DEMOS = {
    "factcheck": ("Fact-check demo · 事实核查示例 (17 claims)", "factcheck_demo.jsonl"),
    "qa": ("QA demo · 问答示例 (12 questions)", "qa_demo.jsonl"),
    "systems": ("Three systems · 多系统对比 (16 questions)", "qa_systems_demo.jsonl"),
}


def score(inputs: list[QAInput], config: QAConfig, key: tuple):
    """Run :func:`run_qa` once per (contents, settings) and share the result across reruns and sessions.

    The main input is the demo's bytes or the upload itself, which JSONL is streamed from line
    by line (no second copy of a large upload); a progress bar shows while it runs.
    """
    def compute():
        bar = st.progress(0.0, text="Scoring …")

        def tick(name, done, total):
            bar.progress(min(done / max(total, 1), 1.0), text=f"Scored {done} of {total or '?'} ({md(name)})")

        result = run_qa(inputs, config, progress=tick)
        bar.empty()
        return result

    return cached(("qa", key, config), compute)


def _fields(text: str, default: tuple[str, ...]) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in text.replace("，", ",").split(",") if p.strip())
    return parts or default


if source == "demo":
    choice = st.radio("Demo data · 示例数据", list(DEMOS), format_func=lambda k: DEMOS[k][0], horizontal=True,
                      key="qa_demo")
    file_name = DEMOS[choice][1]
    data = demo_path("qa", file_name).read_bytes()
    data_key = (f"demo:{file_name}",)
    preds, preds_name = None, "<predictions>"
    more_runs = []
else:
    up = st.file_uploader("Records: JSONL, JSON array or CSV (UTF-8, BOM or GB18030), or a SQuAD-style dataset · 上传文件",
                          type=["jsonl", "json", "csv", "tsv", "txt"], key="qa_upload")
    pred_up = st.file_uploader("Optional predictions {id: answer}, for a SQuAD-style dataset · 可选：预测文件",
                               type=["json", "jsonl", "csv"], key="qa_pred_upload")
    if up is None:
        st.info("Upload a file to score it. Each record needs a ground truth (人工评测结果, 标准答案, 答案, answer, "
                "answers, answers_objects or label, also inside original_row) and a prediction (final_answer, "
                "prediction, predicted_label or pred). Fact-check files are detected from a `claim` field with "
                "verdict answers or a dataset name such as hover / fever / fact.")
        st.stop()
    more_runs = st.file_uploader("Optional: other runs of the same questions, to compare side by side · 可选：其他系统的结果",
                                 type=["jsonl", "json", "csv", "tsv", "txt"], accept_multiple_files=True,
                                 key="qa_more_runs",
                                 help="Each file is one run (or one run per system when it has a system / model "
                                      "field); records are matched by id.") or []
    preds = upload_bytes(pred_up) if pred_up is not None else None
    preds_name = pred_up.name if pred_up is not None else "<predictions>"
    file_name, data = up.name, up
    data_key = (upload_digest(up), upload_digest(pred_up) if pred_up is not None else None)

with st.expander("Settings · 设置", expanded=False):
    c1, c2, c3 = st.columns(3)
    dataset = c1.text_input("Dataset name · 数据集名称", value="", help="hover, exfever, fever or fact in the name mean fact-check.", key="qa_dataset")
    task = c2.radio("Task · 任务", ["auto", "qa", "factcheck"], horizontal=True, key="qa_task")
    lang = c3.radio("Tokenization · 分词", ["auto", "en", "zh"], horizontal=True,
                    help="auto: CMRC 2018 when the gold answer or the prediction holds Chinese, else SQuAD v1.1.",
                    key="qa_lang")
    gt_text = st.text_input("Ground-truth fields, by priority · 标准答案字段", ", ".join(DEFAULT_GT_FIELDS), key="qa_gt_fields")
    pred_text = st.text_input("Prediction fields, by priority · 预测字段", ", ".join(DEFAULT_PRED_FIELDS), key="qa_pred_fields")
    s1, s2 = st.columns(2)
    script = s1.selectbox("Script conversion · 繁简转换", ["none", *SCRIPT_CONFIGS], key="qa_script",
                          help="Convert predictions and gold answers with OpenCC before scoring (off by default); "
                               "the configuration is written into the signature. t2s keeps 著, tw2s gives 着.")
    user_dict_up = s2.file_uploader("jieba user dictionary · 用户词典 (optional)", type=["txt"], key="qa_user_dict",
                                    help="Words for the jieba tokenizations of the Tokenization view; its SHA-256 "
                                         "is recorded in the report's provenance.")

user_dict = stored_dictionary(upload_bytes(user_dict_up)) if user_dict_up is not None else None
config = QAConfig(dataset=dataset or None, task=task, lang=lang, gt_fields=_fields(gt_text, DEFAULT_GT_FIELDS),
                  pred_fields=_fields(pred_text, DEFAULT_PRED_FIELDS), script=None if script == "none" else script,
                  user_dict=user_dict)
inputs = [QAInput(data, name=file_name, predictions=preds, predictions_file=preds_name if preds is not None else None),
          *(QAInput(extra, name=extra.name) for extra in more_runs)]
run_key = (data_key, tuple(upload_digest(x) for x in more_runs))
result = score(inputs, config, run_key)
main = result.inputs[0]

if main.report is None:  # unreadable (undecodable bytes ...)
    show_problems([main.failure], key="qa_problems", error="Cannot score this file:")
    st.stop()
report = main.report


def main_bytes() -> bytes:
    """The main input's bytes (the demo's, or the upload's copied once): what review sessions and saved runs keep."""
    return data if isinstance(data, bytes) else upload_bytes(data)


st.caption(f"File: {md(file_name)} · task: **{report.task}** ({md(report.task_reason)})")
show_problems(report.issues, key="qa_problems")
if not main.usable:
    reason = main.failure.message
    st.error(md(f"{file_name}: {reason}. Upload the predictions with the file (second uploader) or set the "
                "prediction field under Settings." if "prediction" in reason else f"{file_name}: {reason}."))
    st.stop()

headline(report)

for other in result.inputs[1:]:
    if other.failure is not None:
        show_problems([other.failure], key=f"qa_problems_{other.failure.file}",
                      error="Left out of the comparison:" if other.failure.kind == "unusable" else "Cannot be read:")
# Split into runs only when there is more than one system: a single large file is never materialised.
runs = cached(("qa-runs", run_key, config), result.runs) if result.others or len(report.by_group) > 1 else {}

# The first screen is the overview (cards above, static charts and tables): the interactive matrix,
# the grids and the side-by-side comparison are one click away and run only while their view is open.
VIEWS = {"overview": "Overview · 概览", "records": "Records · 逐条结果"}
if report.classification is not None:
    VIEWS["matrix"] = "Confusion matrix · 混淆矩阵"
if len(runs) > 1:
    VIEWS["systems"] = "Systems side by side · 系统对比"
if report.task == "qa":
    VIEWS["tokenization"] = "Tokenization · 分词敏感性"
qp = st.query_params
if "qa_view" not in st.session_state and "view" not in qp:  # a shared link to a record or a cell opens it
    if "record" in qp:
        st.session_state["qa_view"] = "records"
    elif "cell_true" in qp and "matrix" in VIEWS:
        st.session_state["qa_view"] = "matrix"
view = view_switch(VIEWS, key="qa_view")

if view == "overview":
    render_overview(report)
    if len(runs) <= 1 and source != "demo":
        st.caption("To compare systems side by side, upload more runs of the same questions (above), or a file "
                   "with a system / model field.")
    elif len(runs) > 1:
        st.caption(f"{len(runs)} systems: their paired comparison and records side by side are in the "
                   "Systems side by side view.")

elif view == "matrix":
    from components.confusion import render_confusion

    st.subheader("Confusion matrix · 混淆矩阵")
    cell = render_confusion(report.classification, key="qa_cm")
    if cell is None:
        st.caption("Click a cell, or pick a true and a predicted label, to list its claims.")
    else:
        rows, n_cell = report.records_in_cell(*cell, limit=MAX_ROWS)
        st.markdown(f"**{n_cell:,} record(s)** with true = {md(cell[0])} and predicted = {md(cell[1])}"
                    + (f"; the first {MAX_ROWS:,} are shown." if n_cell > len(rows) else ""))
        show_table([{"claim": r.question, "raw prediction": r.prediction_raw, "verdict": r.predicted_verdict,
                     "gold verdict": r.gold_verdict, "rule": r.verdict_rule, "gold": " | ".join(r.gold_answers),
                     "id": r.id} for r in rows], key="qa_cell_rows")
    st.subheader("Per-class metrics · 各类别指标")
    c = report.classification
    show_table(per_class_frame(report), column_config=ratio_columns("precision", "recall", "f1"))
    st.caption(f"Accuracy {fixed(100 * (c.accuracy or 0), 2)}% ({c.correct} of {c.n}). Undefined values (no prediction "
               "or no support for a class) are empty and skipped in the averages.")

elif view == "tokenization":
    from components.qa_views import render_sensitivity
    from evaluators.qa.sensitivity import METRICS, rank_sensitivity

    st.caption("Each system's word-overlap scores recomputed under characters, jieba (shipped dictionary), jieba "
               "with a big dictionary, jieba with HMM on and your user dictionary: does the ranking survive?")
    t1, t2 = st.columns(2)
    metric = t1.radio("Metric · 指标", list(METRICS), horizontal=True, key="qa_sens_metric")
    big_up = t2.file_uploader("Big jieba dictionary · 大词典 (optional; jieba's dict.txt.big)", type=["txt", "big"],
                              key="qa_big_dict")
    big = stored_dictionary(upload_bytes(big_up)) if big_up is not None else None
    sens_runs = runs or {report.file: report.records}
    sensitivity = cached(("qa-sensitivity", run_key, config, big),
                         lambda: rank_sensitivity(sens_runs, big_dictionary=big, user_dict=config.user_dict,
                                                  script=config.script, n_resamples=1000, seed=config.ci_seed))
    render_sensitivity(sensitivity, metric)
    if config.script:
        from evaluators.qa.sensitivity import script_effect

        moved = cached(("qa-script-effect", run_key, config), lambda: script_effect(sens_runs, config.script, config.lang))
        st.markdown(f"**Script conversion {md(config.script)}: {len(moved)} record(s) scored differently than "
                    "without it**")
        if moved:
            show_table([{"system": c.system, "id": c.id, "EM": f"{c.exact_match_before:g} → {c.exact_match_after:g}",
                         "F1": f"{fixed(c.token_f1_before, 2)} → {fixed(c.token_f1_after, 2)}",
                         "what changed": c.explanation,
                         "prediction": c.prediction, "gold": " | ".join(c.gold)} for c in moved],
                       key="qa_script_moved")

elif view == "systems":
    from components.compare_views import side_by_side_section

    side_by_side_section(result, runs, cached, (run_key, config), n_resamples=config.ci_resamples)

else:  # records
    import pandas as pd

    if len(report.by_lang) > 1 or report.by_group:
        st.subheader("Breakdown · 分组")
        show_table(breakdown_frame(report), column_config=ratio_columns("exact_match", "token_f1"))

    st.subheader("Records · 逐条结果")
    store = report.records
    all_statuses = cached(("qa-statuses", data_key, config), lambda: sorted({s for s in store.column("status") if s}))
    all_langs = cached(("qa-langs", data_key, config), lambda: sorted({x for x in store.column("lang") if x}))
    f1c, f2c, f3c, f4c = st.columns([2, 2, 1.4, 2])
    # the filters keep their values while another view is open (persist_state)
    statuses = f1c.multiselect("Status · 状态", all_statuses, default=all_statuses, key="qa_statuses",
                               persist_state="page")
    lang_pick = (f2c.multiselect("Language · 语言", all_langs, default=all_langs, key="qa_langs", persist_state="page")
                 if all_langs else [])
    only_errors = f3c.checkbox("Errors only · 只看错误", value=False, key="qa_errors_only", persist_state="page")
    needle = f4c.text_input("Search · 搜索", value="", placeholder="id, question, answer …", key="qa_search",
                            persist_state="page")

    def _view(kind: tuple, **filters):
        """The records passing ``filters`` (the first MAX_ROWS as rows), cached on the file, settings and filters:
        a rerun of another widget re-derives no record."""
        return cached(("qa-rows", data_key, config, kind), lambda: record_view(report, limit=MAX_ROWS, **filters))

    records = _view(("view", tuple(statuses), tuple(lang_pick), only_errors, needle), statuses=set(statuses),
                    langs=set(lang_pick) if all_langs else None, errors_only=only_errors, needle=needle)
    frame, n_match = pd.DataFrame(records.rows, columns=RECORD_COLUMNS), records.n_match
    # question and prediction first (they are what is read; a hex id first pushed them off a phone's screen)
    order = ["question", "prediction", "gold_answers", "exact_match", "token_f1", "status", "gold_verdict",
             "predicted_verdict", "group", "lang", "id", "verdict_rule", "tokenizer", "gold_field", "prediction_field",
             "line"]
    ids_shown = records.ids
    if "qa_open" not in st.session_state and qp.get("record") in ids_shown:
        st.session_state["qa_open"] = qp["record"]  # a shared link opens its record

    def _open_selected() -> None:
        """A row clicked in the records table opens that record."""
        rows = st.session_state["qa_records"].selection.rows
        if rows:
            st.session_state["qa_open"] = ids_shown[rows[0]]

    show_table(frame, key="qa_records", column_config=ratio_columns("exact_match", "token_f1"),
               column_order=[c for c in order if c in frame and frame[c].notna().any()], on_select=_open_selected,
               selection_mode="single-row")
    st.caption(f"{n_match} of {records.n_total} records match the filters"
               + (f"; the first {MAX_ROWS:,} are shown — narrow the filters or download the CSV for all."
                  if n_match > MAX_ROWS else ".") + " Click a row to open the record.")

    def _step(delta: int) -> None:
        """Previous / next record within the filtered table."""
        st.session_state["qa_open"] = records.step(st.session_state.get("qa_open"), delta)

    opened = st.session_state.get("qa_open")
    detail = records.detail(opened) if opened is not None else None
    if detail is not None:
        qp["record"] = opened
        pos = records.position(opened)
        with st.container(border=True):
            h1, h2, h3 = st.columns([6, 1, 1])
            h1.markdown(f"**Record {md(opened)}** · {pos + 1} of {len(ids_shown)} shown · "
                        f"status {md(detail['status'])}")
            h2.button("◀ Previous", key="qa_prev", on_click=_step, args=(-1,), disabled=pos == 0, width="stretch")
            h3.button("Next ▶", key="qa_next", on_click=_step, args=(1,), disabled=pos == len(ids_shown) - 1,
                      width="stretch")
            if detail["question"] is not None:
                st.markdown("**Question · 问题**")
                st.text(visible(detail["question"]))
            g, p = st.columns(2)
            g.markdown("**Ground truth · 标准答案**")
            g.text(visible(detail["gold"]))
            scores = detail["scores"]
            p.markdown("**Prediction · 预测**"
                       + (f" (EM {fixed(scores[0], 0)}, F1 {fixed(scores[1], 2)})" if scores else ""))
            p.text(visible(detail["prediction"]))
            if detail["raw_prediction"] is not None:
                with st.expander("Raw prediction (before <think> / <answer> handling)"):
                    st.text(visible(detail["raw_prediction"]))
            if detail["verdict"] is not None:
                gold_v, pred_v, rule = detail["verdict"]
                st.caption(f"Verdict: gold {md(gold_v)}, predicted {md(pred_v)} ({md(rule)})")
            where = detail["where"]
            st.caption(f"Tokenizer {md(where['tokenizer'])} · gold field {md(where['gold_field'])} · "
                       f"prediction field {md(where['prediction_field'])} · line {md(where['line'])}")
    elif "record" in qp:
        del qp["record"]

    def _side_table(columns: list[str], key: str, **filters) -> None:
        side = _view((key,), **filters)
        if side.n_match:
            show_table(pd.DataFrame(side.rows, columns=RECORD_COLUMNS)[columns], key=key)

    c_left, c_right = st.columns(2)
    with c_left:
        st.markdown(f"**Missing ground truth · 缺少标准答案: {len(report.missing_gt)}** (not scored)")
        if report.missing_gt:
            _side_table(["question", "prediction", "id"], "qa_missing_gt", statuses={"missing_gt"})
    with c_right:
        if report.task == "factcheck":
            st.markdown(f"**Unparsed predictions · 无法解析的预测: {len(report.unparsed_predictions)}** "
                        f"(+{len(report.missing_prediction)} empty); their own matrix column, never 'uncertain'")
            _side_table(["question", "prediction_raw", "id"], "qa_unparsed", statuses={"scored", "missing_prediction"},
                        predicted_verdicts={"unparsed"})
        else:
            st.markdown(f"**Missing predictions · 缺少预测: {len(report.missing_prediction)}** (scored 0)")
            if report.missing_prediction:
                _side_table(["question", "gold_answers", "id"], "qa_missing_pred", statuses={"missing_prediction"})
    if report.task == "factcheck":
        from components.qa_views import audit_rows
        from evaluators.qa.audit import audit, review_payloads

        st.markdown("**Extraction audit · 答案抽取审计** (per system: verdicts read, missed, ambiguous)")
        extraction = cached(("qa-audit", run_key, config), lambda: audit(runs or {report.file: report.records}))
        show_table(audit_rows(extraction), key="qa_audit", column_config=ratio_columns("accuracy"))
        review_button("Review the unparsed · 审阅未解析的答案", "qa", file_name,
                      lambda: review_payloads(extraction), key="qa_unparsed_to_review",
                      data=main_bytes)

st.subheader("Downloads · 下载")
downloads(report)
review_button("Review these records · 人工审阅这些记录", "qa", file_name, lambda: qa_items(report), key="qa_to_review",
              data=main_bytes)


save_run(lambda: qa_bytes_to_log(report, config, file_name, main_bytes(), preds), gt_name=file_name, source=file_name,
         key="qa_save")

st.subheader("Review corrections · 审阅更正")


def _corrected(patches):
    """:func:`evaluators.qa.patch.patch_run` of this run with ``patches`` (once per run, settings and patch)."""
    from evaluators.qa.patch import patch_run

    return cached(("qa-gt-patch", run_key, config, patches), lambda: patch_run(result, inputs, patches))


def _corrected_html(patches, corrections) -> str:
    from evaluators.reports.html import qa_report

    return qa_report(_corrected(patches)[0].report, corrections=(corrections.effect, corrections.applications))


corrections_control("qa", file_name, main_bytes,
                    lambda patches: _corrected(patches)[1], key="qa_fix", html=_corrected_html)
