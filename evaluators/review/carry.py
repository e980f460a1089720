"""Reviews carried forward: a decision belongs to a (question, GT, prediction) triple, not to a session.

A new session, or a new run with the same question, ground truth and prediction, finds the
earlier final label (:func:`evaluators.review.gt_patch.final_labels`) of that triple in any
session of the store (:func:`carried_decisions`); what is left to review is the *review debt*
(:func:`review_debt`): the items whose triple has no human decision yet.  A carried decision is
marked as such (session, who, source) and a reviewer can override it by deciding the item anew
in the new session, whose own final label then wins (the newest session first).

The triple's digest is the SHA-256 of the canonical JSON of ``[question, ground_truth,
prediction]`` (texts as shown to the reviewer, NFC-normalized, surrounding blanks removed), so
a changed prediction, a corrected GT or a reworded question is a new triple, while the same
prediction of another run (or with a trailing blank) is the same one.

*Review what's new* (:func:`whats_new`) splits a run's items into those to review (no earlier
decision on their triple) and those carried with their earlier verdict; :func:`debt_by_system`
counts, per system, the records of a run still to review.  What a carried verdict *does* to the
scores travels separately: a GT correction or an accepted variant is a patch entry keyed by the
record and its GT (:mod:`evaluators.review.gt_patch`), which applies to every run of the dataset.

A "reviewed" triple is one with a *final* label (an adjudication, or every reviewer agreeing): an
item whose reviewers disagree and that nobody adjudicated is still debt.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.results import DictMixin
from evaluators.review.gt_patch import final_labels
from evaluators.review.store import ReviewStore


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return unicodedata.normalize("NFC", value).strip()


def triple_digest(payload: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of an item's (question or context, ground truth, prediction)."""
    question = payload.get("question", payload.get("context"))
    text = json.dumps([_text(question), _text(payload.get("ground_truth")), _text(payload.get("prediction"))],
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CarriedDecision(DictMixin):
    """An earlier final label found for an item's triple.

    Attributes
    ----------
    label : str
    session : str
        The session it was decided in.
    who : str
    source : {"adjudicated", "agreed"}
    comment : str
    corrected_answer : str or None
    carried : bool
        Always ``True``: shown as carried forward, not as this session's own decision.
    """

    label: str
    session: str
    who: str
    source: str
    comment: str
    corrected_answer: str | None
    carried: bool = True


def decisions_by_triple(store: ReviewStore, *, exclude_session: int | None = None) -> dict[str, CarriedDecision]:
    """Final labels of every session by triple digest; the newest session's label wins."""
    out: dict[str, CarriedDecision] = {}
    for session in store.sessions():  # newest first
        if session.id == exclude_session:
            continue
        for f in final_labels(store, session.id):
            key = triple_digest(f.item.payload)
            if key not in out:
                out[key] = CarriedDecision(f.label, session.name, f.who, f.source, f.comment, f.corrected_answer)
    return out


def carried_decisions(store: ReviewStore, payloads: Sequence[Mapping[str, Any]], *,
                      exclude_session: int | None = None) -> dict[int, CarriedDecision]:
    """Earlier decisions for the given item payloads: position -> :class:`CarriedDecision`.

    Parameters
    ----------
    store : ReviewStore
    payloads : sequence of mapping
        Items of a new run or session (:mod:`evaluators.review.items`).
    exclude_session : int, optional
        The session being reviewed (its own decisions are not "carried").
    """
    known = decisions_by_triple(store, exclude_session=exclude_session)
    out = {}
    for i, p in enumerate(payloads):
        hit = known.get(triple_digest(p))
        if hit is not None:
            out[i] = hit
    return out


def review_debt(store: ReviewStore, payloads: Sequence[Mapping[str, Any]], *,
                exclude_session: int | None = None) -> list[int]:
    """Positions of the payloads whose triple has no human decision in the store (what is left to review)."""
    carried = carried_decisions(store, payloads, exclude_session=exclude_session)
    return [i for i in range(len(payloads)) if i not in carried]


@dataclass(frozen=True)
class WhatsNew(DictMixin):
    """A run's items split by what the store already knows (:func:`whats_new`).

    Attributes
    ----------
    new : tuple of int
        Positions of the items whose triple has no final label in any session: what to review.
    carried : dict of int to CarriedDecision
        Positions of the others, with the verdict they carry (marked ``carried``).
    """

    new: tuple[int, ...]
    carried: dict[int, CarriedDecision]

    def summary(self) -> dict[str, Any]:
        """``{n, labels, sessions}``: how many were carried, by label, from which sessions."""
        labels: dict[str, int] = {}
        for c in self.carried.values():
            labels[c.label] = labels.get(c.label, 0) + 1
        return {"n": len(self.carried), "labels": dict(sorted(labels.items())),
                "sessions": sorted({c.session for c in self.carried.values()})}


def whats_new(store: ReviewStore, payloads: Sequence[Mapping[str, Any]], *,
              exclude_session: int | None = None) -> WhatsNew:
    """*Review what's new*: the items never reviewed (by triple) in any session of the store, and the carried ones.

    Parameters
    ----------
    store : ReviewStore
    payloads : sequence of mapping
        Review items of a run (:func:`evaluators.review.items.qa_items` ...).
    exclude_session : int, optional
        A session whose own decisions do not count.

    Returns
    -------
    WhatsNew
    """
    carried = carried_decisions(store, payloads, exclude_session=exclude_session)
    return WhatsNew(tuple(i for i in range(len(payloads)) if i not in carried), carried)


@dataclass(frozen=True)
class SystemDebt(DictMixin):
    """Review debt of one system of a run.

    Attributes
    ----------
    system : str or None
        ``None`` for a run without a system field.
    records : int
        Its review items (records with a GT).
    reviewed : int
        Those whose triple has a final label in the store.
    debt : int
        ``records - reviewed``: still to review.
    """

    system: str | None
    records: int
    reviewed: int
    debt: int


def debt_by_system(store: ReviewStore, payloads: Sequence[Mapping[str, Any]]) -> list[SystemDebt]:
    """Review debt per system (in the order the systems first appear), from one pass over the store.

    Parameters
    ----------
    store : ReviewStore
    payloads : sequence of mapping
        Review items of a run.

    Returns
    -------
    list of SystemDebt
    """
    carried = carried_decisions(store, payloads)
    counts: dict[str | None, list[int]] = {}
    for i, p in enumerate(payloads):
        system = p.get("system")
        row = counts.setdefault(None if system in (None, "") else str(system), [0, 0])
        row[0] += 1
        row[1] += i in carried
    return [SystemDebt(system, n, reviewed, n - reviewed) for system, (n, reviewed) in counts.items()]
