"""Text and JSON of review corrections applied to scores: what a GT patch did, scores before and
after with their intervals and paired tests, rank flips (:mod:`evaluators.qa.patch`), and the
reviewed estimate of a run from a sample (:mod:`evaluators.review.estimate`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.reports.tables import format_table
from evaluators.metrics.before_after import metric_label
from evaluators.reports.format import MISSING, fixed, p_value, percent, signed, significant
from evaluators.results import to_jsonable


def _ci(ci) -> str:
    return f"{percent(ci.estimate)} [{percent(ci.ci_low)}, {percent(ci.ci_high)}]"


def _delta(c) -> str:
    return f"{signed(100 * c.delta, 2)} [{signed(100 * c.ci_low, 2)}, {signed(100 * c.ci_high, 2)}] " + \
        p_value(c.p_value, c.p_value_is_bound, digits=3) + (" [!]" if c.small_sample else "")


def randomization_text(r) -> str:
    """The paired randomization test's p-value as text, ``(exact)`` when every sign flip was counted."""
    if r is None:
        return MISSING
    return p_value(r.p_value, r.p_value_is_bound, digits=3) + (" (exact)" if r.exact else "")


def small_sample_lines(effect) -> list[str]:
    """One line per (run, metric) whose paired bootstrap p-value is flagged, with the reason and the
    p-value to read instead (McNemar's exact or the exact sign-flip test)."""
    lines = []
    for c in effect.changes:
        for m in c.metrics:
            if m.change.small_sample:
                p, source = m.trusted_p
                lines.append(f"[!] {c.run} {metric_label(m.metric)}: the paired bootstrap p-value is not trustworthy "
                             f"({m.change.small_sample}); read {source} {p_value(p, digits=3)}")
    return lines


@dataclass(frozen=True)
class ApplicationSummary:
    """What the patch entries did to one GT file: the one summary that :func:`applications_text`,
    :func:`applications_rows` and :func:`add_html_section` render.

    Attributes
    ----------
    gt_file : str
    corrections : int
        Patch entries for the file.
    applied, already_in_place, conflicts, unknown_ids, other_gt : int
        Entries by status (``applied``, ``unchanged``, ``conflict``, ``unknown_record``, ``other_gt``: a keyed
        entry, patch version 3, made for another GT of its record).
    records_changed : int
        Record ids whose answers the entries changed.
    """

    gt_file: str
    corrections: int
    applied: int
    already_in_place: int
    conflicts: int
    unknown_ids: int
    records_changed: int
    other_gt: int = 0

    def counts_text(self) -> str:
        """``"a applied, u already in place, c conflict(s), k unknown id(s)"`` (and ``", o for another GT of
        the record"`` when there are such entries)."""
        other = f", {self.other_gt} for another GT of the record" if self.other_gt else ""
        return (f"{self.applied} applied, {self.already_in_place} already in place, {self.conflicts} conflict(s), "
                f"{self.unknown_ids} unknown id(s)" + other)


def application_summaries(applications: Sequence) -> list[ApplicationSummary]:
    """What the patch entries did, file by file.

    Parameters
    ----------
    applications : sequence of (str, PatchApplication)
        GT file name and what the entries did there (a :class:`~evaluators.metrics.before_after.Corrections`'
        ``applications``).

    Returns
    -------
    list of ApplicationSummary
        One per file, in order.
    """
    out = []
    for name, app in applications:
        counts = Counter(c.status for c in app.changes)
        out.append(ApplicationSummary(name, len(app.changes), counts["applied"], counts["unchanged"],
                                      counts["conflict"], counts["unknown_record"], len(app.answers),
                                      counts["other_gt"]))
    return out


def applications_text(applications: Sequence) -> str:
    """One line per patched GT file: entries applied, already in place, conflicts, unknown ids."""
    return "\n".join(f"  {s.gt_file}: {s.corrections} correction(s): {s.counts_text()}; {s.records_changed} record "
                     "id(s) with new answers" for s in application_summaries(applications))


def _delta_cell(m, n_run: int) -> str:
    return _delta(m.change) + (f" (n={m.n_paired})" if m.n_paired != n_run else "")


