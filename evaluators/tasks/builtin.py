"""The built-in tasks' reports as :class:`~evaluators.run_result.RunResult`: one shape for the run registry,
the generic writers and every cross-task feature.

Each function reads a task's own report (what its run function returns, unchanged) and lays its per-unit
values out as an :class:`~evaluators.run_result.ItemTable`: the unit ids, the system, the metrics
(registry names), the slices and the fields a reviewer reads.  A unit id that repeats within one system
(two records of one id in a file) gets ``#2``, ``#3`` ... after its second and later occurrences, so a row is
still addressed by ``(system, item_id)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evaluators.io.errors import InputIssue
from evaluators.results import to_jsonable
from evaluators.run_result import ItemTable, RunResult

#: The QA metrics of a run result, in column order.
QA_METRICS = ("exact_match", "token_f1")


def _unique(system: str, item_id: str, seen: dict[tuple[str, str], int]) -> str:
    n = seen.get((system, item_id), 0) + 1
    seen[(system, item_id)] = n
    return item_id if n == 1 else f"{item_id}#{n}"


class _Columns:
    """Rows appended one at a time, laid out as an :class:`ItemTable`."""

    def __init__(self, metrics: Iterable[str], slices: Iterable[str], fields: Iterable[str]) -> None:
        self.ids: list[str] = []
        self.systems: list[str] = []
        self.values: dict[str, list] = {m: [] for m in metrics}
        self.slices: dict[str, list] = {s: [] for s in slices}
        self.fields: dict[str, list] = {f: [] for f in fields}
        self._seen: dict[tuple[str, str], int] = {}

    def add(self, system: str, item_id: str, values: dict[str, Any], slices: dict[str, Any],
            fields: dict[str, Any]) -> None:
        self.ids.append(_unique(system, str(item_id), self._seen))
        self.systems.append(system)
        for group, row in ((self.values, values), (self.slices, slices), (self.fields, fields)):
            for name, column in group.items():
                column.append(row.get(name))

    def table(self) -> ItemTable:
        return ItemTable(tuple(self.ids), tuple(self.systems), self.values, self.slices, self.fields)


def qa_run_result(run: Any) -> RunResult:
    """A :class:`~evaluators.qa.run.QARun` as a run result: one row per scored record of each system.

    Parameters
    ----------
    run : QARun
        From :func:`evaluators.qa.run.run_qa` (after GT patches when the caller applied them).

    Returns
    -------
    RunResult
        ``task="qa"``, unit ``record``; metrics :data:`QA_METRICS` (``None`` for a record whose GT is
        missing or unparsed: its status says why); slice ``lang``; fields ``question``, ``ground_truth``
        (the answers), ``prediction``, ``status``; the signature and config of the first report; the
        issues of every input (reading problems and unusable inputs).
    """
    cols = _Columns(QA_METRICS, ("lang",), ("question", "ground_truth", "prediction", "status"))
    for system, records in run.runs().items():
        for r in records:
            cols.add(system, r.id, {"exact_match": r.exact_match, "token_f1": r.token_f1},
                     {"lang": r.lang},
                     {"question": r.question, "ground_truth": tuple(r.gold_answers), "prediction": r.prediction,
                      "status": r.status})
    issues: list[InputIssue] = []
    for x in run.inputs:
        if x.report is not None:
            issues += list(x.report.issues)
        if x.failure is not None:
            issues.append(x.failure)
    return RunResult("qa", cols.table(), unit="record", issues=tuple(issues), config=to_jsonable(run.config),
                     signature=run.signature, native=run)
