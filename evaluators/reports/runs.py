"""The run registry's outputs (``python -m evaluators runs ...``): JSON for scripts and terminal text.

JSON (``*_json``): pretty JSON through :func:`evaluators.io.json_text.dumps_pretty` of the engine's objects
(:class:`~evaluators.runs.store.RunRecord`, :class:`~evaluators.runs.compare.RunsComparison`,
:class:`~evaluators.runs.trend.Trend`) as their ``to_dict()``: every number as computed, unrounded.
Text (``*_text``): tables through :func:`evaluators.reports.tables.format_table`, numbers through
:mod:`evaluators.reports.format`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluators.io.json_text import dumps_pretty
from evaluators.reports.format import MISSING, number, p_value, percent, points, points_interval
from evaluators.reports.tables import format_table
from evaluators.results import to_jsonable


def to_json(obj: Any) -> str:
    """``obj`` (a record, a tuple of them, a comparison, a trend) as pretty JSON ending in a newline."""
    return dumps_pretty(to_jsonable(obj)) + "\n"


def _overall(record, metric: str) -> dict | None:
    return next((r for r in record.summary if r["metric"] == metric and r["slice"] == ""), None)


def list_text(records: Sequence) -> str:
    """One line per run: name, created, task, dataset vN, systems, items, each metric's mean, tags, accepted."""
    if not records:
        return "no run logged (qa ... --log logs one)\n"
    rows = []
    for r in records:
        means = ", ".join(f"{m} {percent((_overall(r, m) or {}).get('mean'))}" for m in r.metrics)
        tags = ", ".join(f"{k}={v}" if v else k for k, v in r.tags.items()) or MISSING
        rows.append([r.name + (" *" if r.accepted else ""), r.created_at[:19].replace("T", " "), r.task,
                     f"{r.dataset} v{r.dataset_version}", ", ".join(r.systems), r.n_items, means, tags])
    return format_table(["run (* accepted)", "created (UTC)", "task", "dataset", "systems", "items", "means",
                         "tags"], rows) + "\n"


def show_text(record) -> str:
    """A run's record and its summary (each system x metric x slice with its 95% interval)."""
    head = [f"run:        {record.name}" + ("  (accepted baseline)" if record.accepted else ""),
            f"task:       {record.task} ({record.n_items} {record.unit} rows)",
            f"dataset:    {record.dataset} v{record.dataset_version} ({record.dataset_digest[:12]})"
            + (f", patches {', '.join(d[:12] for d in record.patch_digests)}" if record.patch_digests else ""),
            f"created:    {record.created_at} by {record.who}",
            f"tags:       {', '.join(f'{k}={v}' for k, v in record.tags.items()) or MISSING}",
            f"predictions: {record.predictions_digest[:12] or MISSING}",
            f"signature:  {record.signature}"]
    rows = [[s["system"], s["metric"], s["slice"] or "all", s["slice_value"], s["n"], number(s["mean"], 4),
             f"{number(s['ci_low'], 4)} - {number(s['ci_high'], 4)}"] for s in record.summary]
    return "\n".join(head) + "\n" + format_table(["system", "metric", "slice", "value", "n", "mean", "95% CI"],
                                                 rows) + "\n"


def _tested(x) -> str:
    if x is None or not x.computed:
        return "no test run (--ci-resamples 0)"
    ci = f"{points_interval(x.ci_low, x.ci_high)}, " if x.ci_low is not None else ""
    return f"{ci}{p_value(x.p_value, x.p_value_is_bound)}"


def comparison_text(c, noise: Sequence[dict] | None = None) -> str:
    """Run B against run A, metric by metric (paired bootstrap, randomization, McNemar for 0/1 metrics); with
    ``noise`` (``[{"metric", "band", "flaky_changed"}]``), each metric's noise band and the flaky items that changed."""
    lines = [f"B = {c.name_b} against A = {c.name_a}: n common = {c.n_common} of {c.n_a} and {c.n_b}"]
    for m in c.metrics:
        b = m.bootstrap
        lines.append(f"  {m.metric} (n paired {m.n_paired}): {percent(b.mean_a)} -> {percent(b.mean_b)}, delta "
                     f"{points(b.delta)}, paired bootstrap {_tested(b)}, randomization {_tested(m.randomization)}")
        if m.mcnemar is not None:
            mc = m.mcnemar
            lines.append(f"    McNemar: right in A only {mc.only_a}, in B only {mc.only_b}, "
                         f"exact {p_value(mc.p_value)}")
        lines.append(f"    B won {b.won}, lost {b.lost}, tied {b.tied}")
        for x in noise or ():
            if x["metric"] == m.metric:
                flaky = x["flaky_changed"]
                lines.append(f"    noise band {points(x['band'])}; flaky items that changed ({len(flaky)}): "
                             + (", ".join(flaky[:20]) or MISSING) + (" ..." if len(flaky) > 20 else ""))
    if c.not_compared:
        lines.append(f"  not compared (no item has a value in both runs): {', '.join(c.not_compared)}")
    return "\n".join(lines) + "\n"


