"""Streamlit section of several QA / fact-check runs side by side, and a paired test of two.

Renders the side-by-side view and paired comparison of a :class:`evaluators.qa.run.QARun`
(:meth:`~evaluators.qa.run.QARun.side_by_side`, :meth:`~evaluators.qa.run.QARun.compare`): a chart of EM / F1 by system with 95% intervals, the systems table, the records x systems
matrix filtered by agreement, the paired comparison of two systems with the records that changed,
and downloads (matrix CSV, HTML report).  Computes nothing itself.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import streamlit as st

from components.tables import show_table
from evaluators.qa.compare import AGREEMENTS
from evaluators.reports.qa import matrix_csv, matrix_rows, systems_csv
from evaluators.reports.format import fixed, p_value, percent, signed, small_sample_note
from evaluators.reports.escape import md, visible
from evaluators.reports.figures import metric_by_system

AGREEMENT_LABELS = {"disagree": "Systems disagree · 不一致", "all_wrong": "All wrong · 全错",
                    "all_correct": "All right · 全对", "incomplete": "Missing in a system · 有缺失"}
OUTCOME_LABELS = {"changed": "Changed · 有变化", "won": "B better · B 更好", "lost": "B worse · B 更差",
                  "tied": "Tied · 相同"}


def basis(common) -> str:
    """What a side-by-side chart's bars are over, short enough for a phone's chart title (it goes in the title's
    parenthesis, the smaller second line): ``"n common = 45 questions"``, or each system's own items."""
    if common.n_common:
        return f"n common = {common.units(common.n_common)}"
    return f"n common = 0: each over its own {common.unit}, not comparable"


def common_note(common) -> None:
    """The engine's :class:`~evaluators.results.CommonItems` of a side-by-side view: a warning when the
    systems were scored on different items, else a caption with the common n."""
    if warning := common.warning():
        st.warning(md(warning))
    else:
        st.caption(md(f"Every system scored the same {common.units(common.n_common)} "
                      f"(n common = {common.n_common:,})."))


def _ci(lo, hi) -> str | None:
    return None if lo is None else f"{percent(lo)} – {percent(hi)}"


