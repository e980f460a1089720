"""Schema 6: the audit trail of review actions (:mod:`evaluators.review.roles`).

``review_audit``: one row per allowed mutating or revealing action (decide, undo, adjudicate, settings,
gold marks, export of a blind session, GT patch, import, create), appended by the service layer:
who, their role (``NULL`` for a typed name without sign-in), the action, the session and item, when,
and from where (``page`` or ``cli``).  No existing table changes.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_audit", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.String(40), nullable=False), sa.Column("who", sa.String(256), nullable=False),
        sa.Column("role", sa.String(32), nullable=True), sa.Column("action", sa.String(32), nullable=False),
        sa.Column("session_id", sa.Integer, nullable=True), sa.Column("item_id", sa.Integer, nullable=True),
        sa.Column("via", sa.String(16), nullable=False), sa.Column("detail", sa.Text, nullable=False))
    op.create_index("ix_review_audit_session_at", "review_audit", ["session_id", "at"])
    op.get_bind().execute(sa.text("UPDATE meta SET value = '6' WHERE key = 'schema_version'"))
