"""Streamlit pieces of the long-term-memory page: tables, chart, drill-down, agreement.

They take results already computed by :mod:`evaluators.memory` and render them; no
scoring happens here.  User text is HTML-escaped before it is rendered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st

from components.metrics import fmt as _fmt
from components.metrics import metric_row
from components.tables import count_columns, show_table
from evaluators.memory.metrics import METRIC_HELP
from evaluators.metrics.agreement import MIN_ITEMS
from evaluators.reports.escape import html_text, md, visible
from components.static import static_records

if TYPE_CHECKING:  # imported where a grid or a Plotly chart is drawn: the overview draws neither
    import pandas as pd
    import plotly.graph_objects as go

#: The ROUGE-1 note for a metric picker's help.
ROUGE1_NOTE = METRIC_HELP["rouge1"]

#: Display names of the metric keys.
LABELS = {
    "judge_score": "Judge score", "exact_match_normalized": "EM (normalized)", "token_f1_char": "F1 (char)", "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2", "rougeL": "ROUGE-L", "bleu1": "BLEU-1", "bleu2": "BLEU-2", "bleu4": "BLEU-4",
    "meteor": "METEOR", "bert_f1": "BERTScore F1", "semantic_similarity": "Semantic similarity",
    "locomo_f1": "LoCoMo F1 (parity)",
}


def label(name: str) -> str:
    """Display name of a metric key."""
    return LABELS.get(name, name)


def number_columns(frame: pd.DataFrame, digits: int = 3) -> dict[str, Any]:
    """``column_config`` showing the float columns of ``frame`` with ``digits`` decimals."""
    import pandas as pd

    counts = set(count_columns(frame))
    return {c: st.column_config.NumberColumn(c, format=f"%.{digits}f") for c in frame.columns
            if pd.api.types.is_float_dtype(frame[c]) and c not in counts}


def table(frame: pd.DataFrame | list[dict], *, static: bool = False, **kwargs) -> None:
    """``st.dataframe`` (sortable) with floats at 3 decimals and no index; with ``static``, rows (dicts)
    as a static table (:func:`components.static.static_records`, floats at 3 decimals too)."""
    if static:
        static_records(frame if isinstance(frame, list) else frame.to_dict("records"))
        return
    import pandas as pd

    frame = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(frame)
    show_table(frame, width="stretch", column_config=number_columns(frame), **kwargs)


def show_signatures(signatures: Mapping[str, str], unavailable: Mapping[str, str]) -> None:
    """How each number was computed (tokenizer, normalisation, library version) and what was left out."""
    with st.expander("Signatures: how each number was computed"):
        static_records([{"metric": label(k), "signature": v} for k, v in signatures.items()])
        for name, reason in unavailable.items():
            st.caption(f"{md(label(name))} left out: {md(reason)}")


def metric_cards(overall: Mapping[str, Any], names: Sequence[str]) -> None:
    """One ``st.metric`` per metric computed (mean over questions), with the question count first.

    Every metric asked for has its card (rows of 5); a metric's note (:data:`METRIC_HELP`) is in its help.
    """
    shown = [n for n in names if n in overall]
    items: list[tuple[str, Any, str | None]] = [("Questions", overall.get("count", 0), None)]
    for name in shown:
        help_text = METRIC_HELP.get(name)
        if name == "judge_score":
            help_text = f"{overall.get('judged', 0)} of {overall.get('count', 0)} questions have a judge score"
        low, high = overall.get(f"{name}_ci_low"), overall.get(f"{name}_ci_high")
        if low is not None:
            help_text = (help_text + "; " if help_text else "") + f"95% CI {_fmt(low)} – {_fmt(high)} (bootstrap)"
        items.append((label(name), overall.get(name), help_text))
    for start in range(0, len(items), 5):  # at most 5 cards a row: labels stay whole at 1440 px
        metric_row(items[start:start + 5])


def by_type_rows(report: Mapping[str, Any], names: Sequence[str]) -> list[dict]:
    """The by-type table (one row per question type, then ``overall``), one dict a row."""
    rows = []
    for qtype, block in sorted(report["by_type"].items()):
        rows.append({"question_type": qtype, "count": block["count"], **{label(n): block.get(n) for n in names}})
    overall = report["overall"]
    rows.append({"question_type": "overall", "count": overall["count"], **{label(n): overall.get(n) for n in names}})
    return rows


def by_type_frame(report: Mapping[str, Any], names: Sequence[str]) -> pd.DataFrame:
    """:func:`by_type_rows` as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(by_type_rows(report, names))


