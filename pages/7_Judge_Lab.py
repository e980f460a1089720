"""Judge lab: can this judge prompt replace people on our data, and how sure are we?

Layout only: reading, the split, every figure and the corrected scores live in :mod:`evaluators.judgelab`."""

from __future__ import annotations

import streamlit as st

from components.layout import page_frame

source = page_frame("Judge lab · 评审模型校准", "⚖️",
                    caption="LLM-judge versions against the team's own final labels: dev and held-out test figures "
                            "with intervals, the overfit warning, corrected scores, the bias panel.")

from components import judgelab_views as views  # noqa: E402
from components.cache import cached  # noqa: E402
from components.downloads import download  # noqa: E402
from components.layout import view_switch  # noqa: E402
from components.metrics import metric_row  # noqa: E402
from components.problems import show_problems  # noqa: E402
from components.review_link import review_store  # noqa: E402
from components.uploads import upload_bytes, upload_digest  # noqa: E402
from evaluators.demo import demo_path  # noqa: E402
from evaluators.io import InputError  # noqa: E402
from evaluators.judgelab.lab import read_lab_inputs, run_lab  # noqa: E402
from evaluators.reports.escape import md, visible  # noqa: E402
from evaluators.reports.judgelab import calibration_json  # noqa: E402

#: The demo's files: labels, the three versions' verdicts, their verdicts on unlabelled answers, the items.
DEMO = {"labels": "labels.jsonl", "verdicts": ("verdicts_v1.jsonl", "verdicts_v2.jsonl", "verdicts_v3.jsonl"),
        "target": "target_verdicts.jsonl", "items": "items.jsonl"}
FILE_TYPES = ["jsonl", "json", "csv"]


def _demo(name: str) -> tuple[str, bytes]:
    return name, demo_path("judgelab", name).read_bytes()


if source == "demo":
    st.info("Demo data written for EvalBoard: 200 short answers (中文 and English) labelled by a person, and three "
            "versions of a judge prompt from the project's stub judge — one of them saw its dev items as "
            "examples. Switch *Data source* in the sidebar to upload your own labels and verdicts.",
            icon=":material/science:")
    inputs = cached(("judgelab-demo-inputs",), lambda: read_lab_inputs(
        labels=_demo(DEMO["labels"]), verdicts=[_demo(n) for n in DEMO["verdicts"]], target=_demo(DEMO["target"]),
        items=_demo(DEMO["items"])))
    input_key: tuple = ("demo",)
else:
    origin = st.radio("Human labels from · 人工标签来源", ["file", "review"], horizontal=True, key="jl_label_source",
                      format_func={"file": "A labels file", "review": "Review sessions (final labels)"}.get)
    c1, c2 = st.columns(2)
    up_verdicts = c2.file_uploader("Judge verdicts, one or more files (a version per `judge` name)", type=FILE_TYPES,
                                   accept_multiple_files=True, key="jl_verdicts") or []
    review = None
    up_labels = None
    if origin == "file":
        up_labels = c1.file_uploader("Human labels (item_id, label, slice, guidelines_version)", type=FILE_TYPES,
                                     key="jl_labels")
        label_key: tuple = (upload_digest(up_labels) if up_labels is not None else None,)
    else:
        from evaluators.review.store import default_url

        store = review_store(default_url())
        sessions = {s.id: s for s in store.sessions()}
        chosen = c1.multiselect("Review sessions on one dataset", list(sessions), key="jl_sessions",
                                format_func=lambda i: visible(f"{i} · {sessions[i].name}"),
                                help="Final labels: adjudicated, else unanimous; GT errors are left out. The "
                                     "verdicts' item ids are the review records' ids (with @system when the items "
                                     "name a system, e.g. q1@mem0).")
        review = (store, chosen) if chosen else None
        label_key = tuple((sid, store.changes(sid)) for sid in chosen)  # a new decision is new labels
    c3, c4 = st.columns(2)
    up_target = c3.file_uploader("Target verdicts (optional): the versions on unlabelled outputs", type=FILE_TYPES,
                                 key="jl_target")
    up_items = c4.file_uploader("Items (optional): item_id and answer, for the length bias", type=FILE_TYPES,
                                key="jl_items")
    input_key = (origin, label_key, tuple(upload_digest(u) for u in up_verdicts),
                 *(upload_digest(u) if u is not None else None for u in (up_target, up_items)))
    if (up_labels is None and review is None) or not up_verdicts:
        st.info("Give the human labels (a file, or review sessions) and at least one file of judge verdicts.")
        st.stop()
    try:  # a file that cannot be decoded at all is refused whole, naming it
        inputs = cached(("judgelab-inputs", input_key), lambda: read_lab_inputs(
            labels=(up_labels.name, upload_bytes(up_labels)) if up_labels is not None else None,
            verdicts=[(u.name, upload_bytes(u)) for u in up_verdicts],
            target=(up_target.name, upload_bytes(up_target)) if up_target is not None else None,
            items=(up_items.name, upload_bytes(up_items)) if up_items is not None else None, review=review))
    except InputError as exc:
        st.error(md(f"Cannot read the upload: {exc}"))
        st.stop()

show_problems(inputs.issues, key="jl_problems")
for item_id, why in inputs.left_out[:5]:
    st.caption(md(f"{item_id}: {why}, left out"))
if len(inputs.left_out) > 5:
    st.caption(f"… and {len(inputs.left_out) - 5} more left out")
pool = source != "demo" and st.checkbox(  # the demo's labels share one guidelines version
    "Pool guidelines versions · 合并不同版本的审阅指南", value=False, key="jl_pool",
    help="Labels made under different guidelines are refused unless pooled explicitly: agreement is only "
         "meaningful against one guideline.")
try:
    lab = cached(("judgelab-lab", input_key, pool), lambda: run_lab(
        inputs.labels, inputs.judges, target=inputs.target or None, lengths=inputs.lengths, pool_guidelines=pool,
        refs=inputs.refs))
except ValueError as exc:
    st.error(md(f"Cannot calibrate: {exc}"))
    st.stop()

report = lab.report
best = max((cal for cal in report.judges if cal.test.cohen_kappa.value is not None),
           key=lambda cal: cal.test.cohen_kappa.value, default=None)
metric_row([("Labelled items · 标注数", report.n_labels, "Human final labels in the calibration set."),
            ("Dev / test · 开发/测试", f"{len(report.split.ids('dev'))} / {len(report.split.ids('test'))}",
             "Split once, stratified by label × slice (seed 0); an item never changes side when items are added."),
            ("Judge versions · 版本", len(report.judges), None),
            ("Best test kappa · 最佳测试 κ", best.test.cohen_kappa.value if best else None,
             visible(best.version.label) if best else None),
            ("Overfit · 过拟合", sum(cal.overfit for cal in report.judges),
             "Versions whose dev kappa lies above the upper end of their test kappa's interval.")])
views.warnings(lab)

view = view_switch({"overview": "Versions · 版本对比", "confusion": "Confusion & disagreements · 混淆与分歧",
                    "bias": "Bias panel · 偏差"}, key="jl_view")
if view == "overview":
    views.versions_table(lab)
    views.corrected_panel(lab)
    download("Calibration report (JSON) · 校准报告", lambda: calibration_json(
        report, dict(lab.corrected) if inputs.target else None), file_name="judge_calibration.json",
        mime="application/json", key="jl_dl_json",
        help="The same file as `python -m evaluators judge calibrate --format json` (with --target when target "
             "verdicts are given).")
    st.caption(f"Signature: {md(report.signature)}")
elif view == "confusion":
    views.confusion_panel(lab)
else:
    views.bias_panel(lab)
