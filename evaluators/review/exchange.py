"""Review decisions in and out: JSONL (one decision a line, idempotent import) (the persona CSV layout is written by
:mod:`evaluators.reports.review`).

JSONL lines (sorted by item digest, then annotator, so an export is reproducible)::

    {"session": name, "kind": kind, "item_digest": sha256, "item": {...payload...}, "annotator": ...,
     "label": ..., "score": ..., "comment": ..., "status": ..., "updated_at": ...}

Importing a file creates the session and items it names when missing and writes each decision
keyed on (item digest, annotator): importing the same file twice changes nothing, and export ->
import into an empty database -> export gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from evaluators.io import InputIssue
from evaluators.io.readers import iter_jsonl
from evaluators.review.store import ALL_LABELS, STATUSES, ReviewStore, item_digest


def export_jsonl(store: ReviewStore, session_id: int) -> str:
    """Every decision of a session as JSONL text (see the module docstring)."""
    s = store.session(session_id)
    items = {i.id: i for i in store.items(session_id)}
    lines = []
    for d in sorted(store.decisions(session_id), key=lambda d: (d.item_digest, d.annotator)):
        lines.append(json.dumps({"session": s.name, "kind": s.kind, "item_digest": d.item_digest,
                                 "item": items[d.item_id].payload, "annotator": d.annotator, "label": d.label,
                                 "score": d.score, "comment": d.comment, "status": d.status,
                                 "updated_at": d.updated_at}, ensure_ascii=False, sort_keys=True))
    return "".join(line + "\n" for line in lines)


def import_jsonl(store: ReviewStore, data: bytes, file: str = "<decisions>", *,
                 created_by: str = "import") -> tuple[int, int, list[InputIssue]]:
    """Import decisions; returns ``(written, unchanged, problems)``.

    A line whose item payload does not match its ``item_digest``, or with an unknown label or
    status, is reported with its line number and skipped; the rest is imported.
    """
    written = unchanged = 0
    issues: list[InputIssue] = []
    sessions: dict[str, int] = {}
    for rec in iter_jsonl(data, file):
        if isinstance(rec, InputIssue):
            issues.append(rec)
            continue
        d: dict[str, Any] = rec.data if isinstance(rec.data, dict) else {}
        where = {"line": rec.line}
        payload, name = d.get("item"), d.get("session")
        if not isinstance(payload, dict) or not isinstance(name, str) or not name.strip():
            issues.append(InputIssue(file, "expected an object with 'session' and 'item'", **where))
            continue
        if d.get("item_digest") and d["item_digest"] != item_digest(payload):
            issues.append(InputIssue(file, "item_digest does not match the item (edited by hand?)", **where))
            continue
        if d.get("label") is not None and d.get("label") not in ALL_LABELS or d.get("status") not in STATUSES:
            issues.append(InputIssue(file, f"label must be one of {', '.join(ALL_LABELS)} (or null) and status one "
                                           f"of {', '.join(STATUSES)}", **where))
            continue
        score = d.get("score")
        if score is not None and not (isinstance(score, int) and 1 <= score <= 5):
            issues.append(InputIssue(file, "score must be an integer from 1 to 5 or null", **where))
            continue
        annotator = str(d.get("annotator") or "").strip()
        if not annotator:
            issues.append(InputIssue(file, "a decision needs an annotator", **where))
            continue
        if name not in sessions:
            existing = store.session_by_name(name)
            if existing is None:
                existing = store.create_session(name, str(d.get("kind") or "import"), [payload], created_by=created_by)
            sessions[name] = existing.id
        item = store.add_item(sessions[name], payload)
        changed = store.put_decision(item.id, annotator, label=d.get("label"), score=score,
                                     comment=str(d.get("comment") or ""), status=d["status"],
                                     updated_at=str(d.get("updated_at") or ""))
        written += changed
        unchanged += not changed
    return written, unchanged, issues
