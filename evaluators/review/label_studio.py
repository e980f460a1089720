"""Review sessions as Label Studio tasks: export, and import through the one import path.

Label Studio's documented formats (https://labelstud.io/guide/task_format, "Label Studio JSON
format of annotated tasks" and "Specifying annotators during import"; https://labelstud.io/guide/tasks,
"Basic Label Studio JSON format"; https://labelstud.io/guide/predictions): a JSON array of tasks,
each with ``data`` (what the labeling interface shows), ``annotations`` (people's results) and
``predictions`` (a model's results, with ``model_version`` and ``score``).

Export (:func:`iter_tasks`), one task per item of the session, by position::

    {"data": {...the item's payload..., "evalboard": {"session", "item_digest", "position", "gold"}},
     "annotations": [{"completed_by": {"email": annotator}, "created_at", "updated_at", "lead_time",
                      "was_cancelled", "ground_truth": false,
                      "result": [{"from_name": "label", "to_name": ..., "type": "choices",
                                  "value": {"choices": [label]}},
                                 {"from_name": "score", ..., "type": "rating", "value": {"rating": 1-5}},
                                 {"from_name": "comment", ..., "type": "textarea", "value": {"text": [comment]}}]}],
     "drafts": [...as annotations: decisions saved as drafts...],
     "predictions": [{"model_version": system, "score": automatic score,
                      "result": [{... "type": "choices", "value": {"choices": [verdict]}}]}]}

``lead_time`` is the decision's time on the item in seconds (absent where it was not measured);
``created_at`` and ``updated_at`` are both its last save (the review store keeps no creation
time); a skipped decision is an annotation with ``was_cancelled``.  The prediction is the item's
automatic verdict (:data:`evaluators.review.items.AUTOMATIC`: exact match, judge, combined
or keyword score): ``acceptable_variant`` at a score of at least :data:`VERDICT_THRESHOLD`, else
``model_error``.  :func:`layout` says which payload fields every item has; the labeling config
(:func:`evaluators.reports.review.label_studio_config`) shows those and names the controls the
results use, so the two always match.

Import (:func:`import_label_studio`) turns each task into the lines of the JSONL format (an item
line, a decision line per annotation and draft) and hands them to
:func:`evaluators.review.exchange.import_records`: the same checks, batches and version-respecting
writes as a JSONL import.  A file from Label Studio keeps no versions, so against a stored
decision its ``updated_at`` alone decides (later replaces, earlier or equal and different is a
conflict), and the write is still version-checked.  ``completed_by`` may be
``{"email": ...}`` (the annotator is the e-mail), a Label Studio user id (annotator
``label-studio user <id>``) or null (the importing user), as Label Studio's own import takes it.
Predictions are not imported (the item keeps its own scores).  Every problem is located by the
task's line and JSON path (``[3].annotations[1].result``); the other tasks still import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import PurePath
from typing import IO, Any

from evaluators.io import InputIssue
from evaluators.io.json_array import iter_json_array
from evaluators.review.items import automatic_score, value_at
from evaluators.review.exchange import ImportReport, Record, import_records
from evaluators.review.store import ALL_LABELS, LABELS, PAIR_LABELS, ReviewStore, is_two_sided, item_digest

#: An automatic score at least this high is the verdict ``acceptable_variant`` (as in
#: :func:`evaluators.review.agreement.automatic_agreement`'s default threshold).
VERDICT_THRESHOLD = 0.5
#: Names of the labeling config's controls (``from_name`` of the results).
LABEL, SCORE, COMMENT = "label", "score", "comment"
#: Key of EvalBoard's own fields in a task's ``data``.
META = "evalboard"
#: Payload fields shown by the labeling config when every item has them: (tag name, path, header).
SHOWN = (("question", ("question",), "Question · 问题"), ("context", ("context",), "Context · 上下文"),
         ("ground_truth", ("ground_truth",), "Ground truth · 标准答案"),
         ("prediction", ("prediction",), "Prediction · 模型输出"),
         ("prediction_a", ("sides", "A", "prediction"), "A"), ("prediction_b", ("sides", "B", "prediction"), "B"),
         ("system", ("system",), "System · 系统"))
_CANONICAL_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00\Z")


@dataclass(frozen=True)
class Layout:
    """What the tasks of a session and their labeling config share.

    Attributes
    ----------
    session : str
    shown : tuple of (name, path, header)
        Payload fields every item has as text or a number (the config's ``<Text>`` tags; the
        system only outside blind sessions).
    labels : tuple of str
        The choices (one-sided labels, A/B labels, or both).
    to_name : str
        The object tag every result refers to (the first shown field, else ``item``, which
        shows the item's digest).
    labels_help : dict
        The session's one-line definition of each label (shown as the choice's hint).
    """

    session: str
    shown: tuple[tuple[str, tuple[str, ...], str], ...]
    labels: tuple[str, ...]
    to_name: str
    labels_help: dict


def layout(store: ReviewStore, session_id: int) -> Layout:
    """The :class:`Layout` of a session (one pass over its items)."""
    s = store.session(session_id)
    present = {name: True for name, _path, _header in SHOWN}
    one_sided = two_sided = False
    for item in store.iter_items(session_id):
        pair = is_two_sided(item.payload)
        two_sided |= pair
        one_sided |= not pair
        for name, path, _header in SHOWN:
            value = value_at(item.payload, path)
            if present[name] and (isinstance(value, bool) or not isinstance(value, (str, int, float))):
                present[name] = False
    shown = tuple(f for f in SHOWN if present[f[0]] and not (s.blind and f[0] == "system"))
    labels = (LABELS if one_sided or not two_sided else ()) + (PAIR_LABELS if two_sided else ())
    return Layout(s.name, shown, labels, shown[0][0] if shown else "item",
                  dict((s.settings or {}).get("labels_help") or {}))


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)


def _results(to_name: str, label: str | None, score: int | None, comment: str) -> list[dict]:
    out = []
    if label is not None:
        out.append({"from_name": LABEL, "to_name": to_name, "type": "choices", "value": {"choices": [label]}})
    if score is not None:
        out.append({"from_name": SCORE, "to_name": to_name, "type": "rating", "value": {"rating": score}})
    if comment:
        out.append({"from_name": COMMENT, "to_name": to_name, "type": "textarea", "value": {"text": [comment]}})
    return out


def _task(lay: Layout, item, decisions: list) -> dict:
    payload = dict(item.payload)
    meta = {"session": lay.session, "item_digest": item.digest, "position": item.position, "gold": item.gold}
    if META in payload:  # a payload field of that name travels inside ours
        meta["payload_" + META] = payload.pop(META)
    task: dict[str, Any] = {"data": {**payload, META: meta}, "annotations": [], "predictions": []}
    for d in decisions:
        annotation = {"completed_by": {"email": d.annotator}, "created_at": d.updated_at,
                      "updated_at": d.updated_at, "was_cancelled": d.status == "skipped", "ground_truth": False,
                      "result": _results(lay.to_name, d.label, d.score, d.comment)}
        if d.seconds is not None:
            annotation["lead_time"] = d.seconds
        if d.status == "draft":
            task.setdefault("drafts", []).append(annotation)
        else:
            task["annotations"].append(annotation)
    value, what = automatic_score(item.payload)
    if value is not None:
        verdict = "acceptable_variant" if value >= VERDICT_THRESHOLD else "model_error"
        task["predictions"].append({"model_version": str(item.payload.get("system") or what), "score": value,
                                    "result": _results(lay.to_name, verdict, None, "")})
    return task


def iter_tasks(store: ReviewStore, session_id: int) -> Iterator[str]:
    """The session as a Label Studio JSON array of tasks, streamed (one task a line; see the module docstring)."""
    lay = layout(store, session_id)
    decisions = store.iter_decisions(session_id)  # by item position then annotator, as the items
    pending = next(decisions, None)
    yield "["
    for n, item in enumerate(store.iter_items(session_id)):
        mine = []
        while pending is not None and pending.item_id == item.id:
            mine.append(pending)
            pending = next(decisions, None)
        yield ("\n" if n == 0 else ",\n") + _dumps(_task(lay, item, mine))
    yield "\n]\n"


def export_tasks(store: ReviewStore, session_id: int) -> str:
    """:func:`iter_tasks` as one text (small sessions, downloads)."""
    return "".join(iter_tasks(store, session_id))


# ---------------------------------------------------------------- import
def _stamp(value: Any, field: str) -> str | None:
    """A time as EvalBoard writes it (UTC, microseconds, ``+00:00``); Label Studio writes ``...Z``."""
    if value is None or (isinstance(value, str) and _CANONICAL_STAMP.match(value)):
        return value
    if not isinstance(value, str) or len(value) > 40:
        raise ValueError(f"{field} must be an ISO 8601 time, not {_show(value)}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{field} must be an ISO 8601 time, not {_show(value)}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _show(value: Any) -> str:
    return repr(value[:60]) if isinstance(value, str) else (
        repr(value) if value is None or isinstance(value, (bool, int, float)) else f"a JSON {type(value).__name__}")


def _annotator(value: Any, created_by: str) -> str:
    if value is None:
        return created_by
    if isinstance(value, dict):
        if isinstance(value.get("email"), str):
            return value["email"]
        if isinstance(value.get("id"), int) and not isinstance(value.get("id"), bool):
            return f"label-studio user {value['id']}"
    elif isinstance(value, int) and not isinstance(value, bool):
        return f"label-studio user {value}"
    elif isinstance(value, str):
        return value
    raise ValueError(f"completed_by must be a user id, {{\"email\": ...}} or null, not {_show(value)}")


def _decision(annotation: Any, created_by: str, draft: bool) -> dict:
    """The decision (JSONL format, no version) of one Label Studio annotation or draft."""
    if not isinstance(annotation, dict):
        raise ValueError(f"an annotation must be a JSON object, not {_show(annotation)}")
    results = annotation.get("result", [])
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise ValueError("result must be a list of objects")
    found: dict[str, list[dict]] = {}
    for r in results:
        found.setdefault(str(r.get("type")), []).append(r)
    label = score = None
    comment = ""
    choices = found.get("choices", [])
    if len(choices) > 1:
        choices = [r for r in choices if r.get("from_name") == LABEL]
        if len(choices) != 1:
            raise ValueError("result holds several choices and none (or more than one) is named 'label'")
    if choices:
        picked = (choices[0].get("value") or {}).get("choices") if isinstance(choices[0].get("value"), dict) else None
        if not (isinstance(picked, list) and len(picked) == 1 and isinstance(picked[0], str)):
            raise ValueError(f"a choices result must hold one choice (value.choices), not {_show(picked)}")
        label = picked[0]
        if label not in ALL_LABELS:
            raise ValueError(f"the choice {label!r} is not one of {', '.join(ALL_LABELS)} (label the project with "
                             "the labeling config of `review export --format label-studio-config`)")
    for kind, key in (("rating", "rating"), ("textarea", "text")):
        if len(found.get(kind, [])) > 1:
            raise ValueError(f"result holds several {kind} results")
        if found.get(kind):
            value = found[kind][0].get("value")
            value = value.get(key) if isinstance(value, dict) else None
            if kind == "rating":
                score = value
            elif isinstance(value, list) and all(isinstance(t, str) for t in value):
                comment = "\n".join(value)
            elif isinstance(value, str):
                comment = value
            else:
                raise ValueError(f"a textarea result must hold value.text (a list of strings), not {_show(value)}")
    cancelled = annotation.get("was_cancelled", False)
    if not isinstance(cancelled, bool):
        raise ValueError(f"was_cancelled must be true or false, not {_show(cancelled)}")
    status = "skipped" if cancelled else "draft" if draft else "submitted"
    lead_time = annotation.get("lead_time")
    if lead_time is not None and (isinstance(lead_time, bool) or not isinstance(lead_time, (int, float))
                                  or not 0 <= lead_time < 1e7):
        raise ValueError(f"lead_time must be a non-negative number of seconds, not {_show(lead_time)}")
    stamp = _stamp(annotation.get("updated_at") or annotation.get("created_at"), "updated_at")
    return {"type": "decision", "annotator": _annotator(annotation.get("completed_by"), created_by), "label": label,
            "score": score, "comment": comment, "status": status, "updated_at": stamp, "seconds": lead_time}


#: Keys of a task beside its data (a task without ``data`` is all data but these, as Label Studio reads it).
_TASK_KEYS = ("id", "annotations", "completions", "drafts", "predictions", "meta", "created_at", "updated_at",
              "project")


def task_records(index: int, line: int, task: Any, file: str, *, session: str | None, default_session: str,
                 created_by: str) -> Iterator[Record | InputIssue]:
    """The JSONL-format records of one task (an item, then a decision per annotation and draft),
    and an issue for each annotation that cannot be read.

    Raises
    ------
    ValueError
        A task that is not an object or whose ``data`` is not (located by the caller at ``[index]``).
    """
    if not isinstance(task, dict):
        raise ValueError(f"a task must be a JSON object, not {_show(task)}")
    data = task["data"] if "data" in task else {k: v for k, v in task.items() if k not in _TASK_KEYS}
    if not isinstance(data, dict):
        raise ValueError(f"data must be a JSON object, not {_show(data)}")
    meta = data.get(META) if isinstance(data.get(META), dict) else {}
    payload = {k: v for k, v in data.items() if k != META or not meta}
    if "payload_" + META in meta:
        payload[META] = meta["payload_" + META]
    name = session or (meta.get("session") if isinstance(meta.get("session"), str) else None) or default_session
    where = f"[{index}]"
    item = {"type": "item", "session": name, "item": payload, "item_digest": meta.get("item_digest"),
            "position": meta.get("position"), "gold": meta.get("gold")}
    yield line, item, where + ".data", False
    digest = meta.get("item_digest") if isinstance(meta.get("item_digest"), str) else None
    for key, draft in (("annotations", False), ("completions", False), ("drafts", True)):
        entries = task.get(key) or []
        if not isinstance(entries, list):
            entries = [entries]  # reported below as not an object
        for n, annotation in enumerate(entries):
            at = f"{where}.{key}[{n}]"
            try:
                dec = _decision(annotation, created_by, draft)
            except ValueError as exc:
                yield InputIssue(file, str(exc), line=line, path=at)
                continue
            # the item by its digest: known once its item record is checked (a bad item fails its decisions)
            dec.update(session=name, item_digest=digest or _digest_or_none(payload))
            yield line, dec, at, True


def _digest_or_none(payload: dict) -> str | None:
    try:
        return item_digest(payload)
    except (TypeError, ValueError, RecursionError):
        return None


def import_label_studio(store: ReviewStore, data: bytes | IO[bytes], file: str = "<tasks>", *,
                        session: str | None = None, created_by: str = "import",
                        audit: Mapping[str, Any] | None = None, dry_run: bool = False) -> ImportReport:
    """Import a Label Studio JSON export (or one task object) into a review session.

    Parameters
    ----------
    data : bytes or binary file
        Read in chunks, one task at a time (:func:`~evaluators.io.json_array.iter_json_array`).
    session : str, optional
        The session to import into; default the session named in the tasks (an EvalBoard
        export), else ``Label Studio: <file name>``.
    created_by : str
        Owner of a new session, and the annotator of annotations with ``completed_by: null``.
    audit : mapping, optional
        The import's audit row, written with its first write
        (:func:`evaluators.review.exchange.import_records`).
    dry_run : bool
        Report what the import would do and store nothing (:func:`~evaluators.review.exchange.import_records`).

    Returns
    -------
    ImportReport
        As :func:`evaluators.review.exchange.import_jsonl`; problems located by line and path.
    """
    default = f"Label Studio: {PurePath(file).name}"[:256]

    def records() -> Iterator[Record | InputIssue]:
        for got in iter_json_array(data, file, allow_object=True):
            if isinstance(got, InputIssue):
                yield got
                continue
            index, line, task = got
            try:
                yield from task_records(index, line, task, file, session=session, default_session=default,
                                        created_by=created_by)
            except ValueError as exc:
                yield InputIssue(file, str(exc), line=line, path=f"[{index}]")

    return import_records(store, records(), file, created_by=created_by, audit=audit, dry_run=dry_run)


def looks_like_label_studio(head: bytes) -> bool:
    """Whether a file's first bytes start a JSON array (a Label Studio export), not JSONL."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"["
