"""The Runs page's pieces: the registry's store, the runs table, the trend chart and its steps, two runs side by
side, the leaderboard and the noise floor of repeats.  They take the engine's objects
(:mod:`evaluators.runs`, :mod:`evaluators.runs.view`) and draw them; nothing is computed here."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from components.tables import show_table
from evaluators.reports.escape import md
from evaluators.reports.format import number, p_value, percent, points, points_interval

#: The command a new user runs to log a run (the empty state says it).
LOG_COMMAND = "python -m evaluators qa FILE --log --run-name NAME"

#: The run name of the demo runs (one per system: ``demo/<system>``).
DEMO_RUN_NAME = "demo"


@st.cache_resource(show_spinner=False)
def _store(url: str):
    from evaluators.runs import RunStore

    return RunStore(url)


def run_store(url: str | None = None):
    """The run registry of a database URL: one :class:`~evaluators.runs.RunStore` per URL and server process.

    Parameters
    ----------
    url : str, optional
        A SQLAlchemy URL or SQLite path; default :func:`evaluators.review.store.default_url`, read on each call.

    Returns
    -------
    RunStore
    """
    from evaluators.review.store import default_url

    return _store(str(url or default_url()))


def log_demo_runs(url: str | None = None) -> tuple:
    """Log the QA demo's systems (``evaluators/demo/qa/qa_systems_demo.jsonl``) as runs, one per system.

    What ``python -m evaluators qa evaluators/demo/qa/qa_systems_demo.jsonl --log --run-name demo`` logs
    (:func:`evaluators.cli.runlog.log_runs`, the helpers of ``--log``), named ``demo/<system>``.

    Parameters
    ----------
    url : str, optional
        The database (default :func:`evaluators.review.store.default_url`).

    Returns
    -------
    tuple of RunRecord

    Raises
    ------
    evaluators.runs.RunExists
        The demo runs are logged already.
    """
    from evaluators.cli.runlog import file_digest, log_runs, qa_result_to_log
    from evaluators.demo import demo_path
    from evaluators.qa.evaluate import QAConfig
    from evaluators.qa.run import QAInput, run_qa
    from evaluators.review.store import default_url

    path = demo_path("qa", "qa_systems_demo.jsonl")
    config = QAConfig()
    report = run_qa(QAInput(path), config).inputs[0].report
    digest = file_digest(path)
    result, gt_digests = qa_result_to_log(report, config, str(path), gt_file_digest=digest, predictions_digest=digest)
    return log_runs(result, gt_name=path.name, source=path.name, gt_digests=gt_digests, run_name=DEMO_RUN_NAME,
                    who="demo", tags={"demo": "qa"}, db=str(url or default_url()))


def _overall(record, metric: str) -> dict | None:
    return next((s for s in record.summary if s["metric"] == metric and s["slice"] == ""), None)


def runs_rows(records: Sequence, metrics: Sequence[str]) -> list[dict]:
    """The runs table's rows: name, created (UTC), task, dataset and GT version, systems, items, each metric's
    mean (a number, so the column sorts), tags, accepted."""
    rows = []
    for r in records:
        row = {"run": r.name, "created (UTC)": r.created_at[:19].replace("T", " "), "task": r.task,
               "dataset": f"{r.dataset} v{r.dataset_version}", "systems": ", ".join(r.systems), "items": r.n_items}
        for m in metrics:
            row[m] = (_overall(r, m) or {}).get("mean")
        row["tags"] = ", ".join(f"{k}={v}" if v else k for k, v in r.tags.items())
        row["accepted"] = r.accepted
        rows.append(row)
    return rows


def runs_table(records: Sequence, metrics: Sequence[str], *, key: str) -> None:
    """The runs as a sortable table (a column per metric: its mean over every item)."""
    show_table(runs_rows(records, metrics), key=key,
               column_config={m: st.column_config.NumberColumn(m, format="%.4f") for m in metrics})


def trend_lines(t, slice_name: str = "") -> dict[str, dict[str, list]]:
    """A trend's points as chart lines: ``{label: {"mean", "low", "high"}}``, one per slice value (every item
    when ``slice_name`` is ``""``), each with a value per run (``None`` where the run has no point)."""
    index = {r: i for i, r in enumerate(t.runs)}
    lines: dict[str, dict[str, list]] = {}
    for p in t.points:
        if p.slice != slice_name:
            continue
        label = p.slice_value if slice_name else p.metric
        line = lines.setdefault(label, {k: [None] * len(t.runs) for k in ("mean", "low", "high")})
        i = index[p.run]
        line["mean"][i], line["low"][i], line["high"][i] = p.mean, p.ci_low, p.ci_high
    return lines


def trend_chart(t, *, rescored=None, changes: Sequence[tuple[int, int, int]] = (), slice_name: str = "",
                key: str) -> None:
    """The trend's chart: the "as scored" line (or one per slice value) with its bands, the flagged steps starred,
    the "on the current GT" line when ``rescored`` is given, and the GT version changes marked."""
    from evaluators.reports.figures import runs_trend

    lines = trend_lines(t, slice_name)
    if rescored is not None and not slice_name:
        lines = {"as scored": next(iter(lines.values())),
                 "on the current GT": next(iter(trend_lines(rescored).values()))}
    flagged = [t.runs.index(s.run_b) for s in t.steps if s.flagged]
    marks = [(i, f"GT v{a} → v{b}") for i, a, b in changes]
    title = f"{t.metrics[0]} over {len(t.runs)} runs (with 95% intervals)"
    st.plotly_chart(runs_trend(list(t.runs), lines, flagged=flagged, gt_changes=marks, title=title), key=key)


def _best(step):
    """The step's test with the smallest adjusted p-value (its flagged one first)."""
    tested = [x for x in step.tests if x.p_adjusted is not None]
    return min(tested, key=lambda x: (not x.flagged, x.p_adjusted)) if tested else None


