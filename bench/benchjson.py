"""The machine-readable figures of a benchmark script: one ``BENCH_JSON {...}`` line a row of the table.

Each script keeps its human output and, after it, prints one line a row of the performance table
(issue 32) that ``bench/run_all.py`` parses into its summary::

    BENCH_JSON {"row": "...", "unit": "x", "rounds": [...], "target": "<= 3x", "bound": 3.0,
                "better": "lower", "cpu_rounds": [...], "note": "..."}

``rounds`` are the figure of each round (a ratio to the reference measured in the same round where
the row has a reference); ``bound`` and ``better`` say when the median meets the target. A check
with no figure (identical bytes, exact call counts) gives ``value`` (a string) and ``met`` instead of
``rounds``. ``cpu_rounds`` (optional): the same figure from CPU seconds (user + system), steadier
than the wall clock on a busy machine. ``judge`` (optional, default "median"): "p95" where the
target is on the 95th percentile of the rounds (clicks).
"""

from __future__ import annotations

import json
import statistics

PREFIX = "BENCH_JSON "


def emit(row: str, rounds: list[float], *, unit: str, target: str, bound: float, better: str = "lower",
         cpu_rounds: list[float] | None = None, note: str = "", judge: str = "median") -> None:
    """Print one row with figures (``better``: "lower" or "higher" is the good direction)."""
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    if judge not in ("median", "p95"):
        raise ValueError(f"judge must be 'median' or 'p95', got {judge!r}")
    record = {"row": row, "unit": unit, "rounds": [float(x) for x in rounds], "target": target,
              "bound": float(bound), "better": better, "note": note}
    if judge != "median":
        record["judge"] = judge
    if cpu_rounds:
        record["cpu_rounds"] = [float(x) for x in cpu_rounds]
    print(PREFIX + json.dumps(record, ensure_ascii=False), flush=True)


def emit_check(row: str, value: object, *, target: str, met: bool, note: str = "") -> None:
    """Print one row that is a check, not a figure (identical bytes, exact call counts)."""
    print(PREFIX + json.dumps({"row": row, "value": str(value), "target": target, "met": bool(met), "note": note},
                              ensure_ascii=False), flush=True)


def parse(line: str) -> dict | None:
    """The record of a ``BENCH_JSON`` line, or None for any other line."""
    if not line.startswith(PREFIX):
        return None
    try:
        record = json.loads(line[len(PREFIX):])
    except ValueError:
        return None
    return record if isinstance(record, dict) and "row" in record else None


def judged(record: dict) -> float:
    """The figure the target is on: the median of the rounds, or their 95th percentile."""
    xs = record["rounds"]
    if record.get("judge") == "p95" and len(xs) >= 2:
        return statistics.quantiles(xs, n=20)[-1]
    return statistics.median(xs)


def met(record: dict) -> bool | None:
    """Whether the row's judged figure (median, or p95) meets its target (None: no figure)."""
    if "rounds" not in record:
        return record.get("met")
    if not record["rounds"]:
        return None
    x = judged(record)
    return x <= record["bound"] if record["better"] == "lower" else x >= record["bound"]
