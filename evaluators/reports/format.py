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
