"""Schema 3: the corrected answer of an item adjudicated as a GT error (nullable; it becomes a GT
patch, :mod:`evaluators.review.gt_patch`).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("adjudications", sa.Column("corrected_answer", sa.Text, nullable=True))
    op.get_bind().execute(sa.text("UPDATE meta SET value = '3' WHERE key = 'schema_version'"))
