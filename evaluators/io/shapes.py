"""Which input a file belongs to, from the field names it holds: a file put in the wrong uploader (or given
to the wrong command or flag) is named in one line that says where it goes.

A reader that could use nothing of a file asks :func:`misplaced` before it lists what is missing in every
record: LongMemEval predictions (``question_id`` + ``hypothesis``) given as memory *Results* are one line
naming *Predictions by question_id* (``--predictions``), not 500 identical "missing 'question_type'"
lines; a narrative JSON v3 file given to ``qa`` names the narrative command, not 20 field names.  The
message names the page's uploader and the command line's flag, so the page and the CLI say the same.
The readers that ask: memory results, questions and predictions (:mod:`evaluators.memory.inputs`), QA
records (:func:`evaluators.qa.run.run_qa`), narrative documents (:func:`evaluators.narrative.loader.load_document`),
test sets (:func:`evaluators.testsets.schema.load_test_set`) and persona test cases
(:func:`evaluators.dialogue.inputs.load_cases`).

Only the field names in the first megabyte are read (JSON and JSONL keys, a CSV header): a guess about
the file's kind, used only to explain a file that could not be used as given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evaluators.io.errors import InputIssue

#: Bytes of a file whose field names are read.
HEAD_BYTES = 1 << 20

_KEY = re.compile(rb'"([^"\\\n]{1,64})"\s*:')


@dataclass(frozen=True)
class Shape:
    """A kind of input file and where it goes.

    Attributes
    ----------
    kind : str
        ``narrative``, ``memory_predictions``, ``memory_judged_predictions``, ``memory_questions``,
        ``memory_results``, ``judge_cache``, ``persona_cases``, ``test_set``.
    what : str
        What the file looks like, with the fields that say so.
    goes : str
        The page uploader and the command or flag it belongs to.
    """

    kind: str
    what: str
    goes: str


SHAPES = {
    "narrative": Shape("narrative", "a narrative annotation (JSON v3: characters, narrative_events)",
                       "the Narrative page's Ground-truth files or Prediction files (evalboard narrative GT PRED)"),
    "memory_judged_predictions": Shape(
        "memory_judged_predictions",
        "LongMemEval predictions with judge labels (question_id + hypothesis + autoeval_label)",
        "Predictions by question_id (memory --predictions) or Stored judge labels (--labels), with the "
        "LongMemEval question file in Questions (--questions)"),
    "memory_predictions": Shape(
        "memory_predictions", "predictions keyed by question_id (question_id + hypothesis)",
        "Predictions by question_id (memory --predictions), with the question file in Questions (--questions)"),
    "memory_questions": Shape("memory_questions", "a LoCoMo or LongMemEval question file",
                              "Questions on the Long Memory page (memory --questions)"),
    "memory_results": Shape("memory_results", "long-term-memory results (question_id, question_type, ...)",
                            "Results on the Long Memory page (evalboard memory RESULTS)"),
    "judge_cache": Shape("judge_cache", "an EvalBoard judge cache",
                         "Judge cache on the Long Memory page (memory --cache)"),
    "persona_cases": Shape("persona_cases", "persona dialogue test cases (test_cases_by_scene)",
                           "Test cases on the Persona Dialogue page (evalboard dialogue CASES PRED)"),
    "test_set": Shape("test_set", "a keyword test set (items with keywords / expected points)",
                      "Test set on the Test Sets page (evalboard testsets ITEMS ANSWERS)"),
}


def field_names(data: Any, limit: int = HEAD_BYTES) -> set[str]:
    """The field names in the first ``limit`` bytes of ``data`` (bytes-like): JSON / JSONL keys, or a CSV header.

    Parameters
    ----------
    data : bytes-like or None
        A file's bytes (only the head is read).
    limit : int
        Bytes looked at.

    Returns
    -------
    set of str
        Empty when nothing looks like a field name.

    Examples
    --------
    >>> sorted(field_names(b'{"question_id": "q1", "hypothesis": "x"}'))
    ['hypothesis', 'question_id']
    """
    head = bytes(data[:limit]) if data is not None else b""
    keys = {m.group(1).decode("utf-8", "replace") for m in _KEY.finditer(head)}
    if not keys:  # CSV: the header line
        first = head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].decode("utf-8", "replace")
        if "," in first and "{" not in first:
            keys = {c.strip().strip('"') for c in first.split(",") if c.strip()}
    return keys


def sniff(data: Any) -> Shape | None:
    """The :class:`Shape` ``data`` (the file's bytes) looks like, or ``None`` when its fields say nothing sure.

    Parameters
    ----------
    data : bytes-like or None
        A file's bytes.

    Returns
    -------
    Shape or None
        What the file is and where it belongs (page uploader, CLI flag).

    Examples
    --------
    >>> sniff(b'{"test_cases_by_scene": {}}').kind
    'persona_cases'
    """
    keys = field_names(data)
    if not keys:
        return None
    if "narrative_events" in keys or {"characters", "source_info"} <= keys:
        return SHAPES["narrative"]
    if "format" in keys and b"evalboard-memory-judge-cache" in bytes(data[:4096]):
        return SHAPES["judge_cache"]
    if "test_cases_by_scene" in keys:
        return SHAPES["persona_cases"]
    if "items" in keys and keys & {"expected_answer", "keywords", "expected_points", "turns"}:
        return SHAPES["test_set"]
    if {"question_id", "hypothesis"} <= keys and "question" not in keys:
        return SHAPES["memory_judged_predictions" if "autoeval_label" in keys else "memory_predictions"]
    if "question_id" in keys and keys & {"haystack_sessions", "haystack_session_ids", "answer_session_ids",
                                         "n_haystack_sessions"}:
        return SHAPES["memory_questions"]
    if {"qa", "conversation"} <= keys:
        return SHAPES["memory_questions"]
    if {"question_id", "question_type"} <= keys and keys & {"ground_truth", "prediction"}:
        return SHAPES["memory_results"]
    return None


def misplaced(file: str, data: Any, given_as: str, *, accepts: tuple[str, ...] = ()) -> InputIssue | None:
    """One located issue saying where ``data`` goes when it looks like another input's file, else ``None``.

    Parameters
    ----------
    file : str
        The file's name, as in every message.
    data : bytes-like
        Its content (the first :data:`HEAD_BYTES` are read).
    given_as : str
        What it was given as, for the message: ``"memory results (Results, RESULTS)"``.
    accepts : tuple of str
        The :class:`Shape` kinds this input takes (no issue for those).
    """
    shape = sniff(data)
    if shape is None or shape.kind in accepts:
        return None
    return InputIssue(file, f"this is {shape.what}, not {given_as}: it goes in {shape.goes}", path=None,
                      kind="wrong_input")
