"""The rules of the Review page and the review CLI: who acts, who may see and do what, which item
is shown, how a screen choice becomes a stored decision.  The page only lays these out.

Identity
    With sign-in (``st.login``) the signed-in identity acts; without it, a name confirmed in this
    browser.  A name that comes from a link is never taken silently: it waits for confirmation
    (:func:`resolve_identity`).

Roles (:func:`can_adjudicate`, :func:`can_manage`, :func:`can_export`)
    The session's owner (``created_by``), its named adjudicators (session settings) and the names
    in ``EVALBOARD_REVIEW_ADMINS`` (comma-separated) adjudicate, see everyone's labels and
    comments, and export a blind session; the owner and the admins change the settings.  Others
    see other reviewers' labels and comments on an item only after their own decision on it.

Items (:func:`review_view`)
    A link's item opens for the annotator named in it only; anyone else starts at their own next
    item (:meth:`~evaluators.review.store.ReviewStore.next_item`).  A decision, comment or control
    shown is always the acting annotator's own.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from evaluators.review.store import LABELS, Decision, Item, Progress, ReviewStore, Session, StaleDecision

ADMINS_ENV = "EVALBOARD_REVIEW_ADMINS"
#: Button text of each label (the number is its key).
LABEL_TEXT = {"model_error": "1 · Model error · 模型错误", "gt_error": "2 · GT error · 标准答案错误",
              "acceptable_variant": "3 · Acceptable variant · 可接受的变体"}
LABEL_HELP = {"model_error": "The prediction is wrong and the ground truth is right.",
              "gt_error": "The ground truth itself is wrong (the item goes to adjudication).",
              "acceptable_variant": "The prediction differs from the ground truth but is also correct."}


def admins() -> frozenset[str]:
    """Names in ``EVALBOARD_REVIEW_ADMINS`` (comma-separated): adjudicators of every session."""
    return frozenset(n.strip() for n in os.environ.get(ADMINS_ENV, "").split(",") if n.strip())


def is_owner(session: Session, who: str | None) -> bool:
    return bool(who) and who == session.created_by


def can_manage(session: Session, who: str | None) -> bool:
    """Change blind mode, guidelines and adjudicators: the owner and the admins."""
    return bool(who) and (is_owner(session, who) or who in admins())


def can_adjudicate(session: Session, who: str | None) -> bool:
    """Adjudicate and see everyone's decisions: the owner, the session's adjudicators and the admins."""
    return bool(who) and (can_manage(session, who) or who in session.adjudicators)


def can_export(session: Session, who: str | None) -> bool:
    """Download a session's decisions: anyone with a name for an open session; adjudicators for a blind one."""
    return bool(who) and (not session.blind or can_adjudicate(session, who))


def can_see_others(session: Session, who: str | None, mine: Decision | None) -> bool:
    """Other reviewers' labels and comments on an item: adjudicators always, others after deciding it."""
    return can_adjudicate(session, who) or (mine is not None and mine.status in ("submitted", "skipped"))


@dataclass(frozen=True)
class Identity:
    """Who acts on the page: ``name`` (``None``: nobody yet); ``pending``: a name from a link that
    waits for "Continue as ...?"; ``signed_in``: from ``st.login``."""

    name: str | None
    signed_in: bool = False
    pending: str | None = None


def resolve_identity(signed_in: str | None, confirmed: str | None, link_name: str | None) -> Identity:
    """The acting identity: the signed-in one, else the name confirmed in this browser; a link's
    name (``?annotator=``) is only proposed (``pending``), never used before it is confirmed."""
    if signed_in:
        return Identity(signed_in.strip(), True)
    if confirmed and confirmed.strip():
        return Identity(confirmed.strip())
    link = (link_name or "").strip()
    return Identity(None, pending=link or None)


