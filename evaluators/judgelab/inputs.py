"""Calibration labels and judge verdicts from files (JSONL, JSON array or CSV; :func:`evaluators.io.read_records`).

Labels, one record per item::

    {"item_id": "q1", "label": 1, "slice": "temporal", "guidelines_version": "g2"}

``item_id`` (or ``id`` / ``question_id``); ``label`` 1/0, true/false, ``right``/``wrong``, ``yes``/``no``, or a
review label (``correct`` and ``acceptable_variant`` right, ``model_error`` wrong; ``gt_error`` left out with a
note); ``slice`` (or ``question_type`` / ``category``) and ``guidelines_version`` optional.

Verdicts, one record per item and judge version::

    {"item_id": "q1", "verdict": 1, "judge": "v2 zh", "model": "gpt-4o-2024-08-06",
     "prompt_hash": "...", "parameters": {"temperature": 0}, "parser": "yes-in-reply"}

``verdict`` (or ``label``) as a label above; LongMemEval's judge output (``question_id`` and
``autoeval_label: {"model": ..., "label": true}``) is read as is.  Records are grouped into versions by
``judge`` (else ``model``, else the file's name); a version's model, prompt hash, parameters and parser come
from its first record.

Items for a judge run (:func:`read_items`), one record per item::

    {"item_id": "q1", "question": "...", "reference": "...", "answer": "...", "slice": "temporal"}

``reference`` (or ``ground_truth`` / ``answer_gt``), ``answer`` (or ``prediction`` / ``hypothesis``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from evaluators.io import InputIssue, read_records
from evaluators.judgelab.calibration import HumanLabel, JudgeVersion
from evaluators.results import DictMixin

RIGHT = {"1", "true", "right", "yes", "correct", "acceptable_variant", "pass"}
WRONG = {"0", "false", "wrong", "no", "model_error", "fail"}
ID_FIELDS = ("item_id", "id", "question_id")


def verdict_value(value: Any) -> int | None:
    """1 / 0 for a right / wrong label in any of the accepted spellings, ``None`` otherwise.

    >>> [verdict_value(v) for v in (True, "yes", "acceptable_variant", "model_error", 0, "gt_error")]
    [1, 1, 1, 0, 0, None]
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    text = str(value).strip().lower()
    return 1 if text in RIGHT else 0 if text in WRONG else None


def _first(data: Mapping[str, Any], fields) -> Any:
    for f in fields:
        if data.get(f) not in (None, ""):
            return data[f]
    return None


@dataclass(frozen=True)
class CalibrationInputs:
    """What was read: labels or verdict groups, and one issue per record left out."""

    labels: tuple[HumanLabel, ...] = ()
    judges: tuple[tuple[JudgeVersion, dict], ...] = ()
    issues: tuple[InputIssue, ...] = ()


def _issue(file: str, record, message: str) -> InputIssue:
    return InputIssue(file, message, line=record.line, path=record.path, kind="value")


def read_labels(data: bytes, file: str = "<labels>") -> CalibrationInputs:
    """Human labels from a file's bytes; records without an id or a right / wrong label are left out with an issue.

    Raises
    ------
    evaluators.io.InputError
        Bytes that cannot be decoded.
    """
    rs = read_records(data, file)
    labels, issues = [], list(rs.issues)
    for r in rs.records:
        item = _first(r.data, ID_FIELDS)
        raw = _first(r.data, ("label", "human_label", "verdict"))
        value = verdict_value(raw)
        if item is None or value is None:
            why = "no item id (item_id, id or question_id)" if item is None else \
                f"label {raw!r:.40} is not a right / wrong verdict (gt_error and empty labels are left out)"
            issues.append(_issue(file, r, why))
            continue
        labels.append(HumanLabel(str(item), value, str(_first(r.data, ("slice", "question_type", "category")) or ""),
                                 str(r.data.get("guidelines_version") or "")))
    return CalibrationInputs(labels=tuple(labels), issues=tuple(issues))


def read_verdicts(data: bytes, file: str = "<verdicts>") -> CalibrationInputs:
    """Judge verdicts from a file's bytes, grouped by judge version (module docstring).

    Raises
    ------
    evaluators.io.InputError
        Bytes that cannot be decoded.
    """
    rs = read_records(data, file)
    issues = list(rs.issues)
    groups: dict[str, tuple[JudgeVersion, dict]] = {}
    stem = PurePath(file).stem
    for r in rs.records:
        d = r.data
        auto = d.get("autoeval_label") if isinstance(d.get("autoeval_label"), Mapping) else {}
        item = _first(d, ID_FIELDS)
        raw = _first(d, ("verdict", "label")) if not auto else auto.get("label")
        value = verdict_value(raw)
        if item is None or value is None:
            issues.append(_issue(file, r, "no item id (item_id, id or question_id)" if item is None else
                                 f"verdict {raw!r:.40} is not right / wrong"))
            continue
        model = str(_first(d, ("model",)) or auto.get("model") or "")
        name = str(_first(d, ("judge", "judge_version")) or model or stem)
        if name not in groups:
            params = d.get("parameters") if isinstance(d.get("parameters"), Mapping) else {}
            version = JudgeVersion(model, str(d.get("prompt_hash") or ""), tuple(sorted(params.items())),
                                   str(d.get("parser") or ""), name)
            groups[name] = (version, {})
        verdicts = groups[name][1]
        if str(item) in verdicts:
            issues.append(_issue(file, r, f"a second verdict of {name!r} on {item!r:.60}: the first is kept"))
            continue
        verdicts[str(item)] = value
    return CalibrationInputs(judges=tuple(groups.values()), issues=tuple(issues))


@dataclass(frozen=True)
class JudgeItem(DictMixin):
    """What the judge sees of one item."""

    item_id: str
    question: str
    reference: str
    answer: str


def read_items(data: bytes, file: str = "<items>") -> tuple[tuple[JudgeItem, ...], tuple[InputIssue, ...]]:
    """Items for a judge run from a file's bytes (module docstring); records without an id or an answer are left
    out with an issue, as is a second record of an id.

    Returns
    -------
    items : tuple of JudgeItem
    issues : tuple of InputIssue

    Raises
    ------
    evaluators.io.InputError
        Bytes that cannot be decoded.
    """
    rs = read_records(data, file)
    items, issues, seen = [], list(rs.issues), set()
    for r in rs.records:
        item = _first(r.data, ID_FIELDS)
        answer = _first(r.data, ("answer", "prediction", "hypothesis"))
        if item is None or answer is None or str(item) in seen:
            issues.append(_issue(file, r, "no item id (item_id, id or question_id)" if item is None else
                                 "no answer (answer, prediction or hypothesis)" if answer is None else
                                 f"a second record of {str(item)!r:.60}: the first is kept"))
            continue
        seen.add(str(item))
        items.append(JudgeItem(str(item), str(_first(r.data, ("question",)) or ""),
                               str(_first(r.data, ("reference", "ground_truth", "answer_gt")) or ""), str(answer)))
    return tuple(items), tuple(issues)
