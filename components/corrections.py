""""Apply review corrections": one control for the QA, Long Memory, Persona, Test-set and Narrative pages.

A toggle; while it is off nothing else of this runs (no import of the review store, no database
opened, no patch read), so a page that does not use it pays nothing on its first render.  On, the
user picks a review session of the page's kind (the review database, as on the Review page) or
uploads GT patch files; the page's ``apply`` calls its run function with the patch
(:class:`~evaluators.io.gt_patch.GTPatchSet`) and returns the run's
:class:`~evaluators.metrics.before_after.Corrections`, shown here: what each patch did, the scores
before and after with their intervals, the paired test, and the rank flips between systems.  The
rows and sentences come from :mod:`evaluators.reports.corrections` (the CLI's and the HTML
report's renderer).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

SESSION, UPLOAD = "A review session · 审阅任务", "GT patch files · 更正文件 (JSONL)"


def _patches_from_session(kind: str, gt_name: str, gt_data: Callable[[], bytes], key: str,
                          make: Callable | None = None):
    from evaluators.io import InputError
    from evaluators.reports.escape import md, visible
    from components.review_link import review_store
    from evaluators.review.gt_patch import session_patch

    try:
        store = review_store()
        sessions = {s.id: s for s in store.sessions() if s.kind == kind}
    except Exception as exc:  # noqa: BLE001 - a database that cannot be reached is shown, not raised
        st.error(md(f"The review database cannot be read: {exc}"))
        return None
    if not sessions:
        st.info("No review session of this kind yet: start one with the “Review these …” button of this page, "
                "decide and adjudicate on the Review page, then come back.")
        return None
    sid = st.selectbox("Session · 审阅任务", list(sessions), key=f"{key}_session",
                       format_func=lambda i: visible(f"{sessions[i].name} ({sessions[i].n_items} items)"))
    try:
        if make is not None:
            made = make(store, sid)
        else:  # read the GT file and the session once per file and change of the session, not every rerun
            from components.cache import cached
            from evaluators.io.gt_patch import file_sha256

            data = gt_data()
            made = cached(("review_corrections", store.url, sid, store.changes(sid), gt_name, file_sha256(data)),
                          lambda: session_patch(store, sid, gt_name, data))
    except (InputError, ValueError) as exc:
        st.error(md(f"{gt_name}: {exc}"))
        return None
    if made.note:
        st.warning(md(made.note))
    if made.skipped:
        st.caption(f"{len(made.skipped)} final label(s) give no correction: "
                   + "; ".join(md(f"{where}: {why}") for where, why in made.skipped[:5])
                   + (" …" if len(made.skipped) > 5 else ""))
    if not made.patch:
        st.info("This session has no correction yet: no final label (agreed or adjudicated) is an acceptable "
                "variant, or a GT error with its corrected answer.")
        return None
    return made.patch


def _patches_from_files(key: str):
    from components.uploads import upload_bytes
    from evaluators.io import InputError
    from evaluators.io.gt_patch import GTPatchSet
    from components.problems import show_problems

    ups = st.file_uploader("GT patches, applied in order · 更正文件 (as `review patch` writes them)",
                           type=["jsonl", "json"], accept_multiple_files=True, key=f"{key}_files")
    if not ups:
        return None
    try:
        patches = GTPatchSet.read([(u.name, upload_bytes(u)) for u in ups])
    except InputError as exc:
        show_problems([exc.issue], key=f"{key}_patch_problems", error="")
        return None
    show_problems(patches.issues, key=f"{key}_patch_problems", title="Lines skipped in the patch files",
                  severity="warning")
    return patches


def corrections_control(kind: str, gt_name: str, gt_data: Callable[[], bytes], apply: Callable, *, key: str,
                        html: Callable | None = None, session_patch: Callable | None = None) -> None:
    """The "Apply review corrections" toggle and, when on, its picker and the before / after view.

    Parameters
    ----------
    kind : str
        The review session kind of the page (``qa``, ``memory``, ``dialogue``, ``testsets``).
    gt_name : str
        The GT file being scored (what a patch must have been made for).
    gt_data : callable
        Returns its bytes (called only when a session is picked).
    apply : callable
        ``apply(patches) -> Corrections``: the page's run function with the patch.  May raise
        ``ValueError`` (a patch made for another file: ``GTPatchMismatch``) or ``InputError``.
    key : str
        Widget key prefix.
    html : callable, optional
        ``html(patches, corrections) -> str``: an HTML report with the corrections, offered as a download.
    session_patch : callable, optional
        ``session_patch(store, session_id) -> SessionPatch``: a session's corrections for a page whose run
        has several GT files (the Narrative page: one per story,
        :func:`evaluators.review.gt_patch.narrative_session_patch`); by default
        :func:`evaluators.review.gt_patch.session_patch` of ``gt_name`` and ``gt_data()``.
    """
    if not st.toggle("Apply review corrections · 应用审阅更正", key=f"{key}_on",
                     help="Score again with the ground truth corrected by people's review decisions (a review "
                          "session or GT patch files), and see the scores before and after with a paired test. "
                          "The GT file itself is never changed."):
        return
    from evaluators.io import InputError
    from evaluators.reports.escape import md

    with st.container(border=True):
        source = st.radio("Corrections from · 更正来源", [SESSION, UPLOAD], horizontal=True, key=f"{key}_source")
        patches = (_patches_from_session(kind, gt_name, gt_data, key, session_patch) if source == SESSION
                   else _patches_from_files(key))
        if patches is None:
            return
        try:
            with st.spinner("Scoring with the corrections …"):
                corrections = apply(patches)
        except (InputError, ValueError) as exc:  # GTPatchMismatch is a ValueError: shown, never raised
            st.error(md(str(exc)))
            return
        show_corrections(corrections, key=key)
        if html is not None and corrections.effect is not None:
            st.download_button("HTML report with the corrections · 含更正的报告",
                               lambda: html(patches, corrections).encode("utf-8"),
                               file_name="report_with_corrections.html", mime="text/html", key=f"{key}_html",
                               on_click="ignore")


def show_corrections(corrections, *, key: str) -> None:
    """What the patches did, the scores before and after (intervals, paired test) and the rank flips."""
    from components.problems import show_problems
    from components.qa_views import ratio_columns
    from components.tables import show_table
    from evaluators.reports.corrections import (
        applications_rows,
        effect_rows,
        p_texts,
        randomization_p_text,
        rank_lines,
        small_sample_lines,
    )
    from evaluators.reports.escape import md
    from evaluators.reports.format import percent, points

    show_table(applications_rows(corrections.applications), key=f"{key}_applied")
    show_problems([i for _, app in corrections.applications for i in app.issues], key=f"{key}_apply_problems",
                  title="Corrections not applied", severity="warning")
    effect = corrections.effect
    if effect is None:
        st.info(md(corrections.note or "No record is scored both before and after the corrections."))
        return
    st.markdown("**Before and after the corrections · 更正前后**")
    rows = effect_rows(effect)
    for r in rows:  # the intervals as one readable cell each (the bounds stay in the table's data)
        for name, fmt in (("before", percent), ("after", percent), ("delta", points)):
            r[f"{name} 95% CI"] = f"{fmt(r[f'{name}_ci_low'])} – {fmt(r[f'{name}_ci_high'])}"
        # p-values as text: a bound reads "p < 0.0001", not 0.0001 (the numbers stay in the data)
        r["p (paired bootstrap)"], r["p (McNemar)"] = p_texts(r, digits=4)
        r["p (sign-flip)"] = randomization_p_text(r, digits=4)
    config = ratio_columns("before", "after", "delta")
    show_table(rows, key=f"{key}_effect", column_config=config,
               column_order=["run", "metric", "n", "before", "after", "delta", "p (paired bootstrap)", "p (McNemar)",
                             "p (sign-flip)", "before 95% CI", "after 95% CI", "delta 95% CI", "changed"])
    first = effect.changes[0].metrics[0]
    st.caption(md(f"Intervals: {first.before.signature}. Paired test of after − before on the same "
                  f"{effect.unit}s: {first.change.method}; McNemar's exact test for a binary metric; the sign-flip "
                  "randomization test where the bootstrap is flagged, exact (every flip counted) when at most 20 changed."))
    for line in small_sample_lines(effect):
        st.warning(md(line))
    if len(effect.changes) > 1:
        for line in rank_lines(effect, percent):
            (st.warning if effect.rank_flips else st.caption)(md(line))
