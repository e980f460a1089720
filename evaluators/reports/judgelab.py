"""The judge lab's calibration report as terminal text and as JSON (one writer each)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from evaluators.judgelab.calibration import CalibrationReport, JudgeFigure, SplitFigures
from evaluators.judgelab.lab import VersionComparison
from evaluators.reports.format import number, p_value
from evaluators.reports.tables import format_table

FIGURES = ("accuracy", "cohen_kappa", "sensitivity", "specificity", "base_rate", "judge_positive_rate")


#: The columns of :func:`calibration_rows`.
CALIBRATION_HEADER = ["judge", "side", "n", "accuracy", "kappa", "sensitivity", "specificity", "base rate",
                      "judge rate", "tn/fp/fn/tp", "disagree"]
#: The columns of :func:`corrected_rows`.
CORRECTED_HEADER = ["judge", "raw judge", "bias-adjusted", "prediction-powered", "human only", "target n",
                    "calibration n"]
#: What the marks of a figure cell mean.
CELL_LEGEND = "[low, high]: 95% bootstrap interval over items; *: fewer than 30 items behind the figure"


def interval_cell(value: float | None, low: float | None, high: float | None, small: bool = False) -> str:
    """An estimate with its interval as text: ``0.646 [0.482, 0.787]``, `` *`` when under 30 items.

    >>> interval_cell(0.5, 0.25, 0.75, small=True), interval_cell(None, None, None)
    ('0.500 [0.250, 0.750] *', '—')
    """
    text = number(value)
    if low is not None and high is not None:
        text += f" [{number(low)}, {number(high)}]"
    return text + (" *" if small else "")


def figure_cell(fig: JudgeFigure) -> str:
    """A calibration figure as :func:`interval_cell` text."""
    return interval_cell(fig.value, fig.ci_low, fig.ci_high, fig.small_sample)


def _rows(name: str, figs: SplitFigures) -> list[str]:
    (tn, fp), (fn, tp) = figs.confusion
    return [name, figs.side, str(figs.n_items)] + [figure_cell(getattr(figs, f)) for f in FIGURES] + \
        [f"{tn}/{fp}/{fn}/{tp}", str(len(figs.disagreeing_ids))]


def calibration_rows(report: CalibrationReport) -> list[list[str]]:
    """One row of :data:`CALIBRATION_HEADER` text per judge version and side (dev, then test)."""
    return [r for cal in report.judges for r in (_rows(cal.version.label, cal.dev), _rows(cal.version.label, cal.test))]


def corrected_rows(scores_by_version: Mapping[str, Any]) -> list[list[str]]:
    """One row of :data:`CORRECTED_HEADER` text per version: the four estimates with their intervals, the counts.

    Parameters
    ----------
    scores_by_version : mapping version label -> CorrectedScores
    """
    return [[name, *(interval_cell(e.estimate, e.ci_low, e.ci_high) for e in scores.estimates),
             str(scores.adjusted.n), str(scores.adjusted.m0 + scores.adjusted.m1)]
            for name, scores in scores_by_version.items()]


def calibration_text(report: CalibrationReport, *, max_ids: int = 20) -> str:
    """The report for a terminal: one row per judge version and side, warnings, disagreeing ids, signature.

    Parameters
    ----------
    report : CalibrationReport
    max_ids : int
        Disagreeing ids listed per version and side (the JSON holds all).
    """
    lines = [f"Judge calibration: {report.n_labels} labelled items, split dev/test "
             f"{len(report.split.ids('dev'))}/{len(report.split.ids('test'))} (stratified by label x slice), "
             f"guidelines {', '.join(v or '(none)' for v in report.guidelines_versions)}"]
    lines += [f"note: {n}" for n in report.notes]
    lines.append(format_table(CALIBRATION_HEADER, calibration_rows(report)))
    lines.append(CELL_LEGEND)
    for cal in report.judges:
        if cal.warning:
            lines.append(f"warning: {cal.version.label}: {cal.warning}")
        if cal.missing_ids:
            lines.append(f"note: {cal.version.label}: {len(cal.missing_ids)} labelled item(s) without a verdict, "
                         "left out")
        for figs in (cal.dev, cal.test):
            ids = figs.disagreeing_ids
            if ids:
                more = f" (+{len(ids) - max_ids} more)" if len(ids) > max_ids else ""
                lines.append(f"disagreeing ({cal.version.label}, {figs.side}): {', '.join(ids[:max_ids])}{more}")
    lines.append(f"signature: {report.signature}")
    return "\n".join(lines) + "\n"


def calibration_json(report: CalibrationReport, corrected: Mapping[str, Any] | None = None) -> str:
    """The report as JSON (every figure, interval and id); ``disagreeing_ids`` added to each side.

    Parameters
    ----------
    report : CalibrationReport
    corrected : mapping version name -> CorrectedScores, optional
        Given (``judge calibrate --target``, the Judge lab with target verdicts): written under ``"corrected"``.

    Returns
    -------
    str
        Indented JSON, one trailing newline (``judge calibrate --format json`` and the Judge lab's download).
    """
    data = report.to_dict()
    for cal, out in zip(report.judges, data["judges"]):
        out["version"]["key"] = cal.version.key
        for side in ("dev", "test"):
            out[side]["disagreeing_ids"] = list(getattr(cal, side).disagreeing_ids)
    if corrected is not None:
        data["corrected"] = {name: scores.to_dict() for name, scores in corrected.items()}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def corrected_text(scores_by_version) -> str:
    """Corrected scores of each judge version as a table: estimate and 95% interval of each of the four estimates.

    Parameters
    ----------
    scores_by_version : mapping version label -> CorrectedScores
    """
    lines = ["Corrected scores (the model's accuracy on the target items; 95% intervals)",
             format_table(CORRECTED_HEADER, corrected_rows(scores_by_version))]
    for name, scores in scores_by_version.items():
        a = scores.adjusted
        lines.append(f"{name}: judge positive rate {number(a.p)} on {a.n}; specificity {number(a.q0)} (m0 = {a.m0}), "
                     f"sensitivity {number(a.q1)} (m1 = {a.m1})" + (f"; {a.note}" if a.note else ""))
    lines.append("bias-adjusted: Lee et al. 2025 (arXiv:2511.21140); prediction-powered: PPI++ (Angelopoulos et al. "
                 "2023); both assume the judge errs alike on calibration and target items, PPI and human-only also a "
                 "uniform sample")
    return "\n".join(lines) + "\n"


def compare_text(comparison: VersionComparison, *, max_ids: int = 40) -> str:
    """Two judge versions compared, for a terminal: agreement, kappa, the share moved, McNemar, the moved items.

    Parameters
    ----------
    comparison : VersionComparison
    max_ids : int
        Moved ids listed per direction (the JSON holds all).
    """
    d = comparison.drift
    lines = [f"Judge versions compared: {comparison.before} -> {comparison.after} on {comparison.n_items} item(s)"
             + (" (fewer than 30)" if d.small_sample else "")]
    lines.append(f"agreement: {number(comparison.agreement)}; Cohen's kappa between them: "
                 f"{figure_cell(comparison.cohen_kappa)}")
    share = interval_cell(d.moved_share, d.ci_low, d.ci_high)
    lines.append(f"moved: {len(d.moved_ids)} ({share}); wrong -> right {len(d.up_ids)}, right -> wrong {len(d.down_ids)}")
    if d.mcnemar is not None:
        lines.append(f"McNemar exact test: {p_value(d.mcnemar.p_value)} ({d.mcnemar.only_a} right only before, "
                     f"{d.mcnemar.only_b} right only after)")
    for name, ids in (("wrong -> right", d.up_ids), ("right -> wrong", d.down_ids)):
        if ids:
            more = f" (+{len(ids) - max_ids} more)" if len(ids) > max_ids else ""
            lines.append(f"{name}: {', '.join(ids[:max_ids])}{more}")
    if d.missing_ids:
        lines.append(f"note: {len(d.missing_ids)} item(s) judged by one version only, left out")
    lines.append(f"method: {d.method}; kappa: {comparison.cohen_kappa.note or 'bootstrap interval over items'}")
    return "\n".join(lines) + "\n"


def compare_json(comparison: VersionComparison) -> str:
    """Two judge versions compared, as indented JSON (every moved id), one trailing newline.

    Parameters
    ----------
    comparison : VersionComparison

    Returns
    -------
    str
        ``judge compare --format json``.
    """
    return json.dumps(comparison.to_dict(), ensure_ascii=False, indent=2) + "\n"


def verdicts_jsonl(result) -> str:
    """A judge run's verdicts as JSONL in the form ``judge calibrate --verdicts`` reads (one record per item with a
    verdict: ``item_id``, ``verdict``, ``judge``, ``model``, ``prompt_hash``, ``parameters``, ``parser``, ``reply``).

    Parameters
    ----------
    result : evaluators.judgelab.run.JudgeRunResult
    """
    v = result.version
    head = {"judge": v.label, "model": v.model, "prompt_hash": v.prompt_hash, "parameters": dict(v.parameters),
            "parser": v.parser}
    return "".join(json.dumps({"item_id": i, "verdict": verdict, **head, "reply": result.replies.get(i)},
                              ensure_ascii=False) + "\n" for i, verdict in sorted(result.verdicts.items()))


def run_json(result) -> str:
    """A judge run as indented JSON: the version (with its key), verdicts, replies, errors, cached count.

    Parameters
    ----------
    result : evaluators.judgelab.run.JudgeRunResult

    Returns
    -------
    str
        ``judge run --format json``.
    """
    data = result.to_dict()
    data["version"]["key"] = result.version.key
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def run_text(result) -> str:
    """A judge run for a terminal (``result`` as :func:`run_json`'s): the version, how many verdicts, the share
    called right, the items without a verdict (the first 20 listed), the replies taken from the cache."""
    v = result.version
    n = len(result.verdicts)
    right = sum(result.verdicts.values())
    lines = [f"Judge run: {v.label} (model {v.model}, prompt {v.prompt_hash[:12]}, parser {v.parser}, key {v.key})",
             f"verdicts: {n}; right: {right} ({number(right / n if n else None)}); no verdict: {len(result.errors)}; "
             f"replies from the cache: {result.cached}"]
    for item_id, why in sorted(result.errors.items())[:20]:
        lines.append(f"no verdict: {item_id}: {why}")
    if len(result.errors) > 20:
        lines.append(f"(+{len(result.errors) - 20} more without a verdict)")
    return "\n".join(lines) + "\n"


#: The columns of :func:`comparison_rows`.
COMPARISON_HEADER = ["before", "after", "n", "agreement", "kappa between them", "moved", "wrong → right",
                     "right → wrong", "McNemar"]
#: The columns of :func:`length_bias_rows`.
LENGTH_BIAS_HEADER = ["judge", "slope per 100 characters", "n", "interval excludes 0"]


def comparison_rows(comparisons) -> list[list[str]]:
    """One row of :data:`COMPARISON_HEADER` text per :class:`~evaluators.judgelab.lab.VersionComparison`."""
    rows = []
    for c in comparisons:
        d = c.drift
        rows.append([c.before, c.after, str(c.n_items), number(c.agreement), figure_cell(c.cohen_kappa),
                     interval_cell(d.moved_share, d.ci_low, d.ci_high, d.small_sample), str(len(d.up_ids)),
                     str(len(d.down_ids)), p_value(d.mcnemar.p_value) if d.mcnemar is not None else number(None)])
    return rows


def length_bias_rows(biases) -> list[list[str]]:
    """One row of :data:`LENGTH_BIAS_HEADER` text per ``(version name, LengthBias)``."""
    return [[name, interval_cell(b.slope, b.ci_low, b.ci_high, b.small_sample), str(b.n),
             "yes" if b.excludes_zero else "no"] for name, b in biases]
