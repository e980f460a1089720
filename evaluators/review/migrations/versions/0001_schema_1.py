"""Schema 1: uploads, sessions, items, decisions, adjudications (the tables before Alembic).

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("meta", sa.Column("key", sa.String(64), primary_key=True),
                    sa.Column("value", sa.String(256), nullable=False))
    op.create_table("uploads", sa.Column("digest", sa.String(64), primary_key=True),
                    sa.Column("name", sa.String(512), nullable=False), sa.Column("size", sa.Integer, nullable=False),
                    sa.Column("data", sa.LargeBinary, nullable=False))
    op.create_table("sessions", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
                    sa.Column("name", sa.String(256), nullable=False, unique=True),
                    sa.Column("kind", sa.String(32), nullable=False),
                    sa.Column("created_by", sa.String(256), nullable=False),
                    sa.Column("blind", sa.Boolean, nullable=False), sa.Column("k", sa.Integer, nullable=False),
                    sa.Column("seed", sa.Integer, nullable=False), sa.Column("uploads", sa.Text, nullable=False),
                    sa.Column("created_at", sa.String(40), nullable=False))
    op.create_table("items", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
                    sa.Column("session_id", sa.Integer, sa.ForeignKey("sessions.id"), nullable=False),
                    sa.Column("position", sa.Integer, nullable=False),
                    sa.Column("digest", sa.String(64), nullable=False),
                    sa.Column("payload", sa.Text, nullable=False), sa.UniqueConstraint("session_id", "digest"))
    op.create_table("decisions", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
                    sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), nullable=False),
                    sa.Column("annotator", sa.String(256), nullable=False), sa.Column("label", sa.String(32)),
                    sa.Column("score", sa.Integer), sa.Column("comment", sa.Text, nullable=False),
                    sa.Column("status", sa.String(16), nullable=False),
                    sa.Column("version", sa.Integer, nullable=False),
                    sa.Column("updated_at", sa.String(40), nullable=False),
                    sa.UniqueConstraint("item_id", "annotator"))
    op.create_table("adjudications",
                    sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), primary_key=True),
                    sa.Column("adjudicator", sa.String(256), nullable=False),
                    sa.Column("label", sa.String(32), nullable=False), sa.Column("comment", sa.Text, nullable=False),
                    sa.Column("updated_at", sa.String(40), nullable=False))
    op.execute(sa.text("INSERT INTO meta (key, value) VALUES ('schema_version', '1')"))
