"""The record passed from loading to judging to metrics, with JSON/JSONL in and out.

An :class:`EvalResult` holds one question of a long-term-memory benchmark (LoCoMo,
LongMemEval or a user's own set) with the ground truth and the system's prediction.
Writing results to JSONL and reading them back lets metrics and the judge run again
offline, without re-running the memory system.

Question types use one vocabulary with underscores:

- LoCoMo (Maharana et al., 2024): ``single_hop``, ``multi_hop``, ``temporal``,
  ``open_domain``, ``adversarial``;
- LongMemEval (Wu et al., 2024): ``single_session_user``, ``single_session_assistant``,
  ``single_session_preference``, ``multi_session``, ``knowledge_update``,
  ``temporal_reasoning`` (abstention questions keep their type and set ``abstention``).

Any other non-empty type string is accepted as is (a user's own categories).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from evaluators.io import InputIssue, RecordSet, read_records
from evaluators.io.readers import Record, iter_jsonl, sniff_bytes
from evaluators.policy import is_empty
from evaluators.results import DictMixin, to_jsonable
from evaluators.io.json_text import dumps_pretty

#: LoCoMo category number -> type, as in the benchmark's official code
#: (snap-research/LoCoMo, task_eval/evaluation.py and evaluation_stats.py, ``CATEGORY_MAPPING``).
LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi_hop",
    2: "temporal",
    3: "open_domain",
    4: "single_hop",
    5: "adversarial",
}
LOCOMO_TYPES: tuple[str, ...] = ("single_hop", "multi_hop", "temporal", "open_domain", "adversarial")

#: LongMemEval ``question_type`` (hyphenated, as in the dataset) -> type.
LONGMEMEVAL_TYPES: dict[str, str] = {
    "single-session-user": "single_session_user",
    "single-session-assistant": "single_session_assistant",
    "single-session-preference": "single_session_preference",
    "multi-session": "multi_session",
    "knowledge-update": "knowledge_update",
    "temporal-reasoning": "temporal_reasoning",
}

#: What the LoCoMo benchmark expects for an adversarial question: its official QA code
#: offers "Not mentioned in the conversation" against the distractor in
#: ``adversarial_answer`` and scores a prediction correct when it says so.
ADVERSARIAL_GROUND_TRUTH = "Not mentioned in the conversation"


@lru_cache(maxsize=4096)
def _canonical_text_type(text: str) -> str:
    if text.isdigit() and int(text) in LOCOMO_CATEGORIES:
        return LOCOMO_CATEGORIES[int(text)]
    if text in LONGMEMEVAL_TYPES:
        return LONGMEMEVAL_TYPES[text]
    return re.sub(r"[\s\-]+", "_", text.lower())


def canonical_type(value: Any) -> str:
    """Map a question type or category to the shared vocabulary.

    Parameters
    ----------
    value : int, str
        A LoCoMo category number (``1``..``5``, also as a string such as ``"4"``), a
        LongMemEval type (``"knowledge-update"``), a type already in the vocabulary,
        or any other label (lower-cased, spaces and hyphens turned into underscores).

    Returns
    -------
    str
        The type name.

    Raises
    ------
    ValueError
        If the value is empty.
    """
    if isinstance(value, bool) or is_empty(value):
        raise ValueError("question type is empty")
    if isinstance(value, (int, float)) and int(value) == value and int(value) in LOCOMO_CATEGORIES:
        return LOCOMO_CATEGORIES[int(value)]
    return _canonical_text_type(str(value).strip())  # types repeat: mapped once each


def answer_text(value: Any) -> str:
    """Ground truth or prediction as text: ``None`` -> ``""``, numbers -> ``str`` (as the
    official LoCoMo and LongMemEval scripts format them), lists joined with ``", "``.

    Parameters
    ----------
    value : object
        A parsed answer (str, number, list, None, NaN).

    Returns
    -------
    str

    Examples
    --------
    >>> answer_text(["Paris", 2024]), answer_text(None), answer_text(7)
    ('Paris, 2024', '', '7')
    """
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(answer_text(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class EvalResult(DictMixin):
    """One question with its ground truth and a system's prediction.

    Attributes
    ----------
    sample_id : str
        The conversation (LoCoMo ``sample_id``) or question haystack it belongs to.
    question_id : str
        Unique key of the question (judge cache, prediction files, stored labels).
    question_type : str
        Type in the shared vocabulary (see the module docstring).
    question : str
        The question text.
    ground_truth : str
        The reference answer (for LongMemEval preference questions, the rubric; for
        abstention questions, the explanation; for LoCoMo adversarial questions,
        :data:`ADVERSARIAL_GROUND_TRUTH`).
    prediction : str
        The system's answer; ``""`` when it gave none (scored as a miss).
    abstention : bool
        True when the right answer is to decline (LongMemEval ``_abs`` questions,
        LoCoMo adversarial questions).
    metadata : dict
        Extra fields kept from the source (category number, evidence, the adversarial
        distractor, stored scores such as mem0's ``llm_score``).
    """

    sample_id: str
    question_id: str
    question_type: str
    question: str
    ground_truth: str
    prediction: str
    abstention: bool = False
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def with_prediction(self, prediction: str) -> EvalResult:
        """A copy with another prediction.

        Parameters
        ----------
        prediction : str
            The new prediction text.

        Returns
        -------
        EvalResult
            Same question, ground truth, abstention flag and (copied) metadata.
        """
        return EvalResult(self.sample_id, self.question_id, self.question_type, self.question,
                          self.ground_truth, prediction, self.abstention, dict(self.metadata))


@dataclass
class LoadReport(DictMixin):
    """What a loader read: the results in file order and every problem found.

    Attributes
    ----------
    file : str
        The input's name.
    format : str
        What the input was recognised as (``evalresult``, ``locomo``, ``longmemeval``,
        ``mem0_locomo``, ``predictions`` ...).
    results : list of EvalResult
    issues : list of InputIssue
        Located problems; the records they name were skipped (``severity="error"``) or
        used with a caveat (``"warning"``).
    """

    file: str
    format: str
    results: list[EvalResult] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)


#: Field names accepted for each EvalResult field in user files (first found wins).
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "question_id": ("question_id", "qid", "id"),
    "sample_id": ("sample_id", "conversation_id", "conv_id"),
    "question_type": ("question_type", "type", "category"),
    "question": ("question", "query"),
    "ground_truth": ("ground_truth", "answer", "gold", "reference", "gt"),
    "prediction": ("prediction", "response", "hypothesis", "pred", "output"),
}
#: Every field name read into an EvalResult field; the others go to ``metadata``.
_KNOWN_FIELDS: frozenset[str] = frozenset(
    {n for names in FIELD_ALIASES.values() for n in names} | {"abstention", "metadata"})


def _first(data: dict[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    for name in names:
        if name in data:
            return name, data[name]
    return None, None


def result_from_dict(data: dict[str, Any]) -> EvalResult:
    """Build an :class:`EvalResult` from one record (the output of ``to_dict`` or a
    user's file using the names in :data:`FIELD_ALIASES`).

    Parameters
    ----------
    data : dict
        One parsed record.

    Returns
    -------
    EvalResult
        Fields not known to :class:`EvalResult` go into ``metadata``.

    Raises
    ------
    ValueError
        When ``question_id`` or ``question_type`` is missing or empty, or when neither a
        ground truth nor an abstention flag is given; the message names the field.
    """
    _, qid = _field(data, "question_id")
    if is_empty(qid):
        raise ValueError("missing 'question_id' (also read as 'qid' or 'id')")
    _, qtype = _field(data, "question_type")
    if is_empty(qtype):
        raise ValueError("missing 'question_type' (also read as 'type' or 'category')")
    qtype = canonical_type(qtype)
    gt_name, gt = _field(data, "ground_truth")
    abstention = bool(data.get("abstention", False)) or str(qid).endswith("_abs") or qtype == "adversarial"
    if gt_name is None:
        if qtype == "adversarial":
            gt = ADVERSARIAL_GROUND_TRUTH
        elif not abstention:
            raise ValueError("missing 'ground_truth' (also read as 'answer', 'gold', 'reference' or 'gt')")
    _, pred = _field(data, "prediction")
    _, sid = _field(data, "sample_id")
    _, question = _field(data, "question")
    metadata = dict(data.get("metadata") or {}) if isinstance(data.get("metadata"), dict) else {}
    if not data.keys() <= _KNOWN_FIELDS:  # set operation: the common record has no extra field
        metadata.update({k: v for k, v in data.items() if k not in _KNOWN_FIELDS})
    return EvalResult(
        sample_id=_text(sid), question_id=str(qid), question_type=qtype, question=_text(question),
        ground_truth=_text(gt), prediction=_text(pred), abstention=abstention, metadata=metadata,
    )


def _field(data: dict[str, Any], key: str) -> tuple[str | None, Any]:
    """:func:`_first` of the field's aliases; the field's own name (its first alias) looked up first."""
    if key in data:
        return key, data[key]
    return _first(data, FIELD_ALIASES[key])


def _text(value: Any) -> str:
    """:func:`answer_text`, a string as it is."""
    return value if type(value) is str else answer_text(value)


def lines_despite_bad_bytes(data: bytes, file: str, issue: InputIssue) -> RecordSet | None:
    """The records of a JSONL file that does not decode as a whole, read line by line as UTF-8.

    ``issue`` is the decoding error of the whole file.  A JSONL file (by its name or its first
    lines) keeps every line that decodes; each line that does not is a located error (its line
    number and byte offset).  Returns ``None`` for anything else (the file stays unreadable).

    Parameters
    ----------
    data : bytes
        The file's bytes.
    file : str
        Its name.
    issue : InputIssue
        Why the whole file could not be read.

    Returns
    -------
    RecordSet or None
        The good lines' records, with a warning first and one located error per bad line.
    """
    if issue.kind != "decode" or sniff_bytes(data, file) != "jsonl":
        return None
    out = RecordSet(file=file, format="jsonl", encoding="utf-8", issues=[InputIssue(
        file, "not UTF-8 (nor GB18030) as a whole: read line by line as UTF-8, the lines that are not are skipped "
              "(listed with their line)", severity="warning", kind="decode")])
    for item in iter_jsonl(data, file, encoding="utf-8", keep_raw=False):
        (out.records if isinstance(item, Record) else out.issues).append(item)
    return out


def read_results(data: bytes, file: str = "<input>", fmt: str | None = None) -> LoadReport:
    """Read EvalResult records from JSONL, a JSON array or CSV.

    Parameters
    ----------
    data : bytes
        File content (UTF-8, UTF-8 with BOM or GB18030).
    file : str
        Name used in issues.
    fmt : {"json", "jsonl", "csv"} or None
        Force a format; sniffed by default.

    Returns
    -------
    LoadReport
        ``format="evalresult"``.  A record that cannot be used is reported with its line
        (JSONL, CSV) or JSON path and skipped; duplicate ``question_id`` values keep the
        first record and report the others.
    """
    return results_from_records(read_records(data, file, fmt))


#: Deepest nesting of a kept extra field (``metadata``); a deeper value is left out with a located warning
#: (the readers accept 1,024 levels, more than Python's JSON writer and recursion allow).
MAX_METADATA_DEPTH = 64


def nesting_depth(value: Any, limit: int = MAX_METADATA_DEPTH) -> int:
    """Levels of lists and objects in ``value`` (0 for a scalar), counted without recursion up to ``limit + 1``.

    Parameters
    ----------
    value : object
        A parsed JSON value.
    limit : int
        Counting stops past this depth.

    Returns
    -------
    int
        In ``[0, limit + 1]``.

    Examples
    --------
    >>> nesting_depth("x"), nesting_depth([]), nesting_depth({"a": [{"b": 1}]})
    (0, 1, 3)
    """
    depth, level = 0, [value]
    while level and depth <= limit:
        children = []
        for v in level:
            if isinstance(v, dict):
                children.extend(v.values())
            elif isinstance(v, (list, tuple)):
                children.extend(v)
        if not children and not any(isinstance(v, (dict, list, tuple)) for v in level):
            break
        depth += 1
        level = children
    return depth


_FLAT_TYPES = frozenset({str, int, float, bool, type(None)})


def _nested(value: Any) -> bool:
    """True for a list or object holding a list or object (a flat one, the common case, is never deep)."""
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list):
        return False
    if _FLAT_TYPES.issuperset(map(type, value)):  # in C: only scalars (the common case)
        return False
    return any(isinstance(v, (dict, list)) for v in value)


def _drop_deep_metadata(result: EvalResult, file: str, where: dict[str, Any]) -> list[InputIssue]:
    """Leave out the extra fields nested deeper than :data:`MAX_METADATA_DEPTH` (in place), with a warning each."""
    issues = []
    for key in [k for k, v in result.metadata.items()
                if (type(v) is list or type(v) is dict) and _nested(v) and nesting_depth(v) > MAX_METADATA_DEPTH]:
        del result.metadata[key]
        issues.append(InputIssue(file, f"field {key!r} nests lists or objects more than {MAX_METADATA_DEPTH} levels "
                                       "deep; left out (the question is kept)", severity="warning", kind="schema",
                                 **where))
    return issues


def results_from_records(records: RecordSet) -> LoadReport:
    """:func:`read_results` on records already read (for example from a parsed JSON value).

    Parameters
    ----------
    records : RecordSet
        Parsed records with their lines.

    Returns
    -------
    LoadReport
        The results, and located problems: a record that is not a result (schema), a repeated
        ``question_id`` (warning, the first kept), metadata nested too deeply.
    """
    file = records.file
    report = LoadReport(file=file, format="evalresult", issues=list(records.issues))
    seen: set[str] = set()
    for rec in records.records:
        where = rec.where()
        try:
            result = result_from_dict(rec.data)
        except ValueError as exc:
            report.issues.append(InputIssue(file, str(exc), kind="schema", **where))
            continue
        except RecursionError:  # an answer of lists nested hundreds deep
            report.issues.append(InputIssue(file, "a field nests lists too deeply to be read as an answer",
                                            kind="schema", **where))
            continue
        if result.question_id in seen:
            report.issues.append(InputIssue(file, f"duplicate question_id {result.question_id!r}; the first is kept",
                                            kind="schema", severity="warning", **where))
            continue
        seen.add(result.question_id)
        if result.metadata:
            report.issues.extend(_drop_deep_metadata(result, file, where))
        report.results.append(result)
    return report


def results_to_jsonl(results: Iterable[EvalResult]) -> str:
    """Serialise results as JSON Lines (UTF-8 text, one object per line, non-ASCII kept).

    Parameters
    ----------
    results : iterable of EvalResult

    Returns
    -------
    str
        One JSON object per line, each ending with ``"\\n"``; ``""`` for no result.
    """
    return "".join(json.dumps(to_jsonable(r), ensure_ascii=False) + "\n" for r in results)


def results_to_json(results: Iterable[EvalResult]) -> str:
    """Serialise results as one JSON array (indented).

    Parameters
    ----------
    results : iterable of EvalResult

    Returns
    -------
    str
        A JSON array indented by 2, non-ASCII kept.
    """
    return dumps_pretty([to_jsonable(r) for r in results])