def side_by_side_section(result, runs: dict, cache: Callable[[Hashable, Callable], object],
                         key: tuple, *, n_resamples: int = 10_000, prefix: str = "qa_sbs") -> None:
    """The whole section for the ``runs`` (name -> records, two or more) of a :class:`~evaluators.qa.run.QARun`,
    results cached under ``key``."""
    signature = result.signature
    st.subheader("Systems side by side · 系统对比")
    view = cache(("qa-sbs", key, n_resamples), lambda: result.side_by_side(runs, n_resamples=n_resamples))
    common = view.common
    common_note(common)
    s = view.common_scores or view.scores  # compared on the common records; each over its own when none is
    st.plotly_chart(metric_by_system(
        list(view.systems), {"exact_match": [x.exact_match for x in s], "token_f1": [x.token_f1 for x in s]},
        {"exact_match": [x.exact_match_ci_low for x in s], "token_f1": [x.token_f1_ci_low for x in s]},
        {"exact_match": [x.exact_match_ci_high for x in s], "token_f1": [x.token_f1_ci_high for x in s]},
        title=f"EM and F1 by system ({basis(common)}; error bars: 95% bootstrap CI)"), key=f"{prefix}_chart")
    show_table([{"system": x.system, "n": own.n, "n common": common.n_common, "exact_match": x.exact_match,
                 "EM 95% CI": _ci(x.exact_match_ci_low, x.exact_match_ci_high),
                 "token_f1": x.token_f1, "F1 95% CI": _ci(x.token_f1_ci_low, x.token_f1_ci_high),
                 **({} if common.same else {"exact_match (own records)": own.exact_match,
                                            "token_f1 (own records)": own.token_f1})}
                for x, own in zip(s, view.scores)],
               key=f"{prefix}_systems",
               column_config={c: st.column_config.NumberColumn(c, format="percent")
                              for c in ("exact_match", "token_f1", "exact_match (own records)",
                                        "token_f1 (own records)")})
    if s and s[0].ci:
        st.caption(f"Intervals: {md(s[0].ci)}")

    st.markdown("**Records × systems · 逐条对比**")
    present = [a for a in AGREEMENTS if view.counts.get(a)]
    pick = st.radio("Show · 显示", ["all", *present], horizontal=True, key=f"{prefix}_agreement",
                    format_func=lambda a: "All · 全部" if a == "all"
                    else f"{AGREEMENT_LABELS[a]} ({view.counts[a]})")
    all_rows = cache(("qa-sbs-rows", key, n_resamples), lambda: matrix_rows(view))  # built once, not per rerun
    rows = [r for r, m in zip(all_rows, view.rows) if pick == "all" or m.agreement == pick]
    import pandas as pd

    frame = pd.DataFrame(rows)
    show_table(frame, key=f"{prefix}_matrix", column_order=sorted(frame.columns, key=lambda c: c == "id"),  # id last
               column_config={c: st.column_config.NumberColumn(c, format="%.2f")
                                for c in frame.columns if c.endswith((": exact_match", ": token_f1"))})
    st.caption(f"{len(rows)} of {len(view.rows)} record ids. Agreement is by exact match.")

    st.markdown("**Paired comparison · 配对比较**")
    names = list(view.systems)
    c1, c2 = st.columns(2)
    a = c1.selectbox("System A (baseline) · 基线", names, index=0, key=f"{prefix}_a", format_func=visible)
    b = c2.selectbox("System B · 对比系统", names, index=1 if len(names) > 1 else 0, key=f"{prefix}_b",
                     format_func=visible)
    comparison = None
    if a == b:
        st.info("Pick two different systems to compare them.")
    else:
        try:
            comparison = cache(("qa-pair", key, a, b, n_resamples),
                               lambda: result.compare(a, b, runs, n_resamples=n_resamples))
        except ValueError as exc:
            st.warning(md(str(exc)))
    if comparison is not None:
        _paired(comparison, prefix)
    d1, d2, d3 = st.columns(3)
    d1.download_button("Download matrix CSV · 下载对比表", lambda: matrix_csv(view, signature).encode("utf-8-sig"),
                       file_name="systems_side_by_side.csv", mime="text/csv", key=f"{prefix}_csv",
                       on_click="ignore", wrap=True)
    d2.download_button("Download systems CSV (with CIs)", lambda: systems_csv(view, signature).encode("utf-8-sig"),
                       file_name="systems_scores.csv", mime="text/csv", key=f"{prefix}_systems_csv",
                       on_click="ignore", wrap=True)

    def html() -> bytes:
        from evaluators.reports.html import comparison_report
        return comparison_report(view, comparison, signature,
                                 title=f"Comparison: {', '.join(names)}").encode("utf-8")

    d3.download_button("Download comparison HTML report · 下载对比报告", html, file_name="comparison.html",
                       mime="text/html", key=f"{prefix}_html",
                       help="One self-contained file (charts drawn in it): opens offline in any browser.",
                       on_click="ignore", wrap=True)


def _p(x) -> str:
    """A paired test's p-value for a card: 4 decimals, a bound as ``< 0.0001``, ``—`` when not run."""
    if not x.computed:
        return "—"
    return p_value(x.p_value, True)[2:] if x.p_value_is_bound else fixed(x.p_value, 4)


def _ci_text(x, scale: float = 100, unit: str = " points") -> str:
    if x.ci_low is None:
        return "no interval computed (0 resamples)"
    digits = 2 if scale == 100 else 3
    return f"95% CI {signed(scale * x.ci_low, digits)} to {signed(scale * x.ci_high, digits)}{unit}"


