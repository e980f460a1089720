"""Schema 5: the run registry (:mod:`evaluators.runs`) in the review database.

``run_datasets`` (a ground truth's identity: content digest and name), ``run_dataset_versions`` (v0 the raw
GT, each later version its parent plus one GT patch, by the patch's digest), ``run_blobs`` (column blobs:
Parquet bytes addressed by their SHA-256, kept once however many runs share them) and ``runs`` (one logged
run: task, dataset version, predictions digest, config, signature, who, when, tags, the accepted flag, the
digest and manifest of its per-item table and its summary).  No existing table changes.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_datasets", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("name", sa.String(256), nullable=False), sa.Column("created_at", sa.String(40), nullable=False))
    op.create_table(
        "run_dataset_versions", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("run_datasets.id"), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("parent_id", sa.Integer, sa.ForeignKey("run_dataset_versions.id"), nullable=True),
        sa.Column("patch_digest", sa.String(64), nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("dataset_id", "version"))
    op.create_table(
        "run_blobs", sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("size", sa.BigInteger, nullable=False), sa.Column("data", sa.LargeBinary, nullable=False))
    op.create_table(
        "runs", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(256), nullable=False, unique=True),
        sa.Column("task", sa.String(64), nullable=False), sa.Column("unit", sa.String(32), nullable=False),
        sa.Column("dataset_version_id", sa.Integer, sa.ForeignKey("run_dataset_versions.id"), nullable=False),
        sa.Column("predictions_digest", sa.String(64), nullable=False),
        sa.Column("config", sa.Text, nullable=False), sa.Column("signature", sa.Text, nullable=False),
        sa.Column("who", sa.String(256), nullable=False), sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("tags", sa.Text, nullable=False), sa.Column("accepted", sa.Boolean, nullable=False),
        sa.Column("items_digest", sa.String(64), nullable=False), sa.Column("n_items", sa.Integer, nullable=False),
        sa.Column("systems", sa.Text, nullable=False), sa.Column("metrics", sa.Text, nullable=False),
        sa.Column("columns", sa.Text, nullable=False), sa.Column("summary", sa.Text, nullable=False),
        sa.Column("digests", sa.Text, nullable=False), sa.Column("issues", sa.Text, nullable=False))
    op.create_index("ix_runs_task_created", "runs", ["task", "created_at"])
    op.create_index("ix_runs_version_created", "runs", ["dataset_version_id", "created_at"])
    op.get_bind().execute(sa.text("UPDATE meta SET value = '5' WHERE key = 'schema_version'"))
