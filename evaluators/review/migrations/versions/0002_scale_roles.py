"""Schema 2: per-session settings (guidelines, adjudicators), item counts and a change counter,
the queue columns of items (seeded rank, submitted count, gold label), decisions keyed by session,
item claims, and the indexes behind "next item for this annotator" and progress.

Revision ID: 0002
Revises: 0001
"""

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sessions", sa.Column("settings", sa.Text, nullable=False, server_default="{}"))
    op.add_column("sessions", sa.Column("n_items", sa.Integer, nullable=False, server_default="0"))
    op.add_column("sessions", sa.Column("changes", sa.Integer, nullable=False, server_default="0"))
    op.add_column("items", sa.Column("rank", sa.Integer, nullable=False, server_default="0"))
    op.add_column("items", sa.Column("n_done", sa.Integer, nullable=False, server_default="0"))
    op.add_column("items", sa.Column("gold", sa.String(32), nullable=True))
    op.add_column("decisions", sa.Column("session_id", sa.Integer, nullable=False, server_default="0"))
    op.add_column("decisions", sa.Column("seconds", sa.Float, nullable=True))
    op.create_table("claims", sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), primary_key=True),
                    sa.Column("annotator", sa.String(256), primary_key=True),
                    sa.Column("expires_at", sa.String(40), nullable=False))
    bind = op.get_bind()
    # backfill: counts, the decisions' session, and each session's seeded rank of its items
    bind.execute(sa.text("UPDATE decisions SET session_id = (SELECT items.session_id FROM items "
                         "WHERE items.id = decisions.item_id)"))
    bind.execute(sa.text("UPDATE items SET n_done = (SELECT count(*) FROM decisions WHERE decisions.item_id = items.id "
                         "AND decisions.status = 'submitted')"))
    bind.execute(sa.text("UPDATE sessions SET n_items = (SELECT count(*) FROM items "
                         "WHERE items.session_id = sessions.id)"))
    rows = bind.execute(sa.text("SELECT items.id, items.position, sessions.seed FROM items "
                                "JOIN sessions ON sessions.id = items.session_id")).all()
    if rows:  # the seeded order of evaluators.review.store.seeded_rank (kept here as it was at this revision)
        bind.execute(sa.text("UPDATE items SET rank = :r WHERE id = :i"),
                     [{"r": int.from_bytes(hashlib.sha256(f"{seed}:{pos}".encode()).digest()[:4], "big") >> 1,
                       "i": i} for i, pos, seed in rows])
    op.create_index("ix_items_queue", "items", ["session_id", "n_done", "rank", "id"])
    op.create_index("ix_items_position", "items", ["session_id", "position"])
    op.create_index("ix_decisions_session_annotator", "decisions", ["session_id", "annotator", "updated_at"])
    bind.execute(sa.text("UPDATE meta SET value = '2' WHERE key = 'schema_version'"))
