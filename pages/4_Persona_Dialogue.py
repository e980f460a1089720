"""Persona dialogue: replies by scene and model, similarity metrics, model comparison."""

from components.layout import page_frame

source = page_frame("Persona Dialogue", "💬",
                    caption="Persona chatbot replies against expected responses, scene by scene — 中文 and English.")

import json  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

import streamlit as st  # noqa: E402

from components.dialogue_views import (  # noqa: E402
    case_table, comparison_view, downloads, metric_picker, model_table, scene_model_heatmap, scene_model_svg,
)
from components.corrections import corrections_control  # noqa: E402
from components.layout import view_switch  # noqa: E402
from components.metrics import metric_row  # noqa: E402
from components.problems import show_problems  # noqa: E402
from components.static import static_chart  # noqa: E402
from components.review_link import review_button  # noqa: E402
from components.save_run import save_run  # noqa: E402
from evaluators.tasks.builtin import dialogue_run_result  # noqa: E402
from evaluators.review.items import dialogue_items, dialogue_pair_items  # noqa: E402
from components.textdiff import render_char_diff  # noqa: E402
from components.uploads import cached, upload_digest  # noqa: E402
from evaluators.demo import demo_path  # noqa: E402
from evaluators.dialogue import (  # noqa: E402
    DEFAULT_METRICS, DEFAULT_WEIGHTS, DialogueConfig, DialogueInputs, load_cases, load_predictions, run_dialogue,
)
from evaluators.dialogue.live_job import LiveJobs  # noqa: E402
from evaluators.text.diff import char_diff  # noqa: E402
from evaluators.dialogue.matching import prediction_fit  # noqa: E402
from evaluators.dialogue.scoring import case_matrix, compare_two_models  # noqa: E402
from evaluators.reports.dialogue import annotation_csv, json_report_text, summary_text  # noqa: E402
from evaluators.metrics.registry import list_metrics  # noqa: E402
from evaluators.reports.escape import md, visible  # noqa: E402
from evaluators.reports.format import MISSING, fixed  # noqa: E402

DEMO_FILES = ("panda-chat-large.jsonl", "panda-chat-small_report.json")
#: Live-mode checkpoints (one JSONL per cases, endpoint and model): a stopped or interrupted run resumes.
LIVE_DIR = Path(os.environ.get("EVALBOARD_DATA_DIR", ".evalboard")) / "live"

# ----------------------------------------------------------------------------- inputs
# Each file is parsed once per content and name (the name picks the format and is quoted in issues and
# reports), shared across reruns and sessions; ``*_key`` name the parsed files in the evaluation's cache key.
if source == "demo":
    cases_name = "persona_cases.json"
    cases_key = f"demo:{cases_name}"
    def cases_bytes() -> bytes:
        return demo_path("dialogue", cases_name).read_bytes()

    case_set = cached(("dialogue-cases", cases_key), lambda: load_cases(cases_bytes(), cases_name))
    pred_keys = [f"demo:{name}" for name in DEMO_FILES]
    pred_sets = [cached(("dialogue-preds", key), lambda name=name: load_predictions(
        demo_path("dialogue", name).read_bytes(), name)) for key, name in zip(pred_keys, DEMO_FILES)]
    st.caption("Demo: Momo the little panda (written for EvalBoard), two fictional models. "
               "Choose “Upload my files” in the sidebar to score your own.")
else:
    up_cases = st.file_uploader("Test cases (JSON with test_cases_by_scene, a stored report, JSONL or CSV)",
                                type=["json", "jsonl", "csv"], key="dialogue_cases")
    up_preds = st.file_uploader("Predictions, one or more models (stored JSON report, or CSV/JSONL with model, "
                                "scene, dialogue_index, prediction)", type=["json", "jsonl", "csv"],
                                accept_multiple_files=True, key="dialogue_preds")
    if up_cases is None:  # an empty upload is read, and said to be empty
        st.info("Upload a test-case file to start. Cases look like "
                '`{"test_cases_by_scene": {"scene": [{"context", "expected_response", "scene", "dialogue_index"}]}}`; '
                "a JSON report stored by the earlier persona script works as cases and as predictions.")
        st.stop()
    cases_name, cases_key = up_cases.name, upload_digest(up_cases)
    def cases_bytes() -> bytes:
        return up_cases.getvalue()

    case_set = cached(("dialogue-cases", cases_key), lambda: load_cases(cases_bytes(), up_cases.name))
    pred_keys = [upload_digest(f) for f in up_preds or []]
    pred_sets = [cached(("dialogue-preds", key), lambda f=f: load_predictions(f.getvalue(), f.name))
                 for key, f in zip(pred_keys, up_preds or [])]

