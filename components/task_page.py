"""A whole page for any task that speaks the Task protocol (:mod:`evaluators.tasks`), from the shared components.

:func:`task_page` draws: the page frame, one uploader per input role (or the task's demo files), the
task's config as widgets (one per simple dataclass field), an optional GT patch, then the located input
problems (:func:`components.problems.show_problems`), the summary with intervals, what the corrections
changed (:func:`components.corrections.show_corrections`), the item table, the JSON / CSV / Markdown
downloads (:func:`evaluators.reports.run_result.write`, the writer the CLI calls, so the bytes are the
CLI's) and the *Review these items* button (:func:`components.review_link.review_button`).  The page
holds layout only: the run is :func:`evaluators.tasks.run_task`, as on the command line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from components.cache import cached
from components.downloads import download
from components.layout import page_frame
from components.tables import show_table
from components.problems import show_problems
from components.uploads import digest, read_uploads
from evaluators.io.sources import InputFile
from evaluators.reports.escape import md
from evaluators.reports.run_result import FORMATS, summary_of, write
from evaluators.tasks import Task, run_task

#: Download formats of a task page: (format, file suffix, MIME type, button label).
DOWNLOADS = (("json", "json", "application/json", "Run (JSON)"), ("csv", "csv", "text/csv", "Items (CSV)"),
             ("md", "md", "text/markdown", "Summary (Markdown)"))
assert {f for f, *_ in DOWNLOADS} <= set(FORMATS)


def config_widgets(task: Task, key: str) -> Any:
    """The task's config from one widget per simple field (bool: checkbox, int/float: number, str: text)."""
    values: dict[str, Any] = {}
    with st.expander("Settings · 设置", expanded=False):
        for f in dataclasses.fields(task.config_type):
            label, wkey = f.name.replace("_", " ").capitalize(), f"{key}_{f.name}"
            if f.type in (bool, "bool"):
                values[f.name] = st.checkbox(label, value=f.default, key=wkey)
            elif f.type in (int, "int"):
                values[f.name] = int(st.number_input(label, value=f.default, step=1, key=wkey))
            elif f.type in (float, "float"):
                values[f.name] = float(st.number_input(label, value=f.default, key=wkey))
            elif f.type in (str, "str"):
                values[f.name] = st.text_input(label, value=f.default, key=wkey)
    return task.config_type(**values)


def _files(task: Task, source: str, demo: Callable[[], Mapping[str, InputFile]] | None, key: str
           ) -> dict[str, InputFile] | None:
    if source == "demo" and demo is not None:
        return dict(demo())
    files = {}
    for role in task.roles:
        got = read_uploads(st.file_uploader(f"{role.metavar}: {role.help}", key=f"{key}_{role.name}"),
                           suffixes=("",), group=f"{key}_{role.name}")
        if got:
            files[role.name] = got[0]
    missing = [r.metavar for r in task.roles if r.name not in files]
    if missing:
        st.info(md(f"Upload {', '.join(missing)} to score a run" + (" (or choose the demo data in the sidebar)."
                                                                    if demo is not None else ".")))
        return None
    return files


def task_page(task: Task, *, demo: Callable[[], Mapping[str, InputFile]] | None = None, icon: str = ":material/rule:"
              ) -> None:
    """Draw the page of ``task`` (see the module docstring).

    Parameters
    ----------
    task : Task
    demo : callable, optional
        Returns the task's demo files (role -> InputFile), used when the sidebar's data source is the demo.
    icon : str
        The page's icon.
    """
    source = page_frame(task.title, icon, caption=f"{task.title}: every {task.unit} scored against the ground truth.")
    key = f"task_{task.name}"
    files = _files(task, source, demo, key)
    config = config_widgets(task, key)
    patches = st.file_uploader("Review corrections (GT patch, JSONL) · 审阅更正", key=f"{key}_patch",
                               accept_multiple_files=True)
    if files is None:
        return
    from evaluators.io import InputError
    from evaluators.io.gt_patch import GTPatchMismatch, GTPatchSet

    patch_files = read_uploads(patches, suffixes=("",), group=f"{key}_patch")
    try:
        patch_set = GTPatchSet.read([(f.name, f.data) for f in patch_files]) if patch_files else None
        result = cached(("task", task.name, digest(list(files.values()), patch_files, extra=repr(config))),
                        lambda: run_task(task, files, config, gt_patch=patch_set))
    except (InputError, GTPatchMismatch) as exc:
        st.error(md(str(exc)))
        return
    show_problems(result.issues, key=f"{key}_problems")
    if not len(result.items):
        st.info(f"Nothing was scored: no {task.unit} in the inputs.")
        return
    st.subheader("Summary · 汇总")
    show_table([{"system": r.system, "slice": r.slice or "all", "value": r.slice_value, "metric": r.metric,
                 "n": r.n, "mean": r.mean, "95% CI low": r.ci_low, "95% CI high": r.ci_high}
                for r in summary_of(result)], key=f"{key}_summary")
    st.caption(md(f"Signature: {result.signature or '-'}"))
    if result.corrections is not None:
        from components.corrections import show_corrections

        st.subheader("Review corrections · 审阅更正")
        show_corrections(result.corrections, key=f"{key}_corrections")
    st.subheader(f"{task.unit.capitalize()}s · 明细")
    show_table(list(result.items.rows()), key=f"{key}_items")
    columns = st.columns(len(DOWNLOADS))
    for col, (fmt, suffix, mime, label) in zip(columns, DOWNLOADS):
        download(label, lambda fmt=fmt: write(result, fmt, task.title), file_name=f"{task.name}.{suffix}",
                 mime=mime, key=f"{key}_download_{fmt}", where=col)
    from components.review_link import review_button
    from evaluators.tasks import gt_role, review_items

    gt = files[gt_role(task).name]
    review_button(f"Review these {task.unit}s · 人工审阅", task.name, gt.name, lambda: review_items(result),
                  key=f"{key}_to_review", data=lambda: gt.data)
    from components.save_run import save_run

    save_run(lambda: result, gt_name=gt.name, gt_files=lambda: [(gt.name, gt.data)], source=gt.name,
             key=f"{key}_save")