def patch_effect_text(effect, applications: Sequence = ()) -> str:
    """Before / after table of a :class:`~evaluators.metrics.before_after.PatchEffect` (percentages, intervals).

    Per metric: before and after with their intervals, the paired difference in points with its
    paired bootstrap interval and p-value, and McNemar's p for a binary metric; a metric compared
    on fewer records than the run's ``n`` says how many.

    Parameters
    ----------
    effect : PatchEffect
    applications : sequence of (str, PatchApplication)
        GT file name and what the patch did there.
    """
    out = ["Review corrections (GT patch): scores before -> after, on the same records"]
    if applications:
        out.append(applications_text(applications))
    first = effect.changes[0].metrics[0]
    level = f"{100 * first.before.confidence_level:g}"
    header, rows = ["run", "n", "changed"], []
    metrics = [m for m in (effect.metrics or [x.metric for x in effect.changes[0].metrics])
               if any(m == x.metric for c in effect.changes for x in c.metrics)]
    binary = {x.metric for c in effect.changes for x in c.metrics if x.mcnemar is not None}
    for m in metrics:
        label = metric_label(m)
        header += [f"{label} before", f"{label} after", f"{label} delta (points) & paired bootstrap",
                   f"{label} randomization p"]
        if m in binary:
            header.append("McNemar p")
    for c in effect.changes:
        row = [c.run, c.n_paired, c.n_changed]
        by_name = {x.metric: x for x in c.metrics}
        for m in metrics:
            x = by_name.get(m)
            row += ([_ci(x.before), _ci(x.after), _delta_cell(x, c.n_paired), randomization_text(x.randomization)]
                    if x else [MISSING] * 4)
            if m in binary:
                row.append(significant(x.mcnemar.p_value) if x and x.mcnemar else MISSING)
        rows.append(row)
    out.append(format_table(header, rows))
    out.append(f"  intervals: {level}% percentile bootstrap ({first.before.signature}); "
               f"paired: {first.change.method}; randomization (where the bootstrap is flagged [!]): sign flips of "
               "the changes, exact when at most 20 records changed (Fisher-Pitman)")
    out.extend(f"  {line}" for line in small_sample_lines(effect))
    if len(effect.changes) > 1:
        out.extend(f"  {line}" for line in rank_lines(effect, percent, "RANK FLIP",
                                                       f"order of the systems: unchanged by the corrections "
                                                       f"({' and '.join(metric_label(m) for m in metrics)})"))
    return "\n".join(out)


def rank_lines(effect, fmt, flip: str = "Rank flip", unchanged: str | None = None) -> list[str]:
    """One sentence per rank flip of ``effect`` (scores written with ``fmt``), or ``unchanged`` when none
    (default: "The order of the systems is unchanged by the corrections (<metrics>).")."""
    if not effect.rank_flips:
        if unchanged is None:
            names = " and ".join(metric_label(m) for m in effect.metrics) or "every metric"
            unchanged = f"The order of the systems is unchanged by the corrections ({names})."
        return [unchanged]
    return [f"{flip} ({metric_label(f.metric)}): {f.higher_before} was ahead of "
            f"{f.higher_after} ({fmt(f.before[0])} vs {fmt(f.before[1])}); after the corrections {f.higher_after} "
            f"is ahead ({fmt(f.after[1])} vs {fmt(f.after[0])})" for f in effect.rank_flips]