def trend_text(t) -> str:
    """Each run's points (mean and interval) and each step with its flagged tests."""
    rows = [[p.run, p.metric, p.slice or "all", p.slice_value, p.n, percent(p.mean),
             f"{percent(p.ci_low)} - {percent(p.ci_high)}"] for p in t.points]
    out = [format_table(["run", "metric", "slice", "value", "n", "mean", "95% CI"], rows)]
    out.append(f"steps: {t.test} test, {t.correction} across each step's metrics x slices, alpha {number(t.alpha, 2)}")
    for s in t.steps:
        if not s.joined:
            out.append(f"  {s.run_a} -> {s.run_b}: not tested: {s.reason}")
            continue
        flagged = [x for x in s.tests if x.flagged]
        out.append(f"  {s.run_a} -> {s.run_b} (n common {s.n_common}): "
                   + ("FLAGGED" if s.flagged else "no change survives the correction"))
        for x in flagged:
            out.append(f"    {x.metric} {x.slice or 'all'}={x.slice_value}: {points(x.delta)}, "
                       f"{points_interval(x.ci_low, x.ci_high)}, {p_value(x.p_value)}, "
                       f"adjusted {p_value(x.p_adjusted)}")
    return "\n".join(out) + "\n"


def noise_text(floor, verdict=None) -> str:
    """The noise floor of repeats (flip rate, pass@k, pass^k, band, flaky items) and a candidate's verdict."""
    lines = [f"noise floor of {', '.join(floor.runs)} on {floor.metric} ({floor.n_items} items scored by all): "
             f"mean {percent(floor.mean)}, flip rate {percent(floor.flip_rate)}",
             "  pass@k: " + ", ".join(f"k={k} {percent(v)}" for k, v in floor.pass_at_k.items()),
             "  pass^k: " + ", ".join(f"k={k} {percent(v)}" for k, v in floor.pass_hat_k.items()),
             f"  noise band: {points(floor.band)} either way ({percent(floor.confidence_level, 0)} of the "
             "differences between repeats)",
             f"  flaky items ({len(floor.flaky)}): " + (", ".join(floor.flaky[:20]) or MISSING)
             + (f" ... ({len(floor.flaky) - 20} more; --format json lists all)" if len(floor.flaky) > 20 else "")]
    if verdict is not None:
        lines.append(f"candidate {verdict.candidate} (n {verdict.n}): {points(verdict.delta)}, "
                     f"{p_value(verdict.p_value)}: " + ("FLAGGED (beyond the noise band)" if verdict.flagged
                                                        else "within the noise or not significant")
                     + (f"; flaky items changed: {', '.join(verdict.flaky_changed[:20])}"
                        if verdict.flaky_changed else ""))
    return "\n".join(lines) + "\n"


def leaderboard_text(board) -> str:
    """The ranked systems with their intervals and tiers."""
    rows = [[r.rank, r.tier, r.system, r.run, r.n, percent(r.mean), f"{percent(r.ci_low)} - {percent(r.ci_high)}",
             MISSING if r.p_vs_leader is None else p_value(r.p_vs_leader)] for r in board.rows]
    text = format_table(["rank", "tier", "system", "run", "n", board.metric, "95% CI", "vs tier leader (Holm)"],
                        rows)
    note = (f"\nsystems in one tier cannot be told apart (approximate randomization against the tier's leader, "
            f"Holm, alpha {number(board.alpha, 2)})")
    return text + note + "".join(f"\nnot tested: {u}" for u in board.untested) + "\n"


__all__ = ["comparison_text", "leaderboard_text", "list_text", "noise_text", "show_text", "to_json", "trend_text"]
