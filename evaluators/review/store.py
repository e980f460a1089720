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
  ``acceptable_variant``, or an A/B label), optional 1-5 score, comment, status (``draft`` /
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
from evaluators.review.limits import MAX_GUIDELINES, MAX_ITEMS, canonical_payload, check_name, check_text
from evaluators.review.schema import (
    SCHEMA_VERSION,
    SchemaTooNew,
    adjudications_table,
    claims_table,
    decisions_table,
    ensure_schema,
    items_table,
    sessions_table,
    sqlite_path,
    uploads_table,
)

LABELS = ("model_error", "gt_error", "acceptable_variant")
#: Labels of a two-sided (A/B) item, always about the stored sides (the page maps screen sides back).
PAIR_LABELS = ("a_better", "b_better", "tie")
ALL_LABELS = LABELS + PAIR_LABELS
STATUSES = ("draft", "submitted", "skipped")
#: Largest upload kept in the database (bytes).
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
#: Rows per statement batch in bulk writes.
BATCH = 2_000
#: How long an item handed out by :meth:`ReviewStore.next_item` stays claimed (seconds).
CLAIM_SECONDS = 600
#: Stores opened in this process (weakly held), so tests can close their pools before dropping a database.
OPEN_STORES: weakref.WeakSet = weakref.WeakSet()

__all__ = ["ALL_LABELS", "LABELS", "MAX_UPLOAD_BYTES", "PAIR_LABELS", "SCHEMA_VERSION", "STATUSES", "Decision",
           "Item", "Progress", "ReviewStore", "SchemaTooNew", "Session", "StaleDecision", "default_url",
           "item_digest"]


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


@dataclass(frozen=True)
class Progress(DictMixin):
    """Counts of a session for one annotator (aggregate queries, no item read)."""

    n_items: int
    decided: int          # this annotator's submitted or skipped decisions
    complete: int         # items with k submitted decisions
    n_decisions: int      # everyone's decisions


def item_digest(payload: Mapping[str, Any]) -> str:
    """SHA-256 of the payload's canonical JSON (sorted keys, no spaces, UTF-8): an item's identity."""
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


def seeded_rank(seed: int, position: int) -> int:
    """An item's place in its session's seeded order: the first 31 bits of SHA-256 of ``"seed:position"``
    (a shuffle that needs neither the other items nor their number, so items added later, or
    imported in batches, get theirs at once; ties are ordered by item id)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{position}".encode()).digest()[:4], "big") >> 1


def check_decision(label: Any, score: Any, comment: Any, status: Any, *, where: str = "") -> None:
    """The rules of a decision's fields (label, 1-5 score, comment, status); raises a located ``ValueError``."""
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


def label_fits(label: str | None, payload: Mapping[str, Any]) -> bool:
    """Whether a label belongs to the item's kind (A/B labels for two-sided items only)."""
    pair = isinstance(payload.get("sides"), dict)
    return label is None or (label in PAIR_LABELS) == pair


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
        url = str(url or default_url())
        if "://" not in url:
            url = f"sqlite:///{url}"
        path = sqlite_path(url)
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.url = url
        self._cache: dict[tuple, tuple[int, Any]] = {}
        self._cache_lock = threading.Lock()
        if url.startswith("sqlite"):
            memory = path is None
            kw = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}} if memory else {}
            self.engine = sa.create_engine(url, **kw)
            # writes take the lock at BEGIN (no deferred upgrade that fails under concurrency)
            self._writer = self.engine if memory else sa.create_engine(url)
            for engine in {self.engine, self._writer}:
                sa.event.listen(engine, "connect", _sqlite_pragmas)
            if self._writer is not self.engine:
                sa.event.listen(self._writer, "connect", _sqlite_autocommit)
                sa.event.listen(self._writer, "begin", lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
        else:
            # a server thread per browser session: room for a team reviewing at once
            self.engine = self._writer = sa.create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=40,
                                                          pool_timeout=120)
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
        """``(name, bytes)`` of a kept file, or ``None``."""
        with self.engine.connect() as c:
            row = c.execute(sa.select(uploads_table.c.name, uploads_table.c.data)
                            .where(uploads_table.c.digest == digest)).first()
        return None if row is None else (row[0], bytes(row[1]))

    def create_session(self, name: str, kind: str, items: Iterable[Mapping[str, Any]], *, created_by: str,
                       blind: bool = False, k: int = 1, seed: int = 0, uploads: Iterable[str] = (),
                       settings: Mapping[str, Any] | None = None,
                       gold: Mapping[str, str] | None = None) -> Session:
        """Create a session with its items (duplicates of one payload kept once), in batched inserts.

        ``gold`` maps item digests to their known label.

        Raises
        ------
        ValueError
            A session of that name exists, no item, ``k < 1``, or a bad name, item or setting
            (located: ``item 5: ...``).
        """
        name = check_name(name, "session name")
        kind = check_name(kind, "kind")[:32]
        created_by = check_name(created_by, "created_by")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("k (reviewers per item) must be an integer >= 1")
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
            rows.append({"position": len(rows), "digest": digest, "payload": text, "gold": label})
            if len(rows) > MAX_ITEMS:
                raise ValueError(f"a review session holds at most {MAX_ITEMS:,} items")
        if not rows:
            raise ValueError("a review session needs at least one item")
        for row in rows:
            row["rank"] = seeded_rank(seed, row["position"])
        with self._write() as c:
            try:
                sid = c.execute(sessions_table.insert().values(
                    name=name, kind=kind, created_by=created_by, blind=bool(blind), k=k, seed=seed,
                    uploads=json.dumps(list(uploads)), created_at=_now(), settings=settings_text,
                    n_items=len(rows), changes=0)).inserted_primary_key[0]
            except IntegrityError:
                raise ValueError(f"a review session named {name!r} exists already") from None
            for start in range(0, len(rows), BATCH):
                chunk = rows[start:start + BATCH]
                for row in chunk:
                    row["session_id"] = sid
                c.execute(items_table.insert(), chunk)
        return self.session(sid)

    def update_session(self, session_id: int, *, blind: bool | None = None, guidelines: str | None = None,
                       adjudicators: Iterable[str] | None = None) -> Session:
        """Change a session's blind mode, guidelines (their version goes up) or adjudicators.

        Who may do it is the caller's rule (:func:`evaluators.review.service.can_manage`).
        """
        s = self.session(session_id)
        settings = dict(s.settings or {})
        if guidelines is not None and guidelines != settings.get("guidelines"):
            settings["guidelines"] = check_text(guidelines, "guidelines", limit=MAX_GUIDELINES)
            settings["guidelines_version"] = int(settings.get("guidelines_version") or 0) + 1
        if adjudicators is not None:
            settings["adjudicators"] = sorted({check_name(a, "adjudicator") for a in adjudicators})
        values: dict[str, Any] = {"settings": _settings_json(settings)}
        if blind is not None:
            values["blind"] = bool(blind)
        with self._write() as c:
            c.execute(sessions_table.update().where(sessions_table.c.id == session_id)
                      .values(changes=sessions_table.c.changes + 1, **values))
        return self.session(session_id)

    def _session_row(self, row) -> Session:
        return Session(row.id, row.name, row.kind, row.created_by, bool(row.blind), row.k, row.seed,
                       tuple(json.loads(row.uploads)), row.created_at, _loads_settings(row.settings), row.n_items)

    def session(self, session_id: int) -> Session:
        """A session by id (``KeyError`` if there is none)."""
        with self.engine.connect() as c:
            row = c.execute(sa.select(sessions_table).where(sessions_table.c.id == session_id)).first()
        if row is None:
            raise KeyError(f"no review session {session_id}")
        return self._session_row(row)

    def session_by_name(self, name: str) -> Session | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(sessions_table).where(sessions_table.c.name == name)).first()
        return None if row is None else self._session_row(row)

    def sessions(self) -> list[Session]:
        """All sessions, newest first."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(sessions_table).order_by(sessions_table.c.id.desc())).all()
        return [self._session_row(r) for r in rows]

    def changes(self, session_id: int) -> int:
        """The session's change counter (+1 per decision, adjudication or settings change)."""
        with self.engine.connect() as c:
            return int(c.execute(sa.select(sessions_table.c.changes)
                                 .where(sessions_table.c.id == session_id)).scalar_one_or_none() or 0)

    def _cached(self, session_id: int, what: str, compute):
        """``compute()`` once per value of the session's change counter (per store: per server process)."""
        counter = self.changes(session_id)
        key = (session_id, what)
        with self._cache_lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == counter:
            return hit[1]
        value = compute()
        with self._cache_lock:
            self._cache[key] = (counter, value)
        return value

    # ------------------------------------------------------------ items
    def items(self, session_id: int) -> list[Item]:
        """A session's items in creation order (all of them: for exports and small sessions)."""
        return list(self.iter_items(session_id))

    def iter_items(self, session_id: int, *, batch: int = BATCH) -> Iterator[Item]:
        """A session's items in creation order, streamed (one query, ``batch`` rows at a time)."""
        q = sa.select(items_table).where(items_table.c.session_id == session_id).order_by(items_table.c.position)
        with self.engine.connect() as c:
            for r in c.execution_options(stream_results=True, yield_per=batch).execute(q):
                yield _item(r)

    def item(self, item_id: int) -> Item | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(items_table).where(items_table.c.id == item_id)).first()
        return None if row is None else _item(row)

    def add_item(self, session_id: int, payload: Mapping[str, Any]) -> Item:
        """Add an item to a session (an existing item with the same payload is returned as is)."""
        text = canonical_payload(payload)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._write() as c:
            row = c.execute(sa.select(items_table).where(items_table.c.session_id == session_id,
                                                         items_table.c.digest == digest)).first()
            if row is None:
                position = c.execute(sa.select(sessions_table.c.n_items)
                                     .where(sessions_table.c.id == session_id)).scalar_one()
                seed = c.execute(sa.select(sessions_table.c.seed).where(sessions_table.c.id == session_id)).scalar()
                c.execute(items_table.insert().values(session_id=session_id, position=position, digest=digest,
                                                      payload=text, rank=seeded_rank(seed or 0, position)))
                c.execute(sessions_table.update().where(sessions_table.c.id == session_id)
                          .values(n_items=position + 1, changes=sessions_table.c.changes + 1))
                row = c.execute(sa.select(items_table).where(items_table.c.session_id == session_id,
                                                             items_table.c.digest == digest)).first()
        return _item(row)

    # ------------------------------------------------------------ assignment
    def next_item(self, session_id: int, annotator: str, *, exclude: Iterable[int] = (),
                  claim: bool = False) -> Item | None:
        """The next item for an annotator, overlap first.

        Among items this annotator has not decided, with fewer than ``k`` submitted decisions
        plus live claims by others, those with the most decisions come first (items reach ``k``
        reviewers before new ones open), then by the session's seeded rank.  One indexed query
        per level of ``k``; ``exclude``: item ids to pass over.

        With ``claim``, the item is claimed for :data:`CLAIM_SECONDS` (the annotator's earlier
        claim in the session is released), atomically: no item is handed to more than ``k``
        annotators at once.
        """
        s = self.session(session_id)
        exclude = list(exclude)
        if not claim:
            with self.engine.connect() as c:
                return self._first_open(c, s, annotator, _now(), exclude)
        for _attempt in range(50):  # on SQLite the first try holds the write lock: it always succeeds
            with self._write() as c:
                now = _now()
                found = self._first_open(c, s, annotator, now, exclude)
                if found is None or self._claim(c, found, annotator, s.k, now):
                    return found
            exclude.append(found.id)  # claimed to k meanwhile (PostgreSQL): the next one
        return None

    def _first_open(self, c, s: Session, annotator: str, now: str, exclude: list[int]) -> Item | None:
        for done in range(s.k - 1, -1, -1):
            row = c.execute(self._queue_query(s.id, annotator, done, s.k, now, exclude)).first()
            if row is not None:
                return _item(row)
        return None

    @staticmethod
    def _queue_query(session_id: int, annotator: str, done: int, k: int, now: str, exclude: list[int]):
        i, d, cl = items_table, decisions_table, claims_table
        mine = sa.select(d.c.id).where(d.c.item_id == i.c.id, d.c.annotator == annotator).exists()
        claimed = (sa.select(sa.func.count()).select_from(cl)
                   .where(cl.c.item_id == i.c.id, cl.c.annotator != annotator, cl.c.expires_at > now)
                   .scalar_subquery())
        q = (sa.select(i).where(i.c.session_id == session_id, i.c.n_done == done, ~mine, claimed < k - done)
             .order_by(i.c.rank, i.c.id).limit(1))
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
        session_items = sa.select(i.c.id).where(i.c.session_id == item.session_id)
        c.execute(cl.delete().where(cl.c.annotator == annotator, cl.c.item_id.in_(session_items)))
        c.execute(cl.insert().values(item_id=item.id, annotator=annotator, expires_at=until))
        return True

    def claims(self, session_id: int) -> dict[int, list[str]]:
        """Live claims of a session: item id -> annotators."""
        now, i, cl = _now(), items_table, claims_table
        with self.engine.connect() as c:
            rows = c.execute(sa.select(cl.c.item_id, cl.c.annotator).join(i, i.c.id == cl.c.item_id)
                             .where(i.c.session_id == session_id, cl.c.expires_at > now)).all()
        out: dict[int, list[str]] = {}
        for item_id, who in rows:
            out.setdefault(item_id, []).append(who)
        return out

    def previous_item(self, session_id: int, annotator: str, before: Item | None = None) -> Item | None:
        """The item this annotator decided last before ``before`` (by time of decision); ``None`` at the start."""
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
        sessions and tests; the page asks :meth:`next_item`)."""
        s = self.session(session_id)
        items = self.items(session_id)
        done: dict[int, set[str]] = {}
        for d in self.decisions(session_id) if decisions is None else decisions:
            if d.status == "submitted":
                done.setdefault(d.item_id, set()).add(d.annotator)
        return sorted((i for i in items if annotator in done.get(i.id, ()) or len(done.get(i.id, ())) < s.k),
                      key=lambda i: (seeded_rank(s.seed, i.position), i.id))

    def progress(self, session_id: int, annotator: str) -> Progress:
        """Counts for the progress bar, by aggregate queries."""
        s = self.session(session_id)
        d = decisions_table
        with self.engine.connect() as c:
            mine = c.execute(sa.select(sa.func.count()).select_from(d).where(
                d.c.session_id == session_id, d.c.annotator == annotator, d.c.status != "draft")).scalar_one()
            complete = c.execute(sa.select(sa.func.count()).select_from(items_table).where(
                items_table.c.session_id == session_id, items_table.c.n_done >= s.k)).scalar_one()
        total = self._cached(session_id, "n_decisions", lambda: self._count_decisions(session_id))
        return Progress(s.n_items, int(mine), int(complete), int(total))

    def _count_decisions(self, session_id: int) -> int:
        with self.engine.connect() as c:
            return int(c.execute(sa.select(sa.func.count()).select_from(decisions_table)
                                 .where(decisions_table.c.session_id == session_id)).scalar_one())

    @staticmethod
    def blind_sides(session: Session, annotator: str, item: Item) -> bool:
        """Whether the A/B sides of a two-sided item are swapped for this annotator (blind mode, seeded)."""
        if not session.blind:
            return False
        return random.Random(f"{session.seed}:{annotator}:{item.digest}").random() < 0.5

    # ------------------------------------------------------------ decisions
    def decision(self, item_id: int, annotator: str) -> Decision | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(decisions_table, items_table.c.digest)
                            .join(items_table, items_table.c.id == decisions_table.c.item_id)
                            .where(decisions_table.c.item_id == item_id, decisions_table.c.annotator == annotator)
                            ).first()
        return None if row is None else _decision(row)

    def item_decisions(self, item_id: int) -> list[Decision]:
        """Every annotator's decision on one item."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(decisions_table, items_table.c.digest)
                             .join(items_table, items_table.c.id == decisions_table.c.item_id)
                             .where(decisions_table.c.item_id == item_id)
                             .order_by(decisions_table.c.annotator)).all()
        return [_decision(r) for r in rows]

    def save_decision(self, item_id: int, annotator: str, *, label: str | None, score: int | None = None,
                      comment: str = "", status: str = "submitted", expected_version: int = 0,
                      seconds: float | None = None) -> Decision:
        """Save (commit) one annotator's decision on an item.

        Parameters
        ----------
        expected_version : int
            The version the annotator saw: 0 for a new decision.  When the stored version
            differs, nothing is written and :class:`StaleDecision` is raised.
        seconds : float, optional
            Time on the item (shown to saved), kept with the decision.

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
        values = {"label": label, "score": score, "comment": comment or "", "status": status, "updated_at": _now(),
                  "seconds": None if seconds is None else float(seconds)}
        with self._write() as c:
            item = c.execute(sa.select(items_table.c.session_id, items_table.c.payload)
                             .where(items_table.c.id == item_id)).first()
            if item is None:
                raise ValueError(f"no review item {item_id}")
            if label is not None and not label_fits(label, json.loads(item.payload)):
                raise ValueError(f"label {label!r} does not fit item {item_id} (A/B labels are for two-sided items)")
            if expected_version == 0:
                try:
                    with c.begin_nested():
                        c.execute(decisions_table.insert().values(item_id=item_id, annotator=annotator, version=1,
                                                                  session_id=item.session_id, **values))
                except IntegrityError:
                    raise StaleDecision(f"{annotator} already has a decision on item {item_id}: reload it") from None
                delta = int(status == "submitted")
            else:
                old = c.execute(sa.select(decisions_table.c.status).where(
                    decisions_table.c.item_id == item_id, decisions_table.c.annotator == annotator,
                    decisions_table.c.version == expected_version)).scalar()
                done = 0 if old is None else c.execute(
                    decisions_table.update().where(decisions_table.c.item_id == item_id,
                                                   decisions_table.c.annotator == annotator,
                                                   decisions_table.c.version == expected_version)
                    .values(version=expected_version + 1, **values)).rowcount
                if done != 1:
                    raise StaleDecision(f"the decision of {annotator} on item {item_id} changed since version "
                                        f"{expected_version}: reload it")
                delta = int(status == "submitted") - int(old == "submitted")
            if delta:
                c.execute(items_table.update().where(items_table.c.id == item_id)
                          .values(n_done=items_table.c.n_done + delta))
            c.execute(claims_table.delete().where(claims_table.c.item_id == item_id,
                                                  claims_table.c.annotator == annotator))
            c.execute(sessions_table.update().where(sessions_table.c.id == item.session_id)
                      .values(changes=sessions_table.c.changes + 1))
        result = self.decision(item_id, annotator)
        assert result is not None
        return result

    def decisions(self, session_id: int) -> list[Decision]:
        """Every decision of a session, by item position then annotator."""
        return list(self.iter_decisions(session_id))

    def iter_decisions(self, session_id: int, *, batch: int = BATCH) -> Iterator[Decision]:
        """A session's decisions by item position then annotator, streamed (one query)."""
        for decision, _payload in self.iter_decisions_with_items(session_id, batch=batch, payloads=False):
            yield decision

    def iter_decisions_with_items(self, session_id: int, *, batch: int = BATCH,
                                  payloads: bool = True) -> Iterator[tuple[Decision, dict | None]]:
        """Each decision with its item's payload (``None`` without ``payloads``), streamed, by
        item position then annotator."""
        d, i = decisions_table, items_table
        cols = [d, i.c.digest] + ([i.c.payload] if payloads else [])
        q = (sa.select(*cols).join(i, i.c.id == d.c.item_id).where(d.c.session_id == session_id)
             .order_by(i.c.position, d.c.annotator))
        with self.engine.connect() as c:
            for r in c.execution_options(stream_results=True, yield_per=batch).execute(q):
                yield _decision(r), (json.loads(r.payload) if payloads else None)

    def ratings(self, session_id: int) -> list[Decision]:
        """The submitted decisions of a session without comments (what agreement needs), one query."""
        d, i = decisions_table, items_table
        with self.engine.connect() as c:
            rows = c.execute(sa.select(d.c.item_id, d.c.annotator, d.c.label, d.c.score, d.c.status,
                                       d.c.version, d.c.updated_at, i.c.digest)
                             .join(i, i.c.id == d.c.item_id)
                             .where(d.c.session_id == session_id, d.c.status == "submitted")).all()
        return [Decision(r.item_id, r.digest, r.annotator, r.label, r.score, "", r.status, r.version, r.updated_at)
                for r in rows]

    def agreement(self, session_id: int) -> dict[str, Any]:
        """:func:`~evaluators.review.agreement.session_agreement` of the session, cached until it changes."""
        from evaluators.review.agreement import session_agreement

        return self._cached(session_id, "agreement", lambda: session_agreement(self.ratings(session_id)))

    # ------------------------------------------------------------ adjudication
    def adjudication_queue(self, session_id: int, limit: int | None = None) -> list[tuple[Item, list[Decision]]]:
        """Items whose submitted labels disagree, or that someone marked ``gt_error``, not yet
        adjudicated (found by one grouped query, cached until the session changes)."""
        ids = self._cached(session_id, "queue", lambda: self._queue_ids(session_id))
        out = []
        for item_id in ids[:limit]:
            item = self.item(item_id)
            if item is not None:
                out.append((item, [d for d in self.item_decisions(item_id) if d.status == "submitted"]))
        return out

    def queue_size(self, session_id: int) -> int:
        return len(self._cached(session_id, "queue", lambda: self._queue_ids(session_id)))

    def _queue_ids(self, session_id: int) -> list[int]:
        d, i, a = decisions_table, items_table, adjudications_table
        gt = sa.func.max(sa.case((d.c.label == "gt_error", 1), else_=0))
        q = (sa.select(d.c.item_id).join(i, i.c.id == d.c.item_id)
             .where(d.c.session_id == session_id, d.c.status == "submitted",
                    ~sa.select(a.c.item_id).where(a.c.item_id == d.c.item_id).exists())
             .group_by(d.c.item_id, i.c.position)
             .having(sa.or_(sa.func.count(sa.distinct(d.c.label)) > 1, gt == 1))
             .order_by(i.c.position))
        with self.engine.connect() as c:
            return [r[0] for r in c.execute(q)]

    def adjudicate(self, item_id: int, adjudicator: str, label: str, comment: str = "", *,
                   corrected_answer: str | None = None) -> None:
        """Record (or replace) the final label of an item.

        ``corrected_answer`` is the right answer of a ``gt_error`` item (it becomes a GT patch,
        :mod:`evaluators.review.gt_patch`); ignored for other labels.

        Raises
        ------
        ValueError
            An unknown label, an empty adjudicator name or a bad note.
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

    def adjudications(self, session_id: int) -> list[dict[str, Any]]:
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


def _settings_json(settings: Mapping[str, Any]) -> str:
    allowed = {"guidelines", "guidelines_version", "adjudicators", "labels_help"}
    unknown = set(settings) - allowed
    if unknown:
        raise ValueError(f"unknown session setting(s): {', '.join(sorted(map(str, unknown)))}")
    out = dict(settings)
    if "guidelines" in out:
        out["guidelines"] = check_text(out["guidelines"], "guidelines", limit=MAX_GUIDELINES)
        version = out.get("guidelines_version", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise ValueError("guidelines_version must be a non-negative integer")
    if "adjudicators" in out:
        if not isinstance(out["adjudicators"], (list, tuple)):
            raise ValueError("adjudicators must be a list of names")
        out["adjudicators"] = sorted({check_name(a, "adjudicator") for a in out["adjudicators"]})
    if "labels_help" in out:
        if not isinstance(out["labels_help"], dict):
            raise ValueError("labels_help must map labels to one-line definitions")
        out["labels_help"] = {str(k): check_text(v, f"labels_help[{k}]", limit=500)
                              for k, v in out["labels_help"].items() if k in ALL_LABELS}
    return json.dumps(out, ensure_ascii=False, sort_keys=True)


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
                    row.version, row.updated_at, row.seconds)


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