def text_of(value: Any, limit: int = 20_000) -> str:
    """Any stored payload value as display text (never raises): text as is, numbers, else compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, (bool, int, float)):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False)[:limit]
    except (TypeError, ValueError, RecursionError):
        return f"<{type(value).__name__}>"


def number_of(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Side:
    title: str
    system: str | None
    prediction: str


@dataclass(frozen=True)
class ItemView:
    """What the Review tab shows for one annotator (all text raw: the page escapes it)."""

    item: Item | None
    progress: Progress
    mine: Decision | None = None
    others: list[Decision] = field(default_factory=list)
    others_hidden: int = 0
    title: str = ""
    ground_truth: str = ""
    prediction: str = ""
    sides: list[Side] = field(default_factory=list)
    system: str | None = None
    metrics: str | None = None
    choices: list[tuple[str, str, str, str]] = field(default_factory=list)   # (slug, text, stored label, help)
    note: str | None = None
    shown_at: float = 0.0


def review_view(store: ReviewStore, session: Session, annotator: str, *, item_id: int | None = None,
                link_annotator: str | None = None) -> ItemView:
    """The item to show ``annotator`` and everything about it they may see.

    ``item_id``: the item wanted (a link, or the page's current item).  A link's item is honoured
    only when the link names this annotator (or no one), or nobody acts yet (``annotator`` empty:
    the item is shown, with nobody's decision); otherwise the annotator's next item opens.
    """
    note = None
    item = None
    if item_id is not None:
        if link_annotator and annotator and link_annotator != annotator:
            note = (f"This link was made for {link_annotator}; you review as {annotator}, so your own next "
                    "item is shown.")
        else:
            item = store.item(item_id)
            if item is not None and item.session_id != session.id:
                item = None
    if item is None:
        item = store.next_item(session.id, annotator, claim=bool(annotator))
    progress = store.progress(session.id, annotator)
    if item is None:
        return ItemView(None, progress, note=note)
    p = item.payload if isinstance(item.payload, dict) else {}
    mine = store.decision(item.id, annotator)
    others = [d for d in store.item_decisions(item.id) if d.annotator != annotator]
    visible_others = others if can_see_others(session, annotator, mine) else []
    raw_sides = p.get("sides")
    pair = isinstance(raw_sides, dict) and all(isinstance(raw_sides.get(s), dict) for s in ("A", "B"))
    sides: list[Side] = []
    help_text = {**LABEL_HELP, **((session.settings or {}).get("labels_help") or {})}
    if pair:
        screen = ("B", "A") if ReviewStore.blind_sides(session, annotator, item) else ("A", "B")
        for side, title in zip(screen, ("Left · 左", "Right · 右")):
            shown = raw_sides[side]
            sides.append(Side(title, None if session.blind else text_of(shown.get("system")) or None,
                              text_of(shown.get("prediction"))))
        left, right = screen
        choices = [("left", "1 · Left better · 左边更好", f"{left.lower()}_better", "The left reply is better."),
                   ("right", "2 · Right better · 右边更好", f"{right.lower()}_better", "The right reply is better."),
                   ("tie", "3 · Tie · 相当", "tie", "Both replies are as good.")]
    else:
        choices = [(lab, LABEL_TEXT[lab], lab, help_text.get(lab, "")) for lab in LABELS]
    em, f1 = number_of(p.get("exact_match")), number_of(p.get("token_f1"))
    metrics = None if session.blind or em is None else f"EM {em:.0f} · F1 {f1 or 0:.2f}"
    title = " · ".join(x for x in (text_of(p.get("id")), text_of(p.get("question") or p.get("context"))) if x)
    return ItemView(item, progress, mine, visible_others, len(others) - len(visible_others), title,
                    text_of(p.get("ground_truth")), text_of(p.get("prediction")), sides,
                    None if session.blind else (text_of(p.get("system")) or None), metrics, choices, note,
                    time.time())


def decide(store: ReviewStore, session: Session, annotator: str, item_id: int, label: str | None, *,
           score: int | None = None, comment: str = "", seen_version: int = 0,
           shown_at: float | None = None) -> Decision:
    """Save the annotator's decision (``label=None``: skip) on an item of this session.

    Raises
    ------
    ValueError
        An item of another session, or a bad field (see :meth:`ReviewStore.save_decision`).
    StaleDecision
        The decision changed since ``seen_version`` was read.
    """
    item = store.item(item_id)
    if item is None or item.session_id != session.id:
        raise ValueError(f"item {item_id} is not in session {session.name!r}")
    seconds = None if shown_at is None else max(0.0, time.time() - shown_at)
    return store.save_decision(item_id, annotator, label=label, score=score if label else None, comment=comment,
                               status="submitted" if label else "skipped", expected_version=seen_version,
                               seconds=seconds)


def step(store: ReviewStore, session: Session, annotator: str, item_id: int, direction: int) -> int:
    """The item to show after ``item_id``: ``direction < 0`` the item this annotator decided before
    it, else the next open item (claimed); ``item_id`` itself when there is none."""
    if direction < 0:
        target = store.previous_item(session.id, annotator, store.item(item_id))
    else:
        target = store.next_item(session.id, annotator, exclude=[item_id], claim=True)
    return target.id if target is not None else item_id


def adjudicate(store: ReviewStore, session: Session, who: str | None, item_id: int, label: str,
               note: str = "", *, corrected_answer: str | None = None) -> None:
    """Record a final label, for those who may (:func:`can_adjudicate`); a GT error's
    ``corrected_answer`` is kept with it (it becomes a GT patch).

    Raises
    ------
    PermissionError
        ``who`` may not adjudicate this session.
    """
    if not can_adjudicate(session, who):
        raise PermissionError(f"{who or 'an anonymous reviewer'} may not adjudicate {session.name!r}: the owner, "
                              f"the session's adjudicators and {ADMINS_ENV} may")
    item = store.item(item_id)
    if item is None or item.session_id != session.id:
        raise ValueError(f"item {item_id} is not in session {session.name!r}")
    store.adjudicate(item_id, who or "", label, note, corrected_answer=corrected_answer)


def agreement_rows(store: ReviewStore, session: Session) -> list[dict[str, Any]]:
    """The Agreement tab's table (cached in the store until the session changes)."""
    rows = []
    for fld, block in store.agreement(session.id).items():
        rows.append({"what": "labels (nominal)" if fld == "label" else "1-5 scores (ordinal)",
                     "items rated by 2+": block["n_items"], "annotators": block["n_annotators"],
                     "Cohen's kappa (mean of pairs)": block["cohen_kappa_mean"],
                     "Fleiss' kappa": block["fleiss_kappa"], "Krippendorff's alpha": block["krippendorff_alpha"]})
    return rows


def automatic(store: ReviewStore, session: Session) -> dict[str, Any]:
    """The automatic verdict (metric or judge) against each reviewer
    (:func:`~evaluators.review.agreement.automatic_agreement`), cached until the session changes."""
    from evaluators.review.agreement import automatic_agreement

    return store._cached(session.id, "automatic",
                         lambda: automatic_agreement(store.iter_items(session.id), store.ratings(session.id)))


__all__ = [
    "ADMINS_ENV",
    "LABEL_HELP",
    "LABEL_TEXT",
    "Identity",
    "ItemView",
    "Side",
    "StaleDecision",
    "adjudicate",
    "admins",
    "agreement_rows",
    "automatic",
    "can_adjudicate",
    "can_export",
    "can_manage",
    "can_see_others",
    "decide", "step",
    "is_owner",
    "number_of",
    "resolve_identity",
    "review_view",
    "text_of",
]
