"""From review decisions to a GT patch (:mod:`evaluators.io.gt_patch`) and to human labels.

The final label of an item is its adjudication when there is one, else the label every
submitted decision agrees on (at least one).  Items whose submitted labels disagree and are
not adjudicated have no final label yet.  From the final labels:

- ``acceptable_variant``: the prediction becomes one more accepted answer of the record
  (``add_answer``);
- ``gt_error`` with a corrected answer (typed at adjudication,
  :meth:`~evaluators.review.store.ReviewStore.adjudicate`): the record's answers become the
  corrected one (``replace``); without one the item is listed as skipped;
- ``model_error``: the GT stands, nothing to patch.

The ground truth itself is never edited: the patch is applied when scoring (``--gt-patch``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluators.io.gt_patch import OP_ADD, OP_REPLACE, PatchEntry
from evaluators.results import DictMixin
from evaluators.review.store import LABELS, Item, ReviewStore

#: Item kinds whose payload has a record ``id``, a ``ground_truth`` and a ``prediction`` (one side).
PATCHABLE_KINDS = ("qa", "testsets", "memory", "dialogue")


@dataclass(frozen=True)
class FinalLabel(DictMixin):
    """The final human label of one item.

    Attributes
    ----------
    item : Item
    label : str
        One of :data:`~evaluators.review.store.LABELS`.
    who : str
        The adjudicator, or the agreeing annotators (comma-separated).
    source : {"adjudicated", "agreed"}
    comment : str
    corrected_answer : str or None
        For ``gt_error`` (adjudicated only).
    """

    item: Item
    label: str
    who: str
    source: str
    comment: str = ""
    corrected_answer: str | None = None


def final_labels(store: ReviewStore, session_id: int) -> list[FinalLabel]:
    """The final label of every item that has one, in item order (see the module docstring)."""
    adjudicated = {a["item_id"]: a for a in store.adjudications(session_id)}
    submitted: dict[int, list] = {}
    for d in store.decisions(session_id):
        if d.status == "submitted" and d.label is not None:
            submitted.setdefault(d.item_id, []).append(d)
    out = []
    for item in store.items(session_id):
        a = adjudicated.get(item.id)
        if a is not None:
            if a["label"] in LABELS:
                out.append(FinalLabel(item, a["label"], a["adjudicator"], "adjudicated", a["comment"] or "",
                                      a.get("corrected_answer")))
            continue
        ds = submitted.get(item.id, [])
        if ds and len({d.label for d in ds}) == 1 and ds[0].label in LABELS:
            comments = "; ".join(d.comment for d in ds if d.comment)
            out.append(FinalLabel(item, ds[0].label, ", ".join(sorted(d.annotator for d in ds)), "agreed", comments))
    return out


@dataclass(frozen=True)
class PatchBuild(DictMixin):
    """The patch made from a session's decisions.

    Attributes
    ----------
    entries : tuple of PatchEntry
        In item order; an answer accepted on several items of one record id (several systems gave
        it) is added once.
    skipped : tuple of (str, str)
        ``(record id or item position, why)`` for final labels that give no entry although
        they correct something (a GT error without corrected answer, an id not in the GT ...).
    """

    entries: tuple[PatchEntry, ...]
    skipped: tuple[tuple[str, str], ...]


def _payload_answers(payload: Mapping) -> tuple[str, ...]:
    gt = payload.get("ground_truth")
    if isinstance(gt, list):
        return tuple(str(g) for g in gt)
    if not isinstance(gt, str) or not gt.strip():
        return ()
    # QA items show several answers joined by " | " (evaluators.review.items.qa_items)
    return tuple(gt.split(" | ")) if payload.get("kind") == "qa" else (gt,)


def build_gt_patch(store: ReviewStore, session_id: int, gt_digest: str,
                   gold: Mapping[str, Sequence[str]] | None = None) -> PatchBuild:
    """Turn a session's final labels into GT patch entries.

    Parameters
    ----------
    store : ReviewStore
    session_id : int
    gt_digest : str
        SHA-256 of the GT file the session's records come from
        (:func:`evaluators.io.gt_patch.file_sha256`).
    gold : mapping of str to sequence of str, optional
        Record id -> GT answers of that file: the entries' ``old`` values, and a check that each
        id is in the file.  Without it ``old`` is taken from the item as shown to the reviewers.

    Returns
    -------
    PatchBuild
    """
    session = store.session(session_id)
    entries: list[PatchEntry] = []
    skipped: list[tuple[str, str]] = []
    added: set[tuple[str, str]] = set()
    for f in final_labels(store, session_id):
        p = f.item.payload
        if f.label == "model_error":
            continue
        rid = str(p.get("id") or "").strip()
        where = rid or f"item {f.item.position + 1}"
        if p.get("kind") not in PATCHABLE_KINDS or not rid:
            skipped.append((where, f"a {p.get('kind')!r} item has no single record to correct"))
            continue
        if gold is not None and rid not in gold:
            skipped.append((rid, "record id not in the GT file"))
            continue
        old = tuple(gold[rid]) if gold is not None else _payload_answers(p)
        why = f.label + (f": {f.comment}" if f.comment else "") + (" (agreed)" if f.source == "agreed" else "")
        if f.label == "acceptable_variant":
            prediction = str(p.get("prediction") or "").strip()
            if not prediction:
                skipped.append((rid, "acceptable variant of an empty prediction"))
                continue
            if (rid, prediction) in added:
                continue  # the same answer accepted for another system's record of this question: once
            added.add((rid, prediction))
            entries.append(PatchEntry(rid, gt_digest, OP_ADD, old, (prediction,), f.who, why, session.name))
        elif f.label == "gt_error":
            if not (f.corrected_answer or "").strip():
                skipped.append((rid, "GT error without a corrected answer (type it when adjudicating)"))
                continue
            entries.append(PatchEntry(rid, gt_digest, OP_REPLACE, old, (f.corrected_answer.strip(),), f.who, why,
                                      session.name))
    return PatchBuild(tuple(entries), tuple(skipped))
