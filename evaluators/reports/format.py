"""How numbers, missing values and input problems are written, in every output: one home.

Terminal text, Markdown, HTML reports and the dashboard all call these functions, so a value
reads the same everywhere: a missing value is always :data:`MISSING` (never "None", "nan",
"N/A" or "n/a"), a count is an integer, a difference of two scores is in percentage points.
"""

from __future__ import annotations

import math
from typing import Any

#: How a value that could not be computed (or is absent) is written everywhere.
MISSING = "—"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: float | int | None, digits: int = 3) -> str:
    """A score or count as text: ``0.714`` (``digits`` decimals) for a float, ``12`` for an int, :data:`MISSING`
    for ``None`` or NaN.

    >>> number(0.71428), number(12), number(None), number(float("nan")), number(0.5, 1)
    ('0.714', '12', '—', '—', '0.5')
    """
    if _missing(value):
        return MISSING
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def fixed(value: float | int | None, digits: int = 3, *, grouped: bool = False) -> str:
    """A value with exactly ``digits`` decimals, an int too: ``0.5`` -> ``"0.500"``, ``1`` -> ``"1.000"``;
    :data:`MISSING` for ``None`` or NaN.

    Parameters
    ----------
    value : float, int or None
    digits : int
        Decimals written.
    grouped : bool
        Thousands separated by commas (``12,345``).

    >>> fixed(0.5), fixed(1, 2), fixed(None), fixed(12345.6, 0, grouped=True)
    ('0.500', '1.00', '—', '12,346')
    """
    if _missing(value):
        return MISSING
    return f"{float(value):,.{digits}f}" if grouped else f"{float(value):.{digits}f}"


def signed(value: float | int | None, digits: int = 3) -> str:
    """:func:`fixed` with its sign always written: ``0.25`` -> ``"+0.250"``, ``-1`` -> ``"-1.000"``.

    A difference in percentage points without the unit is ``signed(100 * delta, 2)``; with it, :func:`points`.

    >>> signed(0.25), signed(-1, 2), signed(0.0, 1), signed(None)
    ('+0.250', '-1.00', '+0.0', '—')
    """
    return MISSING if _missing(value) else f"{float(value):+.{digits}f}"


def significant(value: float | None, digits: int = 3) -> str:
    """A value with ``digits`` significant digits (``g`` form): ``2.0`` -> ``"2"``, ``0.012345`` -> ``"0.0123"``.

    >>> significant(2.0), significant(0.012345), significant(123456.0), significant(None)
    ('2', '0.0123', '1.23e+05', '—')
    """
    return MISSING if _missing(value) else f"{value:.{digits}g}"


def percent(value: float | None, digits: int = 2) -> str:
    """A rate in [0, 1] as a percentage: ``0.6`` -> ``"60.00%"``; :data:`MISSING` for ``None``.

    >>> percent(0.6), percent(None), percent(1 / 3, 1)
    ('60.00%', '—', '33.3%')
    """
    return MISSING if _missing(value) else f"{100 * value:.{digits}f}%"


def points(delta: float | None, digits: int = 2) -> str:
    """A difference of two scores in [0, 1] in percentage points: ``0.1094`` -> ``"+10.94 pts"``.

    >>> points(0.1094), points(-0.05), points(None)
    ('+10.94 pts', '-5.00 pts', '—')
    """
    return MISSING if _missing(delta) else f"{100 * delta:+.{digits}f} pts"


def points_interval(low: float | None, high: float | None, digits: int = 2) -> str:
    """A 95% interval of a difference in percentage points, or that none was computed.

    >>> points_interval(-0.01, 0.2), points_interval(None, None)
    ('95% CI -1.00 to +20.00 pts', 'no interval computed')
    """
    if _missing(low) or _missing(high):
        return "no interval computed"
    return f"95% CI {100 * low:+.{digits}f} to {100 * high:+.{digits}f} pts"


def percent_interval(low: float | None, high: float | None, digits: int = 2) -> str:
    """A 95% interval of a rate in [0, 1] as percentages, ``"low - high"``; :data:`MISSING` when an end is missing.

    >>> percent_interval(0.12, 0.3), percent_interval(None, None)
    ('12.00% - 30.00%', '—')
    """
    if _missing(low) or _missing(high):
        return MISSING
    return f"{percent(low, digits)} - {percent(high, digits)}"


