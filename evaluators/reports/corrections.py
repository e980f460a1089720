"""Text and JSON of review corrections applied to scores: what a GT patch did, scores before and
after with their intervals and paired tests, rank flips (:mod:`evaluators.qa.patch`), and the
reviewed estimate of a run from a sample (:mod:`evaluators.review.estimate`)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from evaluators.reports.tables import format_table
from evaluators.reports.format import p_value, percent
from evaluators.results import to_jsonable


def _ci(ci) -> str:
    return f"{percent(ci.estimate)} [{percent(ci.ci_low)}, {percent(ci.ci_high)}]"


def _delta(c) -> str:
    return f"{100 * c.delta:+.2f} [{100 * c.ci_low:+.2f}, {100 * c.ci_high:+.2f}] " + \
        p_value(c.p_value, c.p_value_is_bound, digits=3)


def applications_text(applications: Sequence) -> str:
    """One line per patched GT file: entries applied, already in place, conflicts, unknown ids."""
    lines = []
    for name, app in applications:
        counts = Counter(c.status for c in app.changes)
        lines.append(f"  {name}: {len(app.changes)} correction(s): {counts['applied']} applied, "
                     f"{counts['unchanged']} already in place, {counts['conflict']} conflict(s), "
                     f"{counts['unknown_record']} unknown id(s); {len(app.answers)} record id(s) with new answers")
    return "\n".join(lines)


def patch_effect_text(effect, applications: Sequence = ()) -> str:
    """Before / after table of a :class:`~evaluators.qa.patch.PatchEffect` (percentages, 95% intervals).

    Parameters
    ----------
    effect : PatchEffect
    applications : sequence of (str, PatchApplication)
        GT file name and what the patch did there.
    """
    out = ["Review corrections (GT patch): scores before -> after, on the same records"]
    if applications:
        out.append(applications_text(applications))
    level = f"{100 * effect.changes[0].exact_match_before.confidence_level:g}"
    rows = [[c.run, c.n_paired, c.n_changed, _ci(c.exact_match_before), _ci(c.exact_match_after),
             _delta(c.exact_match_change), f"{c.exact_match_mcnemar.p_value:.3g}", _ci(c.token_f1_before),
             _ci(c.token_f1_after), _delta(c.token_f1_change)] for c in effect.changes]
    out.append(format_table(["run", "n", "changed", "EM before", "EM after", "EM delta (points) & paired bootstrap",
                             "McNemar p", "F1 before", "F1 after", "F1 delta (points) & paired bootstrap"], rows))
    out.append(f"  intervals: {level}% percentile bootstrap ({effect.changes[0].exact_match_before.signature}); "
               f"paired: {effect.changes[0].exact_match_change.method}")
    if len(effect.changes) > 1:
        out.extend(f"  {line}" for line in rank_lines(effect, percent, "RANK FLIP",
                                                       "order of the systems: unchanged by the corrections (EM and F1)"))
    return "\n".join(out)


def rank_lines(effect, fmt, flip: str = "Rank flip", unchanged: str = "The order of the systems is unchanged by "
               "the corrections (EM and F1).") -> list[str]:
    """One sentence per rank flip of ``effect`` (scores written with ``fmt``), or ``unchanged`` when none."""
    if not effect.rank_flips:
        return [unchanged]
    return [f"{flip} ({'EM' if f.metric == 'exact_match' else 'F1'}): {f.higher_before} was ahead of "
            f"{f.higher_after} ({fmt(f.before[0])} vs {fmt(f.before[1])}); after the corrections {f.higher_after} "
            f"is ahead ({fmt(f.after[1])} vs {fmt(f.after[0])})" for f in effect.rank_flips]


def patch_effect_json(effect, applications: Sequence = ()) -> str:
    """JSON of a patch effect and of what each patch did (per entry)."""
    return json.dumps({"effect": to_jsonable(effect),
                       "applications": [{"gt_file": name, **to_jsonable(app)} for name, app in applications]},
                      ensure_ascii=False, indent=2) + "\n"


def reviewed_estimate_text(est) -> str:
    """The reviewed estimate of a run beside the human-only one and the metric alone."""
    r, h = est.reviewed, est.human_only
    return "\n".join([
        f"Reviewed estimate of {est.metric or 'the score'} ({est.n_reviewed} of {est.n_records} records reviewed)",
        f"  metric alone (no review):     {percent(est.automatic)}",
        f"  human labels only:            {percent(h.estimate)} [{percent(h.ci_low)}, {percent(h.ci_high)}] (width {percent(h.width)})",
        f"  prediction-powered (PPI++):   {percent(r.estimate)} [{percent(r.ci_low)}, {percent(r.ci_high)}] (width {percent(r.width)}, "
        f"lam {r.lam:.3f})",
        f"  method: {r.method}",
    ])


def metric_agreement_text(m) -> str:
    """The automatic verdict against the people's final labels (:class:`~evaluators.review.metric_agreement.MetricAgreement`)."""
    (ww, wr), (rw, rr) = m.confusion

    def figure(f) -> str:
        if f.value is None:
            return f"n/a ({f.note})" if f.note else "n/a"
        text = f"{f.value:.3f}" + (f" [{f.ci_low:.3f}, {f.ci_high:.3f}]" if f.ci_low is not None else "")
        return text + (f" ({f.note})" if f.note else "")

    kappa, ceiling = figure(m.cohen_kappa), figure(m.human_kappa)
    return "\n".join([
        f"Metric against people ({m.source} >= {m.threshold:g} vs the final human labels, {m.n_items} items; "
        f"{m.n_left_out} left out: GT errors or no score)",
        format_table(["", "human: wrong", "human: right"], [["metric: wrong", ww, wr], ["metric: right", rw, rr]]),
        f"  accuracy {percent(m.accuracy)} [{percent(m.accuracy_ci_low)}, {percent(m.accuracy_ci_high)}], Cohen's kappa {kappa}; "
        f"people with each other (ceiling): Cohen's kappa {ceiling}",
        f"  intervals: {m.signature}",
    ])