def by_type_figure(report: Mapping[str, Any], names: Sequence[str]) -> go.Figure:
    """Grouped bars: one group per question type, one bar per metric (missing values left out)."""
    import plotly.graph_objects as go

    from evaluators.reports.figures import MAX_LABELLED_BARS, value_labels

    types = sorted(report["by_type"])
    x = [html_text(t, breaks=False) for t in types]
    fig = go.Figure()
    labels = []
    for j, name in enumerate(names):
        blocks = [report["by_type"][t] for t in types]
        values = [b.get(name) for b in blocks]
        # 95% bootstrap intervals as asymmetric error bars (none where a type has no interval)
        plus = [b[f"{name}_ci_high"] - v if v is not None and b.get(f"{name}_ci_high") is not None else None
                for b, v in zip(blocks, values)]
        minus = [v - b[f"{name}_ci_low"] if v is not None and b.get(f"{name}_ci_low") is not None else None
                 for b, v in zip(blocks, values)]
        fig.add_trace(go.Bar(
            name=label(name), x=x, y=values, offsetgroup=str(j), legendgroup=str(j),
            error_y={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "thickness": 1,
                     "visible": any(p is not None for p in plus)},
            customdata=[report["by_type"][t]["count"] for t in types],
            hovertemplate="%{x}<br>" + label(name) + ": %{y:.3f}<br>questions: %{customdata}<extra></extra>",
        ))
        # each value above its whisker's upper end, not across the whisker at the bar's top
        labels.append(value_labels(x, values, [b.get(f"{name}_ci_high") for b in blocks], group=str(j)))
    if len(types) * len(names) <= MAX_LABELLED_BARS:  # more bars: values in the table above and the hover
        for trace in labels:  # after every bar: fig.data[j] is metric j's bars
            fig.add_trace(trace)
    fig.update_layout(barmode="group", scattermode="group", yaxis={"range": [0, 1.12], "title": "mean over questions"},
                      xaxis={"title": "question type"}, height=420, margin={"t": 30, "b": 40},
                      legend={"orientation": "h", "y": 1.12})
    return fig


#: Characters of a text shown in a table cell (the whole text is in the drill-down and the downloads).
CELL_CHARS = 2_000