def p_value(p_value: float | None, is_bound: bool = False, digits: int = 4) -> str:
    """A p-value as text: ``"p = 0.1094"``; a bound as ``"p < 0.0001"``; ``None`` as not computed.

    Parameters
    ----------
    p_value : float or None
        ``None`` when no test was run (no resample).
    is_bound : bool
        ``p_value`` is an upper bound (a Monte Carlo p-value below ``1 / (R + 1)``, see
        :func:`evaluators.metrics.statistics.paired_bootstrap`): printed as ``p <`` the bound
        rounded up to one significant digit (``1 / 10001`` -> ``"p < 0.0001"``).
    digits : int
        Significant digits of an estimate.
    """
    if p_value is None:
        return "p not computed (no resamples)"
    if not is_bound:
        return f"p = {p_value:.{digits}g}"
    exponent = math.floor(math.log10(p_value))
    step = 10.0 ** exponent
    bound = math.ceil(p_value / step - 1e-9) * step
    if bound >= 10 * step * (1 - 1e-12):  # 9.99e-5 rounds up to 1e-4: one digit fewer
        exponent += 1
    return f"p < {bound:.{max(0, -exponent)}f}"


def small_sample_note(comparison) -> str:
    """Why a paired test's bootstrap p-value is not to be trusted, as a sentence (``""`` when it is).

    ``comparison`` is a :class:`~evaluators.metrics.statistics.PairedComparison`; its ``small_sample``
    reason (:func:`evaluators.metrics.statistics.small_sample_reason`) is spelled out with what to
    read instead (the exact sign-flip test, McNemar's exact test).
    """
    reason = getattr(comparison, "small_sample", "")
    if not reason:
        return ""
    return (f"[!] bootstrap p-value not trustworthy on a small sample ({reason}): read the exact sign-flip or "
            "McNemar's exact p-value")


def problem(issue: Any, severity: str | None = None) -> str:
    """One input problem as one line: ``"error: answers.jsonl:3: what was expected"``.

    ``issue`` is an :class:`~evaluators.io.InputIssue` (``severity``, ``location()``, ``message``);
    ``severity`` replaces the issue's own word (a command that still scores the rest of a file says
    ``warning`` for a skipped line). The CLIs print it on stderr.
    """
    return f"{severity or issue.severity}: {issue.location()}: {issue.message}"


#: Locations written out in a folded problem; the rest are counted.
FOLD_SHOWN = 3


def fold_problems(issues: Any, severity: str | None = None) -> list[tuple[Any, list[Any]]]:
    """Group identical problems: ``[(first issue, [every issue of its group]), ...]`` in order of first appearance.

    Issues are identical when they have the same severity (``severity`` replacing each issue's own),
    file and message; they differ only in where (line, JSON path).  500 records missing the same field
    are one group of 500.
    """
    groups: dict[tuple, tuple[Any, list[Any]]] = {}
    for issue in issues:
        key = (severity or issue.severity, issue.file, issue.message)
        if key in groups:
            groups[key][1].append(issue)
        else:
            groups[key] = (issue, [issue])
    return list(groups.values())


def folded_location(group: list[Any]) -> str:
    """Where the problems of one :func:`fold_problems` group are: ``"a.jsonl: line 3, 4, 5 … (500 lines)"``,
    ``"a.json at x[1], x[2] (2 places)"``, or the one issue's own location.

    >>> from evaluators.io import InputIssue
    >>> folded_location([InputIssue("a.jsonl", "m", line=n) for n in (3, 4, 5, 9)])
    'a.jsonl: line 3, 4, 5 … (4 lines)'
    """
    first = group[0]
    if len(group) == 1:
        return first.location()

    def listed(values: list[Any]) -> str:
        shown = ", ".join(str(v) for v in values[:FOLD_SHOWN])
        return shown + (" …" if len(values) > FOLD_SHOWN else "")

    if all(i.line is not None for i in group):
        return f"{first.file}: line {listed([i.line for i in group])} ({len(group)} lines)"
    if all(i.path for i in group):
        return f"{first.file} at {listed([i.path for i in group])} ({len(group)} places)"
    return f"{first.location()} and {len(group) - 1} more place{'s' * (len(group) > 2)}"


def problem_lines(issues: Any, severity: str | None = None) -> list[str]:
    """Input problems as lines, identical ones folded into one line with their count (:func:`fold_problems`):
    ``"error: a.jsonl: line 1, 2, 3 … (500 lines): missing 'question_type'"``.

    What the CLIs print on stderr and the pages list under *Input problems*, so both say the same.
    ``severity`` replaces each issue's own word, as in :func:`problem`.
    """
    return [f"{severity or first.severity}: {folded_location(group)}: {first.message}"
            for first, group in fold_problems(issues, severity)]