def add_html_section(page, effect, applications: Sequence = ()) -> None:
    """Append the before / after section of a GT patch to an :class:`~evaluators.reports.html.HtmlReport`.

    A table per run (means before and after with their intervals, the paired bootstrap of the
    change and McNemar's test on EM), what each patch did, and the rank flips.
    """
    page.heading("Review corrections: before and after")
    for name, app in applications:
        counts = Counter(c.status for c in app.changes)
        page.paragraph(f"{name}: {len(app.changes)} correction(s) — {counts['applied']} applied, "
                       f"{counts['unchanged']} already in place, {counts['conflict']} conflict(s), "
                       f"{counts['unknown_record']} unknown id(s)")

    def ci(x) -> str:
        return f"{x.ci_low:.3f} – {x.ci_high:.3f}"

    page.table(["run", "n", "changed", "EM before", "EM before 95% CI", "EM after", "EM after 95% CI",
                "EM delta", "p (paired bootstrap)", "p (McNemar)", "F1 before", "F1 after", "F1 delta",
                "p (F1, paired bootstrap)"],
               [[c.run, c.n_paired, c.n_changed, c.exact_match_before.estimate, ci(c.exact_match_before),
                 c.exact_match_after.estimate, ci(c.exact_match_after), c.exact_match_change.delta,
                 c.exact_match_change.p_value, c.exact_match_mcnemar.p_value, c.token_f1_before.estimate,
                 c.token_f1_after.estimate, c.token_f1_change.delta, c.token_f1_change.p_value]
                for c in effect.changes],
               caption=f"{effect.changes[0].exact_match_before.signature}; {effect.changes[0].exact_match_change.method}")
    if len(effect.changes) > 1:
        for line in rank_lines(effect, lambda v: f"{v:.3f}"):
            page.paragraph(line if line.endswith(".") else line + ".")