if not case_set.cases:
    show_problems(case_set.issues, key="dialogue_case_problems", error=f"No usable test case in {cases_name}.")
    st.stop()

# How each predictions file fits the cases (engine's rule); a stored report made against other cases offers its own.
uploaded_cases = cases_name
fits = cached(("dialogue-fit", cases_key, tuple(pred_keys)), lambda: prediction_fit(case_set.cases, pred_sets))
own_files = {f.file: k for f, k in zip(fits, pred_keys) if f.offers_own_cases}  # one file per set
fit_notes = st.container()  # the counts first, then the offer under them
against = f"the uploaded cases ({uploaded_cases})"
if source != "demo" and own_files:
    own_pick = st.radio("Score against · 参考用例", [None, *own_files], key="dialogue_cases_from", horizontal=True,
                        format_func=lambda f: f"the uploaded test cases ({visible(uploaded_cases)})" if f is None else
                        f"the {next(x.n_own_cases for x in fits if x.file == f)} cases stored in {visible(f)}")
    if own_pick is not None:
        picked = next(u for u in up_preds if u.name == own_pick)
        cases_name, cases_key = picked.name, own_files[own_pick]

        def cases_bytes() -> bytes:
            return picked.getvalue()

        case_set = cached(("dialogue-cases", cases_key), lambda: load_cases(cases_bytes(), picked.name))
        fits = cached(("dialogue-fit", cases_key, tuple(pred_keys)),
                      lambda: prediction_fit(case_set.cases, pred_sets))
        against = f"the cases stored in {cases_name}"
        st.caption(f"Scored against the {len(case_set.cases)} cases stored in {md(cases_name)}, not the uploaded "
                   f"test cases ({md(uploaded_cases)}).")
for f in fits:
    if headline := f.headline(against):
        fit_notes.warning(md(headline))

# ----------------------------------------------------------------------------- settings
all_info = [m.info() for m in list_metrics()]
with st.expander("Settings: metrics, mode, weights", expanded=False):
    chosen = metric_picker(all_info, list(DEFAULT_METRICS))
    mode = st.radio("Definitions", ["default", "difflib"], horizontal=True, key="dialogue_mode",
                    help="difflib: exact, fuzzy and keyword similarity exactly as the earlier persona script "
                         "(reproduces its stored numbers).")
    st.caption("Combined score weights (unavailable metrics' weight is redistributed over the others)")
    wcols = st.columns(len(DEFAULT_WEIGHTS))
    weights = {name: wcol.number_input(name, 0.0, 1.0, float(w), 0.05, key=f"dialogue_w_{name}")
               for wcol, (name, w) in zip(wcols, DEFAULT_WEIGHTS.items())}
    user_dict_up = st.file_uploader("jieba user dictionary · 用户词典 (optional)", type=["txt"],
                                    key="dialogue_user_dict",
                                    help="Words for keyword_jaccard's jieba tokenization; its SHA-256 is written "
                                         "into the metric's signature.")