def effect_rows(effect) -> list[dict]:
    """One row per (run, metric) of a patch effect, as numbers (fractions in [0, 1], p-values): the
    table of the pages' before / after view and of the HTML section.

    Keys: ``run``, ``metric``, ``n``, ``changed``, ``before``, ``before_ci_low``, ``before_ci_high``,
    ``after``, ``after_ci_low``, ``after_ci_high``, ``delta``, ``delta_ci_low``, ``delta_ci_high``,
    ``p_paired_bootstrap``, ``p_paired_bootstrap_is_bound`` (no resample reached the observed
    change: the p-value is the bound ``1 / (R + 1)``), ``p_mcnemar`` (``None`` for a non-binary metric),
    ``p_randomization`` and ``p_randomization_exact`` (the paired sign-flip test, exact when every
    flip was counted), ``small_sample`` (why the bootstrap p-value is not to be trusted, else ``""``).
    Shown as text by :func:`p_texts`.
    """
    rows = []
    for c in effect.changes:
        for m in c.metrics:
            rows.append({"run": c.run, "metric": metric_label(m.metric), "n": m.n_paired, "changed": c.n_changed,
                         "before": m.before.estimate, "before_ci_low": m.before.ci_low,
                         "before_ci_high": m.before.ci_high, "after": m.after.estimate,
                         "after_ci_low": m.after.ci_low, "after_ci_high": m.after.ci_high,
                         "delta": m.change.delta, "delta_ci_low": m.change.ci_low, "delta_ci_high": m.change.ci_high,
                         "p_paired_bootstrap": m.change.p_value,
                         "p_paired_bootstrap_is_bound": m.change.p_value_is_bound,
                         "p_mcnemar": m.mcnemar.p_value if m.mcnemar is not None else None,
                         "p_randomization": m.randomization.p_value if m.randomization is not None else None,
                         "p_randomization_exact": bool(m.randomization is not None and m.randomization.exact),
                         "small_sample": m.change.small_sample})
    return rows


def p_texts(row: dict, digits: int = 3) -> tuple[str, str | None]:
    """The p-values of an :func:`effect_rows` row as text (:func:`evaluators.reports.format.p_value`):
    the paired bootstrap's (``"p < 0.0001"`` when it is a bound) and McNemar's (``None`` without one)."""
    return (p_value(row["p_paired_bootstrap"], row["p_paired_bootstrap_is_bound"], digits=digits),
            None if row["p_mcnemar"] is None else p_value(row["p_mcnemar"], digits=digits))


def randomization_p_text(row: dict, digits: int = 3) -> str | None:
    """The randomization p-value of an :func:`effect_rows` row as text (``(exact)`` when enumerated)."""
    if row.get("p_randomization") is None:
        return None
    return p_value(row["p_randomization"], digits=digits) + (" (exact)" if row.get("p_randomization_exact") else "")


def applications_rows(applications: Sequence) -> list[dict]:
    """Per GT file: how many corrections were applied, already in place, in conflict, for unknown ids."""
    return [{"gt_file": s.gt_file, "corrections": s.corrections, "applied": s.applied,
             "already_in_place": s.already_in_place, "conflicts": s.conflicts, "unknown_ids": s.unknown_ids,
             "records_changed": s.records_changed} for s in application_summaries(applications)]


def corrections_jsonable(corrections) -> dict:
    """The ``gt_patch`` section of a JSON report: a :class:`~evaluators.metrics.before_after.Corrections`
    as data (``applications``, ``effect`` with every interval and test, ``files``, ``note``) plus
    ``before_after`` (:func:`effect_rows`: one flat row per run and metric, the terminal table's numbers)
    and ``applied`` (:func:`applications_rows`)."""
    out = to_jsonable(corrections)
    out["applied"] = applications_rows(corrections.applications)
    out["before_after"] = effect_rows(corrections.effect) if corrections.effect is not None else []
    return out


