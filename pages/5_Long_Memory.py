"""Long-term-memory QA (LoCoMo, LongMemEval): metrics by question type and LLM-as-judge."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import streamlit as st

from components.layout import page_frame

source = page_frame(
    "Long-term memory QA", "🧠",
    caption="LoCoMo / LongMemEval results by question type, with an LLM judge (cached) and LoCoMo's own F1.",
)

from components import memory_views as views  # noqa: E402
from components.uploads import cached, upload_bytes, upload_digest  # noqa: E402
from evaluators.demo import demo_path  # noqa: E402
from evaluators.io import InputError  # noqa: E402
from evaluators.memory import agreement as agreement_mod  # noqa: E402
from evaluators.memory import judge as judge_mod  # noqa: E402
from components.review_link import review_button  # noqa: E402
from evaluators.memory.compare import score_system  # noqa: E402
from evaluators.review.items import memory_items  # noqa: E402
from evaluators.memory.inputs import pick_judge_scores, resolve_inputs  # noqa: E402
from evaluators.memory import metrics as metrics_mod  # noqa: E402
from evaluators.memory.llm import LLMConfig, OpenAICompatibleClient  # noqa: E402
from evaluators.memory.locomo_parity import locomo_parity  # noqa: E402
from evaluators.memory.records import LOCOMO_TYPES, results_to_jsonl  # noqa: E402
from evaluators.results import to_jsonable  # noqa: E402
from evaluators.reports.escape import md, visible  # noqa: E402

#: Where judge runs started from this page keep their cache (one file per results set).
#: Bootstrap resamples of the confidence intervals (the CLI's default, so both give the same numbers).
CI_RESAMPLES = 10_000
CACHE_DIR = Path(os.environ.get("EVALBOARD_JUDGE_CACHE_DIR", str(Path(".evalboard") / "judge_cache")))

# ---------------------------------------------------------------- inputs
# Every rule deciding what is scored lives in evaluators.memory.inputs (the CLI uses the same resolver).
uploaded_cache_key: tuple = ()  # what the input judge cache was read from (part of the judge cache keys)

if source == "demo":
    st.info("Demo data written for EvalBoard: a memory assistant answering 25 questions about two made-up "
            "conversations (English and 中文), LoCoMo question types, with a hand-written judge cache and a "
            "second judge's labels. Switch *Data source* in the sidebar to upload your own files.")
    demo_files = (("results", "demo_results.jsonl"), ("judge_cache", "demo_judge_cache.json"),
                  ("labels", "demo_judge_labels.jsonl"))
    # other systems: name -> (file name, content key, bytes when first needed)
    other_files = {"no-memory baseline": ("demo_results_baseline.jsonl", "demo",
                                          lambda: demo_path("memory", "demo_results_baseline.jsonl").read_bytes())}
    # Read and resolved once (shared across reruns and sessions; never changed below).
    inputs = cached(("mem-demo",), lambda: resolve_inputs(**{role: (name, demo_path("memory", name).read_bytes())
                                                             for role, name in demo_files}))
    uploaded_cache_key = ("demo",)
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
    other_files = {u.name.rsplit(".", 1)[0] or f"system {i + 2}": (u.name, upload_digest(u), lambda u=u: upload_bytes(u))
                   for i, u in enumerate(up_more)}
    uploads = {"results": up_results, "questions": up_questions, "predictions": up_preds, "labels": up_labels,
               "judge_cache": up_cache}
    input_key = tuple(upload_digest(u) if u is not None else None
                      for u in (up_results, up_questions, up_preds, up_labels))
    if up_cache is not None:
        uploaded_cache_key = ("upload", upload_digest(up_cache))
    # Read and resolved once per file contents (shared across reruns), not on every widget change.
    inputs = cached(("mem-inputs", input_key, uploaded_cache_key),
                    lambda: resolve_inputs(**{role: (u.name, upload_bytes(u)) for role, u in uploads.items()
                                              if u is not None}))
results = inputs.results
issues = inputs.issues
stored = inputs.stored
stored_name = inputs.stored_source
uploaded_cache = inputs.judge_cache
for note in inputs.notes:
    st.caption(md(note))

views.show_issues(issues)
if not results:
    errors = [i for i in issues if i.severity == "error"]
    if errors:  # something was uploaded but nothing in it could be used: say why
        st.error(md(f"No usable question in the upload: {errors[0].location()}: {errors[0].message}"
                    + (f" (and {len(errors) - 1} more problem(s), listed above)" if len(errors) > 1 else "")))
    else:
        st.info("Upload a results file (or a question file with predictions) to see metrics by question type.")
    st.stop()

by_id = {r.question_id: r for r in results}
data_key = cached(("mem-data-key", input_key),
                  lambda: hashlib.sha256(results_to_jsonl(results).encode("utf-8")).hexdigest()[:16])
disk_cache_path = CACHE_DIR / f"memory-{data_key}.json"

# ---------------------------------------------------------------- settings
is_locomo = any(r.question_type in LOCOMO_TYPES and r.question_type != "adversarial" for r in results)
try:
    availability = metrics_mod.metric_availability()
except ImportError as exc:  # the shared metric registry is not installed
    availability = {m: (str(exc) if m in metrics_mod.REGISTRY_NAMES else None) for m in metrics_mod.ALL_METRICS}
s1, s2 = st.columns([3, 1])
chosen = s1.multiselect(
    "Metrics", options=[m for m in metrics_mod.ALL_METRICS if m != "locomo_f1"],
    default=[m for m in metrics_mod.DEFAULT_METRICS if availability.get(m) is None],
    format_func=lambda m: views.label(m) + (" (unavailable)" if availability.get(m) else ""), key="mem_metrics",
    help="Means over questions. Metrics marked unavailable need an optional install (BERTScore, semantic "
         "similarity: `pip install -r requirements-optional.txt`) or data: METEOR, not picked by default, needs "
         f"nltk's WordNet (run `{metrics_mod.METEOR_DATA_HINT}` once, with network, then restart).",
)
for m in chosen:
    if availability.get(m):
        st.error(f"{views.label(m)} is not computed: {availability[m]}")
chosen = [m for m in chosen if not availability.get(m)]
parity_on = s2.checkbox("LoCoMo parity F1", value=is_locomo, key="mem_parity",
                        help="LoCoMo's own scoring code: stemmed token F1, multi-hop split on commas, "
                             "adversarial by its unanswerable check.")
names = list(chosen) + (["locomo_f1"] if parity_on and "locomo_f1" not in chosen else [])
if not names:
    st.warning("Pick at least one metric.")
    st.stop()

# ---------------------------------------------------------------- judge
st.subheader("LLM judge")
if "mem_flash" in st.session_state:
    st.success(st.session_state.pop("mem_flash"))
judge_cache = None
judge_source = ""
judge_cache_key: tuple = ()
try:
    disk_stat = disk_cache_path.stat()
except OSError:  # no local cache yet
    disk_stat = None
if disk_stat is not None:
    # Read once per file version (a judge run, in any session, replaces it): keyed by inode, time and size.
    judge_cache_key = ("disk", f"{disk_stat.st_ino}:{disk_stat.st_mtime_ns}:{disk_stat.st_size}")
    try:
        judge_cache = cached(("mem-judge-disk", data_key, *judge_cache_key),
                             lambda: judge_mod.JudgeCache(disk_cache_path))
        judge_source = f"the local cache {disk_cache_path}"
    except InputError as exc:
        st.error(f"The local judge cache cannot be read and is not used: {md(exc)}")
if judge_cache is None and uploaded_cache is not None:
    judge_cache = uploaded_cache
    judge_source = "the demo judge cache" if source == "demo" else "the uploaded judge cache"
    judge_cache_key = uploaded_cache_key
# Which cached judgements still fit the results (a fingerprint per question): once per results and cache.
judgements, stale = cached(("mem-judge-match", data_key, *judge_cache_key),
                           lambda: judge_cache.matching(results)) if judge_cache is not None else ({}, [])
if stale:
    st.warning(f"{len(stale)} cached judgement(s) no longer match their question, ground truth or prediction and "
               f"are not used (e.g. {md(', '.join(stale[:3]))}); run the judge to redo them.")
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
            config = LLMConfig.from_env(base_url=base_url, model=model, api_key=typed_key or None)
            cache = judge_mod.JudgeCache(disk_cache_path)
        except (ValueError, InputError) as exc:
            st.error(md(exc))
            st.stop()
        if uploaded_cache is not None:
            for qid, entry in uploaded_cache.entries.items():  # copies: the uploaded cache is shared (cached)
                cache.entries.setdefault(qid, dict(entry))
        bar = st.progress(0.0, text="Judging ...")

        def _progress(done: int, total: int) -> None:
            bar.progress(done / total if total else 1.0, text=f"Judged {done} of {total}")

        try:
            run = judge_mod.batch_judge(results, llm=OpenAICompatibleClient(config), mode=mode, cache=cache,
                                        progress=_progress)
        except ValueError as exc:
            st.error(md(exc))
        else:
            st.session_state["mem_flash"] = (f"Judged {run.n_judged} question(s) with {md(config.model)}, reused "
                                             f"{run.n_cached} from the cache; {run.n_errors} without a score.")
            st.rerun()

judge_scores, _ = pick_judge_scores(judgements, stored, stored_name)

# ---------------------------------------------------------------- metrics
def _score_other(file_name: str, data: bytes) -> tuple[list, list]:
    """Another system's results scored with this run's text metrics: (rows, problems)."""
    other = resolve_inputs(results=(file_name, data))
    metrics = [n for n in names if n not in ("judge_score", "locomo_f1")]
    return score_system(other.results, metrics), list(other.issues)


def _score() -> tuple[list, dict]:
    scored = metrics_mod.score_questions(results, judge_scores, metrics=names)
    return scored, metrics_mod.aggregate_rows(scored, names, ci_resamples=CI_RESAMPLES)


# Scored once per inputs, judge scores and metrics: a widget rerun (filters, drill-down) reuses the rows.
# The judge scores are keyed by content, since a judge run (in any session) rewrites the local cache.
judge_key = frozenset(judge_scores.items()) if judge_scores else None
rows, report = cached(("mem-scores", input_key, judge_key, tuple(names)), _score)

st.subheader("Overall")
views.metric_cards(report["overall"], names)
if report["overall"].get("task_averaged_judge_score") is not None:
    st.caption(f"Task-averaged judge score (mean over types): {report['overall']['task_averaged_judge_score']:.3f}")

st.subheader("By question type")
views.table(views.by_type_frame(report, names))
chart_metrics = st.multiselect("Chart", options=names, default=[n for n in names if n in ("judge_score", "token_f1_char",
                                                                                         "locomo_f1")] or names[:1],
                               format_func=views.label, key="mem_chart")
if chart_metrics:
    st.plotly_chart(views.by_type_figure(report, chart_metrics), width="stretch")
st.caption("Means over questions (macro over questions): each question weighs the same.")
views.show_signatures(report["signature"], report.get("unavailable", {}))

if other_files:
    st.subheader("Systems side by side · 系统对比")
    text_metrics = [n for n in names if n not in ("judge_score", "locomo_f1")]
    rows_by_system = {"this run" if source != "demo" else "memory assistant": rows}
    for other_name, (file_name, content_key, read) in other_files.items():
        # keyed on the upload's digest (computed once per upload): a rerun reads and hashes nothing
        other = cached(("mem-other", file_name, content_key, tuple(text_metrics)),
                       lambda file_name=file_name, read=read: _score_other(file_name, read()))
        if other[1]:
            views.show_issues(other[1], title=f"Problems in {file_name}")
        if other[0]:
            rows_by_system[other_name] = other[0]
    if len(rows_by_system) > 1 and text_metrics:
        views.systems_side_by_side(rows_by_system, text_metrics, input_key)
    elif not text_metrics:
        st.caption("Pick a text metric (token F1, ROUGE …) to compare systems: the judge scores only this run.")

if parity_on:
    st.subheader("LoCoMo parity (the benchmark's published scoring)")
    parity = cached(("mem-parity", input_key), lambda: locomo_parity(results))
    views.show_parity(parity)

lme_questions = inputs.longmemeval_questions()
if lme_questions is not None:
    st.subheader("LongMemEval accuracy (stored labels, as print_qa_metrics.py)")
    views.show_longmemeval(agreement_mod.longmemeval_accuracy(lme_questions, stored.labels), stored.models)

if judgements and stored is not None and stored.labels:
    st.subheader("Our judge vs stored labels")
    agr = agreement_mod.judge_agreement(judgements, stored.labels)
    views.show_agreement(agr, stored_name)

# ---------------------------------------------------------------- drill-down
st.subheader("Questions")
f1c, f2c = st.columns([2, 1])
types = sorted({r.question_type for r in results})
picked_types = f1c.multiselect("Question types", types, default=types, key="mem_types", format_func=visible)
only_low = f2c.checkbox("Only judge score < 0.5 or unjudged", key="mem_low")
shown_rows = [row for row in rows if row.question_type in picked_types and (
    not only_low or row.scores.get("judge_score") is None or row.scores["judge_score"] < 0.5)]
views.table(views.question_frame(shown_rows, by_id, names), height=360)
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
full = {"metrics": report, "judge_source": judge_source or None, "n_questions": len(results)}
if parity_on:
    full["locomo_parity"] = {k: v for k, v in to_jsonable(parity).items() if k != "per_question"}
# The files are written when a button is clicked (callables), not on every rerun.
d1.download_button("Report (JSON)", lambda: json.dumps(to_jsonable(full), ensure_ascii=False, indent=2),
                   file_name="memory_report.json", mime="application/json", key="mem_dl_json", on_click="ignore")
d2.download_button("Per question (CSV)",
                   lambda: views.frame_csv(views.question_frame(rows, by_id, names)).encode("utf-8-sig"),
                   file_name="memory_questions.csv", mime="text/csv", key="mem_dl_csv", on_click="ignore")
d3.download_button("Results (JSONL)", lambda: results_to_jsonl(results), file_name="memory_results.jsonl",
                   mime="application/jsonl", key="mem_dl_results", on_click="ignore")
cache_out = judge_cache.subset(by_id) if judge_cache is not None else judge_mod.JudgeCache()
d4.download_button("Judge cache (JSON)", cache_out.to_json, file_name="judge_cache.json", mime="application/json",
                   disabled=not cache_out.entries, key="mem_dl_cache", on_click="ignore")


def _memory_html() -> bytes:
    from evaluators.reports.html import memory_report
    return memory_report(to_jsonable(full)).encode("utf-8")


review_button("Review these answers · 人工审阅这些回答", "memory", "long-memory run",
              lambda: memory_items(results, rows), key="mem_to_review")
st.download_button("Report (HTML, self-contained)", _memory_html, file_name="memory_report.html", mime="text/html",
                   key="mem_dl_html", help="Charts drawn in the file: opens offline in any browser.",
                   on_click="ignore")
