"""Durable human review sessions: SQLite by default (any SQLAlchemy URL works), every decision committed.

Tables (schema version :data:`SCHEMA_VERSION`):

- ``uploads``: the files a session was made from, by SHA-256 content digest (a session and its
  link reopen after a restart or in another browser);
- ``sessions``: name, task kind, creator, blind mode, reviewers per item ``k``, the seed of every
  random order, the digests of its uploads;
- ``items``: what a reviewer sees (JSON payload), keyed by the digest of its canonical JSON;
- ``decisions``: one row per (item, annotator): label (``model_error`` / ``gt_error`` /
  ``acceptable_variant``), optional 1-5 score, comment, status (``draft`` / ``submitted`` /
  ``skipped``) and a version for optimistic locking (:class:`StaleDecision`);
- ``adjudications``: the final label of an item and who decided it.

SQLite runs in WAL mode with ``synchronous=FULL``: a decision is on disk when
:meth:`ReviewStore.save_decision` returns, and a killed server loses none.  The ground truth is
never edited: :meth:`ReviewStore.gt_corrections` lists the corrections to apply elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from evaluators.results import DictMixin

SCHEMA_VERSION = 1
LABELS = ("model_error", "gt_error", "acceptable_variant")
#: Labels of a two-sided (A/B) item, always about the stored sides (the page maps screen sides back).
PAIR_LABELS = ("a_better", "b_better", "tie")
ALL_LABELS = LABELS + PAIR_LABELS
STATUSES = ("draft", "submitted", "skipped")
#: Largest upload kept in the database (bytes).
MAX_UPLOAD_BYTES = 50 * 1024 * 1024

metadata = sa.MetaData()
meta_table = sa.Table("meta", metadata, sa.Column("key", sa.String(64), primary_key=True),
                      sa.Column("value", sa.String(256), nullable=False))
uploads_table = sa.Table(
    "uploads", metadata, sa.Column("digest", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(512), nullable=False), sa.Column("size", sa.Integer, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False))
sessions_table = sa.Table(
    "sessions", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(256), nullable=False, unique=True), sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("created_by", sa.String(256), nullable=False), sa.Column("blind", sa.Boolean, nullable=False),
    sa.Column("k", sa.Integer, nullable=False), sa.Column("seed", sa.Integer, nullable=False),
    sa.Column("uploads", sa.Text, nullable=False), sa.Column("created_at", sa.String(40), nullable=False))
items_table = sa.Table(
    "items", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.Integer, sa.ForeignKey("sessions.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False), sa.Column("digest", sa.String(64), nullable=False),
    sa.Column("payload", sa.Text, nullable=False), sa.UniqueConstraint("session_id", "digest"))
decisions_table = sa.Table(
    "decisions", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), nullable=False),
    sa.Column("annotator", sa.String(256), nullable=False), sa.Column("label", sa.String(32)),
    sa.Column("score", sa.Integer), sa.Column("comment", sa.Text, nullable=False, default=""),
    sa.Column("status", sa.String(16), nullable=False), sa.Column("version", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False), sa.UniqueConstraint("item_id", "annotator"))
adjudications_table = sa.Table(
    "adjudications", metadata, sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), primary_key=True),
    sa.Column("adjudicator", sa.String(256), nullable=False), sa.Column("label", sa.String(32), nullable=False),
    sa.Column("comment", sa.Text, nullable=False, default=""), sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Column("corrected_answer", sa.Text, nullable=True))  # a gt_error's corrected answer (added in place)


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


@dataclass(frozen=True)
class Item(DictMixin):
    """A reviewable item: ``payload`` is what the reviewer sees (question, GT, prediction, system ...)."""

    id: int
    session_id: int
    position: int
    digest: str
    payload: dict


@dataclass(frozen=True)
class Session(DictMixin):
    """A review session (see the module docstring)."""

    id: int
    name: str
    kind: str
    created_by: str
    blind: bool
    k: int
    seed: int
    uploads: tuple[str, ...]
    created_at: str


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


class ReviewStore:
    """The review database.

    Parameters
    ----------
    url : str, optional
        An SQLAlchemy URL or a path to an SQLite file (created with its folder on first use);
        default :func:`default_url`.

    Raises
    ------
    RuntimeError
        When the database has a newer schema version than this code knows.
    """

    def __init__(self, url: str | Path | None = None):
        url = str(url or default_url())
        if "://" not in url:
            url = f"sqlite:///{url}"
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            Path(url[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
        self.url = url
        self.engine = sa.create_engine(url, future=True)
        if self.engine.dialect.name == "sqlite":
            @sa.event.listens_for(self.engine, "connect")
            def _pragmas(dbapi_connection, _record):  # every connection: durable writes, concurrent readers
                cur = dbapi_connection.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=FULL")
                cur.execute("PRAGMA foreign_keys=ON")
                cur.execute("PRAGMA busy_timeout=10000")
                cur.close()
        metadata.create_all(self.engine)
        if "corrected_answer" not in {c["name"] for c in sa.inspect(self.engine).get_columns("adjudications")}:
            with self.engine.begin() as c:  # a database made before the column: add it (nullable, no data moved)
                c.execute(sa.text("ALTER TABLE adjudications ADD COLUMN corrected_answer TEXT"))
        with self.engine.begin() as c:
            row = c.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")).first()
            if row is None:
                c.execute(meta_table.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
            elif int(row[0]) > SCHEMA_VERSION:
                raise RuntimeError(f"{url}: review schema version {row[0]} is newer than this EvalBoard's "
                                   f"({SCHEMA_VERSION})")

    # ------------------------------------------------------------ uploads and sessions
    def put_upload(self, name: str, data: bytes) -> str:
        """Keep a file by its SHA-256 digest (once); returns the digest.

        Raises
        ------
        ValueError
            Over :data:`MAX_UPLOAD_BYTES`.
        """
        if len(data) > MAX_UPLOAD_BYTES:
            raise ValueError(f"{name}: {len(data):,} bytes is over the review upload limit of {MAX_UPLOAD_BYTES:,}")
        digest = hashlib.sha256(data).hexdigest()
        with self.engine.begin() as c:
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
                       blind: bool = False, k: int = 1, seed: int = 0, uploads: Iterable[str] = ()) -> Session:
        """Create a session with its items (duplicates of one payload kept once).

        Raises
        ------
        ValueError
            A session of that name exists, no item, or ``k < 1``.
        """
        payloads = list(items)
        if not payloads:
            raise ValueError("a review session needs at least one item")
        if k < 1:
            raise ValueError("k (reviewers per item) must be >= 1")
        with self.engine.begin() as c:
            try:
                sid = c.execute(sessions_table.insert().values(
                    name=name, kind=kind, created_by=created_by, blind=blind, k=k, seed=seed,
                    uploads=json.dumps(list(uploads)), created_at=_now())).inserted_primary_key[0]
            except IntegrityError:
                raise ValueError(f"a review session named {name!r} exists already") from None
            seen: set[str] = set()
            for payload in payloads:
                digest = item_digest(payload)
                if digest in seen:
                    continue
                seen.add(digest)
                c.execute(items_table.insert().values(session_id=sid, position=len(seen) - 1, digest=digest,
                                                      payload=json.dumps(payload, ensure_ascii=False, sort_keys=True)))
        return self.session(sid)

    def _session_row(self, row) -> Session:
        return Session(row.id, row.name, row.kind, row.created_by, bool(row.blind), row.k, row.seed,
                       tuple(json.loads(row.uploads)), row.created_at)

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

    def items(self, session_id: int) -> list[Item]:
        """A session's items in creation order."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(items_table).where(items_table.c.session_id == session_id)
                             .order_by(items_table.c.position)).all()
        return [Item(r.id, r.session_id, r.position, r.digest, json.loads(r.payload)) for r in rows]

    def add_item(self, session_id: int, payload: Mapping[str, Any]) -> Item:
        """Add an item to a session (an existing item with the same payload is returned as is)."""
        digest = item_digest(payload)
        with self.engine.begin() as c:
            row = c.execute(sa.select(items_table).where(items_table.c.session_id == session_id,
                                                         items_table.c.digest == digest)).first()
            if row is None:
                position = c.execute(sa.select(sa.func.count()).select_from(items_table)
                                     .where(items_table.c.session_id == session_id)).scalar_one()
                c.execute(items_table.insert().values(session_id=session_id, position=position, digest=digest,
                                                      payload=json.dumps(dict(payload), ensure_ascii=False,
                                                                         sort_keys=True)))
                row = c.execute(sa.select(items_table).where(items_table.c.session_id == session_id,
                                                             items_table.c.digest == digest)).first()
        return Item(row.id, row.session_id, row.position, row.digest, json.loads(row.payload))

    def put_decision(self, item_id: int, annotator: str, *, label: str | None, score: int | None, comment: str,
                     status: str, updated_at: str) -> bool:
        """Write a decision as given (import): created or replaced, its time kept; ``False`` if unchanged.

        Replacing bumps the version, so a reviewer holding the old one gets :class:`StaleDecision`.
        """
        with self.engine.begin() as c:
            row = c.execute(sa.select(decisions_table).where(decisions_table.c.item_id == item_id,
                                                             decisions_table.c.annotator == annotator)).first()
            values = {"label": label, "score": score, "comment": comment or "", "status": status,
                      "updated_at": updated_at}
            if row is None:
                c.execute(decisions_table.insert().values(item_id=item_id, annotator=annotator, version=1, **values))
                return True
            if all(getattr(row, k) == v for k, v in values.items()):
                return False
            c.execute(decisions_table.update().where(decisions_table.c.id == row.id)
                      .values(version=row.version + 1, **values))
            return True

    # ------------------------------------------------------------ assignment
    def order_for(self, session_id: int, annotator: str, decisions: Iterable[Decision] | None = None) -> list[Item]:
        """The items an annotator reviews, in their own seeded random order.

        The order is ``random.Random(f"{seed}:{annotator}")`` shuffling the items: the same
        session seed and annotator always give the same order.  An item that already has ``k``
        submitted decisions by others is left out, unless this annotator decided it too.
        ``decisions`` (the session's, when the caller has them already) saves a query.
        """
        s = self.session(session_id)
        items = self.items(session_id)
        random.Random(f"{s.seed}:{annotator}").shuffle(items)
        taken: dict[int, set[str]] = {}
        for d in self.decisions(session_id) if decisions is None else decisions:
            if d.status == "submitted":
                taken.setdefault(d.item_id, set()).add(d.annotator)
        return [i for i in items if annotator in taken.get(i.id, set()) or len(taken.get(i.id, set())) < s.k]

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

    def save_decision(self, item_id: int, annotator: str, *, label: str | None, score: int | None = None,
                      comment: str = "", status: str = "submitted", expected_version: int = 0) -> Decision:
        """Save (commit) one annotator's decision on an item.

        Parameters
        ----------
        expected_version : int
            The version the annotator saw: 0 for a new decision.  When the stored version
            differs, nothing is written and :class:`StaleDecision` is raised.

        Raises
        ------
        ValueError
            An unknown label or status, a score outside 1-5, a submitted decision without a
            label, or an empty annotator name.
        StaleDecision
            The decision was changed meanwhile.
        """
        if not annotator.strip():
            raise ValueError("an annotator name is required")
        if label is not None and label not in ALL_LABELS:
            raise ValueError(f"label must be one of {', '.join(ALL_LABELS)}, not {label!r}")
        if status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        if status == "submitted" and label is None:
            raise ValueError("a submitted decision needs a label")
        if score is not None and not (isinstance(score, int) and 1 <= score <= 5):
            raise ValueError(f"score must be an integer from 1 to 5, not {score!r}")
        values = {"label": label, "score": score, "comment": comment or "", "status": status, "updated_at": _now()}
        with self.engine.begin() as c:
            if expected_version == 0:
                try:
                    c.execute(decisions_table.insert().values(item_id=item_id, annotator=annotator, version=1,
                                                              **values))
                except IntegrityError:
                    raise StaleDecision(f"{annotator} already has a decision on item {item_id}: reload it") from None
            else:
                done = c.execute(decisions_table.update()
                                 .where(decisions_table.c.item_id == item_id,
                                        decisions_table.c.annotator == annotator,
                                        decisions_table.c.version == expected_version)
                                 .values(version=expected_version + 1, **values)).rowcount
                if done != 1:
                    raise StaleDecision(f"the decision of {annotator} on item {item_id} changed since version "
                                        f"{expected_version}: reload it")
        result = self.decision(item_id, annotator)
        assert result is not None
        return result

    def decisions(self, session_id: int) -> list[Decision]:
        """Every decision of a session, by item position then annotator."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(decisions_table, items_table.c.digest)
                             .join(items_table, items_table.c.id == decisions_table.c.item_id)
                             .where(items_table.c.session_id == session_id)
                             .order_by(items_table.c.position, decisions_table.c.annotator)).all()
        return [_decision(r) for r in rows]

    # ------------------------------------------------------------ adjudication
    def adjudication_queue(self, session_id: int) -> list[tuple[Item, list[Decision]]]:
        """Items whose submitted labels disagree, or that someone marked ``gt_error``, not yet adjudicated."""
        by_item: dict[int, list[Decision]] = {}
        for d in self.decisions(session_id):
            if d.status == "submitted":
                by_item.setdefault(d.item_id, []).append(d)
        done = {a["item_id"] for a in self.adjudications(session_id)}
        out = []
        for item in self.items(session_id):
            ds = by_item.get(item.id, [])
            if item.id in done or not ds:
                continue
            if len({d.label for d in ds}) > 1 or any(d.label == "gt_error" for d in ds):
                out.append((item, ds))
        return out

    def adjudicate(self, item_id: int, adjudicator: str, label: str, comment: str = "", *,
                   corrected_answer: str | None = None) -> None:
        """Record (or replace) the final label of an item.

        ``corrected_answer`` is the right answer of a ``gt_error`` item (it becomes a GT patch,
        :mod:`evaluators.review.gt_patch`); ignored for other labels.

        Raises
        ------
        ValueError
            An unknown label or an empty adjudicator name.
        """
        if label not in ALL_LABELS:
            raise ValueError(f"label must be one of {', '.join(ALL_LABELS)}, not {label!r}")
        if not adjudicator.strip():
            raise ValueError("an adjudicator name is required")
        with self.engine.begin() as c:
            c.execute(adjudications_table.delete().where(adjudications_table.c.item_id == item_id))
            c.execute(adjudications_table.insert().values(
                item_id=item_id, adjudicator=adjudicator, label=label, comment=comment or "", updated_at=_now(),
                corrected_answer=(corrected_answer or None) if label == "gt_error" else None))

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
        items = {i.id: i for i in self.items(session_id)}
        out = []
        for a in self.adjudications(session_id):
            if a["label"] != "gt_error":
                continue
            p = items[a["item_id"]].payload
            out.append({"item_digest": a["item_digest"], "record_id": p.get("id"), "question": p.get("question"),
                        "current_ground_truth": p.get("ground_truth"), "prediction": p.get("prediction"),
                        "adjudicator": a["adjudicator"], "comment": a["comment"],
                        "corrected_answer": a["corrected_answer"]})
        return out


def _decision(row) -> Decision:
    return Decision(row.item_id, row.digest, row.annotator, row.label, row.score, row.comment, row.status,
                    row.version, row.updated_at)