def steps_rows(t) -> list[dict]:
    """One row per step: the runs, n common, flagged, the strongest test's difference, interval and p-values."""
    rows = []
    for s in t.steps:
        best = _best(s) if s.joined else None
        rows.append({"step": f"{s.run_a} → {s.run_b}", "n common": s.n_common if s.joined else None,
                     "flagged": s.flagged,
                     "slice": (f"{best.slice}={best.slice_value}" if best.slice else "all") if best else None,
                     "delta": points(best.delta) if best else None,
                     "95% CI": points_interval(best.ci_low, best.ci_high) if best else None,
                     "p": p_value(best.p_value) if best else None,
                     "p adjusted": p_value(best.p_adjusted) if best else None,
                     "note": s.reason or None})
    return rows


def steps_table(t, *, key: str) -> None:
    """The steps table and, for each step not joined, why (the counts of items each run has and shares)."""
    correction = "Holm (family-wise error)" if t.correction == "holm" else "Benjamini-Hochberg (false discovery rate)"
    st.caption(f"Each step is tested on the items both runs scored ({t.test} test, {number(t.n_resamples)} "
               f"resamples) across its metric × slices, corrected with **{correction}**, and flagged when an "
               f"adjusted p-value is at most {number(t.alpha, 2)}. “n common = k”: the items the two runs share.")
    show_table(steps_rows(t), key=key, counts={"n common"})
    for s in t.steps:
        if not s.joined:
            st.caption(md(f"{s.run_a} → {s.run_b}: {s.reason}"))


def comparison_view(c, *, key: str) -> None:
    """Run B against run A metric by metric: the means, the difference with its paired bootstrap interval and
    the p-values of the paired bootstrap, approximate randomization and (0/1 metrics) McNemar's exact test."""
    st.metric("n common · 共同条目", number(c.n_common), help=f"of {c.n_a} in A and {c.n_b} in B")
    rows = []
    for m in c.metrics:
        b = m.bootstrap
        rows.append({"metric": m.metric, "n paired": m.n_paired, "A": percent(b.mean_a), "B": percent(b.mean_b),
                     "delta": points(b.delta), "95% CI": points_interval(b.ci_low, b.ci_high),
                     "paired bootstrap": p_value(b.p_value, b.p_value_is_bound),
                     "randomization": p_value(m.randomization.p_value, m.randomization.p_value_is_bound),
                     "McNemar": p_value(m.mcnemar.p_value) if m.mcnemar is not None else None,
                     "B won / lost / tied": f"{b.won} / {b.lost} / {b.tied}"})
    show_table(rows, key=key, counts={"n paired"})
    st.caption(f"B = {md(c.name_b)} against A = {md(c.name_a)}, on the {number(c.n_common)} items both scored: the "
               "numbers of `runs compare A B`.")
    if c.not_compared:
        st.caption("Not compared (no item has a value in both runs): " + ", ".join(md(m) for m in c.not_compared))


def leaderboard_view(board, *, key: str) -> None:
    """The leaderboard: rank, tier, system, run, n, mean with its interval, p against the tier's leader."""
    rows = [{"rank": r.rank, "tier": r.tier, "system": r.system, "run": r.run, "n": r.n, board.metric: percent(r.mean),
             "95% CI": f"{percent(r.ci_low)} – {percent(r.ci_high)}",
             "vs tier leader (Holm)": p_value(r.p_vs_leader) if r.p_vs_leader is not None else None}
            for r in board.rows]
    show_table(rows, key=key, counts={"rank", "tier", "n"})
    st.caption(f"Each system's latest run. Systems in one tier cannot be told apart (approximate randomization "
               f"against the tier's leader, Holm, alpha {number(board.alpha, 2)}).")
    for u in board.untested:
        st.caption(md(f"not tested: {u}"))


def noise_view(floors: Sequence, *, key: str) -> None:
    """The noise floor of each group of repeats: flip rate, band, flaky items."""
    rows = [{"repeats": ", ".join(f.runs), "items": f.n_items, "mean": percent(f.mean),
             "flip rate": percent(f.flip_rate),
             "noise band": points(f.band), "flaky items": len(f.flaky)} for f in floors]
    show_table(rows, key=key, counts={"items", "flaky items"})
    st.caption("Runs that share task, system, dataset version and config are repeats: a change smaller than their "
               "noise band is within the noise (`runs noise NAME NAME ... --metric M`).")