def _cell(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f" … ({len(text) - limit:,} more characters)"


def question_frame(rows: Sequence[Any], results: Mapping[str, Any], names: Sequence[str], *,
                   max_chars: int | None = None) -> pd.DataFrame:
    """Per-question table: id, type, question, ground truth, prediction, scores, judge mode.

    ``max_chars`` cuts long texts for display (saying how much was left out); ``None`` keeps them whole.
    """
    import pandas as pd

    data = []
    for row in rows:
        r = results[row.question_id]
        data.append({
            "question_id": row.question_id, "question_type": row.question_type,
            "question": _cell(r.question, max_chars), "ground_truth": _cell(r.ground_truth, max_chars),
            "prediction": _cell(r.prediction, max_chars),
            **{label(n): row.scores.get(n) for n in names},
            "judge_mode": row.judgement.mode if row.judgement else None,
        })
    return pd.DataFrame(data)


def _block(title: str, text: str) -> None:
    safe = html_text(text) if text else "<em>(empty)</em>"
    st.markdown(f"**{md(title)}**")
    st.markdown(f"<div style='white-space: pre-wrap; padding: 0.4rem 0.6rem; border-left: 3px solid #ccc;'>"
                f"{safe}</div>", unsafe_allow_html=True)


def show_stored_label(value: float, source: str) -> None:
    """One question's stored judge label (a label file's, or mem0's ``llm_score``) and where it came from."""
    verdict = "correct" if value >= 0.5 else "wrong"
    st.markdown(f"**Stored label** · {_fmt(value)} ({verdict}) · from {md(source or 'the stored labels')}")


def show_question(result: Any, row: Any, names: Sequence[str], stored_label: float | None = None,
                  stored_source: str = "") -> None:
    """Drill-down of one question: texts, scores, the judge's mode, reasoning and reply, and the stored
    label (``stored_label``, read from ``stored_source``) when there is one."""
    st.markdown(f"**{md(result.question_id)}** · {md(result.question_type)}"
                + (" · abstention" if result.abstention else ""))
    _block("Question", result.question)
    left, right = st.columns(2)
    with left:
        _block("Ground truth", result.ground_truth)
    with right:
        _block("Prediction", result.prediction)
    scores = {label(n): row.scores.get(n) for n in names}
    table([scores])
    j = row.judgement
    if stored_label is not None:
        show_stored_label(stored_label, stored_source)
    if j is None:
        if stored_label is None:
            st.info("No judge verdict for this question yet.")
        return
    st.markdown(f"**Judge** · mode `{md(j.mode)}` · model `{md(j.model or 'unknown')}` · "
                f"score {_fmt(j.score)}")
    if j.error:
        st.error(f"The judge gave no score: {md(j.error)}")
    if j.note:
        st.caption(f"Note: {md(j.note)}")
    _block("Judge reasoning", j.reasoning)
    if j.reply and j.reply.strip() != j.reasoning.strip():
        with st.expander("Raw judge reply"):
            st.text(visible(j.reply))


def show_agreement(agreement: Any, stored_name: str) -> None:
    """Accuracy, Cohen's kappa and the 2x2 table between our judge and stored labels."""
    metric_row([("Compared", agreement.n_compared, None), ("Agreement (accuracy)", agreement.accuracy, None),
                ("Cohen's kappa", agreement.cohen_kappa, agreement.kappa_reason),
                ("Only one side", agreement.n_only_ours + agreement.n_only_stored, None)])
    cm = agreement.confusion_matrix
    static_records([
        {"": "ours: correct", "stored: correct": cm["both_correct"], "stored: wrong": cm["ours_only_correct"]},
        {"": "ours: wrong", "stored: correct": cm["stored_only_correct"], "stored: wrong": cm["both_wrong"]}])
    st.caption(f"Binary labels at score ≥ {agreement.threshold}; stored labels from {md(stored_name)}. "
               "Kappa: Cohen (1960), as sklearn.metrics.cohen_kappa_score.")
    if agreement.cohen_kappa_ci_low is not None:
        few = (f" (under {MIN_ITEMS} questions: not yet meaningful)" if agreement.n_compared < MIN_ITEMS else "")
        st.caption(f"Cohen's kappa 95% interval: {_fmt(agreement.cohen_kappa_ci_low)} – "
                   f"{_fmt(agreement.cohen_kappa_ci_high)} over {agreement.n_compared} compared questions{few}; "
                   f"{md(agreement.ci or '')}")
    if agreement.disagreements:
        st.caption("Disagreements: " + ", ".join(md(q) for q in agreement.disagreements[:30]))


def show_longmemeval(report: Any, models: Mapping[str, int], *, static: bool = False) -> None:
    """LongMemEval's accuracy table: per type (official order), task-averaged, overall, abstention."""
    rows = [{"question_type": t.question_type, "count": t.count, "accuracy": t.accuracy} for t in report.by_type]
    rows += [{"question_type": "task-averaged (mean over types with labels)", "count": None,
              "accuracy": report.task_averaged},
             {"question_type": "overall", "count": report.n_labels, "accuracy": report.overall},
             {"question_type": "abstention (_abs)", "count": report.abstention.count,
              "accuracy": report.abstention.accuracy}]
    table(rows, static=static)
    if models:
        st.caption("Judge model(s): " + ", ".join(f"{md(m)} ({n})" for m, n in models.items()))
    if report.unknown_ids:
        st.caption(f"{len(report.unknown_ids)} labelled id(s) are not in the question table and were left out.")


def show_parity(parity: Any, *, static: bool = False) -> None:
    """LoCoMo parity table: per category (official order) and overall."""
    rows = [{"category": str(c.category), "question_type": c.question_type, "count": c.count, "LoCoMo F1": c.mean}
            for c in parity.by_category]
    rows.append({"category": "all", "question_type": "overall", "count": parity.count, "LoCoMo F1": parity.overall})
    table(rows, static=static)
    if parity.skipped:
        st.caption(f"{len(parity.skipped)} question(s) are not LoCoMo questions and were left out.")
    st.caption("Whitespace tokens, as in the benchmark's code: an answer written without spaces (Chinese) is one "
               "token, so it scores 1 only when identical.")
    st.caption(f"signature: {md(parity.signature)}")


def systems_side_by_side(rows_by_system: Mapping[str, Sequence[Any]], metrics: Sequence[str], key: Any) -> None:
    """Systems on the same questions: a metric by system with 95% CIs, questions x systems, a paired test.

    ``rows_by_system`` maps a system name to its :func:`evaluators.memory.metrics.score_questions`
    rows; every number comes from :mod:`evaluators.memory.compare`.
    """
    from components.compare_views import basis, common_note, paired_scores_view, systems_chart
    from components.uploads import cached
    from evaluators.memory.compare import compare_two, questions_matrix, systems_common, systems_table

    names = list(rows_by_system)
    metric = st.selectbox("Metric · 指标", list(metrics), format_func=label, key="mem_sbs_metric")
    common = cached(("mem-sbs-common", key, tuple(names), metric), lambda: systems_common(rows_by_system, metric))
    table_rows = cached(("mem-sbs", key, tuple(names), metric), lambda: systems_table(rows_by_system, metric))
    common_note(common)
    on = "_common" if common.n_common else ""  # compared on the common questions; each over its own when none is
    systems_chart([r["system"] for r in table_rows], {label(metric): [r["mean" + on] for r in table_rows]},
                  {label(metric): [r["ci_low" + on] for r in table_rows]},
                  {label(metric): [r["ci_high" + on] for r in table_rows]},
                  title=f"{label(metric)} by system ({basis(common)}; error bars: 95% bootstrap CI over questions)",
                  key="mem_sbs_chart")
    show_table([{"system": r["system"], "n": r["n"], "n common": r["n_common"], "mean": r["mean" + on],
                 "95% CI low": r["ci_low" + on], "95% CI high": r["ci_high" + on],
                 **({} if common.same else {"mean (own questions)": r["mean"]})} for r in table_rows],
               key="mem_sbs_systems",
               column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                              for c in ("mean", "95% CI low", "95% CI high", "mean (own questions)")})
    matrix = questions_matrix(rows_by_system, metric)
    spread = st.slider("Show questions whose scores differ by at least · 分差至少", 0.0, 1.0, 0.0, 0.05,
                       key="mem_sbs_spread")
    kept = [r for r in matrix if spread == 0 or (r["spread"] is not None and r["spread"] >= spread - 1e-12)]
    show_table(kept, key="mem_sbs_matrix",
               column_config={n: st.column_config.NumberColumn(n, format="%.3f") for n in [*names, "spread"]})
    st.caption(f"{len(kept)} of {len(matrix)} questions.")
    c1, c2 = st.columns(2)
    a = c1.selectbox("System A (baseline)", names, index=0, key="mem_sbs_a", format_func=visible)
    b = c2.selectbox("System B", names, index=1, key="mem_sbs_b", format_func=visible)
    if a == b:
        st.info("Pick two different systems.")
        return
    try:
        paired = cached(("mem-pair", key, tuple(names), metric, a, b),
                        lambda: compare_two(rows_by_system, a, b, metric))
    except ValueError as exc:
        st.warning(md(str(exc)))
        return
    rows = {r["question_id"]: {"question_id": r["question_id"], "type": r["question_type"], a: r[a], b: r[b]}
            for r in matrix}
    paired_scores_view(paired, rows, "mem_pair", metric=label(metric))


