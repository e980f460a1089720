"""Writers of long-term-memory reports: JSON, Markdown tables, the per-question CSV (``memory --format
json|md|csv``) and the judge cache of a run's questions (``memory --write-cache``)."""

from __future__ import annotations

import json
from typing import Any

from evaluators.reports.csv_writer import write_csv
from evaluators.reports.escape import md
from evaluators.reports.format import fixed, number
from evaluators.io.json_text import dumps_pretty


def report_json(report) -> str:
    """The JSON report of a memory run (``memory --format json``, the page's "Report (JSON)" download).

    ``report`` is a :class:`evaluators.memory.run.MemoryReport` (or its ``to_dict()``): both
    callers write this same text for the same inputs.
    """
    data = report.to_dict() if hasattr(report, "to_dict") else report
    return dumps_pretty(data) + "\n"


def judge_cache_of(report, results):
    """The judge verdicts of a run's questions as a judge cache, or ``None`` when none of them has one.

    The page's "Judge cache (JSON)" download and ``memory --write-cache FILE`` write it with
    :meth:`evaluators.memory.judge.JudgeCache.to_json` (the layout ``--cache`` reads back).

    Parameters
    ----------
    report : evaluators.memory.run.MemoryReport
        Its ``judge_cache`` (the store the run read and filled in) is read; ``None`` gives ``None``.
    results : sequence of EvalResult
        The questions scored; verdicts of other questions in the store are left out.

    Returns
    -------
    evaluators.memory.judge.JudgeCache or None
        An in-memory cache (no path) with the entries of these question ids.
    """
    if report.judge_cache is None:
        return None
    cache = report.judge_cache.subset(r.question_id for r in results)
    return cache if cache.entries else None


