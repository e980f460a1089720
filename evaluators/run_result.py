"""One run result for every task: the per-item table, its summary with intervals, and where it came from.

Every task (narrative, QA, memory, dialogue, test sets, and any task plugged in through
:mod:`evaluators.tasks`) turns its own report into a :class:`RunResult`.  The writers of
:mod:`evaluators.reports.run_result` (JSON, CSV, Markdown, terminal), the run registry and
the corrections skeleton read this one shape, so a feature written once serves every task.

Shape
-----
:class:`ItemTable` is columnar: ``n`` rows, one per scored unit (a QA record, a memory
question, a persona reply, a test-set item, a narrative document) *of one system*; the columns
are the unit id, the system, one float column per metric (``None`` where the metric is not
defined for the unit: missing ground truth, an unavailable backend), one text column per slice
(question type, category, scene ...) and further text fields a reviewer reads (question,
ground truth, prediction).  ``(system, item_id)`` is unique.

The summary (:meth:`RunResult.summary`) is, for every system, metric and slice value, the mean
over the units where the metric is defined and its percentile bootstrap interval
(:func:`evaluators.metrics.statistics.bootstrap_ci`: Efron & Tibshirani 1993, ch. 13).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from evaluators.io.errors import InputIssue
from evaluators.results import DictMixin

#: The slice value of a summary row over all units of a system.
ALL = "all"


def _frozen(columns: Mapping[str, Sequence[Any]]) -> Mapping[str, tuple[Any, ...]]:
    return MappingProxyType({str(k): tuple(v) for k, v in columns.items()})


@dataclass(frozen=True)
class ItemTable:
    """Per-unit values of a run, by column.

    Attributes
    ----------
    item_id : tuple of str, shape (n,)
        The unit's id within its task (record id, question id, case key, story id ...).
    system : tuple of str, shape (n,)
        The system (model, predictions file) whose output the row scores.
    values : mapping of str to tuple of float or None, each shape (n,)
        Metric name -> its value for each row, in [0, 1] for every built-in metric; ``None`` where
        it is undefined (never NaN: NaN is read as ``None``).
    slices : mapping of str to tuple of str or None, each shape (n,)
        Slice name (``question_type``, ``category``, ``scene`` ...) -> each row's value.
    fields : mapping of str to tuple, each shape (n,)
        Further columns for readers (``question``, ``ground_truth``, ``prediction``), JSON values.

    Raises
    ------
    ValueError
        Columns of different lengths, a column name used twice, or a ``(system, item_id)`` pair twice.
    """

    item_id: tuple[str, ...]
    system: tuple[str, ...]
    values: Mapping[str, tuple[float | None, ...]] = field(default_factory=dict)
    slices: Mapping[str, tuple[str | None, ...]] = field(default_factory=dict)
    fields: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "item_id", tuple(str(x) for x in self.item_id))
        object.__setattr__(self, "system", tuple(str(x) for x in self.system))
        object.__setattr__(self, "values", MappingProxyType({
            str(k): tuple(_number(x) for x in v) for k, v in self.values.items()}))
        object.__setattr__(self, "slices", MappingProxyType({
            str(k): tuple(None if x is None else str(x) for x in v) for k, v in self.slices.items()}))
        object.__setattr__(self, "fields", _frozen(self.fields))
        n = len(self.item_id)
        for kind, columns in (("system", {"system": self.system}), ("metric", self.values),
                              ("slice", self.slices), ("field", self.fields)):
            for name, column in columns.items():
                if len(column) != n:
                    raise ValueError(f"{kind} column {name!r} has {len(column)} values for {n} items")
        names = list(self.values) + list(self.slices) + list(self.fields)
        twice = sorted({x for x in names if names.count(x) > 1} | ({"item_id", "system"} & set(names)))
        if twice:
            raise ValueError(f"column name(s) used twice: {', '.join(twice)}")
        pairs = set(zip(self.system, self.item_id))
        if len(pairs) != n:
            seen: set[tuple[str, str]] = set()
            dup = next(p for p in zip(self.system, self.item_id) if p in seen or seen.add(p))
            raise ValueError(f"item {dup[1]!r} of system {dup[0]!r} appears more than once")

    def __len__(self) -> int:
        return len(self.item_id)

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column name in order: ``item_id``, ``system``, slices, metrics, fields."""
        return ("item_id", "system", *self.slices, *self.values, *self.fields)

    def column(self, name: str) -> tuple[Any, ...]:
        """The column ``name`` (see :attr:`columns`).

        Raises
        ------
        KeyError
            No such column.
        """
        if name in ("item_id", "system"):
            return getattr(self, name)
        for group in (self.slices, self.values, self.fields):
            if name in group:
                return group[name]
        raise KeyError(f"no column {name!r}; the columns are: {', '.join(self.columns)}")

    def rows(self) -> Iterator[dict[str, Any]]:
        """One dict per row, keys :attr:`columns` in order."""
        cols = [(c, self.column(c)) for c in self.columns]
        for i in range(len(self)):
            yield {c: col[i] for c, col in cols}

    def digest(self) -> str:
        """SHA-256 (hex) of the table's canonical JSON: equal tables, equal digests (the registry's address)."""
        payload = {"columns": list(self.columns), "data": [list(self.column(c)) for c in self.columns]}
        text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _number(x: Any) -> float | None:
    if x is None:
        return None
    value = float(x)
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class SummaryRow(DictMixin):
    """The mean of one metric for one system over one slice of the units, with its interval.

    Attributes
    ----------
    system, metric : str
    slice, slice_value : str
        ``slice`` names the slice column (``""`` with ``slice_value`` :data:`ALL` for every unit).
    n : int
        Units where the metric is defined (the mean's denominator); ``n_items`` counts all units of the slice.
    mean, ci_low, ci_high : float or None
        In the metric's range; ``None`` when ``n == 0`` (interval also ``None`` when ``n < 2``).
    """

    system: str
    metric: str
    slice: str
    slice_value: str
    n: int
    n_items: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class RunResult:
    """What one run of a task produced, in the shape every writer, page and the run registry read.

    Attributes
    ----------
    task : str
        The task's name (``qa``, ``memory``, ``dialogue``, ``testsets``, ``narrative`` or a plugged-in task).
    items : ItemTable
        The per-unit values.
    unit : str
        What one row is (``record``, ``question``, ``reply``, ``item``, ``document``).
    issues : tuple of InputIssue
        Located input problems (the rest was scored).
    config : mapping
        The settings used, as JSON values.
    signature : str
        The scores' signature (tokenizer and version, normalisation, metric versions): equal
        signatures mean comparable numbers.
    digests : mapping of str to str
        Input role (``gt``, ``predictions``, ``gt_patch`` ...) -> SHA-256 of the bytes read.
    corrections : Corrections or None
        With GT patches: what they did and the scores before and after
        (:class:`evaluators.metrics.before_after.Corrections`).
    native : object
        The task's own report, for task-specific views (not compared, not serialised).
    """

    task: str
    items: ItemTable
    unit: str = "item"
    issues: tuple[InputIssue, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    signature: str = ""
    digests: Mapping[str, str] = field(default_factory=dict)
    corrections: Any = None
    native: Any = field(default=None, compare=False, repr=False)

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metric columns, in order."""
        return tuple(self.items.values)

    @property
    def systems(self) -> tuple[str, ...]:
        """The systems in order of first appearance."""
        return tuple(dict.fromkeys(self.items.system))

    def by_system(self, metrics: Sequence[str] | None = None) -> dict[str, dict[str, list[float | None]]]:
        """System -> metric -> its values in item order (the shape of
        :func:`evaluators.metrics.before_after.score_effect`)."""
        names = list(self.metrics if metrics is None else metrics)
        out: dict[str, dict[str, list[float | None]]] = {s: {m: [] for m in names} for s in self.systems}
        cols = [(m, self.items.values[m]) for m in names]
        for i, s in enumerate(self.items.system):
            for m, col in cols:
                out[s][m].append(col[i])
        return out

    def summary(self, *, n_resamples: int = 1000, confidence_level: float = 0.95, seed: int = 0
                ) -> tuple[SummaryRow, ...]:
        """Each system's mean of each metric, over all units and over each slice value, with its interval.

        Parameters
        ----------
        n_resamples : int
            Bootstrap resamples (0: no interval).
        confidence_level : float
            In (0, 1).
        seed : int
            Every interval's generator seed (the same draws for every row).

        Returns
        -------
        tuple of SummaryRow
            Ordered by system (first appearance), then the overall row and the slices' values (sorted), then
            metric (column order).
        """
        from evaluators.metrics.statistics import bootstrap_ci

        table = self.items
        groups: list[tuple[str, str, str, list[int]]] = []
        for system in self.systems:
            rows = [i for i, s in enumerate(table.system) if s == system]
            groups.append((system, "", ALL, rows))
            for name, column in table.slices.items():
                by_value: dict[str, list[int]] = {}
                for i in rows:
                    if column[i] is not None:
                        by_value.setdefault(column[i], []).append(i)
                groups += [(system, name, v, by_value[v]) for v in sorted(by_value)]
        out = []
        for system, name, value, rows in groups:
            for metric, column in table.values.items():
                xs = [column[i] for i in rows if column[i] is not None]
                mean = sum(xs) / len(xs) if xs else None
                low = high = None
                if len(xs) >= 2 and n_resamples > 0:
                    ci = bootstrap_ci(xs, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed,
                                      unit=self.unit)
                    low, high = ci.ci_low, ci.ci_high
                out.append(SummaryRow(system, metric, name, value, len(xs), len(rows), mean, low, high))
        return tuple(out)