# A live run is a job of the session (evaluators.dialogue.live_job): "Ask" starts it, every rerun while it is
# recorded goes on with it from its checkpoint, "Stop" ends it after the reply in progress.
jobs = LiveJobs(st.session_state, LIVE_DIR)
job = jobs.current(cases_key)
with st.expander("Live endpoint (optional): ask a running chat server", expanded=job is not None):
    st.caption("POST {base}/chat with {message, model_config_name}; POST {base}/reset after each scene. "
               "Only the URL you give is contacted (http or https; no redirect to another host).")
    url = st.text_input("Base URL", placeholder="http://127.0.0.1:8000", key="dialogue_live_url")
    live_model = st.text_input("Model name", key="dialogue_live_model")
    lc1, lc2 = st.columns(2)
    timeout = lc1.number_input("Timeout per request (s)", 1.0, 600.0, 60.0, key="dialogue_live_timeout")
    retries = lc2.number_input("Retries", 0, 10, 2, key="dialogue_live_retries")
    if url and live_model and job is None and jobs.has_replies(cases_key, url, live_model):
        st.caption("Replies already received for these cases, URL and model are kept; asking again sends only "
                   "the cases still without a reply.")
    st.button("Ask the endpoint", disabled=not (url and live_model) or job is not None, key="dialogue_live_go",
              on_click=lambda: jobs.start(cases_key, *(st.session_state[f"dialogue_live_{k}"]  # values at the click
                                                       for k in ("url", "model", "timeout", "retries"))))
    if job is not None:
        st.button("Stop", key="dialogue_live_stop", on_click=jobs.request_stop,
                  help="Stops after the reply in progress; every reply received so far is kept, and asking again "
                       "resumes with the cases still without a reply.")
        bar = st.progress(0.0, text=f"asking {md(job['model'])}…")
        outcome = jobs.run(case_set.cases, progress=lambda d, t: bar.progress(d / t, text=f"{d}/{t} replies"))
        {"success": st.success, "warning": st.warning, "error": st.error}[outcome.level](md(outcome.message))
        for note in outcome.warnings:
            st.warning(md(note))

inputs = DialogueInputs.of(case_set, [*pred_sets, *jobs.prediction_sets()])
preds = inputs.combined()  # a new set: the cached ones are shared and never changed
if not preds.rows:
    if pred_sets:  # files were given: none of them holds a usable row (an empty file says so below)
        show_problems(preds.issues, key="dialogue_pred_problems", error="No usable prediction row in "
                      + ", ".join(f for s in pred_sets for f in s.files) + ".")
    else:
        st.info("Upload one or more prediction files (or ask a live endpoint) to score them.")
        show_problems(preds.issues, key="dialogue_pred_problems")
    st.stop()

if not chosen:
    st.warning("Pick at least one metric in Settings; the combined score's metrics are computed anyway.")
try:
    from evaluators.text.provenance import stored_dictionary

    config = DialogueConfig(metrics=tuple(chosen), weights=weights, mode=mode,
                            user_dict=stored_dictionary(user_dict_up.getvalue()) if user_dict_up is not None else None)
except ValueError as exc:  # pragma: no cover - DialogueConfig does not validate yet
    st.error(md(exc))
    st.stop()

# ----------------------------------------------------------------------------- evaluation (cached per input)
def _evaluate():
    bar = st.progress(0.0, text="scoring…")
    try:
        return run_dialogue(inputs, config, predictions=preds,
                            progress=lambda d, t: bar.progress(d / t, text=f"scoring {d}/{t}"))
    finally:
        bar.empty()


# Keyed on the parsed files (content and name), the live replies (this session's) and every setting.
eval_key = ("dialogue-eval", cases_key, tuple(pred_keys), tuple(jobs.rows()),
            json.dumps(config.to_dict(), sort_keys=True, ensure_ascii=False))
try:
    evaluation = cached(eval_key, _evaluate)
except (KeyError, ValueError) as exc:
    st.error(f"Cannot score: {md(exc)}")
    st.stop()
names = [m["name"] for m in evaluation.metric_info]  # as scored: a mode's variants under their own names

show_problems(evaluation.issues, key="dialogue_problems")  # unmatched, duplicate or skipped rows

metric_row([(f"{md(s.model)} · combined", fixed(s.combined_score),
             f"{s.n_scored} cases scored, {s.n_missing} missing (count as 0), {s.n_no_gt} without ground truth"
             + (f"; 95% CI {fixed(s.combined_score_ci_low)} – {fixed(s.combined_score_ci_high)} "
                "(bootstrap over cases)" if s.combined_score_ci_low is not None else ""))
            for s in evaluation.by_model])
