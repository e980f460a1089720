"""The rules of the Review page and the review CLI: who acts, who may see and do what, which item
is shown, how a screen choice becomes a stored decision.  The page only lays these out.

Identity
    With sign-in (``st.login``) the signed-in identity acts; without it, a name confirmed in this
    browser.  A name that comes from a link is never taken silently: it waits for confirmation
    (:func:`resolve_identity`).

Roles (:func:`may`, :func:`can_adjudicate`, :func:`can_manage`, :func:`can_export`)
    A signed-in person (``st.login``) or a CLI user with ``--role`` acts in a role
    (:class:`~evaluators.review.roles.Actor`): owner, adjudicator, annotator or viewer, from a configured
    mapping of ID-token groups (:mod:`evaluators.review.roles`); :func:`may` then answers action x role
    by the configured policy, for the page and the CLI alike.  Without a role (a typed name) the rules by
    name below hold, exactly as before sign-in existed.  The session's owner (``created_by``), its named adjudicators (session settings) and the names
    in ``EVALBOARD_REVIEW_ADMINS`` (comma-separated) adjudicate, see everyone's labels and
    comments, and export a blind session; the owner and the admins change the settings.  Others
    see other reviewers' labels and comments on an item only after their own decision on it.

Items (:func:`review_view`)
    A link's item opens for the annotator named in it only; anyone else starts at their own next
    item (:meth:`~evaluators.review.store.ReviewStore.next_item`).  A decision, comment or control
    shown is always the acting annotator's own.

Undo (:func:`undo`)
    An annotator undoes their own last decision in a session (then the one before, and so on); the
    undo is recorded in the history and is refused when the decision changed since (another tab).

Filters (:func:`allowed_filters`, :func:`queue_filter`)
    System and metric-range filters are offered where the item shows them (not in a blind
    session, except to adjudicators); label and disagreement filters read other reviewers'
    labels, so only adjudicators get them (others see those labels only after their own decision).

Settings (:func:`update_settings`)
    Those who manage the session save its guidelines (each changed text a new version, kept with who
    saved it and when: :func:`guidelines_versions`, :func:`guidelines_diff`), label help, ``k``,
    adjudicators and blind mode; the page and ``review settings`` both go through it.

Adjudication (:func:`adjudication_entries`, :func:`adjudication_view`)
    GT-error claims first, then the most split items; the item as its reviewers saw it (question, GT,
    prediction and their CJK-aware diff, system and metric unless blind) with every reviewer's label in
    words (:data:`LABEL_WORDS`, the one mapping of label to display text), score and comment.

Blind mode (:func:`set_blind`)
    The owner (and the admins) can turn it on at any time.  It can be turned off again only while
    no decision was made blind (history rows marked blind): once someone decided without seeing
    system names, showing them to the rest would mix blind and open judgments in one session.

Audit (:func:`audit`)
    Every allowed mutating or revealing action that takes effect (decide, undo, adjudicate, settings,
    gold marks, export of a blind or gold session, GT patch, import, create) appends one row to the audit
    trail (:meth:`~evaluators.review.store.ReviewStore.audit`): who, role, action, session, item, when,
    page or CLI.  The row is written in the action's own transaction wherever the action has one (decide,
    undo, adjudicate, settings, gold, create, delete: both committed or neither); an export is a read, so its
    row follows the complete export (:func:`export`), and a GT patch's the complete patch, before the file is
    released (``review patch``); an import is written in batches, one transaction each,
    so its row commits with its first write (:func:`evaluators.review.exchange.import_records`): no change
    of an import is stored without it.

Gold items (:func:`mark_gold`)
    The owner (and the admins) mark items with their known label; each annotator's accuracy on
    them (:meth:`~evaluators.review.store.ReviewStore.gold_accuracy`) is for those who manage.
    Gold marks are never shown to reviewers (a session with gold items is exported, gold labels
    included, by its owner and adjudicators only).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from evaluators.review.roles import ACTIONS, Actor, load_config, role_of, via_of
from evaluators.review.store import (
    ALL_LABELS,
    guidelines_versions as _stored_versions,
    LABELS,
    PAIR_LABELS,
    Decision,
    HistoryEntry,
    Item,
    Progress,
    QueueFilter,
    ReviewStore,
    Session,
    StaleDecision,
    is_two_sided,
)

ADMINS_ENV = "EVALBOARD_REVIEW_ADMINS"
#: Seconds below which a decision counts as fast on Team progress, for every session without its own
#: ``fast_seconds`` setting (:func:`fast_threshold`); default :data:`DEFAULT_FAST_SECONDS`.
FAST_ENV = "EVALBOARD_REVIEW_FAST_SECONDS"
DEFAULT_FAST_SECONDS = 2.0
T = TypeVar("T")
#: Every stored label in words (the one mapping of label -> display text; tables, history, pickers).
LABEL_WORDS = {"model_error": "Model error · 模型错误", "gt_error": "GT error · 标准答案错误",
               "acceptable_variant": "Acceptable variant · 可接受的变体", "correct": "Correct · 正确",
               "a_better": "A better · A 更好", "b_better": "B better · B 更好", "tie": "Tie · 相当",
               "skipped": "Skipped · 跳过", "draft": "Draft · 草稿"}
#: Button text of each label (the number is its key).
LABEL_TEXT = {lab: f"{n} · {LABEL_WORDS[lab]}" for n, lab in enumerate(LABELS, start=1)}
LABEL_HELP = {"model_error": "The prediction is wrong and the ground truth is right.",
              "gt_error": "The ground truth itself is wrong (the item goes to adjudication).",
              "acceptable_variant": "The prediction differs from the ground truth but is also correct.",
              "correct": "The prediction is right as it stands (it says what the ground truth says)."}


def label_words(label: str | None) -> str:
    """A stored label (or status) in words (:data:`LABEL_WORDS`); an unknown one as it is, ``""`` for none.

    Parameters
    ----------
    label : str or None
        A stored label (``model_error`` ...) or status (``skipped`` ...).

    Returns
    -------
    str
    """
    return "" if not label else LABEL_WORDS.get(label, label)


def admins() -> frozenset[str]:
    """Names in ``EVALBOARD_REVIEW_ADMINS`` (comma-separated): adjudicators of every session."""
    return frozenset(n.strip() for n in os.environ.get(ADMINS_ENV, "").split(",") if n.strip())


def is_owner(session: Session, who: str | None) -> bool:
    """Whether ``who`` created the session.

    Parameters
    ----------
    session : Session
        The review session.
    who : str or None
        The acting name (``None`` or ``""``: nobody yet, never allowed).

    Returns
    -------
    bool
    """
    return bool(who) and who == session.created_by


def may(session: Session | None, who: str | None, action: str) -> bool:
    """Whether ``who`` may do ``action`` (:data:`~evaluators.review.roles.ACTIONS`) in ``session``.

    With a role (``who`` an :class:`~evaluators.review.roles.Actor` with a role: signed in, or the CLI's
    ``--role``) the configured policy decides (:func:`evaluators.review.roles.load_config`).  Without one, the
    rules by name: ``settings``, ``gold``, ``delete`` and ``import`` (from a session's page) for the owner and the
    admins, ``adjudicate`` and ``export`` for them and the session's adjudicators, everything else for anyone
    with a name; with no session (``create``, the CLI's ``import``) anyone with a name.

    Parameters
    ----------
    session : Session or None
        The review session (``None`` for ``create`` and ``import``).
    who : str or None
        The acting name (``None`` or ``""``: nobody yet, never allowed).
    action : str

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        An unknown action, or an invalid role configuration.
    """
    if action not in ACTIONS:
        raise ValueError(f"unknown review action {action!r:.60} (actions: {', '.join(ACTIONS)})")
    if not who:
        return False
    role = role_of(who)
    if role is not None:
        return load_config().permitted(action, role)
    if session is None:
        return True
    if action in ("settings", "gold", "delete", "import"):
        return is_owner(session, who) or who in admins()
    if action in ("adjudicate", "export"):
        return is_owner(session, who) or who in admins() or who in session.adjudicators
    return True


def require(session: Session | None, who: str | None, action: str) -> None:
    """Raise :class:`PermissionError` unless ``who`` may do ``action`` (:func:`may`).

    Raises
    ------
    PermissionError
    """
    if not may(session, who, action):
        role = role_of(who)
        as_ = f" as {role}" if role else (" without a role" if role == "" else "")
        where = f" in {session.name!r}" if session is not None else ""
        raise PermissionError(f"{who or 'an anonymous reviewer'}{as_} may not {action}{where}")


def audit(store: ReviewStore, who: str | None, action: str, session: Session | None = None,
          item_id: int | None = None, detail: str = "") -> None:
    """Append the audit row of an allowed action that took effect (:meth:`ReviewStore.audit`).

    Parameters
    ----------
    store : ReviewStore
    who : str or None
        The acting name (its role and ``via`` when an :class:`~evaluators.review.roles.Actor`).
    action : str
    session : Session, optional
    item_id : int, optional
    detail : str
    """
    store.audit(str(who or ""), action, role=role_of(who), session_id=session.id if session is not None else None,
                item_id=item_id, via=via_of(who), detail=detail)


def audit_row(who: str | None, action: str, session: Session | None = None, item_id: int | None = None,
              detail: str = "") -> dict[str, Any]:
    """The audit row of an action, for a store method that writes it in the action's own transaction
    (``audit=``: the action and its row are committed together)."""
    return {"who": str(who or ""), "action": action, "role": role_of(who), "via": via_of(who),
            "session_id": session.id if session is not None else None, "item_id": item_id, "detail": detail}


def can_manage(session: Session, who: str | None) -> bool:
    """Change blind mode, guidelines and adjudicators: the owner and the admins (with a role:
    :func:`may` ``settings``).

    Parameters
    ----------
    session : Session
        The review session.
    who : str or None
        The acting name (``None`` or ``""``: nobody yet, never allowed).

    Returns
    -------
    bool
    """
    return may(session, who, "settings")


def can_adjudicate(session: Session, who: str | None) -> bool:
    """Adjudicate and see everyone's decisions: the owner, the session's adjudicators and the admins.

    Parameters
    ----------
    session : Session
        The review session.
    who : str or None
        The acting name (``None`` or ``""``: nobody yet, never allowed).

    Returns
    -------
    bool
    """
    return may(session, who, "adjudicate")


def can_export(session: Session, who: str | None, *, has_gold: bool = False) -> bool:
    """Download a session's decisions: anyone with a name for an open session; adjudicators for a
    blind one, and for one with gold items (``has_gold``: the export carries the gold labels).

    Parameters
    ----------
    session : Session
        The review session.
    who : str or None
        The acting name (``None`` or ``""``: never allowed).
    has_gold : bool
        The session has gold items.

    Returns
    -------
    bool
    """
    return bool(who) and ((not session.blind and not has_gold) or may(session, who, "export"))


def can_decide(session: Session, who: str | None) -> bool:
    """Decide items: anyone with a name (with a role: :func:`may` ``decide``).

    Parameters
    ----------
    session : Session
    who : str or None

    Returns
    -------
    bool
    """
    return may(session, who, "decide")


def delete_session(store: ReviewStore, session: Session, who: str | None) -> dict[str, int]:
    """Delete the session with its items, decisions (and their history), adjudications and claims, for those
    who may (:func:`may` ``delete``: the owner and ``EVALBOARD_REVIEW_ADMINS`` by name; with a role, the
    policy: owners by default); the deletion and its ``delete`` audit row are one transaction
    (:meth:`ReviewStore.delete_session`).  The audit trail and the uploaded files stay.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.

    Returns
    -------
    dict of str to int
        Rows deleted (``items``, ``decisions``, ``history``, ``adjudications``, ``claims``).

    Raises
    ------
    PermissionError
        ``who`` may not delete the session (nothing is deleted, no row written).
    LookupError
        The session is gone already.
    """
    require(session, who, "delete")
    return store.delete_session(session.id, audit=audit_row(who, "delete", session,
                                                            detail=f"{session.name} ({session.n_items} items)"))


def check_export(store: ReviewStore, session: Session, who: str | None, what: str, *,
                 has_gold: bool | None = None) -> dict[str, Any]:
    """Check that ``who`` may export the session (:func:`can_export`; ``what == "corrections"``: also
    :func:`may` ``patch``) and return the audit row to write once the export is made (:func:`audit_row`).

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
    what : str
        The format (``jsonl``, ``csv``, ``corrections`` ...).
    has_gold : bool, optional
        Default: read from the store.

    Returns
    -------
    dict
        The audit row (action ``export``, or ``patch`` for the GT corrections), nothing written yet.

    Raises
    ------
    PermissionError
    """
    gold = bool(store.gold_items(session.id)) if has_gold is None else has_gold
    if not can_export(session, who, has_gold=gold):
        require(session, who, "export")
        raise PermissionError(f"{who or 'an anonymous reviewer'} may not export {session.name!r}")
    if what == "corrections":
        require(session, who, "patch")
    return audit_row(who, "patch" if what == "corrections" else "export", session,
                     detail=what + (" (blind)" if session.blind else "") + (" (gold)" if gold else ""))


def export_allowed(store: ReviewStore, session: Session, who: str | None, what: str, *,
                   has_gold: bool | None = None) -> None:
    """:func:`check_export`, then its audit row at once (for an export already made; to make one, use
    :func:`export`, which writes the row only once the export is complete).

    Raises
    ------
    PermissionError
    """
    _write_audit(store, check_export(store, session, who, what, has_gold=has_gold))


def export(store: ReviewStore, session: Session, who: str | None, what: str, make: Callable[[], T], *,
           has_gold: bool | None = None) -> T:
    """Export the session: check (:func:`check_export`), make the export (``make()``: build the bytes, or
    stream them into a file), then append its one audit row.

    An export is a read: it has no write transaction for its audit row to join, and holding one open while
    a large session is streamed would block every reviewer's save (SQLite's writer lock).  So the row is
    written after ``make`` returns: a refused export and one whose ``make`` raises (an unwritable file, a
    database error) leave no row; a complete export leaves exactly one.  (A reader stopped half-way, a
    closed pipe, may have seen part of it without a row: the row says a whole export was delivered.)

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
    what : str
        The format (``jsonl``, ``csv``, ``corrections`` ...).
    make : callable
        Makes the export; its value is returned.
    has_gold : bool, optional
        Default: read from the store.

    Returns
    -------
    object
        What ``make`` returned.

    Raises
    ------
    PermissionError
        ``who`` may not export the session (``make`` is not called).
    """
    row = check_export(store, session, who, what, has_gold=has_gold)
    made = make()
    _write_audit(store, row)
    return made


def _write_audit(store: ReviewStore, row: Mapping[str, Any]) -> None:
    store.audit(row["who"], row["action"], role=row["role"], session_id=row["session_id"], item_id=row["item_id"],
                via=row["via"], detail=row["detail"])


def create_session(store: ReviewStore, who: str | None, name: str, kind: str, items: Iterable[Mapping[str, Any]], *,
                   files: Iterable[tuple[str, bytes]] = (), k: int = 1, blind: bool = False, seed: int = 0,
                   settings: Mapping[str, Any] | None = None, detail: str = "") -> Session:
    """Create a review session for ``who`` (its owner): the one way the page, the task pages' *Review these*
    buttons and ``review create`` make one.  :func:`may` ``create`` is checked first; the session, its items
    and its ``create`` audit row are written in one transaction (:meth:`ReviewStore.create_session`), so a
    refused or failed create leaves no row and a made session exactly one.

    The files are kept first (:meth:`ReviewStore.put_upload`, each its own transaction): they are stored once
    by digest, so a create that fails after them leaves a file no session names, never a session without
    its files.

    Parameters
    ----------
    store : ReviewStore
    who : str or None
        The acting name (an :class:`~evaluators.review.roles.Actor` with a role: the policy decides); it becomes
        the session's owner (``created_by``).
    name : str
        The session's name (unique).
    kind : str
        The task of the items (``qa``, ``narrative`` ...).
    items : iterable of mapping
        The review items (:mod:`evaluators.review.items`).
    files : iterable of (str, bytes)
        The run's input files, kept with the session.
    k, blind, seed
        Reviewers per item, blind mode, seed of the order.
    settings : mapping, optional
        Further settings (``order``, guidelines ...).
    detail : str
        The audit row's detail (default: the files' names).

    Returns
    -------
    Session

    Raises
    ------
    PermissionError
        ``who`` may not create sessions (or nobody acts).
    ValueError
        A taken name, no item, a bad field or a file over the upload limit (nothing is created).
    """
    require(None, who, "create")
    files = list(files)
    uploads = [store.put_upload(file_name, data) for file_name, data in files]
    return store.create_session(name, kind, items, created_by=str(who), k=k, blind=blind, seed=seed, uploads=uploads,
                                settings=settings,
                                audit=audit_row(who, "create", detail=detail or ", ".join(n for n, _ in files)))


#: The formats :func:`import_file` reads.
IMPORT_FORMATS = ("jsonl", "label-studio")


def import_format(head: bytes) -> str:
    """The format of a file to import from its first bytes: ``label-studio`` for a JSON array (a Label Studio
    export), else ``jsonl`` (an EvalBoard export)."""
    from evaluators.review.label_studio import looks_like_label_studio

    return "label-studio" if looks_like_label_studio(bytes(head[:64])) else "jsonl"


def import_file(store: ReviewStore, who: str | None, data: bytes | Any, file: str, *, fmt: str | None = None,
                into: str | None = None, context: Session | None = None, dry_run: bool = False) -> Any:
    """Import an EvalBoard export (JSONL) or a Label Studio JSON export: the one import of the page and
    ``review import``.  :func:`may` ``import`` is checked first (in ``context``, the session whose page
    imports: there its owner and the admins, or the role's policy); the import's audit row commits with its
    first write (:func:`evaluators.review.exchange.import_records`), so an import that writes nothing leaves
    none.  ``who`` is the importer: the actor of the history rows it writes, the owner of a session made from
    lines without a session line, and the annotator of Label Studio annotations with ``completed_by: null``.

    Parameters
    ----------
    store : ReviewStore
    who : str or None
        The acting name (an :class:`~evaluators.review.roles.Actor` with a role: the policy decides).
    data : bytes or binary file
        The file (a file is read one line or task at a time; it must be seekable when ``fmt`` is ``None``).
    file : str
        Its name, in the report's locations and the audit row.
    fmt : str, optional
        ``jsonl`` or ``label-studio`` (:data:`IMPORT_FORMATS`); default found from the file
        (:func:`import_format`).
    into : str, optional
        Label Studio only: the session its tasks go into (default the session named in the tasks, else
        ``Label Studio: <file name>``).
    context : Session, optional
        The session whose page imports (``None``: the CLI).
    dry_run : bool
        Check everything and write nothing, not the audit row either: the report says what the import would
        do against the database as it is now.

    Returns
    -------
    evaluators.review.exchange.ImportReport
        Counts (written, unchanged, conflicts, duplicates, sessions and items added) and every line not
        imported, located by line and JSON path.

    Raises
    ------
    PermissionError
        ``who`` may not import (nothing is read).
    ValueError
        An unknown format.
    """
    from evaluators.review.exchange import import_jsonl
    from evaluators.review.label_studio import import_label_studio

    require(context, who, "import")
    if fmt is None:
        if isinstance(data, (bytes, bytearray, memoryview)):
            fmt = import_format(data[:64])
        else:
            fmt = import_format(data.read(64))
            data.seek(0)
    if fmt not in IMPORT_FORMATS:
        raise ValueError(f"import reads {' or '.join(IMPORT_FORMATS)}, not {str(fmt)[:40]!r}")
    row = audit_row(who, "import", detail=os.path.basename(file)[:200])
    by = str(who)[:256]  # the history's actor, the owner of a session a file without session line makes, and
    # the annotator of a Label Studio annotation with ``completed_by: null``
    if fmt == "label-studio":
        return import_label_studio(store, data, file, session=into, created_by=by, audit=row, dry_run=dry_run)
    return import_jsonl(store, data, file, created_by=by, audit=row, dry_run=dry_run)


def can_see_others(session: Session, who: str | None, mine: Decision | None) -> bool:
    """Other reviewers' labels and comments on an item: adjudicators always, others after deciding it.

    Parameters
    ----------
    session : Session
        The review session.
    who : str or None
        The acting name.
    mine : Decision or None
        ``who``'s own decision on the item (submitted or skipped opens the others).

    Returns
    -------
    bool
    """
    return can_adjudicate(session, who) or (mine is not None and mine.status in ("submitted", "skipped"))


@dataclass(frozen=True)
class Identity:
    """Who acts on the page: ``name`` (``None``: nobody yet); ``pending``: a name from a link that
    waits for "Continue as ...?"; ``signed_in``: from ``st.login``; ``problem``: why a typed name cannot act
    (:func:`~evaluators.review.limits.check_name`: over 256 characters, a control character), else ``None``."""

    name: str | None
    signed_in: bool = False
    pending: str | None = None
    problem: str | None = None


def resolve_identity(signed_in: str | None, confirmed: str | None, link_name: str | None) -> Identity:
    """The acting identity: the signed-in one, else the name confirmed in this browser; a link's
    name (``?annotator=``) is only proposed (``pending``), never used before it is confirmed.

    Parameters
    ----------
    signed_in : str or None
        The name from ``st.login`` (wins over the others).
    confirmed : str or None
        The name confirmed in this browser.
    link_name : str or None
        The ``?annotator=`` of the link.

    Returns
    -------
    Identity
        Names stripped; ``name`` is ``None`` until one is signed in or confirmed, and for a confirmed name
        that is no name (``problem`` says why: every save under it would be refused).
    """
    from evaluators.review.limits import check_name

    if signed_in:
        return Identity(signed_in.strip(), True)
    link = (link_name or "").strip()
    if confirmed and confirmed.strip():
        try:
            return Identity(check_name(confirmed, "Your name"))
        except ValueError as exc:
            return Identity(None, pending=link or None, problem=str(exc))
    return Identity(None, pending=link or None)


def text_of(value: Any, limit: int = 20_000) -> str:
    """Any stored payload value as display text (never raises): text as is, numbers, else compact JSON.

    Parameters
    ----------
    value : object
        A payload value.
    limit : int
        Characters kept at most.

    Returns
    -------
    str
        ``""`` for ``None``; ``<type>`` for a value JSON cannot hold.

    Examples
    --------
    >>> text_of(None), text_of(0.5), text_of(["北京", 1])
    ('', '0.5', '["北京", 1]')
    """
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
    """A payload value as a float when it is a number (not a bool), else ``None``.

    Parameters
    ----------
    value : object

    Returns
    -------
    float or None
    """
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
                link_annotator: str | None = None, filters: QueueFilter | None = None) -> ItemView:
    """The item to show ``annotator`` and everything about it they may see.

    ``item_id``: the item wanted (a link, or the page's current item).  A link's item is honoured
    only when the link names this annotator (or no one), or nobody acts yet (``annotator`` empty:
    the item is shown, with nobody's decision); otherwise the annotator's next item opens
    (within ``filters``, :func:`queue_filter`).

    Parameters
    ----------
    store : ReviewStore
    session : Session
    annotator : str
        The acting name (``""``: nobody; no item is claimed).
    item_id : int, optional
        The item wanted.
    link_annotator : str, optional
        The annotator a link was made for.
    filters : QueueFilter, optional
        Restrict the queue.

    Returns
    -------
    ItemView
        ``item`` ``None`` when nothing is left for the annotator; the next item is claimed for
        the annotator when one acts.
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
        item = store.next_item(session.id, annotator, claim=bool(annotator), filters=filters)
    progress = store.progress(session.id, annotator)
    if item is None:
        return ItemView(None, progress, note=note)
    p = item.payload if isinstance(item.payload, dict) else {}
    everyone = store.item_decisions(item.id)  # the annotator's own among them (one query)
    mine = next((d for d in everyone if d.annotator == annotator), None) if annotator else None
    others = [d for d in everyone if d.annotator != annotator]
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
    metrics = _metric_text(em, f1, session.blind)
    title = " · ".join(x for x in (text_of(p.get("id")), text_of(p.get("question") or p.get("context"))) if x)
    return ItemView(item, progress, mine, visible_others, len(others) - len(visible_others), title,
                    text_of(p.get("ground_truth")), text_of(p.get("prediction")), sides,
                    None if session.blind else (text_of(p.get("system")) or None), metrics, choices, note,
                    time.time())


def decide(store: ReviewStore, session: Session, annotator: str, item_id: int, label: str | None, *,
           score: int | None = None, comment: str = "", seen_version: int = 0,
           shown_at: float | None = None) -> Decision:
    """Save the annotator's decision (``label=None``: skip) on an item of this session.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    annotator : str
        Whose decision.
    item_id : int
        An item of ``session``.
    label : str or None
        One of the item's labels (:func:`labels_for`); ``None`` skips the item (status ``skipped``).
    score : int, optional
        Rubric score 1-5 (dropped on a skip).
    comment : str
        Free text.
    seen_version : int
        The decision's version when the page read it (0: none yet); optimistic locking.
    shown_at : float, optional
        ``time.time()`` when the item was shown: the seconds spent are stored.

    Returns
    -------
    Decision
        As saved, with its new version.

    Raises
    ------
    ValueError
        An item of another session, or a bad field (see :meth:`ReviewStore.save_decision`).
    StaleDecision
        The decision changed since ``seen_version`` was read.
    """
    if role_of(annotator) is not None:  # a typed name decides as before (its checks are the store's)
        require(session, annotator, "decide")
    item = store.item(item_id)
    if item is None or item.session_id != session.id:
        raise ValueError(f"item {item_id} is not in session {session.name!r}")
    seconds = None if shown_at is None else max(0.0, time.time() - shown_at)
    saved = store.save_decision(item_id, annotator, label=label, score=score if label else None, comment=comment,
                                status="submitted" if label else "skipped", expected_version=seen_version,
                                seconds=seconds, guidelines_version=session.guidelines_version,
                                audit=audit_row(annotator, "decide", session, item_id, label or "skipped"))
    return saved


def step(store: ReviewStore, session: Session, annotator: str, item_id: int, direction: int,
         filters: QueueFilter | None = None) -> int:
    """The item to show after ``item_id``: ``direction < 0`` the item this annotator decided before
    it, else the next open item (claimed, within ``filters``); ``item_id`` itself when there is none.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    annotator : str
    item_id : int
        The item shown now.
    direction : int
        Negative: back; otherwise forward.
    filters : QueueFilter, optional

    Returns
    -------
    int
        An item id.
    """
    if direction < 0:
        target = store.previous_item(session.id, annotator, store.item(item_id))
    else:
        target = store.next_item(session.id, annotator, exclude=[item_id], claim=True, filters=filters)
    return target.id if target is not None else item_id


def undo(store: ReviewStore, session: Session, who: str | None, *, expected_change: int | None = None) -> HistoryEntry:
    """Undo ``who``'s own last decision in the session (:meth:`ReviewStore.undo_last`); returns the
    undo's history row (its ``item_id`` is the item to show).

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.
    expected_change : int, optional
        Id of the history row the page believes is the last one (refused when another is).

    Returns
    -------
    HistoryEntry

    Raises
    ------
    PermissionError
        Nobody acts (no confirmed name).
    LookupError
        Nothing to undo.
    StaleDecision
        The decision changed since (another tab, an import), or the last change is not ``expected_change``.
    """
    if not who:
        raise PermissionError("confirm your name first: only your own decisions can be undone")
    require(session, who, "undo")
    return store.undo_last(session.id, who, expected_change=expected_change,
                           audit=audit_row(who, "undo", session))


def history_rows(store: ReviewStore, session: Session, who: str | None, item_id: int) -> list[dict[str, Any]]:
    """The item's decision history as table rows, oldest first: one's own changes, and everyone's
    for those who may see other reviewers' decisions on it (:func:`can_see_others`).

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.
    item_id : int

    Returns
    -------
    list of dict
        Keys ``when`` (UTC, to the second), ``annotator``, ``action``, ``before``, ``after``,
        ``comment``, ``version``, ``guidelines``, ``by``; empty when nobody acts and the item's
        decisions are not open to everyone.
    """
    mine = store.decision(item_id, who) if who else None
    everyone = can_see_others(session, who, mine)
    if not who and not everyone:
        return []
    rows = []
    for h in store.history(item_id, None if everyone else who):
        rows.append({"when": h.at[:19].replace("T", " "), "annotator": h.annotator, "action": h.action,
                     "before": _state(h.old_label, h.old_status, h.old_score),
                     "after": _state(h.new_label, h.new_status, h.new_score),
                     "comment": h.new_comment or "", "version": h.new_version,
                     "guidelines": h.guidelines_version, "by": h.actor})
    return rows


def _state(label: str | None, status: str | None, score: int | None) -> str:
    if status is None:
        return "(none)"
    return label_words(label or status) + (f" · {score}/5" if score else "")


def labels_for(item: Item) -> tuple[str, ...]:
    """The labels an item can take (A/B labels for a two-sided item, else :data:`LABELS`).

    Parameters
    ----------
    item : Item

    Returns
    -------
    tuple of str
    """
    return PAIR_LABELS if is_two_sided(item.payload) else LABELS


def metric_name(session: Session) -> str | None:
    """What the metric-range filter reads for the session's kind (:data:`evaluators.review.items.AUTOMATIC`).

    Parameters
    ----------
    session : Session

    Returns
    -------
    str or None
        ``"exact match"``, ``"LLM judge"`` ...; ``None`` for a kind without an automatic score.
    """
    from evaluators.review.items import AUTOMATIC

    return AUTOMATIC.get(session.kind, ((), None))[1]


def allowed_filters(session: Session, who: str | None) -> frozenset[str]:
    """The queue filters ``who`` may use (module docstring): ``system`` and ``metric`` where the
    item shows them, ``label`` and ``disagreement`` for adjudicators.

    Parameters
    ----------
    session : Session
        The review session.
    who : str or None
        The acting name (``None`` or ``""``: nobody yet, never allowed).

    Returns
    -------
    frozenset of str
        Empty for nobody; no ``system`` / ``metric`` in a blind session for a non-adjudicator.
    """
    if not who:
        return frozenset()
    adjudicator = can_adjudicate(session, who)
    out = set() if session.blind and not adjudicator else {"system", "metric"}
    if adjudicator:
        out |= {"label", "disagreement"}
    return frozenset(out)


def queue_filter(session: Session, who: str | None, *, system: str | None = None, label: str | None = None,
                 disagreement: bool = False, metric_range: tuple[float, float] | None = None) -> QueueFilter | None:
    """The :class:`~evaluators.review.store.QueueFilter` of the page's filter widgets (``None``: no filter).

    Parameters
    ----------
    session : Session
    who : str or None
        The acting name.
    system : str, optional
        Items of this system only.
    label : str, optional
        Items a reviewer submitted with this label (adjudicators).
    disagreement : bool
        Items whose submitted labels differ (adjudicators).
    metric_range : (float, float), optional
        ``(low, high)`` of the automatic score, bounds included.

    Returns
    -------
    QueueFilter or None

    Raises
    ------
    PermissionError
        A filter ``who`` may not use (:func:`allowed_filters`).
    ValueError
        An unknown label or an empty range.
    """
    wanted = {"system": system is not None, "label": bool(label), "disagreement": bool(disagreement),
              "metric": metric_range is not None}
    refused = sorted(k for k, on in wanted.items() if on and k not in allowed_filters(session, who))
    if refused:
        raise PermissionError(f"{', '.join(refused)} filter(s) are not open to {who or 'an anonymous reviewer'} "
                              "in this session")
    low, high = metric_range if metric_range is not None else (None, None)
    f = QueueFilter(system=system, label=label or None, disagreement=bool(disagreement), metric_min=low,
                    metric_max=high)
    return f if f.active else None


def set_blind(store: ReviewStore, session: Session, who: str | None, blind: bool) -> Session:
    """Turn blind mode on (any time) or off (only while no decision was made blind), for those who manage.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.
    blind : bool

    Returns
    -------
    Session
        ``session`` itself when nothing changes.

    Raises
    ------
    PermissionError
        ``who`` may not manage the session.
    ValueError
        Turning it off after decisions were made blind.
    """
    if role_of(who) is not None:  # signed in (or --role): the policy's refusal names the role
        require(session, who, "settings")
    if not can_manage(session, who):
        raise PermissionError(f"{who or 'an anonymous reviewer'} may not change {session.name!r}: the owner and "
                              f"{ADMINS_ENV} may")
    if session.blind and not blind and (n := store.decided_blind(session.id)):
        raise ValueError(f"blind mode stays on: {n} decision(s) were made blind in this session")
    if bool(blind) == session.blind:
        return session
    return store.update_session(session.id, blind=bool(blind),
                                audit=audit_row(who, "settings", session, detail=f"blind {'on' if blind else 'off'}"))


def mark_gold(store: ReviewStore, session: Session, who: str | None, item_id: int, label: str | None) -> Item:
    """Mark (``label``) or unmark (``None``) a gold item, for those who manage the session.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.
    item_id : int
        An item of ``session``.
    label : str or None
        The item's known label.

    Returns
    -------
    Item

    Raises
    ------
    PermissionError
        ``who`` may not manage the session.
    ValueError
        An item of another session or a bad label.
    """
    if role_of(who) is not None:  # signed in (or --role): the policy's refusal names the role
        require(session, who, "gold")
    if not may(session, who, "gold"):
        raise PermissionError(f"{who or 'an anonymous reviewer'} may not mark gold items in {session.name!r}")
    item = store.item(item_id)
    if item is None or item.session_id != session.id:
        raise ValueError(f"item {item_id} is not in session {session.name!r}")
    if label is not None and label not in ALL_LABELS:
        raise ValueError(f"gold label must be one of {', '.join(ALL_LABELS)}, not {label!r:.60}")
    return store.set_gold(item_id, label, audit=audit_row(who, "gold", session, item_id, label or "unmarked"))


def gold_rows(store: ReviewStore, session: Session, who: str | None) -> list[dict[str, Any]] | None:
    """Each annotator's accuracy on gold items (``n``, correct, accuracy and its 95% Wilson
    interval) as table rows; ``None`` for those who may not see it (:func:`can_manage`).

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.

    Returns
    -------
    list of dict or None
        Keys ``annotator``, ``n``, ``correct``, ``accuracy`` (in [0, 1]), ``95% CI low``, ``95% CI high``.
    """
    if not can_manage(session, who):
        return None
    return [{"annotator": g.annotator, "n": g.n, "correct": g.correct, "accuracy": g.accuracy,
             "95% CI low": g.ci_low, "95% CI high": g.ci_high} for g in store.gold_accuracy(session.id)]


def fast_threshold(session: Session) -> float:
    """The fast-decision threshold of a session, in seconds: its ``fast_seconds`` setting (session settings,
    :func:`update_settings`), else ``EVALBOARD_REVIEW_FAST_SECONDS``, else :data:`DEFAULT_FAST_SECONDS` (2 s).
    A value that is not a number in (0, 3600] is passed over.

    Parameters
    ----------
    session : Session

    Returns
    -------
    float
    """
    def usable(value: Any) -> float | None:
        try:
            x = float(value)
        except (TypeError, ValueError):
            return None
        return x if not isinstance(value, bool) and 0 < x <= 3600 else None

    for value in ((session.settings or {}).get("fast_seconds"), os.environ.get(FAST_ENV)):
        if (x := usable(value)) is not None:
            return x
    return DEFAULT_FAST_SECONDS


def team_rows(store: ReviewStore, session: Session) -> list[dict[str, Any]]:
    """Team progress as table rows, one per annotator in name order: ``decided``, ``skipped``, ``median seconds
    on item``, and ``fast decisions``, the submitted decisions made in less than :func:`fast_threshold` seconds
    on the item (:meth:`ReviewStore.fast_decisions`; ``None`` where no decision of theirs recorded a time).

    Parameters
    ----------
    store : ReviewStore
    session : Session

    Returns
    -------
    list of dict
        Empty when nobody decided yet.
    """
    fast = store.fast_decisions(session.id, fast_threshold(session))
    return [{"annotator": p.annotator, "decided": p.decided, "skipped": p.skipped,
             "median seconds on item": p.median_seconds,
             "fast decisions": fast[p.annotator][0] if p.annotator in fast else None}
            for p in store.team_progress(session.id).annotators]


def update_settings(store: ReviewStore, session: Session, who: str | None, *, guidelines: str | None = None,
                    labels_help: dict[str, str] | None = None, k: int | None = None,
                    adjudicators: list[str] | None = None, blind: bool | None = None,
                    fast_seconds: float | None = None) -> Session:
    """Save session settings (``None``: leave as is), for those who manage the session (:func:`can_manage`):
    guidelines (Markdown; a changed text becomes a new version, who and when kept), label help, reviewers
    per item ``k``, adjudicators, blind mode (:func:`set_blind`'s rule: off only before blind decisions).

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.
    guidelines : str, optional
    labels_help : dict of str to str, optional
        Label -> one-line definition.
    k : int, optional
        Reviewers per item, 1 to 100.
    adjudicators : list of str, optional
        The full new list (blank names dropped).
    blind : bool, optional
    fast_seconds : float, optional
        The fast-decision threshold of Team progress (:func:`fast_threshold`), seconds in (0, 3600].

    Returns
    -------
    Session
        As stored after the change.

    Raises
    ------
    PermissionError
        ``who`` may not manage the session (the owner and ``EVALBOARD_REVIEW_ADMINS`` may).
    ValueError
        A bad value (``k < 1``, an unknown label, a bad name), or blind mode turned off after blind decisions.
    """
    if role_of(who) is not None:  # signed in (or --role): the policy's refusal names the role
        require(session, who, "settings")
    if not can_manage(session, who):
        raise PermissionError(f"{who or 'an anonymous reviewer'} may not change the settings of {session.name!r}: "
                              f"its owner ({session.created_by}) and {ADMINS_ENV} may")
    if blind is not None and session.blind and not blind and (n := store.decided_blind(session.id)):
        raise ValueError(f"blind mode stays on: {n} decision(s) were made blind in this session")
    if adjudicators is not None:
        adjudicators = [a.strip() for a in adjudicators if a and a.strip()]
    fields = [n for n, v in (("guidelines", guidelines), ("labels_help", labels_help), ("k", k),
                             ("adjudicators", adjudicators), ("blind", blind), ("fast_seconds", fast_seconds))
              if v is not None]
    return store.update_session(session.id, guidelines=guidelines, labels_help=labels_help, k=k,
                                adjudicators=adjudicators, by=None if who is None else str(who),
                                fast_seconds=fast_seconds,
                                blind=None if blind is None or bool(blind) == session.blind else bool(blind),
                                audit=audit_row(who, "settings", session, detail=", ".join(fields)))


def settings_refusal(session: Session, who: str | None) -> str | None:
    """Why ``who`` may not change the session's settings (``None``: they may).

    Parameters
    ----------
    session : Session
    who : str or None

    Returns
    -------
    str or None
        One sentence for the page.
    """
    if can_manage(session, who):
        return None
    if (role := role_of(who)) is not None:
        return f"Your role ({role or 'none'}) does not change the session's settings; you review as {who}."
    return (f"Only the session's owner ({session.created_by}) and the names in {ADMINS_ENV} change its settings"
            + ("; confirm your name in the sidebar first." if not who else f"; you review as {who}."))


def _metric_text(em: float | None, f1: float | None, blind: bool) -> str | None:
    """``"EM 1 · F1 0.67"`` for an item card (``None`` in a blind session or without EM; a missing F1 is "—",
    never 0)."""
    if blind or em is None:
        return None
    return f"EM {em:.0f} · F1 {'—' if f1 is None else format(f1, '.2f')}"


def guidelines_versions(store: ReviewStore, session: Session) -> list[dict[str, Any]]:
    """Every saved version of the session's guidelines, oldest first: ``version``, ``text``, ``by``, ``at``
    and ``decisions`` (how many current decisions were made under it).

    Parameters
    ----------
    store : ReviewStore
    session : Session

    Returns
    -------
    list of dict
    """
    counts = store.guidelines_counts(session.id)  # one grouped query, cached until the session changes
    return [{**v, "decisions": counts.get(v["version"], 0)} for v in _stored_versions(session)]


def guidelines_diff(store: ReviewStore, session: Session, old: int, new: int) -> str:
    """A unified diff (:func:`difflib.unified_diff`, by line) of two guidelines versions.

    Parameters
    ----------
    store : ReviewStore
    session : Session
        Read again from the store (the latest versions).
    old, new : int
        Two version numbers.

    Returns
    -------
    str
        ``""`` when the texts are equal.

    Raises
    ------
    KeyError
        No such version.
    """
    import difflib

    texts = {v["version"]: v["text"] if v["text"].endswith("\n") or not v["text"] else v["text"] + "\n"
             for v in _stored_versions(store.session(session.id))}
    for v in (old, new):
        if v not in texts:
            raise KeyError(f"no guidelines version {v} in {session.name!r} (versions: "
                           f"{', '.join(map(str, texts)) or 'none'})")
    return "".join(difflib.unified_diff(texts[old].splitlines(keepends=True), texts[new].splitlines(keepends=True),
                                        f"guidelines v{old}", f"guidelines v{new}", lineterm="\n"))


def text_diff(expected: str, predicted: str) -> list[tuple[str, str, str]]:
    """GT against prediction for display: CJK by character, other text by word
    (:func:`evaluators.text.diff.mixed_diff`).

    Parameters
    ----------
    expected : str
        The ground truth.
    predicted : str
        The prediction.

    Returns
    -------
    list of (str, str, str)
        The diff's pieces as :func:`~evaluators.text.diff.mixed_diff` gives them.
    """
    from evaluators.text.diff import mixed_diff

    return mixed_diff(expected, predicted)


@dataclass(frozen=True)
class AdjudicationEntry:
    """An item waiting for (or given) a final label: ``gt_claims`` reviewers said GT error, ``n_labels``
    distinct labels among ``n_reviews`` submitted decisions, ``top_share`` the share of the commonest label
    (lower: more split)."""

    item_id: int
    done: bool
    gt_claims: int
    n_labels: int
    n_reviews: int
    top_share: float


def adjudication_entries(store: ReviewStore, session: Session) -> list[AdjudicationEntry]:
    """The items that need an adjudicator (:meth:`ReviewStore.adjudication_items`) in the order to work on
    them: GT-error claims first, then the most split (more distinct labels, then a smaller commonest
    share), then by position.

    Parameters
    ----------
    store : ReviewStore
    session : Session

    Returns
    -------
    list of AdjudicationEntry
        Adjudicated items included (``done``).
    """
    entries = store.adjudication_items(session.id)
    votes = store.label_votes(session.id, [i for i, _ in entries])
    out = []
    for pos, (item_id, done) in enumerate(entries):
        counts = votes.get(item_id, {})
        n = sum(counts.values())
        out.append((pos, AdjudicationEntry(item_id, done, counts.get("gt_error", 0), len(counts), n,
                                           max(counts.values()) / n if n else 1.0)))
    out.sort(key=lambda pe: (pe[1].gt_claims == 0, -pe[1].n_labels, pe[1].top_share, pe[0]))
    return [e for _, e in out]


def next_to_adjudicate(store: ReviewStore, session: Session, after: int | None = None) -> int | None:
    """The next item waiting for adjudication after item ``after`` (in :func:`adjudication_entries`'
    order, wrapping round), or ``None``.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    after : int, optional
        The item shown now (``None`` or not in the list: from the start).

    Returns
    -------
    int or None
        An item id; ``None`` when every item is adjudicated.
    """
    items = [(e.item_id, e.done) for e in adjudication_entries(store, session)]
    ids = [i for i, _ in items]
    start = ids.index(after) + 1 if after in ids else 0
    for item_id, done in items[start:] + items[:start]:
        if not done:
            return item_id
    return None


def shorten(text: str, limit: int = 70) -> str:
    """One line of at most ``limit`` characters (an ellipsis where cut).

    Parameters
    ----------
    text : str
    limit : int
        Characters at most, the ellipsis included.

    Returns
    -------
    str
        Whitespace runs collapsed to one space.

    Examples
    --------
    >>> shorten("北京  是\\n中国的首都", 6)
    '北京 是…'
    """
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit - 1].rstrip() + "…"


def adjudication_names(store: ReviewStore, session: Session, item_ids: list[int] | None = None) -> dict[int, str]:
    """The adjudication picker's text of each item: its question (shortened), then its record id.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    item_ids : list of int, optional
        Default: every item of :func:`adjudication_entries`.

    Returns
    -------
    dict of int to str
    """
    ids = item_ids if item_ids is not None else [e.item_id for e in adjudication_entries(store, session)]
    out = {}
    for item_id, payload in store.item_payloads(session.id, ids).items():
        question = shorten(text_of(payload.get("question") or payload.get("context") or payload.get("prompt")))
        record = text_of(payload.get("id"))[:40]
        out[item_id] = (f"{question} ({record})" if record else question) if question else (record or str(item_id))
    return out


@dataclass(frozen=True)
class AdjudicationView:
    """One item as its reviewers saw it, for the adjudicator (all text raw: the page escapes it)."""

    item: Item
    question: str
    ground_truth: str
    prediction: str
    diff: list[tuple[str, str, str]]
    system: str | None
    metrics: str | None
    sides: list[Side]
    reviewers: list[dict[str, Any]]
    final: dict[str, Any] | None
    choices: list[tuple[str, str]]   # (stored label, words)


def adjudication_view(store: ReviewStore, session: Session, who: str | None, item_id: int) -> AdjudicationView:
    """What the Adjudicate view shows of an item: question, GT, prediction and their diff
    (:func:`text_diff`), system and metric unless the session is blind, every reviewer's label (in words),
    score, comment and guidelines version, the final label if any, and the labels to choose from.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.
    item_id : int

    Returns
    -------
    AdjudicationView

    Raises
    ------
    PermissionError
        ``who`` may not adjudicate.
    ValueError
        The item is not in the session.
    """
    if role_of(who) is not None:  # signed in (or --role): the policy's refusal names the role
        require(session, who, "adjudicate")
    if not can_adjudicate(session, who):
        raise PermissionError(f"{who or 'an anonymous reviewer'} may not adjudicate {session.name!r}")
    item = store.item(item_id)
    if item is None or item.session_id != session.id:
        raise ValueError(f"item {item_id} is not in session {session.name!r}")
    p = item.payload if isinstance(item.payload, dict) else {}
    gt, pred = text_of(p.get("ground_truth")), text_of(p.get("prediction"))
    sides = []
    raw_sides = p.get("sides")
    if is_two_sided(p):
        for side in ("A", "B"):
            shown = raw_sides[side]
            sides.append(Side(f"{side}", None if session.blind else text_of(shown.get("system")) or None,
                              text_of(shown.get("prediction"))))
    em, f1 = number_of(p.get("exact_match")), number_of(p.get("token_f1"))
    reviewers = [{"annotator": d.annotator, "label": label_words(d.label or d.status), "score": d.score,
                  "comment": d.comment, "guidelines": d.guidelines_version}
                 for d in store.item_decisions(item_id) if d.status == "submitted"]
    return AdjudicationView(item, text_of(p.get("question") or p.get("context") or p.get("prompt")), gt, pred,
                            text_diff(gt, pred) if not sides else [],
                            None if session.blind else (text_of(p.get("system")) or None),
                            _metric_text(em, f1, session.blind),
                            sides, reviewers, store.adjudication(item_id),
                            [(lab, label_words(lab)) for lab in labels_for(item)])


def adjudicate(store: ReviewStore, session: Session, who: str | None, item_id: int, label: str,
               note: str = "", *, corrected_answer: str | None = None) -> None:
    """Record a final label, for those who may (:func:`can_adjudicate`); a GT error's
    ``corrected_answer`` is kept with it (it becomes a GT patch).

    Parameters
    ----------
    store : ReviewStore
    session : Session
    who : str or None
        The acting name.
    item_id : int
        An item of ``session``.
    label : str
        The final label (one of the item's labels).
    note : str
        The adjudicator's note.
    corrected_answer : str, optional
        The right answer of a ``gt_error`` item.

    Raises
    ------
    PermissionError
        ``who`` may not adjudicate this session.
    ValueError
        No final label was chosen (nothing is pre-chosen for the adjudicator), or the item is not in the
        session.
    """
    if role_of(who) is not None:  # signed in (or --role): the policy's refusal names the role
        require(session, who, "adjudicate")
    if not can_adjudicate(session, who):
        raise PermissionError(f"{who or 'an anonymous reviewer'} may not adjudicate {session.name!r}: the owner, "
                              f"the session's adjudicators and {ADMINS_ENV} may")
    if not label:
        raise ValueError("Choose a final decision first: nothing is recorded until one is chosen")
    item = store.item(item_id)
    if item is None or item.session_id != session.id:
        raise ValueError(f"item {item_id} is not in session {session.name!r}")
    store.adjudicate(item_id, who or "", label, note, corrected_answer=corrected_answer,
                     audit=audit_row(who, "adjudicate", session, item_id, label))


def gt_corrections_missing(store: ReviewStore, session: Session) -> str | None:
    """Why the session's GT-correction file would be empty (``None`` when it holds a correction).

    A correction is an item adjudicated as a GT error (:meth:`ReviewStore.gt_corrections`); the
    reason names how many items were adjudicated and how many wait, so an empty download is never
    offered as a 0-byte file.

    Parameters
    ----------
    store : ReviewStore
    session : Session

    Returns
    -------
    str or None
    """
    if store.gt_corrections(session.id):
        return None
    done = len(store.adjudications(session.id))
    waiting = sum(1 for _, decided in store.adjudication_items(session.id) if not decided)
    return (f"no item is adjudicated as a GT error yet ({done} adjudicated, {waiting} waiting in the Adjudicate "
            "view): the file would be empty")


def agreement_rows(store: ReviewStore, session: Session, *, by_guidelines: bool = False) -> list[dict[str, Any]]:
    """The Agreement view's table: one row per figure (labels, then 1-5 scores) with its value, its 95%
    bootstrap interval over items, the number of items behind it and whether it is meaningful yet
    (the engine's :func:`~evaluators.review.agreement.session_agreement`, cached until the session changes).

    ``by_guidelines``: the figures of the decisions made under each guidelines version apart (a
    ``guidelines`` column, ``v1``, ``v2`` …, "none" where no version was recorded), each flagged under 30 items.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    by_guidelines : bool

    Returns
    -------
    list of dict
        Keys ``rating``, ``statistic`` (Cohen's kappa mean of pairs, Fleiss' kappa, Krippendorff's
        alpha), ``value``, ``95% CI low``, ``95% CI high``, ``n_items``, ``annotators``, ``meaningful``.

    References
    ----------
    Cohen (1960); Fleiss (1971); Krippendorff (2011); see :mod:`evaluators.metrics.agreement`.
    """
    if by_guidelines:
        return [{"guidelines": "none" if version is None else f"v{version}", **row}
                for version, blocks in store.agreement_by_guidelines(session.id).items()
                for row in _agreement_rows(blocks)]
    return _agreement_rows(store.agreement(session.id))


#: What the Agreement view can split its figures by, besides the guidelines version ("time": windows of
#: :data:`evaluators.review.agreement.TIME_WINDOWS` equal shares of the items, in order of their last decision).
AGREEMENT_SLICES = ("system", "question type", "time")


def agreement_slices(session: Session, who: str | None) -> tuple[str, ...]:
    """The slices of :data:`AGREEMENT_SLICES` ``who`` may split the Agreement view by: no ``system`` in a blind
    session for anyone who may not see its system names (:func:`allowed_filters`' rule: its owner,
    adjudicators and the admins may), since a row per system names them.

    Parameters
    ----------
    session : Session
    who : str or None
        The acting name (``None`` or ``""``: nobody yet).

    Returns
    -------
    tuple of str
        In the order of :data:`AGREEMENT_SLICES`.
    """
    hidden = session.blind and not can_adjudicate(session, who)
    return tuple(s for s in AGREEMENT_SLICES if not (hidden and s == "system"))


def agreement_slice_rows(store: ReviewStore, session: Session, by: str,
                         who: str | None = None) -> list[dict[str, Any]]:
    """The Agreement view's figures by slice: each ``system``, ``question type`` or ``time`` window apart
    (:func:`~evaluators.review.agreement.agreement_by_slice`, :func:`~evaluators.review.agreement.agreement_over_time`),
    every row with its own 95% interval and under-30 flag, cached until the session changes.

    Parameters
    ----------
    store : ReviewStore
    session : Session
    by : {"system", "question type", "time"}
    who : str or None
        The acting name; ``system`` in a blind session only for those :func:`agreement_slices` allows.

    Returns
    -------
    list of dict
        The rows of :func:`agreement_rows` with a leading ``system`` / ``question type`` column ("none" for
        items without one), or for ``time`` the columns ``window``, ``from``, ``to`` (ISO times of the items'
        last decisions).

    Raises
    ------
    ValueError
        Another ``by``.
    PermissionError
        ``system`` in a blind session for someone who may not see its system names.
    """
    from evaluators.review.agreement import agreement_by_slice, agreement_over_time, item_slices

    if by not in AGREEMENT_SLICES:
        raise ValueError(f"by must be one of {', '.join(AGREEMENT_SLICES)}, not {by!r}")
    if by not in agreement_slices(session, who):
        raise PermissionError("this session is blind: its system names are shown to its owner, adjudicators "
                              "and admins only")

    def compute() -> list[dict[str, Any]]:
        decisions = store.ratings(session.id)
        if by == "time":
            return [{"window": w["window"], "from": w["start"], "to": w["end"], **row}
                    for w in agreement_over_time(decisions) for row in _agreement_rows(w["agreement"])]
        blocks = agreement_by_slice(decisions, item_slices(store, session.id, by))
        return [{by: "none" if name is None else name, **row} for name, b in blocks.items() for row in _agreement_rows(b)]

    return store._cached(session.id, f"agreement_by_{by}", compute)


def _agreement_rows(blocks: dict[str, Any]) -> list[dict[str, Any]]:
    names = {"cohen_kappa_mean": "Cohen's kappa (mean of pairs)", "fleiss_kappa": "Fleiss' kappa",
             "krippendorff_alpha": "Krippendorff's alpha"}
    rows = []
    for fld, block in blocks.items():
        for key, name in names.items():
            fig = (block.get("figures") or {}).get(key) or {}
            rows.append({"rating": "labels (nominal)" if fld == "label" else "1-5 scores (ordinal)",
                         "statistic": name, "value": fig.get("value", block.get(key)),
                         "95% CI low": fig.get("ci_low"), "95% CI high": fig.get("ci_high"),
                         "n_items": fig.get("n_items", block["n_items"]), "annotators": block["n_annotators"],
                         "meaningful": "yes" if fig.get("meaningful") else (fig.get("note") or "no")})
    return rows


def automatic(store: ReviewStore, session: Session) -> dict[str, Any]:
    """The automatic verdict (metric or judge) against each reviewer
    (:func:`~evaluators.review.agreement.automatic_agreement`), cached until the session changes.

    Parameters
    ----------
    store : ReviewStore
    session : Session

    Returns
    -------
    dict
        As :func:`~evaluators.review.agreement.automatic_agreement` returns it.
    """
    from evaluators.review.agreement import automatic_agreement_of_scores, automatic_scores, cached_rating_columns

    return store._cached(session.id, "automatic", lambda: automatic_agreement_of_scores(
        *automatic_scores(store, session.id), cached_rating_columns(store, session.id)))


__all__ = [
    "ADMINS_ENV",
    "LABEL_WORDS",
    "AdjudicationEntry",
    "AdjudicationView",
    "adjudication_entries",
    "adjudication_names",
    "adjudication_view",
    "guidelines_diff",
    "guidelines_versions",
    "label_words",
    "shorten",
    "text_diff",
    "update_settings",
    "settings_refusal",
    "LABEL_HELP",
    "LABEL_TEXT",
    "Identity",
    "ItemView",
    "Side",
    "StaleDecision",
    "adjudicate",
    "admins",
    "agreement_rows",
    "agreement_slice_rows",
    "agreement_slices",
    "AGREEMENT_SLICES",
    "allowed_filters",
    "gold_rows",
    "history_rows",
    "labels_for",
    "metric_name",
    "mark_gold",
    "next_to_adjudicate",
    "queue_filter",
    "set_blind",
    "undo",
    "automatic",
    "can_adjudicate",
    "can_decide",
    "export_allowed",
    "check_export",
    "create_session",
    "DEFAULT_FAST_SECONDS",
    "FAST_ENV",
    "fast_threshold",
    "team_rows",
    "delete_session",
    "export",
    "may",
    "require",
    "audit",
    "audit_row",
    "Actor",
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
