"""Runs: the runs kept in the registry, listed and filtered; a metric's trend over one dataset's runs with its
intervals, flagged steps and GT versions; two runs side by side; the leaderboard and the noise of repeats.

Layout only: every number comes from :mod:`evaluators.runs` (through :mod:`evaluators.runs.view`), the same
functions as ``python -m evaluators runs list|trend|compare|leaderboard``."""

from components.layout import page_frame, view_switch

source = page_frame("Runs · 运行记录", "📈",
                    caption="Runs kept with `--log`: history, trends with intervals and corrected change flags, "
                            "two runs side by side.", source_choice=False)

import streamlit as st  # noqa: E402

from components.cache import cached  # noqa: E402
from components.downloads import download  # noqa: E402
from components.runs_views import (LOG_COMMAND, comparison_view, leaderboard_view, log_demo_runs,  # noqa: E402
                                   noise_view, run_store, runs_table, steps_table, trend_chart)
from evaluators.reports.escape import md, visible  # noqa: E402
from evaluators.reports.runs import to_json  # noqa: E402
from evaluators.runs import view as rv  # noqa: E402
from evaluators.runs.noise import noise_floor, repeat_groups  # noqa: E402

#: The views, slug (the link's ``?view=``) -> label.
VIEWS = {"list": "Runs · 列表", "trend": "Trend · 趋势", "compare": "Side by side · 对比",
         "leaderboard": "Leaderboard · 排行"}
ANY = "(any)"
#: Runs of a group of repeats whose noise floor the trend view shows (the latest).
NOISE_RUNS = 10

store = run_store()
everything = store.runs()
if not everything:
    st.info(f"No run logged yet. Log one from the command line with `{LOG_COMMAND}` (one run per system of the "
            "file), or log the built-in QA demo's systems here.")
    if st.button("Log the demo runs · 记录演示运行", key="runs_log_demo", type="primary"):
        try:
            log_demo_runs()
            st.rerun()
        except ValueError as exc:  # RunExists: logged meanwhile by another session
            st.warning(md(str(exc)))
    st.stop()

with st.expander("Filters · 筛选", expanded=False):
    cols = st.columns(5)
    task = cols[0].selectbox("Task", [ANY, *sorted({r.task for r in everything})], key="runs_task",
                             format_func=visible)
    dataset = cols[1].selectbox("Dataset", [ANY, *sorted({r.dataset for r in everything})], key="runs_dataset",
                                format_func=visible)
    system = cols[2].selectbox("System", [ANY, *sorted({s for r in everything for s in r.systems})],
                               key="runs_system", format_func=visible)
    tag = cols[3].text_input("Tag (KEY or KEY=VALUE)", key="runs_tag").strip()
    since = cols[4].date_input("Since (UTC)", value=None, key="runs_since")
filters = dict(task=None if task == ANY else task, dataset=None if dataset == ANY else dataset,
               system=None if system == ANY else system, tag=tag or None,
               since=since.isoformat() if since else None)
records = store.runs(**filters) if any(v is not None for v in filters.values()) else everything
if not records:
    st.warning("No run matches these filters.")
    st.stop()

view = view_switch(VIEWS, key="runs_view")
metrics = rv.metrics_of(records)

if view == "list":
    st.caption(f"{len(records)} of {len(everything)} runs, oldest first (click a column to sort).")
    runs_table(records, metrics, key="runs_table")
    download("Download the runs (JSON)", lambda: to_json(records), file_name="runs.json", mime="application/json",
             key="runs_list_json", help="The same file as `runs list --format json` with these filters.")
    st.stop()

datasets = {r.dataset_digest: visible(f"{r.dataset} ({r.dataset_digest[:8]})") for r in records}
if len(datasets) > 1:
    picked = st.selectbox("Dataset · 数据集", list(datasets), key="runs_trend_dataset", format_func=datasets.get,
                          help="A trend, a comparison and a leaderboard are of one dataset's runs (its GT by content).")
    records = tuple(r for r in records if r.dataset_digest == picked)
metrics = rv.metrics_of(records)