st.caption("Combined score = " + " + ".join(f"{fixed(w, 2)} × {md(m)}" for m, w in evaluation.weights.used.items())
           + f" ({md(evaluation.weights.note)}). Mean over cases (macro); a missing reply counts 0.")
unavailable = [m for m in evaluation.metric_info if not m["available"]]
for m in unavailable:
    st.caption(f"**{md(m['name'])}**: {MISSING} ({md(m['unavailable_reason'])})")

# The first screen is light: static charts and the models table; the interactive heatmap and chart, the
# sortable grids, the cases and the paired comparison are one click away, and run only when opened.
VIEWS = {"overview": "Overview · 概览", "scenes": "Scenes × models", "models": "Models", "cases": "Cases",
         "compare": "Model comparison", "tokenization": "Tokenization · 分词敏感性"}
view = view_switch(VIEWS, key="dialogue_view")
if view == "overview":
    from evaluators.reports.svg import grouped_bars

    bm = evaluation.by_model
    c1, c2 = st.columns(2)
    if bm:
        static_chart(grouped_bars([s.model for s in bm], {"combined_score": [s.combined_score for s in bm]},
                                  {"combined_score": [s.combined_score_ci_low for s in bm]},
                                  {"combined_score": [s.combined_score_ci_high for s in bm]},
                                  title="Combined score by model (95% bootstrap CI over cases)"), where=c1)
    if evaluation.by_scene:
        static_chart(scene_model_svg([s.to_dict() for s in evaluation.by_scene]), where=c2)
    model_table([s.to_dict() for s in bm], names, {k: v.to_dict() for k, v in evaluation.corpus_bleu.items()},
                static=True)
    c = evaluation.comparison.to_dict() if evaluation.comparison else None
    if c:
        st.caption(f"On {c['n_shared']} cases answered by every model: "
                   + ", ".join(f"{md(m)} wins {n}" for m, n in c["wins"].items()) + f", ties {c['ties']}. "
                   "Each case, the character diffs and the paired comparison are in the views above.")
elif view == "tokenization":
    from components.qa_views import render_sensitivity
    from evaluators.qa.sensitivity import METRICS, rank_sensitivity

    st.caption("Each model's word-overlap scores against the expected replies, recomputed under characters, jieba "
               "(shipped dictionary), jieba with HMM on and your user dictionary: does the ranking survive?")
    sens_metric = st.radio("Metric · 指标", list(METRICS), horizontal=True, key="dialogue_sens_metric")
    from evaluators.dialogue.scoring import model_replies

    sensitivity = cached(("dialogue-sensitivity", eval_key),
                         lambda: rank_sensitivity(model_replies(evaluation), user_dict=config.user_dict,
                                                  n_resamples=1000))
    render_sensitivity(sensitivity, sens_metric, key="dialogue")
elif view == "scenes":
    scene_model_heatmap([s.to_dict() for s in evaluation.by_scene])
elif view == "models":
    from components.compare_views import systems_chart

    if evaluation.by_model:
        bm = evaluation.by_model
        systems_chart([s.model for s in bm], {"combined_score": [s.combined_score for s in bm]},
                      {"combined_score": [s.combined_score_ci_low for s in bm]},
                      {"combined_score": [s.combined_score_ci_high for s in bm]},
                      title="Combined score by model (error bars: 95% bootstrap CI over cases)",
                      key="dialogue_models_chart")
    model_table([s.to_dict() for s in evaluation.by_model], names,
                {k: v.to_dict() for k, v in evaluation.corpus_bleu.items()})
    with st.expander("Signatures (tokenizer, normalization, library versions)"):
        for name, sig in evaluation.signatures.items():
            st.markdown(f"- **{md(name)}**: {md(sig)}")
