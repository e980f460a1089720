"""The run registry's tables (created by the review database's migration ``0005``:
``evaluators/review/migrations/versions/0005_run_registry.py``; one database holds review sessions and runs).

- ``run_datasets``: a ground truth's identity, its content digest (unique) and a name;
- ``run_dataset_versions``: version 0 is the raw GT; version ``k`` is its parent plus one GT patch (the
  patch's SHA-256), so a corrected GT is a new version and never an edited file;
- ``run_blobs``: one column of a run's per-item table as Parquet bytes, addressed by the SHA-256 of the
  bytes and kept once however many runs share it (the item ids and the questions of a dataset);
- ``runs``: one logged run (see :class:`evaluators.runs.store.RunRecord`); ``columns`` is the JSON
  manifest ``[[kind, name, blob digest], ...]`` of its table, ``items_digest`` the table's
  :meth:`~evaluators.run_result.ItemTable.digest`.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()
datasets_table = sa.Table(
    "run_datasets", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("digest", sa.String(64), nullable=False, unique=True),
    sa.Column("name", sa.String(256), nullable=False), sa.Column("created_at", sa.String(40), nullable=False))
versions_table = sa.Table(
    "run_dataset_versions", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("run_datasets.id"), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("parent_id", sa.Integer, sa.ForeignKey("run_dataset_versions.id"), nullable=True),
    sa.Column("patch_digest", sa.String(64), nullable=True),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("dataset_id", "version"))
blobs_table = sa.Table(
    "run_blobs", metadata, sa.Column("digest", sa.String(64), primary_key=True),
    sa.Column("size", sa.BigInteger, nullable=False), sa.Column("data", sa.LargeBinary, nullable=False))
runs_table = sa.Table(
    "runs", metadata, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
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

__all__ = ["blobs_table", "datasets_table", "metadata", "runs_table", "versions_table"]
