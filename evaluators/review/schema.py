"""The review database's tables (schema :data:`SCHEMA_VERSION`) and their creation and migration.

Tables are created and upgraded by Alembic (``evaluators/review/migrations``): revision ``0001`` is
schema 1 (the tables before Alembic; a schema-1 database without Alembic's version table is
stamped ``0001`` and upgraded), ``0002`` is schema 2, ``0003`` schema 3 (an adjudication's
corrected answer), ``0004`` schema 4 (the decision history, the guidelines version of a decision,
and each item's system and automatic score for the queue's filters), ``0005`` schema 5 (the run registry's
tables: :mod:`evaluators.runs.tables`), ``0006`` schema 6 (the audit trail of review actions).  :func:`ensure_schema` is safe when several
processes open a new, empty database at once: the migration runs under a lock (an advisory lock on
PostgreSQL, a file lock beside an SQLite file), and a database already at the newest revision is
only read.  A database written by a newer EvalBoard raises :class:`SchemaTooNew`.
"""

from __future__ import annotations

import fcntl
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

SCHEMA_VERSION = 6
#: Alembic revision of each schema version this code knows.
REVISIONS = {"0001": 1, "0002": 2, "0003": 3, "0004": 4, "0005": 5, "0006": 6}
HEAD = "0006"
_MIGRATIONS = Path(__file__).with_name("migrations")
#: PostgreSQL advisory lock key of the review migrations (any fixed 64-bit number).
_PG_LOCK = 7_316_402_017

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
    sa.Column("uploads", sa.Text, nullable=False), sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("settings", sa.Text, nullable=False, server_default="{}"),
    sa.Column("n_items", sa.Integer, nullable=False, server_default="0"),
    sa.Column("changes", sa.Integer, nullable=False, server_default="0"))
items_table = sa.Table(
    "items", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.Integer, sa.ForeignKey("sessions.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False), sa.Column("digest", sa.String(64), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("rank", sa.Integer, nullable=False, server_default="0"),
    sa.Column("n_done", sa.Integer, nullable=False, server_default="0"),
    sa.Column("gold", sa.String(32), nullable=True),
    # schema 4: what the queue's filters read (evaluators.review.items.filter_columns of the payload,
    # given by every insert)
    sa.Column("system", sa.String(256), nullable=True), sa.Column("metric", sa.Float, nullable=True),
    sa.UniqueConstraint("session_id", "digest"))
decisions_table = sa.Table(
    "decisions", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), nullable=False),
    sa.Column("annotator", sa.String(256), nullable=False), sa.Column("label", sa.String(32)),
    sa.Column("score", sa.Integer), sa.Column("comment", sa.Text, nullable=False, default=""),
    sa.Column("status", sa.String(16), nullable=False), sa.Column("version", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Column("session_id", sa.Integer, nullable=False, server_default="0"),
    sa.Column("seconds", sa.Float, nullable=True),
    sa.Column("guidelines_version", sa.Integer, nullable=True),  # schema 4: the guidelines it was made under
    sa.UniqueConstraint("item_id", "annotator"))
adjudications_table = sa.Table(
    "adjudications", metadata, sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), primary_key=True),
    sa.Column("adjudicator", sa.String(256), nullable=False), sa.Column("label", sa.String(32), nullable=False),
    sa.Column("comment", sa.Text, nullable=False, default=""), sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Column("corrected_answer", sa.Text, nullable=True))  # a gt_error's corrected answer (schema 3)
claims_table = sa.Table(
    "claims", metadata, sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), primary_key=True),
    sa.Column("annotator", sa.String(256), primary_key=True), sa.Column("expires_at", sa.String(40), nullable=False))