def report_markdown(report: dict[str, Any]) -> str:
    """The memory report (``python -m evaluators memory --format md``) as Markdown tables.

    ``report`` is the JSON-ready report of the CLI (``metrics`` with ``overall``/``by_type``,
    optional ``locomo_parity``, ``longmemeval``, ``agreement``, ``input.notes``).  Question types
    and notes come from user files and go through :func:`evaluators.reports.escape.md`.
    """
    m = report["metrics"]
    names = [n for n in m["metrics"]]
    lines = ["| type | count | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]

    def fmt(v):
        return number(v, 4)

    for name, block in [("overall", m["overall"]), *sorted(m["by_type"].items())]:
        lines.append(f"| {md(name)} | {block['count']} | " + " | ".join(fmt(block.get(n)) for n in names) + " |")
    notes = report.get("input", {}).get("notes") or []
    out = [*(f"Note: {md(n)}" for n in notes), *([""] if notes else []),
           "## Metrics by question type (mean over questions)", "", *lines, ""]
    if "locomo_parity" in report:
        lp = report["locomo_parity"]
        out += ["## LoCoMo parity F1 (published scoring code)", "", "| category | type | count | mean |",
                "|---:|---|---:|---:|"]
        out += [f"| {c['category']} | {md(c['question_type'])} | {c['count']} | {fmt(c['mean'])} |"
                for c in lp["by_category"]]
        out += [f"| all | overall | {lp['count']} | {fmt(lp['overall'])} |", ""]
    if "longmemeval" in report:
        lme = report["longmemeval"]
        out += ["## LongMemEval accuracy (stored labels)", "", "| type | count | accuracy |", "|---|---:|---:|"]
        out += [f"| {md(t['question_type'])} | {t['count']} | {fmt(t['accuracy'])} |" for t in lme["by_type"]]
        out += [f"| task-averaged | | {fmt(lme['task_averaged'])} |", f"| overall | {lme['n_labels']} | "
                f"{fmt(lme['overall'])} |", f"| abstention | {lme['abstention']['count']} | "
                f"{fmt(lme['abstention']['accuracy'])} |", ""]
    if "agreement" in report:
        a = report["agreement"]
        interval = (f" [{fmt(a['cohen_kappa_ci_low'])}, {fmt(a['cohen_kappa_ci_high'])}] ({a['ci']})"
                    if a.get("cohen_kappa_ci_low") is not None else "")
        out += [f"Judge vs stored labels: {a['n_compared']} compared, accuracy {fmt(a['accuracy'])}, "
                f"Cohen's kappa {fmt(a['cohen_kappa'])}{interval}", ""]
    out.append(f"signature: {json.dumps(m['signature'], ensure_ascii=False)}")
    return "\n".join(out) + "\n"


def report_text(report: dict[str, Any]) -> str:
    """The memory report as aligned terminal tables (``python -m evaluators memory``'s default output).

    The same sections as :func:`report_markdown` (metrics by question type, LoCoMo parity,
    LongMemEval accuracy, agreement with stored labels and the signatures), drawn by
    :func:`evaluators.reports.tables.format_table` (CJK text counts two columns).
    """
    from evaluators.reports.tables import format_table

    m = report["metrics"]
    names = list(m["metrics"])

    def fmt(v):
        return number(v, 4)

    bar = "=" * 80  # the input notes are the command's (stderr), not the report's
    out = [bar, "Metrics by question type (mean over questions)",
            format_table(["type", "count", *names],
                         [[name, block["count"], *(fmt(block.get(n)) for n in names)]
                          for name, block in [*sorted(m["by_type"].items()), ("overall", m["overall"])]])]
    if "locomo_parity" in report:
        lp = report["locomo_parity"]
        out += [bar, "LoCoMo parity F1 (published scoring code)",
                format_table(["category", "type", "count", "mean"],
                             [[c["category"], c["question_type"], c["count"], fmt(c["mean"])]
                              for c in lp["by_category"]]
                             + [["all", "overall", lp["count"], fmt(lp["overall"])]])]
    if "longmemeval" in report:
        lme = report["longmemeval"]
        out += [bar, "LongMemEval accuracy (stored labels)",
                format_table(["type", "count", "accuracy"],
                             [[t["question_type"], t["count"], fmt(t["accuracy"])] for t in lme["by_type"]]
                             + [["task-averaged", "", fmt(lme["task_averaged"])],
                                ["overall", lme["n_labels"], fmt(lme["overall"])],
                                ["abstention", lme["abstention"]["count"], fmt(lme["abstention"]["accuracy"])]])]
    if "agreement" in report:
        a = report["agreement"]
        interval = (f" [{fmt(a['cohen_kappa_ci_low'])}, {fmt(a['cohen_kappa_ci_high'])}] ({a['ci']})"
                    if a.get("cohen_kappa_ci_low") is not None else "")
        out += [bar, f"Judge vs stored labels: {a['n_compared']} compared, accuracy {fmt(a['accuracy'])}, "
                     f"Cohen's kappa {fmt(a['cohen_kappa'])}{interval}"]
    if m.get("ci"):
        out += [bar, f"intervals: {m['ci']}"]
    out += [bar, "signatures:", *(f"  {name}: {sig}" for name, sig in m["signature"].items())]
    if report.get("provenance"):
        from evaluators.text.provenance import TextProvenance

        out += ["tokenizers:", *(f"  {name}: {TextProvenance(**p).signature()}"
                                 for name, p in report["provenance"].items())]
    return "\n".join(out) + "\n"


def questions_csv(rows, results) -> str:
    """One CSV row per question: id, type, question, ground truth, prediction, every score, the judge's reasoning.

    ``rows`` are :func:`evaluators.memory.metrics.score_questions` rows, ``results`` the
    EvalResult records they score; written by the one CSV writer.
    """
    by_id = {r.question_id: r for r in results}
    names = list(rows[0].scores) if rows else []
    header = ["question_id", "question_type", "question", "ground_truth", "prediction", *names, "judge_reasoning"]
    return write_csv(header, ([row.question_id, row.question_type, by_id[row.question_id].question,
                               by_id[row.question_id].ground_truth, by_id[row.question_id].prediction,
                               *["" if row.scores[n] is None else fixed(row.scores[n], 6) for n in names],
                               row.judgement.reasoning if row.judgement else ""] for row in rows))
