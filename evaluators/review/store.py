"""Durable human review sessions: SQLite by default (any SQLAlchemy URL works), every decision committed.

Tables (schema :data:`~evaluators.review.schema.SCHEMA_VERSION`, created and migrated by Alembic:
:mod:`evaluators.review.schema`):

- ``uploads``: the files a session was made from, by SHA-256 content digest (a session and its
  link reopen after a restart or in another browser);
- ``sessions``: name, task kind, creator (the owner), blind mode, reviewers per item ``k``, the
  seed of the item order, the digests of its uploads, settings (guidelines, adjudicators), its
  item count and a change counter (+1 per decision or adjudication: caches are keyed on it);
- ``items``: what a reviewer sees (JSON payload), keyed by the digest of its canonical JSON, with
  its seeded rank, its number of submitted decisions and an optional gold label;
- ``decisions``: one row per (item, annotator): label (``model_error`` / ``gt_error`` /
  ``acceptable_variant`` / ``correct``, or an A/B label), optional 1-5 score, comment, status (``draft`` /
  ``submitted`` / ``skipped``) and a version for optimistic locking (:class:`StaleDecision`);
- ``adjudications``: the final label of an item and who decided it.

Every page run costs work proportional to what it shows: the next item for an annotator is one
indexed query (:meth:`ReviewStore.next_item`), progress is counted in SQL, and the agreement
figures and the adjudication queue are cached per session until its change counter moves.

SQLite runs in WAL mode with ``synchronous=FULL`` and takes its write lock at the start of every
write (``BEGIN IMMEDIATE``): a decision is on disk when :meth:`ReviewStore.save_decision`
returns, a killed server loses none, and concurrent writers wait instead of failing.  The ground
truth is never edited: :meth:`ReviewStore.gt_corrections` lists the corrections to apply elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import StaticPool

from evaluators.results import DictMixin
from evaluators.review.items import filter_columns
from evaluators.review.labels import ALL_LABELS, LABELS, PAIR_LABELS, RIGHT_LABELS, WRONG_LABELS, human_verdict
from evaluators.review.limits import MAX_GUIDELINES, MAX_ITEMS, canonical_payload, check_k, check_name, check_text
from evaluators.review.schema import (
    SCHEMA_VERSION,
    SchemaTooNew,
    adjudications_table,
    audit_table,
    claims_table,
    decisions_table,
    ensure_schema,
    history_table,
    items_table,
    sessions_table,
    sqlite_path,
    uploads_table,
)

STATUSES = ("draft", "submitted", "skipped")
#: Largest upload kept in the database (bytes).
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
#: Rows per statement batch in bulk writes.
BATCH = 2_000
#: How long an item handed out by :meth:`ReviewStore.next_item` stays claimed (seconds).
CLAIM_SECONDS = 600
#: Stores opened in this process (weakly held), so tests can close their pools before dropping a database.
OPEN_STORES: weakref.WeakSet = weakref.WeakSet()

__all__ = ["ALL_LABELS", "LABELS", "MAX_UPLOAD_BYTES", "PAIR_LABELS", "RIGHT_LABELS", "SCHEMA_VERSION", "STATUSES",
           "WRONG_LABELS", "human_verdict",
           "AnnotatorProgress", "Decision", "GoldAccuracy", "HistoryEntry", "Item", "Progress", "QueueFilter",
           "ReviewStore", "SchemaTooNew", "Session", "StaleDecision", "TeamProgress", "default_url", "history_row",
           "open_engines", "record_history", "guidelines_versions",
           "is_two_sided", "item_digest"]


class StaleDecision(RuntimeError):
    """The decision changed since it was read (another tab or reviewer saved first): reload and retry."""


@dataclass(frozen=True)
class Decision(DictMixin):
    """One annotator's decision on one item.

    Attributes
    ----------
    item_id : int
    item_digest : str
    annotator : str
    label : str or None
        One of :data:`LABELS`, or of :data:`PAIR_LABELS` for an A/B item (``None`` for a skipped item).
    score : int or None
        1-5 where the rubric has one.
    comment : str
    status : str
        One of :data:`STATUSES`.
    version : int
        Starts at 1, +1 per save (optimistic locking).
    updated_at : str
        UTC, ISO 8601.
    seconds : float or None
        Time on the item before the save (seconds), where the page measured it.
    guidelines_version : int or None
        The session's guidelines version the decision was made under (``None``: not recorded).
    """

    item_id: int
    item_digest: str
    annotator: str
    label: str | None
    score: int | None
    comment: str
    status: str
    version: int
    updated_at: str
    seconds: float | None = None
    guidelines_version: int | None = None


@dataclass(frozen=True)
class Item(DictMixin):
    """A reviewable item: ``payload`` is what the reviewer sees (question, GT, prediction, system ...)."""

    id: int
    session_id: int
    position: int
    digest: str
    payload: dict
    gold: str | None = None


@dataclass(frozen=True)
class Session(DictMixin):
    """A review session (see the module docstring).  ``settings``: ``guidelines`` (Markdown),
    ``guidelines_version`` and ``adjudicators`` (names)."""

    id: int
    name: str
    kind: str
    created_by: str
    blind: bool
    k: int
    seed: int
    uploads: tuple[str, ...]
    created_at: str
    settings: dict | None = None
    n_items: int = 0

    @property
    def adjudicators(self) -> tuple[str, ...]:
        return tuple((self.settings or {}).get("adjudicators") or ())

    @property
    def guidelines(self) -> str:
        return str((self.settings or {}).get("guidelines") or "")

    @property
    def guidelines_version(self) -> int | None:
        """The version of the guidelines (1 when set without one), ``None`` without guidelines."""
        if not self.guidelines:
            return None
        version = (self.settings or {}).get("guidelines_version")
        return version if isinstance(version, int) and not isinstance(version, bool) else 1


@dataclass(frozen=True)
class Progress(DictMixin):
    """Counts of a session for one annotator (aggregate queries, no item read)."""

    n_items: int
    decided: int          # this annotator's submitted or skipped decisions
    complete: int         # items with k submitted decisions
    n_decisions: int      # everyone's decisions


@dataclass(frozen=True)
class QueueFilter(DictMixin):
    """What restricts an annotator's queue (:meth:`ReviewStore.next_item`); every field optional.

    Attributes
    ----------
    system : str or None
        Items of this system (model) only.
    label : str or None
        Items that a reviewer has submitted with this label.
    disagreement : bool
        Items whose submitted labels differ.
    metric_min, metric_max : float or None
        Items whose automatic score (:func:`evaluators.review.items.automatic_score`: exact match
        for QA, judge score for memory ...) lies in ``[metric_min, metric_max]``; items without
        one are left out when either bound is set.
    """

    system: str | None = None
    label: str | None = None
    disagreement: bool = False
    metric_min: float | None = None
    metric_max: float | None = None

    def __post_init__(self):
        if self.label is not None and self.label not in ALL_LABELS:
            raise ValueError(f"label filter must be one of {', '.join(ALL_LABELS)}, not {self.label!r:.60}")
        for name in ("metric_min", "metric_max"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or value != value):
                raise ValueError(f"{name} must be a number, not {value!r:.60}")
        if self.metric_min is not None and self.metric_max is not None and self.metric_min > self.metric_max:
            raise ValueError(f"metric range is empty: {self.metric_min} > {self.metric_max}")

    @property
    def active(self) -> bool:
        return bool(self.system is not None or self.label or self.disagreement
                    or self.metric_min is not None or self.metric_max is not None)


@dataclass(frozen=True)
class AnnotatorProgress(DictMixin):
    """One annotator's work in a session: ``decided`` (submitted), ``skipped``, and the median
    time on item in seconds over the decisions that recorded one (``None`` without any)."""

    annotator: str
    decided: int
    skipped: int
    median_seconds: float | None


@dataclass(frozen=True)
class TeamProgress(DictMixin):
    """A session's progress for its owner: ``complete`` items have ``k`` submitted decisions;
    ``by_reviews`` maps a number of submitted decisions to the number of items with it;
    ``annotators`` in name order."""

    n_items: int
    k: int
    complete: int
    by_reviews: dict[int, int]
    annotators: list[AnnotatorProgress]


@dataclass(frozen=True)
class GoldAccuracy(DictMixin):
    """One annotator's accuracy on a session's gold items: ``correct`` of ``n`` submitted decisions
    on gold items carry the gold label; ``accuracy = correct / n`` with its 95% Wilson interval
    (:func:`evaluators.metrics.statistics.wilson_interval`)."""

    annotator: str
    n: int
    correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class HistoryEntry(DictMixin):
    """One change of one decision (a row of the append-only history).

    Attributes
    ----------
    id : int
        Increasing: the order of changes.
    session_id, item_id : int
    annotator : str
        Whose decision changed.
    actor : str
        Who changed it (the annotator; the importer's name for an import).
    action : str
        ``save``, ``undo``, ``import`` or ``migrated`` (the state when the history began).
    at : str
        UTC, ISO 8601.
    old_version, old_label, old_score, old_comment, old_status, old_guidelines_version
        The decision before (all ``None``: there was none).
    new_version, new_label, new_score, new_comment, new_status
        The decision after (all ``None``: removed by an undo).
    guidelines_version : int or None
        The guidelines version of the decision after the change.
    blind : bool
        Whether the session was blind at the change.
    undoes : int or None
        For an undo: the id of the change it reverted.
    """

    id: int
    session_id: int
    item_id: int
    annotator: str
    actor: str
    action: str
    at: str
    old_version: int | None
    old_label: str | None
    old_score: int | None
    old_comment: str | None
    old_status: str | None
    old_guidelines_version: int | None
    new_version: int | None
    new_label: str | None
    new_score: int | None
    new_comment: str | None
    new_status: str | None
    guidelines_version: int | None
    blind: bool
    undoes: int | None = None


def history_row(session_id: int, item_id: int, annotator: str, actor: str, action: str, at: str,
                old: Any, new: Mapping[str, Any] | None, blind: bool, *, undoes: int | None = None) -> dict[str, Any]:
    """A history row (a dict for ``decision_history``) of one change from ``old`` (a row with
    version, label, score, comment, status and guidelines_version, or ``None``) to ``new`` (a mapping
    of the same, or ``None``).

    Parameters
    ----------
    session_id, item_id : int
        The decision's session and item.
    annotator : str
        Whose decision it is.
    actor : str
        Who made the change (the annotator, or whoever imported or undid it).
    action : str
        What happened (``save``, ``undo``, ``import``, ``migrated`` ...).
    at : str
        When, ISO 8601 UTC.
    old : row or None
        The decision before (``None``: there was none).
    new : mapping or None
        The decision after (``None``: removed).
    blind : bool
        Whether the session was blind at the time.
    undoes : int, optional
        Id of the history row this change undoes.

    Returns
    -------
    dict of str to object
        One value per column of ``decision_history`` except its id.
    """
    row: dict[str, Any] = {"session_id": session_id, "item_id": item_id, "annotator": annotator, "actor": actor,
                           "action": action, "at": at, "blind": bool(blind), "undoes": undoes}
    if old is None:
        row.update(old_version=None, old_label=None, old_score=None, old_comment=None, old_status=None,
                   old_guidelines_version=None)
    else:
        row.update(old_version=old.version, old_label=old.label, old_score=old.score, old_comment=old.comment,
                   old_status=old.status, old_guidelines_version=getattr(old, "guidelines_version", None))
    if new is None:
        row.update(new_version=None, new_label=None, new_score=None, new_comment=None, new_status=None,
                   guidelines_version=None)
    else:
        g = new.get
        row.update(new_version=g("version"), new_label=g("label"), new_score=g("score"), new_comment=g("comment"),
                   new_status=g("status"), guidelines_version=g("guidelines_version"))
    return row


def record_history(c, rows: list[dict[str, Any]]) -> int | None:
    """Append history rows; the id of the row when there is one.

    Many rows (an import) go to SQLite as one DB-API ``executemany`` of plain tuples: SQLAlchemy's
    per-row parameter processing cost about as much as the insert itself.  Column names are ours.

    Parameters
    ----------
    c : sqlalchemy.Connection
        A connection inside the caller's write transaction.
    rows : list of dict
        :func:`history_row` dicts, all with the same keys.

    Returns
    -------
    int or None
        The new row's id for a single row; ``None`` for none or several.
    """
    if not rows:
        return None
    if len(rows) == 1:
        return c.execute(history_table.insert().values(**rows[0])).inserted_primary_key[0]
    if c.dialect.name == "sqlite":
        cols = list(rows[0])
        c.exec_driver_sql(f"INSERT INTO decision_history ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                          [tuple(r[k] for k in cols) for r in rows])
    else:
        c.execute(history_table.insert(), rows)
    return None


def _history(row) -> HistoryEntry:
    return HistoryEntry(**{k: (bool(v) if k == "blind" else v) for k, v in row._mapping.items()})


def item_digest(payload: Mapping[str, Any]) -> str:
    """SHA-256 of the payload's canonical JSON (sorted keys, no spaces, UTF-8): an item's identity.

    Parameters
    ----------
    payload : mapping
        A review item's payload (JSON-ready).

    Returns
    -------
    str
        64 lower-case hex digits; equal payloads (in any key order) give the same digest.

    Raises
    ------
    TypeError
        A value that is not JSON-serialisable.
    """
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_url() -> str:
    """``EVALBOARD_DATABASE_URL``, else SQLite at ``$EVALBOARD_DATA_DIR/review.sqlite`` (default ``.evalboard``)."""
    url = os.environ.get("EVALBOARD_DATABASE_URL")
    if url:
        return url
    folder = Path(os.environ.get("EVALBOARD_DATA_DIR", ".evalboard"))
    return f"sqlite:///{folder / 'review.sqlite'}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


#: Session orders (setting ``order``) in which the queue follows the items' positions (the order they were
#: given in: :mod:`evaluators.review.create`) rather than the seeded shuffle.
POSITION_ORDERS = ("informative",)


def ordered_by_position(settings_text: str | None) -> bool:
    """Whether a session's queue follows its items' positions (its stored settings' ``order`` is one of
    :data:`POSITION_ORDERS`) rather than the seeded shuffle.

    Parameters
    ----------
    settings_text : str or None
        The session's stored settings (JSON text).

    Returns
    -------
    bool
    """
    return _loads_settings(settings_text).get("order") in POSITION_ORDERS


def item_rank(seed: int, position: int, ordered: bool) -> int:
    """An item's rank: its position in a session ordered by its creator (:func:`ordered_by_position`), else
    :func:`seeded_rank`.

    Parameters
    ----------
    seed : int
        The session's seed.
    position : int
        The item's 0-based position in the session.
    ordered : bool
        The session follows positions.

    Returns
    -------
    int
        Lower ranks are handed out first.
    """
    return position if ordered else seeded_rank(seed, position)


def seeded_rank(seed: int, position: int) -> int:
    """An item's place in its session's seeded order: the first 31 bits of SHA-256 of ``"seed:position"``
    (a shuffle that needs neither the other items nor their number, so items added later, or
    imported in batches, get theirs at once; ties are ordered by item id).

    Parameters
    ----------
    seed : int
        The session's seed (32-bit).
    position : int
        The item's 0-based position.

    Returns
    -------
    int
        In ``[0, 2**31)``.
    """
    return int.from_bytes(hashlib.sha256(f"{seed}:{position}".encode()).digest()[:4], "big") >> 1


def check_decision(label: Any, score: Any, comment: Any, status: Any, *, where: str = "") -> None:
    """The rules of a decision's fields (label, 1-5 score, comment, status); raises a located ``ValueError``.

    Parameters
    ----------
    label : str or None
        One of :data:`ALL_LABELS`, or ``None``.
    score : int or None
        An integer from 1 to 5 (the rubric score), or ``None``.
    comment : str or None
        Free text (length-checked).
    status : str
        One of :data:`STATUSES`; ``submitted`` needs a label.
    where : str
        Put in front of the message (``"line 12"``).

    Raises
    ------
    ValueError
        The first rule broken, located.
    """
    p = f"{where}: " if where else ""
    if label is not None and (not isinstance(label, str) or label not in ALL_LABELS):
        raise ValueError(f"{p}label must be one of {', '.join(ALL_LABELS)} or null, not {label!r:.60}")
    if not isinstance(status, str) or status not in STATUSES:
        raise ValueError(f"{p}status must be one of {', '.join(STATUSES)}, not {status!r:.60}")
    if status == "submitted" and label is None:
        raise ValueError(f"{p}a submitted decision needs a label")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5):
        raise ValueError(f"{p}score must be an integer from 1 to 5 or null, not {score!r:.60}")
    check_text(comment, "comment", where=where)


def is_two_sided(payload: Any) -> bool:
    """Whether an item's payload is two-sided (an A/B comparison: a ``sides`` object).

    Parameters
    ----------
    payload : object
        An item's payload.

    Returns
    -------
    bool
    """
    return isinstance(payload, Mapping) and isinstance(payload.get("sides"), dict)


def label_fits(label: str | None, payload: Mapping[str, Any]) -> bool:
    """Whether a label belongs to the item's kind (A/B labels for two-sided items only).

    Parameters
    ----------
    label : str or None
        A label (``None`` fits every item).
    payload : mapping
        The item's payload.

    Returns
    -------
    bool
    """
    return label is None or (label in PAIR_LABELS) == is_two_sided(payload)


def open_engines(url: str | Path | None = None) -> tuple[str, sa.Engine, sa.Engine]:
    """The engines of the EvalBoard database at ``url`` (review sessions and the run registry share it).

    Parameters
    ----------
    url : str or Path, optional
        An SQLAlchemy URL or a path to an SQLite file (its folder is created); default :func:`default_url`.

    Returns
    -------
    tuple of (str, Engine, Engine)
        The URL, the engine for reads and the engine for writes.  On an SQLite file the writer takes
        its lock at ``BEGIN`` (``BEGIN IMMEDIATE``: concurrent writers wait instead of failing); both
        run in WAL mode with ``synchronous=FULL``.  On a server both are one pooled engine.
    """
    url = str(url or default_url())
    if "://" not in url:
        url = f"sqlite:///{url}"
    path = sqlite_path(url)
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    if url.startswith("sqlite"):
        memory = path is None
        kw = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}} if memory else {}
        engine = sa.create_engine(url, **kw)
        # writes take the lock at BEGIN (no deferred upgrade that fails under concurrency)
        writer = engine if memory else sa.create_engine(url)
        for e in {engine, writer}:
            sa.event.listen(e, "connect", _sqlite_pragmas)
        if writer is not engine:
            sa.event.listen(writer, "connect", _sqlite_autocommit)
            sa.event.listen(writer, "begin", lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
        return url, engine, writer
    # a server thread per browser session: room for a team reviewing at once
    engine = sa.create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=40, pool_timeout=120)
    return url, engine, engine


class ReviewStore:
    """The review database.

    Parameters
    ----------
    url : str, optional
        An SQLAlchemy URL or a path to an SQLite file (created with its folder on first use);
        default :func:`default_url`.

    Raises
    ------
    SchemaTooNew
        When the database has a newer schema than this code knows.
    """

    def __init__(self, url: str | Path | None = None):
        self.url, self.engine, self._writer = open_engines(url)
        self._cache: dict[tuple, tuple[int, Any]] = {}
        self._cache_lock = threading.Lock()
        ensure_schema(self.engine)
        OPEN_STORES.add(self)

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        with self._writer.begin() as conn:
            yield conn

    def dispose(self) -> None:
        """Close the connection pools."""
        self.engine.dispose()
        if self._writer is not self.engine:
            self._writer.dispose()

    # ------------------------------------------------------------ uploads and sessions
    def put_upload(self, name: str, data: bytes) -> str:
        """Keep a file by its SHA-256 digest (once); returns the digest.

        Parameters
        ----------
        name : str
            The file's name (at most 512 characters).
        data : bytes
            Its contents, at most :data:`MAX_UPLOAD_BYTES`.

        Returns
        -------
        str
            The SHA-256 hex digest (the file is stored once per digest).

        Raises
        ------
        ValueError
            Over :data:`MAX_UPLOAD_BYTES`, or a bad file name.
        """
        name = check_text(str(name), "file name", limit=512)
        if len(data) > MAX_UPLOAD_BYTES:
            raise ValueError(f"{name}: {len(data):,} bytes is over the review upload limit of {MAX_UPLOAD_BYTES:,}")
        digest = hashlib.sha256(data).hexdigest()
        with self._write() as c:
            if c.execute(sa.select(uploads_table.c.digest).where(uploads_table.c.digest == digest)).first() is None:
                c.execute(uploads_table.insert().values(digest=digest, name=name, size=len(data), data=data))
        return digest

    def get_upload(self, digest: str) -> tuple[str, bytes] | None:
        """``(name, bytes)`` of a kept file, or ``None``.

        Parameters
        ----------
        digest : str
            A digest :meth:`put_upload` returned.

        Returns
        -------
        (str, bytes) or None
        """
        with self.engine.connect() as c:
            row = c.execute(sa.select(uploads_table.c.name, uploads_table.c.data)
                            .where(uploads_table.c.digest == digest)).first()
        return None if row is None else (row[0], bytes(row[1]))

    def create_session(self, name: str, kind: str, items: Iterable[Mapping[str, Any]], *, created_by: str,
                       blind: bool = False, k: int = 1, seed: int = 0, uploads: Iterable[str] = (),
                       settings: Mapping[str, Any] | None = None,
                       gold: Mapping[str, str] | None = None, audit: Mapping[str, Any] | None = None) -> Session:
        """Create a session with its items (duplicates of one payload kept once), in batched inserts.

        ``gold`` maps item digests to their known label.  The queue hands items out in the seeded
        order (:func:`seeded_rank`), or, when ``settings["order"]`` is one of :data:`POSITION_ORDERS`,
        in the order given (chosen by the caller: :func:`evaluators.review.order.informative_order`).

        Parameters
        ----------
        name : str
            Unique session name.
        kind : str
            Item kind (``qa``, ``memory``, ``dialogue``, ``testsets``, ``narrative`` ...; 32 characters kept).
        items : iterable of mapping
            Item payloads (:mod:`evaluators.review.items`), at most :data:`MAX_ITEMS` distinct.
        created_by : str
            The session's owner.
        blind : bool
            Annotators do not see each other's decisions (and A/B sides may be hidden).
        k : int
            Reviewers per item, 1 to :data:`~evaluators.review.limits.MAX_K` (:func:`~evaluators.review.limits.check_k`).
        seed : int
            32-bit seed of the queue order.
        uploads : iterable of str
            Digests of files kept with :meth:`put_upload` (the session's source files).
        settings : mapping, optional
            Further settings (``order``, guidelines ...), JSON-ready.
        gold : mapping of str to str, optional
            Item digest -> known label (gold items measure annotators).
        audit : mapping, optional
            The ``create`` row of the audit trail (:func:`evaluators.review.service.audit_row`), written in the
            session's own transaction with the new session's id: both are committed, or neither.

        Returns
        -------
        Session

        Raises
        ------
        ValueError
            A session of that name exists, no item, ``k`` not from 1 to 100, or a bad name, item or setting
            (located: ``item 5: ...``).
        """
        name = check_name(name, "session name")
        kind = check_name(kind, "kind")[:32]
        created_by = check_name(created_by, "created_by")
        k = check_k(k)
        if isinstance(seed, bool) or not isinstance(seed, int) or not -2**31 <= seed < 2**31:
            raise ValueError("seed must be a 32-bit integer")
        settings_text = _settings_json(settings or {})
        rows: list[dict[str, Any]] = []
        seen: set[str] = set()
        gold = dict(gold or {})
        for n, payload in enumerate(items, start=1):
            text = canonical_payload(payload, where=f"item {n}")
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            label = gold.get(digest)
            if label is not None and label not in ALL_LABELS:
                raise ValueError(f"item {n}: gold label must be one of {', '.join(ALL_LABELS)}, not {label!r:.60}")
            rows.append({"position": len(rows), "digest": digest, "payload": text, "gold": label,
                         **filter_columns(payload)})
            if len(rows) > MAX_ITEMS:
                raise ValueError(f"a review session holds at most {MAX_ITEMS:,} items")
        if not rows:
            raise ValueError("a review session needs at least one item")
        ordered = ordered_by_position(settings_text)
        for row in rows:
            row["rank"] = item_rank(seed, row["position"], ordered)
        with self._write() as c:
            try:
                sid = c.execute(sessions_table.insert().values(
                    **new_session_id(c), name=name, kind=kind, created_by=created_by, blind=bool(blind), k=k,
                    seed=seed, uploads=json.dumps(list(uploads)), created_at=_now(), settings=settings_text,
                    n_items=len(rows), changes=0)).inserted_primary_key[0]
            except IntegrityError:
                raise ValueError(f"a review session named {name!r} exists already") from None
            for start in range(0, len(rows), BATCH):
                chunk = rows[start:start + BATCH]
                for row in chunk:
                    row["session_id"] = sid
                c.execute(items_table.insert(), chunk)
            _audit_insert(c, audit and {**audit, "session_id": sid})
        return self.session(sid)

    def update_session(self, session_id: int, *, blind: bool | None = None, guidelines: str | None = None,
                       adjudicators: Iterable[str] | None = None, k: int | None = None,
                       labels_help: Mapping[str, str] | None = None, by: str | None = None,
                       fast_seconds: float | None = None,
                       audit: Mapping[str, Any] | None = None) -> Session:
        """Change a session's blind mode, guidelines (their version goes up; every version is kept in
        ``settings["guidelines_versions"]`` with who saved it and when), adjudicators, reviewers per
        item ``k`` or label help (one-line definitions shown under the label buttons).

        Who may do it is the caller's rule (:func:`evaluators.review.service.can_manage`).

        Parameters
        ----------
        session_id : int
            The session.
        blind : bool, optional
            New blind mode; ``None`` leaves it.
        guidelines : str, optional
            New guidelines text (a new version when it differs).
        adjudicators : iterable of str, optional
            The full new list of adjudicators.
        k : int, optional
            Reviewers per item, 1 to :data:`~evaluators.review.limits.MAX_K` (:func:`~evaluators.review.limits.check_k`).
        labels_help : mapping of str to str, optional
            Label -> one-line definition (empty ones dropped).
        by : str, optional
            Who saves, recorded with a guidelines version.
        fast_seconds : float, optional
            The fast-decision threshold of Team progress, seconds in (0, 3600]
            (``settings["fast_seconds"]``; :func:`evaluators.review.service.fast_threshold`).

        Returns
        -------
        Session
            As stored after the change (its change counter went up by one).

        Raises
        ------
        ValueError
            ``k`` not from 1 to 100, a bad name or text, or label help for a label that does not exist.
        """
        s = self.session(session_id)
        settings = dict(s.settings or {})
        if guidelines is not None and guidelines != settings.get("guidelines"):
            text = check_text(guidelines, "guidelines", limit=MAX_GUIDELINES)
            versions = guidelines_versions(s)
            version = (s.guidelines_version or 0) + 1  # guidelines set without one: 1
            settings["guidelines"] = text
            settings["guidelines_version"] = version
            settings["guidelines_versions"] = [*versions, {"version": version, "text": text, "by": by, "at": _now()}]
        if adjudicators is not None:
            settings["adjudicators"] = sorted({check_name(a, "adjudicator") for a in adjudicators})
        if labels_help is not None:
            if not isinstance(labels_help, Mapping):
                raise ValueError("label help must map labels to one-line definitions")
            unknown = sorted(str(x) for x in labels_help if x not in ALL_LABELS)
            if unknown:
                raise ValueError(f"label help for unknown label(s) {', '.join(unknown)}: the labels are "
                                 f"{', '.join(ALL_LABELS)}")
            settings["labels_help"] = {str(lab): text for lab, v in labels_help.items()
                                       if (text := check_text(v, f"label help of {lab}", limit=500).strip())}
        if fast_seconds is not None:  # checked with the other settings (_settings_json)
            settings["fast_seconds"] = fast_seconds if isinstance(fast_seconds, bool) else float(fast_seconds)
        values: dict[str, Any] = {"settings": _settings_json(settings)}
        if k is not None:
            values["k"] = check_k(k)
        if blind is not None:
            values["blind"] = bool(blind)
        with self._write() as c:
            c.execute(sessions_table.update().where(sessions_table.c.id == session_id)
                      .values(changes=sessions_table.c.changes + 1, **values))
            _audit_insert(c, audit)
        return self.session(session_id)

    def delete_session(self, session_id: int, *, audit: Mapping[str, Any] | None = None) -> dict[str, int]:
        """Delete a session with its items, decisions, their history, adjudications and claims, in one
        transaction with its audit row (``audit``: the ``delete`` row, its ``detail`` completed with the counts).

        Kept: the audit trail (the session's earlier rows and this one: who deleted what, when) and the
        uploaded files (stored once by digest, possibly shared with other sessions).  Who may delete is the
        caller's rule (:func:`evaluators.review.service.delete_session`).  The id is never given to a later
        session (:func:`new_session_id`), so the audit rows keep naming this one.

        Parameters
        ----------
        session_id : int
        audit : mapping, optional
            The audit row (:func:`evaluators.review.service.audit_row`).

        Returns
        -------
        dict of str to int
            Rows deleted: ``items``, ``decisions``, ``history``, ``adjudications``, ``claims``.

        Raises
        ------
        LookupError
            No such session (deleted meanwhile): nothing is written.
        """
        items = sa.select(items_table.c.id).where(items_table.c.session_id == session_id).scalar_subquery()
        with self._write() as c:
            if c.execute(sa.select(sessions_table.c.id).where(sessions_table.c.id == session_id)
                         .with_for_update()).first() is None:
                raise LookupError(f"no review session with id {session_id}")
            counts = {name: c.execute(table.delete().where(where)).rowcount for name, table, where in (
                ("claims", claims_table, claims_table.c.item_id.in_(items)),
                ("adjudications", adjudications_table, adjudications_table.c.item_id.in_(items)),
                ("decisions", decisions_table, decisions_table.c.item_id.in_(items)),
                ("history", history_table, history_table.c.session_id == session_id),
                ("items", items_table, items_table.c.session_id == session_id))}
            c.execute(sessions_table.delete().where(sessions_table.c.id == session_id))
            if audit:
                what = ", ".join(f"{n} {name}" for name, n in counts.items() if name != "claims")
                _audit_insert(c, {**audit, "session_id": session_id,
                                  "detail": "; ".join(x for x in (audit.get("detail"), what) if x)})
        with self._cache_lock:
            for key in [k for k in self._cache if k[0] == session_id]:
                del self._cache[key]
        return counts

    def _session_row(self, row) -> Session:
        return Session(row.id, row.name, row.kind, row.created_by, bool(row.blind), row.k, row.seed,
                       tuple(json.loads(row.uploads)), row.created_at, _loads_settings(row.settings), row.n_items)

    def session(self, session_id: int) -> Session:
        """A session by id (``KeyError`` if there is none).

        Parameters
        ----------
        session_id : int

        Returns
        -------
        Session

        Raises
        ------
        KeyError
            No session with that id.
        """
        with self.engine.connect() as c:
            row = c.execute(sa.select(sessions_table).where(sessions_table.c.id == session_id)).first()
        if row is None:
            raise KeyError(f"no review session {session_id}")
        return self._session_row(row)

    def session_by_name(self, name: str) -> Session | None:
        """A session by its unique name, or ``None``.

        Parameters
        ----------
        name : str

        Returns
        -------
        Session or None
        """
        with self.engine.connect() as c:
            row = c.execute(sa.select(sessions_table).where(sessions_table.c.name == name)).first()
        return None if row is None else self._session_row(row)

    def sessions(self) -> list[Session]:
        """All sessions, newest first."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(sessions_table).order_by(sessions_table.c.id.desc())).all()
        return [self._session_row(r) for r in rows]

    def changes(self, session_id: int) -> int:
        """The session's change counter (+1 per decision, adjudication or settings change).

        Parameters
        ----------
        session_id : int

        Returns
        -------
        int
            0 for an unknown session.
        """
        with self.engine.connect() as c:
            return int(c.execute(sa.select(sessions_table.c.changes)
                                 .where(sessions_table.c.id == session_id)).scalar_one_or_none() or 0)

    def _cached(self, session_id: int, what: str, compute, fits=None, counter: int | None = None):
        """``compute()`` once per value of the session's change counter (per store: per server process), or of
        ``counter`` when given (a value that changes with less than every decision); with ``fits(value)``, a
        cached value it refuses is computed again (a value made for other arguments)."""
        counter = self.changes(session_id) if counter is None else counter
        key = (session_id, what)
        with self._cache_lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == counter and (fits is None or fits(hit[1])):
            return hit[1]
        value = compute()
        with self._cache_lock:
            self._cache[key] = (counter, value)
        return value

    # ------------------------------------------------------------ items
    def items(self, session_id: int) -> list[Item]:
        """A session's items in creation order (all of them: for exports and small sessions).

        Parameters
        ----------
        session_id : int

        Returns
        -------
        list of Item
            Empty for an unknown session.
        """
        return list(self.iter_items(session_id))

    def iter_items(self, session_id: int, *, batch: int = BATCH) -> Iterator[Item]:
        """A session's items in creation order, streamed (one query, ``batch`` rows at a time).

        Parameters
        ----------
        session_id : int
        batch : int
            Rows fetched at a time.

        Yields
        ------
        Item
        """
        q = sa.select(items_table).where(items_table.c.session_id == session_id).order_by(items_table.c.position)
        with self.engine.connect() as c:
            for r in c.execution_options(stream_results=True, yield_per=batch).execute(q):
                yield _item(r)

    def item(self, item_id: int) -> Item | None:
        """An item by id, or ``None``.

        Parameters
        ----------
        item_id : int

        Returns
        -------
        Item or None
        """
        with self.engine.connect() as c:
            row = c.execute(sa.select(items_table).where(items_table.c.id == item_id)).first()
        return None if row is None else _item(row)

    def add_item(self, session_id: int, payload: Mapping[str, Any]) -> Item:
        """Add an item to a session (an existing item with the same payload is returned as is).

        Parameters
        ----------
        session_id : int
            An existing session.
        payload : mapping
            The item's payload (JSON-ready).

        Returns
        -------
        Item
            At the session's next position, ranked by the session's order; the change counter
            goes up when it is new.

        Raises
        ------
        ValueError
            A payload that is not a valid item (:func:`canonical_payload`).
        """
        text = canonical_payload(payload)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._write() as c:
            row = c.execute(sa.select(items_table).where(items_table.c.session_id == session_id,
                                                         items_table.c.digest == digest)).first()
            if row is None:
                position = c.execute(sa.select(sessions_table.c.n_items)
                                     .where(sessions_table.c.id == session_id)).scalar_one()
                seed, settings = c.execute(sa.select(sessions_table.c.seed, sessions_table.c.settings)
                                           .where(sessions_table.c.id == session_id)).one()
                c.execute(items_table.insert().values(session_id=session_id, position=position, digest=digest,
                                                      payload=text, rank=item_rank(seed or 0, position, ordered_by_position(settings)),
                                                      **filter_columns(payload)))
                c.execute(sessions_table.update().where(sessions_table.c.id == session_id)
                          .values(n_items=position + 1, changes=sessions_table.c.changes + 1))
                row = c.execute(sa.select(items_table).where(items_table.c.session_id == session_id,
                                                             items_table.c.digest == digest)).first()
        return _item(row)

    # ------------------------------------------------------------ assignment
    def next_item(self, session_id: int, annotator: str, *, exclude: Iterable[int] = (),
                  claim: bool = False, filters: QueueFilter | None = None) -> Item | None:
        """The next item for an annotator, overlap first.

        Among items this annotator has not decided, with fewer than ``k`` submitted decisions
        plus live claims by others, those with the most decisions come first (items reach ``k``
        reviewers before new ones open), then by the item's stored rank (:func:`item_rank`: the
        seeded rank, or the position in a session its creator ordered), then id.  One indexed query
        per level of ``k``; ``exclude``: item ids to pass over.

        With ``claim``, the item is claimed for :data:`CLAIM_SECONDS` (the annotator's earlier
        claim in the session is released), atomically: no item is handed to more than ``k``
        annotators at once.  On PostgreSQL the chosen item's row is locked as it is chosen and an
        item another claimer holds locked is passed over (``FOR UPDATE SKIP LOCKED``); an item
        claimed to ``k`` between the choice and the claim is passed over too, until one is claimed
        or none is open.  ``filters`` restrict the queue (:class:`QueueFilter`).

        Parameters
        ----------
        session_id : int
        annotator : str
            Who asks (``""``: nobody; use without ``claim``).
        exclude : iterable of int
            Item ids to pass over (the one shown now).
        claim : bool
            Claim the item for this annotator.
        filters : QueueFilter, optional

        Returns
        -------
        Item or None
            ``None`` when nothing is open to this annotator.

        Raises
        ------
        KeyError
            No such session.
        """
        s = self.session(session_id)
        exclude = list(exclude)
        if not claim:
            with self.engine.connect() as c:
                return self._first_open(c, s, annotator, _now(), exclude, filters)
        while True:  # on SQLite the first try holds the write lock: it always succeeds
            with self._write() as c:
                now = _now()
                found = self._first_open(c, s, annotator, now, exclude, filters, lock=True)
                if found is None or self._claim(c, found, annotator, s.k, now):
                    return found
            # claimed to k by others between the query and the lock (PostgreSQL): the next one.  Every
            # try passes over one more item, so the loop ends (at the latest when no item is open); a
            # fixed number of tries returned None while items were open when 20 annotators raced.
            exclude.append(found.id)

    def _first_open(self, c, s: Session, annotator: str, now: str, exclude: list[int],
                    filters: QueueFilter | None = None, lock: bool = False) -> Item | None:
        for done in range(s.k - 1, -1, -1):
            q = self._queue_query(s.id, annotator, done, s.k, now, exclude, filters)
            if lock and c.dialect.name == "postgresql":
                # the item row locked as it is chosen; one another claimer holds is passed over, not waited
                # for (annotators asking at once then claim different items instead of racing for one)
                q = q.with_for_update(skip_locked=True, of=items_table)
            row = c.execute(q).first()
            if row is not None:
                return _item(row)
        return None

    @staticmethod
    def _queue_query(session_id: int, annotator: str, done: int, k: int, now: str, exclude: list[int],
                     filters: QueueFilter | None = None):
        i, d, cl = items_table, decisions_table, claims_table
        mine = sa.select(d.c.id).where(d.c.item_id == i.c.id, d.c.annotator == annotator).exists()
        claimed = (sa.select(sa.func.count()).select_from(cl)
                   .where(cl.c.item_id == i.c.id, cl.c.annotator != annotator, cl.c.expires_at > now)
                   .scalar_subquery())
        q = (sa.select(i).where(i.c.session_id == session_id, i.c.n_done == done, ~mine, claimed < k - done)
             .order_by(i.c.rank, i.c.id).limit(1))
        if filters is not None:
            q = q.where(*_filter_clauses(filters))
        return q.where(i.c.id.not_in(exclude)) if exclude else q

    @staticmethod
    def _claim(c, item: Item, annotator: str, k: int, now: str) -> bool:
        i, cl = items_table, claims_table
        until = (datetime.now(timezone.utc) + timedelta(seconds=CLAIM_SECONDS)).isoformat(timespec="microseconds")
        q = sa.select(i.c.n_done).where(i.c.id == item.id)
        if c.dialect.name == "postgresql":
            q = q.with_for_update()  # claims of one item one at a time
        n_done = c.execute(q).scalar_one()
        others = c.execute(sa.select(sa.func.count()).select_from(cl).where(
            cl.c.item_id == item.id, cl.c.annotator != annotator, cl.c.expires_at > now)).scalar_one()
        if n_done + others >= k:
            return False
        # the annotator's earlier claim in this session released: their claims first (one per session at most,
        # a handful), then which of them are this session's (by the items' primary key); matching the claims
        # against every item id of the session read all 100k of them on each click
        held = c.execute(sa.select(cl.c.item_id).where(cl.c.annotator == annotator)).scalars().all()
        if held:
            here = sa.select(i.c.id).where(i.c.id.in_(held), i.c.session_id == item.session_id)
            c.execute(cl.delete().where(cl.c.annotator == annotator, cl.c.item_id.in_(here)))
        c.execute(cl.insert().values(item_id=item.id, annotator=annotator, expires_at=until))
        return True

    def claims(self, session_id: int) -> dict[int, list[str]]:
        """Live claims of a session: item id -> annotators.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        dict of int to list of str
            Claims not expired yet.
        """
        now, i, cl = _now(), items_table, claims_table
        with self.engine.connect() as c:
            rows = c.execute(sa.select(cl.c.item_id, cl.c.annotator).join(i, i.c.id == cl.c.item_id)
                             .where(i.c.session_id == session_id, cl.c.expires_at > now)).all()
        out: dict[int, list[str]] = {}
        for item_id, who in rows:
            out.setdefault(item_id, []).append(who)
        return out

    def previous_item(self, session_id: int, annotator: str, before: Item | None = None) -> Item | None:
        """The item this annotator decided last before ``before`` (by time of decision); ``None`` at the start.

        Parameters
        ----------
        session_id : int
        annotator : str
        before : Item, optional
            The item shown now; ``None`` or an item the annotator has not decided: their latest.

        Returns
        -------
        Item or None
        """
        with self.engine.connect() as c:
            q = (sa.select(items_table).join(decisions_table, decisions_table.c.item_id == items_table.c.id)
                 .where(decisions_table.c.session_id == session_id, decisions_table.c.annotator == annotator)
                 .order_by(decisions_table.c.updated_at.desc()).limit(1))
            if before is not None:
                stamp = c.execute(sa.select(decisions_table.c.updated_at).where(
                    decisions_table.c.item_id == before.id, decisions_table.c.annotator == annotator)).scalar()
                if stamp is not None:
                    q = q.where(decisions_table.c.updated_at < stamp)
            row = c.execute(q).first()
        return None if row is None else _item(row)

    def order_for(self, session_id: int, annotator: str, decisions: Iterable[Decision] | None = None) -> list[Item]:
        """Every item open to an annotator, in the queue's order (reads the whole session: for small
        sessions and tests; the page asks :meth:`next_item`).

        The items the annotator submitted a decision on come first (by the stored rank); then those
        with fewer than ``k`` submitted decisions in the order :meth:`next_item` hands them out when
        nobody holds a claim: most submitted decisions first (overlap first), then the item's rank
        (:func:`item_rank`: the seeded rank, or the position in a session its creator ordered), then
        id.  Live claims are not read.

        Parameters
        ----------
        session_id : int
        annotator : str
        decisions : iterable of Decision, optional
            The session's decisions when already read; default :meth:`decisions`.

        Returns
        -------
        list of Item

        Raises
        ------
        KeyError
            No such session.
        """
        s = self.session(session_id)
        items = self.items(session_id)
        done: dict[int, set[str]] = {}
        for d in self.decisions(session_id) if decisions is None else decisions:
            if d.status == "submitted":
                done.setdefault(d.item_id, set()).add(d.annotator)
        ordered = (s.settings or {}).get("order") in POSITION_ORDERS  # ordered_by_position, on parsed settings

        def key(i: Item) -> tuple[int, int, int, int]:
            by = done.get(i.id, ())
            mine = annotator in by
            return (not mine, 0 if mine else -len(by), item_rank(s.seed, i.position, ordered), i.id)

        return sorted((i for i in items if annotator in done.get(i.id, ()) or len(done.get(i.id, ())) < s.k),
                      key=key)

    def progress(self, session_id: int, annotator: str) -> Progress:
        """Counts for the progress bar, by aggregate queries.

        Parameters
        ----------
        session_id : int
        annotator : str

        Returns
        -------
        Progress
            Items in the session, this annotator's decisions (submitted or skipped), items complete
            to ``k`` and all decisions.

        Raises
        ------
        KeyError
            No such session.
        """
        d, i, t = decisions_table, items_table, sessions_table
        count = sa.select(sa.func.count())
        mine = count.select_from(d).where(d.c.session_id == session_id, d.c.annotator == annotator,
                                          d.c.status != "draft").scalar_subquery()
        complete = count.select_from(i).where(i.c.session_id == session_id, i.c.n_done >= t.c.k).scalar_subquery()
        total = count.select_from(d).where(d.c.session_id == session_id).scalar_subquery()
        # one statement, one round trip (the page draws it after each click; it was six connections)
        with self.engine.connect() as c:
            row = c.execute(sa.select(t.c.n_items, mine, complete, total).where(t.c.id == session_id)).first()
        if row is None:
            raise KeyError(f"no review session {session_id}")
        return Progress(*(int(v) for v in row))

    def _count_decisions(self, session_id: int) -> int:
        with self.engine.connect() as c:
            return int(c.execute(sa.select(sa.func.count()).select_from(decisions_table)
                                 .where(decisions_table.c.session_id == session_id)).scalar_one())

    def team_progress(self, session_id: int) -> TeamProgress:
        """Items complete to ``k``, items by number of reviews, and each annotator's decided /
        skipped counts and median time on item: three aggregate queries, cached until the session
        changes (no item or decision is read one by one).

        Parameters
        ----------
        session_id : int

        Returns
        -------
        TeamProgress
            Median seconds per annotator ``None`` when no time was recorded.
        """
        return self._cached(session_id, "team", lambda: self._team_progress(session_id))

    def _team_progress(self, session_id: int) -> TeamProgress:
        s = self.session(session_id)
        i, d = items_table, decisions_table
        submitted = sa.func.sum(sa.case((d.c.status == "submitted", 1), else_=0))
        skipped = sa.func.sum(sa.case((d.c.status == "skipped", 1), else_=0))
        # the median per annotator: the middle one or two of their ordered times (window functions
        # on SQLite >= 3.25 and PostgreSQL alike), averaged
        timed = (sa.select(d.c.annotator, d.c.seconds,
                           sa.func.row_number().over(partition_by=d.c.annotator, order_by=d.c.seconds).label("rn"),
                           sa.func.count().over(partition_by=d.c.annotator).label("cnt"))
                 .where(d.c.session_id == session_id, d.c.status != "draft", d.c.seconds.is_not(None))
                 .subquery())
        middle = sa.or_(timed.c.rn == (timed.c.cnt + 1) // 2, timed.c.rn == (timed.c.cnt + 2) // 2)
        with self.engine.connect() as c:
            by_reviews = {int(n): int(m) for n, m in c.execute(
                sa.select(i.c.n_done, sa.func.count()).where(i.c.session_id == session_id).group_by(i.c.n_done))}
            counts = c.execute(sa.select(d.c.annotator, submitted, skipped).where(d.c.session_id == session_id)
                               .group_by(d.c.annotator).order_by(d.c.annotator)).all()
            medians = dict(c.execute(sa.select(timed.c.annotator, sa.func.avg(timed.c.seconds))
                                     .where(middle).group_by(timed.c.annotator)).all())
        people = [AnnotatorProgress(a, int(n or 0), int(m or 0),
                                    None if medians.get(a) is None else float(medians[a])) for a, n, m in counts]
        complete = sum(m for n, m in by_reviews.items() if n >= s.k)
        return TeamProgress(s.n_items, s.k, complete, dict(sorted(by_reviews.items())), people)

    def fast_decisions(self, session_id: int, threshold: float) -> dict[str, tuple[int, int]]:
        """Per annotator, how many of their submitted decisions took less than ``threshold`` seconds on the item,
        of how many recorded a time: one grouped query, cached per threshold until the session changes.

        Skips and drafts are not counted (a skip is not a judgment); a decision without a recorded time
        (imported, or saved outside the page) counts in neither number.

        Parameters
        ----------
        session_id : int
        threshold : float
            Seconds; strictly below it is fast.

        Returns
        -------
        dict of str to (int, int)
            ``annotator -> (fast, timed)``, annotators with a timed submitted decision only.
        """
        d = decisions_table
        fast = sa.func.sum(sa.case((d.c.seconds < float(threshold), 1), else_=0))

        def compute() -> dict[str, tuple[int, int]]:
            with self.engine.connect() as c:
                return {a: (int(f or 0), int(n)) for a, f, n in c.execute(
                    sa.select(d.c.annotator, fast, sa.func.count())
                    .where(d.c.session_id == session_id, d.c.status == "submitted", d.c.seconds.is_not(None))
                    .group_by(d.c.annotator))}

        return self._cached(session_id, f"fast_decisions:{float(threshold)!r}", compute)

    # ------------------------------------------------------------ gold items
    def set_gold(self, item_id: int, label: str | None, *, audit: Mapping[str, Any] | None = None) -> Item:
        """Mark an item as gold with its known label (``None``: no longer gold).

        Who may do it is the caller's rule (:func:`evaluators.review.service.can_manage`).

        Parameters
        ----------
        item_id : int
        label : str or None
            One of :data:`ALL_LABELS` fitting the item (:func:`label_fits`), or ``None``.

        Returns
        -------
        Item
            As stored after the change (the session's change counter went up).

        Raises
        ------
        ValueError
            An unknown label, a label of the other item kind, or no such item.
        """
        if label is not None and label not in ALL_LABELS:
            raise ValueError(f"gold label must be one of {', '.join(ALL_LABELS)} or None, not {label!r:.60}")
        item = self.item(item_id)
        if item is None:
            raise ValueError(f"no review item {item_id}")
        if not label_fits(label, item.payload):
            raise ValueError(f"label {label!r} does not fit item {item_id} (A/B labels are for two-sided items)")
        with self._write() as c:
            c.execute(items_table.update().where(items_table.c.id == item_id).values(gold=label))
            c.execute(sessions_table.update().where(sessions_table.c.id == item.session_id)
                      .values(changes=sessions_table.c.changes + 1))
            _audit_insert(c, audit)
        return self.item(item_id)

    def gold_items(self, session_id: int) -> dict[int, str]:
        """Gold items of a session: item id -> gold label.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        dict of int to str
        """
        i = items_table
        with self.engine.connect() as c:
            return dict(c.execute(sa.select(i.c.id, i.c.gold).where(i.c.session_id == session_id,
                                                                     i.c.gold.is_not(None))).all())

    def gold_accuracy(self, session_id: int, *, confidence_level: float = 0.95) -> list[GoldAccuracy]:
        """Each annotator's accuracy on the gold items (submitted decisions; skips do not count),
        with its Wilson interval, by annotator name: one grouped query, cached until the session changes.

        Parameters
        ----------
        session_id : int
        confidence_level : float
            Level of the Wilson interval, in (0, 1).

        Returns
        -------
        list of GoldAccuracy
            One per annotator with a submitted decision on a gold item, sorted by name; accuracy in [0, 1].

        References
        ----------
        Wilson (1927), "Probable inference, the law of succession, and statistical inference"
        (:func:`evaluators.metrics.statistics.wilson_interval`).
        """
        from evaluators.metrics.statistics import wilson_interval

        def compute() -> list[GoldAccuracy]:
            i, d = items_table, decisions_table
            right = sa.func.sum(sa.case((d.c.label == i.c.gold, 1), else_=0))
            with self.engine.connect() as c:
                rows = c.execute(sa.select(d.c.annotator, sa.func.count(), right)
                                 .join(i, i.c.id == d.c.item_id)
                                 .where(d.c.session_id == session_id, d.c.status == "submitted", i.c.gold.is_not(None))
                                 .group_by(d.c.annotator).order_by(d.c.annotator)).all()
            out = []
            for who, n, correct in rows:
                low, high = wilson_interval(int(correct or 0), int(n), confidence_level=confidence_level)
                out.append(GoldAccuracy(who, int(n), int(correct or 0), int(correct or 0) / int(n), low, high))
            return out

        return self._cached(session_id, f"gold@{confidence_level}", compute)

    def decided_blind(self, session_id: int) -> int:
        """How many decision changes were made while the session was blind (from the history).

        Parameters
        ----------
        session_id : int

        Returns
        -------
        int
            History rows recorded as blind, undos not counted.
        """
        h = history_table
        with self.engine.connect() as c:
            return int(c.execute(sa.select(sa.func.count()).select_from(h).where(
                h.c.session_id == session_id, h.c.blind.is_(True), h.c.action != "undo")).scalar_one())

    @staticmethod
    def blind_sides(session: Session, annotator: str, item: Item) -> bool:
        """Whether the A/B sides of a two-sided item are swapped for this annotator (blind mode, seeded).

        Parameters
        ----------
        session : Session
        annotator : str
        item : Item

        Returns
        -------
        bool
            Always ``False`` in an open session; in a blind one, the same answer every time for the
            same seed, annotator and item (about half the items swapped).
        """
        if not session.blind:
            return False
        return random.Random(f"{session.seed}:{annotator}:{item.digest}").random() < 0.5

    # ------------------------------------------------------------ decisions
    def decision(self, item_id: int, annotator: str) -> Decision | None:
        """One annotator's decision on an item, or ``None``.

        Parameters
        ----------
        item_id : int
        annotator : str

        Returns
        -------
        Decision or None
        """
        with self.engine.connect() as c:
            row = c.execute(sa.select(decisions_table, items_table.c.digest)
                            .join(items_table, items_table.c.id == decisions_table.c.item_id)
                            .where(decisions_table.c.item_id == item_id, decisions_table.c.annotator == annotator)
                            ).first()
        return None if row is None else _decision(row)

    def item_decisions(self, item_id: int) -> list[Decision]:
        """Every annotator's decision on one item.

        Parameters
        ----------
        item_id : int

        Returns
        -------
        list of Decision
            Sorted by annotator name.
        """
        with self.engine.connect() as c:
            rows = c.execute(sa.select(decisions_table, items_table.c.digest)
                             .join(items_table, items_table.c.id == decisions_table.c.item_id)
                             .where(decisions_table.c.item_id == item_id)
                             .order_by(decisions_table.c.annotator)).all()
        return [_decision(r) for r in rows]

    def save_decision(self, item_id: int, annotator: str, *, label: str | None, score: int | None = None,
                      comment: str = "", status: str = "submitted", expected_version: int = 0,
                      seconds: float | None = None, guidelines_version: int | None = None,
                      audit: Mapping[str, Any] | None = None) -> Decision:
        """Save (commit) one annotator's decision on an item, and its change in the history.

        Parameters
        ----------
        expected_version : int
            The version the annotator saw: 0 for a new decision.  When the stored version
            differs, nothing is written and :class:`StaleDecision` is raised.
        seconds : float, optional
            Time on the item (shown to saved), kept with the decision.
        guidelines_version : int, optional
            The session's guidelines version the annotator decided under (kept with the decision
            and its history row).

        Raises
        ------
        ValueError
            An unknown label or status, a score outside 1-5, a submitted decision without a
            label, a label of the other item kind, a bad name or comment, or no such item.
        StaleDecision
            The decision was changed meanwhile.
        """
        annotator = check_name(annotator, "annotator")
        check_decision(label, score, comment, status)
        if guidelines_version is not None and (isinstance(guidelines_version, bool)
                                               or not isinstance(guidelines_version, int) or guidelines_version < 0):
            raise ValueError("guidelines_version must be a non-negative integer or None")
        values = {"label": label, "score": score, "comment": comment or "", "status": status, "updated_at": _now(),
                  "seconds": None if seconds is None else float(seconds), "guidelines_version": guidelines_version}
        d = decisions_table
        with self._write() as c:
            item = c.execute(sa.select(items_table.c.session_id, items_table.c.payload, sessions_table.c.blind)
                             .join(sessions_table, sessions_table.c.id == items_table.c.session_id)
                             .where(items_table.c.id == item_id)).first()
            if item is None:
                raise ValueError(f"no review item {item_id}")
            if label is not None and not label_fits(label, json.loads(item.payload)):
                raise ValueError(f"label {label!r} does not fit item {item_id} (A/B labels are for two-sided items)")
            old = None
            if expected_version == 0:
                try:
                    with c.begin_nested():
                        c.execute(d.insert().values(item_id=item_id, annotator=annotator, version=1,
                                                    session_id=item.session_id, **values))
                except IntegrityError:
                    raise StaleDecision(f"{annotator} already has a decision on item {item_id}: reload it") from None
            else:
                old = c.execute(sa.select(d.c.label, d.c.score, d.c.comment, d.c.status, d.c.version,
                                          d.c.guidelines_version).where(
                    d.c.item_id == item_id, d.c.annotator == annotator, d.c.version == expected_version)).first()
                done = 0 if old is None else c.execute(
                    d.update().where(d.c.item_id == item_id, d.c.annotator == annotator,
                                     d.c.version == expected_version)
                    .values(version=expected_version + 1, **values)).rowcount
                if done != 1:
                    raise StaleDecision(f"the decision of {annotator} on item {item_id} changed since version "
                                        f"{expected_version}: reload it")
            record_history(c, [history_row(item.session_id, item_id, annotator, annotator, "save",
                                           values["updated_at"], old, {**values, "version": expected_version + 1},
                                           bool(item.blind))])
            self._after_change(c, item.session_id, item_id, old.status if old else None, status)
            c.execute(claims_table.delete().where(claims_table.c.item_id == item_id,
                                                  claims_table.c.annotator == annotator))
            _audit_insert(c, audit)
        result = self.decision(item_id, annotator)
        assert result is not None
        return result

    @staticmethod
    def _after_change(c, session_id: int, item_id: int, old_status: str | None, new_status: str | None) -> None:
        """The item's submitted count and the session's change counter after one decision changed."""
        delta = int(new_status == "submitted") - int(old_status == "submitted")
        if delta:
            c.execute(items_table.update().where(items_table.c.id == item_id)
                      .values(n_done=items_table.c.n_done + delta))
        c.execute(sessions_table.update().where(sessions_table.c.id == session_id)
                  .values(changes=sessions_table.c.changes + 1))

    # ------------------------------------------------------------ history and undo
    def history(self, item_id: int, annotator: str | None = None) -> list[HistoryEntry]:
        """Every change of the decisions on an item (one annotator's with ``annotator``), oldest first.

        Parameters
        ----------
        item_id : int
        annotator : str, optional
            Only this annotator's decision; ``None``: everyone's.

        Returns
        -------
        list of HistoryEntry
        """
        h = history_table
        q = sa.select(h).where(h.c.item_id == item_id)
        if annotator is not None:
            q = q.where(h.c.annotator == annotator)
        with self.engine.connect() as c:
            return [_history(r) for r in c.execute(q.order_by(h.c.id))]

    def last_change(self, session_id: int, annotator: str) -> HistoryEntry | None:
        """The annotator's latest own change that can be undone (a save not undone yet), or ``None``.

        Undo walks back: after an undo, the save before it is the next one (an undo is not undone).

        Parameters
        ----------
        session_id : int
        annotator : str

        Returns
        -------
        HistoryEntry or None
            The annotator's own save (not one made by an import or by someone else), latest first.
        """
        with self.engine.connect() as c:
            row = self._last_save(c, session_id, annotator)
        return None if row is None else _history(row)

    @staticmethod
    def _last_save(c, session_id: int, annotator: str):
        """The history row of the annotator's latest own save in the session that no undo reverted, or ``None``.

        Walks the annotator's changes newest first (index ``ix_history_session_annotator``), a batch at a time,
        reading only saves by the annotator and undos: an undo always comes after the save it reverts, so a save
        reached with no undo of it seen yet is the one.  Usually the first row answers; the query before read
        every undo of the annotator in the session on each page run (50-150 ms at 100k decisions)."""
        h, batch, before, undone = history_table, 64, None, set()
        wanted = sa.or_(h.c.undoes.is_not(None), sa.and_(h.c.action == "save", h.c.actor == annotator))
        while True:
            q = sa.select(h).where(h.c.session_id == session_id, h.c.annotator == annotator, wanted)
            rows = c.execute((q if before is None else q.where(h.c.id < before)).order_by(h.c.id.desc())
                             .limit(batch)).all()
            for r in rows:
                if r.undoes is not None:
                    undone.add(r.undoes)
                if r.action == "save" and r.actor == annotator and r.id not in undone:
                    return r
            if len(rows) < batch:
                return None
            before, batch = rows[-1].id, batch * 4

    def undo_last(self, session_id: int, annotator: str, *, expected_change: int | None = None,
                  audit: Mapping[str, Any] | None = None) -> HistoryEntry:
        """Undo the annotator's last own decision in a session: the decision goes back to what it
        was before that save (no decision, if it was the first), and the undo is itself a history row.

        Parameters
        ----------
        expected_change : int, optional
            The id of the change the annotator saw as their last one (the Undo button's): when
            another change is the last one now, nothing is undone.

        Returns
        -------
        HistoryEntry
            The undo's own history row (``new_*``: the restored decision, all ``None`` when removed).

        Raises
        ------
        LookupError
            Nothing of this annotator's to undo in the session.
        StaleDecision
            The decision changed since that save (another tab, an import), or the last change is
            not ``expected_change``: optimistic locking, nothing is written.
        """
        annotator = check_name(annotator, "annotator")
        h, d = history_table, decisions_table
        with self._write() as c:
            last = self._last_save(c, session_id, annotator)
            if last is None:
                raise LookupError(f"{annotator} has no decision to undo in this session")
            if expected_change is not None and last.id != expected_change:
                raise StaleDecision(f"{annotator}'s last decision changed since it was shown: reload")
            now = c.execute(sa.select(d.c.label, d.c.score, d.c.comment, d.c.status, d.c.version,
                                      d.c.guidelines_version).where(
                d.c.item_id == last.item_id, d.c.annotator == annotator)).first()
            latest = c.execute(sa.select(h).where(h.c.item_id == last.item_id, h.c.annotator == annotator)
                               .order_by(h.c.id.desc()).limit(1)).first()
            # unchanged since that save: it is the decision's latest change, or an undo went back to it
            back_to_it = latest is not None and latest.action == "undo" and c.execute(
                sa.select(h.c.old_version).where(h.c.id == latest.undoes)).scalar() == last.new_version
            if now is None or latest is None or now.version != latest.new_version or not (
                    latest.id == last.id or back_to_it):
                raise StaleDecision(f"the decision of {annotator} on item {last.item_id} changed since that save "
                                    f"(version {last.new_version}): reload it")
            stamp = _now()
            blind = bool(c.execute(sa.select(sessions_table.c.blind)
                                   .where(sessions_table.c.id == session_id)).scalar())
            if last.old_status is None:  # it was the first decision: there is none again
                c.execute(d.delete().where(d.c.item_id == last.item_id, d.c.annotator == annotator,
                                           d.c.version == now.version))
                restored = None
            else:
                restored = {"label": last.old_label, "score": last.old_score, "comment": last.old_comment or "",
                            "status": last.old_status, "version": now.version + 1,
                            "guidelines_version": last.old_guidelines_version}
                c.execute(d.update().where(d.c.item_id == last.item_id, d.c.annotator == annotator,
                                           d.c.version == now.version)
                          .values(updated_at=stamp, seconds=None, **restored))
            row = history_row(session_id, last.item_id, annotator, annotator, "undo", stamp, now, restored, blind,
                              undoes=last.id)
            undo_id = record_history(c, [row])
            self._after_change(c, session_id, last.item_id, now.status, restored["status"] if restored else None)
            _audit_insert(c, audit and {**audit, "item_id": last.item_id,
                                        "detail": (restored or {}).get("label") or (restored or {}).get("status") or ""})
        return HistoryEntry(id=undo_id, **{k: v for k, v in row.items() if k != "id"})

    def decisions(self, session_id: int) -> list[Decision]:
        """Every decision of a session, by item position then annotator.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        list of Decision
            Drafts and skips included.
        """
        return list(self.iter_decisions(session_id))

    def iter_decisions(self, session_id: int, *, batch: int = BATCH) -> Iterator[Decision]:
        """A session's decisions by item position then annotator, streamed (one query).

        Parameters
        ----------
        session_id : int
        batch : int
            Rows fetched at a time.

        Yields
        ------
        Decision
        """
        for decision, _payload in self.iter_decisions_with_items(session_id, batch=batch, payloads=False):
            yield decision

    def iter_decisions_with_items(self, session_id: int, *, batch: int = BATCH,
                                  payloads: bool = True) -> Iterator[tuple[Decision, dict | None]]:
        """Each decision with its item's payload (``None`` without ``payloads``), streamed, by
        item position then annotator.

        Parameters
        ----------
        session_id : int
        batch : int
            Rows fetched at a time.
        payloads : bool
            Read and parse each item's payload too.

        Yields
        ------
        (Decision, dict or None)
        """
        d, i = decisions_table, items_table
        cols = [d, i.c.digest] + ([i.c.payload] if payloads else [])
        q = (sa.select(*cols).join(i, i.c.id == d.c.item_id).where(d.c.session_id == session_id)
             .order_by(i.c.position, d.c.annotator))
        with self.engine.connect() as c:
            for r in c.execution_options(stream_results=True, yield_per=batch).execute(q):
                yield _decision(r), (json.loads(r.payload) if payloads else None)

    def ratings(self, session_id: int) -> list[Decision]:
        """The submitted decisions of a session without comments (what agreement needs), one query.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        list of Decision
            ``comment`` ``""`` and ``seconds`` ``None`` in each.
        """
        d, i = decisions_table, items_table
        with self.engine.connect() as c:
            rows = c.execute(sa.select(d.c.item_id, d.c.annotator, d.c.label, d.c.score, d.c.status,
                                       d.c.version, d.c.updated_at, d.c.guidelines_version, i.c.digest)
                             .join(i, i.c.id == d.c.item_id)
                             .where(d.c.session_id == session_id, d.c.status == "submitted")).all()
        return [Decision(r.item_id, r.digest, r.annotator, r.label, r.score, "", r.status, r.version, r.updated_at,
                         None, r.guidelines_version) for r in rows]

    def agreement(self, session_id: int) -> dict[str, Any]:
        """:func:`~evaluators.review.agreement.session_agreement` of the session, cached until it changes.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        dict
            ``{"label": {...}, "score": {...}}``: agreement of the submitted labels and 1-5 scores
            with 95% bootstrap intervals, as that function computes them.
        """
        from evaluators.review.agreement import cached_rating_columns, session_agreement

        return self._cached(session_id, "agreement",
                            lambda: session_agreement(cached_rating_columns(self, session_id)))

    def agreement_by_guidelines(self, session_id: int) -> dict[int | None, dict[str, Any]]:
        """:meth:`agreement` of the decisions made under each guidelines version (``None``: none
        recorded), oldest version first, cached until the session changes.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        dict of (int or None) to dict
            ``None`` first, then versions ascending.
        """
        from evaluators.review.agreement import session_agreement

        def compute() -> dict[int | None, dict[str, Any]]:
            groups: dict[int | None, list[Decision]] = {}
            for d in self.ratings(session_id):
                groups.setdefault(d.guidelines_version, []).append(d)
            return {v: session_agreement(groups[v]) for v in sorted(groups, key=lambda v: (v is not None, v or 0))}

        return self._cached(session_id, "agreement_by_guidelines", compute)

    # ------------------------------------------------------------ adjudication
    def adjudication_queue(self, session_id: int, limit: int | None = None) -> list[tuple[Item, list[Decision]]]:
        """Items whose submitted labels disagree, or that someone marked ``gt_error``, not yet
        adjudicated (found by one grouped query, cached until the session changes).

        Parameters
        ----------
        session_id : int
        limit : int, optional
            Items returned at most.

        Returns
        -------
        list of (Item, list of Decision)
            By item position; each with its submitted decisions.
        """
        ids = self._cached(session_id, "queue", lambda: self._queue_ids(session_id))
        out = []
        for item_id in ids[:limit]:
            item = self.item(item_id)
            if item is not None:
                out.append((item, [d for d in self.item_decisions(item_id) if d.status == "submitted"]))
        return out

    def queue_size(self, session_id: int) -> int:
        """How many items wait for an adjudicator (:meth:`adjudication_queue` without reading them).

        Parameters
        ----------
        session_id : int

        Returns
        -------
        int
        """
        return len(self._cached(session_id, "queue", lambda: self._queue_ids(session_id)))

    def _queue_ids(self, session_id: int) -> list[int]:
        return [item_id for item_id, done in self.adjudication_items(session_id) if not done]

    def adjudication_items(self, session_id: int) -> list[tuple[int, bool]]:
        """Every item that needs an adjudicator (submitted labels disagree, or someone marked
        ``gt_error``), by position, with whether it is adjudicated already: one grouped query,
        cached until the session changes.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        list of (int, bool)
            ``(item_id, adjudicated)``.
        """
        return self._cached(session_id, "adjudication", lambda: self._adjudication_items(session_id))

    def _adjudication_items(self, session_id: int) -> list[tuple[int, bool]]:
        d, i, a = decisions_table, items_table, adjudications_table
        gt = sa.func.max(sa.case((d.c.label == "gt_error", 1), else_=0))
        done = sa.select(a.c.item_id).where(a.c.item_id == d.c.item_id).exists()
        q = (sa.select(d.c.item_id, done.label("done")).join(i, i.c.id == d.c.item_id)
             .where(d.c.session_id == session_id, d.c.status == "submitted")
             .group_by(d.c.item_id, i.c.position)
             .having(sa.or_(sa.func.count(sa.distinct(d.c.label)) > 1, gt == 1))
             .order_by(i.c.position))
        with self.engine.connect() as c:
            return [(r[0], bool(r[1])) for r in c.execute(q)]

    def adjudication(self, item_id: int) -> dict[str, Any] | None:
        """The final label of one item (as :meth:`adjudications` rows), or ``None``.

        Parameters
        ----------
        item_id : int

        Returns
        -------
        dict or None
            ``item_id``, ``adjudicator``, ``label``, ``comment``, ``updated_at``, ``corrected_answer``.
        """
        a = adjudications_table
        with self.engine.connect() as c:
            r = c.execute(sa.select(a).where(a.c.item_id == item_id)).first()
        return None if r is None else {"item_id": r.item_id, "adjudicator": r.adjudicator, "label": r.label,
                                       "comment": r.comment, "updated_at": r.updated_at,
                                       "corrected_answer": r.corrected_answer}

    def item_names(self, session_id: int, item_ids: Iterable[int]) -> dict[int, str]:
        """Each item's record id (its ``id`` in the payload, else its item id) for a picker, read in
        batches and cached until the session changes.

        Parameters
        ----------
        session_id : int
            The session (the cache's too).
        item_ids : iterable of int
            Items of that session (others, and ids not found, are left out).

        Returns
        -------
        dict of int to str
            Names cut to 200 characters.
        """
        ids = tuple(item_ids)

        def compute() -> dict[int, str]:
            out: dict[int, str] = {}
            with self.engine.connect() as c:
                for start in range(0, len(ids), 500):
                    for r in c.execute(sa.select(items_table.c.id, items_table.c.payload)
                                       .where(items_table.c.id.in_(ids[start:start + 500]),
                                              items_table.c.session_id == session_id)):
                        name = json.loads(r.payload).get("id")
                        out[r.id] = str(name)[:200] if name not in (None, "") else str(r.id)
            return out

        # one cached set of names per session: the items asked for last
        return self._cached(session_id, "names", lambda: (ids, compute()), fits=lambda hit: hit[0] == ids)[1]

    def item_payloads(self, session_id: int, item_ids: Iterable[int]) -> dict[int, dict]:
        """The payloads of some of a session's items (read in batches of 500), cached until the session
        changes (the items asked for last, as :meth:`item_names`); the dicts are shared: do not change them.

        Parameters
        ----------
        session_id : int
        item_ids : iterable of int
            Items of that session (others are left out).

        Returns
        -------
        dict of int to dict
            A payload that is not an object reads as ``{}``.
        """
        ids = tuple(item_ids)

        def compute() -> dict[int, dict]:
            out: dict[int, dict] = {}
            with self.engine.connect() as c:
                for start in range(0, len(ids), 500):
                    for r in c.execute(sa.select(items_table.c.id, items_table.c.payload)
                                       .where(items_table.c.id.in_(ids[start:start + 500]),
                                              items_table.c.session_id == session_id)):
                        payload = json.loads(r.payload)
                        out[r.id] = payload if isinstance(payload, dict) else {}
            return out

        return self._cached(session_id, "payloads", lambda: (ids, compute()), fits=lambda hit: hit[0] == ids)[1]

    def guidelines_counts(self, session_id: int) -> dict[int | None, int]:
        """Submitted decisions counted per guidelines version (``{version: n}``, ``None`` for decisions made
        without guidelines): one grouped query, cached until the session changes.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        dict of (int or None) to int
        """
        d = decisions_table

        def compute() -> dict[int | None, int]:
            q = (sa.select(d.c.guidelines_version, sa.func.count())
                 .where(d.c.session_id == session_id, d.c.status == "submitted").group_by(d.c.guidelines_version))
            with self.engine.connect() as c:
                return {version: int(n) for version, n in c.execute(q)}

        return self._cached(session_id, "guidelines_counts", compute)

    def label_votes(self, session_id: int, item_ids: Iterable[int] | None = None) -> dict[int, dict[str, int]]:
        """Submitted labels counted per item (``{item_id: {label: n}}``): one grouped query, cached until
        the session changes; ``item_ids`` keeps only those items.

        Parameters
        ----------
        session_id : int
        item_ids : iterable of int, optional
            ``None``: every item with a submitted label.

        Returns
        -------
        dict of int to dict of str to int
        """
        d = decisions_table

        def compute() -> dict[int, dict[str, int]]:
            out: dict[int, dict[str, int]] = {}
            q = (sa.select(d.c.item_id, d.c.label, sa.func.count()).where(d.c.session_id == session_id,
                                                                            d.c.status == "submitted",
                                                                            d.c.label.is_not(None))
                 .group_by(d.c.item_id, d.c.label))
            with self.engine.connect() as c:
                for item_id, label, n in c.execute(q):
                    out.setdefault(item_id, {})[label] = int(n)
            return out

        votes = self._cached(session_id, "votes", compute)
        return votes if item_ids is None else {i: votes[i] for i in item_ids if i in votes}

    def systems(self, session_id: int, limit: int = 500) -> list[str]:
        """The distinct systems of a session's items (the System filter's choices), cached.

        Parameters
        ----------
        session_id : int
        limit : int
            Systems returned at most (sorted by name).

        Returns
        -------
        list of str
        """
        i = items_table

        def compute() -> list[str]:
            with self.engine.connect() as c:
                return [r[0] for r in c.execute(sa.select(i.c.system).where(i.c.session_id == session_id,
                                                                             i.c.system.is_not(None))
                                                .distinct().order_by(i.c.system).limit(limit))]

        # the systems change with the items only, never with a decision: cached per item count
        return self._cached(session_id, "systems", compute, counter=self.session(session_id).n_items)

    def adjudicate(self, item_id: int, adjudicator: str, label: str, comment: str = "", *,
                   corrected_answer: str | None = None, audit: Mapping[str, Any] | None = None) -> None:
        """Record (or replace) the final label of an item.

        ``corrected_answer`` is the right answer of a ``gt_error`` item (it becomes a GT patch,
        :mod:`evaluators.review.gt_patch`); ignored for other labels.

        Parameters
        ----------
        item_id : int
        adjudicator : str
            Who decides (the caller checks that they may: :func:`evaluators.review.service.can_adjudicate`).
        label : str
            One of :data:`ALL_LABELS`.
        comment : str
            The adjudicator's note.
        corrected_answer : str, optional
            For ``gt_error`` only.

        Raises
        ------
        ValueError
            An unknown label, an empty adjudicator name, a bad note or answer, or no such item.
        """
        if label not in ALL_LABELS:
            raise ValueError(f"label must be one of {', '.join(ALL_LABELS)}, not {label!r}")
        adjudicator = check_name(adjudicator, "adjudicator")
        check_text(comment, "note")
        corrected = check_text(corrected_answer, "corrected answer") or None if label == "gt_error" else None
        with self._write() as c:
            sid = c.execute(sa.select(items_table.c.session_id).where(items_table.c.id == item_id)).scalar()
            if sid is None:
                raise ValueError(f"no review item {item_id}")
            c.execute(adjudications_table.delete().where(adjudications_table.c.item_id == item_id))
            c.execute(adjudications_table.insert().values(item_id=item_id, adjudicator=adjudicator, label=label,
                                                          comment=comment or "", updated_at=_now(),
                                                          corrected_answer=corrected))
            c.execute(sessions_table.update().where(sessions_table.c.id == sid)
                      .values(changes=sessions_table.c.changes + 1))
            _audit_insert(c, audit)

    def adjudications(self, session_id: int) -> list[dict[str, Any]]:
        """Every final label of a session, by item position.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        list of dict
            ``item_id``, ``item_digest``, ``adjudicator``, ``label``, ``comment``, ``updated_at``,
            ``corrected_answer``.
        """
        with self.engine.connect() as c:
            rows = c.execute(sa.select(adjudications_table, items_table.c.digest)
                             .join(items_table, items_table.c.id == adjudications_table.c.item_id)
                             .where(items_table.c.session_id == session_id)
                             .order_by(items_table.c.position)).all()
        return [{"item_id": r.item_id, "item_digest": r.digest, "adjudicator": r.adjudicator, "label": r.label,
                 "comment": r.comment, "updated_at": r.updated_at, "corrected_answer": r.corrected_answer}
                for r in rows]

    def gt_corrections(self, session_id: int) -> list[dict[str, Any]]:
        """Items adjudicated as ``gt_error``: the item (id, question, current GT), who decided and why.

        The ground truth is never edited here; this list is the correction file to apply.

        Parameters
        ----------
        session_id : int

        Returns
        -------
        list of dict
            By item position: ``item_digest``, ``record_id``, ``question``, ``current_ground_truth``,
            ``prediction``, the adjudicator, label, note and corrected answer.
        """
        a, i = adjudications_table, items_table
        with self.engine.connect() as c:
            rows = c.execute(sa.select(a, i.c.digest, i.c.payload).join(i, i.c.id == a.c.item_id)
                             .where(i.c.session_id == session_id, a.c.label == "gt_error")
                             .order_by(i.c.position)).all()
        out = []
        for r in rows:
            p = json.loads(r.payload)
            out.append({"item_digest": r.digest, "record_id": p.get("id"), "question": p.get("question"),
                        "current_ground_truth": p.get("ground_truth"), "prediction": p.get("prediction"),
                        "adjudicator": r.adjudicator, "comment": r.comment,
                        "corrected_answer": r.corrected_answer})
        return out

    # ------------------------------------------------------------ audit trail (schema 6)
    def audit(self, who: str, action: str, *, role: str | None = None, session_id: int | None = None,
              item_id: int | None = None, via: str = "page", detail: str = "") -> int:
        """Append one row to the audit trail; returns its id.

        Who may do ``action`` is the caller's rule (:func:`evaluators.review.service.may`): only an
        allowed action that took effect is recorded.

        Parameters
        ----------
        who : str
            The acting name.
        action : str
            One of :data:`evaluators.review.roles.ACTIONS`.
        role : str, optional
            The signed-in (or ``--role``) role; ``None`` for a typed name.
        session_id, item_id : int, optional
        via : str
            ``page`` or ``cli``.
        detail : str
            A short note (a label, a format), at most 2,000 characters kept.

        Returns
        -------
        int
        """
        with self._write() as c:
            return _audit_insert(c, {"who": who, "action": action, "role": role, "session_id": session_id,
                                     "item_id": item_id, "via": via, "detail": detail})

    def audit_rows(self, session_id: int | None = None) -> list[dict[str, Any]]:
        """The audit trail, oldest first (of one session, or all of it).

        Parameters
        ----------
        session_id : int, optional

        Returns
        -------
        list of dict
            Keys ``id``, ``at``, ``who``, ``role``, ``action``, ``session_id``, ``item_id``, ``via``, ``detail``.
        """
        q = sa.select(audit_table).order_by(audit_table.c.id)
        if session_id is not None:
            q = q.where(audit_table.c.session_id == session_id)
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(q)]


def new_session_id(c) -> dict[str, int]:
    """The id column of a new session's insert, inside the creating write transaction: on SQLite
    ``{"id": n}``, one above every id the sessions *and the audit trail* have seen, so the id of a deleted
    session (its audit rows stay) is never reused (SQLite's rowid would give the highest one again); ``{}``
    elsewhere (PostgreSQL's sequence never reuses one)."""
    if c.dialect.name != "sqlite":
        return {}
    highest = [c.execute(sa.select(sa.func.coalesce(sa.func.max(col), 0))).scalar_one()
               for col in (sessions_table.c.id, audit_table.c.session_id)]
    return {"id": 1 + max(highest)}


def _audit_insert(c, audit: Mapping[str, Any] | None) -> int | None:
    """Append an audit row (keys as :meth:`ReviewStore.audit`'s parameters) inside the caller's transaction, so
    an action and its row are committed together; ``None`` writes nothing."""
    if not audit:
        return None
    role = audit.get("role")
    return c.execute(audit_table.insert().values(
        at=_now(), who=str(audit.get("who") or "")[:256], role=None if role is None else str(role)[:32],
        action=str(audit["action"])[:32], session_id=audit.get("session_id"), item_id=audit.get("item_id"),
        via=str(audit.get("via") or "page")[:16], detail=str(audit.get("detail") or "")[:2000])
    ).inserted_primary_key[0]


def _filter_clauses(f: QueueFilter) -> list:
    """SQL conditions on ``items`` of a queue filter (correlated subqueries on the item's decisions)."""
    i, d = items_table, decisions_table
    out = []
    if f.system is not None:
        out.append(i.c.system == f.system)
    if f.metric_min is not None:
        out.append(i.c.metric >= float(f.metric_min))
    if f.metric_max is not None:
        out.append(i.c.metric <= float(f.metric_max))
    if f.label:
        out.append(sa.select(d.c.id).where(d.c.item_id == i.c.id, d.c.status == "submitted",
                                           d.c.label == f.label).exists())
    if f.disagreement:
        out.append(sa.select(sa.func.count(sa.distinct(d.c.label))).where(
            d.c.item_id == i.c.id, d.c.status == "submitted").scalar_subquery() > 1)
    return out


def _settings_json(settings: Mapping[str, Any]) -> str:
    # order / filter / sampling: how the reviewed items are drawn (evaluators.review.sampling.session_design);
    # carried: what a "what's new" session took over from earlier sessions (evaluators.review.create)
    allowed = {"guidelines", "guidelines_version", "guidelines_versions", "adjudicators", "labels_help", "order",
               "filter", "sampling", "carried", "fast_seconds"}
    unknown = set(settings) - allowed
    if unknown:
        raise ValueError(f"unknown session setting(s): {', '.join(sorted(map(str, unknown)))}")
    out = dict(settings)
    if "order" in out and out["order"] not in ("random", "informative"):
        raise ValueError("order must be 'random' or 'informative'")
    fast = out.get("fast_seconds")  # the fast-decision threshold (evaluators.review.service.fast_threshold)
    if fast is not None and (isinstance(fast, bool) or not isinstance(fast, (int, float)) or not 0 < fast <= 3600):
        raise ValueError("the fast-decision threshold must be a number of seconds above 0 and at most 3600")
    for name in ("filter", "sampling"):
        if name in out and not isinstance(out[name], dict):
            raise ValueError(f"{name} must be a mapping")
    if "filter" in out:
        try:
            QueueFilter(**out["filter"])  # the queue filter's own checks
        except TypeError as exc:
            raise ValueError(f"filter: {exc}") from None
    if "sampling" in out and out["sampling"].get("design") not in ("uniform", "stratified", "active"):
        raise ValueError("sampling design must be 'uniform', 'stratified' or 'active'")
    if "guidelines" in out:
        out["guidelines"] = check_text(out["guidelines"], "guidelines", limit=MAX_GUIDELINES)
        version = out.get("guidelines_version", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise ValueError("guidelines_version must be a non-negative integer")
    if "guidelines_versions" in out:  # every saved version of the guidelines, oldest first
        raw = out["guidelines_versions"]
        if not isinstance(raw, (list, tuple)) or len(raw) > 1000:
            raise ValueError("guidelines_versions must be a list of at most 1000 {version, text, by, at}")
        kept = []
        for v in raw:
            if not isinstance(v, dict) or isinstance(v.get("version"), bool) or not isinstance(v.get("version"), int):
                raise ValueError("each of guidelines_versions must be {version, text, by, at}")
            kept.append({"version": v["version"], "text": check_text(v.get("text"), "guidelines", limit=MAX_GUIDELINES),
                         "by": None if v.get("by") is None else check_name(v["by"], "guidelines author"),
                         "at": None if v.get("at") is None else check_text(v["at"], "guidelines time", limit=40)})
        out["guidelines_versions"] = kept
    if "adjudicators" in out:
        if not isinstance(out["adjudicators"], (list, tuple)):
            raise ValueError("adjudicators must be a list of names")
        out["adjudicators"] = sorted({check_name(a, "adjudicator") for a in out["adjudicators"]})
    if "order" in out and out["order"] not in ("random", "informative"):
        raise ValueError("order must be 'random' or 'informative'")
    if "carried" in out:  # what a "review what's new" session left out (evaluators.review.carry)
        carried = out["carried"]
        if not isinstance(carried, dict) or not isinstance(carried.get("n"), int) or isinstance(carried["n"], bool):
            raise ValueError("carried must be {n, labels, sessions}")
        out["carried"] = {"n": carried["n"],
                          "labels": {check_name(str(k), "label"): int(v)
                                     for k, v in dict(carried.get("labels") or {}).items()},
                          "sessions": sorted({check_name(str(x), "session") for x in carried.get("sessions") or ()})}
    if "labels_help" in out:
        if not isinstance(out["labels_help"], dict):
            raise ValueError("labels_help must map labels to one-line definitions")
        out["labels_help"] = {str(k): check_text(v, f"labels_help[{k}]", limit=500)
                              for k, v in out["labels_help"].items() if k in ALL_LABELS}
    return json.dumps(out, ensure_ascii=False, sort_keys=True)


def guidelines_versions(session: Session) -> list[dict[str, Any]]:
    """Every saved version of a session's guidelines, oldest first, as ``{version, text, by, at}``;
    guidelines set before versions were kept show as their current version alone (``by``/``at`` unknown).

    Parameters
    ----------
    session : Session

    Returns
    -------
    list of dict
        Sorted by version; empty when the session has no guidelines.
    """
    kept = [dict(v) for v in (session.settings or {}).get("guidelines_versions") or () if isinstance(v, dict)]
    current = session.guidelines_version
    if current is not None and not any(v.get("version") == current for v in kept):
        kept.append({"version": current, "text": session.guidelines, "by": None, "at": None})
    return sorted(kept, key=lambda v: v["version"])


def _loads_settings(text: str | None) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _item(row) -> Item:
    return Item(row.id, row.session_id, row.position, row.digest, json.loads(row.payload), row.gold)


def _decision(row) -> Decision:
    return Decision(row.item_id, row.digest, row.annotator, row.label, row.score, row.comment, row.status,
                    row.version, row.updated_at, row.seconds, row.guidelines_version)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    """Every SQLite connection: wait for locks, durable writes, concurrent readers, foreign keys."""
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_autocommit(dbapi_connection, _record) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event emits BEGIN IMMEDIATE