elif view == "cases":
    f1, f2 = st.columns(2)
    model_pick = f1.selectbox("Model", ["all"] + evaluation.models, key="dialogue_case_model", format_func=visible,
                              persist_state="page")
    scene_pick = f2.selectbox("Scene", ["all"] + case_set.scenes, key="dialogue_case_scene", format_func=visible,
                              persist_state="page")
    shown = [r for r in evaluation.results
             if (model_pick == "all" or r.model == model_pick) and (scene_pick == "all" or r.scene == scene_pick)]
    case_table(shown, names)
    if shown:
        labels = [visible(f"{r.model} · {r.scene} #{r.dialogue_index}") + (f" ({r.occurrence + 1})" if r.occurrence else "")
                  for r in shown]
        pick = st.selectbox("Character diff of case", range(len(shown)), format_func=labels.__getitem__,
                            key="dialogue_case_pick")
        r = shown[pick]
        st.markdown("**Context**")
        st.text(visible(r.context))
        render_char_diff(char_diff(r.expected_response, r.prediction))
else:  # compare
    from components.compare_views import paired_scores_view
    from components.tables import show_table

    comparison_view(evaluation.comparison.to_dict() if evaluation.comparison else None)
    if len(evaluation.models) > 1:
        st.markdown("**Cases × models · 逐条对比**")
        matrix = case_matrix(evaluation)
        spread = st.slider("Show cases where the models' combined scores differ by at least · 分差至少", 0.0, 1.0, 0.0,
                           0.05, key="dialogue_spread", persist_state="page")
        kept = [r for r in matrix if spread == 0 or (r["spread"] is not None and r["spread"] >= spread - 1e-12)]
        show_table(kept, key="dialogue_matrix",
                   column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                                  for c in kept[0] if c.endswith("combined_score") or c == "spread"} if kept else None)
        st.caption(f"{len(kept)} of {len(matrix)} cases.")
        st.markdown("**Paired comparison · 配对比较**")
        p1, p2 = st.columns(2)
        model_a = p1.selectbox("Model A (baseline)", evaluation.models, index=0, key="dialogue_pair_a",
                               format_func=visible)
        model_b = p2.selectbox("Model B", evaluation.models, index=1, key="dialogue_pair_b", format_func=visible)
        if model_a == model_b:
            st.info("Pick two different models.")
        else:
            try:
                paired = cached(("dialogue-pair", eval_key, model_a, model_b),
                                lambda: compare_two_models(evaluation, model_a, model_b))
            except ValueError as exc:
                st.warning(md(str(exc)))
            else:
                by_case = {r["case"]: {"case": r["case"], f"{model_a}": r[f"{model_a}: combined_score"],
                                       f"{model_b}": r[f"{model_b}: combined_score"],
                                       "expected": r["expected_response"], f"{model_a} reply": r[f"{model_a}: prediction"],
                                       f"{model_b} reply": r[f"{model_b}: prediction"]} for r in matrix}
                paired_scores_view(paired, by_case, "dialogue_pair", metric="combined score")
                review_button(f"Blind A/B review of {md(model_a)} and {md(model_b)} · 盲评", "dialogue_pair", case_set.file,
                              lambda: dialogue_pair_items(evaluation, model_a, model_b), key="dialogue_ab_review",
                              blind=True)

st.subheader("Downloads · 下载")
stem = "persona_evaluation"
downloads({  # written when a button is clicked, not on every rerun
    "Human annotation CSV": (f"{stem}_human_annotation.csv", lambda: annotation_csv(evaluation)),
    "JSON report": (f"{stem}_report.json", lambda: json_report_text(evaluation)),
    "Text summary": (f"{stem}_summary.txt", lambda: summary_text(evaluation)),
})
review_button("Review these replies · 人工审阅这些回复", "dialogue", case_set.file,
              lambda: dialogue_items(evaluation), key="dialogue_to_review", data=cases_bytes)
save_run(lambda: dialogue_run_result(evaluation), gt_name=case_set.file, source=case_set.file, key="dialogue_save",
         gt_files=lambda: [(case_set.file, cases_bytes())])

st.subheader("Review corrections · 审阅更正")


def _corrected(patches):
    """:func:`run_dialogue` with the review corrections (once per inputs, settings and patch)."""
    import dataclasses

    return cached(eval_key + ("gt-patch", patches), lambda: run_dialogue(
        dataclasses.replace(inputs, gt_patch=patches), config, predictions=preds)).corrections


corrections_control("dialogue", case_set.file, cases_bytes, _corrected, key="dialogue_fix")
