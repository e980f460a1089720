"""The writers of a :class:`~evaluators.run_result.RunResult`: JSON, CSV, Markdown and terminal text.

One writer per format for every task that speaks the Task protocol (:mod:`evaluators.tasks`); the CLI
(:mod:`evaluators.cli.task`) and the pages' downloads (:mod:`components.task_page`) call these same
functions with the same options, so a page's download and the CLI's file are the same bytes.

- JSON (:func:`run_json`): ``task``, ``unit``, ``signature``, ``config``, ``digests``, ``summary``
  (each system x metric x slice row with its interval), ``items`` (every row), ``issues`` and, with GT
  patches, ``gt_patch`` (what each entry did, the scores before and after): pretty JSON through
  :func:`evaluators.io.json_text.dumps_pretty`.
- CSV (:func:`items_csv`): one line per row, the item table's columns, through
  :func:`evaluators.reports.csv_writer.write_csv` (formula-safe cells).
- Markdown (:func:`summary_markdown`) and terminal text (:func:`terminal_text`): the summary table,
  numbers through :mod:`evaluators.reports.format`, user text through :func:`evaluators.reports.escape.md`.
"""

from __future__ import annotations

from typing import Any

from evaluators.io.json_text import dumps_pretty
from evaluators.reports.corrections import corrections_jsonable, patch_effect_text
from evaluators.reports.csv_writer import write_csv
from evaluators.reports.escape import md, visible
from evaluators.reports.format import MISSING, number, problem_lines
from evaluators.reports.tables import format_table
from evaluators.results import to_jsonable
from evaluators.run_result import ALL, RunResult, SummaryRow

#: Formats every task gets, in the order the CLI lists them.
FORMATS = ("text", "json", "csv", "md")
#: Bootstrap resamples of the summary's intervals in every writer (as the tasks' own reports: 10,000, seed 0).
SUMMARY_RESAMPLES = 10_000


def summary_of(result: RunResult) -> tuple[SummaryRow, ...]:
    """The summary every writer prints (:data:`SUMMARY_RESAMPLES`, seed 0, 95% intervals)."""
    return result.summary(n_resamples=SUMMARY_RESAMPLES, seed=0)


def run_dict(result: RunResult) -> dict[str, Any]:
    """The JSON object of a run (see the module docstring)."""
    out: dict[str, Any] = {
        "task": result.task, "unit": result.unit, "signature": result.signature,
        "config": to_jsonable(dict(result.config)), "digests": dict(result.digests),
        "summary": [r.to_dict() for r in summary_of(result)],
        "items": [{k: (list(v) if isinstance(v, tuple) else v) for k, v in row.items()}
                  for row in result.items.rows()],
        "issues": [to_jsonable(i) for i in result.issues],
    }
    if result.corrections is not None:
        out["gt_patch"] = corrections_jsonable(result.corrections)
    return out


def run_json(result: RunResult) -> str:
    """:func:`run_dict` as pretty JSON text, ending in a newline."""
    return dumps_pretty(run_dict(result)) + "\n"


def _cell(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return " | ".join(str(v) for v in value)
    if isinstance(value, float):
        text = number(value, 6)
        return "" if text == MISSING else (text.rstrip("0").rstrip(".") if "." in text else text)
    return value


def items_csv(result: RunResult) -> str:
    """The item table as CSV: the columns of :attr:`~evaluators.run_result.ItemTable.columns`, a list of
    answers joined with `` | ``, floats with up to 6 decimals (trailing zeros dropped), missing values empty."""
    columns = result.items.columns
    return write_csv(columns, ([_cell(row[c]) for c in columns] for row in result.items.rows()))


def _summary_table(result: RunResult) -> tuple[list[str], list[list[str]]]:
    header = ["system", "slice", "n", *result.metrics]
    by_key: dict[tuple[str, str, str], dict[str, SummaryRow]] = {}
    for r in summary_of(result):
        by_key.setdefault((r.system, r.slice, r.slice_value), {})[r.metric] = r
    rows = []
    for (system, slice_, value), metrics in by_key.items():
        label = ALL if not slice_ else f"{slice_}={value}"
        n = max(r.n_items for r in metrics.values())
        cells = []
        for m in result.metrics:
            r = metrics[m]
            cells.append(number(r.mean) + ("" if r.ci_low is None else f" [{number(r.ci_low)}, {number(r.ci_high)}]"))
        rows.append([system, label, str(n), *cells])
    return header, rows


def summary_markdown(result: RunResult, title: str | None = None) -> str:
    """A Markdown report: title, signature, the summary table (mean [95% interval] per metric), input
    problems and, with GT patches, what they changed."""
    header, rows = _summary_table(result)
    lines = [f"# {md(title or result.task)}", "", f"Signature: `{visible(result.signature) or '-'}`", "",
             "| " + " | ".join(md(h) for h in header) + " |", "|---|---|---:|" + "---:|" * len(result.metrics)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    problems = problem_lines(result.issues)
    if problems:
        lines += ["", "## Input problems", ""] + [f"- {md(p)}" for p in problems]
    if result.corrections is not None and result.corrections.effect is not None:
        lines += ["", "## GT corrections", "", "```",
                  patch_effect_text(result.corrections.effect, result.corrections.applications), "```"]
    return "\n".join(lines) + "\n"


def terminal_text(result: RunResult, title: str | None = None) -> str:
    """The summary as an aligned terminal table, then the input problems and the corrections."""
    header, rows = _summary_table(result)
    parts = [f"{visible(title or result.task)}: {len(result.items)} {result.unit}(s), "
             f"{len(result.systems)} system(s)", format_table(header, rows)]
    problems = problem_lines(result.issues)
    if problems:
        parts.append("Input problems:\n" + "\n".join(f"  {visible(p)}" for p in problems))
    if result.corrections is not None and result.corrections.effect is not None:
        parts.append(patch_effect_text(result.corrections.effect, result.corrections.applications))
    return "\n\n".join(parts) + "\n"


def write(result: RunResult, fmt: str, title: str | None = None) -> str:
    """The run in format ``fmt`` (one of :data:`FORMATS`).

    Raises
    ------
    ValueError
        An unknown format.
    """
    if fmt == "json":
        return run_json(result)
    if fmt == "csv":
        return items_csv(result)
    if fmt == "md":
        return summary_markdown(result, title)
    if fmt == "text":
        return terminal_text(result, title)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
