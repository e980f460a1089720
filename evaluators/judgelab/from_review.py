"""The calibration set from review sessions: human final labels with their guidelines version.

The final label of an item is :func:`evaluators.review.gt_patch.final_labels` (adjudicated, else the label
every submitted decision agrees on).  It becomes a :class:`~evaluators.judgelab.calibration.HumanLabel`:
1 for ``correct`` / ``acceptable_variant``, 0 for ``model_error``; ``gt_error`` items are left out (the
reference itself was wrong, so neither the judge nor the people judged the output against it) and counted.

The guidelines version of a label names the text, not only the session's counter, since two sessions both
at "version 1" may have different guidelines: ``v{n}:{first 8 hex of the SHA-256 of the text}``.  An agreed
label takes the version its submitted decisions were made under (decisions under several versions give
``mixed(...)``, which :func:`~evaluators.judgelab.calibration.check_guidelines` then refuses unless pooled);
an adjudicated label takes the session's current version (adjudications keep no version of their own);
no guidelines or no recorded version: ``""``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.judgelab.calibration import HumanLabel
from evaluators.results import DictMixin
from evaluators.review.gt_patch import final_labels
from evaluators.review.store import ReviewStore, Session, guidelines_versions, human_verdict


def default_item_id(payload: Mapping[str, Any]) -> str:
    """An item's calibration id: the record ``id``, with ``@system`` when the item names one (a record is
    judged once per system that answered it)."""
    record = str(payload.get("id", ""))
    system = payload.get("system")
    return f"{record}@{system}" if system not in (None, "") else record


def default_slice(payload: Mapping[str, Any]) -> str:
    """An item's slice: ``question_type``, else ``category``, else ``slice``, else ``""``."""
    for key in ("question_type", "category", "slice"):
        if payload.get(key) not in (None, ""):
            return str(payload[key])
    return ""


def _version_names(session: Session) -> dict[int, str]:
    return {int(v["version"]): f"v{v['version']}:{hashlib.sha256(str(v.get('text') or '').encode('utf-8')).hexdigest()[:8]}"
            for v in guidelines_versions(session)}


@dataclass(frozen=True)
class ReviewLabels(DictMixin):
    """Labels read from review sessions.

    Attributes
    ----------
    labels : tuple of HumanLabel
    left_out : tuple of (str, str)
        ``(item id, why)``: GT errors and final labels that are not a right / wrong verdict.
    """

    labels: tuple[HumanLabel, ...]
    left_out: tuple[tuple[str, str], ...]


def labels_from_review(store: ReviewStore, session_ids: Sequence[int], *,
                       item_id: Callable[[Mapping[str, Any]], str] = default_item_id,
                       slice_of: Callable[[Mapping[str, Any]], str] = default_slice) -> ReviewLabels:
    """The final labels of review sessions as a calibration set.

    Parameters
    ----------
    store : ReviewStore
    session_ids : sequence of int
        Sessions on the same dataset; an item id must not come twice.
    item_id : callable
        ``payload -> str``: the id the judge's verdicts are keyed by (default :func:`default_item_id`).
    slice_of : callable
        ``payload -> str`` (default :func:`default_slice`).

    Returns
    -------
    ReviewLabels
    """
    labels: list[HumanLabel] = []
    left_out: list[tuple[str, str]] = []
    for session_id in session_ids:
        session = store.session(session_id)
        names = _version_names(session)
        current = names.get(session.guidelines_version, "") if session.guidelines_version is not None else ""
        decided: dict[int, set] = {}
        for d in store.decisions(session_id):
            if d.status == "submitted" and d.label is not None:
                decided.setdefault(d.item_id, set()).add(d.guidelines_version)
        for final in final_labels(store, session_id):
            key = item_id(final.item.payload)
            verdict = human_verdict(final.label)
            if verdict is None:
                left_out.append((key, f"final label {final.label}: not a right / wrong verdict on the output"))
                continue
            if final.source == "adjudicated":
                version = current
            else:
                found = sorted({names.get(v, "") if v is not None else "" for v in decided.get(final.item.id, ())})
                version = found[0] if len(found) == 1 else f"mixed({', '.join(v or '(none)' for v in found)})"
            labels.append(HumanLabel(key, verdict, slice_of(final.item.payload), version))
    return ReviewLabels(tuple(labels), tuple(left_out))


@dataclass(frozen=True)
class ReviewRef(DictMixin):
    """Where a calibration item lives in the review database: its session and its item's database id.

    Attributes
    ----------
    item_id : str
        The calibration id (:func:`default_item_id` of the payload).
    session : int
        The review session's id.
    item : int
        The review item's database id (the ``item`` of a Review link).
    answer_length : int or None
        Characters of the payload's ``prediction`` (Chinese characters count one each); ``None`` without one.
    """

    item_id: str
    session: int
    item: int
    answer_length: int | None = None


def review_refs(store: ReviewStore, session_ids: Sequence[int], *,
                item_id: Callable[[Mapping[str, Any]], str] = default_item_id) -> tuple[ReviewRef, ...]:
    """Each item of review sessions as a :class:`ReviewRef`, in session then item order.

    Parameters
    ----------
    store : ReviewStore
    session_ids : sequence of int
    item_id : callable
        ``payload -> str``, as given to :func:`labels_from_review`.

    Returns
    -------
    tuple of ReviewRef
        The first item of an id that comes twice is kept.
    """
    seen: dict[str, ReviewRef] = {}
    for session_id in session_ids:
        for item in store.items(session_id):
            key = item_id(item.payload)
            prediction = item.payload.get("prediction")
            length = len(prediction) if isinstance(prediction, str) else None
            seen.setdefault(key, ReviewRef(key, int(session_id), int(item.id), length))
    return tuple(seen.values())
