"""Loaders for LoCoMo, LongMemEval, mem0-style LoCoMo results and prediction files.

- :func:`load_locomo`: the LoCoMo dataset (``locomo10.json``: a list of conversations,
  each with ``sample_id`` and ``qa``).  Question ids are ``{sample_id}_q{index}`` with the
  0-based position in the conversation's ``qa`` list (LoCoMo has no ids of its own).
- :func:`load_longmemeval`: a LongMemEval question file (``question_id``,
  ``question_type``, ``question``, ``answer``; haystacks are ignored).
- :func:`load_mem0_locomo`: results written by mem0's LoCoMo evaluation (an object
  ``{conversation index: [{question, answer, response, category, ...}]}``).
- :func:`load_predictions` / :func:`attach_predictions`: prediction files keyed by
  question id (JSONL/JSON/CSV records, or one JSON object ``{question_id: answer}``).
- :func:`load_results_file`: recognises any of the above and EvalResult files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evaluators.io import InputError, InputIssue, load_json_bytes, read_records
from evaluators.io.readers import ORJSON_MAX_BYTES, add_json_records, loads_json_line, read_json_document
from evaluators.io.sources import read_file_bytes
from evaluators.memory.records import (
    ADVERSARIAL_GROUND_TRUTH, FIELD_ALIASES, LOCOMO_CATEGORIES, LONGMEMEVAL_TYPES, EvalResult, LoadReport, _first,
    answer_text, canonical_type, lines_despite_bad_bytes, read_results, results_from_records,
)
from evaluators.policy import is_empty

PREDICTION_FIELDS = ("prediction", "hypothesis", "response", "pred", "output", "answer")


def _as_bytes(source: bytes | str | Path) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), "<input>"
    path = Path(source)
    return read_file_bytes(path), str(path)


def _load_json(source: bytes | str | Path | Any, file: str | None) -> tuple[Any, str]:
    """Parsed JSON from bytes or a path, or an already parsed value."""
    if isinstance(source, (bytes, bytearray, str, Path)):
        data, name = _as_bytes(source)
        value, _ = load_json_bytes(data, file or name)
        return value, file or name
    return source, file or "<input>"


def locomo_question_id(sample_id: str, index: int) -> str:
    """The id given to the ``index``-th (0-based) question of a LoCoMo conversation.

    Parameters
    ----------
    sample_id : str
        The conversation's ``sample_id`` in ``locomo10.json``.
    index : int
        The question's 0-based position in its ``qa`` list.

    Returns
    -------
    str

    Examples
    --------
    >>> locomo_question_id("conv-26", 0)
    'conv-26_q0'
    """
    return f"{sample_id}_q{index}"


def _locomo_result(sample_id: str, index: int, qa: dict[str, Any], prediction: str = "") -> EvalResult:
    category = qa.get("category")
    qtype = LOCOMO_CATEGORIES[int(category)]
    metadata: dict[str, Any] = {"category": int(category)}
    if qa.get("evidence"):
        metadata["evidence"] = qa["evidence"]
    if qtype == "adversarial":
        # The benchmark's official code offers "Not mentioned in the conversation" against the
        # distractor (``answer`` when present, else ``adversarial_answer``) and scores the
        # prediction by whether it says the information is not there.
        distractor = qa.get("answer", qa.get("adversarial_answer"))
        metadata["adversarial_answer"] = answer_text(distractor)
        gt = ADVERSARIAL_GROUND_TRUTH
    else:
        gt = answer_text(qa.get("answer"))
    return EvalResult(
        sample_id=sample_id, question_id=locomo_question_id(sample_id, index), question_type=qtype,
        question=answer_text(qa.get("question")), ground_truth=gt, prediction=prediction,
        abstention=qtype == "adversarial", metadata=metadata,
    )


def load_locomo(source: bytes | str | Path | list, file: str | None = None) -> LoadReport:
    """Load the LoCoMo QA set (no predictions: ``prediction`` is ``""``).

    Parameters
    ----------
    source : bytes, path or parsed list
        ``locomo10.json`` or a file of the same shape.
    file : str, optional
        Name used in issues.

    Returns
    -------
    LoadReport
        ``format="locomo"``; one result per QA item, in file order.  Categories map to
        types as in the official code (1 multi_hop, 2 temporal, 3 open_domain,
        4 single_hop, 5 adversarial); adversarial items, which have
        ``adversarial_answer`` instead of ``answer``, get
        :data:`~evaluators.memory.records.ADVERSARIAL_GROUND_TRUTH` and keep the
        distractor in ``metadata["adversarial_answer"]``.

    Raises
    ------
    InputError
        If the bytes are not JSON.

    References
    ----------
    Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
    ACL 2024; snap-research/LoCoMo ``task_eval/evaluation.py``, ``task_eval/gpt_utils.py``.
    """
    value, name = _load_json(source, file)
    report = LoadReport(file=name, format="locomo")
    if not isinstance(value, list):
        report.issues.append(InputIssue(name, "expected a JSON array of conversations with 'sample_id' and 'qa'",
                                        path="$"))
        return report
    for ci, conv in enumerate(value):
        if not isinstance(conv, dict) or not isinstance(conv.get("qa"), list):
            report.issues.append(InputIssue(name, "expected an object with a 'qa' list", path=f"[{ci}]"))
            continue
        sample_id = answer_text(conv.get("sample_id")) or f"conv-{ci}"
        for qi, qa in enumerate(conv["qa"]):
            path = f"[{ci}].qa[{qi}]"
            if not isinstance(qa, dict):
                report.issues.append(InputIssue(name, "expected a QA object", path=path))
                continue
            try:
                category = int(qa.get("category"))
            except (TypeError, ValueError):
                category = None
            if category not in LOCOMO_CATEGORIES:
                report.issues.append(InputIssue(name, f"unknown category {qa.get('category')!r}; expected 1-5",
                                                path=path + ".category"))
                continue
            if category != 5 and "answer" not in qa:
                report.issues.append(InputIssue(name, "missing 'answer'", path=path))
                continue
            report.results.append(_locomo_result(sample_id, qi, qa))
    return report


def load_longmemeval(source: bytes | str | Path | list, file: str | None = None) -> LoadReport:
    """Load LongMemEval questions (no predictions: ``prediction`` is ``""``).

    Parameters
    ----------
    source : bytes, path or parsed list
        A LongMemEval file (``longmemeval_s/m/oracle.json`` or a slim copy): a list of
        objects with ``question_id``, ``question_type``, ``question``, ``answer``.

    Returns
    -------
    LoadReport
        ``format="longmemeval"``.  Types are mapped to underscores
        (``knowledge-update`` -> ``knowledge_update``); ``abstention`` is True for ids
        containing ``_abs``, as in the official scripts.  ``question_date`` and
        ``answer_session_ids`` are kept in ``metadata``.

    References
    ----------
    Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive
    Memory", ICLR 2025; xiaowu0162/LongMemEval ``src/evaluation/evaluate_qa.py``.
    """
    value, name = _load_json(source, file)
    report = LoadReport(file=name, format="longmemeval")
    if not isinstance(value, list):
        report.issues.append(InputIssue(name, "expected a JSON array of questions", path="$"))
        return report
    for i, q in enumerate(value):
        path = f"[{i}]"
        if not isinstance(q, dict):
            report.issues.append(InputIssue(name, "expected a question object", path=path))
            continue
        missing = [k for k in ("question_id", "question_type", "answer") if k not in q]
        if missing:
            report.issues.append(InputIssue(name, f"missing {', '.join(repr(m) for m in missing)}", path=path))
            continue
        qtype = LONGMEMEVAL_TYPES.get(q["question_type"])
        if qtype is None:
            try:
                qtype = canonical_type(q["question_type"])
            except ValueError:
                report.issues.append(InputIssue(name, "empty question_type", path=path + ".question_type"))
                continue
            report.issues.append(InputIssue(
                name, f"question_type {q['question_type']!r} is not one of LongMemEval's six; kept as {qtype!r}",
                path=path + ".question_type", severity="warning"))
        qid = str(q["question_id"])
        metadata = {k: q[k] for k in ("question_date", "answer_session_ids") if k in q}
        report.results.append(EvalResult(
            sample_id=qid, question_id=qid, question_type=qtype, question=answer_text(q.get("question")),
            ground_truth=answer_text(q["answer"]), prediction="", abstention="_abs" in qid, metadata=metadata,
        ))
    return report


def _is_mem0_shape(value: Any) -> bool:
    return (
        isinstance(value, dict) and bool(value)
        and all(isinstance(v, list) for v in value.values())
        and any(isinstance(x, dict) and "response" in x and "category" in x for v in value.values() for x in v)
    )


#: A mem0 results key naming a conversation by its position in ``locomo10.json``: ``"0"`` (mem0's
#: ``evals.py``) or ``"conv_0"`` / ``"conv-0"`` / ``"conversation_0"`` (other versions of its scripts).
_MEM0_KEY = re.compile(r"(?:conv(?:ersation)?[-_ ]?)?(\d+)", re.IGNORECASE)


def mem0_conversation_index(key: str) -> int | None:
    """The position in ``locomo10.json`` a mem0 results key names (``"0"``, ``"conv_0"`` -> 0), or ``None``.

    Parameters
    ----------
    key : str
        A top-level key of mem0's results file.

    Returns
    -------
    int or None

    Examples
    --------
    >>> mem0_conversation_index("conv-3"), mem0_conversation_index("7"), mem0_conversation_index("alice")
    (3, 7, None)
    """
    match = _MEM0_KEY.fullmatch(str(key).strip())
    return int(match.group(1)) if match else None


def load_mem0_locomo(source: bytes | str | Path | dict, file: str | None = None, *,
                     dataset: LoadReport | None = None) -> LoadReport:
    """Load LoCoMo predictions in mem0's results format.

    Parameters
    ----------
    source : bytes, path or parsed dict
        ``{"0": [{"question", "answer", "response", "category", ...}], "1": [...]}``: the
        keys are positions in ``locomo10.json`` (``"0"``, or ``"conv_0"`` in other versions of
        mem0's scripts: :func:`mem0_conversation_index`), the items follow the conversation's
        ``qa`` order with category 5 left out (mem0 ``evaluation/evals.py``).
    dataset : LoadReport, optional
        :func:`load_locomo` of the dataset.  When given, each item takes the id of the
        dataset question it answers (same conversation, next question in order with
        the same text), so predictions, the dataset and stored labels share ids; items
        that cannot be matched are reported and get index-based ids.

    Returns
    -------
    LoadReport
        ``format="mem0_locomo"``.  Without a dataset, ids are ``conv{n}_{i}`` (``n`` the
        conversation's position, whichever way the key spells it: ``"0"`` and ``"conv_0"`` both
        give ``conv0_3``; a key without a position is kept as is: ``conv{key}_{i}``).
        mem0's stored per-question scores (``llm_score``, ``f1_score``,
        ``bleu_score``) are kept in ``metadata``.
    """
    value, name = _load_json(source, file)
    report = LoadReport(file=name, format="mem0_locomo")
    if not _is_mem0_shape(value):
        report.issues.append(InputIssue(
            name, "expected an object {conversation index: [{question, answer, response, category}]}", path="$"))
        return report
    by_conv: dict[int, list[EvalResult]] = {}
    if dataset is not None:
        order: list[str] = []
        for r in dataset.results:
            if r.sample_id not in order:
                order.append(r.sample_id)
        for r in dataset.results:
            by_conv.setdefault(order.index(r.sample_id), []).append(r)
    for key, items in value.items():
        position = mem0_conversation_index(key)
        conv = f"conv{position}" if position is not None else f"conv{key}"
        conv_questions = by_conv.get(position, []) if position is not None else []
        cursor = 0
        for i, item in enumerate(items):
            path = f"{key}[{i}]"
            if not isinstance(item, dict) or "category" not in item:
                report.issues.append(InputIssue(name, "expected an object with 'category'", path=path))
                continue
            try:
                category = int(item["category"])
                qtype = LOCOMO_CATEGORIES[category]
            except (KeyError, TypeError, ValueError):
                report.issues.append(InputIssue(name, f"unknown category {item['category']!r}; expected 1-5",
                                                path=path + ".category"))
                continue
            metadata = {"category": category}
            metadata.update({k: item[k] for k in ("llm_score", "f1_score", "bleu_score") if k in item})
            question = answer_text(item.get("question"))
            match = next((j for j in range(cursor, len(conv_questions)) if conv_questions[j].question == question),
                         None)
            if match is not None:
                cursor = match + 1
                match = conv_questions[match]
            elif dataset is not None:
                report.issues.append(InputIssue(name, "question not found in the LoCoMo dataset in this order; "
                                                "given an index-based id", path=path, severity="warning"))
            if match is not None:
                sid, qid = match.sample_id, match.question_id
                metadata.update({k: v for k, v in match.metadata.items() if k not in metadata})
            else:
                sid, qid = conv, f"{conv}_{i}"
            if qtype == "adversarial":
                gt = ADVERSARIAL_GROUND_TRUTH
                metadata["adversarial_answer"] = answer_text(item.get("answer", item.get("adversarial_answer")))
            else:
                gt = answer_text(item.get("answer"))
            report.results.append(EvalResult(
                sample_id=sid, question_id=qid, question_type=qtype, question=question, ground_truth=gt,
                prediction=answer_text(item.get("response")), abstention=qtype == "adversarial", metadata=metadata,
            ))
    return report


def load_predictions(data: bytes, file: str = "<input>") -> tuple[dict[str, str], list[InputIssue]]:
    """Read predictions keyed by question id.

    Parameters
    ----------
    data : bytes
        JSONL / JSON array / CSV records with ``question_id`` and one of
        ``prediction``, ``hypothesis`` (LongMemEval), ``response``, ``pred``, ``output``,
        ``answer``; or a JSON object ``{question_id: prediction}``.

    Returns
    -------
    (predictions, issues)
        ``{question_id: text}`` and the located problems (bad lines, missing fields,
        duplicates: the first prediction is kept; an undecodable file: no predictions
        and one issue).
    """
    issues: list[InputIssue] = []
    lines = None
    try:
        value, parsed = read_json_document(data, file)
    except InputError as exc:  # undecodable as a whole: reported, never raised; a JSONL file keeps its good lines
        lines = lines_despite_bad_bytes(data, file, exc.issue)
        if lines is None:
            return {}, [exc.issue]
        value, parsed = None, None
    if parsed is not None and parsed.errors:  # not one JSON document: JSONL or CSV records
        value, parsed = None, None
    one_record = isinstance(value, dict) and any(f in value for f in FIELD_ALIASES["question_id"]) and any(
        f in value for f in PREDICTION_FIELDS)  # a one-line JSONL file: one record, not {question_id: answer}
    if isinstance(value, dict) and value and not one_record and all(isinstance(v, (str, int, float)) or v is None
                                                                    for v in value.values()):
        return {str(k): answer_text(v) for k, v in value.items()}, issues
    records = lines if lines is not None else (
        add_json_records(value, parsed) if parsed is not None else read_records(data, file))
    issues.extend(records.issues)
    out: dict[str, str] = {}
    for rec in records.records:
        where = rec.where()
        _, qid = _first(rec.data, FIELD_ALIASES["question_id"])
        if is_empty(qid):
            issues.append(InputIssue(file, "missing 'question_id'", **where))
            continue
        field_name = next((f for f in PREDICTION_FIELDS if f in rec.data), None)
        if field_name is None:
            issues.append(InputIssue(file, f"missing the prediction (one of {', '.join(PREDICTION_FIELDS)})", **where))
            continue
        qid = str(qid)
        if qid in out:
            issues.append(InputIssue(file, f"duplicate question_id {qid!r}; the first is kept", severity="warning",
                                     **where))
            continue
        out[qid] = answer_text(rec.data[field_name])
    return out, issues


def attach_predictions(questions: Iterable[EvalResult], predictions: Mapping[str, str],
                       file: str = "<predictions>") -> tuple[list[EvalResult], list[InputIssue]]:
    """Join questions with predictions by ``question_id``.

    Parameters
    ----------
    questions : iterable of EvalResult
        The question set (LoCoMo or LongMemEval), without predictions.
    predictions : mapping of str to str
        Question id -> prediction text.
    file : str
        The predictions file's name, for the warnings.

    Returns
    -------
    (results, issues)
        Every question, with its prediction or ``""`` when none was given (a miss under
        the missing-GT policy, reported as a warning with the count); predictions for
        unknown question ids are reported (count and the first few ids) and left out.
    """
    questions = list(questions)
    known = {q.question_id for q in questions}
    out = [q.with_prediction(predictions.get(q.question_id, "")) for q in questions]
    issues: list[InputIssue] = []
    missing = [q.question_id for q in questions if q.question_id not in predictions]
    if missing:
        issues.append(InputIssue(file, f"{len(missing)} question(s) have no prediction and are scored as misses "
                                       f"(e.g. {', '.join(missing[:3])})", severity="warning", kind="pairing"))
    unknown = [k for k in predictions if k not in known]
    if unknown:
        issues.append(InputIssue(file, f"{len(unknown)} prediction(s) for question ids not in the question set "
                                       f"were ignored (e.g. {', '.join(unknown[:3])})", severity="warning",
                                 kind="pairing"))
    return out, issues


def detect_format(value: Any) -> str:
    """Name the shape of a parsed JSON value: ``locomo``, ``longmemeval``, ``mem0_locomo``
    or ``records`` (anything else, read as EvalResult records).

    Parameters
    ----------
    value : object
        A parsed JSON document.

    Returns
    -------
    str
        ``locomo`` (a list of conversations with ``qa``), ``longmemeval`` (questions with
        ``question_type``, ``answer`` and no prediction field), ``mem0_locomo`` or ``records``.
    """
    if _is_mem0_shape(value):
        return "mem0_locomo"
    if isinstance(value, list) and value and isinstance(value[0], dict):
        first = value[0]
        if "qa" in first and "conversation" in first:
            return "locomo"
        if "question_type" in first and "answer" in first and "question_id" in first and not any(
                f in first for f in ("prediction", "hypothesis", "response")):
            return "longmemeval"
    return "records"


_NEWLINE = re.compile(rb"\n")
_JSON_NON_SPACE = re.compile(rb"[^ \t\r\n]")  # JSON's whitespace is these four


def _more_after_a_first_object(data: bytes | memoryview) -> bool:
    """True when the first line is one whole JSON object and more than whitespace follows it.

    Such a file is not one JSON document (a parser stops at "Extra data"), so
    :func:`load_results_file` reads its lines at once, as it would after trying the whole file as
    one document (that try decodes and parses a copy of the whole file for nothing).
    """
    start = 3 if bytes(data[:3]) == b"\xef\xbb\xbf" else 0
    newline = _NEWLINE.search(data, start)
    if newline is None or newline.start() - start > ORJSON_MAX_BYTES:
        return False
    try:
        first = loads_json_line(bytes(data[start:newline.start()]))
    except Exception:  # noqa: BLE001 - not a whole JSON value on the first line: the usual path decides
        return False
    return isinstance(first, dict) and _JSON_NON_SPACE.search(data, newline.end()) is not None


def load_results_file(data: bytes, file: str = "<input>", *, dataset: LoadReport | None = None) -> LoadReport:
    """Load a results file of any supported shape.

    Parameters
    ----------
    data : bytes
        An EvalResult file (JSONL, JSON, CSV), a mem0 LoCoMo results file, or a
        LoCoMo / LongMemEval question file (loaded with empty predictions).
    file : str
        Name used in issues.
    dataset : LoadReport, optional
        Passed to :func:`load_mem0_locomo` to give mem0 items the dataset's ids.

    Returns
    -------
    LoadReport
        Never raises for bad content: an undecodable or unparsable file yields no
        results and one located issue.
    """
    if _more_after_a_first_object(data):  # JSONL: not one JSON document, read line by line at once
        try:
            return read_results(data, file)
        except InputError:
            pass  # not decodable as a whole: below, a JSONL file keeps its good lines
    try:
        value, parsed = read_json_document(data, file)
    except InputError as exc:  # undecodable as a whole: a JSONL file keeps its good lines
        lines = lines_despite_bad_bytes(data, file, exc.issue)
        if lines is None:
            return LoadReport(file=file, format="unknown", issues=[exc.issue])
        return results_from_records(lines)
    if parsed.errors:
        return read_results(data, file)  # JSONL or CSV (or invalid JSON, reported with its position)
    kind = detect_format(value)
    if kind == "mem0_locomo":
        return load_mem0_locomo(value, file, dataset=dataset)
    if kind == "locomo":
        return load_locomo(value, file)
    if kind == "longmemeval":
        return load_longmemeval(value, file)
    return results_from_records(add_json_records(value, parsed))

