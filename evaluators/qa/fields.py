"""Where a QA record keeps its ground truth, prediction, id, question and group.

Ground truth is looked up by priority (configurable); the first field with a non-empty
value wins and its name is recorded.  The default order is the earlier fact-check
script's: inside ``original_row`` (``人工评测结果``, ``标准答案``, ``答案``, ``label``), then
at the root (``人工评测结果``, ``标准答案``, ``答案``), then ``answer``, ``answers``,
``gold_answer``, ``answers_objects``, ``label``.  ``None``, blank strings, empty lists and NaN count as
absent (the next field is tried).

A dotted name (``original_row.label``) is a nested lookup; a CSV column literally named
``original_row.label`` is found too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.io.readers import loads_json_line
from evaluators.policy import is_empty
from evaluators.results import DictMixin

DEFAULT_GT_FIELDS: tuple[str, ...] = (
    "original_row.人工评测结果", "original_row.标准答案", "original_row.答案", "original_row.label",
    "人工评测结果", "标准答案", "答案",
    "answer", "answers", "gold_answer", "answers_objects", "label",
)
DEFAULT_PRED_FIELDS: tuple[str, ...] = ("final_answer", "prediction", "predicted_answer", "predicted_label", "pred")
ID_FIELDS: tuple[str, ...] = ("id", "question_id", "qid", "_id", "row_id", "example_id", "uid")
QUESTION_FIELDS: tuple[str, ...] = ("question", "claim", "question_text", "query", "问题", "主张", "input")
GROUP_FIELDS: tuple[str, ...] = ("system", "model", "method", "run")


@dataclass(frozen=True)
class Resolved(DictMixin):
    """A value found in a record.

    Attributes
    ----------
    field : str
        The field name it came from (dotted for nested fields).
    raw : Any
        The value as stored.
    texts : tuple of str
        The value as answer strings (several for ``answers`` lists); never empty.
    """

    field: str
    raw: Any
    texts: tuple[str, ...]


def get_path(record: Mapping[str, Any], name: str) -> Any:
    """Value of ``name`` in ``record``; ``a.b`` looks inside ``record["a"]`` (or a literal ``"a.b"`` key).

    Parameters
    ----------
    record : mapping
        A parsed record.
    name : str
        A key, or a dotted path of keys.

    Returns
    -------
    object or None
        ``None`` when a key is absent or a step is not a mapping.

    Examples
    --------
    >>> get_path({"original_row": {"answer": "北京"}}, "original_row.answer")
    '北京'
    """
    if name in record:
        return record[name]
    if "." in name:
        head, rest = name.split(".", 1)
        inner = record.get(head)
        if isinstance(inner, Mapping):
            return get_path(inner, rest)
    return None


def _scalar_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None if value is None else str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return str(int(value)) if value.is_integer() else str(value)
    if isinstance(value, (int, str)):
        text = str(value)
        return text if text.strip() else None
    return None


def answer_texts(value: Any, field: str = "") -> tuple[str, ...]:
    """Answer strings held by a field value.

    Handles a string (a JSON list in a string, as CSV stores it, is parsed), a list of
    strings, SQuAD answer objects (``{"text": ...}``), IRCoT ``answers_objects``
    (``{"spans": [...]}``), and numbers.  An integer ``label`` is HoVer's convention:
    1 -> ``"Yes"``, 0 -> ``"No"`` (as the earlier script).  Empty entries are dropped.

    Parameters
    ----------
    value : object
        The field's value as parsed.
    field : str
        The field's name (a ``label`` field turns 1 / 0 into Yes / No).

    Examples
    --------
    >>> answer_texts('["北京", "Beijing"]'), answer_texts([{"text": "Paris"}]), answer_texts(1, "label")
    (('北京', 'Beijing'), ('Paris',), ('Yes',))

    Returns
    -------
    tuple of str
        Possibly empty.
    """
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            try:
                parsed = loads_json_line(stripped)  # the one JSON reader: nesting limit, lone surrogates
                if isinstance(parsed, list):
                    return answer_texts(parsed, field)
            except (ValueError, RecursionError):  # not JSON, or lists nested too deeply to flatten
                pass
        return (value,) if stripped else ()
    if field.split(".")[-1] == "label" and isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return ("Yes" if value == 1 else "No",)
    if isinstance(value, Mapping):
        for key in ("text", "spans", "answer", "value"):
            if key in value:
                return answer_texts(value[key], field)
        return ()
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        out: list[str] = []
        for item in value:
            out.extend(answer_texts(item, field) if not isinstance(item, (int, float)) else
                       tuple(t for t in (_scalar_text(item),) if t))
        return tuple(out)
    text = _scalar_text(value)
    return (text,) if text else ()


def resolve(record: Mapping[str, Any], fields: Sequence[str]) -> Resolved | None:
    """First field of ``fields`` with a non-empty value, as a :class:`Resolved`; ``None`` if none has one.

    Parameters
    ----------
    record : mapping
        A parsed record.
    fields : sequence of str
        Field names or dotted paths, in order of preference.

    Returns
    -------
    Resolved or None
        The field's name, raw value and answer texts (:func:`answer_texts`, at least one).
    """
    for name in fields:
        value = get_path(record, name)
        if is_empty(value):
            continue
        texts = answer_texts(value, name)
        if texts:
            return Resolved(name, value, texts)
    return None


def text_field(record: Mapping[str, Any], fields: Sequence[str], *, allow_numbers: bool = False) -> str | None:
    """First non-blank string among ``fields`` (at the root, then inside ``original_row``), else ``None``.

    With ``allow_numbers`` an integer value counts too (ids such as ``row_id: 7``).

    Parameters
    ----------
    record : mapping
        A parsed record.
    fields : sequence of str
        Field names in order of preference.
    allow_numbers : bool
        Accept an integer (not a bool) as its decimal text.

    Returns
    -------
    str or None
        The value as it is (not stripped).
    """
    for name in fields:
        for candidate in (name, f"original_row.{name}"):
            value = get_path(record, candidate)
            if isinstance(value, str) and value.strip():
                return value
            if allow_numbers and isinstance(value, int) and not isinstance(value, bool):
                return str(value)
    return None