def _paired(c, prefix: str) -> None:
    f1, em, ar, mc = c.token_f1_bootstrap, c.exact_match_bootstrap, c.token_f1_randomization, c.exact_match_mcnemar
    cols = st.columns(4)
    cols[0].metric("F1 delta · F1 差值", f"{signed(100 * f1.delta, 2)} pts",
                   help=f"Mean F1 of {md(c.name_b)} minus {md(c.name_a)} over {c.n_paired} records paired by id; "
                        f"{_ci_text(f1)} ({f1.method}).")
    cols[1].metric("p (F1)", _p(f1),
                   help=f"Paired bootstrap {p_value(f1.p_value, f1.p_value_is_bound)}; "
                        f"{'exact sign-flip test' if ar.exact else 'approximate randomization'} "
                        f"{p_value(ar.p_value, ar.p_value_is_bound)}.")
    cols[2].metric("EM delta · EM 差值", f"{signed(100 * em.delta, 2)} pts", help=f"{_ci_text(em)}.")
    cols[3].metric("p (McNemar, EM)", fixed(mc.p_value, 4),
                   help=f"Exact McNemar test: right in A only {mc.only_a}, in B only {mc.only_b}.")
    st.caption(f"{md(c.name_b)} against {md(c.name_a)}: {c.n_paired} records paired"
               + (f" ({c.only_a} only in A and {c.only_b} only in B left out)" if c.only_a or c.only_b else "")
               + f"; by F1 B won {f1.won}, lost {f1.lost}, tied {f1.tied}. "
               f"{'Exact sign-flip test' if ar.exact else 'Approximate randomization'} "
               f"{p_value(ar.p_value, ar.p_value_is_bound)}.")
    for x in (f1, em):
        if small_sample_note(x):
            st.warning(md(small_sample_note(x)))
    counts = {"changed": f1.won + f1.lost, "won": f1.won, "lost": f1.lost, "tied": f1.tied}
    pick = st.radio("Records · 记录", list(OUTCOME_LABELS), horizontal=True, key=f"{prefix}_outcome",
                    format_func=lambda k: f"{OUTCOME_LABELS[k]} ({counts[k]})")
    wanted = {"won", "lost"} if pick == "changed" else {pick}
    rows = [{"question": r.question, "prediction A": r.prediction_a, "prediction B": r.prediction_b,
             "F1 A": r.token_f1_a, "F1 B": r.token_f1_b, "EM A": r.exact_match_a, "EM B": r.exact_match_b,
             "outcome": r.outcome, "id": r.id} for r in c.records if r.outcome in wanted]
    if not rows:
        st.caption("No record in this group.")
        return
    event = show_table(rows, key=f"{prefix}_changed", on_select="rerun", selection_mode="single-row",
                       column_config={k: st.column_config.NumberColumn(k, format="%.2f")
                                        for k in ("F1 A", "F1 B", "EM A", "EM B")})
    picked = event.selection.rows if event is not None and hasattr(event, "selection") else []
    if picked:
        r = rows[picked[0]]
        st.markdown(f"**{md(r['id'])}** · {md(r['question'] or '')}")
        left, right = st.columns(2)
        left.markdown(f"A · {md(c.name_a)} — F1 {fixed(r['F1 A'], 2)}")
        left.text(visible(r["prediction A"]))
        right.markdown(f"B · {md(c.name_b)} — F1 {fixed(r['F1 B'], 2)}")
        right.text(visible(r["prediction B"]))
    else:
        st.caption("Select a row to see both predictions.")


def paired_scores_view(c, rows: dict[str, dict], prefix: str, *, metric: str = "score") -> None:
    """A :class:`~evaluators.metrics.statistics.PairedScores` comparison: cards, then its items by outcome.

    ``rows`` maps each item key (as in ``c.outcomes``) to the table row shown for it (plain values).
    """
    bs, ar = c.bootstrap, c.randomization
    cols = st.columns([1, 1.5, 1, 1])  # the interval card holds two signed numbers: it gets the room
    cols[0].metric(f"{metric} delta · 差值", signed(bs.delta),
                   help=f"Mean {metric} of {md(c.name_b)} minus {md(c.name_a)} over {c.n_paired} paired items; "
                        f"{_ci_text(bs, 1, '')} ({bs.method}).")
    cols[1].metric("95% CI", f"{signed(bs.ci_low)} … {signed(bs.ci_high)}" if bs.ci_low is not None else "—",
                   help="Paired bootstrap percentile interval.")
    cols[2].metric("p (paired bootstrap)", _p(bs), help="Two-sided (Koehn 2004).")
    cols[3].metric("p (randomization)", _p(ar),
                   help=f"{ar.method} (Fisher-Pitman; Noreen 1989).")
    if small_sample_note(bs):
        st.warning(md(small_sample_note(bs)))
    counts = {"changed": bs.won + bs.lost, "won": bs.won, "lost": bs.lost, "tied": bs.tied}
    st.caption(f"{md(c.name_b)} against {md(c.name_a)}: {c.n_paired} items paired"
               + (f" ({c.only_a} only in A and {c.only_b} only in B left out)" if c.only_a or c.only_b else "")
               + f"; B higher on {bs.won}, lower on {bs.lost}, tied on {bs.tied}.")
    pick = st.radio("Items · 条目", list(OUTCOME_LABELS), horizontal=True, key=f"{prefix}_outcome",
                    format_func=lambda k: f"{OUTCOME_LABELS[k]} ({counts[k]})")
    wanted = {"won", "lost"} if pick == "changed" else {pick}
    shown = [{"outcome": o, **rows.get(k, {"item": k})} for k, o in c.outcomes.items() if o in wanted]
    if shown:
        show_table(shown, key=f"{prefix}_items")
    else:
        st.caption("No item in this group.")


def systems_chart(names: list[str], metrics: dict[str, list], lows: dict[str, list], highs: dict[str, list], *,
                  title: str, key: str) -> None:
    """Bars of each metric by system with their 95% intervals as error bars."""
    st.plotly_chart(metric_by_system(names, metrics, lows, highs, title=title), key=key)
