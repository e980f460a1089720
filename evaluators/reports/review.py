"""Review sessions written out: the persona human-annotation CSV (through the one CSV writer),
the GT corrections JSONL and the JSONL export (:mod:`evaluators.review.exchange`), for the CLI
and the Review page alike."""

from __future__ import annotations

import json
from collections.abc import Iterator

from evaluators.reports.csv_writer import write_csv
from evaluators.review.exchange import iter_export
from evaluators.review.store import ReviewStore

#: The persona human-annotation layout (the earlier script's CSV), plus who decided.
CSV_COLUMNS = ["scene", "dialogue_index", "context", "expected_response", "prediction", "exact_match",
               "content_correct", "style_consistent", "notes", "annotator", "label", "status"]
#: Decisions per CSV chunk when streaming.
CHUNK = 2_000


def iter_csv(store: ReviewStore, session_id: int) -> Iterator[str]:
    """Decisions in the persona human-annotation layout, streamed in chunks (header first).

    ``content_correct`` is 1 for ``acceptable_variant``, 0 for ``model_error`` and empty for
    ``gt_error`` (the reference is wrong, the reply is not judged); ``style_consistent`` is the
    1-5 score; ``notes`` the comment; ``exact_match`` the item's own, when it has one.
    """
    rows: list[list] = []
    header = True
    for d, p in store.iter_decisions_with_items(session_id):
        correct = {"acceptable_variant": 1, "model_error": 0}.get(d.label or "", "")
        rows.append([p.get("scene", ""), p.get("dialogue_index", p.get("id", "")),
                     p.get("context", p.get("question", "")),
                     p.get("ground_truth", ""), p.get("prediction", ""), p.get("exact_match", ""), correct,
                     "" if d.score is None else d.score, d.comment, d.annotator, d.label or "", d.status])
        if len(rows) >= CHUNK:
            yield _chunk(rows, header)
            rows, header = [], False
    if rows or header:
        yield _chunk(rows, header)


def _chunk(rows: list[list], header: bool) -> str:
    text = write_csv(CSV_COLUMNS, rows)
    return text if header else text.split("\r\n", 1)[1]


def export_csv(store: ReviewStore, session_id: int) -> str:
    """:func:`iter_csv` as one text."""
    return "".join(iter_csv(store, session_id))


def corrections_jsonl(store: ReviewStore, session_id: int) -> str:
    """The GT corrections of a session (items adjudicated ``gt_error``), one JSON object a line."""
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in store.gt_corrections(session_id))


def export_text(store: ReviewStore, session_id: int, fmt: str) -> Iterator[str]:
    """The export of a session in ``fmt`` (``jsonl``, ``csv`` or ``corrections``), streamed."""
    if fmt == "csv":
        return iter_csv(store, session_id)
    if fmt == "corrections":
        return iter([corrections_jsonl(store, session_id)])
    return iter_export(store, session_id)
