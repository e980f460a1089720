"""Review decisions as CSV in the persona human-annotation layout (through the one CSV writer)."""

from __future__ import annotations

from evaluators.reports.csv_writer import write_csv
from evaluators.review.store import ReviewStore

#: The persona human-annotation layout (the earlier script's CSV), plus who decided.
CSV_COLUMNS = ["scene", "dialogue_index", "context", "expected_response", "prediction", "exact_match",
               "content_correct", "style_consistent", "notes", "annotator", "label", "status"]


def export_csv(store: ReviewStore, session_id: int) -> str:
    """Decisions in the persona human-annotation layout (one writer).

    ``content_correct`` is 1 for ``acceptable_variant``, 0 for ``model_error`` and empty for
    ``gt_error`` (the reference is wrong, the reply is not judged); ``style_consistent`` is the
    1-5 score; ``notes`` the comment; ``exact_match`` the item's own, when it has one.
    """
    items = {i.id: i for i in store.items(session_id)}
    rows = []
    for d in store.decisions(session_id):
        p = items[d.item_id].payload
        correct = {"acceptable_variant": 1, "model_error": 0}.get(d.label or "", "")
        rows.append([p.get("scene", ""), p.get("dialogue_index", p.get("id", "")),
                     p.get("context", p.get("question", "")),
                     p.get("ground_truth", ""), p.get("prediction", ""), p.get("exact_match", ""), correct,
                     "" if d.score is None else d.score, d.comment, d.annotator, d.label or "", d.status])
    return write_csv(CSV_COLUMNS, rows)
