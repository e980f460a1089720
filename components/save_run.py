"""*Save this run*: keep a page's scored run in the run registry, as ``--log`` keeps the CLI's (one run per system).

The run result (:class:`~evaluators.run_result.RunResult`) and the GT file's identity come from the page; the
logging is :func:`evaluators.cli.runlog.log_runs`, the function behind every command's ``--log``, so a run saved
here and one logged from the command line are the same rows of the same registry (the Runs page lists both).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from evaluators.reports.escape import md


def save_run(result: Callable[[], object], *, gt_name: str, gt_files: Callable[[], list[tuple[str, bytes]]] | None = None,
             source: str, key: str, where=None) -> None:
    """A name field and a *Save this run* button; on click, the run is logged and the names of the runs shown.

    Parameters
    ----------
    result : callable
        Returns the page's :class:`~evaluators.run_result.RunResult` (after its GT corrections, if any), or the pair
        ``(RunResult, dataset identity by system)`` when the task names its dataset by content as its ``--log`` does
        (QA: :func:`evaluators.cli.runlog.qa_result_to_log`); called on click only.
    gt_name : str
        The dataset's name (the GT file's name).
    gt_files : callable, optional
        Without a dataset identity from ``result``: returns the GT files as ``(name, bytes)``, the dataset's identity
        being
        :func:`evaluators.cli.runlog.files_digest` of them (what ``--log`` records for the same files on disk);
        called on click only.
    source : str
        The input's name: the default run name is ``SOURCE@<UTC time>``.
    key : str
        Widget key prefix.
    where : Streamlit container, optional
        Where to draw (default: an expander on the page).

    Problems (a taken name, a database error) are shown, not raised.
    """
    box = where if where is not None else st.expander("Save this run · 保存本次评测", icon=":material/save:")
    with box:
        name = st.text_input("Run name (optional) · 名称", key=f"{key}_name", max_chars=200,
                             help="One run per system (NAME/<system> with several); default: the file's name "
                                  "and the time. The Runs page lists saved runs.")
        if not st.button("Save this run · 保存", key=f"{key}_button"):
            return
        from evaluators.cli.runlog import files_digest, log_runs
        from evaluators.runs import RunExists

        try:
            made = result()
            run, digests = made if isinstance(made, tuple) else (made, files_digest(gt_files()))
            records = log_runs(run, gt_name=gt_name, source=source, gt_digests=digests,
                               run_name=name.strip() or None, who="page")
        except (RunExists, ValueError, OSError, RuntimeError) as exc:
            st.error(md(f"Not saved: {exc}"))
            return
        st.success(md("Saved: " + ", ".join(r.name for r in records)))