#: Display names of the engine metrics in the Tokenization view (memory names; rouge1 is token_f1_char).
SENSITIVITY_LABELS = {"token_f1": "F1 (char) = ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L",
                      "bleu1": "BLEU-1", "bleu2": "BLEU-2", "bleu4": "BLEU-4", "exact_match": "EM (tokens)"}


def show_tokenization(report: Any, example: str | None = None, *, key: str = "mem") -> None:
    """The Tokenization view: the memory overlap metrics of every system under each tokenization.

    ``report`` is a :class:`~evaluators.metrics.sensitivity.SensitivityReport` (from
    :func:`evaluators.memory.sensitivity.memory_sensitivity`); ``example`` a ground-truth answer
    shown as each tokenization cuts it.
    """
    from components.qa_views import render_sensitivity
    from evaluators.metrics.sensitivity import token_examples

    st.caption("Each system's overlap scores recomputed under characters (the report's numbers), jieba (shipped "
               "dictionary), jieba with HMM on, a big dictionary and your user dictionary · 换一种分词，排名还成立吗？")
    metric = st.radio("Metric · 指标", list(report.metrics), horizontal=True, key=f"{key}_sens_metric",
                      format_func=lambda m: SENSITIVITY_LABELS.get(m, m))
    render_sensitivity(report, metric, key=key)
    if example:
        st.markdown(f"**How one ground-truth answer is cut · 分词示例**: {md(example)}")
        show_table(token_examples(example, report), key=f"{key}_sens_example")
