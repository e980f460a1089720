"""The Judge lab page's pieces: versions side by side, confusion matrices with the disagreeing items, corrected
scores, the bias panel.  They take the engine's :class:`~evaluators.judgelab.lab.JudgeLab` and render it."""

from __future__ import annotations

import streamlit as st

from components.static import static_table
from components.tables import show_table
from evaluators.judgelab.calibration import SplitFigures
from evaluators.judgelab.lab import JudgeLab
from evaluators.reports.escape import md
from evaluators.reports.format import number
from evaluators.reports.judgelab import (CALIBRATION_HEADER, CELL_LEGEND, COMPARISON_HEADER, CORRECTED_HEADER,
                                         LENGTH_BIAS_HEADER, calibration_rows, comparison_rows, corrected_rows,
                                         interval_cell, length_bias_rows)
from evaluators.review.links import review_url

#: Disagreeing ids listed per version and side before "and N more".
MAX_IDS = 60


def _table(header: list[str], rows: list[list[str]], key: str, caption: str) -> None:
    show_table([dict(zip(header, row)) for row in rows], key=key)
    st.caption(md(caption))


def warnings(lab: JudgeLab) -> None:
    """The overfit warning of each version that has one, and the report's notes.

    Parameters
    ----------
    lab : JudgeLab
        From :func:`evaluators.judgelab.lab.run_lab`.
    """
    for cal in lab.report.judges:
        if cal.warning:
            st.warning(md(f"{cal.version.label}: {cal.warning}"), icon=":material/warning:")
        if cal.missing_ids:
            st.caption(md(f"{cal.version.label}: {len(cal.missing_ids)} labelled item(s) without a verdict, left out."))
    for note in lab.report.notes + lab.corrected_notes:
        st.caption(md(note))


def versions_table(lab: JudgeLab) -> None:
    """Every version on dev and on test: the figures with their intervals, the confusion counts.

    Parameters
    ----------
    lab : JudgeLab
        From :func:`evaluators.judgelab.lab.run_lab`.
    """
    _table(CALIBRATION_HEADER, calibration_rows(lab.report), "jl_versions",
           CELL_LEGEND + ". Kappa: Cohen (1960); a prompt is chosen on dev and judged on test.")


def corrected_panel(lab: JudgeLab) -> None:
    """The model's accuracy on the unlabelled items under each version, raw and corrected, with intervals.

    Parameters
    ----------
    lab : JudgeLab
        From :func:`evaluators.judgelab.lab.run_lab`.
    """
    st.subheader("Corrected scores · 校正后的得分")
    if not lab.corrected:
        st.info("Upload the versions' verdicts on the model's unlabelled outputs (*Target verdicts*) to see the "
                "model's accuracy corrected for each judge's errors.")
        return
    _table(CORRECTED_HEADER, corrected_rows(dict(lab.corrected)), "jl_corrected",
           "Calibrated on the test side. Bias-adjusted: Lee et al. 2025 (arXiv:2511.21140), needs only that the judge "
           "errs alike on calibration and target items; prediction-powered (PPI++) and human-only also assume the "
           "labelled items are a uniform sample of the target. Raw judge: the judge's errors are not corrected.")


def _matrix(figs: SplitFigures, where) -> None:
    (tn, fp), (fn, tp) = figs.confusion
    (tn_ci, fp_ci), (fn_ci, tp_ci) = figs.confusion_ci
    def cell(count: int, ci) -> str:
        return f"{count} [{number(ci[0], 0)}, {number(ci[1], 0)}]" if ci[0] is not None else number(count)

    static_table(["people \\ judge", "judge: wrong", "judge: right"],
                 [["people: wrong", cell(tn, tn_ci), cell(fp, fp_ci)],
                  ["people: right", cell(fn, fn_ci), cell(tp, tp_ci)]],
                 caption=f"{figs.side}: {figs.n_items} items; [low, high]: 95% bootstrap interval of the count",
                 where=where)


def _ids(ids: tuple[str, ...], lab: JudgeLab) -> str:
    """The ids as Markdown: each a link to its item on the Review page when it comes from a review session."""
    shown = []
    for item_id in ids[:MAX_IDS]:
        ref = lab.review_ref(item_id)
        shown.append(f"[{md(item_id)}]({review_url(ref.session, ref.item)})" if ref is not None else md(item_id))
    more = f" … and {len(ids) - MAX_IDS} more (all in the JSON report)" if len(ids) > MAX_IDS else ""
    return ", ".join(shown) + more


def confusion_panel(lab: JudgeLab) -> None:
    """For each version, dev and test: the confusion matrix and the items where judge and people disagree.

    Parameters
    ----------
    lab : JudgeLab
        From :func:`evaluators.judgelab.lab.run_lab`.
    """
    linked = bool(lab.review_refs)
    st.caption("Rows: the people's final label; columns: the judge's verdict."
               + (" Each disagreeing item opens on the Review page (a new tab)." if linked else ""))
    for cal in lab.report.judges:
        st.subheader(md(cal.version.label))
        st.caption(md(f"model {cal.version.model or '—'} · prompt {cal.version.prompt_hash[:12] or '—'} · "
                      f"parser {cal.version.parser or '—'} · key {cal.version.key}"))
        if cal.warning:
            st.warning(md(cal.warning), icon=":material/warning:")
        columns = st.columns(2)
        for figs, where in zip((cal.dev, cal.test), columns):
            _matrix(figs, where)
            for what, ids in (("judge right, people wrong", figs.false_positive_ids),
                              ("judge wrong, people right", figs.false_negative_ids)):
                if ids:
                    where.markdown(f"**{figs.side} · {what}** ({len(ids)}): {_ids(ids, lab)}")
                else:
                    where.caption(f"{figs.side} · {what}: none")


def bias_panel(lab: JudgeLab) -> None:
    """Length bias of each version (when answer lengths are known) and drift between consecutive versions.

    Parameters
    ----------
    lab : JudgeLab
        From :func:`evaluators.judgelab.lab.run_lab`.
    """
    st.subheader("Length bias · 长度偏好")
    if lab.length_bias:
        _table(LENGTH_BIAS_HEADER, length_bias_rows(lab.length_bias), "jl_length", "The slope of the judge's verdict on the answer's length, the people's label held fixed (least "
                   "squares, bootstrap interval over items): above 0, the judge calls longer answers right more often "
                   "than people do. Cf. Dubois et al. 2024 (length-controlled AlpacaEval).")
    else:
        st.info("No answer lengths: upload the items (with their answers) to see each version's length bias.")
    st.subheader("Drift between versions · 版本漂移")
    if lab.comparisons:
        _table(COMPARISON_HEADER, comparison_rows(lab.comparisons), "jl_drift", "On the labelled items: the share whose verdict moved (Wilson interval), agreement and Cohen's "
                   "kappa between the two versions (bootstrap interval), McNemar's exact test of their positive "
                   "rates. *: fewer than 30 items.")
        for c in lab.comparisons:
            moved = c.drift.moved_ids
            if moved:
                with st.expander(md(f"{c.before} → {c.after}: {len(moved)} item(s) moved")):
                    st.markdown(f"**wrong → right** ({len(c.drift.up_ids)}): {_ids(c.drift.up_ids, lab) or '—'}")
                    st.markdown(f"**right → wrong** ({len(c.drift.down_ids)}): {_ids(c.drift.down_ids, lab) or '—'}")
    else:
        st.info("One judge version: drift needs two.")
    st.caption("Position bias (a swap test on A/B items) and self-preference (the judge's model family among the "
               "systems) need A/B verdicts in both orders and the systems' families: `evaluators.judgelab.bias`.")
