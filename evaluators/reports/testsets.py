"""Writers of keyword test sets: the answer template of a set, the JSON report, per-item / per-turn CSV of a report.

- :func:`answer_template`: the answers file a model run should produce for a test set, with
  every answer empty (``{id: ""}``, or ``{id: {turn: ""}}`` for multi-turn), in the layout
  :func:`evaluators.testsets.load_answers` reads.
- :func:`preview_rows`: the items (or turns) of a set, for a table before any answer exists.
- :func:`report_json`: the JSON report of a run (``testsets --output-file`` and ``--format json``, the
  page's "Download JSON report"), one writer for both.
- :func:`report_csv`: one row per item (single turn) or turn (multi-turn) with its score,
  through the one CSV writer (:mod:`evaluators.reports.csv_writer`).
"""

from __future__ import annotations

from typing import Any

from evaluators.io.json_text import dumps_pretty
from evaluators.reports.csv_writer import write_dict_csv
from evaluators.io.json_text import dumps_pretty

ITEM_COLUMNS = ("id", "category", "difficulty", "status", "score", "found", "missing", "human_score", "question",
                "expected_answer", "answer")
TURN_COLUMNS = ("dialogue_id", "turn", "requires_context", "status", "n_points", "n_covered", "coverage",
                "points_missed", "human_score", "user", "answer")


def answer_template(test_set) -> str:
    """The answers JSON for ``test_set`` with empty answers (UTF-8 text, ids in set order)."""
    if test_set.kind == "multi_turn":
        value: dict[str, Any] = {d.id: {str(t.turn): "" for t in sorted(d.turns, key=lambda t: t.turn)}
                                 for d in test_set.items}
    else:
        value = {item.id: "" for item in test_set.items}
    return dumps_pretty(value) + "\n"


def preview_rows(test_set) -> list[dict[str, Any]]:
    """Items (single turn: id, category, difficulty, keywords, question) or turns (multi-turn) of a set."""
    if test_set.kind == "multi_turn":
        return [{"dialogue": d.id, "scenario": d.scenario, "turn": t.turn, "user": t.user,
                 "expected points": len(t.expected_points), "requires context": t.requires_context}
                for d in test_set.items for t in sorted(d.turns, key=lambda t: t.turn)]
    return [{"id": i.id, "category": i.category, "difficulty": i.difficulty, "keywords": ", ".join(i.keywords),
             "question": i.question, "expected answer": i.expected_answer} for i in test_set.items]


def report_json(run) -> str:
    """The JSON report of a test-set run: its scores and, after review corrections, ``gt_patch``.

    Written by ``python -m evaluators testsets --output-file FILE`` and shown by ``--format json``
    (with a newline at the end on stdout), and offered by the Test sets page: one text for both.

    Parameters
    ----------
    run : evaluators.testsets.run.TestSetsReport
        What :func:`evaluators.testsets.run_testsets` returns; it must have scores.

    Returns
    -------
    str
        Pretty JSON (2-space indent, non-ASCII kept), no trailing newline.

    Raises
    ------
    ValueError
        When the run has no scores (no valid item in the test set).
    """
    return dumps_pretty(run.to_dict())


def report_csv(report) -> str:
    """Per-item (single turn) or per-turn (multi-turn) rows of a test-set report as CSV text.

    Columns :data:`ITEM_COLUMNS` or :data:`TURN_COLUMNS`, then ``signature``; keyword lists
    are joined with ``" | "``.
    """
    if report.kind == "multi_turn":
        rows = [{"dialogue_id": t.dialogue_id, "turn": t.turn, "requires_context": t.requires_context,
                 "status": t.status, "n_points": t.n_points, "n_covered": t.n_covered, "coverage": t.coverage,
                 "points_missed": " | ".join(p.point for p in t.points if not p.covered), "human_score": t.human_score,
                 "user": t.user, "answer": t.answer, "signature": report.signature}
                for d in report.dialogues for t in d.turns]
        return write_dict_csv([*TURN_COLUMNS, "signature"], rows)
    rows = [{"id": r.id, "category": r.category, "difficulty": r.difficulty, "status": r.status, "score": r.score,
             "found": " | ".join(r.found), "missing": " | ".join(r.missing), "human_score": r.human_score,
             "question": r.question, "expected_answer": r.expected_answer, "answer": r.answer,
             "signature": report.signature} for r in report.items]
    return write_dict_csv([*ITEM_COLUMNS, "signature"], rows)