def reviewed_estimate_text(est) -> str:
    """The reviewed estimate of a run beside the human-only one and the metric alone: which sample it used,
    the unadjudicated disagreements (not dropped silently: counted, with how far they could move the
    estimate), and the expected interval width after more reviews."""
    r, h = est.reviewed, est.human_only
    name = {"uniform": "prediction-powered (PPI++):  ", "stratified": "stratified PPI:              ",
            "active": "active PPI (IPW):            "}.get(getattr(est, "design", "uniform"), "prediction-powered:          ")
    lines = [
        f"Reviewed estimate of {est.metric or 'the score'} ({est.n_reviewed} of {est.n_records} records reviewed)",
    ]
    if getattr(est, "sample", ""):
        lines.append(f"  sample: {est.sample}")
    lines += [
        f"  metric alone (no review):     {percent(est.automatic)}",
        f"  human labels only:            {percent(h.estimate)} [{percent(h.ci_low)}, {percent(h.ci_high)}] (width {percent(h.width)})",
        f"  {name} {percent(r.estimate)} [{percent(r.ci_low)}, {percent(r.ci_high)}] (width {percent(r.width)}, "
        f"lam {fixed(r.lam)})",
        f"  method: {r.method}",
    ]
    n_dis = getattr(est, "n_disagreements", 0)
    if n_dis:
        low, high = est.disagreements_range
        lines.append(f"  unadjudicated disagreements: {n_dis} reviewed record(s) without a final label, not in the "
                     f"estimate; counted all wrong {percent(low)}, all right {percent(high)} (adjudicate them)")
    else:
        lines.append("  unadjudicated disagreements: 0")
    if getattr(est, "n_unlabelled", 0):
        lines.append(f"  GT errors without a rescored value: {est.n_unlabelled} (no verdict, not in the estimate)")
    if getattr(est, "width_curve", ()):
        lines.append("  more reviews -> expected interval width: "
                     + ", ".join(f"+{k}: {percent(w)}" for k, w in est.width_curve))
    return "\n".join(lines)


def metric_agreement_text(m) -> str:
    """The automatic verdict against the people's final labels (:class:`~evaluators.review.metric_agreement.MetricAgreement`)."""
    (ww, wr), (rw, rr) = m.confusion

    def figure(f) -> str:
        if f.value is None:
            return f"{MISSING} ({f.note})" if f.note else MISSING
        text = fixed(f.value) + (f" [{fixed(f.ci_low)}, {fixed(f.ci_high)}]" if f.ci_low is not None else "")
        return text + (f" ({f.note})" if f.note else "")

    kappa, ceiling = figure(m.cohen_kappa), figure(m.human_kappa)
    return "\n".join([
        f"Metric against people ({m.source} >= {m.threshold:g} vs the final human labels, {m.n_items} items; "
        f"{m.n_left_out} left out: GT errors or no score)",
        format_table(["", "human: wrong", "human: right"], [["metric: wrong", ww, wr], ["metric: right", rw, rr]]),
        f"  accuracy {percent(m.accuracy)} [{percent(m.accuracy_ci_low)}, {percent(m.accuracy_ci_high)}], Cohen's kappa {kappa}; "
        f"people with each other (ceiling): Cohen's kappa {ceiling}",
        f"  both kappas on the labels {getattr(m, 'label_set', 'right / wrong')}",
        f"  intervals: {m.signature}",
    ])


def add_html_section(page, effect, applications: Sequence = ()) -> None:
    """Append the before / after section of a GT patch to an :class:`~evaluators.reports.html.HtmlReport`.

    A row per run and metric (:func:`effect_rows`: means before and after with their intervals, the
    paired bootstrap of the change and McNemar's test for a binary metric), what each patch did,
    and the rank flips.
    """
    page.heading("Review corrections: before and after")
    for summary in application_summaries(applications):
        page.paragraph(f"{summary.gt_file}: {summary.corrections} correction(s) — {summary.counts_text()}")

    def ci(low, high) -> str:
        return f"{fixed(low)} – {fixed(high)}"

    level = f"{100 * effect.changes[0].metrics[0].before.confidence_level:g}%"
    page.table(["run", "metric", "n", "changed", "before", f"before {level} CI", "after", f"after {level} CI",
                "delta", "p (paired bootstrap)", "p (McNemar)", "p (sign-flip randomization)"],
               [[r["run"], r["metric"], r["n"], r["changed"], r["before"], ci(r["before_ci_low"], r["before_ci_high"]),
                 r["after"], ci(r["after_ci_low"], r["after_ci_high"]), r["delta"], *p_texts(r),
                 randomization_p_text(r)]
                for r in effect_rows(effect)],
               caption=f"{effect.changes[0].metrics[0].before.signature}; "
                       f"{effect.changes[0].metrics[0].change.method}")
    for line in small_sample_lines(effect):
        page.paragraph(line)
    if len(effect.changes) > 1:
        for line in rank_lines(effect, fixed):
            page.paragraph(line if line.endswith(".") else line + ".")