#: Schema 4: every change of a decision, append-only (a save, an undo, an import; ``migrated``: the
#: state a decision had when the table was made).  ``old_*`` is ``None`` where there was no decision.
history_table = sa.Table(
    "decision_history", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.Integer, nullable=False), sa.Column("item_id", sa.Integer, nullable=False),
    sa.Column("annotator", sa.String(256), nullable=False), sa.Column("actor", sa.String(256), nullable=False),
    sa.Column("action", sa.String(16), nullable=False), sa.Column("at", sa.String(40), nullable=False),
    sa.Column("old_version", sa.Integer), sa.Column("old_label", sa.String(32)), sa.Column("old_score", sa.Integer),
    sa.Column("old_comment", sa.Text), sa.Column("old_status", sa.String(16)),
    sa.Column("old_guidelines_version", sa.Integer),
    sa.Column("new_version", sa.Integer), sa.Column("new_label", sa.String(32)), sa.Column("new_score", sa.Integer),
    sa.Column("new_comment", sa.Text), sa.Column("new_status", sa.String(16)),
    sa.Column("guidelines_version", sa.Integer), sa.Column("blind", sa.Boolean, nullable=False),
    sa.Column("undoes", sa.Integer, nullable=True))  # an undo: the id of the change it reverted

#: Schema 6: one row per allowed mutating or revealing review action (append-only, written by
#: :mod:`evaluators.review.service`): who, their role (``None``: a typed name), what, where, when, page or CLI.
audit_table = sa.Table(
    "review_audit", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.String(40), nullable=False), sa.Column("who", sa.String(256), nullable=False),
    sa.Column("role", sa.String(32), nullable=True), sa.Column("action", sa.String(32), nullable=False),
    sa.Column("session_id", sa.Integer, nullable=True), sa.Column("item_id", sa.Integer, nullable=True),
    sa.Column("via", sa.String(16), nullable=False), sa.Column("detail", sa.Text, nullable=False))


class SchemaTooNew(RuntimeError):
    """The database was written by a newer EvalBoard (its review schema is unknown here)."""


def _revision(conn) -> str | None:
    """The database's schema revision: Alembic's, ``"0001"`` for a schema-1 database made before
    Alembic, ``None`` for an empty database.

    Raises
    ------
    SchemaTooNew
    """
    inspector = sa.inspect(conn)
    if inspector.has_table("alembic_version"):
        rows = [r[0] for r in conn.execute(sa.text("SELECT version_num FROM alembic_version"))]
        unknown = [r for r in rows if r not in REVISIONS]
        if unknown:
            raise SchemaTooNew(f"review schema revision {unknown[0]} is newer than this EvalBoard's "
                               f"(schema {SCHEMA_VERSION}, revision {HEAD}): upgrade EvalBoard")
        return max(rows, key=REVISIONS.get) if rows else None
    if inspector.has_table("meta"):
        row = conn.execute(sa.text("SELECT value FROM meta WHERE key = 'schema_version'")).first()
        version = int(row[0]) if row and str(row[0]).isdigit() else 1
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(f"review schema version {version} is newer than this EvalBoard's "
                               f"({SCHEMA_VERSION}): upgrade EvalBoard")
        return next(r for r, v in REVISIONS.items() if v == version)
    return None


@contextmanager
def _file_lock(path: str):
    """An exclusive lock on ``path + ".lock"`` (SQLite: one migration at a time on this machine)."""
    with open(path + ".lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_schema(engine: sa.Engine) -> int:
    """Create or upgrade the review tables to :data:`HEAD`; returns the schema version.

    Raises
    ------
    SchemaTooNew
        The database has a newer schema than this code knows (nothing is changed).
    """
    with engine.connect() as conn:
        if _revision(conn) == HEAD:
            return SCHEMA_VERSION
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    lock = _file_lock(database) if database and database != ":memory:" else _no_lock()
    with lock, engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})
        current = _revision(conn)  # again, under the lock: another process may have migrated meanwhile
        if current == HEAD:
            return SCHEMA_VERSION
        config.attributes["connection"] = conn
        if current is not None and not sa.inspect(conn).has_table("alembic_version"):
            command.stamp(config, current)  # a schema-1 database from before Alembic
        command.upgrade(config, HEAD)
    return SCHEMA_VERSION


@contextmanager
def _no_lock():
    yield


def sqlite_path(url: str) -> str | None:
    """The file of an ``sqlite:///`` URL (``None`` for another database or ``:memory:``)."""
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        return url[len("sqlite:///"):]
    return None


__all__ = [
    "HEAD",
    "REVISIONS",
    "SCHEMA_VERSION",
    "SchemaTooNew",
    "adjudications_table",
    "audit_table",
    "claims_table",
    "decisions_table",
    "ensure_schema",
    "history_table",
    "items_table",
    "meta_table",
    "metadata",
    "sessions_table",
    "sqlite_path",
    "uploads_table",
]