if view == "trend":
    cols = st.columns([2, 2, 2, 2])
    metric = cols[0].selectbox("Metric · 指标", metrics, key="runs_metric")
    slices = rv.slices_of(records)
    slice_name = cols[1].selectbox("Slice · 切片", ["", *slices], key="runs_slice",
                                   format_func=lambda s: visible(s) if s else "all items")
    correction = cols[2].radio("Correction", ["holm", "bh"], key="runs_correction", horizontal=True,
                               format_func={"holm": "Holm", "bh": "Benjamini-Hochberg"}.get,
                               help="Holm controls the family-wise error of each step's metric × slices; "
                                    "Benjamini-Hochberg the false discovery rate.")
    tested = cols[3].selectbox("Steps tested", [30, 100, None], key="runs_tested",
                               format_func=lambda n: "all" if n is None else f"latest {n}",
                               help="The points of every run come from its logged summary; each tested step "
                                    "reads both runs' items.")
    current = st.toggle("Also on the current GT · 当前 GT 重新评分", key="runs_current_gt",
                        help="Every run re-scored on its dataset's current GT version from its stored "
                             "predictions (runs trend --current-gt).")
    on = (slice_name,) if slice_name else ()
    key = ("runs", str(store.url), tuple((r.name, r.items_digest) for r in records), metric, on, correction, tested)
    try:
        t = cached(key + ("scored",), lambda: rv.page_trend(store, records, metric, slices=on, correction=correction,
                                                             tested_steps=tested))
        rescored = (cached(key + ("current",), lambda: rv.rescored_trend(store, records, metric, correction=correction))
                    if current and not slice_name else None)
    except ValueError as exc:
        st.warning(md(str(exc)))
        st.stop()
    trend_chart(t, rescored=rescored, changes=rv.gt_changes(records), slice_name=slice_name, key="runs_trend_chart")
    if current and slice_name:
        st.caption("The current-GT line is drawn for all items (choose no slice).")
    steps_table(t, key="runs_steps")
    if rescored is not None:
        st.markdown("**On the current GT · 当前 GT**")
        steps_table(rescored, key="runs_steps_current")
    download("Download the trend (JSON)", lambda: to_json(t), file_name="trend.json", mime="application/json",
             key="runs_trend_json",
             help="`runs trend --metric M [--slice S] --correction C --ci-resamples 1000 --format json`.")
    groups = [g[-NOISE_RUNS:] for g in repeat_groups(records)]
    if groups and st.toggle(f"Noise of repeats · 重复运行的噪声 ({len(groups)} groups)", key="runs_noise_on",
                            help=f"Runs sharing task, system, dataset version and config; the latest {NOISE_RUNS} of "
                                 "each group (each run's items are read)."):
        floors = cached(key + ("noise",), lambda: [noise_floor([(r.name, store.load(r.name, [metric])) for r in g],
                                                               metric) for g in groups])
        noise_view(floors, key="runs_noise")

elif view == "compare":
    names = [r.name for r in records]
    if len(names) < 2:
        st.info("Two runs of this dataset are needed to compare.")
        st.stop()
    cols = st.columns(2)
    a = cols[0].selectbox("Run A", names, index=len(names) - 2, key="runs_a", format_func=visible)
    b = cols[1].selectbox("Run B", names, index=len(names) - 1, key="runs_b", format_func=visible)
    from evaluators.runs.compare import TooFewCommon, compare_runs, tokenizer_changes

    digests = {r.name: r.items_digest for r in records}
    signatures = {r.name: r.signature for r in records}
    for line in tokenizer_changes(a, signatures[a], b, signatures[b]):
        st.warning(md(line))
    try:
        c = cached(("runs", str(store.url), a, digests[a], b, digests[b], "compare"),
                   lambda: compare_runs(store.load(a), store.load(b), a, b))
    except (TooFewCommon, ValueError) as exc:
        st.warning(md(str(exc)))
        st.stop()
    comparison_view(c, key="runs_comparison")
    download("Download the comparison (JSON)", lambda: to_json(c), file_name="comparison.json",
             mime="application/json", key="runs_compare_json", help="`runs compare A B --format json`.")

else:
    from evaluators.runs.leaderboard import latest_by_system, leaderboard

    metric = st.selectbox("Metric · 指标", metrics, key="runs_board_metric")
    latest = latest_by_system(records)
    try:
        board = cached(("runs", str(store.url), tuple((r.name, r.items_digest) for r in latest), metric, "board"),
                       lambda: leaderboard([(r.name, store.load(r.name, rv.columns_of(r, [metric]))) for r in latest],
                                           metric))
    except ValueError as exc:
        st.warning(md(str(exc)))
        st.stop()
    leaderboard_view(board, key="runs_board")
