"""Located input problems: every bad input names its file, line/column or JSON path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluators.results import DictMixin


def format_json_path(loc: tuple[Any, ...] | list[Any]) -> str:
    """Render a pydantic ``loc`` tuple as a JSON path: ``narrative_events[3].text_span.start``.

    Parameters
    ----------
    loc : tuple or list
        Field names and list indices, outermost first.

    Returns
    -------
    str
        ``"$"`` for an empty ``loc``.

    Examples
    --------
    >>> format_json_path(("narrative_events", 3, "text_span", "start")), format_json_path(())
    ('narrative_events[3].text_span.start', '$')
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "$"


@dataclass(frozen=True)
class InputIssue(DictMixin):
    """One problem found while reading or validating input.

    Attributes
    ----------
    file : str
        File name as given by the user (upload name or path).
    message : str
        What was wrong and what was expected.
    line, column : int or None
        1-based position for text-level errors (invalid JSON, a bad JSONL/CSV line).
    path : str or None
        JSON path of the offending value (pydantic ``loc``), e.g. ``narrative_events[2].relationships[0]``.
    severity : str
        ``"error"`` (the record or file was not used) or ``"warning"`` (used, with a caveat).
    kind : str
        A short machine-readable category (``decode``, ``json``, ``schema``, ``pairing`` ...).
    """

    file: str
    message: str
    line: int | None = None
    column: int | None = None
    path: str | None = None
    severity: str = "error"
    kind: str = "schema"

    def location(self) -> str:
        """``file:line:column`` or ``file at path`` for messages."""
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if self.path:
            where += f" at {self.path}"
        return where

    def __str__(self) -> str:  # pragma: no cover - trivial
        return f"{self.location()}: {self.message}"


class InputError(ValueError):
    """Raised when a whole input is unusable (cannot decode, invalid JSON, wrong top-level type).

    The ``issue`` attribute carries the located :class:`InputIssue`.
    """

    def __init__(self, issue: InputIssue):
        super().__init__(str(issue))
        self.issue = issue
