"""Long-term-memory QA (LoCoMo, LongMemEval): metrics by question type and LLM-as-judge."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from components.layout import page_frame

source = page_frame(
    "Long-term memory QA", "🧠",
    caption="LoCoMo / LongMemEval results by question type, with an LLM judge (cached) and LoCoMo's own F1.",
)

from components import memory_views as views  # noqa: E402
from components.layout import view_switch  # noqa: E402
from components.problems import show_problems  # noqa: E402
from components.static import static_chart  # noqa: E402
from components.uploads import cached, upload_bytes, upload_digest, upload_view  # noqa: E402
from evaluators.demo import demo_path  # noqa: E402
from evaluators.reports.format import fixed  # noqa: E402
from evaluators.memory import judge as judge_mod  # noqa: E402
from components.corrections import corrections_control  # noqa: E402
from components.downloads import download  # noqa: E402
from components.review_link import review_button  # noqa: E402
from components.save_run import save_run  # noqa: E402
from evaluators.tasks.builtin import memory_run_result  # noqa: E402
from evaluators.memory.compare import OtherSystem, score_other_system  # noqa: E402
from evaluators.review.items import memory_items  # noqa: E402
from evaluators.memory.inputs import resolve_inputs, system_name  # noqa: E402
from evaluators.memory import metrics as metrics_mod  # noqa: E402
from evaluators.memory.llm import LLMConfig, OpenAICompatibleClient  # noqa: E402
from evaluators.memory.records import LOCOMO_TYPES, results_to_jsonl  # noqa: E402
from evaluators.memory.run import MemoryConfig, local_judge_store, run_judge, run_memory  # noqa: E402
from evaluators.reports.memory import judge_cache_of, questions_csv, report_json  # noqa: E402
from evaluators.reports.escape import md, visible  # noqa: E402

#: Bootstrap resamples of the confidence intervals (the CLI's default, so both give the same numbers).
CI_RESAMPLES = 10_000
#: Where judge runs started from this page keep their cache (one file per results set).
CACHE_DIR = Path(os.environ.get("EVALBOARD_JUDGE_CACHE_DIR", str(Path(".evalboard") / "judge_cache")))

# ---------------------------------------------------------------- inputs
# Every rule deciding what is scored lives in evaluators.memory.inputs (the CLI uses the same resolver).
uploaded_cache_key: tuple = ()  # what the input judge cache was read from (part of the judge cache keys)

if source == "demo":
    st.info("Demo data written for EvalBoard: a memory assistant answering 25 questions about two made-up "
            "conversations (English and 中文), LoCoMo question types, with a hand-written judge cache and a "
            "second judge's labels. Switch *Data source* in the sidebar to upload your own files.",
            icon=":material/science:")  # an icon given: Streamlit does not look for an emoji opening the text
    demo_files = (("results", "demo_results.jsonl"), ("judge_cache", "demo_judge_cache.json"),
                  ("labels", "demo_judge_labels.jsonl"))
    # other systems: name -> (file name, content key, bytes when first needed)
    other_files = {"no-memory baseline": ("demo_results_baseline.jsonl", "demo",
                                          lambda: demo_path("memory", "demo_results_baseline.jsonl").read_bytes())}
    # Read and resolved once (shared across reruns and sessions; never changed below).
    inputs = cached(("mem-demo",), lambda: resolve_inputs(**{role: (name, demo_path("memory", name).read_bytes())
                                                             for role, name in demo_files}))
    uploaded_cache_key = ("demo",)

    def gt_bytes() -> bytes:
        return demo_path("memory", "demo_results.jsonl").read_bytes()
    # What the results (and stored labels) were made from: the cache key of everything derived from them.
    input_key: tuple = ("demo",)
else:
    st.markdown("**Results**: an EvalResult file (JSONL / JSON / CSV with `question_id`, `question_type`, "
                "`question`, `ground_truth`, `prediction`) or mem0's LoCoMo `results.json` — or a question file "
                "(LoCoMo `locomo10.json` / LongMemEval) with predictions keyed by `question_id`.")
    c1, c2, c3 = st.columns(3)
    up_results = c1.file_uploader("Results", type=["jsonl", "json", "csv"], key="mem_results")
    up_questions = c2.file_uploader("Questions (LoCoMo / LongMemEval)", type=["json"], key="mem_questions")
    up_preds = c3.file_uploader("Predictions by question_id", type=["jsonl", "json", "csv"], key="mem_preds")
    c4, c5 = st.columns(2)
    up_cache = c4.file_uploader("Judge cache (optional)", type=["json"], key="mem_cache")
    up_labels = c5.file_uploader("Stored judge labels (optional)", type=None, key="mem_labels",
                                 help="LongMemEval's judge output (*.eval-results-<model>, JSONL), records with "
                                      "question_id + label, or mem0 results (llm_score). With a LongMemEval "
                                      "question file and no predictions file, its hypotheses are the predictions.")
    up_more = st.file_uploader("Optional: other systems on the same questions, to compare side by side · 其他系统",
                               type=["jsonl", "json", "csv"], accept_multiple_files=True, key="mem_more_results",
                               help="One EvalResult file (or mem0 results.json) per system; questions are matched "
                                    "by question_id.") or []
    other_files = {system_name((), u.name) or f"system {i + 2}": (u.name, upload_digest(u), lambda u=u: upload_view(u))
                   for i, u in enumerate(up_more)}
    uploads = {"results": up_results, "questions": up_questions, "predictions": up_preds, "labels": up_labels,
               "judge_cache": up_cache}
    input_key = tuple(upload_digest(u) if u is not None else None
                      for u in (up_results, up_questions, up_preds, up_labels))
    if up_cache is not None:
        uploaded_cache_key = ("upload", upload_digest(up_cache))

    def gt_bytes() -> bytes:  # the file the scored ground truth comes with (ResolvedInputs.gt_role)
        return upload_bytes(uploads[inputs.gt_role])
    # Read and resolved once per file contents (shared across reruns), not on every widget change.
    inputs = cached(("mem-inputs", input_key, uploaded_cache_key),
                    lambda: resolve_inputs(**{role: (u.name, upload_view(u)) for role, u in uploads.items()
                                              if u is not None}))
results = inputs.results
issues = inputs.issues
stored = inputs.stored
stored_name = inputs.stored_source
uploaded_cache = inputs.judge_cache
for note in inputs.notes:
    st.caption(md(note))

# something was uploaded but nothing in it could be used: say why
unusable = "No usable question in the upload:" if not results and any(i.severity == "error" for i in issues) else None
show_problems(issues, key="mem_problems", error=unusable)
if not results:
    if unusable is None:
        st.info("Upload a results file (or a question file with predictions) to see metrics by question type.")
    st.stop()

by_id = {r.question_id: r for r in results}
# The local judge cache of these results (read and written by judge runs started here): once per inputs.
disk_cache_path = cached(("mem-data-key", input_key, str(CACHE_DIR)), lambda: local_judge_store(CACHE_DIR, results))

# ---------------------------------------------------------------- settings
is_locomo = any(r.question_type in LOCOMO_TYPES and r.question_type != "adversarial" for r in results)
try:
    availability = metrics_mod.metric_availability()
except ImportError as exc:  # the shared metric registry is not installed
    availability = {m: (str(exc) if m in metrics_mod.TEXT_METRICS else None) for m in metrics_mod.ALL_METRICS}
s1, s2 = st.columns([3, 1])
chosen = s1.multiselect(
    "Metrics", options=[m for m in metrics_mod.ALL_METRICS if m != "locomo_f1"],
    default=[m for m in metrics_mod.DEFAULT_METRICS if availability.get(m) is None],
    format_func=lambda m: views.label(m) + (" (unavailable)" if availability.get(m) else ""), key="mem_metrics",
    help="Means over questions. Metrics marked unavailable need an optional install (BERTScore, semantic "
         "similarity: `pip install -r requirements-optional.txt`) or data: METEOR, not picked by default, needs "
         f"nltk's WordNet (run `{metrics_mod.METEOR_DATA_HINT}` once, with network, then restart). "
         + views.ROUGE1_NOTE,
)
for m in chosen:
    if availability.get(m):
        st.error(f"{views.label(m)} is not computed: {availability[m]}")
chosen = [m for m in chosen if not availability.get(m)]
parity_on = s2.checkbox("LoCoMo parity F1", value=is_locomo, key="mem_parity",
                        help="LoCoMo's own scoring code: stemmed token F1, multi-hop split on commas, "
                             "adversarial by its unanswerable check.")
user_dict_up = st.file_uploader("jieba user dictionary · 用户词典 (optional)", type=["txt"], key="mem_user_dict",
                                help="Words for the jieba tokenizations of the Tokenization view; its SHA-256 is "
                                     "written into the report's provenance. The report's metrics cut by characters.")
if not chosen and not parity_on:
    st.warning("Pick at least one metric.")
    st.stop()
from evaluators.text.provenance import stored_dictionary  # noqa: E402

user_dict = stored_dictionary(upload_bytes(user_dict_up)) if user_dict_up is not None else None
config = MemoryConfig(metrics=tuple(chosen), parity=parity_on, ci_resamples=CI_RESAMPLES,
                      judge_store=disk_cache_path, user_dict=user_dict)
# One run (the CLI's): judge cache choice, judge scores, metrics, parity, LongMemEval, agreement.  Its steps
# are kept per inputs and settings (page cache), so a widget rerun (filters, drill-down) reuses them.
report = run_memory(inputs, config, memo=cached, key=(input_key, uploaded_cache_key))
names = list(report.names)
judgements = report.judgements

# ---------------------------------------------------------------- judge
st.subheader("LLM judge")
if "mem_flash" in st.session_state:
    st.success(st.session_state.pop("mem_flash"))
if report.judge_cache_problem is not None:
    show_problems([report.judge_cache_problem], key="mem_judge_cache_problems", error="")  # the cache is not used
if report.judge_cache is None:
    judge_source = ""
elif report.judge_cache is uploaded_cache:
    judge_source = "the demo judge cache" if source == "demo" else "the uploaded judge cache"
else:
    judge_source = f"the local cache {report.judge_cache.path}"
if report.stale:
    st.warning(f"{len(report.stale)} cached judgement(s) no longer match their question, ground truth or "
               f"prediction and are not used (e.g. {md(', '.join(report.stale[:3]))}); run the judge to redo them.")
n_ok = sum(1 for j in judgements.values() if j.ok)
n_err = sum(1 for j in judgements.values() if not j.ok)
if judgements:
    st.caption(f"{n_ok} of {len(results)} questions judged (from {md(judge_source)})"
               + (f"; {n_err} without a score (malformed reply or failed request)" if n_err else "") + ".")
elif stored is not None and stored.labels:
    st.caption(f"No judge run yet; judge_score uses the stored labels ({md(stored_name)}).")
else:
    st.caption("No judge scores yet: judge_score stays empty until the judge runs or a judge cache is uploaded.")

env_config = None
try:
    env_config = LLMConfig.from_env()
except ValueError as exc:
    st.error(md(exc))
with st.expander("Run the judge", expanded=env_config is not None and n_ok < len(results)):
    e1, e2 = st.columns(2)
    base_url = e1.text_input("Endpoint (OpenAI-compatible, up to /v1)", value=env_config.base_url if env_config else "",
                             key="mem_base_url", placeholder="http://127.0.0.1:8000/v1")
    model = e2.text_input("Judge model", value=env_config.model if env_config else "", key="mem_model")
    mode = st.selectbox("Mode", ["auto", *judge_mod.MODES], key="mem_mode",
                        help="auto: LongMemEval's official prompts by question type, the rule for adversarial "
                             "questions, the graded (0-1, step 0.2) prompt for the others.")
    typed_key = st.text_input("API key for this endpoint (optional)", type="password", key="mem_api_key",
                              help="Sent only to the endpoint above, kept in this browser session only. The server's "
                                   "own key (EVALBOARD_JUDGE_API_KEY) is used only for the server's configured endpoint.")
    st.caption("The server's key is sent only to its configured endpoint; another URL gets only the key typed here. "
               f"Judgements are cached in {disk_cache_path} as they arrive: a stopped run resumes where it was.")
    if not base_url or not model:
        st.info("Set EVALBOARD_JUDGE_BASE_URL and EVALBOARD_JUDGE_MODEL (or fill in both fields) to run the judge.")
    elif st.button("Run judge", type="primary", key="mem_run_judge"):
        try:
            llm_config = LLMConfig.from_env(base_url=base_url, model=model, api_key=typed_key or None)
        except ValueError as exc:
            st.error(md(exc))
            st.stop()
        bar = st.progress(0.0, text="Judging ...")

        def _progress(done: int, total: int) -> None:
            bar.progress(done / total if total else 1.0, text=f"Judged {done} of {total}")

        try:  # the local cache, seeded with the uploaded one, filled in as judgements arrive; every request
            # through the local judge call cache (shared with the CLI's --judge-calls / judge run --cache)
            run, _ = run_judge(inputs, OpenAICompatibleClient(llm_config), store=disk_cache_path, mode=mode,
                               progress=_progress, calls=CACHE_DIR / "judge_calls.sqlite")
        except (ValueError, OSError) as exc:  # an unreadable or unwritable local cache, a bad mode
            st.error(md(exc))
        else:
            st.session_state["mem_flash"] = (f"Judged {run.n_judged} question(s) with {md(llm_config.model)}, reused "
                                             f"{run.n_cached} from the cache; {run.n_errors} without a score.")
            st.rerun()


# ---------------------------------------------------------------- metrics
def _score_other(file_name: str, data: bytes) -> OtherSystem:
    """Another system's results, paired with this run's questions and scored with its text metrics."""
    return score_other_system(file_name, data, [n for n in names if n not in ("judge_score", "locomo_f1")], results,
                              dataset=inputs.locomo_dataset)


rows, metrics = report.rows, report.metrics

st.subheader("Overall")
views.metric_cards(metrics["overall"], names)
if metrics["overall"].get("task_averaged_judge_score") is not None:
    st.caption(f"Task-averaged judge score (mean over types): {fixed(metrics['overall']['task_averaged_judge_score'])}")

# The first screen is light (cards, static chart and tables); the interactive chart, the sortable grids,
# the systems side by side and the questions are one click away, and run only while their view is open.
VIEWS = {"overview": "Overview · 概览", "types": "By question type · 按类型", "questions": "Questions · 逐题"}
if other_files:
    VIEWS["systems"] = "Systems side by side · 系统对比"
VIEWS["tokenization"] = "Tokenization · 分词敏感性"
view = view_switch(VIEWS, key="mem_view")
main_system = inputs.system if source != "demo" else "memory assistant"

if view == "overview":
    from evaluators.reports.html import memory_type_chart

    st.subheader("By question type")
    views.table(views.by_type_rows(metrics, names), static=True)
    static_chart(memory_type_chart(metrics, names, {n: views.label(n) for n in names}))
    st.caption("Means over questions (macro over questions): each question weighs the same. Each question, with "
               "its judge reasoning, is in the Questions view"
               + (f"; {len(other_files) + 1} systems are compared in the Systems side by side view." if other_files
                  else "."))
    views.show_signatures(metrics["signature"], metrics.get("unavailable", {}))
    if report.locomo_parity is not None:
        st.subheader("LoCoMo parity (the benchmark's published scoring)")
        views.show_parity(report.locomo_parity, static=True)
    if report.longmemeval is not None:
        st.subheader("LongMemEval accuracy (stored labels, as print_qa_metrics.py)")
        views.show_longmemeval(report.longmemeval, stored.models, static=True)
    if report.agreement is not None:
        st.subheader("Our judge vs stored labels")
        views.show_agreement(report.agreement, stored_name)

elif view == "types":
    st.subheader("By question type")
    views.table(views.by_type_frame(metrics, names))
    chart_metrics = st.multiselect("Chart", options=names,
                                   default=[n for n in names if n in ("judge_score", "token_f1_char", "locomo_f1")]
                                   or names[:1], format_func=views.label, key="mem_chart", persist_state="page")
    if chart_metrics:
        st.plotly_chart(views.by_type_figure(metrics, chart_metrics), width="stretch")
    st.caption("Means over questions (macro over questions): each question weighs the same.")
    if report.locomo_parity is not None:
        st.subheader("LoCoMo parity (the benchmark's published scoring)")
        views.show_parity(report.locomo_parity)
    if report.longmemeval is not None:
        st.subheader("LongMemEval accuracy (stored labels, as print_qa_metrics.py)")
        views.show_longmemeval(report.longmemeval, stored.models)

elif view == "systems":
    st.subheader("Systems side by side · 系统对比")
    text_metrics = [n for n in names if n not in ("judge_score", "locomo_f1")]
    # named after its file or its system field (evaluators.memory.inputs.system_name), as the other systems
    rows_by_system = {main_system: rows}
    for other_name, (file_name, content_key, read) in other_files.items():
        # keyed on the upload's digest (computed once per upload): a rerun reads and hashes nothing
        other = cached(("mem-other", input_key, file_name, content_key, tuple(text_metrics)),
                       lambda file_name=file_name, read=read: _score_other(file_name, read()))
        if other.issues:
            show_problems(other.issues, key=f"mem_problems_{file_name}", title=f"Problems in {file_name}")
        if other.rows:
            rows_by_system[other_name] = other.rows
            st.caption(f"{md(other_name)}: {md(other.pairing.describe())}")
    if len(rows_by_system) > 1 and text_metrics:
        views.systems_side_by_side(rows_by_system, text_metrics, input_key)
    elif not text_metrics:
        st.caption("Pick a text metric (token F1, ROUGE …) to compare systems: the judge scores only this run.")

elif view == "tokenization":
    from evaluators.memory.compare import read_other_system
    from evaluators.memory.sensitivity import memory_sensitivity
    from evaluators.policy import is_empty
    from evaluators.text.tokenize import contains_cjk

    st.subheader("Tokenization · 分词敏感性")
    results_by_system = {main_system: results}
    for other_name, (file_name, content_key, read) in other_files.items():
        paired, _, _ = cached(("mem-other-results", input_key, file_name, content_key),
                              lambda file_name=file_name, read=read: read_other_system(
                                  file_name, read(), results, dataset=inputs.locomo_dataset))
        if paired:
            results_by_system[other_name] = paired
    others_key = tuple((n, ck) for n, (_, ck, _) in other_files.items())  # each other system's content digest
    sensitivity = cached(("mem-sensitivity", input_key, others_key, tuple(names), user_dict),
                         lambda: memory_sensitivity(results_by_system, metrics=names, user_dict=user_dict))
    # the longest short Chinese ground truth (else any): where tokenizations differ most visibly
    answers = [r.ground_truth for r in results if not is_empty(r.ground_truth) and len(r.ground_truth) <= 60]
    example = max((a for a in answers if contains_cjk(a)), key=len, default=answers[0] if answers else None)
    views.show_tokenization(sensitivity, example, key="mem")

else:  # questions
    st.subheader("Questions")
    f1c, f2c = st.columns([2, 1])
    types = sorted({r.question_type for r in results})
    picked_types = f1c.multiselect("Question types", types, default=types, key="mem_types", format_func=visible,
                                   persist_state="page")
    only_low = f2c.checkbox("Only judge score < 0.5 or unjudged", key="mem_low", persist_state="page")
    shown_rows = [row for row in rows if row.question_type in picked_types and (
        not only_low or row.scores.get("judge_score") is None or row.scores["judge_score"] < 0.5)]
    views.table(views.question_frame(shown_rows, by_id, names, max_chars=views.CELL_CHARS), height=360)
    if shown_rows:
        qid = st.selectbox("Question", [row.question_id for row in shown_rows], key="mem_question",
                           format_func=lambda q: visible(f"{q} · {by_id[q].question[:80]}"))
        row = next(r for r in shown_rows if r.question_id == qid)
        views.show_question(by_id[qid], row, names, stored_label=inputs.stored_labels.get(qid),
                            stored_source=stored_name)
    else:
        st.info("No question matches the filters.")

# ---------------------------------------------------------------- downloads
st.subheader("Downloads")
d1, d2, d3, d4 = st.columns(4)
# The files are written when a button is clicked (callables), not on every rerun, by the CLI's writers:
# report JSON = memory --format json, per question = --format csv, results = --write-results, HTML = --format html,
# judge cache = --write-cache.
d1.download_button("Report (JSON)", lambda: report_json(report),
                   file_name="memory_report.json", mime="application/json", key="mem_dl_json", on_click="ignore")
d2.download_button("Per question (CSV)",
                   lambda: questions_csv(rows, results).encode("utf-8-sig"),
                   file_name="memory_questions.csv", mime="text/csv", key="mem_dl_csv", on_click="ignore")
d3.download_button("Results (JSONL)", lambda: results_to_jsonl(results), file_name="memory_results.jsonl",
                   mime="application/jsonl", key="mem_dl_results", on_click="ignore")
cache_out = judge_cache_of(report, results)  # memory --write-cache
download("Judge cache (JSON)", cache_out.to_json if cache_out else "", file_name="judge_cache.json",
         mime="application/json", key="mem_dl_cache", where=d4, empty=None if cache_out else
         "no judge verdict for these questions yet (run the judge, or upload a judge cache): the file would be empty")


def _memory_html() -> bytes:
    from evaluators.reports.html import memory_report
    return memory_report(report.to_dict()).encode("utf-8")


review_button("Review these answers · 人工审阅这些回答", "memory", inputs.gt_file or "long-memory run",
              lambda: memory_items(results, rows), key="mem_to_review", data=gt_bytes)
save_run(lambda: memory_run_result(report), gt_name=inputs.gt_file or "long-memory run", key="mem_save",
         source=inputs.gt_file or "long-memory run", gt_files=lambda: [(inputs.gt_file or "long-memory run", gt_bytes())])
st.download_button("Report (HTML, self-contained)", _memory_html, file_name="memory_report.html", mime="text/html",
                   key="mem_dl_html", help="Charts drawn in the file: opens offline in any browser.",
                   on_click="ignore")

st.subheader("Review corrections · 审阅更正")


def _corrected(patches):
    """:func:`run_memory` with the review corrections (once per inputs, settings and patch)."""
    from dataclasses import replace

    return cached(("mem-gt-patch", input_key, uploaded_cache_key, config.metrics, config.parity, patches),
                  lambda: run_memory(inputs, replace(config, gt_patch=patches), memo=cached,
                                     key=(input_key, uploaded_cache_key)))


def _corrected_html(patches, corrections) -> str:
    from evaluators.reports.html import memory_report

    return memory_report(_corrected(patches).to_dict(), corrections=corrections)


corrections_control("memory", inputs.gt_file or "", gt_bytes, lambda patches: _corrected(patches).corrections,
                    key="mem_fix", html=_corrected_html)
