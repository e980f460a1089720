"""A review session made from a QA / fact-check file: the rules of ``review create`` and of the Review
page's *New session* form (the page lays them out).

- the items are the file's scored records (:func:`evaluators.review.items.qa_items`);
- *Review what's new* (``whats_new``) keeps only the records whose (question, GT, prediction) has no
  final label in any session of the store (:func:`evaluators.review.carry.whats_new`); the others are
  carried with their verdict, counted in the session's ``carried`` setting (how many, by label, from
  which sessions) and listed in :attr:`CreatedSession.carried`;
- ``order`` (the session's ``order`` setting): ``random`` (the default: the store's seeded shuffle, a
  uniformly random order, the one to use when the reviewed records estimate a run's score) or
  ``informative`` (most informative first: records that split the systems, partial credit, judge
  against metric: :func:`evaluators.review.order.informative_order`; the queue follows it);
- guidelines (Markdown) start at version 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaluators.results import DictMixin
from evaluators.review.carry import CarriedDecision, whats_new
from evaluators.review.order import informative_order
from evaluators.review.service import create_session, require
from evaluators.review.store import ReviewStore, Session

ORDERS = ("random", "informative")
#: How each order is named where one is chosen (the Review page).
ORDER_TEXT = {"random": "Random (seeded; needed for estimates) · 随机", "informative": "Most informative first · 信息量优先"}


@dataclass(frozen=True)
class CreatedSession(DictMixin):
    """A session made by :func:`create_qa_session`.

    Attributes
    ----------
    session : Session
    offered : int
        Items of the file (records with a GT).
    carried : tuple of (dict, CarriedDecision)
        With ``whats_new``: the items left out, each with the verdict it carries (file order).
    """

    session: Session
    offered: int
    carried: tuple[tuple[dict[str, Any], CarriedDecision], ...] = ()


def qa_file_items(data: bytes, name: str) -> list[dict[str, Any]]:
    """The review items of a QA / fact-check file (``InputError`` when it cannot be read)."""
    from evaluators.qa.evaluate import QAConfig, evaluate_qa
    from evaluators.review.items import qa_items

    return qa_items(evaluate_qa(data, name, QAConfig(ci_resamples=0)))


def create_qa_session(store: ReviewStore, name: str, data: bytes, filename: str, *, created_by: str, k: int = 1,
                      blind: bool = False, seed: int = 0, order: str = "random", guidelines: str | None = None,
                      new_only: bool = False, items: list[Mapping[str, Any]] | None = None) -> CreatedSession:
    """Create a review session over a QA / fact-check file (rules in the module docstring).

    Parameters
    ----------
    store : ReviewStore
    name : str
        The session's name (unique).
    data, filename : bytes, str
        The file; it is kept with the session (by SHA-256).
    created_by : str
        Who creates it, its owner: checked (:func:`evaluators.review.service.create_session`: :func:`may` ``create``)
        and named in the ``create`` audit row, written in the session's own transaction.
    k, blind, seed
        Reviewers per item, blind mode, seed of the order.
    order : {"random", "informative"}
    guidelines : str, optional
    new_only : bool
        *Review what's new*: only the records never reviewed before (by triple).
    items : list of mapping, optional
        The file's items when already made (:func:`qa_file_items`).

    Returns
    -------
    CreatedSession

    Raises
    ------
    PermissionError
        ``created_by`` may not create sessions (nothing is read or written).
    ValueError
        An unknown order, a taken name, no item, or (``new_only``) nothing new to review.
    InputError
        The file cannot be read.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    require(None, created_by, "create")  # before the file is read (create_session checks again)
    payloads = list(items) if items is not None else qa_file_items(data, filename)
    offered = len(payloads)
    settings: dict[str, Any] = {"order": order}
    if guidelines and guidelines.strip():
        settings.update(guidelines=guidelines, guidelines_version=1)
    carried: tuple = ()
    if new_only:
        split = whats_new(store, payloads)
        carried = tuple((dict(payloads[i]), c) for i, c in sorted(split.carried.items()))
        if not split.new:
            raise ValueError(f"nothing new to review in {filename}: all {offered} record(s) carry an earlier "
                             "decision")
        settings["carried"] = split.summary()
        payloads = [payloads[i] for i in split.new]
    if order == "informative":
        payloads = [payloads[i] for i in informative_order(payloads, order=order, seed=seed)]
    session = create_session(store, created_by, name, "qa", payloads, files=[(filename, data)], blind=blind, k=k,
                             seed=seed, settings=settings, detail=filename)
    return CreatedSession(session, offered, carried)
